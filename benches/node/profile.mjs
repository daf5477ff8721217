// One case of limiter.bench.mjs in a loop, for a CPU profile of where the
// time goes (not part of run-all):
//
//   node --cpu-prof --cpu-prof-dir=/tmp/prof --cpu-prof-interval 50 \
//     benches/node/profile.mjs <uncontended|contended|shed> [edgeshed|p-limit] [pkg dir]
//   node benches/node/profile-summary.mjs /tmp/prof/*.cpuprofile
//
// [pkg dir] defaults to pkg/; a build with a wasm name section (e.g.
// `wasm-pack build --profiling --target web --out-dir /tmp/pkg-prof`)
// shows Rust function names in the profile instead of wasm-function[N].
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import pLimit from "p-limit";

const [which = "uncontended", lib = "edgeshed", pkgDir = new URL("../../pkg/", import.meta.url).pathname] = process.argv.slice(2);
const glue = await import(pathToFileURL(resolve(pkgDir, "edgeshed.js")).href);
glue.initSync({ module: readFileSync(resolve(pkgDir, "edgeshed_bg.wasm")) });
const { Limiter } = glue;

const RESOLVED = Promise.resolve(1);
const work = process.env.PLAIN ? () => 1 : () => RESOLVED;
const task = async () => {
  await null;
  return 1;
};
const start = Date.now();
let ops = 0;
if (which === "uncontended") {
  const call = lib === "edgeshed" ? ((l) => () => l.run(work))(new Limiter({ maxInFlight: 1_000_000 })) : ((l) => () => l(work))(pLimit(1_000_000));
  while (Date.now() - start < 3000) for (let i = 0; i < 10_000; i++, ops++) await call();
} else if (which === "contended") {
  const call =
    lib === "edgeshed"
      ? ((l) => () => l.run(task))(new Limiter({ maxInFlight: 8, maxQueue: 10_000, queueTimeoutMs: 600_000 }))
      : ((l) => () => l(task))(pLimit(8));
  while (Date.now() - start < 3000) {
    await Promise.all(Array.from({ length: 10_000 }, call));
    ops += 10_000;
  }
} else if (which === "shed") {
  const l = new Limiter({ maxInFlight: 1 });
  l.run(() => new Promise(() => {}));
  while (Date.now() - start < 3000) {
    for (let i = 0; i < 10_000; i++, ops++) await l.run(work).catch(() => 0);
  }
} else throw new Error(`unknown case ${which}`);
console.log(`${which} ${lib}: ${ops} ops, ${((1e6 * (Date.now() - start)) / ops).toFixed(0)} ns/op wall`);
