// The package validates by its options-schema.js (rendered from the core's
// table, src/options_schema.rs): every key of the shipped copy, walked
// generically here, is refused out of its range, with the wrong type, and
// beside an unknown key, each refusal naming the key's path as the schema
// spells it; defaults and names come from it too.
import { test, describe } from "node:test";
import assert from "node:assert/strict";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { PKG } from "./support/link-package.mjs";

const { Limiter } = await import("edgeshed");
const snippets = readdirSync(join(PKG, "snippets")).filter((name) => name.startsWith("edgeshed-js-"));
assert.equal(snippets.length, 1, `one edgeshed-js snippet folder in pkg/snippets: ${snippets}`);
const schemaUrl = pathToFileURL(join(PKG, "snippets", snippets[0], "src", "options-schema.js"));
const { LIMITER, CALL, SET_LIMIT } = await import(schemaUrl.href);

/** Options valid up to `path` (given `value`): a fixed limit, an algorithm for adaptive keys. */
function withValue(path, value) {
  const [head, key] = path.split(".");
  const options = head === "maxInFlight" ? {} : { maxInFlight: 1 };
  if (key === undefined) return { ...options, [head]: value };
  if (head === "adaptive") return { adaptive: { algorithm: LIMITER.adaptive.keys.algorithm.values[0], [key]: value } };
  return { ...options, [head]: { [key]: value } };
}

/** Every leaf key of LIMITER: [path, spec]. */
const leaves = Object.entries(LIMITER).flatMap(([key, spec]) =>
  spec.kind === "section" ? Object.entries(spec.keys).map(([inner, s]) => [`${key}.${inner}`, s]) : [[key, spec]],
);

function refused(options, type, message) {
  assert.throws(() => new Limiter(options), (error) => {
    assert.equal(error.constructor, type, `${JSON.stringify(options)}: ${error.constructor.name}: ${error.message}`);
    assert.match(error.message, message);
    return true;
  });
}

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

describe("new Limiter(options) follows the shipped options-schema.js", () => {
  for (const [path, spec] of leaves) {
    const name = escape(`options.${path}`);
    test(`${path}: ${spec.kind}`, () => {
      refused(withValue(path, {}), TypeError, new RegExp(`^${name} must be `));
      if (spec.kind === "integer") {
        const range = `must be an integer from ${spec.min} to ${spec.max}, got`;
        refused(withValue(path, spec.max + 1), RangeError, new RegExp(`^${name} ${range} ${spec.max + 1}$`));
        refused(withValue(path, spec.min - 1), RangeError, new RegExp(`^${name} ${range}`));
        refused(withValue(path, spec.min + 0.5), RangeError, new RegExp(`^${name} ${range}`));
      } else if (spec.kind === "fraction") {
        refused(withValue(path, 1.01), RangeError, new RegExp(`^${name} must be a fraction of the limit from 0 to 1`));
      } else if (spec.kind === "oneOf") {
        const listed = spec.values.map((value) => escape(JSON.stringify(value))).join(".*");
        refused(withValue(path, "nonesuch"), TypeError, new RegExp(`^${name} must be ${listed}, got "nonesuch"$`));
      }
    });
  }

  for (const [section, spec] of [["options", { keys: LIMITER }], ...Object.entries(LIMITER).filter(([, s]) => s.kind === "section")]) {
    test(`an unknown key in ${section} is refused, listing the schema's keys`, () => {
      const path = section === "options" ? "nonesuch" : `${section}.nonesuch`;
      const expected = escape(`(expected one of: ${Object.keys(spec.keys).join(", ")})`);
      refused(withValue(path, 1), TypeError, new RegExp(`^options\\.${escape(path)} is not a known option ${expected}$`));
    });
  }

  test("the defaults are the schema's", () => {
    const { minLimit, maxLimit, initialLimit } = LIMITER.adaptive.keys;
    const adaptive = (extra) => new Limiter({ adaptive: { algorithm: "aimd", ...extra } }).stats().limit;
    assert.equal(adaptive({}), Math.min(Math.max(initialLimit.within, minLimit.default), maxLimit.default));
    assert.equal(adaptive({ minLimit: maxLimit.default }), maxLimit.default);
    // codel's default target must be shorter than the queue's timeout.
    const codel = { maxInFlight: 1, maxQueue: 1, queueDiscipline: "codel" };
    const target = LIMITER.codelTargetMs.default;
    refused({ ...codel, queueTimeoutMs: target }, RangeError, new RegExp(`^options\\.codelTargetMs \\(${target} by default\\)`));
    assert.doesNotThrow(() => new Limiter({ ...codel, queueTimeoutMs: target + 1 }));
  });
});

describe("the call options and setLimit follow the shipped options-schema.js", () => {
  const limiter = new Limiter({ maxInFlight: 1 });
  test("run's options: deadlineMs, criticality, key, signal; unknown keys list CALL's", async () => {
    const max = CALL.deadlineMs.max;
    for (const [options, type, message] of [
      [{ deadlineMs: max + 1 }, RangeError, `options.deadlineMs must be an integer from ${CALL.deadlineMs.min} to ${max}`],
      [{ criticality: "urgent" }, TypeError, `options.criticality must be ${CALL.criticality.values.map((v) => JSON.stringify(v)).join(", ").replace(/, ([^,]*)$/, " or $1")}`],
      [{ key: 5 }, TypeError, `options.key must be a string (${CALL.key.what})`],
      [{ signal: {} }, TypeError, "options.signal must be an AbortSignal"],
      [{ nonesuch: 1 }, TypeError, `options.nonesuch is not a known option (expected one of: ${Object.keys(CALL).join(", ")})`],
    ]) {
      await assert.rejects(limiter.run(() => 1, options), (error) => {
        assert.equal(error.constructor, type, error.message);
        assert.ok(error.message.startsWith(message), `${error.message} starts with ${message}`);
        return true;
      });
    }
    for (const criticality of CALL.criticality.values) assert.equal(await limiter.run(() => 2, { criticality }), 2);
  });

  test("setLimit's range", () => {
    assert.throws(() => limiter.setLimit(SET_LIMIT.max + 1), RangeError);
    assert.throws(() => limiter.setLimit(SET_LIMIT.min - 1), RangeError);
    limiter.setLimit(SET_LIMIT.max);
    assert.equal(limiter.stats().limit, SET_LIMIT.max);
  });
});
