// Runs every benchmark of BENCHMARKS.md, one after the other, each printing
// its figures and ratios:
//
//   node benches/run-all.mjs            # full (~6 min on 2 cores, plus the native build)
//   node benches/run-all.mjs --quick    # smoke run of each (~2.5 min)
//   node benches/run-all.mjs --skip native,e2e,cpu     # leave some out
//   node benches/run-all.mjs --build    # rebuild pkg/ and dist/worker/ first
//   node benches/run-all.mjs --before REF   # also REF's build beside this one (Node, workerd CPU)
//
//   1. native core      cargo bench --bench core            (benches/core/)
//   2. Node.js          node --expose-gc benches/node/limiter.bench.mjs
//   2b. Node.js fetch   node --expose-gc benches/node/fetch.mjs
//   2c. call options    node --expose-gc benches/node/criticality.mjs
//   2d. rate check      node --expose-gc benches/node/rate.mjs
//   3. size/start-up    node benches/size.mjs
//   4. workerd e2e      node benches/e2e/run.mjs
//   5. workerd CPU      node benches/e2e/cpu.mjs
//   6. workerd fleet    node benches/e2e/fleet.mjs  (3 isolates; fleet budget)
//
// pkg/, dist/worker/ and the tower-on-wasm peer (benches/tower-wasm/pkg/)
// are built (scripts/build-pkg.sh, build-worker.sh, benches/tower-wasm/build.sh)
// when missing or with --build; --skip tower leaves the peer out. The native bench builds into
// $CARGO_TARGET_DIR (default /tmp/target-bench). Every bench also writes its
// figures as JSON into one directory (printed at the end).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, symlinkSync } from "node:fs";
import { tmpdir, loadavg, cpus } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const QUICK = args.includes("--quick");
const SKIP = new Set(args.includes("--skip") ? args[args.indexOf("--skip") + 1].split(",") : []);
const env = {
  ...process.env,
  PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.HOME}/.cargo/bin:${process.env.PATH}`,
  CARGO_TARGET_DIR: process.env.CARGO_TARGET_DIR ?? "/tmp/target-bench",
};
const out = mkdtempSync(join(tmpdir(), "edgeshed-bench-results-"));

function run(what, command, argv) {
  console.log(`\n=== ${what}: ${command} ${argv.join(" ")}   (load average ${loadavg().map((x) => x.toFixed(2)).join(", ")})\n`);
  const t0 = Date.now();
  const r = spawnSync(command, argv, { cwd: ROOT, env, stdio: "inherit" });
  const seconds = ((Date.now() - t0) / 1000).toFixed(0);
  if (r.status !== 0) {
    console.error(`=== ${what} failed (exit ${r.status ?? r.signal}) after ${seconds} s`);
    process.exitCode = 1;
  } else console.log(`\n=== ${what}: done in ${seconds} s`);
}

console.log(
  `edgeshed benchmarks — ${new Date().toISOString()}, ${cpus().length} CPUs (${cpus()[0]?.model}), node ${process.version}, ` +
    `git ${spawnSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).stdout.trim()}`,
);
if (args.includes("--build") || !existsSync(join(ROOT, "pkg/edgeshed_bg.wasm"))) run("build npm package", "bash", ["scripts/build-pkg.sh"]);
if (args.includes("--build") || !existsSync(join(ROOT, "dist/worker/edgeshed_bg.wasm"))) run("build worker", "bash", ["scripts/build-worker.sh"]);
if (!SKIP.has("tower") && (args.includes("--build") || !existsSync(join(ROOT, "benches/tower-wasm/pkg/tower_bg.wasm")))) {
  run("build the tower-on-wasm peer", "bash", ["benches/tower-wasm/build.sh"]);
}

// --before REF: a checkout of REF (a git worktree under target/bench-before/)
// with its own pkg/ and dist/worker/, measured in the same rounds as this
// build by the Node bench and the workerd CPU bench.
let before = [];
if (args.includes("--before")) {
  const ref = args[args.indexOf("--before") + 1];
  const sha = spawnSync("git", ["rev-parse", "--short", ref], { cwd: ROOT, encoding: "utf8" }).stdout.trim();
  if (!sha) throw new Error(`--before ${ref}: not a commit of this repository`);
  const dir = join(ROOT, "target/bench-before", sha);
  if (!existsSync(dir)) run(`check out ${ref} (${sha})`, "git", ["worktree", "add", "--detach", dir, sha]);
  if (!existsSync(join(dir, "node_modules"))) symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  const inBefore = (what, script) => run(`${what} of ${sha}`, "bash", ["-c", `cd ${JSON.stringify(dir)} && bash ${script}`]);
  if (!existsSync(join(dir, "pkg/edgeshed_bg.wasm"))) inBefore("build npm package", "scripts/build-pkg.sh");
  if (!existsSync(join(dir, "dist/worker/edgeshed_bg.wasm"))) inBefore("build worker", "scripts/build-worker.sh");
  before = ["--before", dir];
}

const quick = QUICK ? ["--quick"] : [];
if (!SKIP.has("native")) run("1. native core (edgeshed vs tower)", "cargo", ["bench", "--bench", "core", "--", ...quick]);
if (!SKIP.has("node")) {
  // Every peer the Node bench measures (p-queue and cockatiel only when
  // installed, see benches/node/peers.mjs; tower-on-wasm when built).
  run("2. Node.js: Limiter vs p-limit, p-queue, cockatiel bulkhead, tower-on-wasm", process.execPath, ["--expose-gc", "benches/node/limiter.bench.mjs", ...quick, ...before, "--json", join(out, "node.json")]);
}
if (!SKIP.has("fetch")) {
  run("2b. Node.js: Limiter.fetch vs fetch (undici)", process.execPath, ["--expose-gc", "benches/node/fetch.mjs", ...quick, ...before, "--json", join(out, "node-fetch.json")]);
}
if (!SKIP.has("node")) {
  run("2c. Node.js: call options ({ criticality }, { criticality, key }) vs a plain run", process.execPath, ["--expose-gc", "benches/node/criticality.mjs", ...quick, "--json", join(out, "node-criticality.json")]);
  run("2d. Node.js: the rate check", process.execPath, ["--expose-gc", "benches/node/rate.mjs", ...quick, "--json", join(out, "node-rate.json")]);
}
if (!SKIP.has("size")) run("3. size and start-up", process.execPath, ["benches/size.mjs", ...quick, "--json", join(out, "size.json")]);
if (!SKIP.has("e2e")) run("4. end to end on workerd", process.execPath, ["benches/e2e/run.mjs", ...quick, "--json", join(out, "e2e.json")]);
if (!SKIP.has("cpu")) run("5. workerd CPU per response", process.execPath, ["benches/e2e/cpu.mjs", ...quick, ...before, "--json", join(out, "cpu.json")]);
if (!SKIP.has("fleet")) run("6. a fleet of 3 isolates on workerd (per-isolate limits vs the fleet budget)", process.execPath, ["benches/e2e/fleet.mjs", ...quick, "--json", join(out, "fleet.json")]);
console.log(`\nJSON figures: ${out}   (load average now ${loadavg().map((x) => x.toFixed(2)).join(", ")})`);
