// Deploying the gateway as docs/deploy.md says: your own configuration goes
// out (--var, or [env.production] with a secret), `wrangler deploy --dry-run`
// builds offline, and a plain `wrangler deploy` of wrangler.toml's demo
// configuration (loopback origins, statsPublic) is refused by the build
// before anything is uploaded (scripts/deploy-guard.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
// wrangler's update check keeps a cache in os.tmpdir(): a folder removed at exit.
import "./support/own-tmpdir.mjs";
import { localOnly, parseDeployArgs } from "../../scripts/deploy-guard.mjs";
import { answer, startOrigin } from "./support/origin.mjs";
import { ROOT } from "./support/worker.mjs";

const WRANGLER = join(ROOT, "node_modules/.bin/wrangler");
const ENV = {
  ...process.env,
  PATH: `${join(ROOT, "node_modules/.bin")}:${process.env.HOME}/.cargo/bin:${process.env.PATH}`,
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_SEND_METRICS: "false",
  CI: "1", // non-interactive: no login prompt, no browser
};
delete ENV.CLOUDFLARE_API_TOKEN;
delete ENV.EDGESHED_ALLOW_DEMO_DEPLOY;

/** A configuration of one's own, as docs/deploy.md's my-config.json. */
const OWN = {
  statsToken: "a-secret-token",
  global: { maxInFlight: 64, maxQueue: 64, queueTimeoutMs: 50 },
  origins: { api: { url: "https://api.example.com", maxInFlight: 6, maxQueue: 6, queueTimeoutMs: 20, timeoutMs: 1000 } },
  routes: [{ prefix: "/api/", origin: "api" }],
};

/**
 * How wrangler's output leaves it: `"socket"` (Node's child pipes, which are
 * sockets), `"pipe"` (a shell pipeline's pipe: `wrangler ... 2>&1 | tee log`)
 * or `"tty"` (a terminal, through util-linux's `script`; plain arguments only).
 */
function command(args, via) {
  if (via === "pipe") return ["bash", ["-o", "pipefail", "-c", '"$0" "$@" 2>&1 | cat', WRANGLER, ...args]];
  if (via === "tty") return ["script", ["-qefc", [WRANGLER, ...args].join(" "), "/dev/null"]];
  return [WRANGLER, args];
}

/** Runs `wrangler ...args` in the repository: { code, output }. */
function wrangler(args, env = {}, via = "socket") {
  const [file, argv] = command(args, via);
  return new Promise((resolve) => {
    execFile(file, argv, { cwd: ROOT, env: { ...ENV, ...env }, timeout: 170_000, maxBuffer: 16 << 20 }, (error, stdout, stderr) =>
      resolve({ code: error ? (error.code ?? 1) : 0, output: stdout + stderr }),
    );
  });
}

/** `wrangler deploy --dry-run --outdir <tmp> ...args`, then the files it wrote. */
async function dryRun(args, via) {
  const outdir = mkdtempSync(join(tmpdir(), "edgeshed-deploy-"));
  try {
    const result = await wrangler(["deploy", "--dry-run", "--outdir", outdir, ...args], {}, via);
    return { ...result, files: readdirSync(outdir) };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

const T = { timeout: 180_000 };

/** How often `text` occurs in `output`. */
const occurrences = (output, text) => output.split(text).length - 1;

/**
 * The guard's refusal is printed once: wrangler shows the build's output as
 * it comes, then again in the error it dumps when the build fails (its
 * message, and its `stdout` and `stderr` fields), so the guard writes a
 * refusal to wrangler's own stderr, outside the build's output, where that
 * is a terminal or a pipe. (Node's child pipes are sockets, which cannot be
 * opened again: there wrangler repeats it, as the "socket" runs show.)
 */
function refusedOnce(output, lines) {
  for (const line of lines) assert.equal(occurrences(output, line), 1, `${JSON.stringify(line)} once, in:\n${output}`);
  assert.equal(occurrences(output, "edgeshed: deploy refused by scripts/deploy-guard.mjs"), 3, "wrangler's dump says why");
}

const HAS_SCRIPT = (() => {
  try {
    execFileSync("script", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

test("a plain `wrangler deploy` of the demo configuration fails before any upload, saying why (once) and what to do", T, async () => {
  const { code, output } = await wrangler(["deploy"], {}, "pipe");
  assert.notEqual(code, 0, output);
  assert.match(output, /edgeshed: REFUSING TO DEPLOY/);
  assert.match(output, /"statsPublic": true opens \/__edgeshed\/\*/);
  assert.match(output, /origins\.users\.url http:\/\/127\.0\.0\.1:9001 is this machine/);
  assert.match(output, /wrangler secret put EDGESHED --env production/);
  refusedOnce(output, [
    "edgeshed: REFUSING TO DEPLOY",
    '"statsPublic": true opens /__edgeshed/*',
    "Deploy your own configuration instead",
    "warning: origins.recs keeps the default reserve",
  ]);
  // It stopped in the build: wrangler never got to ask for credentials.
  assert.doesNotMatch(output, /CLOUDFLARE_API_TOKEN/);
  assert.doesNotMatch(output, /Total Upload/);
});

test("`wrangler deploy --env production --var EDGESHED:<own>` passes the check (and only then needs credentials)", T, async () => {
  const { code, output } = await wrangler(["deploy", "--env", "production", "--var", `EDGESHED:${JSON.stringify(OWN)}`]);
  assert.notEqual(code, 0, "no credentials here");
  assert.match(output, /edgeshed deploy check: the configuration from --var EDGESHED has no local-only settings/);
  assert.doesNotMatch(output, /REFUSING/);
  assert.match(output, /CLOUDFLARE_API_TOKEN/, "it went on to the upload step");
});

test("`wrangler deploy --dry-run --env production --var EDGESHED:<own>` builds the upload offline", T, async () => {
  const { code, output, files } = await dryRun(["--env", "production", "--var", `EDGESHED:${JSON.stringify(OWN, null, 2)}`]);
  assert.equal(code, 0, output);
  assert.match(output, /--dry-run: exiting now/);
  assert.match(output, /env\.EDGESHED \("\(hidden\)"\)/);
  assert.match(output, /env\.EDGESHED_BUDGET \(EdgeshedBudget\)/);
  assert.doesNotMatch(output, /edgeshed WARNING|REFUSING|Duplicate key/, output);
  // wrangler's one warning here: the demo's [vars] are not inherited by [env.production] (on purpose).
  const warnings = output.match(/\[WARNING\][^\n]*\n(?:\s*\n)*\s*- [^\n]*\n\s*- [^\n]*/g) ?? [];
  for (const warning of warnings) assert.match(warning, /"vars\.EDGESHED" exists at the top level, but not on "env\.production\.vars"/, output);
  assert.ok(files.includes("index.js") && files.some((f) => f.endsWith(".wasm")), `${files}`);
});

test("`wrangler deploy --dry-run --env production`: the configuration is left to a secret, the budget's object bound", T, async () => {
  const { code, output } = await dryRun(["--env", "production"]);
  assert.equal(code, 0, output);
  assert.match(output, /no EDGESHED var in .*wrangler\.toml \[env\.production\] vars; the binding must come from a secret/);
  assert.match(output, /env\.EDGESHED_BUDGET \(EdgeshedBudget\)/);
  assert.doesNotMatch(output, /env\.EDGESHED \(/, "the demo's var is not shipped");
  assert.doesNotMatch(output, /REFUSING|edgeshed WARNING/);
});

test("the check reads --env and --var as wrangler does: a loopback origin in production is refused too", T, async () => {
  const local = { ...OWN, origins: { api: { url: "http://localhost:8080" } } };
  const { code, output } = await wrangler(["deploy", "-e", "production", `--var=EDGESHED:${JSON.stringify(local)}`]);
  assert.notEqual(code, 0);
  assert.match(output, /REFUSING TO DEPLOY: the EDGESHED configuration \(--var EDGESHED\)/);
  assert.match(output, /origins\.api\.url http:\/\/localhost:8080 is this machine/);
});

// Issue 33: these passed the dry run and the guard ("has no local-only
// settings"), and answered 500 on every request once deployed.
const TYPO = { ...OWN, origins: { api: { ...OWN.origins.api, maxInflight: 6 } } };
const NO_SLASH = { ...OWN, routes: [{ prefix: "/crit", origin: "api", criticality: "critical" }] };

test("a configuration the gateway would refuse fails the deploy and the dry run, naming each error's key", T, async () => {
  const typo = await dryRun(["--env", "production", "--var", `EDGESHED:${JSON.stringify(TYPO)}`], "pipe");
  assert.notEqual(typo.code, 0, typo.output);
  assert.match(typo.output, /edgeshed: REFUSING TO DEPLOY: the EDGESHED configuration \(--var EDGESHED\) is invalid/);
  assert.match(typo.output, /  error: origins\.api\.maxInflight is not a known key/);
  assert.doesNotMatch(typo.output, /has no local-only settings|--dry-run: exiting now/);
  refusedOnce(typo.output, ["REFUSING TO DEPLOY", "origins.api.maxInflight is not a known key"]);
  const slash = await wrangler(["deploy", "--env", "production", "--var", `EDGESHED:${JSON.stringify(NO_SLASH)}`], {}, "pipe");
  assert.notEqual(slash.code, 0, slash.output);
  assert.match(slash.output, /REFUSING TO DEPLOY: the EDGESHED configuration \(--var EDGESHED\) is invalid/);
  assert.match(slash.output, /  error: routes\[0\]\.prefix must end with "\/", got "\/crit"/);
  refusedOnce(slash.output, ["REFUSING TO DEPLOY", 'routes[0].prefix must end with "/"', "Fix it and check it with"]);
  // Stopped in the build: never got to the upload (nor to credentials).
  assert.doesNotMatch(slash.output, /CLOUDFLARE_API_TOKEN|Total Upload/);
});

test("in a terminal the refusal is printed once too", { ...T, skip: HAS_SCRIPT ? false : "util-linux script is not installed" }, async () => {
  const { code, output } = await wrangler(["deploy"], {}, "tty");
  assert.notEqual(code, 0, output);
  refusedOnce(output, ["edgeshed: REFUSING TO DEPLOY", "Deploy your own configuration instead"]);
});

test("through a socket (Node's child pipes) the refusal is still printed, with wrangler's repeats", T, async () => {
  const { code, output } = await wrangler(["deploy"]);
  assert.notEqual(code, 0, output);
  assert.ok(occurrences(output, "edgeshed: REFUSING TO DEPLOY") >= 1, output);
  assert.match(output, /origins\.users\.url http:\/\/127\.0\.0\.1:9001 is this machine/);
});

test("a dry run of the demo warns loudly and goes on; EDGESHED_ALLOW_DEMO_DEPLOY=1 lets a real deploy through", T, async () => {
  const demo = await dryRun([]);
  assert.equal(demo.code, 0, demo.output);
  assert.match(demo.output, /edgeshed WARNING: the EDGESHED configuration/);
  assert.match(demo.output, /--dry-run: nothing is uploaded; going on/);
  const allowed = await wrangler(["deploy"], { EDGESHED_ALLOW_DEMO_DEPLOY: "1" });
  assert.match(allowed.output, /EDGESHED_ALLOW_DEMO_DEPLOY=1; going on/);
  assert.match(allowed.output, /CLOUDFLARE_API_TOKEN/);
});

test("parseDeployArgs and localOnly", () => {
  assert.deepEqual(parseDeployArgs(["--dry-run", "--outdir", "x", "-c", "w.toml", "--env=staging", "--var", "A:1", "EDGESHED:{}"]), {
    config: "w.toml",
    env: "staging",
    dryRun: true,
    edgeshedVar: "{}",
  });
  assert.equal(parseDeployArgs(["--var=EDGESHED:{\"a\":1}"]).edgeshedVar, '{"a":1}');
  assert.deepEqual(localOnly(OWN), []);
  assert.deepEqual(localOnly(JSON.stringify({ origins: { a: { url: "http://127.0.0.2:1" }, b: { url: "http://[::1]:2/x" } } })).length, 2);
  assert.deepEqual(localOnly("not json"), [], "an unreadable configuration is the gateway's to report");
});

test("`wrangler dev --var EDGESHED:<own>` runs your configuration locally (docs/deploy.md)", T, async (t) => {
  const origin = await startOrigin();
  origin.behave(answer("hello from your origin"));
  const port = 18_000 + (process.pid % 1000);
  const own = { ...OWN, origins: { api: { url: origin.url } } };
  const dev = spawn(WRANGLER, ["dev", "--local", "--ip", "127.0.0.1", "--port", String(port), "--show-interactive-dev-session=false", "--var", `EDGESHED:${JSON.stringify(own)}`], {
    cwd: ROOT,
    env: ENV,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let log = "";
  dev.stdout.on("data", (chunk) => (log += chunk));
  dev.stderr.on("data", (chunk) => (log += chunk));
  t.after(async () => {
    process.kill(-dev.pid, "SIGTERM");
    await origin.close();
  });
  const ready = new Promise((resolve, reject) => {
    dev.stdout.on("data", () => /Ready on/.test(log) && resolve());
    dev.on("exit", (code) => reject(new Error(`wrangler dev exited ${code}:\n${log}`)));
  });
  await ready;
  const base = `http://127.0.0.1:${port}`;
  const proxied = await fetch(`${base}/api/hello`);
  assert.equal(proxied.status, 200, log);
  assert.equal(await proxied.text(), "hello from your origin");
  assert.equal(origin.requests[0].url, "/hello");
  assert.equal((await fetch(`${base}/__edgeshed/stats`)).status, 401, "statsToken closes the admin endpoints");
  const stats = await fetch(`${base}/__edgeshed/stats`, { headers: { authorization: "Bearer a-secret-token" } });
  assert.deepEqual(Object.keys((await stats.json()).origins), ["api"]);
  const builds = log.match(/\[custom build\] Running/g)?.length ?? 0;
  const built = log.match(/wasm-build: dist\/worker is up to date/g)?.length ?? 0;
  assert.ok(builds - built <= 1, `the wasm is built at most once on start (${builds} runs, ${built} up to date):\n${log}`);
});
