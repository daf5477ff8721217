// The simulated origin of the dashboard's simulation: `capacity` slots, a
// service latency, and a FIFO for whatever exceeds its slots (used by
// sim.js's lanes and created by app.js).

/** A FIFO with O(1) push and shift and removal by marking. */
class Fifo {
  constructor() {
    this.items = [];
    this.head = 0;
    this.length = 0;
  }
  push(item) {
    this.items.push(item);
    this.length++;
  }
  shift() {
    while (this.head < this.items.length) {
      const item = this.items[this.head];
      this.items[this.head++] = undefined;
      if (this.head > 1024 && this.head * 2 > this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      if (item && !item.removed) {
        this.length--;
        return item;
      }
    }
    return undefined;
  }
  remove(item) {
    if (!item.removed) {
      item.removed = true;
      this.length--;
    }
  }
}

/**
 * The simulated origin: `capacity` requests are served at once, each for
 * about `latencyMs` (log-normal, σ `sigma`, default 0.25); the rest wait in
 * its FIFO. `setCapacity` changes the slots mid-run (lowered, the requests
 * being served finish; raised, queued ones start at once).
 * `call(signal)` resolves when the request is served; an aborted signal
 * takes the request out of the FIFO or frees its slot at once.
 */
export class Origin {
  constructor({ capacity, latencyMs, random, clock, sigma = 0.25 }) {
    this.capacity = capacity;
    this.sigma = sigma;
    this.latencyMs = latencyMs;
    this.random = random;
    this.clock = clock;
    this.busy = 0;
    this.fifo = new Fifo();
    this.started = 0;
    this.timers = new Set();
    this.disposed = false;
  }

  serviceMs() {
    // Box-Muller normal, then a log-normal with mean latencyMs.
    const u = 1 - this.random();
    const v = this.random();
    const z = Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    const sigma = this.sigma;
    return this.latencyMs * Math.exp(sigma * z - (sigma * sigma) / 2);
  }

  call(signal) {
    return new Promise((resolve, reject) => {
      const job = { resolve, reject, signal, timer: null, removed: false };
      if (signal) {
        if (signal.aborted) return reject(signal.reason);
        job.onAbort = () => {
          if (job.timer !== null) {
            clearTimeout(job.timer);
            this.timers.delete(job.timer);
            job.timer = null;
            this.busy--;
            this.pump();
          } else {
            this.fifo.remove(job);
          }
          reject(signal.reason);
        };
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.fifo.push(job);
      this.pump();
    });
  }

  setCapacity(capacity) {
    this.capacity = capacity;
    this.pump();
  }

  pump() {
    while (!this.disposed && this.busy < this.capacity && this.fifo.length > 0) {
      const job = this.fifo.shift();
      this.busy++;
      this.started++;
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        job.timer = null;
        job.signal?.removeEventListener("abort", job.onAbort);
        this.busy--;
        job.resolve();
        this.pump();
      }, this.serviceMs() / this.clock.speed);
      job.timer = timer;
      this.timers.add(timer);
    }
  }

  /** Stops every timer; pending calls never settle. */
  dispose() {
    this.disposed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.fifo = new Fifo();
  }
}
