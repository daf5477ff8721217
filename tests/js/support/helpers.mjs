// Small, deterministic test helpers shared by the JS suites.
import { createServer } from "node:http";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./link-package.mjs";

/** A promise with its resolve/reject exposed. */
export function deferred() {
  let resolve, reject;
  const promise = new Promise((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
}

/** Settles `promise` into `{ ok, value }` / `{ ok: false, error }` without throwing. */
export function settle(promise) {
  return promise.then(
    (value) => ({ ok: true, value }),
    (error) => ({ ok: false, error }),
  );
}

/** True once `promise` has settled, checked after one macrotask turn. */
export async function isSettled(promise) {
  const marker = Symbol("pending");
  // setImmediate runs after every pending microtask (promise reaction) of this turn.
  const probe = new Promise((resolve) => setImmediate(resolve, marker));
  return (await Promise.race([promise.then(() => true, () => true), probe])) !== marker;
}

/**
 * An HTTP server on 127.0.0.1 (port 0) that hands every request to the test:
 * `await origin.next()` (or `next("/path")`) resolves with `{ req, res, url }`
 * in arrival order, and the test decides when and how to answer.
 */
export async function startOrigin() {
  const arrived = [];
  const waiting = [];
  const sockets = new Set();
  const server = createServer((req, res) => {
    const entry = { req, res, url: new URL(req.url, "http://origin") };
    const index = waiting.findIndex((w) => w.matches(entry));
    if (index >= 0) waiting.splice(index, 1)[0].resolve(entry);
    else arrived.push(entry);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    /** The next request (optionally: whose pathname is `path`), waiting for it if needed. */
    next(path) {
      const matches = (entry) => path === undefined || entry.url.pathname === path;
      const index = arrived.findIndex(matches);
      if (index >= 0) return Promise.resolve(arrived.splice(index, 1)[0]);
      const d = deferred();
      waiting.push({ matches, resolve: d.resolve });
      return d.promise;
    },
    /** Requests that arrived and were not taken by `next` yet. */
    pending: () => arrived.map((entry) => entry.url.pathname + entry.url.search),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Resolves when `res` (a node ServerResponse) has closed, i.e. the client went away or it ended. */
export function closed(res) {
  return res.closed ? Promise.resolve() : new Promise((resolve) => res.once("close", resolve));
}

/** The documents whose snippets the tests run: the README's first example, the JS reference's set-ups. */
const SNIPPET_FILES = ["README.md", "docs/js.md"];

/**
 * The fenced code block that follows `<!-- snippet: NAME -->` in README.md or
 * docs/js.md (exactly one of them), and the optional block that follows
 * `<!-- output: NAME -->` in the same file.
 */
export function readmeSnippet(name) {
  const marker = `<!-- snippet: ${name} -->`;
  const files = SNIPPET_FILES.filter((file) => readFileSync(join(ROOT, file), "utf8").includes(marker));
  if (files.length !== 1) throw new Error(`${marker} must be in exactly one of ${SNIPPET_FILES.join(", ")}; found in ${files.length}`);
  const [file] = files;
  const text = readFileSync(join(ROOT, file), "utf8");
  const block = (at) => {
    if (at < 0) return undefined;
    const match = /^\s*```[^\n]*\n([\s\S]*?)\n```/.exec(text.slice(at));
    if (!match) throw new Error(`${file}: no fenced block after ${text.slice(at, at + 40)}`);
    return match[1] + "\n";
  };
  const outputMarker = `<!-- output: ${name} -->`;
  const output = text.indexOf(outputMarker);
  return {
    code: block(text.indexOf(marker) + marker.length),
    output: output < 0 ? undefined : block(output + outputMarker.length),
    file,
  };
}

/**
 * Polls `condition` (every 5 ms) until it holds; rejects after `limitMs`.
 * Only for what no event announces (garbage collection, a library timer).
 */
export async function until(condition, limitMs, what = "condition") {
  const start = performance.now();
  while (!condition()) {
    if (performance.now() - start > limitMs) throw new Error(`${what}: not reached within ${limitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  return performance.now() - start;
}

/**
 * Records the host timers armed with `delay` ms through the global
 * `setTimeout`, and which of them were cleared, until `restore()`.
 */
export function spyTimers(delay) {
  const { setTimeout: set, clearTimeout: clear } = globalThis;
  const armed = new Set();
  globalThis.setTimeout = (callback, ms, ...args) => {
    const timer = set(callback, ms, ...args);
    if (ms === delay) armed.add(timer);
    return timer;
  };
  globalThis.clearTimeout = (timer) => {
    armed.delete(timer);
    return clear(timer);
  };
  return {
    /** Timers armed with `delay` and not cleared yet. */
    live: () => armed.size,
    restore() {
      globalThis.setTimeout = set;
      globalThis.clearTimeout = clear;
    },
  };
}
