#!/usr/bin/env bash
# Builds the npm package into pkg/: wasm-pack (--target web, release, wasm-opt
# from npm's binaryen) and then the per-environment entries (npm/finish-pkg.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# The package's crate is crates/edgeshed-js; --out-dir is relative to it.
wasm-pack build crates/edgeshed-js --target web --release --out-dir ../../pkg --out-name edgeshed >/dev/null 2>pkg-build.log || {
  cat pkg-build.log >&2
  echo "build-pkg: wasm-pack build failed" >&2
  exit 1
}
rm -f pkg-build.log
node scripts/dedupe-glue-imports.mjs pkg/edgeshed.js >/dev/null
node npm/finish-pkg.mjs pkg
