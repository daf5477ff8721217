// examples/workers-rs's bundle (worker-build's esbuild run, through
// scripts/esbuild-deduped.sh) names each wasm-bindgen snippet module once in
// the wasm imports object: wasm-bindgen 0.2.130 repeats a module once per
// import it passes straight through, which was one esbuild "Duplicate key
// ... glue.js" warning each (three) on every build.
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { transform } from "esbuild";
import { ROOT } from "../worker/support/worker.mjs";

const BUNDLE = join(ROOT, "examples/workers-rs/build/index.js");

test("the workers-rs bundle has no duplicate keys: esbuild warns of none", async () => {
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run bash scripts/build-workers-rs.sh`);
  const code = readFileSync(BUNDLE, "utf8");
  const { warnings } = await transform(code, { format: "esm", loader: "js", logLevel: "silent" });
  assert.deepEqual(
    warnings.map((w) => w.text),
    [],
    "esbuild's warnings on the bundle",
  );
  const snippetKeys = code.match(/"\.\/snippets\/[^"]+":/g) ?? [];
  assert.ok(snippetKeys.length >= 1, "the bundle imports edgeshed-wasm's glue");
  assert.equal(new Set(snippetKeys).size, snippetKeys.length, `each snippet module once: ${snippetKeys.join(" ")}`);
});
