// Shared pieces of the dashboard tests: Debian's Chromium driven by
// playwright-core, the page server (scripts/serve-www.mjs), a recorder of
// console errors / failed requests, and PNG screenshots under artifacts/www/.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const ARTIFACTS = join(ROOT, "artifacts", "www");

export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
];

export const WIDE = { width: 1280, height: 800 };
export const NARROW = { width: 390, height: 844 };

export function requirePackage() {
  for (const file of ["pkg/browser.js", "pkg/edgeshed.js", "pkg/edgeshed_bg.wasm"]) {
    if (!existsSync(join(ROOT, file))) throw new Error(`${file} is missing: run ./scripts/build-pkg.sh first`);
  }
}

export function launch() {
  return chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: CHROMIUM_ARGS });
}

/**
 * A new page that records every console error or warning, page error,
 * failed request and HTTP status >= 400 into `page.problems`, and every
 * response into `page.responses` ("<status> <path>").
 */
export async function openPage(browser, viewport = WIDE) {
  const page = await browser.newPage({ viewport });
  page.problems = [];
  page.responses = [];
  page.on("console", (message) => {
    if (message.type() === "error" || message.type() === "warning") {
      page.problems.push(`console.${message.type()}: ${message.text()}`);
    }
  });
  page.on("pageerror", (error) => page.problems.push(`page error: ${error.message}`));
  page.on("requestfailed", (request) => page.problems.push(`request failed: ${request.url()} ${request.failure()?.errorText}`));
  page.on("response", (response) => {
    const url = new URL(response.url());
    page.responses.push(`${response.status()} ${url.pathname}`);
    if (response.status() >= 400) page.problems.push(`HTTP ${response.status()}: ${response.url()}`);
  });
  return page;
}

/** Loads `url` and waits for the dashboard to be ready (window.__edgeshed.ready). */
export async function load(page, url) {
  const response = await page.goto(url);
  assert.equal(response.status(), 200);
  await page.waitForFunction(() => window.__edgeshed?.ready === true, null, { timeout: 15_000 });
  const error = await page.evaluate(() => window.__edgeshed.error);
  assert.equal(error, null, `the page could not start: ${error}`);
}

/**
 * Polls `fn(arg)` in the page (every 50 ms) until it returns a truthy value,
 * which it returns; fails after `timeout` ms with `what` and the page's
 * window.__edgeshed state.
 */
export async function until(page, fn, arg, { timeout = 15_000, what = "condition" } = {}) {
  try {
    // A predicate that throws (the page's state being rebuilt, e.g. `sim`
    // briefly null after a restart) counts as "not yet", not as a failure.
    const guarded = new Function("arg", `try { return (${fn.toString()})(arg); } catch { return false; }`);
    const handle = await page.waitForFunction(guarded, arg, { timeout, polling: 50 });
    return await handle.jsonValue();
  } catch (error) {
    const state = await page.evaluate(() => JSON.stringify(window.__edgeshed)).catch(() => "?");
    throw new Error(`timed out after ${timeout} ms waiting for ${what}\nstate: ${state}\n${error.message.split("\n")[0]}`);
  }
}

/** The numbers shown in a lane's counters: { key: number }. */
export function counters(page, lane) {
  return page.evaluate((lane) => {
    const out = {};
    for (const dd of document.querySelectorAll(`#lane-${lane} [data-counter]`)) {
      out[dd.dataset.counter] = Number(dd.textContent.replace(/,/g, ""));
    }
    return out;
  }, lane);
}

/**
 * Saves a screenshot to artifacts/www/<name>.png and checks that it is a
 * non-empty PNG of the expected width (and, unless `fullPage`, height).
 */
export async function screenshot(page, name, { fullPage = false } = {}) {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage });
  const png = readFileSync(path);
  assert.ok(png.length > 10_000, `${path} is ${png.length} bytes`);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], `${path} is a PNG`);
  assert.equal(png.toString("latin1", 12, 16), "IHDR");
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const viewport = page.viewportSize();
  assert.equal(width, viewport.width, `${path} width`);
  if (fullPage) assert.ok(height >= viewport.height, `${path} height ${height}`);
  else assert.equal(height, viewport.height, `${path} height`);
  return path;
}

/** Every <canvas> chart of the visible lanes was drawn (has non-blank pixels). */
export function chartsDrawn(page) {
  return page.evaluate(() => {
    const canvases = [...document.querySelectorAll(".lane:not([hidden]) canvas")].filter((c) => c.offsetParent !== null);
    return canvases.map((canvas) => {
      const ctx = canvas.getContext("2d");
      const { data } = ctx.getImageData(0, 0, canvas.width, canvas.height);
      let inked = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i] > 0) inked++;
      return { width: canvas.width, height: canvas.height, inked };
    });
  });
}
