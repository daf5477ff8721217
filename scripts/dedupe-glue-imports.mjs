// Removes the duplicate imports that wasm-bindgen 0.2.130's `--target web`
// output makes of one JavaScript snippet module.
//
// wasm-bindgen emits one `import * as importN from "<snippet>"` and one key
// `"<snippet>": importN` in the wasm imports object per Rust `extern` block
// that names the module. Every extra key for the same module is a duplicate
// key in an object literal, which bundlers (esbuild, wrangler) report as a
// warning each. All those namespaces are the same module, so one import and
// one key per module are exactly equivalent.
//
//   node scripts/dedupe-glue-imports.mjs <file.js>   (rewrites the file; prints what it did)
import { readFileSync, writeFileSync } from "node:fs";

const file = process.argv[2];
if (!file) {
  console.error("usage: node scripts/dedupe-glue-imports.mjs <wasm-bindgen output .js>");
  process.exit(2);
}
const source = readFileSync(file, "utf8");
const namespaceImport = /^import \* as (import\d+) from "([^"]+)";?\n/gm;
const firstFor = new Map(); // module path -> the namespace kept
const dropped = new Map(); // dropped namespace -> the one kept
for (const [, name, path] of source.matchAll(namespaceImport)) {
  if (firstFor.has(path)) dropped.set(name, firstFor.get(path));
  else firstFor.set(path, name);
}
let output = source.replace(namespaceImport, (line, name) => (dropped.has(name) ? "" : line));
// The imports object: `"<path>": importN,` lines of dropped namespaces go.
output = output.replace(/^\s*"[^"]+": (import\d+),?\n/gm, (line, name) => (dropped.has(name) ? "" : line));
// Nothing else may still name a dropped namespace.
const leftover = [...dropped.keys()].filter((name) => new RegExp(`\\b${name}\\b`).test(output));
if (leftover.length > 0) {
  console.error(`dedupe-glue-imports: ${file} still uses ${leftover.join(", ")}; not rewritten`);
  process.exit(1);
}
writeFileSync(file, output);
console.log(`dedupe-glue-imports: ${file}: ${dropped.size} duplicate snippet imports removed, ${firstFor.size} kept`);
