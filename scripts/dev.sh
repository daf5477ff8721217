#!/usr/bin/env bash
# The "main job" command: set up the toolchain, then run the quickstart demo.
#
#   bash scripts/dev.sh
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

echo "dev.sh: checking/installing tools (scripts/setup.sh)"
bash scripts/setup.sh

export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

echo
echo "dev.sh: running the quickstart example (cargo run --example quickstart)"
cargo run --example quickstart
echo "dev.sh: done"
