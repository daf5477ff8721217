// A small time-series chart on <canvas>: labelled axes with units, a grid,
// an HTML legend with the latest values, lines with gaps for missing data,
// dashed reference lines. Crisp on high-DPI screens, resizes with its box.

const FONT = '11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';
const AXIS_FONT = '600 11px system-ui, -apple-system, "Segoe UI", Roboto, sans-serif';

/** "Nice" tick step for a range (1, 2, 2.5, 5 × 10^k). */
function niceStep(range, count) {
  const raw = range / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(raw));
  // No 2.5 below 10: counts of requests read better as 0, 2, 4.
  for (const m of power < 10 ? [1, 2, 5, 10] : [1, 2, 2.5, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

/** A compact number for tick labels: 950, 1.2k, 35k, 1.5M. */
export function compact(value) {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${+(value / 1e6).toFixed(abs >= 1e7 ? 0 : 1)}M`;
  if (abs >= 1e4) return `${+(value / 1e3).toFixed(0)}k`;
  if (abs >= 1e3) return `${+(value / 1e3).toFixed(1)}k`;
  if (abs > 0 && abs < 10 && !Number.isInteger(value)) return `${+value.toFixed(1)}`;
  return `${Math.round(value)}`;
}

/**
 * new TimeChart(container, {
 *   title, yLabel, unit,           // unit: shown in legend values, e.g. "req/s"
 *   format(value) -> string,       // legend value format (default: compact + unit)
 *   series: [{ key, label, color, dash?, fill?, width? }],
 *   minYMax,                       // the y axis reaches at least this value
 * })
 * chart.draw(store, { now, windowS, yMax, refs: [{ value, label, color }] })
 *   store: { t: [seconds...], <key>: [number|null...] }
 */
export class TimeChart {
  constructor(container, options) {
    this.options = { minYMax: 1, ...options };
    this.root = document.createElement("figure");
    this.root.className = "chart";
    const caption = document.createElement("figcaption");
    const title = document.createElement("span");
    title.className = "chart-title";
    title.textContent = options.title;
    this.legend = document.createElement("ul");
    this.legend.className = "legend";
    this.legendValues = new Map();
    for (const s of options.series) {
      const item = document.createElement("li");
      const swatch = document.createElement("i");
      swatch.className = s.dash ? "swatch dashed" : "swatch";
      swatch.style.setProperty("--c", s.color);
      const label = document.createElement("span");
      label.textContent = s.label;
      const value = document.createElement("b");
      value.textContent = "–";
      value.dataset.series = s.key;
      item.append(swatch, label, value);
      this.legend.append(item);
      this.legendValues.set(s.key, value);
    }
    caption.append(title, this.legend);
    this.canvas = document.createElement("canvas");
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("aria-label", `${options.title}: ${options.series.map((s) => s.label).join(", ")} over time`);
    this.root.append(caption, this.canvas);
    container.append(this.root);
    this.last = null;
    this.resize = new ResizeObserver(() => this.last && this.draw(...this.last));
    this.resize.observe(this.canvas);
  }

  /** Largest value of the visible window (for scales shared between charts). */
  visibleMax(store, { now, windowS }) {
    let max = 0;
    const from = now - windowS;
    const t = store.t;
    for (const s of this.options.series) {
      const values = store[s.key];
      if (!values) continue;
      for (let i = t.length - 1; i >= 0 && t[i] >= from; i--) {
        const v = values[i];
        if (v != null && v > max) max = v;
      }
    }
    return max;
  }

  formatValue(value) {
    if (value == null || Number.isNaN(value)) return "–";
    if (this.options.format) return this.options.format(value);
    return `${compact(value)}${this.options.unit ? ` ${this.options.unit}` : ""}`;
  }

  draw(store, view) {
    this.last = [store, view];
    const { now, windowS, refs = [] } = view;
    // Legend: latest values.
    for (const s of this.options.series) {
      const values = store[s.key] ?? [];
      this.legendValues.get(s.key).textContent = this.formatValue(values[values.length - 1]);
    }

    const canvas = this.canvas;
    const cssW = canvas.clientWidth;
    const cssH = canvas.clientHeight;
    if (cssW === 0 || cssH === 0) return;
    const dpr = window.devicePixelRatio || 1;
    if (canvas.width !== Math.round(cssW * dpr) || canvas.height !== Math.round(cssH * dpr)) {
      canvas.width = Math.round(cssW * dpr);
      canvas.height = Math.round(cssH * dpr);
    }
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssW, cssH);

    const styles = getComputedStyle(this.root);
    const ink = styles.getPropertyValue("--ink-2").trim() || "#555";
    const grid = styles.getPropertyValue("--grid").trim() || "#e5e7eb";

    // Scales.
    const scale = view.scale ?? 1; // value -> displayed value (ms -> s, say)
    let yMax = Math.max(view.yMax ?? this.visibleMax(store, view), this.options.minYMax);
    for (const r of refs) yMax = Math.max(yMax, r.value);
    const shownMax = yMax * scale;
    const pad = { left: 50, right: 12, top: 8, bottom: 20 };
    const w = cssW - pad.left - pad.right;
    const h = cssH - pad.top - pad.bottom;
    // The nice step whose axis fits the data most tightly, with at most maxTicks intervals.
    const maxTicks = Math.max(2, Math.min(5, Math.floor(h / 20)));
    let step = niceStep(shownMax * 1.05, 2);
    let top = Infinity;
    for (let n = 2; n <= maxTicks; n++) {
      const candidate = niceStep(shownMax * 1.05, n);
      const candidateTop = Math.ceil((shownMax * 1.05) / candidate) * candidate;
      const intervals = Math.round(candidateTop / candidate);
      if (intervals >= 2 && intervals <= maxTicks && candidateTop < top - 1e-9) {
        step = candidate;
        top = candidateTop;
      }
    }
    if (top === Infinity) top = Math.ceil((shownMax * 1.05) / step) * step;
    const x0 = Math.max(0, now - windowS);
    const x1 = x0 + windowS;
    const X = (t) => pad.left + ((t - x0) / windowS) * w;
    const Y = (v) => pad.top + h - ((v * scale) / top) * h;

    // Grid and y ticks.
    ctx.font = FONT;
    ctx.lineWidth = 1;
    ctx.textAlign = "right";
    ctx.textBaseline = "middle";
    for (let v = 0; v <= top + step / 2; v += step) {
      const y = Math.round(pad.top + h - (v / top) * h) + 0.5;
      ctx.strokeStyle = grid;
      ctx.beginPath();
      ctx.moveTo(pad.left, y);
      ctx.lineTo(pad.left + w, y);
      ctx.stroke();
      ctx.fillStyle = ink;
      ctx.fillText(compact(v), pad.left - 6, y);
    }
    // x ticks: every 10 s (5 s when narrow windows), labelled in seconds.
    const xStep = windowS <= 30 ? 5 : 10;
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    for (let t = Math.ceil(x0 / xStep) * xStep; t <= x1; t += xStep) {
      const x = Math.round(X(t)) + 0.5;
      ctx.strokeStyle = grid;
      ctx.beginPath();
      ctx.moveTo(x, pad.top);
      ctx.lineTo(x, pad.top + h);
      ctx.stroke();
      ctx.fillStyle = ink;
      // The axis title sits at the right end of this row.
      if (x > pad.left + 8 && x < pad.left + w - 58) ctx.fillText(`${t}`, x, pad.top + h + 4);
    }
    // Axes.
    ctx.strokeStyle = ink;
    ctx.beginPath();
    ctx.moveTo(pad.left + 0.5, pad.top);
    ctx.lineTo(pad.left + 0.5, pad.top + h + 0.5);
    ctx.lineTo(pad.left + w, pad.top + h + 0.5);
    ctx.stroke();
    // Axis labels.
    ctx.font = AXIS_FONT;
    ctx.fillStyle = ink;
    ctx.textAlign = "right";
    ctx.textBaseline = "top";
    ctx.fillText("time (s)", pad.left + w, pad.top + h + 4);
    ctx.save();
    ctx.translate(12, pad.top + h / 2);
    ctx.rotate(-Math.PI / 2);
    ctx.textAlign = "center";
    ctx.textBaseline = "middle";
    ctx.fillText(view.yLabel ?? this.options.yLabel, 0, 0);
    ctx.restore();

    // Clip to the plot.
    ctx.save();
    ctx.beginPath();
    ctx.rect(pad.left + 1, pad.top - 2, w, h + 2);
    ctx.clip();

    // Reference lines; a label that would overlap the previous one goes to the right end.
    const placed = [];
    for (const r of [...refs].sort((a, b) => a.value - b.value)) {
      const y = Math.round(Y(r.value)) + 0.5;
      ctx.strokeStyle = r.color;
      ctx.setLineDash([6, 4]);
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      ctx.moveTo(pad.left, y);
      ctx.lineTo(pad.left + w, y);
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.font = FONT;
      ctx.textBaseline = "bottom";
      const clash = (side) => placed.some((p) => p.side === side && Math.abs(p.y - y) < 13);
      const side = !clash("left") ? "left" : !clash("right") ? "right" : "middle";
      placed.push({ side, y });
      ctx.textAlign = side === "left" ? "left" : side === "right" ? "right" : "center";
      const x = side === "left" ? pad.left + 6 : side === "right" ? pad.left + w - 6 : pad.left + w / 2;
      ctx.lineWidth = 3;
      ctx.strokeStyle = "rgba(255,255,255,0.85)";
      ctx.lineJoin = "round";
      ctx.strokeText(r.label, x, y - 2);
      ctx.fillStyle = r.color;
      ctx.fillText(r.label, x, y - 2);
    }

    // Series.
    const t = store.t;
    let first = t.length;
    while (first > 0 && t[first - 1] >= x0 - 1) first--;
    for (const s of this.options.series) {
      const values = store[s.key];
      if (!values) continue;
      ctx.strokeStyle = s.color;
      ctx.lineWidth = s.width ?? 2;
      ctx.lineJoin = "round";
      ctx.setLineDash(s.dash ? [5, 4] : []);
      // Runs of non-null values.
      let run = [];
      const flush = () => {
        if (run.length === 0) return;
        if (s.fill) {
          ctx.beginPath();
          ctx.moveTo(run[0][0], Y(0));
          for (const [x, y] of run) ctx.lineTo(x, y);
          ctx.lineTo(run[run.length - 1][0], Y(0));
          ctx.closePath();
          ctx.fillStyle = s.color + "22";
          ctx.fill();
        }
        ctx.beginPath();
        run.forEach(([x, y], i) => (i === 0 ? ctx.moveTo(x, y) : ctx.lineTo(x, y)));
        if (run.length === 1) ctx.lineTo(run[0][0] + 1, run[0][1]);
        ctx.stroke();
        run = [];
      };
      for (let i = first; i < t.length; i++) {
        const v = values[i];
        if (v == null) flush();
        else run.push([X(t[i]), Y(v)]);
      }
      flush();
    }
    ctx.setLineDash([]);
    ctx.restore();
  }
}
