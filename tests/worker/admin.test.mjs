// /__edgeshed/stats and /__edgeshed/metrics: closed unless opened
// (statsPublic or statsToken), shape, Prometheus text, and not being counted
// in the global limiter.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { after, answer, gate, startOrigin } from "./support/origin.mjs";
import { idle, serverTiming, startWorker } from "./support/worker.mjs";

const SCOPE_KEYS = ["admitted", "displaced", "fairShareRefused", "inFlight", "limit", "queueTimeouts", "queued", "shed"];
const CLASS_KEYS = ["admitted", "displaced", "inFlight", "lent", "queueTimeouts", "queued", "shed"];
/**
 * A scope's stats before any request: zero counters, `limit`, no reserve (no
 * route names a criticality) so every criticality may use the whole limit,
 * zero per criticality.
 */
const fresh = (limit) => {
  const zero = { admitted: 0, shed: 0, queueTimeouts: 0, displaced: 0, inFlight: 0, queued: 0, lent: false };
  return {
    inFlight: 0, queued: 0, admitted: 0, shed: 0, queueTimeouts: 0, limit,
    reserve: null, ceilings: { critical: limit, default: limit, sheddable: limit },
    displaced: 0, fairShareRefused: 0,
    byCriticality: { critical: zero, default: zero, sheddable: zero },
    topRefusedKeys: [],
  };
};

/** Parses Prometheus text exposition: { help, type, samples: [{ name, labels, value }] }. */
function parsePrometheus(text) {
  const help = new Map();
  const type = new Map();
  const samples = [];
  for (const line of text.split("\n")) {
    if (line === "") continue;
    let m;
    if ((m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+)$/.exec(line))) {
      help.set(m[1], m[2]);
    } else if ((m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line))) {
      type.set(m[1], m[2]);
    } else if ((m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line))) {
      const labels = {};
      for (const pair of (m[2] ?? "").match(/[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"/g) ?? []) {
        const at = pair.indexOf("=");
        labels[pair.slice(0, at)] = pair.slice(at + 2, -1);
      }
      const value = Number(m[3] === "+Inf" ? Infinity : m[3]);
      assert.ok(!Number.isNaN(value), `numeric sample value: ${line}`);
      samples.push({ name: m[1], labels, value });
    } else {
      assert.fail(`not a Prometheus exposition line: ${JSON.stringify(line)}`);
    }
  }
  return { help, type, samples };
}

function sample(parsed, name, labels) {
  const found = parsed.samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  assert.equal(found.length, 1, `exactly one ${name} ${JSON.stringify(labels)}`);
  return found[0].value;
}

function assertHistogram(parsed, name, labels, expectedCount) {
  assert.equal(parsed.type.get(name), "histogram", `${name} is a histogram`);
  assert.ok(parsed.help.has(name), `${name} has HELP`);
  const buckets = parsed.samples.filter(
    (s) => s.name === `${name}_bucket` && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  assert.ok(buckets.length >= 2, `${name} has buckets for ${JSON.stringify(labels)}`);
  let previous = -Infinity;
  let previousCount = 0;
  for (const b of buckets) {
    const le = b.labels.le === "+Inf" ? Infinity : Number(b.labels.le);
    assert.ok(le > previous, `${name} buckets in increasing le`);
    assert.ok(b.value >= previousCount, `${name} buckets are cumulative`);
    previous = le;
    previousCount = b.value;
  }
  assert.equal(buckets.at(-1).labels.le, "+Inf");
  const count = sample(parsed, `${name}_count`, labels);
  const sum = sample(parsed, `${name}_sum`, labels);
  assert.equal(buckets.at(-1).value, count, `${name} +Inf bucket equals _count`);
  assert.ok(sum >= 0);
  if (expectedCount !== undefined) assert.equal(count, expectedCount, `${name}_count ${JSON.stringify(labels)}`);
}

const ADMIN_PATHS = ["/__edgeshed/stats", "/__edgeshed/metrics", "/__edgeshed/budget", "/__edgeshed/", "/__edgeshed/nope"];

describe("stats and metrics closed by default (no statsToken, no statsPublic)", () => {
  let users, closed, explicit;
  before(async () => {
    users = await startOrigin("users");
    users.behave(answer({ id: 1 }));
    const config = {
      origins: { users: { url: users.url } },
      // A catch-all prefix route: a closed admin path is still not proxied.
      routes: [
        { path: "/agg", fanout: [{ origin: "users", path: "/u" }] },
        { prefix: "/", origin: "users" },
      ],
    };
    closed = await startWorker(config);
    explicit = await startWorker({ ...config, statsPublic: false });
  });
  afterAll(async () => {
    await Promise.all([closed, explicit].map((w) => w?.dispose()));
    await users?.close();
  });

  for (const [what, worker] of [["omitted", () => closed], ['"statsPublic": false', () => explicit]]) {
    test(`${what}: every /__edgeshed/* path answers 404 not_found, like an unknown path`, async () => {
      const calls = users.requests.length;
      for (const path of ADMIN_PATHS) {
        for (const headers of [{}, { authorization: "Bearer anything" }]) {
          const r = await worker().get(path, { headers });
          assert.equal(r.status, 404, `${path} ${JSON.stringify(headers)}: ${r.status} ${r.text}`);
          assert.deepEqual(r.json, { error: "not_found" }, path);
          assert.equal(r.headers.get("www-authenticate"), null, "nothing hints at a guarded endpoint");
          assert.ok(serverTiming(r.headers.get("server-timing")).has("admission"), "Server-Timing");
        }
      }
      assert.equal(users.requests.length, calls, "never proxied to the origin");
      const ok = await worker().get("/agg");
      assert.equal(ok.status, 200, "ordinary routes are unaffected");
    });
  }
});

describe("stats and metrics (open)", () => {
  let users, recs, worker;
  before(async () => {
    users = await startOrigin("users");
    recs = await startOrigin("recs");
    users.behave(answer({ id: 1 }));
    recs.behave(answer({ items: [1] }));
    worker = await startWorker({
      statsPublic: true, // the test reads /__edgeshed/*
      global: { maxInFlight: 5, maxQueue: 3, queueTimeoutMs: 40 },
      origins: {
        users: { url: users.url, maxInFlight: 4, maxQueue: 2, queueTimeoutMs: 30 },
        recs: { url: recs.url, maxInFlight: 1 },
      },
      routes: [
        { path: "/agg", fanout: [{ origin: "users", path: "/u" }, { origin: "recs", path: "/r", required: false }] },
        { path: "/solo", fanout: [{ origin: "recs", path: "/r" }] },
      ],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([users, recs].map((o) => o?.close()));
  });

  test("GET /__edgeshed/stats before any request: exact shape, zero counters, configured limits", async () => {
    const r = await worker.get("/__edgeshed/stats");
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type"), /^application\/json/);
    assert.ok(serverTiming(r.headers.get("server-timing")).has("admission"), "Server-Timing on every response");
    assert.deepEqual(r.json, {
      global: fresh(5),
      origins: { users: fresh(4), recs: fresh(1) },
      routes: {},
    });
  });

  test("counters follow traffic; /__edgeshed/* is not admitted through the global limiter", async () => {
    for (let i = 0; i < 3; i += 1) assert.equal((await worker.get("/agg")).status, 200);
    for (let i = 0; i < 5; i += 1) {
      await worker.get("/__edgeshed/stats");
      await worker.get("/__edgeshed/metrics");
    }
    // recs (maxInFlight 1, shed) held by one request: the next one is shed.
    const held = gate();
    recs.behave(after(held, answer({ items: [2] })));
    const first = worker.get("/solo");
    await held.arrivals(1);
    const shed = await worker.get("/solo");
    assert.equal(shed.status, 503);
    const mid = await worker.stats();
    assert.equal(mid.origins.recs.inFlight, 1);
    assert.equal(mid.global.inFlight, 1, "only the held request counts, not the stats request");
    held.open();
    assert.equal((await first).status, 200);
    recs.behave(answer({ items: [1] }));
    const stats = await worker.until(idle, { what: "idle" });
    for (const scope of [stats.global, ...Object.values(stats.origins)]) {
      assert.deepEqual(Object.keys(scope).sort(), [...SCOPE_KEYS, "byCriticality", "reserve", "ceilings", "topRefusedKeys"].sort());
      // No request here has a key: nothing is counted for the top refused keys.
      assert.deepEqual(scope.topRefusedKeys, []);
      for (const key of SCOPE_KEYS) assert.ok(Number.isInteger(scope[key]) && scope[key] >= 0, key);
      assert.deepEqual(Object.keys(scope.byCriticality), ["critical", "default", "sheddable"]);
      for (const counts of Object.values(scope.byCriticality)) assert.deepEqual(Object.keys(counts).sort(), CLASS_KEYS);
      // Every request here is a default one.
      assert.equal(scope.byCriticality.default.admitted, scope.admitted);
    }
    assert.equal(stats.global.admitted, 5, "3 /agg + 2 /solo; none of the 10+ admin requests");
    assert.equal(stats.global.shed, 0);
    assert.equal(stats.origins.users.admitted, 3);
    assert.equal(stats.origins.recs.admitted, 4);
    assert.equal(stats.origins.recs.shed, 1);
  });

  test("GET /__edgeshed/metrics: Prometheus text with HELP/TYPE, counters, gauges and both histograms", async () => {
    const r = await worker.get("/__edgeshed/metrics");
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type"), /^text\/plain/);
    assert.ok(r.text.endsWith("\n"));
    const parsed = parsePrometheus(r.text);
    for (const name of new Set(parsed.samples.map((s) => s.name.replace(/_(bucket|sum|count)$/, "")))) {
      const family = parsed.type.has(name) ? name : name.replace(/_(bucket|sum|count)$/, "");
      assert.ok(parsed.type.has(family), `TYPE line for ${name}`);
      assert.ok(parsed.help.has(family), `HELP line for ${name}`);
    }
    const counters = [...parsed.type].filter(([, t]) => t === "counter").map(([n]) => n);
    assert.ok(counters.length >= 3, `counters: ${counters}`);
    for (const name of counters) assert.match(name, /_total$/, `counter ${name} ends in _total`);

    // The same numbers as the stats.
    const stats = await worker.stats();
    const byValue = (key) => {
      const families = {
        admitted: "edgeshed_admitted_total",
        shed: "edgeshed_shed_total",
        queueTimeouts: "edgeshed_queue_timeouts_total",
        inFlight: "edgeshed_in_flight",
        queued: "edgeshed_queued",
        limit: "edgeshed_limit",
        displaced: "edgeshed_displaced_total",
        fairShareRefused: "edgeshed_fair_share_refused_total",
      };
      return families[key];
    };
    for (const key of SCOPE_KEYS) {
      const name = byValue(key);
      assert.ok(parsed.type.has(name), `${name} exposed`);
      assert.equal(sample(parsed, name, { scope: "global" }), stats.global[key], `${name} global`);
      for (const origin of ["users", "recs"]) {
        assert.equal(sample(parsed, name, { scope: `origin:${origin}` }), stats.origins[origin][key], `${name} ${origin}`);
      }
    }
    for (const criticality of ["critical", "default", "sheddable"]) {
      const labels = { scope: "origin:recs", criticality };
      assert.equal(sample(parsed, "edgeshed_criticality_admitted_total", labels), stats.origins.recs.byCriticality[criticality].admitted);
    }
    assertHistogram(parsed, "edgeshed_admission_wait_seconds", { scope: "global" }, 5);
    assertHistogram(parsed, "edgeshed_admission_wait_seconds", { scope: "origin:users" }, 3);
    assertHistogram(parsed, "edgeshed_origin_duration_seconds", { origin: "users" }, 3);
    assertHistogram(parsed, "edgeshed_origin_duration_seconds", { origin: "recs" }, 4);
  });

  test("unknown /__edgeshed/ paths answer 404", async () => {
    const r = await worker.get("/__edgeshed/nope");
    assert.equal(r.status, 404);
    assert.deepEqual(r.json, { error: "not_found" });
  });
});

describe("stats and metrics behind statsToken", () => {
  let users, worker;
  const token = "s3cret-t0ken";
  before(async () => {
    users = await startOrigin("users");
    users.behave(answer({ id: 1 }));
    worker = await startWorker(
      {
        statsToken: token,
        origins: { users: { url: users.url } },
        routes: [{ path: "/agg", fanout: [{ origin: "users", path: "/u" }] }],
      },
      { statsToken: token },
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await users?.close();
  });

  for (const path of ["/__edgeshed/stats", "/__edgeshed/metrics"]) {
    test(`${path}: 401 without or with a wrong bearer, 200 with the right one`, async () => {
      for (const headers of [
        {},
        { authorization: "Bearer wrong" },
        { authorization: `Bearer ${token}x` },
        { authorization: `Bearer ${token.slice(0, -1)}` },
        { authorization: `Basic ${Buffer.from(`u:${token}`).toString("base64")}` },
        { authorization: token },
      ]) {
        const r = await worker.get(path, { headers });
        assert.equal(r.status, 401, `${path} with ${JSON.stringify(headers)}: ${r.status}`);
        assert.deepEqual(r.json, { error: "unauthorized" });
        assert.match(r.headers.get("www-authenticate") ?? "", /^Bearer\b/, "WWW-Authenticate: Bearer");
        assert.ok(!r.text.includes("edgeshed_") && !r.text.includes("inFlight"), "no numbers leak");
      }
      const ok = await worker.get(path, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200, ok.text);
    });
  }

  test("the token does not guard ordinary routes", async () => {
    const r = await worker.get("/agg");
    assert.equal(r.status, 200, r.text);
    const stats = await worker.stats();
    assert.equal(stats.global.admitted, 1);
  });
});
