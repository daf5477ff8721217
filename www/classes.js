// The simulation's criticality mix: which level each arrival is, the
// per-level tally of how its calls ended (from the refusals' `reason`), the
// limiter's `stats().byCriticality` summed over its generations, and a lane
// per level (admitted and shed per second, counters) under the two others.
import { SeriesStore } from "./metrics.js";
import { COLORS, LaneView } from "./lane.js";

/** The three levels, most critical first. */
export const LEVELS = ["critical", "default", "sheddable"];

/** The counters of `stats().byCriticality.<level>`. */
const LIMITER_KEYS = ["admitted", "shed", "displaced", "inFlight", "queued"];

/** The level of one arrival: `u` uniform in [0, 1), `mix` the shares (fractions summing to 1). */
export function pickLevel(u, mix) {
  if (u < mix.critical) return "critical";
  if (u < mix.critical + mix.default) return "default";
  return "sheddable";
}

/** A zeroed `byCriticality`. */
export function emptyByCriticality() {
  return Object.fromEntries(LEVELS.map((level) => [level, Object.fromEntries(LIMITER_KEYS.map((key) => [key, 0]))]));
}

/** Adds `from` (a `stats().byCriticality`, or one made here) into `into`. */
export function addByCriticality(into, from) {
  for (const level of LEVELS) for (const key of LIMITER_KEYS) into[level][key] += from?.[level]?.[key] ?? 0;
  return into;
}

/**
 * How the calls of each level ended, counted by the page: offered, served
 * (`ok`), refused by `OverloadedError.reason` (`limit`, `queue_timeout`,
 * `displaced`, anything else under its own name), `deadline` passed.
 */
export class LevelTally {
  constructor() {
    this.levels = Object.fromEntries(LEVELS.map((level) => [level, { offered: 0, ok: 0, deadline: 0, refused: {} }]));
  }
  offer(level) {
    this.levels[level].offered++;
  }
  served(level) {
    this.levels[level].ok++;
  }
  /** Counts a rejection of a call of `level`. */
  failed(level, error) {
    const tally = this.levels[level];
    if (error?.name === "DeadlineError") tally.deadline++;
    else if (error?.name === "OverloadedError") {
      const reason = String(error.reason ?? "unknown");
      tally.refused[reason] = (tally.refused[reason] ?? 0) + 1;
    }
  }

  /**
   * Per level: the limiter's counters (`byCriticality`) and the page's, with
   * `queueTimeouts` (from the refusals), `admittedShare` and `shedShare`
   * (admitted, and refused with a 503, over offered; null before any arrival).
   */
  summary(byCriticality) {
    const out = {};
    for (const level of LEVELS) {
      const tally = this.levels[level];
      const limiter = byCriticality[level];
      const queueTimeouts = tally.refused.queue_timeout ?? 0;
      const refused = limiter.shed + limiter.displaced + queueTimeouts;
      out[level] = {
        ...limiter,
        offered: tally.offered,
        ok: tally.ok,
        queueTimeouts,
        deadline: tally.deadline,
        refused: { ...tally.refused },
        admittedShare: tally.offered > 0 ? limiter.admitted / tally.offered : null,
        shedShare: tally.offered > 0 ? refused / tally.offered : null,
      };
    }
    return out;
  }
}

const COUNTERS = [
  { key: "offered", label: "offered", color: COLORS.offered, hint: "calls of this level that arrived" },
  { key: "admitted", label: "admitted", color: COLORS.admitted, hint: "given a slot (byCriticality.admitted)" },
  { key: "inFlight", label: "in flight now", color: COLORS.inFlight, hint: "holding a slot (byCriticality.inFlight)" },
  { key: "queued", label: "queued now", color: COLORS.queued, hint: "waiting (byCriticality.queued)" },
  { key: "shed", label: "shed: limit", color: COLORS.shed, hint: 'refused at once, reason "limit" (byCriticality.shed)' },
  { key: "displaced", label: "displaced", color: COLORS.shed, hint: 'pushed out of a full queue by a more critical call, reason "displaced"' },
  { key: "queueTimeouts", label: "timed out", color: COLORS.shed, hint: 'refused after waiting queueTimeoutMs, reason "queue_timeout"' },
  { key: "deadline", label: "deadline (504)", color: COLORS.deadline, hint: "deadlineMs passed, queued or running" },
];

const SUBTITLES = {
  critical: "Served first from the queue; the reserve keeps slots for it.",
  default: "Calls naming no criticality are default ones.",
  sheddable: "The first to be refused, and displaced from a full queue.",
};

/** A lane per level: counters and a throughput chart each, with one shared y axis. */
export class LevelLanes {
  constructor(parent) {
    this.el = document.createElement("section");
    this.el.className = "level-lanes";
    this.el.id = "sim-levels";
    this.views = {};
    this.stores = {};
    for (const level of LEVELS) {
      this.views[level] = new LaneView(this.el, {
        id: `level-${level}`,
        title: level,
        subtitle: SUBTITLES[level],
        tone: level === "critical" ? "good" : level === "sheddable" ? "bad" : "neutral",
        counters: COUNTERS,
        charts: ["throughput"],
        throughput: ["offered", "admitted", "shed"],
      });
      this.stores[level] = new SeriesStore();
    }
    parent.append(this.el);
  }

  reset() {
    for (const level of LEVELS) this.stores[level].reset();
  }

  /** Records one sample of `byLevel` (a LevelTally summary) at `t` seconds. */
  sample(t, byLevel, mix) {
    for (const level of LEVELS) {
      const s = byLevel[level];
      this.stores[level].sample(t, {}, { offered: s.offered, admitted: s.admitted, shed: s.shed + s.displaced + s.queueTimeouts });
      const view = this.views[level];
      view.setCounters(s);
      view.setTitle(`${level} · ${Math.round(mix[level] * 100)} %`);
    }
  }

  draw(view, refs) {
    let throughput = 0;
    for (const level of LEVELS) throughput = Math.max(throughput, this.views[level].maxima(this.stores[level].store, view).throughput);
    for (const level of LEVELS) this.views[level].draw(this.stores[level].store, { ...view, yMax: { throughput }, refs });
  }
}
