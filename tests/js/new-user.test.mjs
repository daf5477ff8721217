// What a new user tripped over (issue 11, item 9): error classes to test
// rejections with `instanceof`, near misses of edgeshed's own `fetch` keys,
// and docs/js.md's TypeScript under the strictest compiler options.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT, PKG } from "./support/link-package.mjs";
import { deferred, readmeSnippet, settle, startOrigin } from "./support/helpers.mjs";

const { Limiter, OverloadedError, DeadlineError, RateLimitedError } = await import("edgeshed");

describe("error classes", () => {
  test("every entry exports OverloadedError, DeadlineError and RateLimitedError, the same classes", async () => {
    const entry = (name) => import(join(PKG, name));
    const node = await entry("node.js");
    assert.equal(node.OverloadedError, OverloadedError);
    assert.equal(node.RateLimitedError, RateLimitedError);
    assert.equal(typeof RateLimitedError, "function");
    const source = (name) => readFileSync(join(PKG, name), "utf8");
    const exported = /export \{ OverloadedError, DeadlineError, RateLimitedError \} from "\.\/errors\.js"/;
    for (const name of ["workerd.js", "browser.js", "index.d.ts"]) assert.match(source(name), exported, name);
    assert.match(source("errors.d.ts"), /export class RateLimitedError extends Error/);
    const limited = new RateLimitedError("x", "rate", 250);
    assert.deepEqual([limited.name, limited.status, limited.reason, limited.retryAfterMs], ["RateLimitedError", 429, "rate", 250]);
  });

  test("a shed or timed-out call rejects with an OverloadedError instance; a deadline with a DeadlineError", async () => {
    const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 10 });
    const gate = deferred();
    const holder = limiter.run(() => gate.promise);
    const queued = settle(limiter.run(() => "never"));
    const shed = await settle(limiter.run(() => "never"));
    const timedOut = await queued;
    for (const error of [shed.error, timedOut.error]) {
      assert.ok(error instanceof OverloadedError, String(error));
      assert.ok(error instanceof Error);
      assert.equal(error.name, "OverloadedError");
      assert.equal(error.status, 503);
    }
    assert.equal(shed.error.message, "service overloaded: limit 1 reached and the queue full (maxQueue 1): shed at once");
    assert.equal(
      timedOut.error.message,
      "service overloaded: waited queueTimeoutMs 10 for a slot of limit 1 (maxQueue 1): queue timeout",
    );
    // Its stack, when one was captured (at most one per millisecond), starts
    // at this call: the call that queued (errors.test.mjs).
    const [head, at] = timedOut.error.stack.split("\n");
    assert.equal(head, `OverloadedError: ${timedOut.error.message}`);
    if (at !== undefined) assert.ok(at.includes(new URL(import.meta.url).pathname), timedOut.error.stack);
    const late = await settle(new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 1000 }).run(() => gate.promise, { deadlineMs: 5 }));
    assert.ok(late.error instanceof DeadlineError, String(late.error));
    assert.ok(!(late.error instanceof OverloadedError));
    assert.deepEqual([late.error.name, late.error.status], ["DeadlineError", 504]);
    gate.resolve();
    await holder;
  });

  test("the classes can be constructed (e.g. by a test double), with the contract's name and status", () => {
    const error = new OverloadedError();
    assert.deepEqual([error.name, error.status, error.message], ["OverloadedError", 503, "service overloaded"]);
    assert.deepEqual([new DeadlineError("late").name, new DeadlineError().status], ["DeadlineError", 504]);
  });
});

describe("fetch: near misses of deadlineMs", () => {
  let origin;
  before(async () => {
    origin = await startOrigin();
  });
  after(() => origin.close());

  for (const typo of ["deadlineMS", "DeadlineMs", "deadlinems", "DEADLINEMS", "deadline", "deadlineM", "deadLineMs", "deadlinesMs", "dedlineMs"]) {
    // The origin never answers /typo: a fetch that went out would hang until the timeout.
    test(`init.${typo} rejects with a TypeError naming it and deadlineMs, before any request`, { timeout: 5_000 }, async () => {
      const limiter = new Limiter({ maxInFlight: 1 });
      const outcome = await settle(limiter.fetch(`${origin.url}/typo`, { [typo]: 10 }));
      assert.ok(outcome.error instanceof TypeError, String(outcome.error));
      assert.ok(outcome.error.message.includes(`init.${typo}`), outcome.error.message);
      assert.ok(outcome.error.message.includes("init.deadlineMs"), outcome.error.message);
      assert.equal(limiter.stats().admitted, 0);
      assert.deepEqual(origin.pending(), []);
    });
  }

  test("run rejects the same typo (it always did)", async () => {
    const outcome = await settle(new Limiter({ maxInFlight: 1 }).run(() => 1, { deadlineMS: 10 }));
    assert.ok(outcome.error instanceof TypeError);
  });

  test("every legitimate RequestInit key (and runtime extensions) passes through to fetch", async () => {
    const limiter = new Limiter({ maxInFlight: 1 });
    const init = {
      method: "POST",
      headers: { "x-edgeshed": "1" },
      body: "payload",
      signal: new AbortController().signal,
      redirect: "follow",
      cache: "default",
      credentials: "same-origin",
      integrity: "",
      keepalive: false,
      mode: "cors",
      priority: "auto",
      referrer: "",
      referrerPolicy: "no-referrer",
      window: null,
      duplex: "half",
      dispatcher: undefined,
      cf: { cacheTtl: 5 },
      deadlineMs: 10_000,
    };
    const pending = limiter.fetch(`${origin.url}/legit`, init);
    const { req, res } = await origin.next("/legit");
    assert.equal(req.method, "POST");
    assert.equal(req.headers["x-edgeshed"], "1");
    res.end("ok");
    assert.equal(await (await pending).text(), "ok");
  });
});

describe("TypeScript", () => {
  const tsc = join(ROOT, "node_modules", "typescript", "bin", "tsc");

  test("docs/js.md's TypeScript type-checks with strict and exactOptionalPropertyTypes", async () => {
    const { code } = readmeSnippet("typescript");
    assert.match(code, /limiter\.run\(\(signal\) => fetch\(url, \{ signal \}\)/, "docs/js.md's own idiom is checked");
    assert.match(code, /instanceof OverloadedError/);
    // Under node_modules/, so that "edgeshed" resolves as in a user's project.
    const dir = join(ROOT, "node_modules", ".cache", "edgeshed-tests", "readme-ts");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "readme.ts"), code);
    writeFileSync(
      join(dir, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "es2022",
          module: "nodenext",
          moduleResolution: "nodenext",
          lib: ["es2022", "dom"],
          types: [],
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          noEmit: true,
          skipLibCheck: false,
        },
        files: ["readme.ts"],
      }),
    );
    const result = await promisify(execFile)(process.execPath, [tsc, "-p", join(dir, "tsconfig.json")], { cwd: dir }).catch(
      (error) => error,
    );
    assert.equal(result.code ?? 0, 0, `tsc failed on docs/js.md's TypeScript:\n${result.stdout}${result.stderr}`);
  });
});
