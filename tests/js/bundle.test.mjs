// The package bundles cleanly: esbuild (the bundler wrangler uses) prints no
// warnings for an app that imports it, for the browser and for Node.js.
// (wasm-bindgen's glue used to repeat one snippet module as many keys of one
// object, one "Duplicate key" warning each: scripts/dedupe-glue-imports.mjs.)
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { ROOT, linkPackage } from "./support/link-package.mjs";

linkPackage();

for (const platform of ["browser", "node"]) {
  test(`an esbuild bundle (${platform}) of an app using the package prints no warnings`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "edgeshed-bundle-"));
    try {
      const entry = join(dir, "app.mjs");
      writeFileSync(
        entry,
        'import { Limiter, OverloadedError } from "edgeshed";\n' +
          "export const limiter = new Limiter({ maxInFlight: 2 });\n" +
          "export const isOverload = (e) => e instanceof OverloadedError;\n",
      );
      const result = await build({
        entryPoints: [entry],
        bundle: true,
        format: "esm",
        platform,
        write: false,
        logLevel: "silent",
        nodePaths: [join(ROOT, "node_modules")],
        loader: { ".wasm": "file" },
        outdir: join(dir, "out"),
      });
      assert.deepEqual(
        result.warnings.map((w) => `${w.location?.file}:${w.location?.line}: ${w.text}`),
        [],
      );
      assert.ok(result.outputFiles.some((f) => f.path.endsWith(".js") && f.text.includes("Limiter")));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
