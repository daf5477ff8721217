// From the responses of one load run to the figures of a table row, and the
// workerd RSS and CPU samplers.
import { cpuMs, rssKiB, threadCpuMs } from "../../support/workerd.mjs";

/** The p-th percentile of sorted `xs` (nearest rank; NaN when empty). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

const sortedMs = (responses) => responses.map((r) => r.ms).sort((a, b) => a - b);

/**
 * Figures of `load` (from lib/arrivals.mjs) over the window [from, to] ms
 * of completions: goodput (2xx/s) as a fraction of `capacity`, latency of
 * the 2xx and of the 503 answers (p50/p99, every answer completed from
 * `from` on, also after `to`: a slow answer still counts), the
 * statuses, and what fell outside `contract`.
 */
export function summarize(load, { from = 0, to, capacity, contract }) {
  const inWindow = load.responses.filter((r) => r.at >= from && r.at <= to);
  const ok = inWindow.filter((r) => r.status >= 200 && r.status < 300).length;
  const seconds = (to - from) / 1000;
  const measured = load.responses.filter((r) => r.at >= from);
  const admitted = sortedMs(measured.filter((r) => r.status >= 200 && r.status < 300));
  const shed = sortedMs(measured.filter((r) => r.status === 503));
  const statuses = {};
  for (const r of load.responses) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  const outside = Object.entries(statuses)
    .filter(([status]) => !contract.has(Number(status)))
    .reduce((n, [, count]) => n + count, 0);
  return {
    goodputRps: ok / seconds,
    goodput: ok / seconds / capacity,
    admitted: { n: admitted.length, p50: percentile(admitted, 50), p99: percentile(admitted, 99) },
    shed: { n: shed.length, p50: percentile(shed, 50), p99: percentile(shed, 99) },
    statuses,
    sent: load.sent,
    errors: load.errors,
    timeouts: load.timeouts,
    unfinished: load.unfinished,
    outsideContract: outside + load.errors + load.timeouts + load.unfinished,
  };
}

/** Goodput (2xx/s ÷ `capacity`) per `binMs` of completion time, from `from` to `to`. */
export function timeline(load, { from, to, binMs, capacity }) {
  const bins = Array.from({ length: Math.ceil((to - from) / binMs) }, () => 0);
  for (const r of load.responses) {
    if (r.status < 200 || r.status >= 300 || r.at < from || r.at >= to) continue;
    bins[Math.floor((r.at - from) / binMs)]++;
  }
  return bins.map((n) => n / (binMs / 1000) / capacity);
}

/** Samples the RSS of `pid` every 100 ms; `stop()` returns the peak (KiB). */
export function rssSampler(pid) {
  let peak = rssKiB(pid);
  const timer = setInterval(() => {
    const v = rssKiB(pid);
    if (v > peak) peak = v;
  }, 100);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, rssKiB(pid) || 0);
    },
  };
}

/**
 * Samples the CPU of workerd `pid` and of this process (the load generator)
 * every `binMs`. `stop()` returns shares of one core over the run:
 * { workerd (the whole process), isolate (its busiest thread: one isolate
 * runs on one thread, so near 1.0 it is saturated), isolatePeak (the
 * busiest thread's share in the busiest bin), generator }.
 */
export function cpuSampler(pid, binMs = 500) {
  const t0 = performance.now();
  const process0 = cpuMs(pid);
  const generator0 = process.cpuUsage();
  const threads0 = threadCpuMs(pid);
  let previous = threads0;
  let previousAt = t0;
  let isolatePeak = 0;
  const busiest = (now, before) => Math.max(0, ...[...now].map(([tid, ms]) => ms - (before.get(tid) ?? 0)));
  const timer = setInterval(() => {
    const now = threadCpuMs(pid);
    const at = performance.now();
    isolatePeak = Math.max(isolatePeak, busiest(now, previous) / (at - previousAt));
    previous = now;
    previousAt = at;
  }, binMs);
  return {
    stop() {
      clearInterval(timer);
      const elapsed = performance.now() - t0;
      const generator = process.cpuUsage(generator0);
      return {
        workerd: (cpuMs(pid) - process0) / elapsed,
        isolate: busiest(threadCpuMs(pid), threads0) / elapsed,
        isolatePeak,
        generator: (generator.user + generator.system) / 1000 / elapsed,
      };
    },
  };
}

/** Origin `name`'s concurrency and queue over a run: the time-weighted mean and the peak of each. */
export function originFigures(stats, name = "a") {
  const o = stats[name];
  return { meanActive: o.meanActive, peakActive: o.peakActive, meanQueued: o.meanQueued, peakQueued: o.peakQueued };
}
