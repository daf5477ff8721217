// The npm package as `npm pack` makes it from pkg/ (scripts/build-pkg.sh):
// its types, README and licence are in, nothing stray is, every entry its
// manifest names ships, and the packed tarball installs into a new project
// the way the README says (until the package is published).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..", "..");
const PKG = join(ROOT, "pkg");
const run = promisify(execFile);

/** What `npm pack --dry-run --json` would put in the tarball. */
async function packed() {
  const { stdout } = await run("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: PKG });
  const [report] = JSON.parse(stdout);
  return report;
}

test("npm pack: exactly the package's files, with its types, README and licence texts", async () => {
  const report = await packed();
  const files = report.files.map((f) => f.path).sort();
  const snippets = files.filter((f) => f.startsWith("snippets/"));
  const rest = files.filter((f) => !f.startsWith("snippets/"));
  assert.deepEqual(rest, [
    "LICENSE-APACHE",
    "LICENSE-MIT",
    "README.md",
    "browser.js",
    "edgeshed.d.ts",
    "edgeshed.js",
    "edgeshed_bg.wasm",
    "errors.d.ts",
    "errors.js",
    "index.d.ts",
    "node.js",
    "package.json",
    "workerd.js",
  ]);
  // wasm-bindgen's copies of the crates' JS glue (the options' data,
  // options-schema.js, among them), and nothing else under snippets/.
  assert.ok(snippets.length > 0);
  for (const file of snippets) assert.match(file, /^snippets\/edgeshed-(js|wasm)-[0-9a-f]{16}\/src\/[a-z]+(-[a-z]+)?\.js$/);
  assert.ok(snippets.some((file) => file.endsWith("/src/options-schema.js")), "the options' data is packed");

  const manifest = JSON.parse(readFileSync(join(PKG, "package.json"), "utf8"));
  assert.equal(report.name, "edgeshed");
  assert.equal(manifest.license, "MIT OR Apache-2.0");
  const cargo = readFileSync(join(ROOT, "crates/edgeshed-js/Cargo.toml"), "utf8");
  assert.equal(manifest.version, /^version = "([^"]+)"/m.exec(cargo)[1], "the package's version is the crate's");
  assert.equal(manifest.types, "index.d.ts");
  // Every file the manifest points at ships.
  const targets = [manifest.main, manifest.types, ...Object.values(manifest.exports["."]), manifest.exports["./edgeshed_bg.wasm"]];
  for (const target of targets) assert.ok(files.includes(target.replace(/^\.\//, "")), `${target} is packed`);
  assert.equal(readFileSync(join(PKG, "README.md"), "utf8"), readFileSync(join(ROOT, "npm/README.md"), "utf8"));
  assert.match(readFileSync(join(PKG, "LICENSE-MIT"), "utf8"), /Permission is hereby granted/);
  assert.match(readFileSync(join(PKG, "LICENSE-APACHE"), "utf8"), /Apache License\s+Version 2\.0/);
  assert.ok(report.unpackedSize < 400 * 1024, `unpacked ${report.unpackedSize} B`);
});

test("the packed tarball installs into a new project and works there (the README's way, before publishing)", { timeout: 120_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "edgeshed-npm-user-"));
  try {
    // README: `npm pack ./pkg`, then `npm install <tarball>` in the app.
    const { stdout } = await run("npm", ["pack", PKG, "--pack-destination", dir, "--ignore-scripts"], { cwd: ROOT });
    const tarball = join(dir, stdout.trim().split("\n").pop());
    const app = join(dir, "app");
    await run("mkdir", ["-p", app]);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    await run("npm", ["install", "--offline", "--no-audit", "--no-fund", tarball], { cwd: app });
    writeFileSync(
      join(app, "main.mjs"),
      `import { Limiter } from "edgeshed";
const limiter = new Limiter({ maxInFlight: 1 });
let finish;
const first = limiter.run(() => new Promise((resolve) => (finish = resolve)));
const shed = await limiter.run(async () => 1).catch((error) => error);
finish("done");
console.log(shed.name, shed.status, await first);
`,
    );
    const result = await run(process.execPath, ["main.mjs"], { cwd: app });
    assert.equal(result.stdout, "OverloadedError 503 done\n");
    const installed = JSON.parse(readFileSync(join(app, "node_modules/edgeshed/package.json"), "utf8"));
    assert.equal(installed.name, "edgeshed");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
