// An exception that escapes a request inside the worker (here: a proxied
// origin answers a status outside 200-599, which `new Response` refuses)
// answers a bare 500 `{"error":"internal"}`: the exception's text goes to
// the operator's log (console.error, once), never to the client.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { answer, startOrigin } from "./support/origin.mjs";
import { startWorker } from "./support/worker.mjs";

// What the exception says (workerd's RangeError), and what only the
// operator should see of the origin.
const EXCEPTION_TEXT = "Responses may only be constructed with status codes";

describe("an exception escaping a request", () => {
  let origin, worker, base;
  before(async () => {
    origin = await startOrigin("odd");
    base = `${origin.url}/private-base-7f3a/`;
    worker = await startWorker({
      origins: { odd: { url: base, maxInFlight: 4 } },
      routes: [{ prefix: "/p/", origin: "odd" }],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origin?.close();
  });

  test("answers 500 {\"error\":\"internal\"} with no message, and logs the detail once", async () => {
    origin.behave(answer("origin secret body", { status: 600 }));
    const r = await worker.get("/p/x");
    assert.equal(r.status, 500, r.text);
    assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
    assert.deepEqual(r.json, { error: "internal" }, r.text);
    assert.equal(r.json.message, undefined);
    for (const secret of [EXCEPTION_TEXT, "599", "private-base-7f3a", origin.url, "origin secret body"]) {
      assert.ok(!r.text.includes(secret), `the public body leaks ${JSON.stringify(secret)}: ${r.text}`);
    }
    const errors = (await worker.logged()).filter((l) => l.level === "error");
    const detail = errors.filter((l) => l.message.includes(EXCEPTION_TEXT));
    assert.equal(detail.length, 1, `the exception is logged once with its text; errors: ${JSON.stringify(errors)}`);
    assert.match(detail[0].message, /500 internal/);
  });
});
