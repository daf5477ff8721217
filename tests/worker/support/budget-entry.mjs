// A test entry for the fleet budget: the real handler and the real
// EdgeshedBudget class, plus test hooks the production entry does not have.
// - The object can lose its memory on demand (`reset()`: ctx.abort(), so the
//   next call makes a new instance, as an eviction or a restart would).
// - A gateway isolate can "die" (`/__test/die`): from then on it answers
//   nothing and its calls to the object never arrive, so its leases are
//   neither renewed nor returned, as when its isolate is gone.
// - `env.BROKEN_BUDGET` is a namespace whose stubs throw `.retryable` errors
//   (retried once on a new stub), `env.OVERLOADED_BUDGET` one whose stubs
//   throw `.overloaded` ones (never retried): the object is unreachable.
// - `OverloadingBudget` is a real object class whose calls throw
//   `.overloaded` errors (bind it as a namespace: `/__test/overloading`
//   says how many calls reached it).
// - `/__test/crossed` (on the object's worker) replays a watch that crossed
//   its holder's newer lease call on the way, against the real object.
import wasm from "../../../dist/worker/edgeshed_bg.wasm";
import { initSync, handle } from "../../../dist/worker/edgeshed.js";
import { EdgeshedBudget as RealBudget } from "../../../worker/budget.mjs";

initSync({ module: wasm });

export class EdgeshedBudget extends RealBudget {
  /** Test hook: the object loses its memory (a new instance on the next call). */
  reset() {
    this.ctx.abort(new Error("test: the object loses its memory"));
  }
}

/**
 * A real object past its soft limit: every lease and watch call throws an
 * error flagged `.overloaded` (as the runtime's own does; the flag survives
 * RPC), and `seen()` says how many arrived.
 */
export class OverloadingBudget extends RealBudget {
  #seen = { lease: 0, watch: 0 };

  lease() {
    this.#seen.lease += 1;
    throw Object.assign(new Error("test: Durable Object is overloaded"), { overloaded: true });
  }

  watch() {
    this.#seen.watch += 1;
    throw Object.assign(new Error("test: Durable Object is overloaded"), { overloaded: true });
  }

  seen() {
    return this.#seen;
  }
}

/**
 * Holder a takes the whole budget of 2; b asks for 1 with time to wait (the
 * object keeps the ask); b's older watch arrives after it (calls to one stub
 * arrive in order); then a gives one permit back. Returns what the watch and
 * b's kept ask were answered.
 */
async function crossed(namespace, origin) {
  const stub = namespace.get(namespace.idFromName(origin));
  const budget = { limit: 2, ttlMs: 5000 };
  await stub.lease("a", { ...budget, held: 0, inUse: 0, wanted: 2 });
  const ask = stub.lease("b", { ...budget, held: 0, inUse: 0, wanted: 1, waitMs: 2000 });
  const watch = await stub.watch("b", { ...budget, contended: false, waitMs: 3000 });
  await stub.lease("a", { ...budget, held: 2, inUse: 0, wanted: 1 });
  return { watch, ask: await ask };
}

/**
 * The lease TTLs the real object grants: to a holder that says its calls last
 * at most 1 s (`callsMs`), answered at once and after a kept ask, and to one
 * that does not say.
 */
async function leaseTtls(namespace, origin) {
  const stub = namespace.get(namespace.idFromName(origin));
  const budget = { limit: 2, ttlMs: 5000 };
  const short = await stub.lease("a", { ...budget, held: 0, inUse: 0, wanted: 2, callsMs: 1000 });
  const ask = stub.lease("b", { ...budget, held: 0, inUse: 0, wanted: 1, waitMs: 2000, callsMs: 1000 });
  await stub.lease("a", { ...budget, held: 2, inUse: 0, wanted: 1, callsMs: 1000 });
  const kept = await ask;
  await stub.lease("a", { ...budget, held: 1, inUse: 0, wanted: 0, callsMs: 1000 });
  const unsaid = await stub.lease("c", { ...budget, held: 0, inUse: 0, wanted: 1 });
  return { short, kept, unsaid };
}

let dead = false;
// Calls (lease attempts) and stubs made per broken namespace.
const brokenSeen = { retryable: { calls: 0, stubs: 0 }, overloaded: { calls: 0, stubs: 0 } };

/** A namespace whose stubs throw errors flagged as `flags`. */
const broken = (kind, flags) => ({
  idFromName: (name) => name,
  get() {
    brokenSeen[kind].stubs += 1;
    const boom = () => {
      throw Object.assign(new Error(`test: the object is unreachable (${kind})`), flags);
    };
    return {
      lease() {
        brokenSeen[kind].calls += 1;
        boom();
      },
      view: boom,
    };
  },
});
const BROKEN = {
  BROKEN_BUDGET: broken("retryable", { retryable: true }),
  OVERLOADED_BUDGET: broken("overloaded", { retryable: true, overloaded: true }),
};

let wrapped;
function envFor(env) {
  if (wrapped?.env === env) return wrapped.value;
  const real = env.EDGESHED_BUDGET;
  const value = { ...env, ...BROKEN };
  if (real) {
    value.EDGESHED_BUDGET = {
      idFromName: (name) => real.idFromName(name),
      // A dead isolate's calls never arrive.
      get: (id) => (dead ? { lease: () => new Promise(() => {}), view: () => new Promise(() => {}) } : real.get(id)),
    };
  }
  wrapped = { env, value };
  return value;
}

export default {
  async fetch(request, env, ctx) {
    const { pathname, searchParams } = new URL(request.url);
    if (pathname === "/__test/die") {
      dead = true;
      return new Response("dead");
    }
    if (pathname === "/__test/reset") {
      const namespace = env.EDGESHED_BUDGET;
      try {
        await namespace.get(namespace.idFromName(searchParams.get("origin"))).reset();
      } catch {
        // the call that aborts the object fails: expected
      }
      return new Response("reset");
    }
    if (pathname === "/__test/crossed") {
      return Response.json(await crossed(env.EDGESHED_BUDGET, searchParams.get("origin")));
    }
    if (pathname === "/__test/lease-ttls") {
      return Response.json(await leaseTtls(env.EDGESHED_BUDGET, searchParams.get("origin")));
    }
    if (pathname === "/__test/broken") {
      return Response.json(brokenSeen);
    }
    if (pathname === "/__test/overloading") {
      const namespace = env.OVERLOADING_BUDGET;
      return Response.json(await namespace.get(namespace.idFromName(searchParams.get("origin"))).seen());
    }
    if (dead) return new Response("dead", { status: 599 });
    return handle(request, envFor(env), ctx);
  },
};
