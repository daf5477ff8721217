// An exception that escapes a request inside the worker answers a bare 500
// `{"error":"internal"}`: the exception's text goes to the operator's log
// (console.error, once), never to the client; and a proxied body already
// holding the request's permits is cancelled, so they come back at once,
// not at the body's idle timeout. The exception is real: the handler runs
// under support/refusing-response.mjs, whose `Response` constructor throws
// for headers carrying `x-test-refuse-response` (here: sent by the origin
// of a prefix route, so the throw comes after the body is held).
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { drip, startOrigin, within } from "./support/origin.mjs";
import { startWorker } from "./support/worker.mjs";

// What the exception says (support/refusing-response.mjs), and what only
// the operator should see of the origin.
const EXCEPTION_TEXT = "test entry: this Response is refused";
const ORIGIN_SECRET = "origin secret 3c9d";

describe("an exception escaping a request", () => {
  let origin, worker, base;
  before(async () => {
    origin = await startOrigin("odd");
    base = `${origin.url}/private-base-7f3a/`;
    worker = await startWorker(
      {
        // The body's idle timeout is the origin's (30 s by default): far
        // longer than the bounded wait below.
        origins: { odd: { url: base, maxInFlight: 4 } },
        routes: [{ prefix: "/p/", origin: "odd" }],
        statsPublic: true,
      },
      { scriptPath: "tests/worker/support/refusing-response.mjs" },
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await origin?.close();
  });

  test("answers 500 {\"error\":\"internal\"} with no message, logs the detail once, frees the held body", async () => {
    const body = drip({ first: `${ORIGIN_SECRET} body\n`, headers: { "x-test-refuse-response": ORIGIN_SECRET } });
    origin.behave(body);
    const aborted = origin.aborted;
    try {
      const r = await worker.get("/p/x");
      assert.equal(r.status, 500, r.text);
      assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
      assert.deepEqual(r.json, { error: "internal" }, r.text);
      assert.equal(r.json.message, undefined);
      for (const secret of [EXCEPTION_TEXT, ORIGIN_SECRET, "private-base-7f3a", origin.url]) {
        assert.ok(!r.text.includes(secret), `the public body leaks ${JSON.stringify(secret)}: ${r.text}`);
      }
      const errors = (await worker.logged()).filter((l) => l.level === "error");
      const detail = errors.filter((l) => l.message.includes(EXCEPTION_TEXT));
      assert.equal(detail.length, 1, `the exception is logged once with its text; errors: ${JSON.stringify(errors)}`);
      assert.match(detail[0].message, /500 internal/);
      // The body held the global and the origin permit when the exception
      // came: cancelled, it lets them go now (bounded: 2 s, not 30).
      const stats = await worker.until((s) => s.global.inFlight === 0 && s.origins.odd.inFlight === 0, {
        timeoutMs: 2000,
        what: "the permits of the body held when the exception came",
      });
      assert.equal(stats.origins.odd.inFlight, 0);
      assert.equal(await worker.heldBodies(), 0, "held bodies after the exception");
      await within(origin.aborts(aborted + 1), 2000, "the origin sees its body cancelled");
    } finally {
      body.end();
    }
  });
});
