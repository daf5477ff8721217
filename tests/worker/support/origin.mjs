// Real origin servers for the worker suites: node:http on 127.0.0.1, port 0,
// with behaviour the test controls (latency, status, drip, hang, reset) and
// a record of what they saw (requests, concurrency, aborted connections).
import { createServer } from "node:http";

/** A promise with its resolve/reject exposed. */
export function deferred() {
  let resolve, reject;
  const promise = new Promise((a, b) => {
    resolve = a;
    reject = b;
  });
  return { promise, resolve, reject };
}

/** `promise`, or a rejection naming `what` once `ms` passed first. */
export function within(promise, ms, what) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/**
 * A deterministic gate: whatever awaits `gate.wait()` proceeds only once the
 * test calls `gate.open()`. `gate.waiting` counts who is held right now, and
 * `gate.arrivals(n)` resolves once `n` waiters have arrived in total.
 */
export function gate() {
  const opened = deferred();
  let isOpen = false;
  let arrived = 0;
  let waiting = 0;
  const watchers = [];
  const notify = () => {
    for (const w of [...watchers]) {
      if (arrived >= w.n) {
        watchers.splice(watchers.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  return {
    async wait() {
      arrived += 1;
      waiting += 1;
      notify();
      try {
        if (!isOpen) await opened.promise;
      } finally {
        waiting -= 1;
      }
    },
    open() {
      isOpen = true;
      opened.resolve();
    },
    get waiting() {
      return waiting;
    },
    arrivals(n) {
      if (arrived >= n) return Promise.resolve();
      const d = deferred();
      watchers.push({ n, resolve: d.resolve });
      return d.promise;
    },
  };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Reads a node request body as a string. */
function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

// ------------------------------------------------------------ behaviours ---
// A behaviour is `async (req, res, seen) => void`; `seen.closed` is a promise
// that settles when the connection goes away (answered or aborted).

/** Answers `body` as JSON (or as text when `body` is a string) after `delayMs`. */
export function answer(body, { status = 200, delayMs = 0, headers = {}, contentType } = {}) {
  return async (_req, res, seen) => {
    if (delayMs > 0) await Promise.race([sleep(delayMs), seen.closed]);
    if (res.destroyed) return;
    const text = typeof body === "string" ? body : JSON.stringify(body);
    const type = contentType ?? (typeof body === "string" ? "text/plain" : "application/json");
    res.writeHead(status, { "content-type": type, ...headers });
    res.end(text);
  };
}

/** Waits for `g` (a gate) to open, then runs `then`. */
export function after(g, then) {
  return async (req, res, seen) => {
    await Promise.race([g.wait(), seen.closed]);
    if (res.destroyed) return;
    return then(req, res, seen);
  };
}

/** Never answers (until the client goes away). */
export function hang() {
  return async (_req, _res, seen) => {
    await seen.closed;
  };
}

/** Destroys the connection without answering. */
export function reset() {
  return async (req) => {
    req.socket.destroy();
  };
}

/**
 * Sends headers and `first` at once, then each chunk of `rest` only when the
 * test calls `drip.next()`; `drip.end()` finishes the body. Good for "the
 * body is still streaming" states with no sleeps.
 */
export function drip({ status = 200, first = "chunk 0\n", headers = {} } = {}) {
  const queue = [];
  let wake = deferred();
  const behaviour = async (_req, res, seen) => {
    res.writeHead(status, { "content-type": "text/plain", ...headers });
    res.write(first);
    behaviour.started.resolve();
    for (;;) {
      while (queue.length === 0) {
        const woke = await Promise.race([wake.promise.then(() => true), seen.closed.then(() => false)]);
        if (!woke) return;
        wake = deferred();
      }
      const item = queue.shift();
      if (res.destroyed) return;
      if (item === null) {
        res.end();
        return;
      }
      res.write(item);
    }
  };
  behaviour.started = deferred();
  behaviour.next = (chunk) => {
    queue.push(chunk);
    wake.resolve();
  };
  behaviour.end = () => {
    queue.push(null);
    wake.resolve();
  };
  return behaviour;
}

/**
 * Starts an origin server. `origin.behave(fn)` sets how it answers (default:
 * echo method, path, headers and body as JSON). It records every request in
 * `origin.requests` ({ method, url, headers, rawHeaders, body }), the
 * current and peak number of concurrent requests, and how many connections
 * went away before the answer ended (`origin.aborted`).
 */
export async function startOrigin(name = "origin") {
  const sockets = new Set();
  const requests = [];
  const arrivalWatchers = [];
  const abortWatchers = [];
  let behaviour = echo();
  const origin = {
    name,
    requests,
    inFlight: 0,
    peak: 0,
    aborted: 0,
    behave(fn) {
      behaviour = fn;
      return origin;
    },
    /** Resolves once `n` requests have arrived in total. */
    arrivals(n) {
      return waitFor(arrivalWatchers, () => requests.length >= n);
    },
    /** Resolves once `n` connections went away before their answer ended. */
    aborts(n) {
      return waitFor(abortWatchers, () => origin.aborted >= n);
    },
    reset() {
      requests.length = 0;
      origin.peak = origin.inFlight;
      origin.aborted = 0;
      behaviour = echo();
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  const server = createServer(async (req, res) => {
    origin.inFlight += 1;
    origin.peak = Math.max(origin.peak, origin.inFlight);
    const closed = deferred();
    res.on("close", () => {
      origin.inFlight -= 1;
      if (!res.writableFinished) {
        origin.aborted += 1;
        check(abortWatchers);
      }
      closed.resolve();
    });
    const body = await readBody(req).catch(() => "");
    const record = {
      method: req.method,
      url: req.url,
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body,
    };
    requests.push(record);
    check(arrivalWatchers);
    try {
      await behaviour(req, res, { closed: closed.promise, record });
    } catch (error) {
      if (!res.headersSent) res.writeHead(599);
      res.end(String(error));
    }
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  origin.port = server.address().port;
  origin.url = `http://127.0.0.1:${origin.port}`;
  return origin;
}

/** The default behaviour: JSON echo of what arrived. */
export function echo() {
  return async (req, res, seen) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ method: req.method, url: req.url, headers: req.headers, body: seen.record.body }),
    );
  };
}

function waitFor(watchers, condition) {
  if (condition()) return Promise.resolve();
  const d = deferred();
  watchers.push({ condition, resolve: d.resolve });
  return d.promise;
}

function check(watchers) {
  for (const w of [...watchers]) {
    if (w.condition()) {
      watchers.splice(watchers.indexOf(w), 1);
      w.resolve();
    }
  }
}

/** A port on 127.0.0.1 that nothing listens on (bound, then closed). */
export async function closedPort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}
