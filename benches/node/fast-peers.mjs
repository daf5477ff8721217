// The fastest JavaScript queues, the bar issue 32 sets for `Limiter.run`:
// @henrygd/queue 1.2, fastq 1.20 (its promise API) and async-sema 3.1, each
// behind one shape so that limiter.bench.mjs runs them through the same cases
// as edgeshed:
//
//   const q = peer.make(limit);  q.run(fn) -> promise of fn's result
//   q.shed(fn)                   refuses at once (a rejected promise with an
//                                overloaded error) when `limit` calls are
//                                running or queued, else q.run(fn)
//
// None of them sheds by itself, so the shed path is the check a user writes
// (async-sema's tryAcquire is that check). Loaded as peers.mjs loads p-queue:
// from the project's node_modules (package.json devDependencies), else from
// BENCH_PEERS; a peer found in neither is left out.

import { loadPeer, overloadedError } from "./peers.mjs";

const henrygd = await loadPeer("@henrygd/queue");
const fastq = await loadPeer("fastq");
const sema = await loadPeer("async-sema");

const refuse = () => Promise.reject(overloadedError());

/** `[{ name, version, make }]`: the fast peers that are installed. */
export const FAST_PEERS = [
  henrygd && {
    name: "@henrygd/queue",
    version: henrygd.version,
    make(limit) {
      const q = (henrygd.mod.newQueue ?? henrygd.mod.default.newQueue)(limit);
      // Its add() calls .then on what fn returns: fn must return a promise.
      const run = (fn) => q.add(fn);
      return { run, shed: (fn) => (q.size() >= limit ? refuse() : run(fn)) };
    },
  },
  fastq && {
    name: "fastq",
    version: fastq.version,
    make(limit) {
      const q = (fastq.mod.default ?? fastq.mod).promise((fn) => fn(), limit);
      const run = (fn) => q.push(fn);
      return { run, shed: (fn) => (q.running() + q.length() >= limit ? refuse() : run(fn)) };
    },
  },
  sema && {
    name: "async-sema",
    version: sema.version,
    make(limit) {
      const s = new (sema.mod.Sema ?? sema.mod.default.Sema)(limit);
      const release = () => s.release();
      const run = async (fn) => {
        await s.acquire();
        try {
          return await fn();
        } finally {
          release();
        }
      };
      const held = async (fn) => {
        try {
          return await fn();
        } finally {
          release();
        }
      };
      // tryAcquire() is async-sema's own refusal: undefined when no token is free.
      const shed = (fn) => (s.tryAcquire() === undefined ? refuse() : held(fn));
      return { run, shed };
    },
  },
].filter(Boolean);
