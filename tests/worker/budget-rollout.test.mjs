// The fleet budget through a gradual deployment, on real workerd: two
// versions of the gateway serve at once with different budgets, so the
// object hears both configurations in turn. The newest version's is applied
// in place (no table rebuilt, no learning mode, no kept call dropped), older
// versions' calls are served under it, and the fleet view changes nothing.
import { after as afterAll, describe, test } from "node:test";
import assert from "node:assert/strict";
import { after, answer, gate, startOrigin } from "./support/origin.mjs";
import { eventually, startFleet } from "./support/fleet.mjs";

const TTL = 1000;

function config(users, maxInFlight, local = 8) {
  return {
    statsPublic: true,
    origins: {
      users: { url: users.url, maxInFlight: local, maxQueue: 0, timeoutMs: 400, budget: { maxInFlight, leaseTtlMs: TTL } },
    },
    routes: [{ path: "/aggregate", fanout: [{ origin: "users", path: "/u", required: true }] }],
  };
}

/** Cloudflare's version metadata of a version created at `timestamp`. */
const version = (id, timestamp) => ({ CF_VERSION_METADATA: { id, tag: "", timestamp } });
const OLD = version("3f0c6a52-old", "2026-12-01T10:00:00.000Z");
const NEW = version("9b1e47d8-new", "2026-12-02T10:00:00.000Z");

/**
 * `clients` closed-loop clients for `ms`; request k goes to the new version
 * (gw1) when k is odd, else to an old one (gw0, gw2 in turn), so the object
 * hears the two configurations alternately. Returns the statuses seen.
 */
async function load(fleet, clients, ms) {
  const statuses = new Map();
  let k = 0;
  const until = Date.now() + ms;
  const client = async () => {
    while (Date.now() < until) {
      const n = k++;
      const gw = n % 2 === 1 ? 1 : (n / 2) % 2 === 0 ? 0 : 2;
      const r = await fleet.get(gw, "/aggregate");
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status !== 200 && !statuses.has(`first ${r.status}`)) statuses.set(`first ${r.status}`, `gw${gw}: ${r.text}`);
    }
  };
  await Promise.all(Array.from({ length: clients }, client));
  return Object.fromEntries(statuses);
}

describe("fleet budget through a rollout", () => {
  const cleanup = [];
  afterAll(async () => {
    for (const dispose of cleanup.reverse()) await dispose();
  });
  const started = async (promise) => {
    const value = await promise;
    cleanup.push(() => (value.dispose ?? value.close).call(value));
    return value;
  };

  test("budgets 8 (old version, 2 isolates) and 12 (new, 1 isolate) alternate on every call: nothing refused under 8, the origin never above 12", async (t) => {
    const users = await started(startOrigin("users"));
    const fleet = await started(
      startFleet(config(users, 8), { configs: [config(users, 8), config(users, 12), config(users, 8)], bindings: [OLD, NEW, OLD] }),
    );
    users.behave(answer({ id: 1 }, { delayMs: 100 }));
    // 8 clients: the fleet never has more than 8 calls in flight
    const under = await load(fleet, 8, 4 * TTL);
    assert.deepEqual(Object.keys(under), ["200"], `every request admitted under the smaller budget: ${JSON.stringify(under)}`);
    assert.ok(users.peak <= 8, `origin peak ${users.peak}`);
    const underPeak = users.peak;
    const view = (await fleet.budget(0)).origins.users;
    assert.equal(view.limit, 12, `the new version's budget is in force, also seen through an old one: ${JSON.stringify(view)}`);
    assert.equal(view.learning, false);
    // 24 clients (8 per isolate): above either budget
    users.reset();
    users.behave(answer({ id: 2 }, { delayMs: 100 }));
    const over = await load(fleet, 24, 2 * TTL);
    assert.ok(users.peak <= 12, `origin peak ${users.peak} <= 12 (${JSON.stringify(over)})`);
    assert.ok(users.peak > 8, `the 12 is used, the old version's 8 not imposed: peak ${users.peak}`);
    assert.ok(over[200] > 0, JSON.stringify(over));
    t.diagnostic(`under 8: ${JSON.stringify(under)}, origin peak ${underPeak}; over: ${JSON.stringify(over)}, origin peak ${users.peak}`);
  });

  /** gw0, gw2: the old version, a budget of 4 (local 4); gw1: newer, 8, only asking for the fleet view. */
  const viewFleet = (users) =>
    startFleet(config(users, 4), { configs: [config(users, 4, 4), config(users, 8), config(users, 4, 4)], bindings: [OLD, NEW, OLD] });

  /** Four calls of gw0 held at the origin; the statuses of those answered early. */
  async function holdFour(users, fleet) {
    const g = gate();
    users.behave(after(g, answer({ id: 1 })));
    const answered = [];
    const held = Array.from({ length: 4 }, () =>
      fleet.get(0, "/aggregate").then((r) => {
        answered.push(r.status);
        return r;
      }),
    );
    // bounded: a refused call is answered instead of arriving
    await eventually(() => ({ arrived: users.requests.length, answered }), (s) => s.arrived === 4 || s.answered.length > 0, {
      what: "gw0's 4 calls at the origin",
    });
    assert.deepEqual(answered, [], "none of gw0's calls refused");
    return { g, held };
  }

  test("the first GET /__edgeshed/budget on a fresh object makes no table: the old version's calls then make it, with their configuration", async () => {
    const users = await started(startOrigin("users"));
    const fleet = await started(viewFleet(users));
    const fresh = (await fleet.budget(1)).origins.users;
    assert.deepEqual(fresh, { limit: 8, leased: 0, holders: 0, learning: false }, "the stated limit, nothing leased");
    const { g, held } = await holdFour(users, fleet);
    assert.deepEqual((await fleet.budget(0)).origins.users, { limit: 4, leased: 4, holders: 1, learning: false });
    g.open();
    for (const r of await Promise.all(held)) assert.equal(r.status, 200, r.text);
  });

  test("GET /__edgeshed/budget through an isolate with another configuration (and a newer version) changes nothing", async () => {
    const users = await started(startOrigin("users"));
    const fleet = await started(viewFleet(users));
    const { g, held } = await holdFour(users, fleet);
    const before = (await fleet.budget(0)).origins.users;
    assert.deepEqual(before, { limit: 4, leased: 4, holders: 1, learning: false }, "the old version's table");
    for (let i = 0; i < 3; i++) {
      assert.deepEqual((await fleet.budget(1)).origins.users, before, `view ${i} through the newer isolate`);
    }
    assert.deepEqual((await fleet.budget(0)).origins.users, before, "and through the old one");
    // the fleet is still full at 4: the other old isolate is refused
    const refused = await fleet.get(2, "/aggregate");
    assert.equal(refused.status, 503, refused.text);
    assert.equal(refused.json.reason, "budget");
    g.open();
    for (const r of await Promise.all(held)) assert.equal(r.status, 200, r.text);
    assert.ok(users.peak <= 4, `origin peak ${users.peak}`);
  });
});
