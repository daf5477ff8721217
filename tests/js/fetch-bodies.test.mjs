// limiter.fetch's bodies and their slots (issue 11, item 2): an unread body
// gives its slot back after bodyTimeoutMs of idleness, or when its Response
// is garbage-collected; a body read to the end or cancelled gives it back at
// once and leaves no timer behind. Real HTTP server on 127.0.0.1.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import "./support/link-package.mjs";
import { closed, settle, spyTimers, startOrigin, until } from "./support/helpers.mjs";

const { Limiter, OverloadedError, DeadlineError } = await import("edgeshed");

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
const LONG = 60_000; // a bodyTimeoutMs no test waits for
// Every step waits for an event or a bounded poll; this only turns a hang (a bug) into a failure.
const T = { timeout: 20_000 };

let origin;
before(async () => {
  origin = await startOrigin();
});
after(() => origin.close());

/** Answers every request to `path` with `status` and `body`, until the test ends. */
function answerAll(path, status, body) {
  let stop = false;
  (async () => {
    while (!stop) {
      const { res } = await origin.next(path);
      res.writeHead(status, { "content-type": "text/plain" });
      res.end(body);
    }
  })();
  return () => (stop = true);
}

test("the issue's repro: `if (!res.ok) continue` twice frees both slots after bodyTimeoutMs", T, async () => {
  const bodyTimeoutMs = 150;
  const limiter = new Limiter({ maxInFlight: 2, bodyTimeoutMs });
  const stop = answerAll("/missing", 404, "no such thing");
  const unread = []; // kept reachable, so that the timeout (not GC) frees them
  const started = performance.now();
  for (let i = 0; i < 2; i++) {
    const res = await limiter.fetch(`${origin.url}/missing`);
    unread.push(res);
    if (!res.ok) continue;
  }
  assert.equal(limiter.stats().inFlight, 2);
  assert.equal(limiter.stats().heldBodies, 2);
  const shed = await settle(limiter.fetch(`${origin.url}/missing`));
  assert.ok(shed.error instanceof OverloadedError, "both slots held by the unread bodies");

  await until(() => limiter.stats().inFlight === 0, 10_000, "both slots free");
  assert.ok(performance.now() - started >= bodyTimeoutMs - 5, "not before bodyTimeoutMs");
  const s = limiter.stats();
  assert.deepEqual([s.heldBodies, s.bodyTimeouts, s.shed], [0, 2, 1]);
  for (let i = 0; i < 3; i++) {
    const res = await limiter.fetch(`${origin.url}/missing`);
    assert.equal(await res.text(), "no such thing", "later fetches succeed");
  }
  assert.deepEqual([limiter.stats().inFlight, limiter.stats().bodyTimeouts], [0, 2]);
  // A timed-out body tells its late reader why it is gone.
  const late = await settle(unread[0].text());
  assert.ok(late.error instanceof DeadlineError, `late read: ${late.error}`);
  assert.match(late.error.message, /bodyTimeoutMs/);
  stop();
});

test("a small body that arrived whole keeps its slot while unread, and gives it back when read", T, async () => {
  // The body is piped into a stream that lets a chunk through only when the
  // consumer reads it: a buffering one would take this body whole, end the
  // pipe and free the slot with nothing read.
  const limiter = new Limiter({ maxInFlight: 1, bodyTimeoutMs: LONG });
  const pending = limiter.fetch(`${origin.url}/small`);
  const { res } = await origin.next("/small");
  res.writeHead(200, { "content-type": "text/plain" });
  res.end("small");
  const response = await pending;
  if (!res.writableFinished) await new Promise((resolve) => res.once("finish", resolve));
  // Turns enough for the whole body to reach the client and any pipe to end.
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual([limiter.stats().inFlight, limiter.stats().heldBodies], [1, 1], "held while unread");
  const shed = await settle(limiter.fetch(`${origin.url}/small`));
  assert.ok(shed.error instanceof OverloadedError, "the unread body holds the one slot");
  assert.equal(await response.text(), "small");
  assert.deepEqual([limiter.stats().inFlight, limiter.stats().heldBodies, limiter.stats().bodyTimeouts], [0, 0, 0]);
});

test("a timed-out body cancels the origin's stream (the connection closes)", T, async () => {
  const limiter = new Limiter({ maxInFlight: 1, bodyTimeoutMs: 50 });
  const pending = limiter.fetch(`${origin.url}/endless`);
  const { res } = await origin.next("/endless");
  res.writeHead(200);
  res.write("first chunk, and then silence");
  const response = await pending;
  await closed(res);
  assert.equal(res.writableEnded, false, "the server never finished: the client went away");
  assert.equal(limiter.stats().inFlight, 0);
  assert.equal(limiter.stats().bodyTimeouts, 1);
  assert.ok(response.bodyUsed === false);
});

test("a body read steadily is never cut, even when it takes longer than bodyTimeoutMs in all", T, async () => {
  const bodyTimeoutMs = 300;
  const limiter = new Limiter({ maxInFlight: 1, bodyTimeoutMs });
  const pending = limiter.fetch(`${origin.url}/drip`);
  const { res } = await origin.next("/drip");
  res.writeHead(200);
  let sent = 0;
  const chunks = 12; // every 30 ms: 360 ms in all, each gap far under 300 ms
  const timer = setInterval(() => {
    if (++sent < chunks) res.write(`${sent},`);
    else {
      clearInterval(timer);
      res.end("end");
    }
  }, 30);
  const started = performance.now();
  const text = await (await pending).text();
  assert.ok(performance.now() - started > bodyTimeoutMs, "the body took longer than bodyTimeoutMs");
  assert.equal(text, Array.from({ length: chunks - 1 }, (_, i) => `${i + 1},`).join("") + "end");
  assert.deepEqual([limiter.stats().inFlight, limiter.stats().bodyTimeouts], [0, 0]);
});

test("a Response garbage-collected unread frees its slot long before bodyTimeoutMs", T, async () => {
  const limiter = new Limiter({ maxInFlight: 2, bodyTimeoutMs: LONG });
  const stop = answerAll("/gc", 404, "collect me");
  // Dropped as `if (!res.ok) return` drops it: nothing keeps the Response.
  const drop = async () => {
    const res = await limiter.fetch(`${origin.url}/gc`);
    if (!res.ok) return res.status;
    return 0;
  };
  assert.deepEqual([await drop(), await drop()], [404, 404]);
  assert.equal(limiter.stats().heldBodies, 2);
  await until(
    () => {
      gc();
      return limiter.stats().inFlight === 0;
    },
    10_000,
    "slots of collected Responses free",
  );
  const s = limiter.stats();
  assert.deepEqual([s.heldBodies, s.bodyTimeouts], [0, 0], "freed by the collection, not the timer");
  assert.equal(await (await limiter.fetch(`${origin.url}/gc`)).text(), "collect me");
  stop();
});

test("a body read to the end frees its slot at once and clears its timer", T, async () => {
  const bodyTimeoutMs = 43_210; // tells this body's timer from any other
  const timers = spyTimers(bodyTimeoutMs);
  try {
    const limiter = new Limiter({ maxInFlight: 1, bodyTimeoutMs });
    const pending = limiter.fetch(`${origin.url}/whole`);
    const { res } = await origin.next("/whole");
    res.writeHead(200);
    res.write("part one, ");
    const response = await pending;
    assert.equal(timers.live(), 1, "the body's idle timer is armed");
    assert.equal(limiter.stats().heldBodies, 1);
    const text = response.text();
    res.end("part two");
    assert.equal(await text, "part one, part two");
    assert.deepEqual([limiter.stats().inFlight, limiter.stats().heldBodies], [0, 0]);
    assert.equal(timers.live(), 0, "no timer left behind: nothing keeps the process alive");
  } finally {
    timers.restore();
  }
});

test("cancelling a body frees its slot at once and clears its timer", T, async () => {
  const bodyTimeoutMs = 43_211;
  const timers = spyTimers(bodyTimeoutMs);
  try {
    const limiter = new Limiter({ maxInFlight: 1, bodyTimeoutMs });
    const pending = limiter.fetch(`${origin.url}/cancelled`);
    const { res } = await origin.next("/cancelled");
    res.writeHead(200);
    res.write("unwanted");
    const response = await pending;
    assert.equal(timers.live(), 1);
    await response.body.cancel(new Error("not interested"));
    assert.deepEqual([limiter.stats().inFlight, limiter.stats().heldBodies, limiter.stats().bodyTimeouts], [0, 0, 0]);
    assert.equal(timers.live(), 0);
    await closed(res);
  } finally {
    timers.restore();
  }
});

test("a response without a body holds nothing and arms no timer", T, async () => {
  const bodyTimeoutMs = 43_212;
  const timers = spyTimers(bodyTimeoutMs);
  try {
    const limiter = new Limiter({ maxInFlight: 1, bodyTimeoutMs });
    const pending = limiter.fetch(`${origin.url}/nothing`);
    const { res } = await origin.next("/nothing");
    res.writeHead(204);
    res.end();
    assert.equal((await pending).status, 204);
    assert.deepEqual([limiter.stats().inFlight, limiter.stats().heldBodies], [0, 0]);
    assert.equal(timers.live(), 0);
  } finally {
    timers.restore();
  }
});
