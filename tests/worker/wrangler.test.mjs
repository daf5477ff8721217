// wrangler agrees with the tests: the demo configuration in wrangler.toml
// (its only copy) is valid and runs in workerd with its admin endpoints open,
// and `wrangler deploy --dry-run` builds offline.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { ROOT, startWorker, wranglerToml } from "./support/worker.mjs";

test("wrangler.toml [vars.EDGESHED] (the demo configuration) runs in workerd and means what it says", async () => {
  const demo = structuredClone(wranglerToml().vars.EDGESHED);
  assert.equal(demo.statsPublic, true, "the demo opens /__edgeshed/* for the dashboard (scripts/dev.sh)");
  assert.equal(demo.statsToken, undefined);
  const worker = await startWorker(demo);
  try {
    const stats = await worker.stats();
    assert.deepEqual(Object.keys(stats.origins), ["users", "recs"]);
    assert.equal(stats.global.limit, 64);
    // users has a fleet budget: its limit is the effective one, what this
    // isolate may use of the budget now (no lease before its first call)
    assert.equal(stats.origins.users.limit, Math.min(6, stats.origins.users.leased));
    assert.equal(stats.origins.recs.limit, 2);
    // users has a fleet budget (the EdgeshedBudget object wrangler.toml binds)
    assert.equal(typeof stats.origins.users.leased, "number");
    assert.equal(stats.origins.recs.leased, undefined);
    const budget = await worker.get("/__edgeshed/budget");
    assert.equal(budget.status, 200, budget.text);
    assert.deepEqual(Object.keys(budget.json.origins), ["users"]);
    assert.equal(budget.json.origins.users.limit, 12);
    // /aggregate exists (the demo origins may or may not be running here).
    const r = await worker.get("/aggregate");
    assert.ok([200, 502, 503, 504].includes(r.status), `/aggregate: ${r.status} ${r.text}`);
    assert.ok(!["not_found", "config"].includes(r.json?.error), r.text);
    const none = await worker.get("/no-such-route");
    assert.equal(none.status, 404);
    assert.deepEqual(none.json, { error: "not_found" });
    assert.deepEqual(await worker.logged(), [], "no configuration error logged");
  } finally {
    await worker.dispose();
  }
});

test("wrangler.toml sets what the tests rely on", () => {
  const config = wranglerToml();
  assert.match(config.compatibility_date, /^\d{4}-\d{2}-\d{2}$/);
  assert.ok(Array.isArray(config.compatibility_flags));
  assert.equal(config.send_metrics, false, "send_metrics = false (no network calls)");
  assert.equal(config.main, join(ROOT, "worker/index.mjs"));
  // The fleet budget: the namespace the demo's users.budget names, and its class's migration.
  assert.deepEqual(config.durable_objects.bindings.map((b) => [b.name, b.class_name]), [["EDGESHED_BUDGET", "EdgeshedBudget"]]);
  assert.deepEqual(config.migrations.map((m) => [m.tag, m.new_sqlite_classes]), [["v1", ["EdgeshedBudget"]]]);
  assert.equal(config.vars.EDGESHED.origins.users.budget.binding, "EDGESHED_BUDGET");
});

test("wrangler deploy --dry-run --outdir <tmp> succeeds offline", { timeout: 180_000 }, async () => {
  const outdir = mkdtempSync(join(tmpdir(), "edgeshed-dry-run-"));
  try {
    const wrangler = join(ROOT, "node_modules/.bin/wrangler");
    const { stdout, stderr } = await promisify(execFile)(wrangler, ["deploy", "--dry-run", "--outdir", outdir], {
      cwd: ROOT,
      env: {
        ...process.env,
        PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.HOME}/.cargo/bin:${process.env.PATH}`,
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
        WRANGLER_SEND_METRICS: "false",
        CI: "1",
      },
      timeout: 170_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    const output = stdout + stderr;
    assert.match(output, /--dry-run: exiting now/, output);
    assert.match(output, /env\.EDGESHED/, "the binding is listed");
    assert.match(output, /env\.EDGESHED_BUDGET \(EdgeshedBudget\)/, "the fleet budget's Durable Object is bound");
    // No bundler warnings (wasm-bindgen's glue used to repeat one snippet
    // module as many keys, one "Duplicate key" warning each; see
    // scripts/dedupe-glue-imports.mjs).
    assert.doesNotMatch(output, /\[WARNING\]|Duplicate key/, output);
    const files = readdirSync(outdir);
    assert.ok(files.includes("index.js"), `bundle written: ${files}`);
    assert.ok(files.some((f) => f.endsWith(".wasm")), `wasm module written: ${files}`);
    assert.ok(existsSync(join(ROOT, "dist/worker/edgeshed_bg.wasm")));
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
});
