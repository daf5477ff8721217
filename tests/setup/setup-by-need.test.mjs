// scripts/setup.sh by need: what ./scripts/dev.sh runs (`bash scripts/setup.sh`)
// never asks for root, apt or a browser; the test command's tools come only
// with `bash scripts/setup.sh test`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..", "..");

/** Runs scripts/setup.sh `args` with sudo/apt-get/apt shims first on PATH that record any call. */
function setup(args) {
  const shims = mkdtempSync(join(tmpdir(), "edgeshed-setup-"));
  const log = join(shims, "calls.log");
  for (const name of ["sudo", "apt-get", "apt", "chromium", "chromedriver"]) {
    writeFileSync(join(shims, name), `#!/bin/sh\necho "${name} $*" >> "${log}"\nexit 1\n`);
    chmodSync(join(shims, name), 0o755);
  }
  return new Promise((resolve) => {
    execFile("bash", ["scripts/setup.sh", ...args], {
      cwd: ROOT,
      env: { ...process.env, PATH: `${shims}:${join(ROOT, "node_modules/.bin")}:${process.env.HOME}/.cargo/bin:${process.env.PATH}` },
    }, (error, stdout, stderr) => {
      const calls = existsSync(log) ? readFileSync(log, "utf8") : "";
      rmSync(shims, { recursive: true, force: true });
      resolve({ code: error ? error.code : 0, output: stdout + stderr, calls });
    });
  });
}

test("the gateway's setup (what dev.sh runs) needs no root, no apt and no browser", async () => {
  const { code, output, calls } = await setup([]);
  assert.equal(code, 0, output);
  assert.equal(calls, "", "sudo, apt and the browser were never called");
  assert.match(output, /Rust target wasm32-unknown-unknown/);
  assert.match(output, /wasm-bindgen-cli 0\.2\.130/);
  assert.match(output, /npm packages/);
  assert.doesNotMatch(output, /chromium|wasm-pack|worker-build|rustfmt|clippy/i);
  assert.match(output, /the tools to run the gateway are present/);
  // dev.sh asks for exactly this tier.
  assert.match(readFileSync(join(ROOT, "scripts/dev.sh"), "utf8"), /^bash scripts\/setup\.sh run$/m);
  assert.match(readFileSync(join(ROOT, "scripts/test.sh"), "utf8"), /^\s*bash scripts\/setup\.sh test$/m);
});

test("an unknown need is refused with the usage", async () => {
  const { code, output } = await setup(["gateway"]);
  assert.equal(code, 2);
  assert.match(output, /usage: bash scripts\/setup\.sh \[test \| workers-rs\]/);
});

test("the workers-rs setup (what build-workers-rs.sh asks for) installs worker-build and no browser", async () => {
  const { code, output, calls } = await setup(["workers-rs"]);
  assert.equal(code, 0, output);
  assert.equal(calls, "", "sudo, apt and the browser were never called (OpenSSL's headers are here)");
  assert.match(output, /wasm-bindgen-cli 0\.2\.130/);
  assert.match(output, /worker-build 0\.8\.7/);
  assert.doesNotMatch(output, /chromium|wasm-pack|rustfmt|clippy/i);
  assert.match(output, /the tools to build examples\/workers-rs are present/);
  assert.match(readFileSync(join(ROOT, "scripts/build-workers-rs.sh"), "utf8"), /bash scripts\/setup\.sh workers-rs/);
});
