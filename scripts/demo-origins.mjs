// Demo origins for the edge worker: two small HTTP servers on 127.0.0.1.
//
//   users  :9001  GET /u -> {"id":1,"name":"Ada"}; any other path echoes it
//   recs   :9002  GET /r -> {"items":[...]}
//
// Knobs (environment): USERS_LATENCY_MS (default 20), RECS_LATENCY_MS (40),
// RECS_FAIL_RATE (0..1, default 0.1: that share of /r answers 500).
// Per request: ?delay=<ms> adds latency, ?status=<code> forces a status,
// /drip?chunks=<n>&every=<ms> streams a body slowly.
import { createServer } from "node:http";

const env = (name, fallback) => Number(process.env[name] ?? fallback);

function origin(name, port, latencyMs, handler) {
  let inFlight = 0;
  let peak = 0;
  const server = createServer((req, res) => {
    inFlight += 1;
    peak = Math.max(peak, inFlight);
    res.on("close", () => (inFlight -= 1));
    const url = new URL(req.url, `http://127.0.0.1:${port}`);
    const delay = latencyMs + Number(url.searchParams.get("delay") ?? 0);
    setTimeout(() => handler(url, req, res), delay);
  });
  server.listen(port, "127.0.0.1", () =>
    console.log(`demo origin ${name.padEnd(5)} http://127.0.0.1:${port}  (latency ${latencyMs} ms)`),
  );
  return { server, stats: () => ({ inFlight, peak }) };
}

function json(res, status, body) {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function drip(url, res) {
  const chunks = Number(url.searchParams.get("chunks") ?? 5);
  const every = Number(url.searchParams.get("every") ?? 200);
  res.writeHead(200, { "content-type": "text/plain" });
  let sent = 0;
  const timer = setInterval(() => {
    res.write(`chunk ${++sent}\n`);
    if (sent >= chunks) {
      clearInterval(timer);
      res.end();
    }
  }, every);
  res.on("close", () => clearInterval(timer));
}

const users = origin("users", 9001, env("USERS_LATENCY_MS", 20), (url, req, res) => {
  const forced = url.searchParams.get("status");
  if (forced) return json(res, Number(forced), { forced: Number(forced) });
  if (url.pathname === "/u") return json(res, 200, { id: 1, name: "Ada" });
  if (url.pathname === "/drip") return drip(url, res);
  json(res, 200, { origin: "users", method: req.method, path: url.pathname, query: url.search });
});

const failRate = env("RECS_FAIL_RATE", 0.1);
const recs = origin("recs", 9002, env("RECS_LATENCY_MS", 40), (url, _req, res) => {
  if (Math.random() < failRate) return json(res, 500, { error: "flaky" });
  json(res, 200, { items: ["lamp", "desk", "chair"] });
});

const stop = () => {
  users.server.close();
  recs.server.close();
  users.server.closeAllConnections();
  recs.server.closeAllConnections();
  process.exit(0);
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
