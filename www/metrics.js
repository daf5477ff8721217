// Time series for the charts: gauges as sampled, counters turned into
// per-second rates over the last second, latency percentiles over the last
// second. Times are in seconds (simulated or wall clock).

export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

/** Latencies of completed requests, kept for the last `windowS` seconds. */
export class LatencyWindow {
  constructor(windowS = 1) {
    this.windowS = windowS;
    this.times = [];
    this.values = [];
    this.head = 0;
  }
  add(t, ms) {
    this.times.push(t);
    this.values.push(ms);
  }
  /** { p50, p99, count } of the latencies recorded in (now - windowS, now]. */
  summary(now) {
    while (this.head < this.times.length && this.times[this.head] <= now - this.windowS) this.head++;
    if (this.head > 4096 && this.head * 2 > this.times.length) {
      this.times = this.times.slice(this.head);
      this.values = this.values.slice(this.head);
      this.head = 0;
    }
    const sorted = this.values.slice(this.head).sort((a, b) => a - b);
    return { p50: percentile(sorted, 50), p99: percentile(sorted, 99), count: sorted.length };
  }
}

/**
 * Columnar store of samples: store.t (seconds) plus one array per key.
 * `sample(t, gauges, counters)` appends gauges as is and, for each counter
 * `name`, its rate `name` per second over the last second (counters are
 * cumulative). Samples older than `keepS` are dropped.
 */
export class SeriesStore {
  constructor(keepS = 70) {
    this.keepS = keepS;
    this.store = { t: [] };
    this.counterHistory = []; // [t, {name: cumulative}]
  }
  reset() {
    this.store = { t: [] };
    this.counterHistory = [];
  }
  sample(t, gauges, counters = {}) {
    const s = this.store;
    s.t.push(t);
    for (const [key, value] of Object.entries(gauges)) (s[key] ??= new Array(s.t.length - 1).fill(null)).push(value);
    this.counterHistory.push([t, counters]);
    // The oldest sample at most 1 s old (or the first one).
    let j = this.counterHistory.length - 1;
    while (j > 0 && this.counterHistory[j - 1][0] >= t - 1 - 1e-9) j--;
    if (j === this.counterHistory.length - 1 && j > 0) j--;
    const [t0, c0] = this.counterHistory[j];
    const dt = t - t0;
    for (const [key, value] of Object.entries(counters)) {
      // No rate until half a second of history: a few arrivals over a few ms are noise.
      const rate = dt >= 0.5 && c0[key] != null ? (value - c0[key]) / dt : null;
      (s[key] ??= new Array(s.t.length - 1).fill(null)).push(rate == null ? null : Math.max(0, rate));
    }
    // Keys missing from this sample get a gap.
    for (const key of Object.keys(s)) if (s[key].length < s.t.length) s[key].push(null);
    // Drop old samples.
    let drop = 0;
    while (drop < s.t.length && s.t[drop] < t - this.keepS) drop++;
    if (drop > 64) {
      for (const key of Object.keys(s)) s[key] = s[key].slice(drop);
    }
    let hdrop = 0;
    while (hdrop < this.counterHistory.length - 1 && this.counterHistory[hdrop][0] < t - 2) hdrop++;
    if (hdrop > 64) this.counterHistory = this.counterHistory.slice(hdrop);
  }
}

/** `{ t, <key>... }`: the samples of a SeriesStore's `store` taken after `from` (seconds). */
export function recent(store, from, keys) {
  let first = store.t.length;
  while (first > 0 && store.t[first - 1] > from) first--;
  const out = { t: store.t.slice(first) };
  for (const key of keys) out[key] = (store[key] ?? []).slice(first);
  return out;
}
