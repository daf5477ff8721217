#!/usr/bin/env bash
# The single "run every test" command for edgeshed.
#
#   bash scripts/test.sh                  # every suite
#   bash scripts/test.sh clippy_host ...  # only the named suites (for local use)
#
# Runs scripts/setup.sh test (installs whatever is missing), then every suite in
# order, failing fast. To add a suite: write a `suite_<name>` function below
# and add its name to SUITES (see "ADD NEW SUITES HERE").
set -Eeuo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Each suite runs in a process of its own under a time limit
# (`bash scripts/test.sh --one <suite>`, started by the loop at the end): a
# test that hangs fails its suite after SUITE_LIMIT_S instead of running
# until CI's own limit kills the whole run with no word on where.
SUITE_LIMIT_S="${SUITE_LIMIT_S:-1200}"
ONE_SUITE=""
if [ "${1:-}" = "--one" ]; then
    ONE_SUITE="${2:?usage: scripts/test.sh --one <suite>}"
fi

# shellcheck source=scripts/leftovers.sh
source scripts/leftovers.sh
if [ -z "$ONE_SUITE" ]; then
    bash scripts/setup.sh test
    # Nothing left behind: the run gets a temp folder of its own, checked
    # (and removed) after the last suite, as is every process the run
    # started (scripts/leftovers.sh).
    leftovers_begin
fi

# npm's binaryen wasm-opt must win over any other wasm-opt (Debian's breaks workerd).
export PATH="$ROOT/node_modules/.bin:${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
WASM_TARGET=wasm32-unknown-unknown

START_ALL=$SECONDS
CURRENT_SUITE=""
PASSED_SUITES=()

section() {
    echo
    echo "=================================================================="
    echo "== $*"
    echo "=================================================================="
}

on_error() {
    local code=$?
    # One suite's process: its parent reports and cleans up.
    [ -z "$ONE_SUITE" ] || exit "$code"
    echo >&2
    echo "test.sh: FAILED in suite '${CURRENT_SUITE:-setup}' (exit ${code}) after $((SECONDS - START_ALL))s; passed before it: ${PASSED_SUITES[*]:-none}" >&2
    leftovers_cleanup
    exit "$code"
}
trap on_error ERR

# ------------------------------------------------------------------ suites ---

suite_fmt() {
    cargo fmt --all -- --check
}

suite_docs() {
    # Every repository path named in a Markdown doc or a code comment exists,
    # and BENCHMARKS.md is what scripts/benchmarks-md.mjs makes of
    # benches/results/ (scripts/check-docs.mjs; Node only, no build); no
    # crate's modules depend on each other in a circle (scripts/check-modules.mjs).
    node scripts/check-docs.mjs
    node scripts/check-modules.mjs
    # No committed log or archive, no untracked file outside .gitignore
    # (a build artifact the ignore list misses: scripts/check-tree.mjs).
    node scripts/check-tree.mjs
}

suite_setup() {
    # scripts/setup.sh by need: the gateway's tier (dev.sh) calls no sudo,
    # apt or browser.
    node --test tests/setup/
}

suite_clippy_host() {
    cargo clippy --workspace --all-targets -- -D warnings
}

suite_clippy_wasm() {
    # the wasm crates: the runtime, the npm package and the worker (with their wasm tests)
    cargo clippy --target "$WASM_TARGET" -p edgeshed-wasm -p edgeshed-js -p edgeshed-worker --lib --tests -- -D warnings
}

suite_cargo_test() {
    # native: unit, integration and doc tests of every crate (the wasm crates'
    # wasm tests are gated to wasm32 and run in wasm_node / wasm_chrome)
    cargo test --workspace
}

suite_doc() {
    # rustdoc of the core (host target), warnings as errors: broken or
    # redundant intra-doc links fail. Once with the default features, once
    # with the optional ones (`tokio`, `http-body`) that docs.rs shows; then
    # the runtime crate's docs.
    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib -p edgeshed
    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib -p edgeshed --features tokio,http-body
    RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib -p edgeshed-wasm --target "$WASM_TARGET"
}

suite_core_wasm() {
    # The core builds for wasm32 and depends on no wasm-bindgen, js-sys or
    # web-sys on any target (the bindings live in crates/).
    cargo build --release --target "$WASM_TARGET" -p edgeshed
    local tree
    tree=$(cargo tree -p edgeshed --target all -e normal,build --prefix none)
    if grep -qE "^(wasm-bindgen|js-sys|web-sys) " <<<"$tree"; then
        echo "the core crate depends on a wasm binding:" >&2
        grep -E "^(wasm-bindgen|js-sys|web-sys) " <<<"$tree" >&2
        return 1
    fi
    echo "core: no wasm-bindgen, js-sys or web-sys in cargo tree -p edgeshed (any target)"
}

# The crates with wasm-bindgen tests, run as wasm-pack runs them.
WASM_TEST_CRATES=(crates/edgeshed-wasm crates/edgeshed-js)

# Whether every "running N tests" in log $1 ends in a "test result" line that
# accounts for all N. A wasm-bindgen test that never settles leaves Node's
# event loop empty: the runner then exits 0 with no result for that binary.
all_tests_reported() {
    awk '
        /^running [0-9]+ tests?$/ { if (open) missing = 1; open = 1; want = $2; next }
        /^test result: / && open {
            got = 0
            n = split($0, parts, ";")
            for (i = 1; i <= n; i++) if (match(parts[i], /[0-9]+ (passed|failed|ignored|measured)/)) got += substr(parts[i], RSTART) + 0
            if (got != want) missing = 1
            open = 0
        }
        END { exit (missing || open) ? 1 : 0 }
    ' "$1"
}

suite_wasm_node() {
    # wasm-bindgen tests of the executor (crates/edgeshed-wasm) and of the JS
    # Limiter (crates/edgeshed-js/tests/) in Node.js.
    local crate log
    for crate in "${WASM_TEST_CRATES[@]}"; do
        log=$(mktemp)
        wasm-pack test --node "$crate" 2>&1 | tee "$log"
        if ! all_tests_reported "$log"; then
            echo "wasm_node: $crate: a test binary ended without reporting all its tests (a test that never settled?)" >&2
            rm -f "$log"
            return 1
        fi
        rm -f "$log"
    done
}

# chrome_attempt: one attempt of a crate's browser tests, with the stall
# watchdog (scripts/chrome-attempt.sh).
# shellcheck source=scripts/chrome-attempt.sh
source scripts/chrome-attempt.sh

suite_wasm_chrome() {
    # The same tests in headless Chromium (/usr/bin/chromedriver).
    #
    # Headless Chromium sometimes waits minutes for a script of the test
    # page: the runner's HTTP server (tiny_http 0.12) leaves a new connection
    # unserved until another one closes (RELIABILITY.md, "Headless Chromium
    # stalls"; in one fresh-clone CI run three attempts in a row). The
    # watchdog (scripts/chrome-attempt.sh) pokes the server, which ends such
    # a wait; an attempt whose page has not started loading after
    # CHROME_STALL_S is cut off and the crate retried, at most 4 attempts
    # per crate. A test that ran and failed is never retried.
    local crate attempt log status
    for crate in "${WASM_TEST_CRATES[@]}"; do
        for attempt in 1 2 3 4; do
            log=$(mktemp)
            status=0
            chrome_attempt "$crate" "$log" || status=$?
            cat "$log"
            if [ "$status" -eq 0 ] && grep -q "only configured to run in node.js" "$log"; then
                echo "wasm_chrome: $crate: tests were skipped instead of run in the browser" >&2
                rm -f "$log"
                return 1
            fi
            if [ "$status" -eq 0 ] && ! all_tests_reported "$log"; then
                echo "wasm_chrome: $crate: a test binary ended without reporting all its tests" >&2
                rm -f "$log"
                return 1
            fi
            rm -f "$log"
            if [ "$status" -eq 0 ]; then
                break
            fi
            if [ "$status" -ne 75 ] || [ "$attempt" -eq 4 ]; then
                echo "wasm_chrome: $crate failed (status $status, attempt $attempt of 4)" >&2
                return "$status"
            fi
            echo "wasm_chrome: the browser stalled before loading a test page ($crate, attempt $attempt of 4); retrying"
        done
    done
}

suite_npm_package() {
    # Builds pkg/ (the npm package) and holds its wasm to the size goal.
    local out
    out=$(./scripts/build-pkg.sh)
    echo "$out"
    local sizes
    sizes=$(grep -m1 'edgeshed_bg.wasm' <<<"$out" | sed -E 's/^ *edgeshed_bg.wasm +//; s/  +/ /g')
    echo "npm pkg edgeshed_bg.wasm ${sizes}" >"$TARGET_DIR/pkg-size-line.txt"
    if grep -q 'size goal: .*MISSED' <<<"$out"; then
        echo "npm_package: the wasm is over its gzip size goal (npm/finish-pkg.mjs)" >&2
        return 1
    fi
}

suite_node_tests() {
    # The npm package as users import it: Node.js, workerd (Miniflare), headless
    # Chromium (playwright-core), README snippets, TypeScript declarations.
    [ -f pkg/package.json ] || ./scripts/build-pkg.sh
    node --test --test-force-exit tests/js/
}

suite_worker() {
    # The edge worker in real workerd (Miniflare) against real origin servers.
    ./scripts/build-worker.sh
    local gz
    gz=$(gzip -9 -c dist/worker/edgeshed_bg.wasm | wc -c)
    if [ "$gz" -gt $((256 * 1024)) ]; then
        echo "worker wasm is $gz B gzip, over the 256 KiB goal" >&2
        return 1
    fi
    # (deploy.test.mjs: `wrangler deploy --dry-run` with your own
    # configuration, the demo refused by a plain `wrangler deploy`.)
    node --test --test-concurrency=1 tests/worker/
}

suite_publish() {
    # Publishable: each crate packages and verifies in dependency order as
    # `cargo publish` would (edgeshed, then edgeshed-wasm; the cdylib crates
    # have publish = false), and the npm package's contents as `npm pack`
    # would make them (types, README, licence, nothing stray).
    cargo publish --workspace --dry-run --allow-dirty
    [ -f pkg/package.json ] || ./scripts/build-pkg.sh
    node --test tests/publish/
}

suite_workers_rs() {
    # examples/workers-rs: a Rust Worker on the `worker` crate, built by
    # worker-build with no download (scripts/build-workers-rs.sh), in workerd
    # (Miniflare) in front of a real origin: a limit, a burst, 503s, JsClock
    # timeouts.
    local manifest=examples/workers-rs/Cargo.toml
    cargo fmt --manifest-path "$manifest" -- --check
    CARGO_TARGET_DIR="$TARGET_DIR/workers-rs" \
        cargo clippy --manifest-path "$manifest" --target "$WASM_TARGET" -- -D warnings
    ./scripts/build-workers-rs.sh
    node --test --test-concurrency=1 tests/workers-rs/
}

suite_loom() {
    # Model checking of the semaphore (tests/loom_semaphore.rs): every
    # interleaving up to 3 preemptions. Own target dir: --cfg loom rebuilds
    # everything. Budget: under 3 minutes (about 1 to build, 0.5 to check).
    CARGO_TARGET_DIR="$TARGET_DIR/loom" RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 \
        cargo test --release -p edgeshed --test loom_semaphore
}

suite_www() {
    # The dashboard (www/, served by scripts/serve-www.mjs) in headless Chromium:
    # simulation mode on the npm package, live mode against the worker in
    # workerd (Miniflare). Screenshots go to artifacts/www/.
    [ -f pkg/browser.js ] || ./scripts/build-pkg.sh
    [ -f dist/worker/edgeshed_bg.wasm ] || ./scripts/build-worker.sh
    # Each test process takes a temp folder of its own, removed at exit:
    # the live test's Miniflare would leave its own behind under
    # --test-force-exit (tests/worker/support/own-tmpdir.mjs).
    NODE_OPTIONS="--import=file://$ROOT/tests/worker/support/own-tmpdir.mjs ${NODE_OPTIONS:-}" \
        node --test --test-concurrency=1 --test-force-exit tests/www/
}

suite_soak_smoke() {
    # 10 s of the soak (benches/soak/soak.mjs) in each configuration: the
    # worker in workerd at 10x its origins' capacity over 200 keep-alive
    # connections; only contract statuses (200/502/503/504), every permit
    # back, no trap or hang, RSS under 1 GiB, then normal answers from the
    # same instance. With queues, permits are handed from request to request.
    [ -f dist/worker/edgeshed_bg.wasm ] || ./scripts/build-worker.sh
    # The soak's client first: which connection resets it resends (the
    # keep-alive race only), and the workerd idle timeout behind that.
    node --test tests/soak/
    node benches/soak/soak.mjs --seconds 10 --queues on
    node benches/soak/soak.mjs --seconds 10 --queues off
}

# ====================== ADD NEW SUITES HERE ==================================
# Define `suite_<name>() { ...; }` above this block, then append "<name>" to
# SUITES in the order it should run (each entry: name|header text).
SUITES=(
    "fmt|cargo fmt --all -- --check"
    "docs|paths named in docs and comments exist; BENCHMARKS.md matches benches/results/ (scripts/check-docs.mjs); no module cycles; no committed log or archive, no untracked artifact (scripts/check-tree.mjs)"
    "setup|scripts/setup.sh by need: no root, apt or browser to run the gateway (node --test tests/setup/)"
    "clippy_host|cargo clippy --workspace --all-targets -- -D warnings (host)"
    "clippy_wasm|cargo clippy --target $WASM_TARGET (edgeshed-wasm, edgeshed-js, edgeshed-worker) -- -D warnings"
    "cargo_test|cargo test --workspace (native: unit, integration, doc tests)"
    "doc|cargo doc --no-deps with RUSTDOCFLAGS=-D warnings (core, runtime)"
    "core_wasm|the core on $WASM_TARGET, with no wasm-bindgen/js-sys/web-sys in its tree"
    "wasm_node|wasm-pack test --node: the executor and the JS Limiter in Node.js"
    "wasm_chrome|wasm-pack test --headless --chrome: the same in headless Chromium"
    "npm_package|npm package build: ./scripts/build-pkg.sh (pkg/, wasm size)"
    "node_tests|npm package in Node.js, workerd and Chromium (node --test tests/js/)"
    "worker|edge worker in workerd via Miniflare, and wrangler deploy --dry-run (node --test tests/worker/)"
    "workers_rs|examples/workers-rs built by worker-build, in workerd via Miniflare (node --test tests/workers-rs/)"
    "publish|cargo publish --workspace --dry-run; npm pack contents (node --test tests/publish/)"
    "loom|loom model checking of the semaphore (tests/loom_semaphore.rs, <= 3 preemptions)"
    "www|dashboard in headless Chromium: simulation and live mode (node --test tests/www/)"
    "soak_smoke|10 s soak of the worker in workerd at 10x origin capacity (benches/soak/soak.mjs)"
)
# =============================================================================

if [ -n "$ONE_SUITE" ]; then
    CURRENT_SUITE="$ONE_SUITE"
    "suite_$ONE_SUITE"
    exit 0
fi

if [ "$#" -gt 0 ]; then
    for wanted in "$@"; do
        declare -F "suite_$wanted" >/dev/null || {
            echo "test.sh: unknown suite '$wanted'" >&2
            exit 2
        }
    done
fi

SELECTED_LABEL=""
[ "$#" -gt 0 ] && SELECTED_LABEL="SELECTED SUITES PASSED"
rm -f "$TARGET_DIR/pkg-size-line.txt"
TIMES=()
for entry in "${SUITES[@]}"; do
    name="${entry%%|*}"
    header="${entry#*|}"
    if [ "$#" -gt 0 ] && [[ " $* " != *" $name "* ]]; then
        continue
    fi
    CURRENT_SUITE="$name"
    section "$name: $header"
    suite_start=$SECONDS
    status=0
    # timeout signals the suite's whole process group (every test runner,
    # workerd and browser it started), then kills it 30 s later.
    timeout --kill-after=30 "$SUITE_LIMIT_S" bash "$ROOT/scripts/test.sh" --one "$name" || status=$?
    if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
        echo "test.sh: suite '$name' ran past its limit of ${SUITE_LIMIT_S}s (SUITE_LIMIT_S) and was stopped: a test that hangs" >&2
    fi
    [ "$status" -eq 0 ] || false
    echo "-- $name passed in $((SECONDS - suite_start))s"
    PASSED_SUITES+=("$name")
    TIMES+=("$name $((SECONDS - suite_start))s")
done
CURRENT_SUITE="leftovers"
section "leftovers: nothing the run made is left in the temp folder, no process of it alive"
leftovers_check
CURRENT_SUITE=""

PKG_SIZE_LINE=""
[ -f "$TARGET_DIR/pkg-size-line.txt" ] && PKG_SIZE_LINE=$(cat "$TARGET_DIR/pkg-size-line.txt")
echo
echo "test.sh: per suite: ${TIMES[*]}"
echo "test.sh: ${SELECTED_LABEL:-ALL PASSED}: ${#PASSED_SUITES[@]} suites (${PASSED_SUITES[*]}) in $((SECONDS - START_ALL))s${PKG_SIZE_LINE:+; $PKG_SIZE_LINE}"
