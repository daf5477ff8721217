// The EDGESHED binding: invalid configurations answer 500 config on every
// request (never a trap) and are logged once per isolate with console.error;
// a missing binding fails closed the same way; a JSON string works like an
// object; defaults.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { answer, startOrigin } from "./support/origin.mjs";
import { NO_BINDING, idle, serverTiming, startWorker } from "./support/worker.mjs";

const ORIGIN = "http://127.0.0.1:9"; // never called: these configurations are refused first

/** A valid configuration, changed by `edit` (which may mutate it or return a new value). */
function variant(edit) {
  const config = {
    retryAfterSeconds: 1,
    global: { maxInFlight: 8, maxQueue: 8, queueTimeoutMs: 50 },
    origins: {
      users: { url: ORIGIN, maxInFlight: 2, maxQueue: 2, queueTimeoutMs: 20, timeoutMs: 500 },
      recs: { url: ORIGIN, maxInFlight: 2, maxQueue: 0 },
    },
    routes: [
      {
        path: "/aggregate",
        deadlineMs: 250,
        fanout: [
          { origin: "users", path: "/u", required: true },
          { origin: "recs", path: "/r", required: false },
        ],
      },
      { prefix: "/proxy/", origin: "users" },
    ],
  };
  return edit(config) ?? config;
}

// [what, binding, strings the message must contain]
const INVALID = [
  ["unknown key maxInflight (typo) in an origin", variant((c) => void (c.origins.users.maxInflight = 4)), ["origins.users.maxInflight"]],
  ["unknown key maxInflight in global", variant((c) => void (c.global = { maxInflight: 4 })), ["global.maxInflight"]],
  ["unknown top-level key", variant((c) => void (c.retryAfterSecond = 2)), ["retryAfterSecond"]],
  ["unknown key in a route", variant((c) => void (c.routes[0].deadline = 100)), ["routes[0].deadline"]],
  ["unknown key in a fan-out entry", variant((c) => void (c.routes[0].fanout[0].optional = true)), ["routes[0].fanout[0].optional"]],
  ["origin maxQueue > 0 without queueTimeoutMs", variant((c) => void delete c.origins.users.queueTimeoutMs), ["origins.users.queueTimeoutMs", "maxQueue"]],
  ["global maxQueue > 0 without queueTimeoutMs", variant((c) => void (c.global = { maxInFlight: 4, maxQueue: 2 })), ["global.queueTimeoutMs", "maxQueue"]],
  ["prefix without a trailing slash", variant((c) => void (c.routes[1].prefix = "/proxy")), ["routes[1].prefix"]],
  ["fan-out naming an unknown origin", variant((c) => void (c.routes[0].fanout[1].origin = "nobody")), ["routes[0].fanout[1].origin", "nobody"]],
  ["prefix route naming an unknown origin", variant((c) => void (c.routes[1].origin = "ghost")), ["routes[1].origin", "ghost"]],
  ["a string that is not JSON", "{ not json", ["JSON"]],
  ["an empty string", "", ["JSON"]],
  ["a JSON string of an array", "[]", ["EDGESHED"]],
  ["negative maxInFlight", variant((c) => void (c.origins.users.maxInFlight = -1)), ["origins.users.maxInFlight"]],
  ["zero maxInFlight", variant((c) => void (c.global.maxInFlight = 0)), ["global.maxInFlight"]],
  ["fractional maxQueue", variant((c) => void (c.origins.users.maxQueue = 1.5)), ["origins.users.maxQueue"]],
  ["negative maxQueue", variant((c) => void (c.origins.recs.maxQueue = -2)), ["origins.recs.maxQueue"]],
  ["negative timeoutMs", variant((c) => void (c.origins.users.timeoutMs = -5)), ["origins.users.timeoutMs"]],
  ["fractional queueTimeoutMs", variant((c) => void (c.global.queueTimeoutMs = 0.5)), ["global.queueTimeoutMs"]],
  ["fractional deadlineMs", variant((c) => void (c.routes[0].deadlineMs = 2.5)), ["routes[0].deadlineMs"]],
  ["negative retryAfterSeconds", variant((c) => void (c.retryAfterSeconds = -1)), ["retryAfterSeconds"]],
  ["a number given as a string", variant((c) => void (c.origins.users.maxInFlight = "4")), ["origins.users.maxInFlight"]],
  ["url with an ftp scheme", variant((c) => void (c.origins.users.url = "ftp://127.0.0.1:21")), ["origins.users.url"]],
  ["url with a javascript: scheme", variant((c) => void (c.origins.users.url = "javascript:alert(1)")), ["origins.users.url"]],
  ["url without a scheme", variant((c) => void (c.origins.recs.url = "127.0.0.1:9002")), ["origins.recs.url"]],
  ["origin without url", variant((c) => void delete c.origins.recs.url), ["origins.recs.url"]],
  ["required that is not a boolean", variant((c) => void (c.routes[0].fanout[1].required = "no")), ["routes[0].fanout[1].required"]],
  ["an origin name with a quote (the message stays valid JSON)", variant((c) => void (c.origins['we"ird'] = { url: ORIGIN })), ['we"ird']],
  ["a route with both path and prefix", variant((c) => void (c.routes[1].path = "/x")), ["routes[1]"]],
  ["statsPublic that is not a boolean", variant((c) => void (c.statsPublic = "yes")), ["statsPublic", "boolean"]],
  ["statsPublic true next to a statsToken", variant((c) => Object.assign(c, { statsToken: "t", statsPublic: true })), ["statsPublic", "statsToken"]],
  [
    "three errors in three sections: all reported at once",
    variant((c) => {
      c.origins.users.maxInflight = 4;
      c.global.maxInFlight = 0;
      c.routes[1].prefix = "/proxy";
    }),
    ["3 configuration errors: ", "global.maxInFlight must be a positive integer, got 0", "origins.users.maxInflight is not a known key", 'routes[1].prefix must end with "/"'],
  ],
  [
    "two errors in one origin: both reported",
    variant((c) => void Object.assign(c.origins.users, { maxInFlight: 1.5, timeoutMs: "1s" })),
    ["2 configuration errors: ", "origins.users.maxInFlight must be a positive integer, got 1.5", "origins.users.timeoutMs must be a positive integer (milliseconds), got a string"],
  ],
  // Fails closed: no embedded configuration takes over.
  ["no EDGESHED binding at all", NO_BINDING, ["the EDGESHED binding is missing: ", "wrangler.toml"]],
  ["an EDGESHED binding of null", null, ["the EDGESHED binding is missing: "]],
];

/** The message each object binding of INVALID answered with (filled by the first describe). */
const objectMessages = new Map();

/** The config message a worker with `binding` answers /aggregate with. */
async function configMessage(binding) {
  const worker = await startWorker(binding);
  try {
    const r = await worker.get("/aggregate");
    assert.equal(r.status, 500, r.text);
    assert.equal(r.json?.error, "config", r.text);
    return r.json.message;
  } finally {
    await worker.dispose();
  }
}

describe("invalid configuration: 500 config on every request", () => {
  for (const [what, binding, mentions] of INVALID) {
    test(what, async () => {
      const worker = await startWorker(binding);
      try {
        const answers = [];
        for (const [path, init] of [
          ["/aggregate", {}],
          ["/__edgeshed/stats", {}],
          ["/__edgeshed/metrics", {}],
          ["/proxy/x", { method: "POST", body: "b" }],
          ["/nothing", {}],
          ["/aggregate", {}],
        ]) {
          const r = await worker.get(path, init);
          assert.equal(r.status, 500, `${path}: ${r.text}`);
          assert.match(r.headers.get("content-type"), /^application\/json/, path);
          assert.equal(r.json?.error, "config", `${path}: ${r.text}`);
          assert.deepEqual(Object.keys(r.json).sort(), ["error", "message"], r.text);
          assert.equal(typeof r.json.message, "string");
          assert.ok(serverTiming(r.headers.get("server-timing")).has("admission"), `${path}: Server-Timing`);
          answers.push(r.json.message);
        }
        for (const mention of mentions) {
          assert.ok(answers[0].includes(mention), `message ${JSON.stringify(answers[0])} names ${mention}`);
        }
        assert.ok(answers.every((m) => m === answers[0]), "the same message on every request");
        if (typeof binding === "object" && binding !== null) objectMessages.set(what, answers[0]);
        // Where the operator looks (wrangler dev / wrangler tail): logged
        // once for the isolate, not once per request.
        const logged = (await worker.logged()).filter((l) => l.message.includes(answers[0]));
        assert.equal(logged.length, 1, `logged once for ${answers.length} requests: ${JSON.stringify(logged)}`);
        assert.equal(logged[0].level, "error", "with console.error");
        assert.match(logged[0].message, /^edgeshed: configuration error/);
      } finally {
        await worker.dispose();
      }
    });
  }
});

// One deserializer reads both forms of the binding: a wrangler [vars] table
// (an object) and a JSON string (JSON.parse, then the same reading).
describe("the JSON string form gives the same errors as the object form", () => {
  for (const [what, binding] of INVALID) {
    if (typeof binding !== "object" || binding === null) continue;
    test(what, async () => {
      const fromObject = objectMessages.get(what) ?? (await configMessage(binding));
      const fromString = await configMessage(JSON.stringify(binding));
      assert.equal(fromString, fromObject);
    });
  }
});

describe("valid configurations", () => {
  let users, recs;
  before(async () => {
    users = await startOrigin("users");
    recs = await startOrigin("recs");
    users.behave(answer({ id: 1 }));
    recs.behave(answer({ items: [] }));
  });
  afterAll(async () => {
    await Promise.all([users, recs].map((o) => o?.close()));
  });

  const config = () => ({
    statsPublic: true, // the test reads /__edgeshed/stats
    retryAfterSeconds: 1,
    global: { maxInFlight: 8, maxQueue: 8, queueTimeoutMs: 50 },
    origins: {
      users: { url: users.url, maxInFlight: 3, maxQueue: 2, queueTimeoutMs: 20, timeoutMs: 1000 },
      recs: { url: recs.url, maxInFlight: 2, maxQueue: 0 },
    },
    routes: [
      { path: "/aggregate", deadlineMs: 500, fanout: [{ origin: "users", path: "/u" }, { origin: "recs", path: "/r", required: false }] },
      { prefix: "/proxy/", origin: "users" },
    ],
  });

  for (const [what, make] of [
    ["an object binding", () => config()],
    ["a JSON string binding works like the object", () => JSON.stringify(config())],
  ]) {
    test(what, async () => {
      const worker = await startWorker(make());
      try {
        const r = await worker.get("/aggregate");
        assert.equal(r.status, 200, r.text);
        assert.deepEqual(r.json, { results: { users: { id: 1 }, recs: { items: [] } }, degraded: [] });
        const stats = await worker.until(idle, { what: "idle" });
        assert.equal(stats.global.limit, 8);
        assert.equal(stats.origins.users.limit, 3);
        assert.equal(stats.origins.recs.limit, 2);
        assert.equal(stats.global.admitted, 1);
      } finally {
        await worker.dispose();
      }
    });
  }

  test("defaults: global omitted -> limit 256 and shed (no queue); origin maxInFlight 6; required true; null means omitted", async () => {
    const worker = await startWorker({
      statsPublic: true, // the test reads /__edgeshed/*
      origins: { users: { url: users.url, maxQueue: null }, recs: { url: recs.url } },
      routes: [{ path: "/a", fanout: [{ origin: "users", path: "/u" }, { origin: "recs", path: "/r" }] }],
    });
    try {
      recs.behave(answer("down", { status: 500 }));
      const r = await worker.get("/a");
      assert.equal(r.status, 502, "recs is required by default");
      assert.deepEqual(r.json, { error: "bad_gateway", origin: "recs", status: 500 });
      const stats = await worker.until(idle, { what: "idle" });
      assert.equal(stats.global.limit, 256);
      assert.equal(stats.origins.users.limit, 6);
      assert.equal(stats.origins.recs.limit, 6);
    } finally {
      recs.behave(answer({ items: [] }));
      await worker.dispose();
    }
  });
});

describe("a binding that throws when read: 500 config on every request, never an exception through Rust", () => {
  // [variant, strings the message must contain]
  for (const [variant, mentions] of [
    ["getter", ["the EDGESHED binding is missing: reading env.EDGESHED threw (getter boom)"]],
    ["ownKeys", ["EDGESHED could not be read (ownKeys boom)"]],
    ["revoked", ["EDGESHED could not be read"]],
    ["nested", ["EDGESHED could not be read (nested boom)"]],
    ["item", ["EDGESHED.routes[0] could not be read (item boom)"]],
  ]) {
    test(variant, async () => {
      const worker = await startWorker(NO_BINDING, {
        scriptPath: "tests/worker/support/hostile-env.mjs",
        bindings: { VARIANT: variant },
      });
      try {
        for (const path of ["/aggregate", "/__edgeshed/stats", "/aggregate"]) {
          const r = await worker.get(path);
          assert.equal(r.status, 500, `${path}: ${r.text}`);
          assert.equal(r.json?.error, "config", `${path}: ${r.text}`);
          for (const mention of mentions) assert.ok(r.json.message.includes(mention), `${JSON.stringify(r.json.message)} names ${mention}`);
        }
        const logs = await worker.logged();
        assert.equal(logs.filter((l) => l.level === "error").length, 1, JSON.stringify(logs));
        assert.ok(!logs.some((l) => /Uncaught|unreachable|RuntimeError/.test(l.message)), JSON.stringify(logs));
      } finally {
        await worker.dispose();
      }
    });
  }
});
