// The EdgeshedBudget Durable Object: one per budgeted origin
// (idFromName(<origin name>)), shared by every isolate of the gateway.
// A thin shell: the lease table (grant, renew, release, expire, learning
// mode) is Rust (crates/edgeshed-worker/src/budget/, exported as
// BudgetTable); this class only validates what callers send, keeps the
// table in memory and arms the alarm.
//
// The leases live in memory only. Storage keeps one number, the "horizon":
// no lease granted by this object outlives it (written at most once per
// TTL, when a grant would pass it). An object that lost its memory
// (eviction, restart, a new version) starts in learning mode until the
// horizon (at most one TTL): it re-registers only what holders report they
// hold, so a restart never over-admits; a first start, or one after every
// old lease expired, grants at once (see docs/gateway.md, "Fleet budget").
import { DurableObject } from "cloudflare:workers";
import { BudgetTable } from "../dist/worker/edgeshed.js";

const MAX_COUNT = 1_000_000;
const HORIZON = "horizon";

function count(value, what, min = 0) {
  if (!Number.isInteger(value) || value < min || value > MAX_COUNT) {
    throw new TypeError(`EdgeshedBudget: ${what} must be an integer from ${min} to ${MAX_COUNT}, got ${String(value)}`);
  }
  return value;
}

function config(options) {
  const limit = count(options?.limit, "limit", 1);
  const ttlMs = options?.ttlMs;
  if (!Number.isInteger(ttlMs) || ttlMs < 100 || ttlMs > 3_600_000) {
    throw new TypeError(`EdgeshedBudget: ttlMs must be an integer from 100 to 3600000, got ${String(ttlMs)}`);
  }
  return { limit, ttlMs };
}

export class EdgeshedBudget extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.table = null;
    // When the alarm is set for (ms), 0 when none is known to be set.
    this.alarmAt = 0;
    this.horizon = 0;
    ctx.blockConcurrencyWhile(async () => {
      const stored = await ctx.storage.get(HORIZON);
      this.horizon = Number.isFinite(stored) ? stored : 0;
    });
  }

  /**
   * Grants, renews or releases the lease of `holder` (one isolate):
   * `{ limit, ttlMs, held, inUse, wanted }` -> `{ permits, ttlMs, renewMs, learning }`
   * (`renewMs`: when the holder should call again, see Grant::renew_ms).
   * `limit` and `ttlMs` come from the caller's configuration.
   */
  lease(holder, request) {
    if (typeof holder !== "string" || holder.length === 0 || holder.length > 128) {
      throw new TypeError("EdgeshedBudget: holder must be a string of 1 to 128 characters");
    }
    const held = count(request?.held, "held");
    const inUse = count(request?.inUse, "inUse");
    const wanted = count(request?.wanted, "wanted");
    const now = Date.now();
    const table = this.#table(config(request), now);
    const permits = table.request(holder, held, inUse, wanted, now);
    const renewMs = table.renewMs();
    const learning = table.learning(now);
    if (permits > 0) this.#extend(now + table.ttlMs());
    this.#arm(table.expire(now));
    return { permits, ttlMs: table.ttlMs(), renewMs, learning };
  }

  /** The fleet view: `{ limit, leased, holders, learning }` (`options` as for `lease`). */
  view(options) {
    const now = Date.now();
    const table = this.#table(config(options), now);
    return { limit: table.limit(), leased: table.leased(now), holders: table.holders(now), learning: table.learning(now) };
  }

  /** Reclaims expired leases. Alarms are retried: running twice is harmless. */
  async alarm() {
    this.alarmAt = 0;
    if (this.table === null) return;
    this.#arm(this.table.expire(Date.now()));
  }

  // The table, made on first use with the caller's configuration. A caller
  // with another limit or TTL (a new deployment) restarts it in learning
  // mode: the leases out are re-registered as their holders report them.
  #table({ limit, ttlMs }, now) {
    const table = this.table;
    if (table !== null && table.limit() === limit && table.ttlMs() === ttlMs) return table;
    table?.free();
    this.table = new BudgetTable(limit, ttlMs, now, Math.max(this.horizon, table === null ? 0 : now + ttlMs));
    return this.table;
  }

  // Keeps the horizon at or after `expiry`: written a TTL ahead, so at most
  // once per TTL (the output gate holds the answer until it is stored).
  #extend(expiry) {
    if (expiry <= this.horizon) return;
    this.horizon = expiry + (this.table?.ttlMs() ?? 0);
    this.ctx.storage.put(HORIZON, this.horizon).catch(() => {});
  }

  // Arms the alarm at the earliest expiry unless one is set at or before it
  // (an early alarm finds nothing expired and re-arms: harmless).
  #arm(next) {
    if (next < 0) return;
    if (this.alarmAt !== 0 && this.alarmAt <= next) return;
    this.alarmAt = next;
    this.ctx.storage.setAlarm(next).catch(() => {
      this.alarmAt = 0;
    });
  }
}
