// Prefix routes: request and answer streamed through, hop-by-hop headers
// dropped, permits held for the body's lifetime, and no client-chosen host.
import { after as afterAll, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { after, answer, closedPort, drip, echo, gate, hang, startOrigin } from "./support/origin.mjs";
import { idle, serverTiming, startWorker } from "./support/worker.mjs";

const IDENTITY = { "accept-encoding": "identity" };

/** Reads from `reader` until the text read so far contains `wanted`. */
async function readUntil(reader, wanted, sofar = { text: "" }) {
  const decoder = new TextDecoder();
  while (!sofar.text.includes(wanted)) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`body ended before ${JSON.stringify(wanted)}; got ${JSON.stringify(sofar.text)}`);
    sofar.text += decoder.decode(value, { stream: true });
  }
  return sofar.text;
}

describe("prefix route", () => {
  let users, dripper, evil, slow, worker;
  before(async () => {
    const downPort = await closedPort();
    users = await startOrigin("users");
    dripper = await startOrigin("dripper");
    evil = await startOrigin("evil");
    slow = await startOrigin("slow");
    worker = await startWorker({
      statsPublic: true, // the test reads /__edgeshed/*
      retryAfterSeconds: 4,
      origins: {
        users: { url: users.url, maxInFlight: 16 },
        base: { url: `${users.url}/base` },
        single: { url: dripper.url, maxInFlight: 1, maxQueue: 0 },
        gone: { url: `http://127.0.0.1:${downPort}` },
        lazy: { url: slow.url, timeoutMs: 100 },
      },
      routes: [
        { path: "/agg", fanout: [{ origin: "users", path: "/u" }] },
        { prefix: "/proxy/", origin: "users" },
        { prefix: "/api/", origin: "base" },
        { prefix: "/one/", origin: "single" },
        { prefix: "/gone/", origin: "gone" },
        { prefix: "/lazy/", origin: "lazy" },
      ],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([users, dripper, evil, slow].map((o) => o?.close()));
  });

  test("GET /proxy/a/b?q=1 reaches <origin>/a/b?q=1; status, headers and body come back", async () => {
    users.reset();
    users.behave(answer("I am a teapot", { status: 418, headers: { "x-origin": "yes", "cache-control": "max-age=5" } }));
    const r = await worker.get("/proxy/a/b?q=1", { headers: { ...IDENTITY, "x-client": "c1" } });
    assert.equal(r.status, 418);
    assert.equal(r.text, "I am a teapot");
    assert.equal(r.headers.get("x-origin"), "yes");
    assert.equal(r.headers.get("cache-control"), "max-age=5");
    assert.equal(r.headers.get("content-type"), "text/plain");
    const timing = serverTiming(r.headers.get("server-timing"));
    assert.ok(timing.has("admission") && timing.has("users"), r.headers.get("server-timing"));
    assert.equal(users.requests.length, 1);
    const seen = users.requests[0];
    assert.equal(seen.method, "GET");
    assert.equal(seen.url, "/a/b?q=1");
    assert.equal(seen.headers["x-client"], "c1");
    assert.equal(seen.headers.host, `127.0.0.1:${users.port}`, "the origin's own host, not the client's");
  });

  test("POST with a body: same method, headers and body reach the origin", async () => {
    users.reset();
    const body = JSON.stringify({ hello: "world", n: [1, 2, 3] }) + "é".repeat(3000);
    const r = await worker.get("/proxy/submit?x=y", {
      method: "POST",
      headers: { ...IDENTITY, "content-type": "application/json; charset=utf-8", "x-request-id": "r-42" },
      body,
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(users.requests.length, 1);
    const seen = users.requests[0];
    assert.equal(seen.method, "POST");
    assert.equal(seen.url, "/submit?x=y");
    assert.equal(seen.body, body);
    assert.equal(seen.headers["content-type"], "application/json; charset=utf-8");
    assert.equal(seen.headers["x-request-id"], "r-42");
    // And the echo came back as the response body.
    assert.equal(r.json.method, "POST");
    assert.equal(r.json.body, body);
  });

  for (const method of ["PUT", "PATCH", "DELETE"]) {
    test(`${method} keeps its method and body`, async () => {
      users.reset();
      const r = await worker.get("/proxy/item/7", { method, headers: IDENTITY, body: `${method} body` });
      assert.equal(r.status, 200, r.text);
      assert.equal(users.requests[0].method, method);
      assert.equal(users.requests[0].body, `${method} body`);
    });
  }

  test("hop-by-hop request headers (and those named in Connection) are not forwarded", async () => {
    users.reset();
    const r = await worker.raw("/proxy/hop", {
      method: "POST",
      headers: {
        "content-type": "text/plain",
        connection: "keep-alive, x-drop-me",
        "keep-alive": "timeout=5",
        te: "trailers",
        trailer: "x-checksum",
        "proxy-authorization": "Basic c2VjcmV0",
        "proxy-connection": "keep-alive",
        "x-drop-me": "1",
        "x-keep": "yes",
      },
      body: "payload",
    });
    assert.equal(r.status, 200, r.text);
    const seen = users.requests[0];
    assert.equal(seen.method, "POST");
    assert.equal(seen.body, "payload");
    assert.equal(seen.headers["x-keep"], "yes");
    for (const name of ["keep-alive", "te", "trailer", "proxy-authorization", "proxy-connection", "x-drop-me", "upgrade"]) {
      assert.equal(seen.headers[name], undefined, `${name} reached the origin`);
    }
    assert.ok(!/x-drop-me/i.test(seen.headers.connection ?? ""), `connection: ${seen.headers.connection}`);
  });

  test("hop-by-hop response headers (and those named in Connection) are not sent back", async () => {
    users.behave(async (_req, res) => {
      res.writeHead(201, {
        "content-type": "text/plain",
        "x-origin": "yes",
        connection: "x-resp-drop",
        "x-resp-drop": "1",
        "keep-alive": "timeout=5",
        "proxy-authenticate": "Basic realm=origin",
        "proxy-connection": "keep-alive",
        upgrade: "h2c",
        trailer: "x-checksum",
      });
      res.end("created");
    });
    for (const r of [await worker.get("/proxy/x", { headers: IDENTITY }), await worker.raw("/proxy/x")]) {
      assert.equal(r.status, 201);
      assert.equal(r.text, "created");
      const get = (name) => (typeof r.headers.get === "function" ? r.headers.get(name) : r.headers[name]) ?? null;
      assert.equal(get("x-origin"), "yes");
      for (const name of ["x-resp-drop", "keep-alive", "proxy-authenticate", "proxy-connection", "upgrade", "trailer"]) {
        assert.equal(get(name), null, `${name} reached the client`);
      }
    }
    users.behave(echo());
  });

  test("origin unreachable: 502 bad_gateway; origin slower than its timeoutMs: 504 timeout", async () => {
    const gone = await worker.get("/gone/x");
    assert.equal(gone.status, 502, gone.text);
    assert.deepEqual(gone.json, { error: "bad_gateway", origin: "gone" });
    slow.behave(hang());
    const start = Date.now();
    const lazy = await worker.get("/lazy/x");
    assert.equal(lazy.status, 504, lazy.text);
    assert.deepEqual(lazy.json, { error: "timeout", origin: "lazy" });
    assert.ok(Date.now() - start < 1500);
    await slow.aborts(1);
    await worker.until(idle, { what: "idle" });
  });

  test("the origin permit is held while the body drips and released at its end", async () => {
    dripper.reset();
    const body = drip({ first: "chunk 0\n" });
    dripper.behave(body);
    const response = await worker.fetch("/one/stream", { headers: IDENTITY });
    assert.equal(response.status, 200);
    const reader = response.body.getReader();
    const sofar = { text: "" };
    await readUntil(reader, "chunk 0\n", sofar);

    let stats = await worker.stats();
    assert.equal(stats.origins.single.inFlight, 1, "origin permit held mid-body");
    assert.equal(stats.global.inFlight, 1, "global permit held mid-body");
    // The only permit of `single` is taken: another request is shed.
    const shed = await worker.get("/one/other");
    assert.equal(shed.status, 503, shed.text);
    assert.deepEqual(shed.json, { error: "overloaded", scope: "origin:single", reason: "limit" });
    assert.equal(shed.headers.get("retry-after"), "4");

    body.next("chunk 1\n");
    await readUntil(reader, "chunk 1\n", sofar);
    stats = await worker.stats();
    assert.equal(stats.origins.single.inFlight, 1, "still held after chunk 1");
    body.end();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      sofar.text += new TextDecoder().decode(value);
    }
    assert.equal(sofar.text, "chunk 0\nchunk 1\n");
    await worker.until((s) => s.origins.single.inFlight === 0 && s.global.inFlight === 0, {
      what: "permits released at the end of the body",
    });
    dripper.behave(answer("after"));
    const again = await worker.get("/one/again", { headers: IDENTITY });
    assert.equal(again.status, 200);
    assert.equal(again.text, "after");
  });

  test("the permits are released when the client aborts mid-body; the origin connection is closed", async () => {
    dripper.reset();
    const body = drip({ first: "chunk 0\n" });
    dripper.behave(body);
    const controller = new AbortController();
    const response = await worker.fetch("/one/abort", { headers: IDENTITY, signal: controller.signal });
    assert.equal(response.status, 200);
    const reader = response.body.getReader();
    await readUntil(reader, "chunk 0\n");
    assert.equal((await worker.stats()).origins.single.inFlight, 1);
    controller.abort();
    await reader.read().catch(() => {});
    // workerd notices a vanished client on its next write: keep the origin
    // writing until the permits come back (bounded by the timeout).
    const start = Date.now();
    for (;;) {
      const stats = await worker.stats();
      if (stats.origins.single.inFlight === 0 && stats.global.inFlight === 0) break;
      if (Date.now() - start > 5000) assert.fail(`permits still held after the client went away: ${JSON.stringify(stats)}`);
      body.next("more\n");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await dripper.aborts(1); // the origin's connection was torn down, not left open
    dripper.behave(answer("fresh"));
    const again = await worker.get("/one/again", { headers: IDENTITY });
    assert.equal(again.status, 200);
    assert.equal(again.text, "fresh");
  });

  test("several Set-Cookie headers come back as several headers", async () => {
    users.behave(async (_req, res) => {
      res.setHeader("set-cookie", ["a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Path=/", "b=2; HttpOnly"]);
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("cookies");
    });
    const response = await worker.fetch("/proxy/cookies", { headers: IDENTITY });
    assert.deepEqual(response.headers.getSetCookie(), ["a=1; Expires=Wed, 21 Oct 2026 07:28:00 GMT; Path=/", "b=2; HttpOnly"]);
    assert.equal(await response.text(), "cookies");
    users.behave(echo());
  });

  test("answers without a body (204, HEAD) release their permits", async () => {
    users.behave(async (_req, res) => {
      res.writeHead(204, { "x-empty": "1" });
      res.end();
    });
    const none = await worker.raw("/proxy/none", { method: "DELETE" });
    assert.equal(none.status, 204);
    assert.equal(none.headers["x-empty"], "1");
    users.reset();
    users.behave(answer("a body HEAD must not carry"));
    const head = await worker.raw("/proxy/head", { method: "HEAD" });
    assert.equal(head.status, 200);
    assert.equal(head.text, "");
    assert.equal(users.requests[0].method, "HEAD");
    await worker.until(idle, { what: "idle after 204 and HEAD" });
    users.behave(echo());
  });

  test("a client that goes away before the origin answers: the permits come back once it does", async () => {
    const held = gate();
    dripper.reset();
    dripper.behave(after(held, answer("too late")));
    const controller = new AbortController();
    const pending = worker.fetch("/one/gone", { headers: IDENTITY, signal: controller.signal });
    await held.arrivals(1);
    controller.abort();
    await assert.rejects(pending, { name: "AbortError" });
    held.open();
    await worker.until((s) => s.origins.single.inFlight === 0 && s.global.inFlight === 0, {
      what: "permits released after the abandoned request's origin answered",
    });
    dripper.behave(answer("next"));
    const next = await worker.get("/one/next", { headers: IDENTITY });
    assert.equal(next.status, 200, next.text);
  });

  describe("SSRF: the client never chooses the host", () => {
    // [raw request path, path the configured origin must see (or 404 = refused)]
    const cases = () => {
      const e = `127.0.0.1:${evil.port}`;
      return [
        ["/proxy//evil.example", "/evil.example"],
        ["/proxy//evil.example/x?y=1", "/evil.example/x?y=1"],
        ["/proxy/http://evil.example/", "/http:/evil.example/"],
        ["/proxy/https://evil.example/a", "/https:/evil.example/a"],
        ["/proxy/%2F%2Fevil.example", "/%2F%2Fevil.example"],
        ["/proxy/%2f%2fevil.example/x", "/%2f%2fevil.example/x"],
        ["/proxy/@evil.example/x", "/@evil.example/x"],
        ["/proxy/user:pass@evil.example/x", "/user:pass@evil.example/x"],
        ["/proxy/\\\\evil.example/x", "/evil.example/x"],
        ["/proxy/%5c%5cevil.example", "/%5c%5cevil.example"],
        [`/proxy//${e}/steal`, `/${e}/steal`],
        [`/proxy/http://${e}/steal`, `/http:/${e}/steal`],
        [`/proxy/%2F%2F${e}/steal`, `/%2F%2F${e}/steal`],
        [`/proxy/@${e}/steal`, `/@${e}/steal`],
        [`/proxy/x?url=http://${e}/`, `/x?url=http://${e}/`],
        ["/proxy/a/../b", "/b"],
        ["/proxy/a/%2e%2e/b", "/b"],
        ["/proxy/a/.%2E/b", "/b"],
        ["/proxy/./a/./b", "/a/b"],
        // A `..` hidden behind encoded separators is refused: some origins decode %2F.
        ["/proxy/..%2f..%2fetc/passwd", 404],
        ["/proxy/a/..;/b", 404],
        ["/proxy/../evil", 404],
        ["/proxy/%2e%2e/evil", 404],
        ["/proxy/a/%2e%2e/%2e%2e/evil", 404],
        ["/proxy/%2E%2e/%2e%2E/evil", 404],
        ["/api/a/b?q=1", "/base/a/b?q=1"],
        ["/api/a/%2e%2e/b", "/base/b"],
        ["/api/..%2fsecret", 404],
        ["/api/%2e%2e/secret", 404],
        ["/api/../proxy/x", "/x"], // the URL resolves to /proxy/x before routing: still the configured origin
      ];
    };

    test("raw paths (sent byte for byte) stay on the configured origin or are refused with 404", async () => {
      for (const [path, expected] of cases()) {
        users.reset();
        const r = await worker.raw(path);
        if (expected === 404) {
          assert.equal(r.status, 404, `${path}: ${r.status} ${r.text}`);
          assert.deepEqual(r.json, { error: "not_found" }, path);
          assert.equal(users.requests.length, 0, `${path} reached the origin as ${users.requests[0]?.url}`);
        } else {
          assert.equal(r.status, 200, `${path}: ${r.status} ${r.text}`);
          assert.equal(users.requests.length, 1, path);
          assert.equal(users.requests[0].url, expected, path);
          assert.equal(users.requests[0].headers.host, `127.0.0.1:${users.port}`, path);
        }
      }
      assert.equal(evil.requests.length, 0, "the evil server was never contacted");
    });

    test("the same paths through dispatchFetch (client-side URL normalisation) stay on the origin", async () => {
      for (const [path] of cases()) {
        users.reset();
        const r = await worker.get(path, { headers: IDENTITY });
        assert.ok(r.status === 200 || r.status === 404, `${path}: ${r.status} ${r.text}`);
        if (r.status === 200) {
          assert.equal(users.requests.length, 1, path);
          assert.equal(users.requests[0].headers.host, `127.0.0.1:${users.port}`, path);
        } else {
          assert.deepEqual(r.json, { error: "not_found" }, path);
          assert.equal(users.requests.length, 0, path);
        }
      }
      assert.equal(evil.requests.length, 0, "the evil server was never contacted");
    });

    test("a redirect from the origin is passed to the client, not followed to another host", async () => {
      users.reset();
      users.behave(answer("moved", { status: 302, headers: { location: `http://127.0.0.1:${evil.port}/steal` } }));
      const r = await worker.raw("/proxy/redirect");
      assert.equal(r.status, 302);
      assert.equal(r.headers.location, `http://127.0.0.1:${evil.port}/steal`);
      assert.equal(evil.requests.length, 0);
      users.behave(echo());
    });
  });

  test("no route: 404 not_found (also for the prefix without its slash)", async () => {
    for (const path of ["/nothing", "/proxy", "/agg/", "/AGG", "/one", "/"]) {
      const r = await worker.get(path);
      assert.equal(r.status, 404, path);
      assert.match(r.headers.get("content-type"), /^application\/json/);
      assert.deepEqual(r.json, { error: "not_found" }, path);
      assert.ok(serverTiming(r.headers.get("server-timing")).has("admission"), path);
    }
  });

  test("after the bad input above the isolate still answers normally", async () => {
    // Odd but well-formed requests first.
    for (const path of ["/proxy/%00", "/proxy/%ff%fe", `/proxy/${"a".repeat(4000)}`, "/proxy/?" + "q=1&".repeat(500)]) {
      const r = await worker.raw(path);
      assert.ok([200, 404, 414, 431].includes(r.status), `${path.slice(0, 40)}: ${r.status}`);
      assert.notEqual(r.json?.error, "internal", r.text);
    }
    users.reset();
    users.behave(answer({ ok: true }));
    const fan = await worker.get("/agg");
    assert.equal(fan.status, 200, fan.text);
    assert.deepEqual(fan.json, { results: { users: { ok: true } }, degraded: [] });
    users.behave(echo());
    const proxied = await worker.get("/proxy/still/fine?z=9", { headers: IDENTITY });
    assert.equal(proxied.status, 200);
    assert.equal(proxied.json.url, "/still/fine?z=9");
    await worker.until(idle, { what: "idle" });
  });
});

describe("prefix route to an origin URL written in a non-canonical form", () => {
  let users, worker;
  before(async () => {
    users = await startOrigin("users");
    worker = await startWorker({
      statsPublic: true, // the test reads /__edgeshed/*
      origins: {
        // Valid configurations: an explicit default port, a short IPv4 form.
        defaultPort: { url: "http://127.0.0.1:80" },
        shortHost: { url: `http://127.1:${users.port}` },
      },
      routes: [
        { path: "/fan", fanout: [{ origin: "shortHost", path: "/f" }] },
        { prefix: "/dp/", origin: "defaultPort" },
        { prefix: "/sh/", origin: "shortHost" },
      ],
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await users?.close();
  });

  test("fan-out to such an origin works", async () => {
    const r = await worker.get("/fan");
    assert.equal(r.status, 200, r.text);
  });

  test(
    "proxying to http://127.0.0.1:80 or http://127.1:<port> is not refused as another host",
    async () => {
      const dp = await worker.raw("/dp/x");
      // Nothing (or something) listens on :80: either way the request must be attempted, not 404.
      assert.notEqual(dp.status, 404, `/dp/x: ${dp.status} ${dp.text}`);
      users.reset();
      const sh = await worker.raw("/sh/x?y=1");
      assert.equal(sh.status, 200, `/sh/x: ${sh.status} ${sh.text}`);
      assert.equal(users.requests[0]?.url, "/x?y=1");
    },
  );
});
