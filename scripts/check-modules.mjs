// The module-cycle check (scripts/test.sh, suite `docs`):
//
//   node scripts/check-modules.mjs
//
// Fails when the modules of a crate (src/ and every crates/*/src/) depend on
// each other in a circle. A module is a file (`a/b.rs` or `a/b/mod.rs` under src/ is
// `a::b`); it depends on another when its code names a path into it
// (`crate::x::y`, `super::x`, `self::x`, also inside `use` groups). A path
// into an ancestor or a descendant is the module tree itself, not a
// dependency, and is not counted; nor are test modules (`tests`, `*_tests`). Every other dependency is lifted to the
// level where the two modules meet: `handler::fanout::call` naming
// `handler::proxy::held` makes `fanout` depend on `proxy` among the children
// of `handler`. A circle among the children of one module is reported with
// the lines that make it.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const tracked = execFileSync("git", ["ls-files", "*.rs"], { cwd: ROOT, encoding: "utf8" }).split("\n").filter(Boolean);

/** The crate source root and module path of `file`, or null outside a crate's src/. */
function moduleOf(file) {
  const match = /^((?:crates\/[^/]+\/)?src)\/(.*)\.rs$/.exec(file);
  if (!match) return null;
  const parts = match[2].split("/");
  const last = parts.at(-1);
  if (last === "mod" || (parts.length === 1 && (last === "lib" || last === "main"))) parts.pop();
  return { crate: match[1], path: parts };
}

// Comments and the contents of string literals name paths that are not code.
const code = (text) =>
  text
    .replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " "))
    .replace(/\/\/.*$/gm, "")
    .replace(/r#*"[\s\S]*?"#*|"(?:\\.|[^"\\])*"/g, (s) => s.replace(/[^\n]/g, " "));

/** Every path that `text` names from `crate::`, `super::` or `self::`, expanding `{a, b::c}` groups. */
function namedPaths(text) {
  const found = [];
  const head = /\b(crate|super|self)((?:\s*::\s*(?:super|\w+))*)\s*::\s*(\{)?/g;
  let match;
  while ((match = head.exec(text))) {
    const line = text.slice(0, match.index).split("\n").length;
    const prefix = [match[1], ...match[2].split("::").map((s) => s.trim()).filter(Boolean)];
    if (!match[3]) {
      const rest = /^\w+/.exec(text.slice(head.lastIndex));
      found.push({ segments: rest ? [...prefix, rest[0]] : prefix, line });
      continue;
    }
    // A group: the text up to its closing brace, split at top-level commas.
    let depth = 1;
    let end = head.lastIndex;
    while (end < text.length && depth > 0) {
      if (text[end] === "{") depth++;
      if (text[end] === "}") depth--;
      end++;
    }
    for (const item of splitGroup(text.slice(head.lastIndex, end - 1))) {
      found.push({ segments: [...prefix, ...item], line });
    }
  }
  return found;
}
function splitGroup(group) {
  const items = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i <= group.length; i++) {
    const c = group[i];
    if (c === "{") depth++;
    if (c === "}") depth--;
    if ((c === "," && depth === 0) || i === group.length) {
      const item = group.slice(start, i).trim();
      start = i + 1;
      if (!item) continue;
      const nested = /^([\w\s:]*?)::\s*\{([\s\S]*)\}$/.exec(item);
      const lead = (s) => s.split("::").map((x) => x.trim()).filter(Boolean);
      if (nested) for (const inner of splitGroup(nested[2])) items.push([...lead(nested[1]), ...inner]);
      else items.push(lead(item.split(/\s+as\s+/)[0]));
    }
  }
  return items;
}

const crates = new Map(); // crate root -> Map(module key -> file)
for (const file of tracked) {
  const m = moduleOf(file);
  // Test modules (`tests`, `native_tests`, a `tests/` folder) may use anything: nothing depends on them.
  if (!m || m.path.some((part) => part === "tests" || part.endsWith("_tests"))) continue;
  if (!crates.has(m.crate)) crates.set(m.crate, new Map());
  crates.get(m.crate).set(m.path.join("::"), file);
}

const isPrefix = (a, b) => a.length <= b.length && a.every((s, i) => s === b[i]);
let cycles = 0;
let edges = 0;
for (const [crate, modules] of crates) {
  // level (module key) -> Map(child -> Map(child -> evidence))
  const lifted = new Map();
  for (const [key, file] of modules) {
    const here = key ? key.split("::") : [];
    for (const { segments, line } of namedPaths(code(readFileSync(join(ROOT, file), "utf8")))) {
      let base = [];
      let rest = segments;
      if (rest[0] === "crate") rest = rest.slice(1);
      else {
        base = [...here];
        while (rest[0] === "self" || rest[0] === "super") {
          if (rest[0] === "super") base.pop();
          rest = rest.slice(1);
        }
      }
      let target = [...base];
      for (const segment of rest) {
        if (!modules.has([...target, segment].join("::"))) break;
        target.push(segment);
      }
      if (isPrefix(target, here) || isPrefix(here, target)) continue;
      let meet = 0;
      while (here[meet] === target[meet]) meet++;
      const level = here.slice(0, meet).join("::");
      const [from, to] = [here[meet], target[meet]];
      if (!lifted.has(level)) lifted.set(level, new Map());
      const out = lifted.get(level);
      if (!out.has(from)) out.set(from, new Map());
      if (!out.get(from).has(to)) out.get(from).set(to, `${file}:${line}`), edges++;
    }
  }
  for (const [level, graph] of lifted) {
    for (const cycle of circles(graph)) {
      cycles++;
      const where = `${crate}${level ? ` (${level})` : ""}`;
      console.error(`module cycle in ${where}: ${[...cycle, cycle[0]].join(" -> ")}`);
      cycle.forEach((from, i) => console.error(`  ${from} -> ${cycle[(i + 1) % cycle.length]}: ${graph.get(from).get(cycle[(i + 1) % cycle.length])}`));
    }
  }
}

/** One circle per strongly connected component of more than one node (Tarjan), as a node list. */
function circles(graph) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.keys() ?? []) {
      if (!index.has(w)) visit(w), low.set(v, Math.min(low.get(v), low.get(w)));
      else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const component = [];
    let w;
    do (w = stack.pop()), onStack.delete(w), component.push(w);
    while (w !== v);
    if (component.length > 1) found.push(pathThrough(graph, new Set(component)));
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}
/** A circle inside `component`: walk from one node until a node repeats. */
function pathThrough(graph, component) {
  const path = [component.values().next().value];
  for (;;) {
    const next = [...graph.get(path.at(-1)).keys()].find((w) => component.has(w));
    const seen = path.indexOf(next);
    if (seen >= 0) return path.slice(seen);
    path.push(next);
  }
}

if (cycles > 0) {
  console.error(`modules: ${cycles} cycle(s) (scripts/check-modules.mjs)`);
  process.exit(1);
}
console.log(`modules: no cycles among ${[...crates.values()].reduce((n, m) => n + m.size, 0)} modules of ${crates.size} crates (${edges} dependencies between them)`);
