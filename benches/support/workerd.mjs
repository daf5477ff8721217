// Shared by benches/size.mjs and benches/e2e/: start a worker in real
// workerd through Miniflare (the settings of wrangler.toml), find the workerd
// process it spawned, read its RSS, bundle the baseline workers.
import { readFileSync, readdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** compatibility_date / compatibility_flags of wrangler.toml (read without loading wrangler). */
export function compat() {
  const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  const date = /^compatibility_date\s*=\s*"([^"]+)"/m.exec(toml)?.[1];
  const flags = /^compatibility_flags\s*=\s*\[([^\]]*)\]/m.exec(toml)?.[1];
  return {
    compatibilityDate: date,
    compatibilityFlags: flags ? [...flags.matchAll(/"([^"]+)"/g)].map((m) => m[1]) : [],
  };
}

/** [pid, ppid, comm] of every process. */
function processes() {
  const out = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      out.push([Number(name), ppid, comm]);
    } catch {
      // gone
    }
  }
  return out;
}

/** pids of the workerd processes below this Node process. */
export function workerdPids() {
  const all = processes();
  const children = new Map();
  for (const [pid, ppid] of all) {
    if (!children.has(ppid)) children.set(ppid, []);
    children.get(ppid).push(pid);
  }
  const below = new Set();
  const walk = (pid) => {
    for (const c of children.get(pid) ?? []) {
      below.add(c);
      walk(c);
    }
  };
  walk(process.pid);
  return all.filter(([pid, , comm]) => below.has(pid) && comm.startsWith("workerd")).map(([pid]) => pid);
}

/** VmRSS of `pid` in KiB (NaN when it is gone). */
export function rssKiB(pid) {
  try {
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : NaN;
  } catch {
    return NaN;
  }
}

/** utime + stime of the stat line `stat` (from /proc), in ms (10 ms ticks). */
function statCpuMs(stat) {
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** CPU time (utime + stime) of process `pid`, in ms; NaN when it is gone. */
export function cpuMs(pid) {
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return NaN;
  }
}

/** CPU time of each thread of `pid`: Map(tid → ms). Empty when it is gone. */
export function threadCpuMs(pid) {
  const out = new Map();
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        out.set(tid, statCpuMs(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8")));
      } catch {
        // the thread ended
      }
    }
  } catch {
    // the process ended
  }
  return out;
}

/**
 * Starts `scriptPath` (an ES module worker under `modulesRoot`) in workerd.
 * `inspectorPort`: open the V8 inspector there (benches/e2e/profile.mjs).
 * Returns { mf, url, pid } where pid is the workerd process it spawned.
 */
export async function startWorkerd({ scriptPath, script, modulesRoot = ROOT, bindings = {}, extraFlags = [], inspectorPort }) {
  const before = new Set(workerdPids());
  const { compatibilityDate, compatibilityFlags } = compat();
  // workerd's stdout/stderr: counted by kind instead of printed.
  const log = { lines: 0, crossRequest: 0, hung: 0, sample: [] };
  const count = (stream) => {
    let rest = "";
    stream.on("data", (chunk) => {
      const lines = (rest + chunk).split("\n");
      rest = lines.pop();
      for (const line of lines) {
        if (/^\s+at /.test(line) || line.trim() === "") continue;
        log.lines++;
        if (line.includes("different request context")) log.crossRequest++;
        else if (line.includes("hung")) log.hung++;
        else if (log.sample.length < 5) log.sample.push(line.slice(0, 200));
      }
    });
  };
  const mf = new Miniflare({
    modules: true,
    // An inline script still needs a path, to resolve its relative imports.
    ...(script ? { script, scriptPath: join(modulesRoot, "__inline.mjs") } : { scriptPath }),
    modulesRoot,
    modulesRules: [
      { type: "ESModule", include: ["**/*.js", "**/*.mjs"] },
      { type: "CompiledWasm", include: ["**/*.wasm"] },
    ],
    compatibilityDate,
    compatibilityFlags: [...compatibilityFlags, ...extraFlags],
    cf: false,
    bindings,
    ...(inspectorPort === undefined ? {} : { inspectorPort }),
    handleRuntimeStdio(stdout, stderr) {
      count(stdout);
      count(stderr);
    },
  });
  const url = await mf.ready;
  const pid = workerdPids().find((p) => !before.has(p));
  return { mf, url, pid, log };
}

/** Bundles a worker that imports npm packages (esbuild, workerd conditions) into a temp dir. */
export async function bundle(entry) {
  const { build } = await import("esbuild");
  const outdir = mkdtempSync(join(tmpdir(), "edgeshed-bench-"));
  await build({
    entryPoints: [entry],
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "import"],
    mainFields: ["module", "main"],
    outdir,
    outExtension: { ".js": ".mjs" },
    logLevel: "error",
  });
  const name = entry.split("/").pop().replace(/\.m?js$/, ".mjs");
  return { scriptPath: join(outdir, name), modulesRoot: outdir };
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
