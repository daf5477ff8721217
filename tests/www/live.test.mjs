// The dashboard's live mode against the real worker: worker/index.mjs in
// workerd (Miniflare, wrangler.toml's compatibility settings) in front of
// two real origin servers, with scripts/serve-www.mjs proxying /gateway/* to
// it. After a burst fired from the page, the page shows the gateway's
// counters exactly as /__edgeshed/stats reports them.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { answer, startOrigin } from "../worker/support/origin.mjs";
import { idle, startWorker } from "../worker/support/worker.mjs";
import { startServer } from "../../scripts/serve-www.mjs";
import { NARROW, WIDE, chartsDrawn, counters, launch, load, openPage, requirePackage, screenshot, until } from "./support.mjs";

const T = { timeout: 90_000 };
const FIELDS = ["inFlight", "queued", "admitted", "shed", "queueTimeouts", "limit"];

/** The gateway counters table as shown: { scope: { field: number } }. */
function shownTable(page) {
  return page.evaluate((fields) => {
    const out = {};
    for (const row of document.querySelectorAll("#live-table tbody tr")) {
      out[row.dataset.scope] = Object.fromEntries(
        fields.map((f) => [f, Number(row.querySelector(`[data-field="${f}"]`).textContent.replace(/,/g, ""))]),
      );
    }
    return out;
  }, FIELDS);
}

function byScope(stats) {
  const out = { global: stats.global, ...stats.origins };
  for (const key of Object.keys(out)) out[key] = Object.fromEntries(FIELDS.map((f) => [f, out[key][f]]));
  return out;
}

describe("dashboard: live mode against the worker in workerd", () => {
  let users, recs, worker, www, browser;

  before(async () => {
    requirePackage();
    users = await startOrigin("users");
    recs = await startOrigin("recs");
    users.behave(answer({ id: 1, name: "Ada" }, { delayMs: 30 }));
    recs.behave(answer({ items: ["lamp"] }, { delayMs: 10 }));
    // The demo configuration's limits, pointed at this test's origins (with
    // a longer deadline, so that a busy machine still answers some with 200).
    worker = await startWorker({
      statsPublic: true, // the test reads /__edgeshed/*
      retryAfterSeconds: 1,
      global: { maxInFlight: 64, maxQueue: 64, queueTimeoutMs: 50 },
      origins: {
        users: { url: users.url, maxInFlight: 6, maxQueue: 6, queueTimeoutMs: 20, timeoutMs: 5000 },
        recs: { url: recs.url, maxInFlight: 2, maxQueue: 0 },
      },
      routes: [
        {
          path: "/aggregate",
          deadlineMs: 5000,
          fanout: [
            { origin: "users", path: "/u", required: true },
            { origin: "recs", path: "/r", required: false },
          ],
        },
        // Requests keyed by tenant, for the top refused keys.
        { prefix: "/t/", origin: "recs", fairness: { key: "header:x-tenant" } },
      ],
    });
    www = await startServer({ port: 0, gateway: String(worker.url) });
    browser = await launch();
  }, T);

  after(async () => {
    await browser?.close();
    await www?.close();
    await worker?.dispose();
    await Promise.all([users, recs].map((o) => o?.close()));
  }, T);

  test("after a burst, the page shows non-zero shed and admitted counts matching /__edgeshed/stats", T, async () => {
    const page = await openPage(browser, WIDE);
    await load(page, `${www.url}?mode=live`);
    assert.equal(await page.isVisible("#mode-live"), true);
    assert.equal(await page.isVisible("#mode-sim"), false);
    await until(page, () => window.__edgeshed.live?.ok && window.__edgeshed.live.polls >= 2, null, { what: "two polls of the stats" });
    assert.match(await page.textContent("#live-status"), new RegExp(`live: ${String(worker.url).replace(/\/$/, "")}`));
    const before = await shownTable(page);
    assert.deepEqual(Object.keys(before), ["global", "users", "recs"]);
    assert.equal(before.global.admitted, 0);

    // Fire 200 concurrent requests at /aggregate from the page's button.
    await page.locator("#burst-n").fill("200");
    await page.locator("#burst").click();
    const burst = await until(page, () => window.__edgeshed.live.bursts === 1 && window.__edgeshed.live.lastBurst, null, {
      what: "the burst to finish",
      timeout: 30_000,
    });
    assert.equal(burst.n, 200);
    const statuses = burst.statuses;
    assert.ok(statuses["200"] > 0, `some admitted and answered: ${JSON.stringify(statuses)}`);
    assert.ok(statuses["503"] > 0, `some shed: ${JSON.stringify(statuses)}`);
    assert.match(await page.textContent("#burst-result"), /200 × GET \/aggregate: 200 ×\d+ · 503 ×\d+/);

    // The page's counters of the answers it got.
    const tally = await counters(page, "live");
    assert.equal(tally.sent, 200);
    assert.equal(tally.ok, statuses["200"]);
    assert.equal(tally.s503, statuses["503"]);

    // Once the gateway is idle, what the page shows is exactly /__edgeshed/stats.
    let stats, shown;
    const deadline = Date.now() + 15_000;
    for (;;) {
      stats = await worker.stats();
      shown = await shownTable(page);
      if (idle(stats) && JSON.stringify(shown) === JSON.stringify(byScope(stats))) break;
      if (Date.now() > deadline) assert.fail(`the page never matched the stats:\npage:  ${JSON.stringify(shown)}\nstats: ${JSON.stringify(stats)}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(shown.global.admitted > 0, JSON.stringify(shown));
    assert.ok(shown.users.admitted > 0, JSON.stringify(shown));
    const rejected = Object.values(shown).reduce((sum, s) => sum + s.shed + s.queueTimeouts, 0);
    assert.ok(rejected > 0, `non-zero shed: ${JSON.stringify(shown)}`);
    assert.ok(shown.users.shed + shown.users.queueTimeouts > 0, JSON.stringify(shown));
    // Every request got an answer: each 503 is a shed or a queue timeout somewhere.
    assert.equal(shown.global.admitted + shown.global.shed + shown.global.queueTimeouts, 200);

    // The charts of the chosen scope are drawn; pick the users origin, where the shedding is.
    await page.locator("#live-scope").selectOption("users");
    await until(page, () => window.__edgeshed.live.scope === "users", null, { what: "scope users" });
    const polls = await page.evaluate(() => window.__edgeshed.live.polls);
    await until(page, (n) => window.__edgeshed.live.polls >= n + 2, polls, { what: "two more polls" });
    assert.match(await page.textContent("#lane-live h2"), /origin users/);
    const charts = await chartsDrawn(page);
    assert.equal(charts.length, 3);
    for (const c of charts) assert.ok(c.inked > 500, JSON.stringify(c));
    // The current limit of every scope, charted from /__edgeshed/stats.
    const limits = await page.textContent("#live-limits .legend");
    assert.match(limits, /global\s*64.*origin users\s*6.*origin recs\s*2/);
    const inked = await page.evaluate(() => {
      const canvas = document.querySelector("#live-limits canvas");
      const { data } = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height);
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n++;
      return n;
    });
    assert.ok(inked > 500, `the limits chart is drawn: ${inked}`);
    assert.ok(users.peak <= 6, `the users origin saw at most 6 at once, saw ${users.peak}`);

    await screenshot(page, "live-burst-1280x800");
    await page.setViewportSize(NARROW);
    await until(page, (n) => window.__edgeshed.live.polls >= n + 2, polls + 2, { what: "a redraw" });
    await screenshot(page, "live-burst-390x844", { fullPage: true });
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test("who is being limited: the page lists each limiter's top refused keys by their first bytes, as /__edgeshed/stats does", T, async () => {
    const page = await openPage(browser, WIDE);
    await load(page, `${www.url}?mode=live`);
    await until(page, () => window.__edgeshed.live?.ok && window.__edgeshed.live.polls >= 1, null, { what: "a poll of the stats" });
    const noisy = `noisy-tenant-${"x".repeat(100)}`;
    // recs takes 2 at once and queues none: 8 at once of one tenant, 6 of them refused.
    const answers = await Promise.all(Array.from({ length: 8 }, () => worker.get("/t/x", { headers: { "x-tenant": noisy } })));
    assert.ok(answers.filter((a) => a.status === 503).length >= 1, answers.map((a) => a.status).join());
    const stats = await worker.until(idle, { what: "idle" });
    const top = stats.origins.recs.topRefusedKeys;
    assert.equal(top[0].key, noisy.slice(0, 16));
    const shown = await until(
      page,
      (want) => {
        const row = document.querySelector('#live-top-keys tbody tr[data-scope="recs"]');
        const cell = (field) => row?.querySelector(`[data-field="${field}"]`)?.textContent;
        return row && cell("refused") === String(want) ? { rank: cell("rank"), key: cell("key"), refused: cell("refused") } : null;
      },
      top[0].refused,
      { what: "the recs row of the top refused keys" },
    );
    assert.deepEqual(shown, { rank: "1", key: noisy.slice(0, 16), refused: String(top[0].refused) });
    assert.equal(await page.isVisible("#live-top-keys-empty"), false);
    assert.ok(!(await page.textContent("body")).includes(noisy.slice(0, 30)), "the page never shows a long key whole");
    assert.deepEqual(page.problems, []);
    await page.close();
  });

  test("serve-www: /pkg/ serves the wasm as application/wasm, /gateway/ proxies, and nothing escapes www/", T, async () => {
    const wasm = await fetch(new URL("pkg/edgeshed_bg.wasm", www.url));
    assert.equal(wasm.status, 200);
    assert.equal(wasm.headers.get("content-type"), "application/wasm");
    assert.ok(WebAssembly.validate(new Uint8Array(await wasm.arrayBuffer())));
    const js = await fetch(new URL("app.js", www.url));
    assert.match(js.headers.get("content-type"), /^text\/javascript/);
    await js.arrayBuffer();

    const stats = await fetch(new URL("gateway/__edgeshed/stats", www.url));
    assert.equal(stats.status, 200);
    assert.deepEqual(Object.keys(await stats.json()), ["global", "origins", "routes"]);
    const missing = await fetch(new URL("gateway/nope", www.url));
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { error: "not_found" });

    for (const path of ["/../package.json", "/%2e%2e/package.json", "/pkg/../../Cargo.toml", "/..%2fCargo.toml"]) {
      const res = await fetch(www.url.replace(/\/$/, "") + path);
      assert.notEqual(res.status, 200, path);
      await res.arrayBuffer();
    }
    const bad = await fetch(new URL("__www/burst?n=0", www.url), { method: "POST" });
    assert.equal(bad.status, 400);
    await bad.arrayBuffer();
  });
});

describe("serve-www in front of a gateway whose stats need a token", () => {
  test("EDGESHED_STATS_TOKEN / statsToken: the dashboard's server adds the bearer; without it the gateway answers 401", T, async () => {
    const token = "dashboard-t0ken";
    const worker = await startWorker({ statsToken: token, origins: {}, routes: [] }, { statsToken: token });
    const servers = [];
    try {
      const withToken = await startServer({ port: 0, gateway: String(worker.url), statsToken: token });
      const without = await startServer({ port: 0, gateway: String(worker.url), statsToken: "" });
      servers.push(withToken, without);
      const ok = await fetch(new URL("gateway/__edgeshed/stats", withToken.url));
      assert.equal(ok.status, 200);
      assert.deepEqual(Object.keys(await ok.json()), ["global", "origins", "routes"]);
      const refused = await fetch(new URL("gateway/__edgeshed/stats", without.url));
      assert.equal(refused.status, 401);
      assert.match(refused.headers.get("www-authenticate") ?? "", /^Bearer\b/);
      await refused.arrayBuffer();
    } finally {
      await Promise.all(servers.map((s) => s.close()));
      await worker.dispose();
    }
  });
});
