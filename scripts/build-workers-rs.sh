#!/usr/bin/env bash
# Builds examples/workers-rs (a Rust Worker on the `worker` crate) with
# worker-build into examples/workers-rs/build/, downloading nothing: the
# wasm-bindgen CLI, wasm-opt and esbuild come from scripts/setup.sh
# (WASM_BINDGEN_BIN, WASM_OPT_BIN, ESBUILD_BIN; without them worker-build
# would download each into its cache).
#
#   bash scripts/build-workers-rs.sh
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
# Cargo's output goes under the repository's target/ (the example is a
# workspace of its own).
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}/workers-rs"

need() {
    command -v "$1" >/dev/null 2>&1 || {
        echo "build-workers-rs: $1 not found; run: bash scripts/setup.sh workers-rs (worker-build, ~10-16 min, and the gateway's tools; no browser)" >&2
        exit 1
    }
}
need worker-build
need wasm-bindgen
# The CLI must equal the wasm-bindgen crate in examples/workers-rs/Cargo.lock.
locked=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/version = |"/, ""); print; exit }' \
    "$ROOT/examples/workers-rs/Cargo.lock")
if [ "$(wasm-bindgen --version)" != "wasm-bindgen $locked" ]; then
    echo "build-workers-rs: $(wasm-bindgen --version) does not match wasm-bindgen $locked in examples/workers-rs/Cargo.lock" >&2
    exit 1
fi
WASM_BINDGEN_BIN="$(command -v wasm-bindgen)"
WASM_OPT_BIN="$ROOT/node_modules/.bin/wasm-opt"    # npm binaryen (Debian's breaks workerd)
EDGESHED_ESBUILD="$ROOT/node_modules/.bin/esbuild" # wrangler's esbuild, run by
ESBUILD_BIN="$ROOT/scripts/esbuild-deduped.sh"     # this, which dedupes the glue first
export WASM_BINDGEN_BIN WASM_OPT_BIN ESBUILD_BIN EDGESHED_ESBUILD
for tool in "$WASM_OPT_BIN" "$EDGESHED_ESBUILD"; do
    [ -x "$tool" ] || { echo "build-workers-rs: $tool is missing: run npm ci (scripts/setup.sh)" >&2; exit 1; }
done

cd "$ROOT/examples/workers-rs"
worker-build --release
