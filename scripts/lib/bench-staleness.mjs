// Whether a table of BENCHMARKS.md still measures today's code: each input
// file's entry in benches/results/index.json names the commit it measured
// (`build`) and the paths of the code its figures depend on (`measures`). A
// commit after the build (reachable from HEAD, not from the build) that
// touched any of those paths makes the table stale, and
// scripts/benchmarks-md.mjs writes that under it, so BENCHMARKS.md never shows
// old figures as today's (its --check, in the test command's docs suite, fails
// until the file says so).
import { spawnSync } from "node:child_process";

const git = (root, args) => {
  const r = spawnSync("git", args, { cwd: root, encoding: "utf8" });
  return r.status === 0 ? r.stdout.trim() : null;
};

/**
 * `{ state, note }` for the input `name` with index entry `entry`: state is
 * "current", "stale" (note: the sentence for BENCHMARKS.md) or "unknown" (no
 * git history here, e.g. a shallow clone or an export; note names why).
 */
export function staleness(root, name, entry) {
  if (!entry.build) throw new Error(`benches/results/index.json: ${name} names no build (the commit it measured)`);
  if (!Array.isArray(entry.measures)) throw new Error(`benches/results/index.json: ${name} names no measures (the paths of the code it measures)`);
  if (entry.measures.length === 0) return { state: "current", note: "" };
  if (git(root, ["cat-file", "-e", `${entry.build}^{commit}`]) === null) {
    return { state: "unknown", note: `(Whether this table is stale is unknown here: build \`${entry.build}\` is not in this clone's history.)` };
  }
  // The first change after the build, not the last: the sentence then stays
  // the same from the commit that made the table stale until it is re-run.
  const changes = git(root, ["log", "--reverse", "--format=%h %cs", `${entry.build}..HEAD`, "--", ...entry.measures]);
  if (changes === null) return { state: "unknown", note: "(Whether this table is stale is unknown here: git log failed.)" };
  if (changes === "") return { state: "current", note: "" };
  const [sha, date] = changes.split("\n")[0].split(" ");
  return {
    state: "stale",
    note: `**Stale:** the code this table measures changed after its build (first in \`${sha}\`, ${date}); re-run its command to refresh it.`,
  };
}

/** `text` without the staleness sentences (to compare files where git cannot tell). */
export const withoutStaleness = (text) =>
  text
    .split("\n")
    .filter((line) => !line.startsWith("**Stale:**") && !line.startsWith("(Whether this table is stale is unknown here"))
    .join("\n");
