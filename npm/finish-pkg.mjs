// Turns wasm-bindgen's `--target web` output (scripts/wasm-build.sh) into the
// edgeshed npm package: writes its package.json (version, description,
// licence and repository from the crates' Cargo.toml), adds one entry per
// environment (Node, workerd, browser), an `exports` map that picks the
// right one, the README and the licence texts, then prints the package's sizes. The error
// classes live in crates/edgeshed-js/src/glue.js, which wasm-bindgen copies under snippets/
// with a hash in its path: `errors.js` re-exports them from there, so that
// rejections are instances of the very classes the entries export.
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const pkg = process.argv[2];
if (!pkg) {
  console.error("usage: node npm/finish-pkg.mjs <wasm-bindgen out dir>");
  process.exit(2);
}

const entries = ["node.js", "workerd.js", "browser.js", "index.d.ts", "errors.d.ts"];
for (const file of entries) copyFileSync(join(here, file), join(pkg, file));

const glueImports = [
  ...new Set(readFileSync(join(pkg, "edgeshed.js"), "utf8").match(/\.\/snippets\/edgeshed-js-[^'"/]+\/src\/glue\.js/g) ?? []),
];
if (glueImports.length !== 1) {
  console.error(`finish-pkg: expected edgeshed.js to import one snippets/edgeshed-js-*/src/glue.js, found ${glueImports.length}`);
  process.exit(1);
}
writeFileSync(
  join(pkg, "errors.js"),
  `// The error classes of the package, and the entries' hook that gives a\n// refusal the caller's stack (made by npm/finish-pkg.mjs).\nexport { OverloadedError, DeadlineError, RateLimitedError, wrapEntryPoints } from "${glueImports[0]}";\n`,
);
entries.push("errors.js");
copyFileSync(join(here, "README.md"), join(pkg, "README.md"));
const licences = ["LICENSE-MIT", "LICENSE-APACHE"];
for (const file of licences) copyFileSync(join(here, "..", file), join(pkg, file));

/** `key = "value"` in the `[section]` of a Cargo.toml (the simple form the workspace uses). */
function cargoField(path, section, key) {
  const text = readFileSync(join(here, "..", path), "utf8");
  const body = text.split(/^\[/m).find((part) => part.startsWith(`${section}]`)) ?? "";
  const value = new RegExp(`^${key} = "([^"]*)"`, "m").exec(body)?.[1];
  if (value === undefined) throw new Error(`finish-pkg: ${path} has no ${key} in [${section}]`);
  return value;
}

const manifestPath = join(pkg, "package.json");
// The crate is edgeshed-js; the package is edgeshed.
const manifest = {
  name: "edgeshed",
  type: "module",
  description: cargoField("crates/edgeshed-js/Cargo.toml", "package", "description"),
  version: cargoField("crates/edgeshed-js/Cargo.toml", "package", "version"),
  license: cargoField("Cargo.toml", "workspace.package", "license"),
  repository: { type: "git", url: cargoField("Cargo.toml", "workspace.package", "repository") },
  files: ["edgeshed_bg.wasm", "edgeshed.js", "edgeshed.d.ts", "snippets", ...entries, "README.md", ...licences],
  sideEffects: ["./snippets/*"],
};
manifest.main = "node.js";
manifest.types = "index.d.ts";
manifest.exports = {
  ".": {
    types: "./index.d.ts",
    workerd: "./workerd.js",
    worker: "./workerd.js",
    browser: "./browser.js",
    node: "./node.js",
    default: "./browser.js",
  },
  "./edgeshed_bg.wasm": "./edgeshed_bg.wasm",
  "./package.json": "./package.json",
};
manifest.engines = { node: ">=20" };
writeFileSync(manifestPath, JSON.stringify(manifest, null, 2) + "\n");

const wasm = readFileSync(join(pkg, "edgeshed_bg.wasm"));
const glue = readFileSync(join(pkg, "edgeshed.js"));
const kib = (n) => (n / 1024).toFixed(1) + " KiB";
console.log(`edgeshed package: ${pkg}`);
console.log(`  edgeshed_bg.wasm  raw ${kib(wasm.length)}  gzip ${kib(gzipSync(wasm, { level: 9 }).length)}`);
console.log(`  edgeshed.js glue  raw ${kib(glue.length)}  gzip ${kib(gzipSync(glue, { level: 9 }).length)}`);
// The size goal, in KiB of gzip. It was 40 while the package had one plain
// limiter (39.0 KiB at cbb410f). Criticality, displacement, codel, the
// fair-share key table, GCRA and the windowed adaptive rules (wave 3) are in
// every Admission and so in the wasm: +9.5 KiB gzip, measured by function
// sizes of the release wasm (ranked queue +6.3 KB raw, two hash tables
// +4.2 KB, windowed rules +2.9 KB, GCRA +1.6 KB, options +2.3 KB). The new
// goal kept about 3 KiB for the JS bindings of those features and no more:
// 52. Wave 4 (per-key fair queueing, the keyless key, the keyed 128-bit key
// hash, top refused keys, reserve lending, codel's standing state, the rate
// table's overflow and recovery heap, fairWeight and the stats table) took
// 51.0 -> 56.4 KiB gzip at 2026-12-03, measured by function sizes of the
// release wasm against f5adbac (+12.3 KB of code before wasm-opt: the
// semaphore's flows, lending and codel +4.4 KB, keys and their hash +1.8 KB,
// top refused keys +1.2 KB, the rate table's heap +1.0 KB, the JS stats
// and options +1.6 KB; a OnceLock for the key secret was replaced by two
// atomics, -0.3 KiB gzip). Issue #32 keeps the goal of 52 KiB open; this
// bound holds the line until then. Then, measured with this script: on
// 2026-12-03 maxQueueWait "auto" (the completion rate model and its
// option) took it to 57.2; on 2026-12-04 reserve sightings without the
// lock, the warm start and drains that see drops (57.3 -> 57.9), fetch
// sampled to its body's end (58.5), and onIdle/clearQueue/close (+0.8 on
// their own branch: +1.8 KB of code before wasm-opt, the waiters' wakers
// that clearQueue wakes, every permit a lease that tells the lifecycle
// when it is back, three exports): 60; on 2026-12-04 the fast start of
// `run` (crates/edgeshed-js/src/call/free.rs, two exports and the core's try_admit_keyed: a
// call admitted at once costs half the time) took it to 60.4, and a queued
// call's smaller future (QueuedRun) and stats' `lent` to 61.0: 62, until
// issue #32 trims it (the largest functions: Admit::start 7.4 KB of code,
// limiter_new's shim 6.1 KB, dlmalloc 4.8 KB; core::fmt for the errors'
// messages about 3 KB).
const goalKiB = 62;
const gz = gzipSync(wasm, { level: 9 }).length;
console.log(`  size goal: wasm gzip <= ${goalKiB} KiB: ${gz <= goalKiB * 1024 ? "met" : "MISSED"} (${kib(gz)})`);
