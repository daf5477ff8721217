// The EdgeshedBudget Durable Object: one per budgeted origin
// (idFromName(<origin name>)), shared by every isolate of the gateway.
// A thin shell: the lease table (grant, renew, release, expire, learning
// mode, kept asks and watches) is Rust (crates/edgeshed-worker/src/budget/,
// exported as BudgetTable); this class only validates what callers send,
// keeps the table in memory, holds the promises of the calls the table
// keeps, and arms the alarm.
//
// The leases live in memory only. Storage keeps one number, the "horizon":
// no lease granted by this object outlives it (written at most once per
// TTL, when a grant would pass it). An object that lost its memory
// (eviction, restart, a new version) starts in learning mode until the
// horizon (at most one TTL): it re-registers only what holders report they
// hold, so a restart never over-admits; a first start, or one after every
// old lease expired, grants at once (see docs/gateway.md, "Fleet budget").
// Calls it keeps are lost with its memory: their holders see a failed call
// and ask again.
//
// Every call states its isolate's configuration (`limit`, `ttlMs`,
// `adaptive`) and deploy version (`version`: `{ timestamp, id }` of the
// Worker's CF_VERSION_METADATA binding). The table applies a changed
// configuration in place, the newest version's winning (see
// crates/edgeshed-worker/src/budget/table/reconfigure.rs): its leases, the
// calls it keeps and its learning state stay, so a gradual deployment (two
// versions serving at once) costs nothing. The fleet view changes nothing.
import { DurableObject } from "cloudflare:workers";
import { BudgetTable } from "../dist/worker/edgeshed.js";

const MAX_COUNT = 1_000_000;
const MAX_WAIT_MS = 600_000;
const HORIZON = "horizon";

function count(value, what, min = 0, max = MAX_COUNT) {
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`EdgeshedBudget: ${what} must be an integer from ${min} to ${max}, got ${String(value)}`);
  }
  return value;
}

const ALGORITHMS = ["aimd", "gradient2", "vegas"];

function config(options) {
  const limit = count(options?.limit, "limit", 1);
  const ttlMs = options?.ttlMs;
  if (!Number.isInteger(ttlMs) || ttlMs < 100 || ttlMs > 3_600_000) {
    throw new TypeError(`EdgeshedBudget: ttlMs must be an integer from 100 to 3600000, got ${String(ttlMs)}`);
  }
  return { limit, ttlMs, adaptive: adaptive(options?.adaptive), version: version(options?.version) };
}

/** The `adaptive` section of the caller's budget (the worker checked it), or null. */
function adaptive(value) {
  if (value === undefined || value === null) return null;
  const algorithm = value.algorithm;
  if (!ALGORITHMS.includes(algorithm)) {
    throw new TypeError(`EdgeshedBudget: adaptive.algorithm must be one of ${ALGORITHMS.join(", ")}, got ${String(algorithm)}`);
  }
  const minLimit = count(value.minLimit, "adaptive.minLimit", 1);
  const maxLimit = count(value.maxLimit, "adaptive.maxLimit", minLimit);
  const initialLimit = count(value.initialLimit, "adaptive.initialLimit", minLimit, maxLimit);
  return { algorithm, initialLimit, minLimit, maxLimit };
}

function holderId(holder) {
  if (typeof holder !== "string" || holder.length === 0 || holder.length > 128) {
    throw new TypeError("EdgeshedBudget: holder must be a string of 1 to 128 characters");
  }
  return holder;
}

/** The calls a holder reports with a lease call (a WindowSummary's parts; all optional). */
function report(value) {
  const big = Number.MAX_SAFE_INTEGER;
  const r = value ?? {};
  const squares = r.rttSquares ?? 0;
  if (typeof squares !== "number" || !Number.isFinite(squares) || squares < 0) {
    throw new TypeError(`EdgeshedBudget: report.rttSquares must be a finite number of at least 0, got ${String(squares)}`);
  }
  return [
    count(r.served ?? 0, "report.served", 0, big),
    count(r.dropped ?? 0, "report.dropped", 0, big),
    count(r.rttTotalUs ?? 0, "report.rttTotalUs", 0, big),
    squares,
    count(r.minRttUs ?? 0, "report.minRttUs", 0, big),
    count(r.maxRttUs ?? 0, "report.maxRttUs", 0, big),
    count(r.maxInFlight ?? 0, "report.maxInFlight"),
  ];
}

/** The caller's deploy version (`{ timestamp, id }`), or the unversioned one. */
function version(value) {
  if (value === undefined || value === null) return { timestamp: 0, id: "" };
  const timestamp = count(value.timestamp, "version.timestamp", 0, Number.MAX_SAFE_INTEGER);
  const id = value.id ?? "";
  if (typeof id !== "string" || id.length > 128) {
    throw new TypeError("EdgeshedBudget: version.id must be a string of at most 128 characters");
  }
  return { timestamp, id };
}

// What a call the table dropped gets (its holder sent a newer one, or the
// table restarted): a malformed answer, which the holder ignores or counts
// as a failed call.
const SUPERSEDED = { superseded: true };

export class EdgeshedBudget extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.table = null;
    // The promises of the calls the table keeps: holder -> { lease, watch }.
    this.kept = new Map();
    // When the alarm is set for (ms), 0 when none is known to be set.
    this.alarmAt = 0;
    this.horizon = 0;
    ctx.blockConcurrencyWhile(async () => {
      const stored = await ctx.storage.get(HORIZON);
      this.horizon = Number.isFinite(stored) ? stored : 0;
    });
  }

  /**
   * Grants, renews, grows or releases the lease of `holder` (one isolate):
   * `{ limit, ttlMs, adaptive, held, inUse, wanted, waitMs, epoch, report,
   * callsMs }` -> `{ permits, ttlMs, renewMs, learning, contended, epoch }`.
   * `callsMs`: the longest a call the holder admits may last (optional); the
   * lease's `ttlMs` is then at most that plus a quarter of the TTL. With
   * `waitMs`, a holder short of its fair share is answered once permits come
   * back (or after `waitMs`). `limit`, `ttlMs` and `adaptive` come from the
   * caller's configuration; `report` summarises the calls the holder started
   * in `epoch` (an adaptive limit learns from them).
   */
  lease(holder, request) {
    holderId(holder);
    const numbers = [
      count(request?.held, "held"),
      count(request?.inUse, "inUse"),
      count(request?.wanted, "wanted"),
      count(request?.waitMs ?? 0, "waitMs", 0, MAX_WAIT_MS),
      count(request?.epoch ?? 0, "epoch", 0, Number.MAX_SAFE_INTEGER),
      ...report(request?.report),
      count(request?.callsMs ?? 0, "callsMs", 0, 3_600_000),
    ];
    const now = Date.now();
    const table = this.#table(config(request), now);
    this.#drop(holder);
    const permits = table.ask(holder, numbers, now);
    let answer;
    if (permits >= 0) {
      if (permits > 0) this.#extend(now + table.ttlMs());
      answer = {
        permits,
        ttlMs: table.lastTtlMs(),
        renewMs: table.renewMs(),
        learning: table.lastLearning(),
        contended: table.lastContended(),
        epoch: table.epoch(),
      };
    } else {
      answer = this.#keep(holder, "lease", numbers[3]);
    }
    this.#serve(now);
    this.#arm(table.expire(now));
    return answer;
  }

  /**
   * Keeps the call until another holder waits for permits (while this one
   * believes the budget uncontended), or permits are free that this one
   * wanted, or `waitMs`: `{ limit, ttlMs, contended, waitMs }` -> `{ contended }`.
   */
  watch(holder, options) {
    holderId(holder);
    if (typeof options?.contended !== "boolean") throw new TypeError("EdgeshedBudget: contended must be a boolean");
    const waitMs = count(options?.waitMs, "waitMs", 0, MAX_WAIT_MS);
    const now = Date.now();
    const table = this.#table(config(options), now);
    // A holder watches only with no lease call under way: a watch that finds
    // its lease call kept crossed it on the way, is older, and must not
    // cancel it (the table answers such a watch at once).
    if (this.kept.get(holder)?.lease === undefined) this.#drop(holder);
    const answered = table.watch(holder, options.contended, waitMs, now);
    const answer = answered >= 0 ? { contended: answered === 1 } : this.#keep(holder, "watch", waitMs);
    this.#serve(now);
    return answer;
  }

  /**
   * The fleet view: `{ limit, leased, holders, learning }` (`options` as for
   * `lease`). It changes nothing: the configuration the view states neither
   * makes nor reconfigures the table. An object without a table yet shows
   * the stated limit (an adaptive one's first window: its minimum), nothing
   * leased, and whether a table made now would learn (until the horizon).
   */
  view(options) {
    const now = Date.now();
    const stated = config(options);
    const table = this.table;
    if (table === null) {
      const limit = stated.adaptive === null ? stated.limit : stated.adaptive.minLimit;
      return { limit, leased: 0, holders: 0, learning: now < this.horizon };
    }
    return { limit: table.limit(), leased: table.leased(now), holders: table.holders(now), learning: table.learning(now) };
  }

  /** Reclaims expired leases. Alarms are retried: running twice is harmless. */
  async alarm() {
    this.alarmAt = 0;
    if (this.table === null) return;
    const now = Date.now();
    this.#arm(this.table.expire(now));
    this.#serve(now);
  }

  // A promise for a call the table keeps, answered by #serve; a timer of its
  // own answers it at its deadline (a request that waits only on another
  // request's work would be cancelled by workerd as hung).
  #keep(holder, kind, waitMs) {
    return new Promise((resolve) => {
      const calls = this.kept.get(holder) ?? {};
      calls[kind] = resolve;
      this.kept.set(holder, calls);
      setTimeout(() => this.#serve(Date.now()), waitMs + 1);
    });
  }

  // Answers what the holder's newer call supersedes (the table dropped it).
  #drop(holder) {
    const calls = this.kept.get(holder);
    if (calls === undefined) return;
    this.kept.delete(holder);
    calls.lease?.(SUPERSEDED);
    calls.watch?.(SUPERSEDED);
  }

  // Answers the kept calls the table can answer now.
  #serve(now) {
    const table = this.table;
    if (table === null) return;
    for (const [kind, holder, ...rest] of table.answerParked(now)) {
      const calls = this.kept.get(holder);
      const key = kind === 0 ? "lease" : "watch";
      const resolve = calls?.[key];
      if (resolve === undefined) continue;
      delete calls[key];
      if (calls.lease === undefined && calls.watch === undefined) this.kept.delete(holder);
      if (kind === 0) {
        const [permits, renewMs, learning, contended, epoch, ttlMs] = rest;
        if (permits > 0) this.#extend(now + table.ttlMs());
        resolve({ permits, ttlMs, renewMs, learning, contended, epoch });
      } else {
        resolve({ contended: rest[0] });
      }
    }
  }

  // The table, made on first use with the caller's configuration; after
  // that the caller's configuration and version go to the table, which
  // applies a newer one in place (nothing is dropped, no learning mode) and
  // serves older versions' calls under the one in force.
  #table(wanted, now) {
    const a = wanted.adaptive;
    if (this.table === null) {
      const table = a === null
        ? new BudgetTable(wanted.limit, wanted.ttlMs, now, this.horizon)
        : BudgetTable.adaptive(a.algorithm, a.initialLimit, a.minLimit, a.maxLimit, wanted.ttlMs, now, this.horizon);
      if (table === undefined) throw new TypeError(`EdgeshedBudget: the core refused the adaptive limit ${JSON.stringify(a)}`);
      this.table = table;
    }
    const numbers = [wanted.version.timestamp, wanted.limit, wanted.ttlMs, a?.initialLimit ?? 0, a?.minLimit ?? 0, a?.maxLimit ?? 0];
    if (this.table.configure(wanted.version.id, a?.algorithm ?? "", numbers, now) < 0) {
      throw new TypeError(`EdgeshedBudget: the core refused the adaptive limit ${JSON.stringify(a)}`);
    }
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
