// The in-browser simulation: an open-loop load
// generator (Poisson arrivals from a seeded generator), and two lanes fed
// the same arrivals: one through edgeshed's real Limiter (the wasm package),
// one straight into the origin with no limiter.
//
// Times: the simulation runs at `speed` × wall-clock time. Everything shown
// is in simulated time; the Limiter's timers and the origin's latency are
// divided by `speed` before they reach setTimeout.
import { LatencyWindow } from "./metrics.js";
import { LevelTally, addByCriticality, emptyByCriticality } from "./classes.js";
export { Origin } from "./origin.js";

/** A small seeded PRNG (mulberry32), uniform in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function toRealMs(ms, speed) {
  return Math.max(1, Math.round(ms / speed));
}

/** `{ maxInFlight }` or `{ adaptive }`: the limit part of a lane's Limiter options. */
export function limitOption({ algorithm = "fixed", maxInFlight }) {
  if (algorithm === "fixed") return { maxInFlight };
  const initialLimit = Math.min(64, Math.max(1, maxInFlight));
  return { adaptive: { algorithm, initialLimit, minLimit: 1, maxLimit: 64 } };
}

/**
 * The edgeshed lane: every arrival goes through `limiter.run(work,
 * { deadlineMs, criticality })` and the work is a call to its own origin. Changing the
 * limiter's options makes a new Limiter (the old one drains on its own;
 * its counters stay in the totals). `options.algorithm` "fixed" makes a
 * `maxInFlight` limiter; "aimd", "gradient2" or "vegas" an adaptive one
 * starting at `maxInFlight` (within [1, 64]), whose limit follows the origin.
 */
export class LimitedLane {
  constructor({ Limiter, origin, options, clock }) {
    this.Limiter = Limiter;
    this.origin = origin;
    this.clock = clock;
    this.latency = new LatencyWindow(1);
    this.offered = 0;
    this.ok = 0;
    this.deadline = 0;
    this.errors = 0;
    this.retired = []; // older limiters still draining
    this.base = { admitted: 0, shed: 0, queueTimeouts: 0, byCriticality: emptyByCriticality() };
    this.levels = new LevelTally();
    this.gen = null;
    this.setOptions(options);
  }

  setOptions(options) {
    const speed = this.clock.speed;
    const limiterOptions = { ...limitOption(options), maxQueue: options.maxQueue };
    if (options.maxQueue > 0) limiterOptions.queueTimeoutMs = toRealMs(options.queueTimeoutMs, speed);
    const key = JSON.stringify(limiterOptions);
    this.options = { ...options };
    this.runOptions = options.deadlineMs > 0 ? { deadlineMs: toRealMs(options.deadlineMs, speed) } : {};
    if (this.gen && this.gen.key === key) return;
    if (this.gen) this.retired.push(this.gen);
    this.gen = { key, limiter: new this.Limiter(limiterOptions), running: 0, maxRunning: 0, maxInFlight: 0, maxQueued: 0, maxOrigin: 0 };
  }

  /** One call of `criticality` ("critical", "default" or "sheddable"); `named`
   *  false sends it without one (an all-default mix: no reserve is installed). */
  arrive(criticality = "default", named = true) {
    this.offered++;
    this.levels.offer(criticality);
    const gen = this.gen;
    const start = this.clock.now();
    const work = (signal) => {
      gen.running++;
      if (gen.running > gen.maxRunning) gen.maxRunning = gen.running;
      // Counted out synchronously when the work settles or is aborted (a
      // passed deadline), not in a later microtask.
      let counted = true;
      const out = () => {
        if (counted) {
          counted = false;
          gen.running--;
        }
      };
      signal?.addEventListener("abort", out, { once: true });
      return this.origin.call(signal).then(
        (value) => {
          out();
          return value;
        },
        (error) => {
          out();
          throw error;
        },
      );
    };
    gen.limiter.run(work, named ? { ...this.runOptions, criticality } : this.runOptions).then(
      () => {
        this.ok++;
        this.levels.served(criticality);
        const end = this.clock.now();
        this.latency.add(end / 1000, end - start);
      },
      (error) => {
        this.levels.failed(criticality, error);
        if (error?.name === "DeadlineError") this.deadline++;
        else if (error?.name !== "OverloadedError") {
          this.errors++;
          console.error("edgeshed simulation: unexpected rejection", error);
        }
      },
    );
    this.observe();
  }

  /** Tracks the largest in-flight / queued counts the current limiter reported. */
  observe() {
    const s = this.gen.limiter.stats();
    if (s.inFlight > this.gen.maxInFlight) this.gen.maxInFlight = s.inFlight;
    if (s.queued > this.gen.maxQueued) this.gen.maxQueued = s.queued;
    if (this.origin.busy > this.gen.maxOrigin) this.gen.maxOrigin = this.origin.busy;
    return s;
  }

  stats() {
    const now = this.observe();
    const total = { inFlight: now.inFlight, queued: now.queued, admitted: now.admitted, shed: now.shed, queueTimeouts: now.queueTimeouts };
    for (const key of ["admitted", "shed", "queueTimeouts"]) total[key] += this.base[key];
    const byCriticality = addByCriticality(addByCriticality(emptyByCriticality(), this.base.byCriticality), now.byCriticality);
    const still = [];
    for (const gen of this.retired) {
      const s = gen.limiter.stats();
      if (s.inFlight === 0 && s.queued === 0) {
        for (const key of ["admitted", "shed", "queueTimeouts"]) this.base[key] += s[key];
        for (const key of ["admitted", "shed", "queueTimeouts"]) total[key] += s[key];
        addByCriticality(this.base.byCriticality, s.byCriticality);
        addByCriticality(byCriticality, s.byCriticality);
        gen.limiter.free();
      } else {
        still.push(gen);
        total.inFlight += s.inFlight;
        total.queued += s.queued;
        for (const key of ["admitted", "shed", "queueTimeouts"]) total[key] += s[key];
        addByCriticality(byCriticality, s.byCriticality);
      }
    }
    this.retired = still;
    // Per level (the limiter's byCriticality and the page's tally of the refusals' reasons).
    const levels = this.levels.summary(byCriticality);
    return {
      ...total,
      displaced: levels.critical.displaced + levels.default.displaced + levels.sheddable.displaced,
      byCriticality: levels,
      offered: this.offered,
      ok: this.ok,
      deadline: this.deadline,
      errors: this.errors,
      // The current limit (an adaptive one moves), and the origin's slots.
      limit: now.limit,
      algorithm: this.options.algorithm ?? "fixed",
      capacity: this.origin.capacity,
      maxQueue: this.options.maxQueue,
      // The largest values seen under the current options (the previous
      // limiter, if any, may still be draining): in flight and queued as the
      // Limiter reports them, calls of the work function running at once,
      // and requests at the origin.
      maxInFlightSeen: this.gen.maxInFlight,
      maxQueuedSeen: this.gen.maxQueued,
      maxRunningSeen: this.gen.maxRunning,
      maxAtOriginSeen: this.gen.maxOrigin,
      pending: total.inFlight + total.queued,
    };
  }

  dispose() {
    this.origin.dispose();
  }
}

/**
 * The lane without a limiter: every arrival is admitted and goes straight
 * to the origin, whose FIFO holds whatever exceeds its slots. It stops
 * taking arrivals at `maxPending` requests held (the page says so).
 */
export class UnboundedLane {
  constructor({ origin, clock, maxPending = 100_000 }) {
    this.origin = origin;
    this.clock = clock;
    this.maxPending = maxPending;
    this.latency = new LatencyWindow(1);
    this.offered = 0;
    this.ok = 0;
    this.stopped = false;
  }

  arrive() {
    if (this.stopped) return;
    if (this.origin.busy + this.origin.fifo.length >= this.maxPending) {
      this.stopped = true;
      return;
    }
    this.offered++;
    const start = this.clock.now();
    this.origin.call().then(() => {
      this.ok++;
      const end = this.clock.now();
      this.latency.add(end / 1000, end - start);
    });
  }

  stats() {
    const inFlight = this.origin.busy;
    const queued = this.origin.fifo.length;
    return {
      inFlight,
      queued,
      admitted: this.offered,
      shed: 0,
      displaced: 0,
      queueTimeouts: 0,
      offered: this.offered,
      ok: this.ok,
      deadline: 0,
      errors: 0,
      pending: inFlight + queued,
      stopped: this.stopped,
    };
  }

  dispose() {
    this.origin.dispose();
  }
}

/**
 * Open-loop load: Poisson arrivals at `rate` per simulated second, checked
 * every 5 ms of wall-clock time; each arrival goes to every lane.
 */
export class LoadGenerator {
  constructor({ rate, random, clock, onArrival }) {
    this.random = random;
    this.clock = clock;
    this.onArrival = onArrival;
    this.next = null;
    this.setRate(rate);
    this.timer = setInterval(() => this.tick(), 5);
  }

  setRate(rate) {
    this.rate = rate;
    this.next = rate > 0 ? this.clock.now() + this.gap() : null;
  }

  gap() {
    return (-Math.log(1 - this.random()) / this.rate) * 1000;
  }

  tick() {
    if (this.next === null) return;
    const now = this.clock.now();
    // After a stall (a busy machine, a hidden tab), skip what was missed
    // instead of a flood: at most 50 ms of arrivals at once.
    if (now - this.next > 50) this.next = now - 50;
    while (this.next <= now) {
      this.onArrival();
      this.next += this.gap();
    }
  }

  dispose() {
    clearInterval(this.timer);
  }
}

/** Simulated time in ms: `speed` × wall-clock time since `start`. */
export class Clock {
  constructor(speed = 1) {
    this.speed = speed;
    this.start = performance.now();
  }
  now() {
    return (performance.now() - this.start) * this.speed;
  }
}
