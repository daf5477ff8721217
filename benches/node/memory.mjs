// Case 4 of limiter.bench.mjs: memory per queued waiter, for every peer.

import { readFileSync } from "node:fs";
import { assert, deferred } from "./harness.mjs";

/**
 * Bytes per queued waiter: the JS heap (heapUsed after full GCs) plus, for
 * edgeshed, the growth of the wasm linear memory, divided by WAITERS. Every
 * library holds its one slot with a pending task and WAITERS calls queue
 * behind it; the caller keeps the WAITERS promises (as a real caller would).
 * edgeshed runs on a fresh wasm instance (a second copy of the glue module),
 * so the growth is not hidden by free space left by the speed cases.
 */
export async function memory({ pLimit, pq, ck, tower, towerWasm, WAITERS, QUEUE_TIMEOUT_MS, work }) {
  const bytes = readFileSync(new URL("../../pkg/edgeshed_bg.wasm", import.meta.url));
  const fresh = await import("../../pkg/edgeshed.js?memory-instance");
  const exports = fresh.initSync({ module: bytes });
  const wasmBytes = () => exports.memory.buffer.byteLength;

  const heap = () => {
    gc();
    gc();
    return process.memoryUsage().heapUsed;
  };
  const measure = async (label, start, wasmBytes = () => 0) => {
    const held = deferred();
    const h0 = heap();
    const w0 = wasmBytes();
    const { promises, release } = start(held);
    const h1 = heap();
    const w1 = wasmBytes();
    held.resolve(1);
    release && release();
    const results = await Promise.allSettled(promises);
    assert(results.every((r) => r.status === "fulfilled"), `${label}: every waiter completed`);
    return { label, heap: (h1 - h0) / WAITERS, wasm: (w1 - w0) / WAITERS, total: (h1 - h0 + w1 - w0) / WAITERS };
  };

  const rows = [];
  rows.push(
    await measure("baseline (caller's pending promises only)", (held) => {
      const promises = new Array(WAITERS);
      for (let i = 0; i < WAITERS; i++) promises[i] = (async () => { await held.promise; return work(); })();
      return { promises };
    }),
  );
  rows.push(
    await measure("edgeshed Limiter (fresh wasm instance)", (held) => {
      const l = new fresh.Limiter({ maxInFlight: 1, maxQueue: WAITERS, queueTimeoutMs: QUEUE_TIMEOUT_MS });
      const holder = l.run(() => held.promise);
      const promises = new Array(WAITERS);
      for (let i = 0; i < WAITERS; i++) promises[i] = l.run(work);
      assert(l.stats().queued === WAITERS, "edgeshed: all waiters queued");
      promises.push(holder);
      return { promises };
    }, wasmBytes),
  );
  rows.push(
    await measure("p-limit", (held) => {
      const l = pLimit(1);
      const holder = l(() => held.promise);
      const promises = new Array(WAITERS);
      for (let i = 0; i < WAITERS; i++) promises[i] = l(work);
      promises.push(holder);
      return { promises };
    }),
  );
  if (pq) {
    rows.push(
      await measure("p-queue", (held) => {
        const q = new pq.PQueue({ concurrency: 1 });
        const holder = q.add(() => held.promise);
        const promises = new Array(WAITERS);
        for (let i = 0; i < WAITERS; i++) promises[i] = q.add(work);
        assert(q.size === WAITERS, "p-queue: all waiters queued");
        promises.push(holder);
        return { promises };
      }),
    );
  }
  if (ck) {
    rows.push(
      await measure("cockatiel bulkhead", (held) => {
        const b = ck.bulkhead(1, WAITERS);
        const holder = b.execute(() => held.promise);
        const promises = new Array(WAITERS);
        for (let i = 0; i < WAITERS; i++) promises[i] = b.execute(work);
        assert(b.queueSlots === 0, "cockatiel: all waiters queued");
        promises.push(holder);
        return { promises };
      }),
    );
  }
  if (tower) {
    rows.push(
      await measure("tower ConcurrencyLimit (wasm, fresh instance)", (held) => {
        const l = new tower.TowerLimiter(1, false);
        const holder = l.run(() => held.promise);
        const promises = new Array(WAITERS);
        for (let i = 0; i < WAITERS; i++) promises[i] = l.run(work);
        promises.push(holder);
        return { promises };
      }, () => towerWasm.memory.buffer.byteLength),
    );
  }
  // Second run on the same (now warm) wasm instance: growth is then ~0.
  rows.push(
    await measure("edgeshed Limiter (same instance, 2nd time)", (held) => {
      const l = new fresh.Limiter({ maxInFlight: 1, maxQueue: WAITERS, queueTimeoutMs: QUEUE_TIMEOUT_MS });
      const holder = l.run(() => held.promise);
      const promises = new Array(WAITERS);
      for (let i = 0; i < WAITERS; i++) promises[i] = l.run(work);
      promises.push(holder);
      return { promises };
    }, wasmBytes),
  );

  console.log(`\n## 4. memory per queued waiter (${WAITERS.toLocaleString("en")} waiters behind 1 held slot)`);
  for (const r of rows) {
    console.log(
      `  ${r.label.padEnd(44)} ${r.total.toFixed(0).padStart(6)} B/waiter  (JS heap ${r.heap.toFixed(0)} + wasm memory ${r.wasm.toFixed(0)})`,
    );
  }
  // Every library's row includes the promise each call returns to the caller;
  // the baseline's are async-function promises (a suspended frame each), larger
  // than a library's plain promise, so "net of baseline" can be negative: the
  // totals are what compare like with like.
  const base = rows[0].total;
  console.log("  net of baseline (indicative only, see the comment in memory()):");
  for (const r of rows.slice(1)) {
    r.net = r.total - base;
    console.log(`    ${r.label.padEnd(42)} ${r.net.toFixed(0).padStart(6)} B`);
  }
  return Object.fromEntries(rows.map((r) => [r.label, r]));
}
