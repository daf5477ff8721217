#!/usr/bin/env bash
# Builds the edge worker's wasm into dist/worker/ (wasm-bindgen --target web,
# release, wasm-opt from npm's binaryen). wrangler runs this as its [build]
# command, so `wrangler dev` and `wrangler deploy` always ship fresh wasm.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
log=$(mktemp)
# The worker's crate is crates/edgeshed-worker; --out-dir is relative to it.
if ! wasm-pack build crates/edgeshed-worker --target web --release --out-dir ../../dist/worker \
    --out-name edgeshed --no-typescript >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "build-worker: wasm-pack build failed" >&2
  exit 1
fi
rm -f "$log"
node scripts/dedupe-glue-imports.mjs dist/worker/edgeshed.js >/dev/null
wasm=dist/worker/edgeshed_bg.wasm
raw=$(wc -c <"$wasm")
gz=$(gzip -9 -c "$wasm" | wc -c)
echo "edgeshed worker: $wasm raw $((raw / 1024)).$(((raw % 1024) * 10 / 1024)) KiB, gzip $((gz / 1024)).$(((gz % 1024) * 10 / 1024)) KiB"
