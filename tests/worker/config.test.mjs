// The EDGESHED binding: invalid configurations answer 500 on every request
// (never a trap) with a body that says only that the gateway is
// misconfigured; the errors are logged once per isolate with console.error
// and shown on the admin endpoints the configuration opened; a missing
// binding fails closed the same way; a JSON string works like an object;
// defaults.
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

/** What every public answer of a misconfigured gateway says: that, and nothing more. */
const MISCONFIGURED = '{"error":"misconfigured"}';
const LOGGED = "edgeshed: configuration error, every request answers 500 until it is fixed: ";

/** The configuration errors `worker` logged (each entry's message, prefix removed). */
async function loggedErrors(worker) {
  const logged = (await worker.logged()).filter((l) => l.message.startsWith(LOGGED));
  for (const entry of logged) assert.equal(entry.level, "error", "with console.error");
  return logged.map((l) => l.message.slice(LOGGED.length));
}

/** The configuration error a worker with `binding` logs on its first request. */
async function configMessage(binding) {
  const worker = await startWorker(binding);
  try {
    const r = await worker.get("/aggregate");
    assert.equal(r.status, 500, r.text);
    assert.equal(r.text, MISCONFIGURED);
    const [message] = await loggedErrors(worker);
    return message;
  } finally {
    await worker.dispose();
  }
}

describe("invalid configuration: 500 misconfigured on every request, the errors in the log", () => {
  for (const [what, binding, mentions] of INVALID) {
    test(what, async () => {
      const worker = await startWorker(binding);
      try {
        const paths = [
          ["/aggregate", {}],
          ["/__edgeshed/stats", {}],
          ["/__edgeshed/metrics", {}],
          ["/proxy/x", { method: "POST", body: "b" }],
          ["/nothing", {}],
          ["/aggregate", {}],
        ];
        for (const [path, init] of paths) {
          const r = await worker.get(path, init);
          assert.equal(r.status, 500, `${path}: ${r.text}`);
          assert.match(r.headers.get("content-type"), /^application\/json/, path);
          // Not a word of the errors (nor an origin URL): only that it is misconfigured.
          assert.equal(r.text, MISCONFIGURED, path);
          assert.ok(serverTiming(r.headers.get("server-timing")).has("admission"), `${path}: Server-Timing`);
        }
        // Where the operator looks (wrangler dev / wrangler tail): logged
        // once for the isolate, not once per request.
        const logged = await loggedErrors(worker);
        assert.equal(logged.length, 1, `logged once for ${paths.length} requests: ${JSON.stringify(logged)}`);
        for (const mention of mentions) {
          assert.ok(logged[0].includes(mention), `message ${JSON.stringify(logged[0])} names ${mention}`);
        }
        if (typeof binding === "object" && binding !== null) objectMessages.set(what, logged[0]);
      } finally {
        await worker.dispose();
      }
    });
  }
});

describe("the errors of an invalid configuration on its admin endpoints", () => {
  const SECRET_URL = "https://secret-users.internal.example";
  const broken = (admin) => ({
    ...admin,
    origins: { users: { url: SECRET_URL, maxInflight: 4 }, recs: { url: "ftp://secret-recs.internal.example:21" } },
    routes: [{ prefix: "/crit", origin: "users" }],
  });
  const ERRORS = [
    "origins.users.maxInflight is not a known key",
    'origins.recs.url must use http or https, got "ftp://secret-recs.internal.example:21"',
    'routes[0].prefix must end with "/", got "/crit"',
  ];

  test("with statsToken: the public 500 names nothing, /__edgeshed/* with the token shows every error", async () => {
    const worker = await startWorker(broken({ statsToken: "t0ken" }));
    try {
      for (const path of ["/crit/x", "/aggregate", "/__edgeshed/x"]) {
        const r = await worker.get(path);
        assert.equal(r.status, path.startsWith("/__edgeshed/") ? 401 : 500, `${path}: ${r.text}`);
        assert.ok(!r.text.includes("secret-") && !r.text.includes("maxInflight"), `${path}: ${r.text}`);
        if (r.status === 500) assert.equal(r.text, MISCONFIGURED);
      }
      const wrong = await worker.get("/__edgeshed/stats", { headers: { authorization: "Bearer nope" } });
      assert.equal(wrong.status, 401, wrong.text);
      assert.equal(wrong.headers.get("www-authenticate"), 'Bearer realm="edgeshed"');
      assert.ok(!wrong.text.includes("secret-"), wrong.text);
      for (const path of ["/__edgeshed/stats", "/__edgeshed/metrics"]) {
        const r = await worker.get(path, { headers: { authorization: "Bearer t0ken" } });
        assert.equal(r.status, 500, r.text);
        assert.equal(r.headers.get("cache-control"), "no-store");
        assert.equal(r.json.error, "misconfigured");
        assert.equal(r.json.errors.length, 3, r.text);
        ERRORS.forEach((error, i) => assert.ok(r.json.errors[i].startsWith(error), `${r.json.errors[i]} is ${error}`));
        assert.match(r.json.message, /^3 configuration errors: /);
      }
      const [logged] = await loggedErrors(worker);
      for (const error of ERRORS) assert.ok(logged.includes(error), `the log names ${error}`);
    } finally {
      await worker.dispose();
    }
  });

  test("with statsPublic: the admin endpoints show the errors (they are public by choice); without either, nothing shows them", async () => {
    const open = await startWorker(broken({ statsPublic: true }));
    try {
      assert.equal((await open.get("/crit/x")).text, MISCONFIGURED);
      const r = await open.get("/__edgeshed/stats");
      assert.equal(r.status, 500, r.text);
      assert.ok(r.json.errors[0].startsWith(ERRORS[0]), r.text);
    } finally {
      await open.dispose();
    }
    const closed = await startWorker(broken({}));
    try {
      for (const path of ["/__edgeshed/stats", "/crit/x"]) assert.equal((await closed.get(path)).text, MISCONFIGURED, path);
    } finally {
      await closed.dispose();
    }
  });
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

describe("a binding that throws when read: 500 misconfigured on every request, never an exception through Rust", () => {
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
          assert.equal(r.text, MISCONFIGURED, path);
        }
        const [message] = await loggedErrors(worker);
        for (const mention of mentions) assert.ok(message.includes(mention), `${JSON.stringify(message)} names ${mention}`);
        const logs = await worker.logged();
        assert.equal(logs.filter((l) => l.level === "error").length, 1, JSON.stringify(logs));
        assert.ok(!logs.some((l) => /Uncaught|unreachable|RuntimeError/.test(l.message)), JSON.stringify(logs));
      } finally {
        await worker.dispose();
      }
    });
  }
});
