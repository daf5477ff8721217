// The soak's client (benches/soak/client.mjs): which connection failures it
// resends (once, on a new connection) and which stay errors, against a real
// server on 127.0.0.1 that fails on cue; and the fact the resend rests on:
// workerd closes an idle keep-alive connection 5 s after its last answer.
import { after, describe, test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { connect } from "node:net";
import { Miniflare } from "miniflare";
import { soakClient } from "../../benches/soak/client.mjs";

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A server whose `fail(nth request on a connection)` decides what it does:
 * "answer", "reset" (RST before any byte) or "reset-after-headers".
 */
async function server(fail) {
  const perSocket = new WeakMap();
  const sockets = new Set();
  const seen = { requests: 0, connections: 0 };
  const http = createServer((req, res) => {
    const n = (perSocket.get(req.socket) ?? 0) + 1;
    perSocket.set(req.socket, n);
    seen.requests++;
    const what = fail(n, seen.requests);
    if (what === "reset") return req.socket.resetAndDestroy();
    if (what === "reset-after-headers") {
      res.writeHead(200, { "content-length": "10" });
      res.write("abc");
      return setTimeout(() => req.socket.resetAndDestroy(), 20);
    }
    res.end("ok");
  });
  http.on("connection", (socket) => {
    seen.connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    seen,
    base: new URL(`http://127.0.0.1:${http.address().port}`),
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => http.close(resolve));
    },
  };
}

describe("soak client: what it resends", () => {
  const cleanup = [];
  after(async () => {
    for (const c of cleanup) await c();
  });
  async function setup(fail, options = {}) {
    const s = await server(fail);
    const client = soakClient({ base: s.base, connections: 1, timeoutMs: 5000, raceIdleMs: 50, ...options });
    cleanup.push(() => client.destroy(), s.close);
    return { s, client };
  }

  test("a reused socket reset before any byte, after idling: resent once on a new connection", async () => {
    const { s, client } = await setup((n) => (n === 2 ? "reset" : "answer"));
    assert.equal((await client.send("/a")).status, 200);
    await sleep(80); // idle past raceIdleMs
    const r = await client.send("/b");
    assert.equal(r.status, 200, JSON.stringify(r));
    assert.equal(r.body.toString(), "ok");
    const report = client.report();
    assert.equal(report.retries, 1);
    assert.deepEqual(report.otherFailures, []);
    assert.equal(report.retriedIdleMs.length, 1);
    assert.ok(report.retriedIdleMs[0] >= 50, `idle ${report.retriedIdleMs[0]} ms`);
    assert.equal(s.seen.connections, 2, "the resend went on a new connection");
    assert.equal(s.seen.requests, 3);
  });

  test("with retries 0 the same reset is an error", async () => {
    const { client } = await setup((n) => (n === 2 ? "reset" : "answer"), { retries: 0 });
    await client.send("/a");
    await sleep(80);
    const r = await client.send("/b");
    assert.equal(r.error, "ECONNRESET");
    assert.equal(client.report().retries, 0);
  });

  test("a reset on a fresh socket is an error, not resent", async () => {
    const { s, client } = await setup(() => "reset");
    const r = await client.send("/a");
    assert.equal(r.error, "ECONNRESET");
    const report = client.report();
    assert.equal(report.retries, 0);
    assert.equal(report.otherFailures.length, 1);
    assert.equal(report.otherFailures[0].reused, false);
    assert.equal(s.seen.requests, 1);
  });

  test("a reused socket reset soon after its last answer (shorter than any idle timeout) is an error", async () => {
    const { s, client } = await setup((n) => (n === 2 ? "reset" : "answer"), { raceIdleMs: 2500 });
    await client.send("/a");
    const r = await client.send("/b");
    assert.equal(r.error, "ECONNRESET");
    assert.equal(client.report().retries, 0);
    assert.equal(s.seen.requests, 2);
  });

  test("a reset after bytes of the answer is an error, not resent", async () => {
    const { s, client } = await setup((n) => (n === 2 ? "reset-after-headers" : "answer"));
    await client.send("/a");
    await sleep(80);
    const r = await client.send("/b");
    assert.ok(r.error, JSON.stringify(r));
    const report = client.report();
    assert.equal(report.retries, 0);
    assert.equal(report.otherFailures.length, 1, "one failure, counted once");
    assert.ok(report.otherFailures[0].responseBytes > 0, JSON.stringify(report.otherFailures));
    assert.equal(s.seen.requests, 2);
  });

  test("a resend that fails too is an error (one resend only)", async () => {
    const { s, client } = await setup((n, total) => (total >= 2 ? "reset" : "answer"));
    await client.send("/a");
    await sleep(80);
    const r = await client.send("/b");
    assert.equal(r.error, "ECONNRESET");
    const report = client.report();
    assert.equal(report.retries, 1);
    assert.equal(report.otherFailures.length, 1, "the resend's failure");
    assert.equal(s.seen.requests, 3);
  });
});

test("workerd closes an idle keep-alive connection 5 s after its last answer, unannounced", async () => {
  const mf = new Miniflare({
    modules: true,
    script: "export default { fetch() { return new Response('ok'); } }",
    compatibilityDate: "2025-09-01",
    cf: false,
  });
  try {
    const url = new URL(await mf.ready);
    const socket = connect(Number(url.port), url.hostname);
    let text = "";
    let answeredAt;
    const closedAfter = new Promise((resolve) => {
      socket.on("data", (d) => {
        text += d;
        if (answeredAt === undefined && text.includes("\r\n\r\nok")) answeredAt = performance.now();
      });
      socket.on("end", () => resolve(performance.now() - answeredAt));
    });
    socket.write(`GET / HTTP/1.1\r\nhost: ${url.host}\r\n\r\n`);
    const idleMs = await closedAfter;
    socket.destroy();
    assert.match(text, /^HTTP\/1\.1 200/);
    assert.doesNotMatch(text, /keep-alive|connection: close/i, "the answer does not announce the timeout");
    // workerd's timer starts when it has sent the answer, this clock when the
    // answer has been read: on a busy machine the two are up to ~1 s apart.
    assert.ok(idleMs >= 4000 && idleMs < 7000, `closed after ${idleMs.toFixed(0)} ms idle`);
  } finally {
    await mf.dispose();
  }
});
