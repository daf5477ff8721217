// The dashboard's entry: tabs, the simulation (edgeshed's real Limiter from
// the wasm package, against a simulated origin) and the live mode.
//
// URL parameters (all optional):
//   ?mode=live            open on the live tab (also #live)
//   ?speed=2              run the simulation at 2× wall-clock time (0.1 to 20)
//   ?seed=7               seed of the simulated arrivals and latencies
//   ?offered=600&capacity=8&latency=50&maxInFlight=8&maxQueue=16&queueTimeoutMs=100&deadlineMs=500&compare=0
//                         initial knob values
//   ?algorithm=gradient2  the limit: fixed (default), aimd, gradient2 or vegas
//   ?critical=20&sheddable=30  the criticality mix in % (default calls: the rest)
//
// Tests read window.__edgeshed (see `hook` below) instead of sleeping.
import { Clock, LimitedLane, LoadGenerator, Origin, UnboundedLane, rng } from "./sim.js";
import { SeriesStore, recent } from "./metrics.js";
import { COLORS, LaneView, formatMs } from "./lane.js";
import { LiveMode } from "./live.js";
import { KNOBS, knob, limiterOptions, mix, showKnobs } from "./knobs.js";
import { LevelLanes, pickLevel } from "./classes.js";
import { onTab, showTab } from "./tabs.js";

const params = new URLSearchParams(location.search);
const WINDOW_S = 60;
const SAMPLE_MS = 100;

const hook = {
  ready: false,
  mode: "sim",
  error: null,
  sim: null,
  live: null,
};
window.__edgeshed = hook;

const $ = (selector) => document.querySelector(selector);

function showError(message) {
  const el = $("#load-error");
  el.textContent = message;
  el.hidden = false;
  hook.error = message;
}

// ------------------------------------------------------------- simulation ---

const speed = Math.min(20, Math.max(0.1, Number(params.get("speed") ?? 1) || 1));
const seed = Number.parseInt(params.get("seed") ?? "1", 10) || 1;

const COUNTERS = [
  { key: "offered", label: "offered", color: COLORS.offered, hint: "requests that arrived" },
  { key: "admitted", label: "admitted", color: COLORS.admitted, hint: "requests given a slot (without a limiter: every request)" },
  { key: "ok", label: "completed", color: COLORS.completed, hint: "requests the origin answered" },
  { key: "inFlight", label: "in flight now", color: COLORS.inFlight, hint: "requests holding a slot" },
  { key: "queued", label: "queued now", color: COLORS.queued, hint: "requests waiting, held in memory" },
  { key: "shed", label: "shed (503)", color: COLORS.shed, hint: "rejected at once: every slot taken, queue full" },
  { key: "displaced", label: "displaced (503)", color: COLORS.shed, hint: "pushed out of a full queue by a more critical call" },
  { key: "queueTimeouts", label: "timed out (503)", color: COLORS.shed, hint: "rejected after waiting queueTimeoutMs" },
  { key: "deadline", label: "deadline (504)", color: COLORS.deadline, hint: "deadlineMs passed, queued or running" },
];

class Simulation {
  constructor(Limiter) {
    this.Limiter = Limiter;
    this.lanesEl = $("#sim-lanes");
    this.limitedView = new LaneView(this.lanesEl, {
      id: "edgeshed",
      title: "With edgeshed",
      subtitle: "limiter.run(callOrigin, { deadlineMs, criticality }): bounded work, fast 503s.",
      tone: "good",
      counters: COUNTERS,
      limitChart: { title: "Limit against the origin's capacity", capacityLabel: "origin capacity (slots)" },
    });
    this.unboundedView = new LaneView(this.lanesEl, {
      id: "unbounded",
      title: "No limiter",
      subtitle: "Every request is accepted and held in memory until the origin gets to it.",
      tone: "bad",
      counters: COUNTERS,
    });
    this.levelLanes = new LevelLanes(this.lanesEl);
    this.paused = false;
    this.start();
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  start() {
    this.clock = new Clock(speed);
    this.random = rng(seed);
    // The levels have a generator of their own: the arrivals stay those of `seed`.
    const levelRandom = rng(seed * 31 + 3);
    const originOptions = () => ({ capacity: knob("capacity"), latencyMs: knob("latency"), clock: this.clock });
    this.limited = new LimitedLane({
      Limiter: this.Limiter,
      origin: new Origin({ ...originOptions(), random: rng(seed * 31 + 1) }),
      options: limiterOptions(),
      mix: mix(),
      clock: this.clock,
    });
    this.limitedStore = new SeriesStore();
    this.unbounded = null;
    this.unboundedStore = new SeriesStore();
    this.levelLanes.reset();
    this.setCompare($("#compare").checked);
    this.generator = new LoadGenerator({
      rate: this.paused ? 0 : knob("offered"),
      random: this.random,
      clock: this.clock,
      onArrival: () => {
        const shares = mix();
        this.limited.arrive(pickLevel(levelRandom(), shares), shares.critical > 0 || shares.sheddable > 0);
        this.unbounded?.arrive();
      },
    });
    this.samples = 0;
  }

  stop() {
    this.generator.dispose();
    this.limited.dispose();
    this.unbounded?.dispose();
  }

  reset() {
    this.stop();
    this.start();
    this.sample();
  }

  setCompare(on) {
    if (on && !this.unbounded) {
      this.unbounded = new UnboundedLane({
        origin: new Origin({ capacity: knob("capacity"), latencyMs: knob("latency"), clock: this.clock, random: rng(seed * 31 + 2) }),
        clock: this.clock,
      });
      this.unboundedStore.reset();
    } else if (!on && this.unbounded) {
      this.unbounded.dispose();
      this.unbounded = null;
    }
    this.unboundedView.el.hidden = !on;
    this.lanesEl.classList.toggle("single", !on);
  }

  setPaused(paused) {
    this.paused = paused;
    this.generator.setRate(paused ? 0 : knob("offered"));
  }

  applyKnobs() {
    if (!this.paused) this.generator.setRate(knob("offered"));
    for (const lane of [this.limited, this.unbounded]) {
      if (!lane) continue;
      lane.origin.latencyMs = knob("latency");
      lane.origin.setCapacity(knob("capacity"));
    }
    this.limited.setOptions(limiterOptions());
  }

  sample() {
    const nowMs = this.clock.now();
    const t = nowMs / 1000;
    const record = (lane, store) => {
      const s = lane.stats();
      const lat = lane.latency.summary(t);
      // The limit and the origin's true capacity: the limiter's lane only.
      const limits = s.limit === undefined ? {} : { limit: s.limit, capacity: s.capacity };
      store.sample(
        t,
        { inFlight: s.inFlight, queued: s.queued, p50: lat.p50, p99: lat.p99, ...limits },
        { offered: s.offered, admitted: s.admitted, completed: s.ok, shed: s.shed + s.displaced + s.queueTimeouts },
      );
      return s;
    };
    const limited = record(this.limited, this.limitedStore);
    const unbounded = this.unbounded ? record(this.unbounded, this.unboundedStore) : null;
    this.levelLanes.sample(t, limited.byCriticality, mix());
    this.samples++;

    this.limitedView.setCounters(limited);
    if (unbounded) {
      this.unboundedView.setCounters(unbounded);
      this.unboundedView.setBanner(
        unbounded.stopped
          ? `Stopped at ${this.unbounded.maxPending.toLocaleString("en-US")} requests held in memory: a real worker would have been killed long before.`
          : null,
      );
    }

    this.draw(t, limited);

    hook.sim = {
      time: t,
      speed,
      seed,
      samples: this.samples,
      offered: knob("offered"),
      options: limiterOptions(),
      mix: mix(),
      origin: { capacity: knob("capacity"), latencyMs: knob("latency") },
      lanes: { edgeshed: limited, unbounded },
      // The limit chart's data: the limit and the origin's capacity over the last 60 s.
      limitSeries: recent(this.limitedStore.store, t - WINDOW_S, ["limit", "capacity"]),
      latency: {
        edgeshed: { p50: last(this.limitedStore.store.p50), p99: last(this.limitedStore.store.p99) },
        unbounded: unbounded ? { p50: last(this.unboundedStore.store.p50), p99: last(this.unboundedStore.store.p99) } : null,
      },
    };
  }

  draw(t, limited) {
    const view = { now: t, windowS: WINDOW_S };
    const options = limiterOptions();
    const adaptive = options.algorithm !== "fixed";
    const capacityRps = (knob("capacity") * 1000) / knob("latency");
    const capacityRef = { value: capacityRps, label: `origin capacity ≈ ${Math.round(capacityRps)}/s`, color: COLORS.capacity };
    this.levelLanes.draw(view, { throughput: [] });
    const limitedRefs = {
      concurrency: [
        adaptive
          ? { value: limited.limit, label: `limit ${limited.limit} (${options.algorithm})`, color: COLORS.limit }
          : { value: options.maxInFlight, label: `maxInFlight ${options.maxInFlight}`, color: COLORS.limit },
        ...(options.maxQueue > 0 ? [{ value: options.maxQueue, label: `maxQueue ${options.maxQueue}`, color: "#b77900" }] : []),
      ],
      throughput: [capacityRef],
      latency: options.deadlineMs > 0 ? [{ value: options.deadlineMs, label: `deadline ${formatMs(options.deadlineMs)}`, color: COLORS.deadline }] : [],
    };
    if (!this.unbounded) {
      this.limitedView.draw(this.limitedStore.store, { ...view, refs: limitedRefs });
      return;
    }
    const unboundedRefs = {
      concurrency: [{ value: knob("capacity"), label: `origin slots ${knob("capacity")}`, color: COLORS.capacity }],
      throughput: [capacityRef],
      latency: [],
    };
    // Both columns share their y axes, so the pile-up is seen at its true size.
    const a = this.limitedView.maxima(this.limitedStore.store, view);
    const b = this.unboundedView.maxima(this.unboundedStore.store, view);
    const yMax = {};
    for (const key of Object.keys(a)) yMax[key] = Math.max(a[key], b[key]);
    yMax.latency = Math.max(yMax.latency, options.deadlineMs);
    this.limitedView.draw(this.limitedStore.store, { ...view, yMax, refs: limitedRefs });
    this.unboundedView.draw(this.unboundedStore.store, { ...view, yMax, refs: unboundedRefs });
  }
}

function last(values) {
  return values && values.length > 0 ? values[values.length - 1] : null;
}

// ------------------------------------------------------------------- tabs ---

let simulation = null;
let live = null;

function selectMode(mode) {
  hook.mode = mode;
  showTab(mode);
  simulation?.setPaused(mode !== "sim");
  if (mode === "live") {
    live ??= new LiveMode({ hook, windowS: WINDOW_S });
    live.start();
  } else {
    live?.stop();
  }
}
onTab(selectMode, () => hook.mode);
for (const form of document.querySelectorAll("form")) form.addEventListener("submit", (event) => event.preventDefault());

// ------------------------------------------------------------------ start ---

showKnobs();
for (const k of Object.values(KNOBS)) {
  k.input.addEventListener("input", () => {
    showKnobs();
    simulation?.applyKnobs();
  });
}
$("#compare").addEventListener("change", (event) => simulation?.setCompare(event.target.checked));
$("#algorithm").addEventListener("change", () => {
  showKnobs();
  simulation?.applyKnobs();
});
$("#reset").addEventListener("click", () => simulation?.reset());

const startMode = params.get("mode") === "live" || location.hash === "#live" ? "live" : "sim";

try {
  const { Limiter } = await import("edgeshed");
  simulation = new Simulation(Limiter);
} catch (error) {
  showError(
    `Could not load the edgeshed package (${error?.message ?? error}). Build it with ./scripts/build-pkg.sh and serve the page with node scripts/serve-www.mjs.`,
  );
}
selectMode(startMode);
hook.ready = true;
document.documentElement.dataset.ready = "true";
