// scripts/lib/bench-staleness.mjs, on a throwaway git repository: a table is
// stale once a commit after its build touches the code it measures, and only
// then; without the build in the history, staleness is unknown.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { staleness, withoutStaleness } from "../../scripts/lib/bench-staleness.mjs";

function repo() {
  const dir = mkdtempSync(join(tmpdir(), "edgeshed-staleness-"));
  const git = (...args) => {
    const r = spawnSync("git", args, {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, GIT_AUTHOR_NAME: "t", GIT_AUTHOR_EMAIL: "t@t", GIT_COMMITTER_NAME: "t", GIT_COMMITTER_EMAIL: "t@t" },
    });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim();
  };
  const commit = (path, text) => {
    mkdirSync(join(dir, path, ".."), { recursive: true });
    writeFileSync(join(dir, path), text);
    git("add", "-A");
    git("commit", "-qm", `change ${path}`);
    return git("rev-parse", "--short", "HEAD");
  };
  git("init", "-q");
  return { dir, commit, done: () => rmSync(dir, { recursive: true, force: true }) };
}

test("a table goes stale when the code it measures changes after its build, not when other code does", (t) => {
  const r = repo();
  t.after(r.done);
  const build = r.commit("src/lib.rs", "fn a() {}");
  const entry = { build, measures: ["src/", "benches/core/"] };
  assert.equal(staleness(r.dir, "core.json", entry).state, "current");
  r.commit("docs/notes.md", "unrelated");
  assert.equal(staleness(r.dir, "core.json", entry).state, "current", "a change outside measures");
  const change = r.commit("src/lib.rs", "fn a() { 1; }");
  const stale = staleness(r.dir, "core.json", entry);
  assert.equal(stale.state, "stale");
  assert.match(stale.note, new RegExp(`^\\*\\*Stale:\\*\\* .*\`${change}\``), stale.note);
  // Re-measured at the change: current again.
  assert.equal(staleness(r.dir, "core.json", { ...entry, build: change }).state, "current");
  // A later change leaves the sentence as it was (it names the first change).
  r.commit("benches/core/main.rs", "later");
  assert.equal(staleness(r.dir, "core.json", entry).note, stale.note);
});

test("a build missing from the history makes staleness unknown, and the comparison leaves those sentences out", (t) => {
  const r = repo();
  t.after(r.done);
  r.commit("src/lib.rs", "x");
  const unknown = staleness(r.dir, "core.json", { build: "0123456789abcdef0123456789abcdef01234567", measures: ["src/"] });
  assert.equal(unknown.state, "unknown");
  assert.equal(withoutStaleness(`a\n${unknown.note}\nb`), "a\nb");
  assert.equal(withoutStaleness("a\n**Stale:** x\nb"), "a\nb");
  assert.throws(() => staleness(r.dir, "x.json", { measures: [] }), /names no build/);
  assert.throws(() => staleness(r.dir, "x.json", { build: "abc" }), /names no measures/);
});
