#!/usr/bin/env bash
# Builds the npm package into pkg/: scripts/wasm-build.sh (cargo, wasm-bindgen
# --target web, wasm-opt from npm's binaryen; no wasm-pack), then the
# manifest and the per-environment entries (npm/finish-pkg.mjs).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
log=$(mktemp)
# A fresh pkg/: nothing of an earlier build is packed by mistake.
rm -rf pkg
bash scripts/wasm-build.sh edgeshed-js pkg >"$log" 2>&1 || {
  cat "$log" >&2
  rm -f "$log"
  echo "build-pkg: the wasm build failed" >&2
  exit 1
}
rm -f "$log"
node scripts/dedupe-glue-imports.mjs pkg/edgeshed.js >/dev/null
node npm/finish-pkg.mjs pkg
