// An origin that answers a status the gateway cannot relay on a prefix
// route (outside 200-599, or 101 Switching Protocols: `new Response` takes
// neither, and a proxied upgrade is not relayed) gets the contract's 502
// `{"error":"bad_gateway","origin":<name>,"status":<its status>}`; its body
// is cancelled and every permit is back when the 502 arrives, not after the
// body's idle timeout (30 s here: the origin's default).
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { answer, drip, startOrigin, within } from "./support/origin.mjs";
import { startWorker } from "./support/worker.mjs";

/**
 * Writes `statusLine` and `headers` straight to the socket, then `first`,
 * and keeps the connection open until the client goes away: node:http's
 * `writeHead` sends no body after a 1xx status.
 */
function rawHead(statusLine, headers, first) {
  return async (req, _res, seen) => {
    const head = [statusLine, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)].join("\r\n");
    req.socket.write(`${head}\r\n\r\n${first}`);
    await seen.closed;
  };
}

describe("an origin status the gateway cannot relay (prefix route)", () => {
  let origin, worker;
  before(async () => {
    origin = await startOrigin("odd");
    worker = await startWorker({
      origins: { odd: { url: origin.url, maxInFlight: 4 } },
      routes: [{ prefix: "/p/", origin: "odd" }],
      statsPublic: true,
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origin?.close();
  });

  /** Right after the 502: nothing in flight, no body held (no wait). */
  async function nothingHeld(what) {
    const stats = await worker.stats();
    assert.equal(stats.global.inFlight, 0, `global inFlight after ${what}: ${JSON.stringify(stats)}`);
    assert.equal(stats.origins.odd.inFlight, 0, `origin inFlight after ${what}: ${JSON.stringify(stats)}`);
    assert.equal(await worker.heldBodies(), 0, `held bodies after ${what}`);
  }

  for (const status of [600, 999]) {
    test(`${status} with a whole body: 502 bad_gateway with "status": ${status}, permits back at once`, async () => {
      origin.behave(answer("origin body", { status }));
      for (let i = 0; i < 3; i++) {
        const r = await worker.get("/p/x");
        assert.equal(r.status, 502, r.text);
        assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
        assert.match(r.headers.get("server-timing") ?? "", /\bodd;dur=/);
        assert.deepEqual(r.json, { error: "bad_gateway", origin: "odd", status }, r.text);
        await nothingHeld(`${i + 1} answers of ${status}`);
      }
    });

    test(`${status} with a body still streaming: 502, the origin's body cancelled, permits back`, async () => {
      const body = drip({ status, first: "chunk 0\n" });
      origin.behave(body);
      const aborted = origin.aborted;
      try {
        const r = await worker.get("/p/streaming");
        assert.equal(r.status, 502, r.text);
        assert.deepEqual(r.json, { error: "bad_gateway", origin: "odd", status }, r.text);
        await nothingHeld(`a streaming ${status}`);
        // The origin's connection goes away at once, not at the 30 s idle
        // timeout. (workerd also drops a finished request's subrequests, so
        // this holds without the gateway's own cancel too.)
        await within(origin.aborts(aborted + 1), 2000, "the origin sees its body cancelled");
      } finally {
        body.end();
      }
    });
  }

  test("101 Switching Protocols (an upgrade it was not asked for): 502 with \"status\": 101, permits back", async () => {
    const upgraded = { Connection: "Upgrade", Upgrade: "websocket" };
    origin.behave(rawHead("HTTP/1.1 101 Switching Protocols", upgraded, "raw bytes"));
    const r = await worker.get("/p/ws");
    assert.equal(r.status, 502, r.text);
    assert.equal(r.json?.error, "bad_gateway", r.text);
    assert.equal(r.json?.origin, "odd", r.text);
    assert.deepEqual(r.json, { error: "bad_gateway", origin: "odd", status: 101 }, r.text);
    await nothingHeld("a 101");
  });

  test("the same worker then relays a normal answer", async () => {
    origin.behave(answer("fine", { status: 299 }));
    const r = await worker.get("/p/ok");
    assert.equal(r.status, 299, r.text);
    assert.equal(r.text, "fine");
    await nothingHeld("a relayed 299");
  });
});
