// The npm package inside real workerd (Miniflare 4): a module-scope Limiter
// shared by concurrent requests of one isolate, and docs/js.md's workerd
// snippet bundled by wrangler (the `workerd` export condition).
// Every origin the workers call is a node http server on 127.0.0.1 that the
// test controls, so every step waits for a real event, never for time.
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { Miniflare } from "miniflare";
// Miniflare's and wrangler's temp files go to a folder removed at exit.
import "../worker/support/own-tmpdir.mjs";
import { ROOT } from "./support/link-package.mjs";
import { closed, isSettled, readmeSnippet, startOrigin } from "./support/helpers.mjs";

const COMPATIBILITY_DATE = "2025-09-01";
const MODULE_RULES = [
  { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
  { type: "CompiledWasm", include: ["**/*.wasm"] },
];
// Miniflare gzips text answers unless told not to, which buffers streamed bodies.
const IDENTITY = { "accept-encoding": "identity" };
// Every step waits for a real event; this only turns a hang (a bug) into a failure.
const T = { timeout: 30_000 };
// The counters these tests never move.
const QUIET = { expired: 0, abandoned: 0, heldBodies: 0, bodyTimeouts: 0 };

/** Answers a `/called` notification and returns its query as numbers. */
async function takeCalled(origin, id) {
  const { url, res } = await origin.next("/called");
  res.end();
  assert.equal(url.searchParams.get("id"), String(id));
  return { inFlight: Number(url.searchParams.get("inFlight")), queued: Number(url.searchParams.get("queued")) };
}

/** Takes the next `/hold` request and checks it is the one for `id`. */
async function takeHold(origin, id) {
  const hold = await origin.next("/hold");
  assert.equal(hold.url.searchParams.get("id"), String(id), "holds arrive in admission order");
  return hold;
}

/** Keeps writing small chunks to `res` until its connection closes (the worker went away). */
async function pumpUntilClosed(res) {
  res.on("error", () => {});
  const timer = setInterval(() => {
    if (!res.closed && !res.destroyed) res.write("tick\n");
  }, 10);
  try {
    await closed(res);
  } finally {
    clearInterval(timer);
  }
}

describe("Limiter shared by concurrent requests in workerd", () => {
  let origin;
  let mf;
  // The counters these tests are about (the criticality ones are covered in criticality.test.mjs).
  const stats = async (limiter = "main") => {
    const { reserve, ceilings, byCriticality, fairShareRefused, rateLimited, rateOverflow, topRefusedKeys, ...counters } = await (
      await mf.dispatchFetch(`http://worker/stats?limiter=${limiter}`)
    ).json();
    assert.equal(typeof byCriticality, "object");
    assert.equal(reserve, null, "no call names a criticality");
    assert.equal(typeof ceilings.sheddable, "number");
    assert.equal(fairShareRefused + rateLimited + rateOverflow, 0);
    assert.deepEqual(topRefusedKeys, []);
    return counters;
  };

  before(async () => {
    origin = await startOrigin();
    mf = new Miniflare({
      modules: true,
      modulesRoot: ROOT,
      scriptPath: join(ROOT, "tests/js/fixtures/limiter-worker.mjs"),
      modulesRules: MODULE_RULES,
      compatibilityDate: COMPATIBILITY_DATE,
      cf: false,
      bindings: { ORIGIN: origin.url },
    });
    await mf.ready;
  });
  after(async () => {
    await mf?.dispose();
    await origin?.close();
  }, T);

  test("starts idle", T, async () => {
    assert.deepEqual(await stats(), { ...QUIET, inFlight: 0, queued: 0, admitted: 0, shed: 0, queueTimeouts: 0, limit: 1 });
  });

  test("a second request is queued behind the first, a third is shed with 503, a cancelled one leaves the queue", T, async () => {
    const first = mf.dispatchFetch("http://worker/work?id=1");
    assert.deepEqual(await takeCalled(origin, 1), { inFlight: 1, queued: 0 });
    const hold1 = await takeHold(origin, 1);

    const second = mf.dispatchFetch("http://worker/work?id=2&cancelable=1");
    assert.deepEqual(await takeCalled(origin, 2), { inFlight: 1, queued: 1 });
    assert.deepEqual(await stats(), { ...QUIET, inFlight: 1, queued: 1, admitted: 1, shed: 0, queueTimeouts: 0, limit: 1 });

    const third = mf.dispatchFetch("http://worker/work?id=3");
    assert.deepEqual(await takeCalled(origin, 3), { inFlight: 1, queued: 1 });
    const shed = await third;
    assert.equal(shed.status, 503);
    assert.equal(shed.headers.get("retry-after"), "1");
    assert.equal(await shed.text(), "OverloadedError: service overloaded: limit 1 reached and the queue full (maxQueue 1): shed at once");
    assert.deepEqual(await stats(), { ...QUIET, inFlight: 1, queued: 1, admitted: 1, shed: 1, queueTimeouts: 0, limit: 1 });
    assert.equal(await isSettled(second), false, "still waiting for the permit");
    assert.deepEqual(origin.pending(), ["/cancel-me?id=2"], "the second request's fn has not run");

    // The waiting request aborts its own signal (when /cancel-me is answered): it leaves the queue.
    const cancelMe = await origin.next("/cancel-me");
    assert.equal(cancelMe.url.searchParams.get("id"), "2");
    assert.equal(await isSettled(second), false);
    cancelMe.res.end();
    const cancelled = await second;
    assert.equal(`${cancelled.status} ${await cancelled.text()}`, "499 aborted: cancelled by /cancel-me?id=2");
    assert.deepEqual(await stats(), { ...QUIET, inFlight: 1, queued: 0, admitted: 1, shed: 1, queueTimeouts: 0, limit: 1 });

    hold1.res.end("one");
    const firstResponse = await first;
    assert.equal(`${firstResponse.status} ${await firstResponse.text()}`, "200 done 1: one");
    assert.deepEqual(await stats(), { ...QUIET, inFlight: 0, queued: 0, admitted: 1, shed: 1, queueTimeouts: 0, limit: 1 });
    assert.deepEqual(origin.pending(), []);
  });

  test(
    "the queued request gets the first's permit when it completes, and succeeds",
    { timeout: 15_000 },
    async () => {
      const first = mf.dispatchFetch("http://worker/work?id=11&limiter=handoff");
      assert.deepEqual(await takeCalled(origin, 11), { inFlight: 1, queued: 0 });
      const hold1 = await takeHold(origin, 11);
      const second = mf.dispatchFetch("http://worker/work?id=12&limiter=handoff");
      assert.deepEqual(await takeCalled(origin, 12), { inFlight: 1, queued: 1 });

      hold1.res.end("one");
      const firstResponse = await first;
      assert.equal(`${firstResponse.status} ${await firstResponse.text()}`, "200 done 11: one");
      const hold2 = await takeHold(origin, 12);
      hold2.res.end("two");
      const secondResponse = await second;
      assert.equal(`${secondResponse.status} ${await secondResponse.text()}`, "200 done 12: two");
      assert.deepEqual(await stats("handoff"), { ...QUIET, inFlight: 0, queued: 0, admitted: 2, shed: 0, queueTimeouts: 0, limit: 1 });
    },
  );

  test("a queued request times out after queueTimeoutMs with 503 and leaves no waiter", T, async () => {
    const first = mf.dispatchFetch("http://worker/work?id=4&limiter=short");
    await takeCalled(origin, 4);
    const hold = await takeHold(origin, 4);

    const second = mf.dispatchFetch("http://worker/work?id=5&limiter=short");
    assert.deepEqual(await takeCalled(origin, 5), { inFlight: 1, queued: 1 });
    const timedOut = await second;
    assert.equal(timedOut.status, 503);
    assert.match(await timedOut.text(), /^OverloadedError: service overloaded: waited queueTimeoutMs \d+ for a slot of limit 1 \(maxQueue 1\): queue timeout$/);
    assert.deepEqual(await stats("short"), { ...QUIET, inFlight: 1, queued: 0, admitted: 1, shed: 0, queueTimeouts: 1, limit: 1 });

    hold.res.end("four");
    assert.equal(await (await first).text(), "done 4: four");
    assert.deepEqual(await stats("short"), { ...QUIET, inFlight: 0, queued: 0, admitted: 1, shed: 0, queueTimeouts: 1, limit: 1 });
  });

  test("limiter.fetch in workerd holds the permit while the body streams to the client", T, async () => {
    const pending = mf.dispatchFetch("http://worker/proxy?id=6&limiter=shedding", { headers: IDENTITY });
    const hold = await takeHold(origin, 6);
    hold.res.writeHead(200, { "content-type": "text/plain" });
    hold.res.write("first ");
    const response = await pending;
    const reader = response.body.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "first ");
    assert.equal((await stats("shedding")).inFlight, 1);
    const shed = await mf.dispatchFetch("http://worker/proxy?id=7&limiter=shedding");
    assert.equal(shed.status, 503);
    assert.equal(await shed.text(), "OverloadedError: service overloaded: limit 1 reached, maxQueue 0: shed at once");
    hold.res.end("last");
    let rest = "";
    for (let chunk; !(chunk = await reader.read()).done; ) rest += new TextDecoder().decode(chunk.value);
    assert.equal(rest, "last");
    assert.deepEqual(await stats("shedding"), { ...QUIET, inFlight: 0, queued: 0, admitted: 1, shed: 1, queueTimeouts: 0, limit: 1 });
  });

  test("limiter.fetch's response returned as is: a client that disconnects frees the slot at once, not after bodyTimeoutMs", T, async () => {
    // The body is piped under cloudflare:workers' waitUntil: when workerd
    // drops the vanished client's response, the pipe settles and frees the
    // slot. (A stream that only waits for pulls and cancel() never hears of
    // it: workerd drops it without cancel(), and its request's timers die
    // with the request, so its slot came back only after bodyTimeoutMs.)
    const controller = new AbortController();
    const pending = mf.dispatchFetch("http://worker/proxy?id=8&limiter=disconnect", {
      headers: IDENTITY,
      signal: controller.signal,
    });
    const hold = await takeHold(origin, 8);
    hold.res.writeHead(200);
    hold.res.write("first");
    const response = await pending;
    await response.body.getReader().read();
    assert.equal((await stats("disconnect")).heldBodies, 1);
    const abortedAt = performance.now();
    controller.abort();
    // workerd notices the vanished client on its next write: keep the origin talking.
    await pumpUntilClosed(hold.res);
    for (;;) {
      const { inFlight } = await stats("disconnect");
      if (inFlight === 0) break;
      assert.ok(performance.now() - abortedAt < 10_000, "the slot is back within 10 s (bodyTimeoutMs is 60 s)");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    assert.deepEqual(await stats("disconnect"), {
      ...QUIET, inFlight: 0, queued: 0, admitted: 1, shed: 0, queueTimeouts: 0, limit: 1,
    });
  });

  test("a body the worker leaves unread frees its slot after bodyTimeoutMs", T, async () => {
    const pending = mf.dispatchFetch("http://worker/drop?id=9&limiter=idlebody", { headers: IDENTITY });
    const hold = await takeHold(origin, 9);
    hold.res.writeHead(200);
    hold.res.write("never read");
    assert.equal(await (await pending).text(), "dropped 9");
    const droppedAt = performance.now();
    // No chunk moves through an unread body: bodyTimeoutMs (300 ms) later its
    // timer (or, had its request's timers died, the next call's sweep) frees
    // the slot and cancels the origin's stream. Nothing announces that
    // moment: retry, bounded, without stats() (which would sweep too).
    const admitted = origin.next("/hold");
    let attempts = 0;
    let next;
    for (;;) {
      attempts++;
      const pending = mf.dispatchFetch(`http://worker/proxy?id=${100 + attempts}&limiter=idlebody`, { headers: IDENTITY });
      const outcome = await Promise.race([pending.then((response) => ({ response })), admitted.then((hold) => ({ hold }))]);
      if (outcome.hold) {
        outcome.hold.res.end("again");
        next = await pending;
        break;
      }
      assert.equal(outcome.response.status, 503, "shed while the idle body holds the slot");
      await outcome.response.text();
      assert.ok(performance.now() - droppedAt < 10_000, "a later call got the slot within 10 s");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(performance.now() - droppedAt >= 200, "not long before bodyTimeoutMs (300 ms of idleness)");
    assert.equal(await next.text(), "again", "the slot is usable again");
    await closed(hold.res);
    assert.deepEqual(await stats("idlebody"), {
      ...QUIET, inFlight: 0, queued: 0, admitted: 2, shed: attempts - 1, queueTimeouts: 0, bodyTimeouts: 1, limit: 1,
    });
  });
});

describe("docs/js.md: the workerd snippet, bundled by wrangler", () => {
  const dir = join(ROOT, "node_modules", ".cache", "edgeshed-tests", "readme-workerd");
  let origin;
  let mf;
  let wasmModule;
  // The counters these tests are about (the criticality ones are covered in criticality.test.mjs).
  const stats = async () => {
    const { reserve, ceilings, byCriticality, fairShareRefused, rateLimited, rateOverflow, topRefusedKeys, ...counters } = await (
      await mf.dispatchFetch("http://worker/stats")
    ).json();
    assert.equal(typeof byCriticality, "object");
    assert.equal(reserve, null, "no call names a criticality");
    assert.equal(typeof ceilings.sheddable, "number");
    assert.equal(fairShareRefused + rateLimited + rateOverflow, 0);
    assert.deepEqual(topRefusedKeys, []);
    return counters;
  };

  before(async () => {
    const { code } = readmeSnippet("workerd");
    assert.match(code, /from "edgeshed"/);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "worker.mjs"), code);
    // Its own config: wrangler would otherwise pick up the repository's wrangler.toml.
    writeFileSync(
      join(dir, "wrangler.toml"),
      `name = "readme-workerd"\nmain = "worker.mjs"\ncompatibility_date = "${COMPATIBILITY_DATE}"\nsend_metrics = false\n`,
    );
    // wrangler's own bundling, as `wrangler deploy` does it, written to out/.
    await promisify(execFile)(
      join(ROOT, "node_modules/.bin/wrangler"),
      ["deploy", "--dry-run", "--outdir", "out", "--config", "wrangler.toml"],
      { cwd: dir, env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" } },
    );
    wasmModule = readdirSync(join(dir, "out")).find((file) => file.endsWith(".wasm"));
    origin = await startOrigin();
    mf = new Miniflare({
      modules: true,
      modulesRoot: join(dir, "out"),
      scriptPath: join(dir, "out", "worker.js"),
      modulesRules: MODULE_RULES,
      compatibilityDate: COMPATIBILITY_DATE,
      cf: false,
      bindings: { ORIGIN: origin.url },
    });
    await mf.ready;
  });
  after(async () => {
    await mf?.dispose();
    await origin?.close();
  }, T);

  test("wrangler picked the workerd entry: the wasm is a separate module", T, () => {
    assert.match(wasmModule ?? "", /edgeshed_bg\.wasm$/);
  });

  test("proxies a streamed body, holding the slot until it ends", T, async () => {
    const pending = mf.dispatchFetch("http://worker/items?page=2", { headers: IDENTITY });
    const { url, res } = await origin.next("/items");
    assert.equal(url.search, "?page=2");
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("a,");
    const response = await pending;
    assert.equal(response.status, 200);
    assert.equal(response.headers.get("content-type"), "text/plain");
    const reader = response.body.getReader();
    assert.equal(new TextDecoder().decode((await reader.read()).value), "a,");
    assert.deepEqual(await stats(), { ...QUIET, inFlight: 1, heldBodies: 1, queued: 0, admitted: 1, shed: 0, queueTimeouts: 0, limit: 6 });
    res.end("b");
    let rest = "";
    for (let chunk; !(chunk = await reader.read()).done; ) rest += new TextDecoder().decode(chunk.value);
    assert.equal(rest, "b");
    assert.equal((await stats()).inFlight, 0);
  });

  test("a 204 from the origin passes through with its slot freed", T, async () => {
    const pending = mf.dispatchFetch("http://worker/empty");
    const { res } = await origin.next("/empty");
    res.writeHead(204);
    res.end();
    assert.equal((await pending).status, 204);
    assert.equal((await stats()).inFlight, 0);
  });

  test("a client that disconnects mid-body frees the slot (IdentityTransformStream + waitUntil)", T, async () => {
    const controller = new AbortController();
    const pending = mf.dispatchFetch("http://worker/stream", { headers: IDENTITY, signal: controller.signal });
    const { res } = await origin.next("/stream");
    res.writeHead(200, { "content-type": "text/plain" });
    res.write("first\n");
    const response = await pending;
    await response.body.getReader().read();
    assert.equal((await stats()).inFlight, 1);
    controller.abort();
    // workerd notices the vanished client on its next write: keep the origin talking.
    await pumpUntilClosed(res);
    assert.equal((await stats()).inFlight, 0);
  });

  test("six slots busy: the seventh request waits queueTimeoutMs, then gets 503 + Retry-After", T, async () => {
    const before = await stats();
    const busy = [];
    for (let i = 0; i < 6; i++) {
      const response = mf.dispatchFetch(`http://worker/slow/${i}`);
      busy.push({ response, held: await origin.next(`/slow/${i}`) });
    }
    assert.equal((await stats()).inFlight, 6);
    const rejected = await mf.dispatchFetch("http://worker/slow/6");
    assert.equal(rejected.status, 503);
    assert.equal(rejected.headers.get("retry-after"), "1");
    assert.equal(await rejected.text(), "overloaded\n");
    assert.deepEqual(origin.pending(), [], "the rejected request never reached the origin");
    for (const { held } of busy) held.res.end("ok");
    for (const { response } of busy) assert.equal(await (await response).text(), "ok");
    assert.deepEqual(await stats(), { ...QUIET,
      ...before,
      inFlight: 0,
      queued: 0,
      admitted: before.admitted + 6,
      queueTimeouts: before.queueTimeouts + 1,
    });
  });
});
