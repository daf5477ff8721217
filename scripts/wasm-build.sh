#!/usr/bin/env bash
# Builds one wasm-bindgen crate of the workspace for the web target, as
# wasm-pack would, with only cargo, the wasm-bindgen CLI and npm's binaryen:
#
#   bash scripts/wasm-build.sh <package> <out-dir> [--no-typescript]
#
# cargo build --release (wasm32-unknown-unknown), wasm-bindgen --target web
# --out-name edgeshed, then wasm-opt -O. Output: <out-dir>/edgeshed.js,
# edgeshed_bg.wasm (and .d.ts files unless --no-typescript).
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"
# npm's binaryen wasm-opt must win over any other (Debian's breaks workerd).
export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
package=$1
out=$2
shift 2

for tool in cargo wasm-bindgen wasm-opt; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "wasm-build: $tool not found; run: bash scripts/setup.sh" >&2
        exit 1
    }
done
target_dir="${CARGO_TARGET_DIR:-$ROOT/target}"
cargo build --quiet --lib --release --target wasm32-unknown-unknown -p "$package"
input="$target_dir/wasm32-unknown-unknown/release/${package//-/_}.wasm"

# Nothing to do when <out-dir> was made from this very wasm by these tools
# with these flags: `wrangler dev` runs its [build] command twice on start
# (once for the entry, once when its file watcher is ready), and the second
# run then costs only cargo's freshness check.
stamp="$out/.built-from"
source_id="$(cksum <"$input") $(wasm-bindgen --version) $(wasm-opt --version) $*"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$source_id" ] &&
    [ -f "$out/edgeshed_bg.wasm" ] && [ -f "$out/edgeshed.js" ]; then
    echo "wasm-build: $out is up to date"
    exit 0
fi
rm -f "$stamp"
mkdir -p "$out"
wasm-bindgen "$input" --out-dir "$out" --out-name edgeshed --target web "$@"
wasm-opt "$out/edgeshed_bg.wasm" -o "$out/edgeshed_bg.wasm.opt" -O
mv "$out/edgeshed_bg.wasm.opt" "$out/edgeshed_bg.wasm"
echo "$source_id" >"$stamp"
