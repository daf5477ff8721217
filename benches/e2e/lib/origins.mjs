// The bench's origins in a child process (benches/e2e/origin.mjs, servers in
// benches/support/capacity-origins.mjs), and the messages to drive them:
// stats, reset (counters, peaks and means restart), and a new capacity.
import { fork } from "node:child_process";
import { join } from "node:path";
import { ROOT } from "../../support/workerd.mjs";

/** Forks the origins `names`, each `concurrency` slots of `latencyMs`. */
export async function startOrigins({ names, concurrency, latencyMs }) {
  const child = fork(join(ROOT, "benches/e2e/origin.mjs"), [JSON.stringify({ names, concurrency, latencyMs })]);
  const reply = (key) =>
    new Promise((resolve) => {
      const on = (m) => {
        if (m[key] !== undefined) {
          child.off("message", on);
          resolve(m[key]);
        }
      };
      child.on("message", on);
    });
  const ask = (message, key) => {
    const answer = reply(key);
    child.send(message);
    return answer;
  };
  const ports = await reply("ports");
  return {
    url: (name) => `http://127.0.0.1:${ports[name]}`,
    /** { name: { arrived, served, aborted, peakActive, peakQueued, active, queued, capacity, meanActive, meanQueued } } */
    stats: () => ask("stats", "stats"),
    reset: () => ask("reset", "reset"),
    /** Every origin's slots become `n`. */
    setCapacity: (n) => ask({ capacity: n }, "capacity"),
    /** Resolves once no origin has a request active or queued (or after `timeoutMs`). */
    async idle(timeoutMs = 15_000) {
      const start = Date.now();
      for (;;) {
        const stats = await ask("stats", "stats");
        if (Object.values(stats).every((o) => o.active === 0 && o.queued === 0)) return true;
        if (Date.now() - start > timeoutMs) return false;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => child.disconnect(),
  };
}
