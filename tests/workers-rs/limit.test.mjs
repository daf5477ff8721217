// examples/workers-rs — a Rust Worker on the `worker` crate (workers-rs),
// built by worker-build (scripts/build-workers-rs.sh) — in real workerd
// (Miniflare), in front of a real origin on 127.0.0.1: its edgeshed limit
// holds under a burst, queued requests get permits that other requests
// release, and the rest get fast 503s; JsClock's timers end queue waits and
// deadlines.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";
import { after, answer, deferred, gate, hang, startOrigin } from "../worker/support/origin.mjs";
import { ROOT } from "../worker/support/worker.mjs";
// Miniflare's temp folder: removed at exit (dispose() does not wait).
import "../worker/support/own-tmpdir.mjs";

const DIR = join(ROOT, "examples/workers-rs");
const BUILD = join(DIR, "build");

/** The example in workerd with its wrangler.toml's settings, and `vars` over its [vars]. */
async function startExample(vars) {
  if (!existsSync(join(BUILD, "index.js"))) throw new Error(`${BUILD} is missing: run bash scripts/build-workers-rs.sh`);
  const config = unstable_readConfig({ config: join(DIR, "wrangler.toml") });
  const mf = new Miniflare({
    modules: true,
    scriptPath: join(BUILD, "index.js"),
    modulesRoot: BUILD,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
    cf: false,
    bindings: { ...config.vars, ...vars },
  });
  await mf.ready;
  return {
    async get(path) {
      const response = await mf.dispatchFetch(`http://example.test${path}`);
      return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.text() };
    },
    async stats() {
      return JSON.parse((await this.get("/stats")).body);
    },
    dispose: () => mf.dispose(),
  };
}

/** Starts `n` requests at once; `answered(k)` resolves once `k` of them have answered. */
function burst(worker, n, path = "/work") {
  const answers = [];
  const watchers = [];
  const requests = Array.from({ length: n }, () =>
    worker.get(path).then((answer) => {
      answers.push(answer);
      for (const w of watchers.filter((w) => answers.length >= w.k)) w.resolve();
      return answer;
    }),
  );
  return {
    answers,
    answered(k) {
      if (answers.length >= k) return Promise.resolve();
      const d = deferred();
      watchers.push({ k, resolve: d.resolve });
      return d.promise;
    },
    all: () => Promise.all(requests),
  };
}

test("a burst of 10: 2 at the origin, 2 wait for permits other requests release, 6 get 503 at once", async (t) => {
  const origin = await startOrigin();
  const open = gate();
  origin.behave(after(open, answer("from the origin")));
  const worker = await startExample({ ORIGIN: origin.url, MAX_IN_FLIGHT: "2", MAX_QUEUE: "2", QUEUE_TIMEOUT_MS: "10000" });
  t.after(() => Promise.all([worker.dispose(), origin.close()]));

  const requests = burst(worker, 10);
  await origin.arrivals(2);
  await requests.answered(6);
  for (const shed of requests.answers) {
    assert.deepEqual(shed, { status: 503, retryAfter: "1", body: '{"error":"overloaded","reason":"limit"}' });
  }
  assert.deepEqual(await worker.stats(), { inFlight: 2, queued: 2, limit: 2, admitted: 2, shed: 6, queueTimeouts: 0, expired: 0 });

  open.open();
  const statuses = (await requests.all()).map((a) => a.status).sort();
  assert.deepEqual(statuses, [200, 200, 200, 200, 503, 503, 503, 503, 503, 503]);
  assert.equal(origin.peak, 2, "the origin never saw more than the limit");
  assert.equal(origin.requests.length, 4);
  const stats = await worker.stats();
  assert.equal(stats.inFlight, 0, "every permit came back");
  assert.equal(stats.admitted, 4);
});

test("JsClock's timers: a queued request times out after QUEUE_TIMEOUT_MS, a slow origin at DEADLINE_MS", async (t) => {
  const origin = await startOrigin();
  const open = gate();
  origin.behave(after(open, answer("late")));
  const worker = await startExample({ ORIGIN: origin.url, MAX_IN_FLIGHT: "1", MAX_QUEUE: "1", QUEUE_TIMEOUT_MS: "50", DEADLINE_MS: "400" });
  t.after(() => Promise.all([worker.dispose(), origin.close()]));

  const requests = burst(worker, 2);
  await origin.arrivals(1);
  await requests.answered(1); // the queued one, at its queue timeout
  assert.deepEqual(requests.answers[0], { status: 503, retryAfter: "1", body: '{"error":"overloaded","reason":"queue_timeout"}' });
  await requests.answered(2); // the admitted one, at its deadline
  assert.equal(requests.answers[1].status, 504);
  assert.equal(requests.answers[1].body, "deadline");
  await origin.aborts(1); // the origin call was aborted at the deadline
  const stats = await worker.stats();
  assert.deepEqual([stats.inFlight, stats.queueTimeouts, stats.admitted], [0, 1, 1]);

  origin.behave(answer("fast"));
  assert.deepEqual(await worker.get("/work"), { status: 200, retryAfter: null, body: "fast" });
  open.open();
});

test("a configuration error names the var and answers 500 on every request", async (t) => {
  const origin = await startOrigin();
  origin.behave(hang());
  const worker = await startExample({ ORIGIN: origin.url, MAX_IN_FLIGHT: "0" });
  t.after(() => Promise.all([worker.dispose(), origin.close()]));
  for (const path of ["/work", "/stats"]) {
    const answer = await worker.get(path);
    assert.equal(answer.status, 500);
    assert.match(answer.body, /max_in_flight must be at least 1, got 0/);
  }
  assert.equal(origin.requests.length, 0);
});
