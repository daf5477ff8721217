// Size and start-up of the two wasm artefacts: the edge worker's
// (dist/worker/) and the npm package's (pkg/).
//
//   node benches/size.mjs            # full: 9 cold starts per case
//   node benches/size.mjs --quick    # 3 per case
//   node benches/size.mjs --json out.json
//
// - sizes: raw and gzip -9 (zlib level 9) of each .wasm and its JS glue;
// - Node.js: WebAssembly.compile + initSync (instantiate + wasm-bindgen
//   start), each in a fresh child process (V8 caches compiled modules per
//   process, so only the first compile in a process is a cold one);
// - workerd: Miniflare cold start (new Miniflare → ready, then the first
//   request) of the edgeshed worker and of a worker that uses the npm
//   package, against a trivial JS worker; the difference is what the wasm
//   costs (workerd's clocks stand still inside a request, so the module's
//   instantiation cannot be timed from inside).
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync, existsSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { join } from "node:path";
import { ROOT, startWorkerd, median } from "./support/workerd.mjs";

const args = process.argv.slice(2);
const QUICK = args.includes("--quick");
const JSON_OUT = args.includes("--json") ? args[args.indexOf("--json") + 1] : null;
const RUNS = QUICK ? 3 : 9;
const KiB = (n) => (n / 1024).toFixed(1);

const artefacts = {
  // The goals the test command holds them to: scripts/test.sh (worker suite) and npm/finish-pkg.mjs.
  worker: { dir: "dist/worker", glue: ["edgeshed.js", "snippets"], entry: "worker/index.mjs", goalGzipKiB: 256 },
  package: { dir: "pkg", glue: ["edgeshed.js", "snippets", "node.js", "workerd.js", "browser.js"], goalGzipKiB: 52 },
};
for (const [name, a] of Object.entries(artefacts)) {
  if (!existsSync(join(ROOT, a.dir, "edgeshed_bg.wasm"))) {
    console.error(`${a.dir}/edgeshed_bg.wasm is missing: run ./scripts/build-${name === "worker" ? "worker" : "pkg"}.sh`);
    process.exit(2);
  }
}

/** Every file under `path` (a file or a directory). */
function files(path) {
  const out = execFileSync("find", [path, "-type", "f", "-name", "*.js"], { encoding: "utf8" }).trim();
  return out ? out.split("\n") : [];
}

const results = { sizes: {}, node: {}, workerd: {} };
console.log(`## Sizes (gzip -9)`);
for (const [name, a] of Object.entries(artefacts)) {
  const wasm = readFileSync(join(ROOT, a.dir, "edgeshed_bg.wasm"));
  const glueFiles = a.glue.flatMap((g) => files(join(ROOT, a.dir, g)));
  if (a.entry) glueFiles.push(join(ROOT, a.entry));
  const glue = Buffer.concat(glueFiles.map((f) => readFileSync(f)));
  const r = {
    wasmRaw: wasm.length,
    wasmGzip: gzipSync(wasm, { level: 9 }).length,
    glueRaw: glue.length,
    glueGzip: gzipSync(glue, { level: 9 }).length,
    glueFiles: glueFiles.map((f) => f.slice(ROOT.length + 1)),
  };
  r.goal = r.wasmGzip <= a.goalGzipKiB * 1024;
  r.goalKiB = a.goalGzipKiB;
  results.sizes[name] = r;
  console.log(
    `  ${name.padEnd(8)} wasm ${KiB(r.wasmRaw)} KiB raw, ${KiB(r.wasmGzip)} KiB gzip (goal ≤ ${a.goalGzipKiB} KiB ${r.goal ? "✓" : "✗"});` +
      ` JS glue ${KiB(r.glueRaw)} KiB raw, ${KiB(r.glueGzip)} KiB gzip (${r.glueFiles.length} files)`,
  );
}

// ------------------------------------------------------------ Node.js ---

const child = (dir) => `
  import { readFileSync } from "node:fs";
  const bytes = readFileSync(${JSON.stringify(join(ROOT, dir, "edgeshed_bg.wasm"))});
  const glue = await import(${JSON.stringify("file://" + join(ROOT, dir, "edgeshed.js"))});
  const t0 = performance.now();
  const module = await WebAssembly.compile(bytes);
  const t1 = performance.now();
  glue.initSync({ module });
  const t2 = performance.now();
  console.log(JSON.stringify({ compile: t1 - t0, instantiate: t2 - t1 }));
`;
console.log(`\n## Node.js ${process.version}: WebAssembly.compile + initSync, fresh process each (median of ${RUNS}, ms)`);
for (const [name, a] of Object.entries(artefacts)) {
  const runs = [];
  for (let i = 0; i < RUNS; i++) {
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", child(a.dir)], { encoding: "utf8" });
    runs.push(JSON.parse(out.trim().split("\n").pop()));
  }
  const r = {
    compile: median(runs.map((x) => x.compile)),
    instantiate: median(runs.map((x) => x.instantiate)),
    total: median(runs.map((x) => x.compile + x.instantiate)),
  };
  results.node[name] = r;
  console.log(
    `  ${name.padEnd(8)} compile ${r.compile.toFixed(2)}  instantiate ${r.instantiate.toFixed(2)}  total ${r.total.toFixed(2)}`,
  );
}

// ------------------------------------------------------------ workerd ---

const cases = {
  "trivial JS worker": {
    script: `export default { fetch() { return new Response("ok"); } };`,
    path: "/",
  },
  "edgeshed worker": {
    scriptPath: join(ROOT, "worker/index.mjs"),
    bindings: {
      EDGESHED: { statsPublic: true, origins: { a: { url: "http://127.0.0.1:9" } }, routes: [{ prefix: "/p/", origin: "a" }] },
    },
    path: "/__edgeshed/stats",
  },
  "npm package (pkg/workerd.js)": {
    script: `import { Limiter } from "./pkg/workerd.js";
      const limiter = new Limiter({ maxInFlight: 6 });
      export default { fetch() { return Response.json(limiter.stats()); } };`,
    path: "/",
  },
};
console.log(`\n## workerd (Miniflare): cold start, median of ${RUNS} (ms)`);
const samples = Object.fromEntries(Object.keys(cases).map((k) => [k, { ready: [], first: [], total: [] }]));
for (let i = 0; i < RUNS; i++) {
  const names = Object.keys(cases);
  for (let k = 0; k < names.length; k++) {
    const name = names[(k + i) % names.length];
    const c = cases[name];
    const t0 = performance.now();
    const w = await startWorkerd(c);
    const t1 = performance.now();
    const response = await fetch(new URL(c.path, w.url));
    await response.text();
    const t2 = performance.now();
    if (response.status !== 200) throw new Error(`${name}: first request answered ${response.status}`);
    await w.mf.dispose();
    samples[name].ready.push(t1 - t0);
    samples[name].first.push(t2 - t1);
    samples[name].total.push(t2 - t0);
  }
}
const base = median(samples["trivial JS worker"].total);
for (const [name, s] of Object.entries(samples)) {
  const r = { ready: median(s.ready), first: median(s.first), total: median(s.total) };
  r.overTrivial = r.total - base;
  results.workerd[name] = r;
  console.log(
    `  ${name.padEnd(30)} start→ready ${r.ready.toFixed(1).padStart(6)}  first request ${r.first.toFixed(1).padStart(6)}  total ${r.total.toFixed(1).padStart(6)}` +
      (name === "trivial JS worker" ? "" : `  (+${r.overTrivial.toFixed(1)} over trivial)`),
  );
}
if (JSON_OUT) writeFileSync(JSON_OUT, JSON.stringify(results, null, 2));
