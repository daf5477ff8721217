// `edgeshed check` (scripts/check-config.mjs): the worker's own validator,
// loaded from the built wasm (dist/worker), offline. Every example
// configuration of the docs passes; the broken ones of issue 33 fail with
// every error and its key (exit 1); warnings are printed with exit 0.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkBinding, readWrangler } from "../../scripts/check-config.mjs";
import { ROOT } from "./support/worker.mjs";

/** Runs the checker on a file holding `config` (or the given args): { code, output }. */
function checkCli(config, args = []) {
  const dir = mkdtempSync(join(tmpdir(), "edgeshed-check-"));
  const file = join(dir, "my-config.json");
  if (config !== undefined) writeFileSync(file, typeof config === "string" ? config : JSON.stringify(config, null, 2));
  const argv = [join(ROOT, "scripts/check-config.mjs"), ...(config !== undefined ? [file] : []), "--no-build", ...args];
  return new Promise((resolve) => {
    execFile(process.execPath, argv, { cwd: ROOT }, (error, stdout, stderr) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ code: error ? error.code : 0, output: stdout + stderr });
    });
  });
}

/** The complete configurations among the docs' ```json blocks (fragments do not parse alone). */
function docExamples() {
  const examples = [];
  for (const doc of ["README.md", "docs/gateway.md", "docs/deploy.md", "docs/js.md", "docs/rust.md"]) {
    const text = readFileSync(join(ROOT, doc), "utf8");
    for (const [, block] of text.matchAll(/```json\n([\s\S]*?)```/g)) {
      let value;
      try {
        value = JSON.parse(block);
      } catch {
        continue;
      }
      if (value && typeof value === "object" && ("origins" in value || "routes" in value)) examples.push([doc, block]);
    }
  }
  return examples;
}

/** Issue 33's broken configurations: each passed every check before deploy, and answered 500 deployed. */
const BROKEN = {
  typo: {
    config: { origins: { api: { url: "https://api.example.com", maxInflight: 6 } }, routes: [{ prefix: "/api/", origin: "api" }] },
    error: "origins.api.maxInflight is not a known key (expected one of: url, maxInFlight,",
  },
  prefix: {
    config: { origins: { api: { url: "https://api.example.com" } }, routes: [{ prefix: "/crit", origin: "api", criticality: "critical" }] },
    error: 'routes[0].prefix must end with "/", got "/crit"',
  },
};

test("every example configuration in the docs passes the worker's validator", async () => {
  const examples = docExamples();
  assert.ok(examples.length >= 4, `found ${examples.length} examples`);
  for (const [doc, block] of examples) {
    const report = await checkBinding(block);
    assert.deepEqual(report.errors, [], `${doc}: ${block}`);
  }
  // The demo of wrangler.toml too, with its bindings declared there.
  const wrangler = await readWrangler(join(ROOT, "wrangler.toml"));
  const demo = await checkBinding(wrangler.config.vars.EDGESHED, { wrangler });
  assert.deepEqual(demo.errors, []);
  assert.deepEqual(demo.bindings, [{ path: "origins.users.budget.binding", name: "EDGESHED_BUDGET", kind: "durable_object" }]);
  assert.ok(!demo.warnings.some((w) => w.path.endsWith(".binding")), JSON.stringify(demo.warnings));
});

test("the CLI: a valid file exits 0; issue 33's broken files exit 1 naming each error's key", async () => {
  const [, ownExample] = docExamples().find(([doc]) => doc === "docs/deploy.md");
  const valid = await checkCli(ownExample);
  assert.equal(valid.code, 0, valid.output);
  assert.match(valid.output, /^edgeshed check: .*my-config\.json is valid\n$/);
  for (const { config, error } of Object.values(BROKEN)) {
    const { code, output } = await checkCli(config);
    assert.equal(code, 1, output);
    assert.match(output, /my-config\.json is invalid: 1 error\n/);
    assert.ok(output.includes(`  error: ${error}`), output);
  }
  // Both at once: every error, as the gateway would log them.
  const both = { ...BROKEN.typo.config, routes: BROKEN.prefix.config.routes.map((r) => ({ ...r, origin: "api" })) };
  const { code, output } = await checkCli(both);
  assert.equal(code, 1, output);
  assert.match(output, /is invalid: 2 errors\n  error: origins\.api\.maxInflight .*\n  error: routes\[0\]\.prefix must end with "\/"/);
  // Not JSON: the worker's own reading says so.
  const garbled = await checkCli("{ not json");
  assert.equal(garbled.code, 1);
  assert.match(garbled.output, /error: EDGESHED is not valid JSON/);
});

test("warnings (exit 0): fair share without a queue, the default reserve of a criticality, a binding wrangler.toml lacks", async () => {
  const config = {
    origins: {
      a: { url: "https://a.example", maxInFlight: 3 },
      b: { url: "https://b.example", maxInFlight: 4, budget: { binding: "OTHER_BUDGET", maxInFlight: 8 }, timeoutMs: 1000 },
    },
    routes: [
      { prefix: "/a/", origin: "a", fairness: { key: "ip" } },
      { prefix: "/b/", origin: "b", criticality: "critical", rateLimit: { binding: "API_RATE" } },
    ],
  };
  const { code, output } = await checkCli(config, ["--wrangler", join(ROOT, "wrangler.toml")]);
  assert.equal(code, 0, output);
  assert.match(output, /is valid \(6 warnings\)/);
  const lines = output.split("\n").filter((l) => l.startsWith("  warning: "));
  const about = (path) => lines.filter((l) => l.startsWith(`  warning: ${path} `));
  assert.match(about("routes[0].fairness")[0], /has no effect: no limit this route passes \(global, origins\.a\) has a queue/);
  assert.match(
    about("origins.a")[0],
    /keeps the default reserve .* because routes\[1\]\.criticality names a criticality: of maxInFlight 3, default calls may hold 2 and sheddable calls 2 while a more critical call holds a permit or waits/,
  );
  assert.equal(about("origins.b").length, 1);
  assert.equal(about("global").length, 1);
  assert.match(about("origins.b.budget.binding")[0], /names "OTHER_BUDGET", which .*wrangler\.toml does not declare/);
  assert.match(about("routes[1].rateLimit.binding")[0], /names "API_RATE", which .*wrangler\.toml does not declare: .*\[\[ratelimits\]\]/);
  // Without --wrangler the bindings are not looked up.
  const alone = await checkCli(config);
  assert.match(alone.output, /is valid \(4 warnings\)/);
});

test("usage errors exit 2", async () => {
  const none = await checkCli(undefined);
  assert.equal(none.code, 2, none.output);
  assert.match(none.output, /usage: node scripts\/check-config\.mjs <config\.json>/);
});
