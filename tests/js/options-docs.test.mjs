// docs/js.md's options table agrees with the options schema the package
// validates by (crates/edgeshed-js/src/options-schema.js, rendered from the
// core's src/options_schema.rs): every key has a row (or is named in its
// section's row), every integer range, default and accepted name the schema
// holds is the one the row states. The table's prose stays hand-written;
// what it states about ranges, defaults and names cannot drift from the code.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { LIMITER, CALL } from "../../crates/edgeshed-js/src/options-schema.js";

const doc = readFileSync(new URL("../../docs/js.md", import.meta.url), "utf8");
const start = doc.indexOf("| option | meaning | valid values |");
assert.ok(start >= 0, "docs/js.md has the options table");
const rows = doc
  .slice(start)
  .split("\n\n")[0]
  .split("\n")
  .slice(2)
  .map((line) => line.split(" | ").map((cell) => cell.replace(/^\| ?| ?\|$/g, "")));

/** The keys a row is about: `a.b` / `c` names `a.b` and `a.c`; "`run`/`fetch`: `k`" names the call key `k`. */
function keysOf(cell) {
  const names = [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1]);
  if (cell.startsWith("`run`/`fetch`:")) return names.slice(2).map((name) => `call:${name}`);
  const section = names[0].includes(".") ? names[0].slice(0, names[0].indexOf(".") + 1) : "";
  return names.map((name) => (name.includes(".") ? name : section + name));
}
const rowOf = new Map(rows.flatMap((row) => keysOf(row[0]).map((key) => [key, row])));

// Every key of the schema: [path, spec, the row that must describe it].
const keys = [
  ...Object.entries(LIMITER).flatMap(([key, spec]) => [
    [key, spec, rowOf.get(key)],
    ...(spec.kind === "section" ? Object.entries(spec.keys).map(([inner, s]) => [`${key}.${inner}`, s, rowOf.get(`${key}.${inner}`) ?? rowOf.get(key)]) : []),
  ]),
  ...Object.entries(CALL).map(([key, spec]) => [`call:${key}`, spec, rowOf.get(`call:${key}`)]),
];
const english = (n) => n.toLocaleString("en-US");
/** Whether `text` states the number `n` (plain or with thousands separators), not as part of another number. */
const mentions = (text, n) =>
  [String(n), english(n)].some((form) => new RegExp(`(^|[^0-9.,])${form.replace(/[.,]/g, "\\$&")}(?![0-9]|[.,][0-9])`).test(text));

test("every option of the schema has a row of docs/js.md's table, or is named in its section's row", () => {
  for (const [path, , row] of keys) {
    assert.ok(row, `docs/js.md's options table has no row for ${path}`);
    const name = path.split(/[.:]/).at(-1);
    assert.ok(row.join(" ").includes(name), `the row for ${path} names ${name}`);
  }
});

test("the table states the schema's integer ranges, defaults and names", () => {
  for (const [path, spec, row] of keys) {
    const [, , valid] = row;
    const text = row.join(" ");
    if (spec.kind === "integer" && rowOf.get(path) === row && keysOf(row[0]).length >= 1 && !path.startsWith("rate")) {
      const [min, max] = [english(spec.min), english(spec.max)];
      assert.ok(
        valid.includes(`integer ${min} to ${max}`) || valid.includes(`integers ${min} to ${max}`),
        `${path}: the table says "${valid}", the schema ${spec.min} to ${spec.max}`,
      );
    }
    if (spec.kind === "integer" && path.startsWith("rate")) {
      assert.ok(mentions(text, spec.max) || text.includes("10^9"), `${path}: its maximum ${spec.max} is stated`);
    }
    if (typeof spec.default === "number") assert.ok(mentions(text, spec.default), `${path}: its default ${spec.default} is stated in "${text}"`);
    if (spec.within !== undefined) assert.ok(mentions(text, spec.within), `${path}: its default ${spec.within} is stated`);
    for (const value of spec.values ?? []) assert.ok(text.includes(`"${value}"`), `${path}: "${value}" is named in "${text}"`);
  }
});
