#!/usr/bin/env bash
# Builds the edge worker's wasm into dist/worker/ (scripts/wasm-build.sh:
# cargo, wasm-bindgen --target web, wasm-opt from npm's binaryen; no
# wasm-pack). wrangler runs this as its [build] command, so `wrangler dev`
# and `wrangler deploy` always ship fresh wasm.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
log=$(mktemp)
if ! bash scripts/wasm-build.sh edgeshed-worker dist/worker --no-typescript >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "build-worker: the wasm build failed" >&2
  exit 1
fi
grep -h "is up to date" "$log" || true
rm -f "$log"
node scripts/dedupe-glue-imports.mjs dist/worker/edgeshed.js >/dev/null
wasm=dist/worker/edgeshed_bg.wasm
raw=$(wc -c <"$wasm")
gz=$(gzip -9 -c "$wasm" | wc -c)
echo "edgeshed worker: $wasm raw $((raw / 1024)).$(((raw % 1024) * 10 / 1024)) KiB, gzip $((gz / 1024)).$(((gz % 1024) * 10 / 1024)) KiB"
# `wrangler deploy` runs this build first: refuse the local demo
# configuration, or one the gateway would refuse (checked by this very wasm),
# before anything is uploaded (scripts/deploy-guard.mjs).
if [ "${WRANGLER_COMMAND:-}" = deploy ]; then
  node scripts/deploy-guard.mjs
fi
