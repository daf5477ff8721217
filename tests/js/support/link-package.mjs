// Makes the built package importable exactly as a user imports it:
// node_modules/edgeshed -> ../pkg (a symlink), so `import("edgeshed")` goes
// through pkg/package.json and its `exports` map. Idempotent and safe when
// several test files run it at once. Importing this module links the package.
import { existsSync, lstatSync, readlinkSync, rmSync, symlinkSync, mkdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const PKG = join(ROOT, "pkg");
const LINK = join(ROOT, "node_modules", "edgeshed");
const TARGET = "../pkg";

export function linkPackage() {
  if (!existsSync(join(PKG, "package.json")) || !existsSync(join(PKG, "edgeshed_bg.wasm"))) {
    throw new Error("pkg/ is not built: run ./scripts/build-pkg.sh first");
  }
  mkdirSync(dirname(LINK), { recursive: true });
  for (let attempt = 0; attempt < 3; attempt++) {
    let current = null;
    try {
      current = lstatSync(LINK);
    } catch (error) {
      if (error.code !== "ENOENT") throw error;
    }
    if (current?.isSymbolicLink() && readlinkSync(LINK) === TARGET) return LINK;
    if (current) rmSync(LINK, { recursive: true, force: true }); // stale link or installed copy
    try {
      symlinkSync(TARGET, LINK, "dir");
      return LINK;
    } catch (error) {
      if (error.code !== "EEXIST") throw error; // another test file won the race: check again
    }
  }
  throw new Error(`could not link ${LINK} -> ${TARGET}`);
}

linkPackage();
