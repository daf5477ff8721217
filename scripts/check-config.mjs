// edgeshed check: checks a gateway configuration offline with the worker's
// own validator, the Rust code of crates/edgeshed-worker/src/config/, in the
// very wasm that is deployed (dist/worker/, its `checkConfig` export), and
// prints every error and every warning with its key.
//
//   node scripts/check-config.mjs <config.json> [--wrangler <wrangler.toml>] [--env <name>] [--no-build]
//   node scripts/check-config.mjs --wrangler wrangler.toml [--env <name>]   (its vars.EDGESHED)
//   npm run check -- my-config.json --wrangler wrangler.toml --env production
//
// With --wrangler, the bindings the configuration names (a budget's Durable
// Object namespace, a route's Rate Limiting binding) are looked up in that
// file as wrangler reads it (with --env: that environment's). The wasm is
// built first (scripts/build-worker.sh: cargo's freshness check when it is
// up to date) unless --no-build. Exit code: 1 on errors, 0 when valid
// (warnings printed), 2 on a usage error. scripts/deploy-guard.mjs runs the
// same check on what `wrangler deploy` ships.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = join(fileURLToPath(new URL(".", import.meta.url)), "..");
const DIST = join(ROOT, "dist/worker");

let checker;
/** The worker wasm's `checkConfig`, loaded once (dist/worker must be built). */
async function loadChecker() {
  if (checker) return checker;
  const wasm = join(DIST, "edgeshed_bg.wasm");
  if (!existsSync(wasm)) throw new Error(`${wasm} is missing: run ./scripts/build-worker.sh first`);
  const glue = await import(pathToFileURL(join(DIST, "edgeshed.js")).href);
  glue.initSync({ module: readFileSync(wasm) });
  checker = glue.checkConfig;
  return checker;
}

/** What wrangler.toml must declare for a binding of each kind. */
const DECLARE = {
  durable_object: (name) => `[[durable_objects.bindings]] name = "${name}", class_name = "EdgeshedBudget"`,
  rate_limit: (name) => `[[ratelimits]] name = "${name}"`,
};

/**
 * The bindings of `report` (checkConfig's) that `wranglerConfig` (as
 * wrangler's unstable_readConfig reads it) does not declare, as warnings
 * `{ path, message }`; `where` names the file (and environment).
 */
export function bindingWarnings(bindings, wranglerConfig, where) {
  const warnings = [];
  for (const { path, name, kind } of bindings) {
    const declared =
      kind === "durable_object"
        ? (wranglerConfig.durable_objects?.bindings ?? []).find((b) => b.name === name)
        : (wranglerConfig.ratelimits ?? []).find((b) => b.name === name);
    if (!declared) {
      warnings.push({
        path,
        message: `names "${name}", which ${where} does not declare: the gateway answers 500 on every request until it is bound (${DECLARE[kind](name)})`,
      });
    } else if (kind === "durable_object" && declared.class_name !== "EdgeshedBudget") {
      warnings.push({ path, message: `names "${name}", which ${where} binds to the class "${declared.class_name}", not EdgeshedBudget` });
    }
  }
  return warnings;
}

/**
 * Checks `binding` (what env.EDGESHED would be: an object, or a JSON string
 * such as a file's text) with the worker's validator: `{ errors, warnings,
 * bindings }`, errors as strings naming their key, warnings as `{ path,
 * message }`. With `wrangler: { config, where }`, the bindings missing from
 * it are warnings too.
 */
export async function checkBinding(binding, { wrangler } = {}) {
  const check = await loadChecker();
  const report = JSON.parse(check(binding));
  if (wrangler) report.warnings.push(...bindingWarnings(report.bindings, wrangler.config, wrangler.where));
  return report;
}

/** The report as lines: a summary for `what`, then each error and warning. */
export function formatReport(what, { errors, warnings }) {
  const count = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const summary =
    errors.length > 0
      ? `edgeshed check: ${what} is invalid: ${count(errors.length, "error")}${warnings.length ? `, ${count(warnings.length, "warning")}` : ""}`
      : `edgeshed check: ${what} is valid${warnings.length ? ` (${count(warnings.length, "warning")})` : ""}`;
  return [summary, ...errors.map((e) => `  error: ${e}`), ...warnings.map((w) => `  warning: ${w.path} ${w.message}`)];
}

/** wrangler.toml at `path` as wrangler reads it, for `env`. */
export async function readWrangler(path, env) {
  process.env.WRANGLER_LOG ??= "error";
  const { unstable_readConfig } = await import("wrangler");
  return { config: unstable_readConfig({ config: path, env }), where: `${path}${env ? ` [env.${env}]` : ""}` };
}

function usage(message) {
  console.error(`edgeshed check: ${message}`);
  console.error("usage: node scripts/check-config.mjs <config.json> [--wrangler <wrangler.toml>] [--env <name>] [--no-build]");
  return 2;
}

async function main(args) {
  let file, wranglerPath, env, build = true;
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i];
    if (arg === "--wrangler" || arg === "--env") {
      if (i + 1 >= args.length) return usage(`${arg} needs a value`);
      if (arg === "--wrangler") wranglerPath = resolve(args[++i]);
      else env = args[++i];
    } else if (arg === "--no-build") build = false;
    else if (arg.startsWith("-") || file !== undefined) return usage(`unexpected argument ${arg}`);
    else file = arg;
  }
  if (file === undefined && wranglerPath === undefined) return usage("give a configuration file, or --wrangler with an EDGESHED var");
  if (build) {
    // The validator of the current sources; the build's own guard is for wrangler's deploys only.
    const buildEnv = { ...process.env };
    delete buildEnv.WRANGLER_COMMAND;
    try {
      execFileSync("bash", [join(ROOT, "scripts/build-worker.sh")], { cwd: ROOT, env: buildEnv, stdio: ["ignore", "ignore", "inherit"] });
    } catch {
      console.error("edgeshed check: the worker build failed (see above)");
      return 1;
    }
  }
  const wrangler = wranglerPath === undefined ? undefined : await readWrangler(wranglerPath, env);
  let binding, what;
  if (file !== undefined) {
    try {
      binding = readFileSync(file, "utf8"); // a JSON string, read as `--var EDGESHED:$(cat file)` is
    } catch (error) {
      console.error(`edgeshed check: cannot read ${file}: ${error.message}`);
      return 1;
    }
    what = file;
  } else {
    binding = wrangler.config.vars?.EDGESHED;
    what = `${wrangler.where} vars.EDGESHED`;
    if (binding === undefined) {
      console.error(`edgeshed check: ${wrangler.where} has no EDGESHED var`);
      return 1;
    }
  }
  const report = await checkBinding(binding, { wrangler });
  const lines = formatReport(what, report);
  (report.errors.length > 0 ? console.error : console.log)(lines.join("\n"));
  return report.errors.length > 0 ? 1 : 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = await main(process.argv.slice(2));
