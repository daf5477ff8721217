// The docs check (scripts/test.sh, suite `docs`):
//
//   node scripts/check-docs.mjs
//
// 1. Every repository path that a Markdown file or a code comment names
//    exists. Scanned: every *.md (whole text) and the comments of every
//    *.rs, *.mjs, *.js, *.sh and *.toml file that git tracks. A path is a
//    word that starts with one of PREFIXES (`src/lib.rs`, `crates/...`,
//    `tests/...`) or an UPPERCASE name ending in `.md` (`RELIABILITY.md`).
//    It exists when it is a tracked file or directory (a directory: the
//    prefix of a tracked file) relative to the repository root or to any
//    directory above the file that names it (a comment in a crate may name
//    the crate's own `src/...` files). An UPPERCASE `.md` name with no directory
//    exists when some tracked file has that name.
//    A glob (`fuzz/fuzz_targets/*.rs`) exists when a tracked file starts
//    with its part before the `*`.
//    Allowed by rule: a path right after `../` or another `/` (outside the
//    repository, or part of a URL or a longer path, e.g. ../shared/DESIGN.md
//    or workerd/src/workerd/...), a path through a build output (BUILD_DIRS:
//    pkg/, dist/, target/, ...) or one git ignores (fuzz/corpus/), and the
//    dated history files (HISTORY: docs/benchmarks-log-2026.md and later years),
//    which keep their text as it was written.
// 2. BENCHMARKS.md is what scripts/benchmarks-md.mjs makes of benches/results/.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const PREFIXES = ["src", "crates", "tests", "scripts", "benches", "docs", "worker", "npm", "www", "examples", "fuzz"];
const BUILD_DIRS = new Set(["pkg", "dist", "target", "node_modules", "artifacts", "build", ".wrangler"]);
const HISTORY = /^docs\/benchmarks-log-\d{4}\.md$/;
const COMMENTED = { rs: "slash", mjs: "slash", js: "slash", sh: "hash", toml: "hash" };

const tracked = execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "-z"], { cwd: ROOT, encoding: "utf8" })
  .split("\0")
  .filter(Boolean);
const files = new Set(tracked);
const dirs = new Set();
const basenames = new Set();
for (const file of tracked) {
  basenames.add(posix.basename(file));
  for (let d = posix.dirname(file); d !== "."; d = posix.dirname(d)) dirs.add(d);
}

// A path candidate: not preceded by a word character, `.`, `/` or `-`
// (so `../x`, `a/src/x` and URLs are not candidates), ends in a word character.
const PATH = new RegExp(`(?<![\\w./-])((?:${PREFIXES.join("|")})/[\\w./-]*)`, "g");
const UPPER_MD = /(?<![\w./-])([A-Z][A-Z0-9_-]*\.md)\b/g;

/** The comment text of one line of a code file ("" when it has none). */
function commentOf(line, style) {
  const t = line.trimStart();
  if (style === "hash") {
    if (t.startsWith("#")) return t;
    const i = line.indexOf(" # ");
    return i >= 0 ? line.slice(i) : "";
  }
  if (t.startsWith("//") || t.startsWith("/*") || t.startsWith("*")) return t;
  const i = line.indexOf(" // ");
  return i >= 0 ? line.slice(i) : "";
}

/** Whether git ignores `path` (a build or run output, e.g. fuzz/corpus/). */
function ignored(path) {
  // `path/x` too: a pattern such as `corpus/` matches a directory only.
  return [path, `${path}/x`].some((p) => {
    try {
      execFileSync("git", ["check-ignore", "-q", "--no-index", p], { cwd: ROOT });
      return true;
    } catch {
      return false;
    }
  });
}

/** Whether `path` (a glob's part before `*` when `glob`), named in `from`, is in the repository. */
function exists(path, from, glob) {
  const clean = glob ? path : path.replace(/[./-]+$/, "").replace(/\/+$/, "");
  if (clean.split("/").some((segment) => BUILD_DIRS.has(segment))) return true;
  for (let base = posix.dirname(from); ; base = posix.dirname(base)) {
    const full = base === "." ? clean : `${base}/${clean}`;
    if (glob ? tracked.some((f) => f.startsWith(full)) : files.has(full) || dirs.has(full)) return true;
    if (base === ".") return ignored(clean);
  }
}

const problems = [];
for (const file of tracked) {
  const ext = file.split(".").pop();
  const markdown = ext === "md";
  if (!markdown && !COMMENTED[ext]) continue;
  if (HISTORY.test(file)) continue;
  let text;
  try {
    text = readFileSync(join(ROOT, file), "utf8");
  } catch {
    continue; // deleted in the work tree
  }
  text.split("\n").forEach((line, i) => {
    const scanned = markdown ? line : commentOf(line, COMMENTED[ext]);
    if (!scanned) return;
    for (const match of scanned.matchAll(PATH)) {
      const path = match[1];
      const glob = scanned[match.index + path.length] === "*";
      if (!exists(path, file, glob)) problems.push(`${file}:${i + 1}: names ${path}, which is not in the repository`);
    }
    for (const [, name] of scanned.matchAll(UPPER_MD)) {
      if (!basenames.has(name)) problems.push(`${file}:${i + 1}: names ${name}, which is not in the repository`);
    }
  });
}

let failed = false;
if (problems.length) {
  console.error(`${problems.length} stale path(s) in docs and comments (outside the repository? write it as ../dir/FILE):`);
  for (const p of problems) console.error(`  ${p}`);
  failed = true;
} else {
  console.log(`docs: every path named in ${tracked.length} tracked files' docs and comments exists`);
}

try {
  execFileSync(process.execPath, [join(ROOT, "scripts/benchmarks-md.mjs"), "--check"], { stdio: "inherit" });
} catch {
  failed = true;
}
process.exit(failed ? 1 : 0);
