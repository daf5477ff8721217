// The npm peers of limiter.bench.mjs beyond p-limit: p-queue 9 (per-task
// timeout and AbortSignal, the feature-equivalent peer) and cockatiel's
// bulkhead (a bounded queue that rejects when full, the natural shed peer).
//
// Each is loaded from the project's node_modules when installed there
// (exact devDependencies in package.json), else from the directory named by
// BENCH_PEERS (`npm install --no-save --prefix $BENCH_PEERS p-queue@9.3.5
// cockatiel@3.2.1`); a peer that is found in neither is skipped.

import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const roots = [createRequire(import.meta.url)];
if (process.env.BENCH_PEERS) roots.push(createRequire(join(resolve(process.env.BENCH_PEERS), "peers.js")));

/** The entry file and version of `name`, or null when not installed. */
function locate(name) {
  for (const r of roots) {
    let file;
    try {
      file = r.resolve(name);
    } catch {
      continue;
    }
    // The package's directory: the last `node_modules/<name>` on the path.
    const marker = `node_modules/${name}/`;
    const dir = file.slice(0, file.lastIndexOf(marker) + marker.length);
    const version = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")).version;
    return { file, version, dir: dirname(file) };
  }
  return null;
}

/** `{ mod, version }` of the peer package `name`, or null when not installed. */
export async function loadPeer(name) {
  const found = locate(name);
  if (!found) return null;
  const mod = await import(pathToFileURL(found.file).href);
  return { mod, version: found.version };
}

/** `{ PQueue, version }` or null. */
export async function loadPQueue() {
  const p = await loadPeer("p-queue");
  return p && { PQueue: p.mod.default, version: p.version };
}

/** `{ bulkhead, BulkheadRejectedError, version }` or null (the CommonJS build: its ESM build has extensionless imports). */
export async function loadCockatiel() {
  const c = await loadPeer("cockatiel");
  if (!c) return null;
  const m = c.mod.bulkhead ? c.mod : c.mod.default;
  return { bulkhead: m.bulkhead, BulkheadRejectedError: m.BulkheadRejectedError, version: c.version };
}

/** The error a user-side shed check rejects with: the same `name`/`status` as edgeshed's. */
export function overloadedError() {
  const error = new Error("service overloaded");
  error.name = "OverloadedError";
  error.status = 503;
  return error;
}

/**
 * A call that sheds when `busy()` (running + queued) has reached `max`, else
 * runs `fn` through `submit`: the usual pattern for limiters without a shed
 * policy (p-limit, p-queue).
 */
export const shedWhen = (busy, max, submit) => (fn) => (busy() >= max ? Promise.reject(overloadedError()) : submit(fn));

/**
 * The `Limiter` of an older build's npm package (`dir/pkg/node.js`, or
 * `dir/node.js`), or null without a `dir`.
 */
export async function loadBefore(dir) {
  if (!dir) return null;
  const pkg = existsSync(join(dir, "pkg/node.js")) ? join(dir, "pkg") : dir;
  return (await import(pathToFileURL(join(resolve(pkg), "node.js")).href)).Limiter;
}
