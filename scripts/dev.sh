#!/usr/bin/env bash
# The main job: set up what running needs (scripts/setup.sh: the Rust
# target, wasm-bindgen-cli, the npm packages; no root, no apt), then run the
# edgeshed gateway locally on workerd (wrangler dev) with its demo
# configuration, in front of two demo origins on 127.0.0.1, and the
# dashboard. Ctrl-C stops everything.
#
#   ./scripts/dev.sh                 # gateway on http://127.0.0.1:8787
#   PORT=9000 ./scripts/dev.sh       # another port
#   USERS_LATENCY_MS=200 ./scripts/dev.sh   # slower origin (see scripts/demo-origins.mjs)
#   WWW_PORT=9100 ./scripts/dev.sh   # the dashboard (www/) elsewhere than :8788
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PORT="${PORT:-8787}"

echo "dev.sh: checking/installing tools (scripts/setup.sh)"
bash scripts/setup.sh run
export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"

# Each child runs in a process group of its own (job control: no setsid,
# which macOS lacks), so that stopping it takes its children along.
set -m
pids=()
stop() {
    trap - INT TERM EXIT
    echo
    echo "dev.sh: stopping"
    for pid in "${pids[@]}"; do
        # Each child runs in its own process group: take the whole group
        # (wrangler's workerd included) down with it.
        kill -TERM -- "-$pid" 2>/dev/null || true
        kill -TERM "$pid" 2>/dev/null || true
    done
    wait 2>/dev/null || true
}
trap stop INT TERM EXIT

echo "dev.sh: building the npm package for the dashboard (scripts/build-pkg.sh)"
./scripts/build-pkg.sh

echo "dev.sh: starting the demo origins"
node scripts/demo-origins.mjs &
pids+=($!)

echo "dev.sh: starting the gateway (wrangler dev builds the wasm first)"
CLOUDFLARE_CF_FETCH_ENABLED=false WRANGLER_SEND_METRICS=false \
    wrangler dev --local --ip 127.0.0.1 --port "$PORT" --show-interactive-dev-session=false &
pids+=($!)

base="http://127.0.0.1:$PORT"
for _ in $(seq 1 180); do
    if curl -s -o /dev/null "$base/__edgeshed/stats"; then break; fi
    if ! kill -0 "${pids[1]}" 2>/dev/null; then
        echo "dev.sh: wrangler dev exited; see its output above" >&2
        exit 1
    fi
    sleep 1
done

WWW_PORT="${WWW_PORT:-8788}"
www="http://127.0.0.1:$WWW_PORT/"
echo "dev.sh: starting the dashboard (scripts/serve-www.mjs)"
GATEWAY="$base" WWW_PORT="$WWW_PORT" node scripts/serve-www.mjs &
pids+=($!)
for _ in $(seq 1 50); do
    if curl -s -o /dev/null "$www"; then break; fi
    sleep 0.1
done

cat <<INFO

edgeshed gateway is up on $base  (Ctrl-C to stop)
Dashboard: $www  (simulation in the browser; "Live gateway" tab for this gateway)

  curl -i $base/aggregate          # fan-out to users (required) + recs (optional)
  curl -i $base/proxy/hello?x=1    # streamed through to the users origin
  curl -i $base/batch/hello        # the same, sheddable: shed first under load
  curl -i $base/api/hello          # rate-limited per client: 5/s, bursts of 10, then 429
  # /__edgeshed/* is open here because wrangler.toml's demo configuration
  # says "statsPublic": true (without it or a statsToken: 404)
  curl -s $base/__edgeshed/stats   # limiter state and counters (JSON)
  curl -s $base/__edgeshed/metrics # Prometheus text
  curl -s $base/__edgeshed/budget  # users' fleet budget (its EdgeshedBudget Durable Object)

  # 200 concurrent requests: the global limit admits 64 and queues 64; of those,
  # users takes what its adaptive limit allows (6 at first) and queues 6; the
  # rest get a fast 503 naming the limit that refused them
  seq 200 | xargs -P 200 -I{} curl -s -o /dev/null -w '%{http_code}\\n' $base/aggregate | sort | uniq -c

INFO
wait
