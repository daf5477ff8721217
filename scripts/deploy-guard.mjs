// Refuses to let `wrangler deploy` ship a configuration that only makes sense
// on this machine: wrangler.toml's demo (loopback origins, an open
// /__edgeshed/*), and one the gateway would refuse. scripts/build-worker.sh
// runs it when wrangler runs the build for a deploy (WRANGLER_COMMAND=deploy),
// after the wasm build and before anything is uploaded.
//
// It reads the configuration wrangler is deploying: the `--config`, `--env`
// and `--var EDGESHED:...` of the wrangler command that started the build
// (from the process tree), then wrangler.toml as wrangler reads it. A binding
// from a secret (no EDGESHED var) is the user's own and is not checked.
//
// - a configuration the gateway refuses (scripts/check-config.mjs: the
//   worker's own validator, in the wasm just built): the deploy fails (exit
//   1, also with --dry-run), listing every error with its key; its warnings
//   (and a binding it names that the wrangler config lacks) are printed;
// - an origin on 127.0.0.1 / localhost / ::1, or "statsPublic": true: the
//   deploy fails (exit 1) with what to do instead;
// - `--dry-run` (nothing is uploaded), or EDGESHED_ALLOW_DEMO_DEPLOY=1: a
//   loud warning, and the build goes on.
//
// A refusal is printed once. wrangler shows a build's output as it comes,
// and when the build fails it dumps the failure too: its message (the
// build's stderr and stdout again) and its `stdout` and `stderr` fields (a
// third time). So on Linux, when wrangler's stderr is a terminal or a pipe,
// the guard writes everything it has to say straight there, and the build's
// own output says only that the deploy was refused; elsewhere it prints as
// usual (and wrangler repeats it).
import { execFileSync } from "node:child_process";
import { closeSync, constants, fstatSync, openSync, readFileSync, writeSync } from "node:fs";
import { isatty } from "node:tty";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkBinding, formatReport } from "./check-config.mjs";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");

/** A process's parent pid and argv (Linux /proc; elsewhere `ps`, split on spaces). */
function processInfo(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    return { ppid, argv };
  } catch {
    try {
      const ps = (field) => execFileSync("ps", ["-o", `${field}=`, "-p", String(pid)], { encoding: "utf8" }).trim();
      return { ppid: Number(ps("ppid")), argv: ps("args").split(/\s+/) };
    } catch {
      return undefined;
    }
  }
}

/**
 * The wrangler command that started this build: its `pid` and its `args`
 * (after `deploy`), if found.
 */
export function wranglerDeploy(startPid = process.ppid) {
  for (let pid = startPid, depth = 0; pid > 1 && depth < 12; depth += 1) {
    const info = processInfo(pid);
    if (!info) return undefined;
    const at = info.argv.indexOf("deploy");
    if (at >= 0 && info.argv.slice(0, at).some((arg) => /wrangler/.test(arg))) return { pid, args: info.argv.slice(at + 1) };
    pid = info.ppid;
  }
  return undefined;
}

const pause = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Writes `text` to the stderr of process `pid` (Linux: `/proc/<pid>/fd/2`)
 * if that is a terminal or a pipe; true when it was written. A regular file
 * is left alone (opened again, it has an offset of its own, and the
 * process's next writes would overwrite these lines), and so is a pipe that
 * nobody reads (non-blocking: it fails at once). What a full pipe does not
 * take within about 5 s goes to this process's own stderr.
 */
export function writeToStderrOf(pid, text) {
  if (!pid || process.platform !== "linux") return false;
  let fd;
  try {
    fd = openSync(`/proc/${pid}/fd/2`, constants.O_WRONLY | constants.O_APPEND | constants.O_NONBLOCK);
    if (!isatty(fd) && !fstatSync(fd).isFIFO()) return false;
    const bytes = Buffer.from(text);
    let at = 0;
    for (let tries = 0; at < bytes.length && tries < 500; ) {
      try {
        at += writeSync(fd, bytes, at);
      } catch (error) {
        if (error.code !== "EAGAIN") break;
        tries += 1;
        pause(10);
      }
    }
    if (at === 0) return false;
    if (at < bytes.length) process.stderr.write(bytes.subarray(at));
    return true;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Prints what the guard says when it refuses a deploy (`lines`, everything
 * it had to say, in order) once: to wrangler's stderr (`wranglerPid`) where
 * it can, the build's own stderr then saying only that it refused.
 */
function refuse(lines, wranglerPid) {
  const text = `${lines.join("\n")}\n`;
  if (writeToStderrOf(wranglerPid, text)) {
    console.error("edgeshed: deploy refused by scripts/deploy-guard.mjs (its reasons are printed above)");
  } else {
    process.stderr.write(text);
  }
}

/** `--config`, `--env`, `--dry-run` and the `--var EDGESHED:<value>` of wrangler deploy's arguments. */
export function parseDeployArgs(args) {
  const parsed = { config: undefined, env: undefined, dryRun: false, edgeshedVar: undefined };
  for (let i = 0; i < args.length; i += 1) {
    const [flag, inline] = args[i].startsWith("--") && args[i].includes("=") ? args[i].split(/=(.*)/s) : [args[i], undefined];
    const value = () => inline ?? args[++i];
    if (flag === "--config" || flag === "-c") parsed.config = value();
    else if (flag === "--env" || flag === "-e") parsed.env = value();
    else if (flag === "--dry-run") parsed.dryRun = inline !== "false";
    else if (flag === "--var") {
      // --var KEY:VALUE [KEY:VALUE ...]
      const values = inline !== undefined ? [inline] : [];
      while (inline === undefined && i + 1 < args.length && !args[i + 1].startsWith("-")) values.push(args[++i]);
      for (const entry of values) if (entry.startsWith("EDGESHED:")) parsed.edgeshedVar = entry.slice("EDGESHED:".length);
    }
  }
  return parsed;
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\]|0\.0\.0\.0)$/i;

/** What makes `binding` (an object or a JSON string) unfit for a deployed gateway. */
export function localOnly(binding) {
  let config = binding;
  if (typeof binding === "string") {
    try {
      config = JSON.parse(binding);
    } catch {
      return []; // the gateway itself reports an unreadable configuration
    }
  }
  const problems = [];
  if (config?.statsPublic === true) problems.push('"statsPublic": true opens /__edgeshed/* to anyone who can reach the gateway');
  for (const [name, origin] of Object.entries(config?.origins ?? {})) {
    let host;
    try {
      host = new URL(origin?.url).hostname;
    } catch {
      continue;
    }
    if (LOOPBACK.test(host)) problems.push(`origins.${name}.url ${origin.url} is this machine: unreachable from Cloudflare`);
  }
  return problems;
}

async function main() {
  // wrangler already printed its own warnings about this configuration.
  process.env.WRANGLER_LOG ??= "error";
  const { unstable_readConfig } = await import("wrangler");
  const wrangler = wranglerDeploy();
  const { config, env, dryRun, edgeshedVar } = parseDeployArgs(wrangler?.args ?? []);
  const configPath = resolve(config ?? join(ROOT, "wrangler.toml"));
  const wranglerConfig = unstable_readConfig({ config: configPath, env });
  const binding = edgeshedVar ?? wranglerConfig.vars?.EDGESHED;
  const file = `${configPath}${env ? ` [env.${env}]` : ""}`;
  const where = edgeshedVar !== undefined ? "--var EDGESHED" : `${file} vars`;
  if (binding === undefined) {
    console.log(`edgeshed deploy check: no EDGESHED var in ${where}; the binding must come from a secret (wrangler secret put EDGESHED)`);
    return 0;
  }
  const report = await checkBinding(binding, { wrangler: { config: wranglerConfig, where: file } });
  const [, ...details] = formatReport(where, report);
  if (report.errors.length > 0) {
    const lines = [
      `edgeshed: REFUSING TO DEPLOY: the EDGESHED configuration (${where}) is invalid; the gateway would answer 500 on every request:`,
      ...details,
      "Fix it and check it with: node scripts/check-config.mjs my-config.json --wrangler wrangler.toml (docs/deploy.md)",
    ];
    refuse(lines, wrangler?.pid);
    return 1;
  }
  // Printed now on the way to a deploy, or with the refusal below.
  const warnings = report.warnings.length > 0 ? [`edgeshed deploy check: warnings for the configuration from ${where}:`, ...details] : [];
  const problems = localOnly(binding);
  if (problems.length === 0) {
    if (warnings.length > 0) console.log(warnings.join("\n"));
    console.log(`edgeshed deploy check: the configuration from ${where} has no local-only settings`);
    return 0;
  }
  const allowed = process.env.EDGESHED_ALLOW_DEMO_DEPLOY === "1";
  const banner = dryRun || allowed ? "edgeshed WARNING" : "edgeshed: REFUSING TO DEPLOY";
  const lines = [
    `${banner}: the EDGESHED configuration (${where}) is the local demo, or like it:`,
    ...problems.map((p) => `  - ${p}`),
    "Deploy your own configuration instead (docs/deploy.md):",
    "  npx wrangler secret put EDGESHED --env production < my-config.json   (once)",
    "  npx wrangler deploy --env production",
    '  or per deploy: npx wrangler deploy --env production --var "EDGESHED:$(cat my-config.json)"',
    dryRun || allowed
      ? `(${dryRun ? "--dry-run: nothing is uploaded" : "EDGESHED_ALLOW_DEMO_DEPLOY=1"}; going on)`
      : "To deploy it anyway: EDGESHED_ALLOW_DEMO_DEPLOY=1 npx wrangler deploy",
  ];
  if (dryRun || allowed) {
    if (warnings.length > 0) console.log(warnings.join("\n"));
    console.error(lines.join("\n"));
    return 0;
  }
  refuse([...warnings, ...lines], wrangler?.pid);
  return 1;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = await main();
