// What a refusal tells its caller: its message names the limit that refused
// the call and why, and a shed's stack (and a deadline's, for a call with a
// deadlineMs) starts at the caller's run/fetch call, not inside edgeshed.
// An un-awaited shed that crashes Node.js shows where the call was made.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { DeadlineError, Limiter, OverloadedError } from "../../pkg/node.js";
import { deferred } from "./support/helpers.mjs";
import { ROOT } from "./support/link-package.mjs";

const HERE = new URL(import.meta.url).pathname;

/** Stack captures are budgeted (one per millisecond): start each check in a fresh one. */
async function freshMillisecond() {
  const start = performance.now();
  while (performance.now() - start < 2) await new Promise((resolve) => setTimeout(resolve, 1));
}

/** The frames of `error.stack` (its lines after the first). */
const frames = (error) => error.stack.split("\n").slice(1);

test("a shed names the limit and why; its stack starts at the caller's run", async () => {
  const limiter = new Limiter({ maxInFlight: 1 });
  const gate = deferred();
  const holder = limiter.run(() => gate.promise);
  await freshMillisecond();
  const error = await (function callsRun() {
    return limiter.run(() => 1);
  })().catch((e) => e);
  assert.ok(error instanceof OverloadedError);
  assert.equal(error.message, "service overloaded: limit 1 reached, maxQueue 0: shed at once");
  const [first] = frames(error);
  assert.match(first, /^\s+at callsRun \(/, error.stack);
  assert.ok(first.includes(HERE), `the caller's file: ${first}`);
  assert.ok(!error.stack.includes("wasm://"), "no frame inside edgeshed's wasm");
  assert.ok(!/edgeshed\.js|glue\.js/.test(error.stack), "no frame inside edgeshed's glue");
  assert.deepEqual(JSON.parse(JSON.stringify(error)), { status: 503, reason: "limit" });
  gate.resolve();
  await holder;
});

test("a full queue is named too, and fetch's shed starts at the caller's fetch", async () => {
  const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 60_000 });
  const gate = deferred();
  const holder = limiter.run(() => gate.promise);
  const queued = limiter.run(() => 1);
  await freshMillisecond();
  const error = await (function callsFetch() {
    return limiter.fetch("http://127.0.0.1:9/never");
  })().catch((e) => e);
  assert.equal(error.message, "service overloaded: limit 1 reached and the queue full (maxQueue 1): shed at once");
  assert.match(frames(error)[0], /^\s+at callsFetch \(/, error.stack);
  gate.resolve();
  await Promise.all([holder, queued]);
});

test("a deadline's error says which and when, with the stack of the call that set it", async () => {
  const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 60_000 });
  const gate = deferred();
  await freshMillisecond();
  const running = (function startsRunning() {
    return limiter.run(() => gate.promise, { deadlineMs: 20 });
  })();
  await freshMillisecond();
  const queued = (function startsQueued() {
    return limiter.run(() => 1, { deadlineMs: 10 });
  })();
  const [late, waited] = await Promise.all([running.catch((e) => e), queued.catch((e) => e)]);
  assert.ok(late instanceof DeadlineError && waited instanceof DeadlineError);
  assert.equal(late.message, "deadline expired: deadlineMs 20 passed while running");
  assert.equal(waited.message, "deadline expired: deadlineMs 10 passed while queued");
  assert.match(frames(late)[0], /^\s+at startsRunning \(/, late.stack);
  assert.match(frames(waited)[0], /^\s+at startsQueued \(/, waited.stack);
  assert.equal(late.stack.split("\n")[0], "DeadlineError: deadline expired: deadlineMs 20 passed while running");
  gate.resolve();
});

test("a queue timeout names queueTimeoutMs and the limit", async () => {
  const limiter = new Limiter({ maxInFlight: 2, maxQueue: 3, queueTimeoutMs: 5 });
  const gate = deferred();
  const holders = [limiter.run(() => gate.promise), limiter.run(() => gate.promise)];
  const error = await limiter.run(() => 1).catch((e) => e);
  assert.equal(error.message, "service overloaded: waited queueTimeoutMs 5 for a slot of limit 2 (maxQueue 3): queue timeout");
  gate.resolve();
  await Promise.all(holders);
});

test("a queue timeout of a call without a deadline has the stack of the call that queued", async () => {
  const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 5 });
  const gate = deferred();
  const holder = limiter.run(() => gate.promise);
  await freshMillisecond();
  const error = await (function queuesWithoutDeadline() {
    return limiter.run(() => 1);
  })().catch((e) => e);
  assert.equal(error.reason, "queue_timeout", String(error));
  assert.equal(error.stack.split("\n")[0], `OverloadedError: ${error.message}`);
  const [first] = frames(error);
  assert.match(first ?? "", /^\s+at queuesWithoutDeadline \(/, error.stack);
  assert.ok(first.includes(HERE), `the caller's file: ${first}`);
  assert.ok(!/wasm:\/\/|edgeshed\.js|glue\.js/.test(error.stack), "no frame inside edgeshed");
  gate.resolve();
  await holder;
});

test("an adaptive limiter's shed names its current limit", async () => {
  const limiter = new Limiter({ adaptive: { algorithm: "aimd", initialLimit: 3, minLimit: 1, maxLimit: 8 } });
  const gate = deferred();
  const holders = [1, 2, 3].map(() => limiter.run(() => gate.promise));
  const error = await limiter.run(() => 1).catch((e) => e);
  assert.equal(error.message, `service overloaded: limit ${limiter.stats().limit} reached, maxQueue 0: shed at once`);
  gate.resolve();
  await Promise.all(holders);
});

test("stack captures are budgeted: a burst of sheds captures at most one stack per millisecond", async () => {
  const limiter = new Limiter({ maxInFlight: 1 });
  const gate = deferred();
  const holder = limiter.run(() => gate.promise);
  await freshMillisecond();
  const start = performance.now();
  const errors = await Promise.all(Array.from({ length: 2000 }, () => limiter.run(() => 1).catch((e) => e)));
  const elapsedMs = performance.now() - start;
  const withStack = errors.filter((e) => e.stack.includes("\n")).length;
  assert.ok(withStack >= 1, "the first shed has its stack");
  assert.ok(withStack <= Math.ceil(elapsedMs) + 1, `${withStack} stacks in ${elapsedMs.toFixed(1)} ms`);
  for (const error of errors) assert.equal(error.message, "service overloaded: limit 1 reached, maxQueue 0: shed at once");
  gate.resolve();
  await holder;
});

test("an un-awaited shed crashes Node.js with the caller's file and line, not a bare { status: 503 }", async () => {
  const dir = join(ROOT, "node_modules", ".cache", "edgeshed-tests");
  mkdirSync(dir, { recursive: true });
  const script = join(dir, "unawaited-shed.mjs");
  writeFileSync(
    script,
    `import { Limiter } from ${JSON.stringify(join(ROOT, "pkg/node.js"))};
const limiter = new Limiter({ maxInFlight: 1 });
limiter.run(() => new Promise(() => {}));
function forgetsToAwait() {
  limiter.run(() => 1);
}
forgetsToAwait();
`,
  );
  const failed = await promisify(execFile)(process.execPath, [script]).then(
    () => assert.fail("the process should crash on the unhandled rejection"),
    (error) => error,
  );
  assert.match(failed.stderr, /OverloadedError: service overloaded: limit 1 reached, maxQueue 0: shed at once/);
  assert.match(failed.stderr, /at forgetsToAwait \(file:\/\/[^)]*unawaited-shed\.mjs:5:11\)/, failed.stderr);
});

test("an un-awaited run that times out in the queue crashes Node.js with the caller's file and line", async () => {
  const dir = join(ROOT, "node_modules", ".cache", "edgeshed-tests");
  mkdirSync(dir, { recursive: true });
  const script = join(dir, "unawaited-queue-timeout.mjs");
  writeFileSync(
    script,
    `import { Limiter } from ${JSON.stringify(join(ROOT, "pkg/node.js"))};
const limiter = new Limiter({ maxInFlight: 1, maxQueue: 1, queueTimeoutMs: 10 });
limiter.run(() => new Promise(() => {}));
function forgetsToAwait() {
  limiter.run(() => 1);
}
forgetsToAwait();
`,
  );
  const failed = await promisify(execFile)(process.execPath, [script]).then(
    () => assert.fail("the process should crash on the unhandled rejection"),
    (error) => error,
  );
  assert.match(failed.stderr, /OverloadedError: service overloaded: waited queueTimeoutMs 10 for a slot of limit 1 \(maxQueue 1\): queue timeout/);
  assert.match(failed.stderr, /at forgetsToAwait \(file:\/\/[^)]*unawaited-queue-timeout\.mjs:5:11\)/, failed.stderr);
});

// Last in this file: the call below throws through the wasm on purpose (a JS
// exception unwinds its frames), which no other test here should share.
test("a run that throws synchronously leaves no stack capture pending for an enclosing call to take", async () => {
  const outer = new Limiter({ maxInFlight: 4 });
  const full = new Limiter({ maxInFlight: 1 });
  const gate = deferred();
  const holder = full.run(() => gate.promise);
  await freshMillisecond();
  // A shed whose rejection cannot be made: its error is queued for the caller's
  // stack, then making the rejected promise (glue.js `rejectAfterAwait`, a
  // `then` whose callback throws the error) throws, and `run` with it,
  // synchronously.
  const then = Promise.prototype.then;
  let pending;
  let thrown;
  const result = outer.run(function enclosingTask() {
    Promise.prototype.then = function (onFulfilled) {
      try {
        onFulfilled();
      } catch (error) {
        pending = error;
      }
      throw new Error("no rejection today");
    };
    try {
      full.run(() => 1);
    } catch (error) {
      thrown = error;
    } finally {
      Promise.prototype.then = then;
    }
    return "outer";
  });
  assert.equal(await result, "outer");
  assert.equal(thrown?.message, "no rejection today", "the inner run threw synchronously");
  assert.ok(pending instanceof OverloadedError, String(pending));
  // Dropped with the call that threw: never given the enclosing run's caller's frames.
  assert.deepEqual(frames(pending), [], pending.stack);
  gate.resolve();
  await holder;
});
