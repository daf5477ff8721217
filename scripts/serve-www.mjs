#!/usr/bin/env node
// Serves the live admission dashboard (www/) and the npm package (pkg/) on
// 127.0.0.1, and proxies /gateway/* to the edgeshed worker so that the page's
// live mode needs no CORS.
//
//   node scripts/serve-www.mjs                     # http://127.0.0.1:8788/
//   WWW_PORT=9000 GATEWAY=http://127.0.0.1:8787 node scripts/serve-www.mjs
//
// Routes:
//   GET  /                      www/index.html (and the rest of www/)
//   GET  /pkg/*                 the npm package built by ./scripts/build-pkg.sh
//   ANY  /gateway/<path>        proxied to <GATEWAY>/<path> (method, headers, body, query);
//                               /gateway/__edgeshed/* gets `Authorization: Bearer
//                               $EDGESHED_STATS_TOKEN` when that variable is set
//   GET  /__www/info            {"gateway": "<GATEWAY>"}
//   POST /__www/burst?n=&path=  fires n (1..2000) concurrent GETs at <GATEWAY><path>
//                               from this server (a browser opens at most 6
//                               connections per host over HTTP/1.1, so a burst
//                               from the page itself would be queued by the browser)
//                               and answers {n, statuses: {"200": k, ...}, p50Ms, p99Ms, ms}
//   GET  /__www/latency         p50/p99 latency (ms) of the burst requests answered 2xx
//                               in the last second: {count, p50Ms, p99Ms}
import { createServer, request as httpRequest, Agent } from "node:http";
import { request as httpsRequest } from "node:https";
import { readFile, stat } from "node:fs/promises";
import { dirname, extname, join, normalize, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");

const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
  ".md": "text/markdown; charset=utf-8",
  ".ts": "text/plain; charset=utf-8",
  ".wasm": "application/wasm",
};

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "host",
]);

const MAX_BURST = 2000;
const LATENCY_WINDOW_MS = 1000;

function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(text);
}

/**
 * Starts the server. Options: `port` (0 for any free port), `host`,
 * `gateway` (the worker's base URL), `statsToken`, `root` (repository root).
 * Resolves to `{ url, server, close() }`.
 */
export async function startServer({
  port = 8788,
  host = "127.0.0.1",
  gateway = "http://127.0.0.1:8787",
  statsToken = process.env.EDGESHED_STATS_TOKEN || "",
  root = ROOT,
  log = () => {},
} = {}) {
  const gatewayUrl = new URL(gateway);
  const gatewayBase = gatewayUrl.href.replace(/\/$/, "");
  const send = gatewayUrl.protocol === "https:" ? httpsRequest : httpRequest;
  // Unlimited sockets: a burst must reach the gateway all at once.
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const mounts = [
    { prefix: "/pkg/", dir: join(root, "pkg") },
    { prefix: "/", dir: join(root, "www") },
  ];
  /** Completed 2xx burst requests: [endTime, latencyMs], oldest first. */
  const recent = [];

  async function serveStatic(req, res, pathname) {
    if (req.method !== "GET" && req.method !== "HEAD") return sendJson(res, 405, { error: "method_not_allowed" });
    const mount = mounts.find((m) => pathname.startsWith(m.prefix));
    let rel = pathname.slice(mount.prefix.length);
    if (rel === "" || rel.endsWith("/")) rel += "index.html";
    const file = normalize(join(mount.dir, rel));
    if (!file.startsWith(mount.dir + sep)) return sendJson(res, 404, { error: "not_found" });
    let body;
    try {
      const info = await stat(file);
      if (!info.isFile()) return sendJson(res, 404, { error: "not_found" });
      body = await readFile(file);
    } catch {
      const hint = mount.prefix === "/pkg/" ? " (build the package: ./scripts/build-pkg.sh)" : "";
      return sendJson(res, 404, { error: "not_found", path: pathname + hint });
    }
    res.writeHead(200, {
      "content-type": TYPES[extname(file)] ?? "application/octet-stream",
      "content-length": body.length,
      "cache-control": "no-cache",
    });
    res.end(req.method === "HEAD" ? undefined : body);
  }

  function proxy(req, res, rest, search) {
    const target = new URL(gatewayBase + rest + search);
    const headers = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (!HOP_BY_HOP.has(name)) headers[name] = value;
    }
    headers.host = target.host;
    if (statsToken && rest.startsWith("/__edgeshed/")) headers.authorization = `Bearer ${statsToken}`;
    const upstream = send(target, { method: req.method, headers, agent: send === httpRequest ? agent : undefined }, (answer) => {
      const out = {};
      for (const [name, value] of Object.entries(answer.headers)) {
        if (!HOP_BY_HOP.has(name)) out[name] = value;
      }
      out["cache-control"] ??= "no-store";
      res.writeHead(answer.statusCode, out);
      answer.pipe(res);
    });
    upstream.on("error", (error) => {
      if (res.headersSent) return res.destroy();
      sendJson(res, 502, { error: "gateway_unreachable", gateway: gatewayBase, message: error.message });
    });
    res.on("close", () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  function one(path) {
    return new Promise((done) => {
      const start = performance.now();
      const finish = (status) => {
        const ms = performance.now() - start;
        if (status >= 200 && status < 300) recent.push([performance.now(), ms]);
        done({ status, ms });
      };
      const r = send(new URL(gatewayBase + path), { method: "GET", agent: send === httpRequest ? agent : undefined }, (answer) => {
        answer.resume();
        answer.on("end", () => finish(answer.statusCode));
        answer.on("error", () => finish(0));
      });
      r.on("error", () => finish(0));
      r.end();
    });
  }

  async function burst(res, params) {
    const n = Number(params.get("n") ?? 100);
    const path = params.get("path") ?? "/aggregate";
    if (!Number.isInteger(n) || n < 1 || n > MAX_BURST) {
      return sendJson(res, 400, { error: "bad_request", message: `n must be an integer from 1 to ${MAX_BURST}` });
    }
    if (!path.startsWith("/") || path.startsWith("//")) {
      return sendJson(res, 400, { error: "bad_request", message: "path must start with a single /" });
    }
    const start = performance.now();
    const results = await Promise.all(Array.from({ length: n }, () => one(path)));
    const statuses = {};
    for (const { status } of results) statuses[status] = (statuses[status] ?? 0) + 1;
    const ok = results.filter((r) => r.status >= 200 && r.status < 300).map((r) => r.ms).sort((a, b) => a - b);
    log(`burst ${n} x GET ${path}: ${JSON.stringify(statuses)}`);
    sendJson(res, 200, {
      n,
      path,
      statuses,
      p50Ms: percentile(ok, 50),
      p99Ms: percentile(ok, 99),
      ms: performance.now() - start,
    });
  }

  function latency(res) {
    const now = performance.now();
    while (recent.length > 0 && recent[0][0] < now - LATENCY_WINDOW_MS) recent.shift();
    const sorted = recent.map((r) => r[1]).sort((a, b) => a - b);
    sendJson(res, 200, { count: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) });
  }

  const server = createServer((req, res) => {
    let url;
    try {
      url = new URL(req.url, "http://localhost");
    } catch {
      return sendJson(res, 400, { error: "bad_request" });
    }
    let pathname;
    try {
      pathname = decodeURIComponent(url.pathname);
    } catch {
      return sendJson(res, 400, { error: "bad_request" });
    }
    if (url.pathname === "/gateway" || url.pathname.startsWith("/gateway/")) {
      return proxy(req, res, url.pathname.slice("/gateway".length) || "/", url.search);
    }
    if (pathname === "/__www/info") return sendJson(res, 200, { gateway: gatewayBase });
    if (pathname === "/__www/latency") return latency(res);
    if (pathname === "/__www/burst") {
      if (req.method !== "POST") return sendJson(res, 405, { error: "method_not_allowed" });
      req.resume();
      return burst(res, url.searchParams);
    }
    if (pathname === "/favicon.ico") pathname = "/favicon.svg";
    serveStatic(req, res, pathname).catch((error) => {
      if (!res.headersSent) sendJson(res, 500, { error: "internal", message: String(error) });
      else res.destroy();
    });
  });
  await new Promise((ok, fail) => {
    server.once("error", fail);
    server.listen(port, host, ok);
  });
  const address = server.address();
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${address.port}/`;
  return {
    url,
    server,
    gateway: gatewayBase,
    async close() {
      server.closeAllConnections();
      agent.destroy();
      await new Promise((ok) => server.close(ok));
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const port = Number(process.env.WWW_PORT ?? 8788);
  const gateway = process.env.GATEWAY ?? "http://127.0.0.1:8787";
  const www = await startServer({ port, gateway, log: (line) => console.log(`serve-www: ${line}`) });
  console.log(`edgeshed dashboard: ${www.url}  (live mode proxies /gateway/* to ${www.gateway})`);
  const stop = () => www.close().then(() => process.exit(0));
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
