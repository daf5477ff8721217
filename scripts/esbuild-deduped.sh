#!/usr/bin/env bash
# The esbuild that worker-build runs for scripts/build-workers-rs.sh
# (ESBUILD_BIN): it first removes the duplicate snippet imports from the
# wasm-bindgen glue it is about to bundle (scripts/dedupe-glue-imports.mjs,
# as build-worker.sh and build-pkg.sh do for their glue; each duplicate was
# one esbuild "Duplicate key" warning), then runs the real esbuild
# (EDGESHED_ESBUILD) with worker-build's arguments, in its directory.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
for file in ./*.js; do
    [ -f "$file" ] || continue
    grep -q '^import \* as import[0-9]' "$file" || continue
    node "$here/dedupe-glue-imports.mjs" "$file"
done
exec "${EDGESHED_ESBUILD:?set by scripts/build-workers-rs.sh}" "$@"
