// The cost of `Limiter.fetch` (pkg/node.js) over a plain `fetch`, reading
// the body to its end: the permit travels with the body through edgeshed-wasm's
// body primitive (outside workerd's own streams, a stream that pulls one chunk of the origin's body per read) until the last
// chunk is read. Peers: Node's own `fetch` (undici), and with --before an
// older build's Limiter in the same rounds. The origin is a node:http server
// on 127.0.0.1 in a child process, so only the client's work is on the
// measured thread (benches/node/fetch-origin.mjs). Harness: harness.mjs (on-CPU ns/op of the main thread,
// rotated rounds; ratios are medians of per-round ratios).
//
//   node --expose-gc benches/node/fetch.mjs                 # ~20 s
//   node --expose-gc benches/node/fetch.mjs --quick         # smoke (~4 s)
//   node --expose-gc benches/node/fetch.mjs --before DIR    # also DIR/pkg (run-all.mjs --before REF makes one)
//   node --expose-gc benches/node/fetch.mjs --json out.json
import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import { Limiter } from "../../pkg/node.js";
import { assert, makeGroup, median } from "./harness.mjs";
import { loadBefore } from "./peers.mjs";

const args = process.argv.slice(2);
const opt = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : null);
const QUICK = args.includes("--quick");
const Before = await loadBefore(opt("--before"));
const group = makeGroup({ rounds: QUICK ? 3 : 7 });
const SEQUENTIAL = QUICK ? 200 : 1_000;
const CONCURRENT = 16;
const BATCHES = QUICK ? 20 : 100;
// Bodies: one chunk (1 KiB) and several (256 KiB: undici delivers it in 16-64 KiB chunks).
const SIZES = { small: 1024, large: 256 * 1024 };

const server = fork(new URL("./fetch-origin.mjs", import.meta.url).pathname, { stdio: ["ignore", "inherit", "inherit", "ipc"] });
const port = await new Promise((resolve) => server.once("message", resolve));
const url = (size) => `http://127.0.0.1:${port}/${size}`;

const editions = [
  ["fetch (undici)", () => (input) => fetch(input)],
  ["edgeshed Limiter.fetch", () => limiterFetch(Limiter)],
  ...(Before ? [["edgeshed before Limiter.fetch", () => limiterFetch(Before)]] : []),
];
function limiterFetch(L) {
  const limiter = new L({ maxInFlight: 8, maxQueue: 1_000, queueTimeoutMs: 60_000 });
  const call = (input) => limiter.fetch(input);
  call.limiter = limiter;
  return call;
}
/** Reads `response` to the end; its length. */
const drain = async (response) => (await response.arrayBuffer()).byteLength;

const results = {};
for (const [name, size] of Object.entries(SIZES)) {
  const check = (ops) => (total, call) => {
    assert(total === ops * size, `${name}: every body read whole (${total} of ${ops * size} bytes)`);
    if (call.limiter) assert(call.limiter.stats().inFlight === 0, `${name}: every permit came back`);
  };
  results[`${name}, one at a time`] = await group(
    `${name} body (${size} B), one fetch at a time, read to the end`,
    editions.map(([label, make]) => ({
      label,
      ops: SEQUENTIAL,
      setup: make,
      run: async (call) => {
        let total = 0;
        for (let i = 0; i < SEQUENTIAL; i++) total += await drain(await call(url(size)));
        return total;
      },
      check: check(SEQUENTIAL),
    })),
  );
  results[`${name}, ${CONCURRENT} at once`] = await group(
    `${name} body (${size} B), ${CONCURRENT} fetches at once (limit 8: half of them queue), read to the end`,
    editions.map(([label, make]) => ({
      label,
      ops: CONCURRENT * BATCHES,
      setup: make,
      run: async (call) => {
        let total = 0;
        for (let b = 0; b < BATCHES; b++) {
          const sizes = await Promise.all(Array.from({ length: CONCURRENT }, async () => drain(await call(url(size)))));
          total += sizes.reduce((a, n) => a + n, 0);
        }
        return total;
      },
      check: check(CONCURRENT * BATCHES),
    })),
  );
}
server.kill();

// Issue 32: at most 1.10 × a plain fetch's on-CPU time, the permit still held until the body is read.
const GOAL = 1.1;
const ratio = (out, a, b) => (out[a] && out[b] ? median(out[a].rounds.map((x, i) => x / out[b].rounds[i])) : NaN);
const summary = {};
console.log("\n## per fetch, median of per-round ratios");
for (const [path, out] of Object.entries(results)) {
  const overPlain = ratio(out, "edgeshed Limiter.fetch", "fetch (undici)");
  const overBefore = ratio(out, "edgeshed Limiter.fetch", "edgeshed before Limiter.fetch");
  summary[path] = { overPlain, overBefore: Before ? overBefore : null, goal: GOAL };
  console.log(
    `  ${path.padEnd(22)} edgeshed / fetch ${overPlain.toFixed(2)} (goal ≤ ${GOAL}: ${overPlain <= GOAL ? "met ✓" : "missed ✗"})` +
      (Before ? `   edgeshed / before ${overBefore.toFixed(2)}` : ""),
  );
}
const json = opt("--json");
if (json) writeFileSync(json, JSON.stringify({ results, summary }, null, 2));
