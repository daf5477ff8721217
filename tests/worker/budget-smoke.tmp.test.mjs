import { test } from "node:test";
import assert from "node:assert/strict";
import { answer, startOrigin } from "./support/origin.mjs";
import { startFleet } from "./support/fleet.mjs";
test("smoke", async (t) => {
  const users = await startOrigin("users");
  users.behave(answer({ id: 1 }, { delayMs: 50 }));
  const fleet = await startFleet({
    statsPublic: true,
    origins: { users: { url: users.url, maxInFlight: 4, maxQueue: 0, timeoutMs: 500, budget: { maxInFlight: 4, leaseTtlMs: 1000 } } },
    routes: [{ path: "/a", fanout: [{ origin: "users", path: "/u" }] }],
  });
  try {
    const r = await fleet.get(0, "/a");
    t.diagnostic(JSON.stringify([r.status, r.text]));
    const rs = await Promise.all(Array.from({ length: 30 }, (_, i) => fleet.get(i % 3, "/a")));
    const by = {};
    for (const x of rs) by[x.status] = (by[x.status] ?? 0) + 1;
    t.diagnostic(JSON.stringify(by) + " peak " + users.peak);
    t.diagnostic(JSON.stringify(await fleet.stats(0)));
    t.diagnostic(JSON.stringify(await fleet.budget(1)));
    t.diagnostic((await fleet.metrics(0)).split("\n").filter(l => l.includes("budget")).join("\n"));
    t.diagnostic(JSON.stringify(fleet.logs));
  } finally { await fleet.dispose(); await users.close(); }
});
