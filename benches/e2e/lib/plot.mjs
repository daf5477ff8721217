// Goodput against admitted p99, one panel per arrival process, as an SVG
// (no dependencies). Each configuration is a line through its 1×, 3×, 10×
// runs (dots, labelled); a diamond is its run after the capacity halved.
// The goal region (goodput ≥ 0.9 / 0.85, p99 ≤ 2× / 3× unloaded) is shaded.
//
//   node benches/e2e/lib/plot.mjs results.json out.svg   # redraw from --json output
import { readFileSync, writeFileSync } from "node:fs";

const COLORS = {
  fixed: "#7f7f7f",
  "fixed+queue": "#17becf",
  aimd: "#d62728",
  gradient2: "#1f77b4",
  vegas: "#2ca02c",
  "gradient2+queue": "#9467bd",
  "p-limit": "#ff7f0e",
  naive: "#8c564b",
};
const W = 460;
const H = 340;
const M = { left: 52, right: 14, top: 30, bottom: 44 };
const X_MIN = 30;
const X_MAX = 10_000;
const Y_MAX = 1.1;

const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");
const x = (ms) => M.left + ((Math.log10(Math.min(Math.max(ms, X_MIN), X_MAX)) - Math.log10(X_MIN)) / (Math.log10(X_MAX) - Math.log10(X_MIN))) * (W - M.left - M.right);
const y = (g) => H - M.bottom - (Math.min(Math.max(g, 0), Y_MAX) / Y_MAX) * (H - M.top - M.bottom);

function panel(rows, arrival, meta, dx) {
  const goal = arrival === "smooth" ? { g: 0.9, p99: 2 * meta.unloaded.p50 } : { g: 0.85, p99: 3 * meta.unloaded.p50 };
  const out = [`<g transform="translate(${dx},0)">`];
  out.push(`<text x="${W / 2}" y="18" text-anchor="middle" font-weight="bold">${esc(arrival)} arrivals</text>`);
  out.push(
    `<rect x="${x(X_MIN)}" y="${y(Y_MAX)}" width="${x(goal.p99) - x(X_MIN)}" height="${y(goal.g) - y(Y_MAX)}" fill="#2ca02c" opacity="0.08"/>`,
  );
  for (const ms of [30, 50, 100, 200, 500, 1000, 2000, 5000, 10000]) {
    out.push(`<line x1="${x(ms)}" x2="${x(ms)}" y1="${y(0)}" y2="${y(Y_MAX)}" stroke="#eee"/>`);
    out.push(`<text x="${x(ms)}" y="${H - M.bottom + 14}" text-anchor="middle" font-size="10">${ms >= 1000 ? `${ms / 1000}s` : ms}</text>`);
  }
  for (let g = 0; g <= 1.0001; g += 0.2) {
    out.push(`<line x1="${x(X_MIN)}" x2="${x(X_MAX)}" y1="${y(g)}" y2="${y(g)}" stroke="#eee"/>`);
    out.push(`<text x="${M.left - 6}" y="${y(g) + 3}" text-anchor="end" font-size="10">${g.toFixed(1)}</text>`);
  }
  out.push(`<line x1="${x(X_MIN)}" x2="${x(X_MAX)}" y1="${y(goal.g)}" y2="${y(goal.g)}" stroke="#2ca02c" stroke-dasharray="4 3"/>`);
  out.push(`<line x1="${x(goal.p99)}" x2="${x(goal.p99)}" y1="${y(0)}" y2="${y(Y_MAX)}" stroke="#2ca02c" stroke-dasharray="4 3"/>`);
  out.push(`<rect x="${M.left}" y="${M.top}" width="${W - M.left - M.right}" height="${H - M.top - M.bottom}" fill="none" stroke="#999"/>`);
  out.push(`<text x="${W / 2}" y="${H - 8}" text-anchor="middle" font-size="11">admitted (2xx) p99, ms (log)</text>`);
  out.push(`<text transform="translate(14,${H / 2}) rotate(-90)" text-anchor="middle" font-size="11">goodput ÷ capacity</text>`);
  for (const [config, color] of Object.entries(COLORS)) {
    const runs = rows
      .filter((r) => r.config === config && r.arrival === arrival && r.kind === "level" && Number.isFinite(r.admitted.p99))
      .sort((a, b) => a.level - b.level);
    if (runs.length > 0) {
      const points = runs.map((r) => `${x(r.admitted.p99).toFixed(1)},${y(r.goodput).toFixed(1)}`).join(" ");
      out.push(`<polyline points="${points}" fill="none" stroke="${color}" stroke-width="1.5" opacity="0.8"/>`);
    }
    for (const r of runs) {
      out.push(`<circle cx="${x(r.admitted.p99).toFixed(1)}" cy="${y(r.goodput).toFixed(1)}" r="3.5" fill="${color}"/>`);
      out.push(`<text x="${(x(r.admitted.p99) + 5).toFixed(1)}" y="${(y(r.goodput) - 4).toFixed(1)}" font-size="9" fill="${color}">${r.level}×</text>`);
    }
    const halved = rows.find((r) => r.config === config && r.arrival === arrival && r.kind === "halving");
    if (halved && Number.isFinite(halved.admitted.p99)) {
      const [cx, cy] = [x(halved.admitted.p99), y(halved.goodput)];
      out.push(`<path d="M${cx} ${cy - 5} L${cx + 5} ${cy} L${cx} ${cy + 5} L${cx - 5} ${cy} Z" fill="none" stroke="${color}" stroke-width="1.5"/>`);
    }
  }
  out.push("</g>");
  return out.join("\n");
}

/** The whole figure for the rows of benches/e2e/run.mjs. */
export function plotSvg(rows, meta) {
  const arrivals = [...new Set(rows.map((r) => r.arrival))];
  const present = Object.keys(COLORS).filter((c) => rows.some((r) => r.config === c));
  const legendY = H + 8;
  const legend = present
    .map((c, i) => {
      const lx = 20 + (i % 4) * 230;
      const ly = legendY + Math.floor(i / 4) * 18;
      return `<rect x="${lx}" y="${ly}" width="12" height="12" fill="${COLORS[c]}"/><text x="${lx + 18}" y="${ly + 10}" font-size="11">${esc(c)}</text>`;
    })
    .join("\n");
  const note = `origins 2 × ${meta.slots} slots × ${meta.latencyMs} ms (capacity ${meta.capacity} req/s); dots 1×/3×/10×, diamond: after the capacity halved (÷ ${meta.capacity / 2}); shaded: the goal`;
  const height = legendY + Math.ceil(present.length / 4) * 18 + 22;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W * arrivals.length}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    ...arrivals.map((a, i) => panel(rows, a, meta, i * W)),
    legend,
    `<text x="20" y="${height - 8}" font-size="10" fill="#555">${esc(note)}</text>`,
    "</svg>",
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [input, output] = process.argv.slice(2);
  const { meta, rows } = JSON.parse(readFileSync(input, "utf8"));
  writeFileSync(output, plotSvg(rows, meta));
}
