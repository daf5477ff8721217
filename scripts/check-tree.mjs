// The tree check (scripts/test.sh, suite `docs`):
//
//   node scripts/check-tree.mjs
//
// Fails, listing what it found, on
// 1. a committed log or archive: a tracked file named *.log, *.tgz, *.tar,
//    *.tar.gz or *.zip (the output of a run is not source; two stray logs
//    were committed at the root once);
// 2. an untracked file that git does not ignore (`git ls-files --others
//    --exclude-standard`): a build or test artifact that .gitignore misses,
//    such as the tarball `npm pack ./pkg` leaves.
//
// Safe in CI's fresh clone: it has no untracked file, and every output of
// setup and of the suites goes under an ignored folder (target/, pkg/,
// dist/, node_modules/, .wrangler/, ...) or the run's temp folder. Locally a
// new file not added yet fails check 2 as well: add it (`git add -N` is
// enough), delete it, or ignore it.
import { execFileSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const ARCHIVE_OR_LOG = /\.(log|tgz|tar|tar\.gz|zip)$/i;

/** `git ls-files` with `args`: repository-relative paths. */
function gitFiles(args) {
  return execFileSync("git", ["ls-files", "-z", ...args], { cwd: ROOT, encoding: "utf8" })
    .split("\0")
    .filter(Boolean);
}

const problems = [];
const committed = gitFiles(["--cached"]).filter((file) => ARCHIVE_OR_LOG.test(file));
if (committed.length > 0) {
  problems.push(
    `committed logs or archives (remove them with git rm; a run's output is not source):\n${committed.map((f) => `  ${f}`).join("\n")}`,
  );
}
const untracked = gitFiles(["--others", "--exclude-standard"]);
if (untracked.length > 0) {
  problems.push(
    `untracked files that .gitignore does not cover (a build artifact: ignore it in .gitignore or delete it; a new source file: git add it, or git add -N):\n${untracked.map((f) => `  ${f}`).join("\n")}`,
  );
}
if (problems.length > 0) {
  console.error(`check-tree: ${problems.join("\n")}`);
  process.exit(1);
}
console.log("tree: no committed log or archive, no untracked file outside .gitignore");
