#!/usr/bin/env bash
# Builds the edge worker's wasm into dist/worker/ (wasm-bindgen --target web,
# release, wasm-opt from npm's binaryen). wrangler runs this as its [build]
# command, so `wrangler dev` and `wrangler deploy` always ship fresh wasm.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/node_modules/.bin:$HOME/.cargo/bin:$PATH"
# A target dir of its own: the worker is built with other features than the
# npm package, and concurrent builds must not overwrite each other's .wasm.
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$PWD/target}/worker-build"
log=$(mktemp)
if ! wasm-pack build --target web --release --out-dir dist/worker --out-name edgeshed --no-typescript \
    -- --no-default-features --features worker >"$log" 2>&1; then
  cat "$log" >&2
  rm -f "$log"
  echo "build-worker: wasm-pack build failed" >&2
  exit 1
fi
rm -f "$log"
wasm=dist/worker/edgeshed_bg.wasm
raw=$(wc -c <"$wasm")
gz=$(gzip -9 -c "$wasm" | wc -c)
echo "edgeshed worker: $wasm raw $((raw / 1024)).$(((raw % 1024) * 10 / 1024)) KiB, gzip $((gz / 1024)).$(((gz % 1024) * 10 / 1024)) KiB"
