#!/usr/bin/env bash
# Builds the tower-on-wasm peer into benches/tower-wasm/pkg/ (cargo, then
# wasm-bindgen --target web, then wasm-opt -Oz like the npm package).
set -euo pipefail
cd "$(dirname "$0")"
root=$(cd ../.. && pwd)
export PATH="$root/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/tmp/target-bench}/tower-wasm"
cargo build --release --target wasm32-unknown-unknown --quiet
wasm-bindgen --target web --out-dir pkg --out-name tower "$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/tower_wasm_bench.wasm"
wasm-opt -Oz --enable-reference-types --enable-bulk-memory --enable-nontrapping-float-to-int \
  --enable-sign-ext --enable-mutable-globals --enable-multivalue pkg/tower_bg.wasm -o pkg/tower_bg.wasm
echo "tower-wasm: pkg/tower_bg.wasm $(wc -c <pkg/tower_bg.wasm) bytes"
