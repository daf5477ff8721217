// maxQueueWait "auto" in the gateway (docs/gateway.md): in real workerd
// against a real origin, a request whose expected wait is longer than one
// service time is answered 503 queue_timeout at arrival instead of after
// queueTimeoutMs; the same burst under the default waits whole. The origin
// answers the warm-up in ~10 ms (the completion rate is measured on the
// worker's clock); the burst is judged while the origin holds every
// request at a gate, and every wait is on the stats.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { after, answer, gate, startOrigin } from "./support/origin.mjs";
import { idle, startWorker } from "./support/worker.mjs";

const LIMIT = { maxInFlight: 2, maxQueue: 16, queueTimeoutMs: 20000 };

describe('maxQueueWait "auto"', () => {
  let auto, plain, worker;
  before(async () => {
    auto = await startOrigin("auto");
    plain = await startOrigin("plain");
    worker = await startWorker({
      statsPublic: true,
      origins: {
        auto: { url: auto.url, ...LIMIT, maxQueueWait: "auto" },
        plain: { url: plain.url, ...LIMIT },
      },
      routes: [
        { prefix: "/auto/", origin: "auto" },
        { prefix: "/plain/", origin: "plain" },
      ],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([auto, plain].map((o) => o?.close()));
  });

  /** Warm-up rounds wider than the limit (some requests wait: the rate is read then), then a gated burst of 12. */
  async function burst(origin, prefix) {
    origin.behave(answer({ ok: true }, { delayMs: 10 }));
    for (let round = 0; round < 8; round++) {
      const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => worker.get(`${prefix}warm-${round}-${i}`)));
      for (const r of answers) assert.equal(r.status, 200, r.text);
    }
    const before = (await worker.stats()).origins[prefix.slice(1, -1)].queueTimeouts;
    const held = gate();
    origin.behave(after(held, answer({ ok: true })));
    const requests = Array.from({ length: 12 }, (_, i) => worker.get(`${prefix}burst-${i}`));
    const name = prefix.slice(1, -1);
    const stats = await worker.until(
      (s) => s.origins[name].inFlight === 2 && s.origins[name].queued + s.origins[name].queueTimeouts - before === 10,
      { what: "2 in flight, the other 10 queued or refused" },
    );
    return { requests, held, refused: stats.origins[name].queueTimeouts - before };
  }

  test("a burst's excess is answered 503 at once while the origin holds every admitted request", async () => {
    const { requests, held, refused } = await burst(auto, "/auto/");
    assert.ok(refused >= 6 && refused <= 9, `refused at arrival: ${refused} of 12`);
    // Counted while the origin still holds the admitted two: the refusals
    // came at arrival, not after queueTimeoutMs (20 s).
    held.open();
    const answers = await Promise.all(requests);
    const refusals = answers.filter((r) => r.status === 503);
    assert.equal(refusals.length, refused);
    for (const r of refusals) {
      assert.deepEqual(r.json, { error: "overloaded", scope: "origin:auto", reason: "queue_timeout" });
    }
    assert.equal(answers.filter((r) => r.status === 200).length, 12 - refused);
    await worker.until(idle, { what: "idle" });
  });

  test('the same burst under the default ("timeout") waits whole', async () => {
    const { requests, held, refused } = await burst(plain, "/plain/");
    assert.equal(refused, 0);
    held.open();
    for (const r of await Promise.all(requests)) assert.equal(r.status, 200, r.text);
    await worker.until(idle, { what: "idle" });
  });
});
