// wrangler agrees with the tests: the demo configuration in wrangler.toml
// (its only copy) is valid and runs in workerd with its admin endpoints open.
// Deploying (`wrangler deploy --dry-run`, the demo refused): deploy.test.mjs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { unstable_readConfig } from "wrangler";
// wrangler's update check keeps a cache in os.tmpdir(): a folder removed at exit.
import "./support/own-tmpdir.mjs";
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
    // users has a fleet budget: no lease before its first call, and the
    // limit shown is what that call asks for (its local 6 of the budget's
    // 12), not the 0 an empty lease admits (issue 33, 7)
    assert.equal(stats.origins.users.leased, 0);
    assert.equal(stats.origins.users.limit, 6);
    assert.equal(stats.origins.recs.limit, 2);
    // The routes name criticalities: every limit keeps the default reserve.
    assert.deepEqual(stats.origins.users.reserve, { critical: 0.1, default: 0.2 });
    assert.deepEqual(stats.origins.users.ceilings, { critical: 6, default: 5, sheddable: 4 });
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
    assert.ok(!["not_found", "misconfigured"].includes(r.json?.error), r.text);
    // The sheddable route and the rate-limited one (docs/gateway.md).
    const routes = Object.fromEntries(demo.routes.map((route) => [route.path ?? route.prefix, route]));
    assert.equal(routes["/aggregate"].criticality, "critical");
    assert.equal(routes["/batch/"].criticality, "sheddable");
    assert.deepEqual(routes["/api/"].rateLimit, { key: "ip", perSecond: 5, burst: 10 });
    const limited = await worker.get("/api/x", { headers: { "cf-connecting-ip": "192.0.2.1" } });
    assert.equal(limited.headers.get("ratelimit-policy"), '"edgeshed";q=10;w=2', limited.text);
    assert.match(limited.headers.get("ratelimit"), /^"edgeshed";r=9;t=1$/);
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
  // [env.production]: the budget's object bound again (bindings are not inherited), no demo vars.
  const production = unstable_readConfig({ config: join(ROOT, "wrangler.toml"), env: "production" });
  assert.equal(production.name, "edgeshed-production");
  assert.deepEqual(production.vars, {});
  assert.deepEqual(production.durable_objects.bindings.map((b) => [b.name, b.class_name]), [["EDGESHED_BUDGET", "EdgeshedBudget"]]);
  assert.deepEqual(production.migrations, config.migrations);
  // The version metadata binding the budget's calls state their version from
  // (the newest version's budget configuration wins), in both (not inherited).
  assert.deepEqual(config.version_metadata, { binding: "CF_VERSION_METADATA" });
  assert.deepEqual(production.version_metadata, { binding: "CF_VERSION_METADATA" });
  assert.equal(config.vars.EDGESHED.origins.users.budget.binding, "EDGESHED_BUDGET");
});
