// The npm package in headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core): a page that imports it through an import map, exactly as
// docs/js.md's browser snippet does. The page is tests/js/fixtures/browser.html
// with the docs/js.md snippet inserted by the test's static server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { extname, join, normalize, sep } from "node:path";
import { chromium } from "playwright-core";
import { ROOT } from "./support/link-package.mjs";
import { readmeSnippet } from "./support/helpers.mjs";

const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
];
const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".wasm": "application/wasm",
};
const PAGE = "/tests/js/fixtures/browser.html";
const PLACEHOLDER = /<!-- README snippet: browser[^>]*-->/;
const T = { timeout: 60_000 };

let server;
let base;
let browser;
const served = []; // "<status> <path>" of every request, in order

/** Static files from the repository, the fixture page with the docs/js.md snippet, and /api/item/<id>. */
async function handle(req, res) {
  const path = decodeURIComponent(new URL(req.url, "http://x").pathname);
  const item = /^\/api\/item\/(\d+)$/.exec(path);
  if (item) {
    res.writeHead(200, { "content-type": "application/json" });
    return res.end(JSON.stringify({ id: Number(item[1]) }));
  }
  const file = normalize(join(ROOT, path));
  const allowed = [join(ROOT, "pkg") + sep, join(ROOT, "tests", "js", "fixtures") + sep];
  if (!allowed.some((dir) => file.startsWith(dir))) {
    res.writeHead(404);
    return res.end();
  }
  let body;
  try {
    body = await readFile(file);
  } catch {
    res.writeHead(404);
    return res.end();
  }
  if (path === PAGE) {
    const html = body.toString("utf8");
    assert.match(html, PLACEHOLDER);
    body = html.replace(PLACEHOLDER, () => readmeSnippet("browser").code);
  }
  res.writeHead(200, { "content-type": TYPES[extname(file)] ?? "application/octet-stream" });
  res.end(body);
}

before(async () => {
  server = createServer((req, res) => {
    res.on("finish", () => served.push(`${res.statusCode} ${req.url}`));
    handle(req, res).catch((error) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: CHROMIUM_ARGS });
}, T);

after(async () => {
  await browser?.close();
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
}, T);

test("docs/js.md: the browser snippet loads the package through the import map and limits fetches", T, async () => {
  const snippet = readmeSnippet("browser").code;
  assert.match(snippet, /"imports":\s*\{\s*"edgeshed":\s*"\/pkg\/browser\.js"\s*\}/);

  const page = await browser.newPage();
  const problems = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") problems.push(`console.${message.type()}: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("requestfailed", (request) => problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`));
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });

  const response = await page.goto(base + PAGE);
  assert.equal(response.status(), 200);
  // The snippet writes its result into <output id="result"> once every fetch has settled.
  await page.waitForFunction(() => document.querySelector("#result")?.textContent.startsWith("{"), null, T);
  const result = JSON.parse(await page.textContent("#result"));

  assert.deepEqual(result, {
    loaded: [1, 2, 3, 4],
    shed: 2,
    stats: {
      inFlight: 0, queued: 0, admitted: 4, shed: 2, queueTimeouts: 0, expired: 0, abandoned: 0, heldBodies: 0, bodyTimeouts: 0, limit: 2,
      reserve: null,
      ceilings: { critical: 2, default: 2, sheddable: 2 },
      byCriticality: {
        critical: { admitted: 0, shed: 0, displaced: 0, inFlight: 0, queued: 0, lent: false },
        default: { admitted: 4, shed: 2, displaced: 0, inFlight: 0, queued: 0, lent: false },
        sheddable: { admitted: 0, shed: 0, displaced: 0, inFlight: 0, queued: 0, lent: false },
      },
      fairShareRefused: 0,
      rateLimited: 0,
      rateOverflow: 0,
      topRefusedKeys: [],
    },
  });
  assert.deepEqual(problems, []);
  const paths = served.map((line) => line.slice(4));
  assert.ok(served.every((line) => line.startsWith("200 ")), served.join("\n"));
  for (const file of ["/pkg/browser.js", "/pkg/edgeshed.js", "/pkg/edgeshed_bg.wasm"]) {
    assert.ok(paths.includes(file), `the page loaded ${file}`);
  }
  assert.deepEqual(
    paths.filter((path) => path.startsWith("/api/")).sort(),
    ["/api/item/1", "/api/item/2", "/api/item/3", "/api/item/4"],
    "the shed calls never reached the server",
  );
  await page.close();
});
