// One column of the dashboard: a heading, outcome counters, and three
// charts (concurrency, throughput, latency) drawn from one SeriesStore, plus
// a fourth (the limit against the origin's capacity) when asked for.
import { TimeChart } from "./chart.js";

export const COLORS = {
  inFlight: "#0072b2",
  queued: "#e69f00",
  offered: "#6b7280",
  admitted: "#009e73",
  completed: "#56b4e9",
  shed: "#d55e00",
  p50: "#56b4e9",
  p99: "#1f3f8f",
  limit: "#0072b2",
  capacity: "#374151",
  deadline: "#b42318",
};

const number = new Intl.NumberFormat("en-US");

export function formatMs(ms) {
  if (ms == null) return "–";
  if (ms >= 10_000) return `${(ms / 1000).toFixed(ms >= 100_000 ? 0 : 1)} s`;
  if (ms >= 1000) return `${(ms / 1000).toFixed(2)} s`;
  return `${Math.round(ms)} ms`;
}

export function formatCount(value) {
  if (value == null) return "–";
  if (typeof value === "string") return value;
  return number.format(Math.round(value));
}

/**
 * new LaneView(parent, {
 *   id, title, subtitle, tone: "good" | "bad" | "neutral",
 *   counters: [{ key, label, color, hint }],
 *   throughput: [series keys to show among offered/admitted/completed/shed],
 *   latencyTitle,
 *   charts: the charts to draw among "concurrency", "throughput" and
 *     "latency" (default all three),
 *   limitChart: { title, capacityLabel } (optional: the `limit` and
 *     `capacity` series of the store, drawn in a fourth chart),
 * })
 */
export class LaneView {
  constructor(parent, config) {
    this.config = config;
    this.el = document.createElement("section");
    this.el.className = `lane tone-${config.tone ?? "neutral"}`;
    this.el.id = `lane-${config.id}`;
    this.el.dataset.lane = config.id;

    const head = document.createElement("header");
    head.className = "lane-head";
    const h2 = document.createElement("h2");
    h2.textContent = config.title;
    this.title = h2;
    const sub = document.createElement("p");
    sub.className = "lane-sub";
    sub.textContent = config.subtitle;
    this.banner = document.createElement("p");
    this.banner.className = "lane-banner";
    this.banner.hidden = true;
    head.append(h2, sub, this.banner);

    const counters = document.createElement("dl");
    counters.className = "counters";
    this.counterEls = new Map();
    for (const c of config.counters) {
      const box = document.createElement("div");
      box.className = "counter";
      box.style.setProperty("--c", c.color ?? "#9ca3af");
      if (c.hint) box.title = c.hint;
      const dt = document.createElement("dt");
      dt.textContent = c.label;
      const dd = document.createElement("dd");
      dd.dataset.counter = c.key;
      dd.textContent = "0";
      box.append(dt, dd);
      counters.append(box);
      this.counterEls.set(c.key, dd);
    }

    const charts = document.createElement("div");
    charts.className = "charts";
    const shown = new Set(config.charts ?? ["concurrency", "throughput", "latency"]);
    if (shown.has("concurrency")) this.concurrency = new TimeChart(charts, {
      title: "Requests in progress",
      yLabel: "requests",
      unit: "",
      minYMax: 4,
      series: [
        { key: "inFlight", label: "in flight", color: COLORS.inFlight, fill: true },
        { key: "queued", label: "queued", color: COLORS.queued, fill: true },
      ],
    });
    const throughputSeries = {
      offered: { key: "offered", label: "offered", color: COLORS.offered, width: 1.5 },
      admitted: { key: "admitted", label: "admitted", color: COLORS.admitted },
      completed: { key: "completed", label: "completed", color: COLORS.completed, width: 1.5 },
      shed: { key: "shed", label: "shed (503)", color: COLORS.shed },
    };
    if (shown.has("throughput")) this.throughput = new TimeChart(charts, {
      title: "Throughput",
      yLabel: "req/s",
      unit: "/s",
      minYMax: 10,
      series: (config.throughput ?? ["offered", "admitted", "completed", "shed"]).map((k) => throughputSeries[k]),
    });
    if (shown.has("latency")) this.latency = new TimeChart(charts, {
      title: config.latencyTitle ?? "Latency of admitted requests",
      yLabel: "latency (ms)",
      format: formatMs,
      minYMax: 20,
      series: [
        { key: "p50", label: "p50", color: COLORS.p50 },
        { key: "p99", label: "p99", color: COLORS.p99 },
      ],
    });
    if (config.limitChart) {
      this.limit = new TimeChart(charts, {
        title: config.limitChart.title ?? "Limit against the origin's capacity",
        yLabel: "requests",
        unit: "",
        minYMax: 4,
        series: [
          { key: "limit", label: "limit", color: COLORS.limit, width: 2 },
          { key: "capacity", label: config.limitChart.capacityLabel ?? "origin capacity", color: COLORS.capacity, dash: true },
        ],
      });
    }
    this.el.append(head, counters, charts);
    parent.append(this.el);
  }

  setCounters(values) {
    for (const [key, el] of this.counterEls) {
      const text = formatCount(values[key]);
      if (el.textContent !== text) el.textContent = text;
    }
  }

  setTitle(text) {
    if (this.title.textContent !== text) this.title.textContent = text;
  }

  setBanner(text) {
    this.banner.hidden = !text;
    this.banner.textContent = text ?? "";
  }

  /** Visible maxima, for scales shared with another lane. */
  maxima(store, view) {
    return {
      concurrency: this.concurrency?.visibleMax(store, view) ?? 0,
      throughput: this.throughput?.visibleMax(store, view) ?? 0,
      latency: this.latency?.visibleMax(store, view) ?? 0,
      limit: this.limit?.visibleMax(store, view) ?? 0,
    };
  }

  /**
   * view: { now, windowS, yMax?: {concurrency, throughput, latency},
   *         refs?: {concurrency: [...], throughput: [...], latency: [...]} }
   */
  draw(store, view) {
    const yMax = view.yMax ?? {};
    const refs = view.refs ?? {};
    const base = { now: view.now, windowS: view.windowS };
    this.concurrency?.draw(store, { ...base, yMax: yMax.concurrency, refs: refs.concurrency });
    this.throughput?.draw(store, { ...base, yMax: yMax.throughput, refs: refs.throughput });
    this.limit?.draw(store, { ...base, yMax: yMax.limit, refs: refs.limit });
    if (!this.latency) return;
    // Latency: seconds once the axis passes 10 s.
    let latMax = yMax.latency ?? this.latency.visibleMax(store, base);
    for (const r of refs.latency ?? []) latMax = Math.max(latMax, r.value);
    const inSeconds = latMax >= 10_000;
    this.latency.draw(store, {
      ...base,
      yMax: yMax.latency,
      refs: refs.latency,
      scale: inSeconds ? 1 / 1000 : 1,
      yLabel: inSeconds ? "latency (s)" : "latency (ms)",
    });
  }
}
