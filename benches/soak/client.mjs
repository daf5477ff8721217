// The soak's HTTP client (benches/soak/soak.mjs): keep-alive connections
// (node:http Agent) to the worker, with a record of every socket and every
// connection failure, and the one retry that real clients make.
//
// Why the retry. workerd's HTTP server (kj's HttpServer with its default
// settings) closes a keep-alive connection that carries no new request 5 s
// after its last response (`pipelineTimeout`), without announcing it (no
// `Keep-Alive: timeout` header). A client that writes a request on such a
// connection just as the server closes it gets ECONNRESET before any byte of
// a response: the HTTP/1.1 keep-alive race (RFC 9112 §9.3.1). The worker
// never sees that request. Browsers resend an idempotent request once when
// that happens on a reused connection, and Node's documentation shows the
// same (`request.reusedSocket`); undici avoids the race instead by
// dropping its own idle sockets after 4 s. The soak resends once, on a new
// connection, counts each resend and reports the sockets' idle times, so the
// evidence is in every run's output (RELIABILITY.md, "Connection resets").
//
// A failure on a fresh socket, on a socket idle for less than RACE_IDLE_MS
// (it cannot have met workerd's idle timeout), after a byte of the
// response, or on the second attempt is returned as an error (a violation
// for the soak).
import { Agent, request as httpRequest } from "node:http";

/** Errors of a connection the server has closed or reset under the request. */
const RESET_CODES = new Set(["ECONNRESET", "EPIPE"]);

/**
 * The least idle time of a socket whose reset is the keep-alive race:
 * workerd closes after 5 s; the client's clock starts later than workerd's
 * (when it has read the response), by its event loop's lag at the time.
 */
export const RACE_IDLE_MS = 2500;

/** Upper bounds (ms) of the idle-time histogram's buckets. */
const IDLE_BUCKETS_MS = [1000, 2000, 3000, 4000, 4500, 5000, 5500, 6000, Infinity];
const bucketOf = (ms) => IDLE_BUCKETS_MS.findIndex((upper) => ms < upper);
const bucketLabel = (i) => {
  const lower = i === 0 ? 0 : IDLE_BUCKETS_MS[i - 1];
  const upper = IDLE_BUCKETS_MS[i];
  return upper === Infinity ? `>=${lower / 1000}s` : `${lower / 1000}-${upper / 1000}s`;
};
const histogram = () => IDLE_BUCKETS_MS.map(() => 0);

/**
 * A client of `base` over at most `connections` keep-alive sockets.
 * `send(path, headers)` resolves to `{ status, headers, body }` or to
 * `{ error }`; `report()` gives what the sockets saw. `retries: 0` turns
 * the resend off (to see the races as errors); `raceIdleMs` (tests) the
 * least idle time of a socket whose reset is resent.
 */
export function soakClient({ base, connections, timeoutMs, retries = 1, raceIdleMs = RACE_IDLE_MS, now = () => performance.now() }) {
  const agent = new Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  // Per socket: when its last response ended (idle since then) and whether
  // it is waiting in the agent's pool.
  const sockets = new WeakMap();
  let closing = false;
  const seen = {
    attempts: 0,
    freshSockets: 0,
    reusedSockets: 0,
    // Idle time of every socket when it was reused (the request got an answer or not).
    reusedIdle: histogram(),
    maxReusedIdleMs: 0,
    // Idle sockets closed by the server while in the pool, by idle time.
    serverClosedIdle: histogram(),
    retries: 0,
    // Every connection failure, one line each: { at, code, reused, idleMs, responseBytes, retried }.
    failures: [],
  };

  agent.on("free", (socket) => {
    const state = sockets.get(socket);
    if (!state) return;
    state.idleSince = now();
    state.pooled = true;
  });

  function track(socket) {
    let state = sockets.get(socket);
    if (state) return state;
    state = { idleSince: now(), pooled: false };
    sockets.set(socket, state);
    socket.on("close", () => {
      if (state.pooled && !closing) seen.serverClosedIdle[bucketOf(now() - state.idleSince)]++;
    });
    return state;
  }

  /** One attempt (`fresh`: on a connection of its own): the answer, or `{ error, retryable }`. */
  function attempt(path, headers, fresh = false) {
    return new Promise((resolve) => {
      let socketInfo = null;
      const via = fresh ? { agent: false } : { agent };
      const req = httpRequest({ host: base.hostname, port: base.port, path, headers, ...via }, (res) => {
        const chunks = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", (error) => resolve(failed(error, true)));
      });
      req.on("socket", (socket) => {
        // Reused: the socket carried an earlier request. (`req.reusedSocket`
        // misses a socket the agent hands straight to a waiting request.)
        const reused = sockets.has(socket);
        const state = track(socket);
        const idleMs = reused ? now() - state.idleSince : 0;
        state.pooled = false;
        socketInfo = { socket, reused, idleMs, bytesRead: socket.bytesRead };
        seen.attempts++;
        if (reused) {
          seen.reusedSockets++;
          seen.reusedIdle[bucketOf(idleMs)]++;
          seen.maxReusedIdleMs = Math.max(seen.maxReusedIdleMs, idleMs);
        } else seen.freshSockets++;
      });
      let failure = null;
      const failed = (error, responded) => {
        // A request can fail twice (its response, then the request itself).
        if (failure) return { error: failure.code, retryable: false, failure };
        const code = error.code ?? error.message;
        const info = socketInfo ?? { reused: false, idleMs: 0 };
        const responseBytes = socketInfo ? socketInfo.socket.bytesRead - socketInfo.bytesRead : 0;
        failure = { at: now(), code, reused: info.reused, idleMs: Math.round(info.idleMs), responseBytes, retried: false };
        seen.failures.push(failure);
        const retryable =
          RESET_CODES.has(error.code) && info.reused && info.idleMs >= raceIdleMs && !responded && responseBytes === 0;
        return { error: responded ? `response ${code}` : code, retryable, failure };
      };
      req.setTimeout(timeoutMs, () => req.destroy(Object.assign(new Error("client timeout"), { code: "client timeout" })));
      req.on("error", (error) => resolve(failed(error, false)));
      req.end();
    });
  }

  /**
   * GET `path`: resent once, on a new connection, if a reused socket was
   * reset before any byte of the answer. (Not on a pooled one: when workerd
   * closes a batch of idle sockets at once, the pool still holds the others
   * until their FIN is processed.)
   */
  async function send(path, headers = {}) {
    const first = await attempt(path, headers);
    if (!first.retryable || retries === 0) return first;
    first.failure.retried = true;
    seen.retries++;
    return attempt(path, headers, true);
  }

  /** What the sockets saw, for the soak's report and checks. */
  function report() {
    const buckets = (h) =>
      Object.fromEntries(h.map((n, i) => [bucketLabel(i), n]).filter(([, n]) => n > 0));
    const failures = seen.failures;
    return {
      attempts: seen.attempts,
      freshSockets: seen.freshSockets,
      reusedSockets: seen.reusedSockets,
      reusedIdle: buckets(seen.reusedIdle),
      maxReusedIdleMs: Math.round(seen.maxReusedIdleMs),
      serverClosedIdle: buckets(seen.serverClosedIdle),
      retries: seen.retries,
      failures: failures.length,
      // Resets that were the keep-alive race (retried), and the rest.
      retriedIdleMs: failures.filter((f) => f.retried).map((f) => f.idleMs),
      otherFailures: failures.filter((f) => !f.retried),
      // The first failures in full (times in ms on the client's clock).
      failureLog: failures.slice(0, 100),
    };
  }

  function destroy() {
    closing = true;
    agent.destroy();
  }

  return { send, report, destroy };
}
