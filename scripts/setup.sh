#!/usr/bin/env bash
# One idempotent setup for edgeshed, by need: installs what is missing and
# skips what is already present. Safe to run twice in a row; the second run
# does nothing slow.
#
#   bash scripts/setup.sh        # running the gateway (./scripts/dev.sh): the
#                                # Rust target, wasm-bindgen-cli, the npm packages.
#                                # No root, any OS with rustup, cargo and Node.js 20.
#   bash scripts/setup.sh test   # the test command (scripts/test.sh) too: rustfmt,
#                                # clippy, wasm-pack, worker-build, and Chromium +
#                                # ChromeDriver (Debian's, with apt-get: root or sudo)
#   bash scripts/setup.sh workers-rs  # the gateway's tools and worker-build, for
#                                # examples/workers-rs (scripts/build-workers-rs.sh):
#                                # no browser; OpenSSL headers by apt-get if missing
#
# Versions are the ones verified together (see ../shared/TOOLCHAIN.md):
#   wasm-bindgen-cli must equal the wasm-bindgen crate pinned in Cargo.toml.
set -Eeuo pipefail

WASM_BINDGEN_VERSION=0.2.130
WASM_PACK_VERSION=0.15.1
WORKER_BUILD_VERSION=0.8.7
WASM_TARGET=wasm32-unknown-unknown

NEED="${1:-run}"
case "$NEED" in
    run | test | workers-rs) ;;
    *)
        echo "usage: bash scripts/setup.sh [test | workers-rs]" >&2
        exit 2
        ;;
esac

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export CARGO_TERM_COLOR="${CARGO_TERM_COLOR:-never}"

CURRENT_STEP=""
on_error() {
    local code=$?
    echo "setup: FAILED: could not install ${CURRENT_STEP:-an unknown step} (exit ${code})" >&2
    exit "$code"
}
trap on_error ERR

step() { CURRENT_STEP="$1"; }
ok() { echo "ok: $1 already installed"; }
installing() { echo "installing $1 ..."; }
fail() {
    echo "setup: FAILED: $1" >&2
    exit 1
}

as_root() {
    if [ "$(id -u)" -eq 0 ]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@"
    else
        fail "$CURRENT_STEP needs root and sudo is not available"
    fi
}

# cargo_install <crate> <version> <binary> <what `binary --version` prints> <minutes> [cargo install flags]
cargo_install() {
    local crate=$1 version=$2 binary=$3 expected=$4 minutes=$5
    shift 5
    step "$crate $version"
    if [ "$("$binary" --version 2>/dev/null || true)" = "$expected" ]; then
        ok "$crate $version"
        return
    fi
    installing "$crate $version (cargo install, ~$minutes min)"
    cargo install "$crate" --version "$version" --force "$@"
    [ "$("$binary" --version)" = "$expected" ] ||
        fail "$crate $version: installed, but '$binary --version' prints '$("$binary" --version)'"
}

# --- Rust toolchain -----------------------------------------------------------
step "rustup/cargo"
command -v rustup >/dev/null 2>&1 || fail "rustup not found on PATH (install Rust via rustup first)"
command -v cargo >/dev/null 2>&1 || fail "cargo not found on PATH"

step "Rust target $WASM_TARGET"
installed_targets="$(rustup target list --installed)"
if grep -qx "$WASM_TARGET" <<<"$installed_targets"; then
    ok "Rust target $WASM_TARGET"
else
    installing "Rust target $WASM_TARGET"
    rustup target add "$WASM_TARGET"
fi

# --- wasm-bindgen-cli (must match the crate version in Cargo.lock) -------------
# No --locked: the registry lacks one of its locked dependencies.
# Minutes as measured on a 2-core machine (a first user's report: 10).
cargo_install wasm-bindgen-cli "$WASM_BINDGEN_VERSION" wasm-bindgen "wasm-bindgen $WASM_BINDGEN_VERSION" 5-10

# --- npm devDependencies (binaryen's wasm-opt, miniflare/workerd, wrangler, playwright-core)
step "npm packages (npm ci)"
command -v npm >/dev/null 2>&1 || fail "npm not found on PATH (Node.js >= 20 is required)"
if [ ! -d node_modules ] || [ ! -f node_modules/.package-lock.json ] ||
    [ package-lock.json -nt node_modules/.package-lock.json ]; then
    installing "npm packages from package-lock.json (npm ci)"
    npm ci --no-audit --no-fund
else
    ok "npm packages (node_modules up to date with package-lock.json)"
fi

if [ "$NEED" = run ]; then
    CURRENT_STEP=""
    echo "setup: the tools to run the gateway are present (bash scripts/setup.sh test adds the test tools)"
    exit 0
fi

# Installs Debian packages "$@" (root or sudo).
apt_install() {
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "$@"
}

# OpenSSL's headers and pkg-config, which building worker-build needs.
openssl_headers() {
    command -v pkg-config >/dev/null 2>&1 && pkg-config --exists openssl
}

if [ "$NEED" = workers-rs ]; then
    step "Debian packages libssl-dev pkg-config"
    if openssl_headers; then
        ok "OpenSSL headers and pkg-config"
    else
        command -v apt-get >/dev/null 2>&1 ||
            fail "OpenSSL's headers and pkg-config are missing and this is not Debian (no apt-get): install them"
        installing "Debian packages libssl-dev pkg-config (apt-get)"
        apt_install libssl-dev pkg-config
    fi
    cargo_install worker-build "$WORKER_BUILD_VERSION" worker-build "$WORKER_BUILD_VERSION" 10-16 --locked
    CURRENT_STEP=""
    echo "setup: the tools to build examples/workers-rs are present (no browser: bash scripts/setup.sh test adds the test command's)"
    exit 0
fi

# ============ the test command's tools (bash scripts/setup.sh test) ============
# --- Debian packages: chromium + chromedriver (browser tests), OpenSSL headers
# and pkg-config (to build worker-build) -----------------------------------------
step "Debian packages chromium chromium-driver libssl-dev pkg-config"
apt_packages=()
[ -x /usr/bin/chromium ] && [ -x /usr/bin/chromedriver ] || apt_packages+=(chromium chromium-driver)
openssl_headers || apt_packages+=(libssl-dev pkg-config)
if [ "${#apt_packages[@]}" -eq 0 ]; then
    ok "chromium, chromedriver, OpenSSL headers and pkg-config"
else
    command -v apt-get >/dev/null 2>&1 ||
        fail "${apt_packages[*]} are missing and this is not Debian (no apt-get): install Chromium and ChromeDriver as /usr/bin/chromium and /usr/bin/chromedriver, and OpenSSL's headers with pkg-config"
    installing "Debian packages ${apt_packages[*]} (apt-get)"
    apt_install "${apt_packages[@]}"
    if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then
        fail "chromium/chromium-driver: apt-get finished, but /usr/bin/chromium or /usr/bin/chromedriver is missing"
    fi
fi

installed_components="$(rustup component list --installed)"
for component in rustfmt clippy; do
    step "rustup component $component"
    if grep -q "^${component}" <<<"$installed_components"; then
        ok "rustup component $component"
    else
        installing "rustup component $component"
        rustup component add "$component"
    fi
done

# --- wasm-pack (the wasm tests) ------------------------------------------------
cargo_install wasm-pack "$WASM_PACK_VERSION" wasm-pack "wasm-pack $WASM_PACK_VERSION" 2-4 --locked

# --- worker-build (builds examples/workers-rs; scripts/build-workers-rs.sh) ----
# Needs OpenSSL's headers and pkg-config (installed above).
cargo_install worker-build "$WORKER_BUILD_VERSION" worker-build "$WORKER_BUILD_VERSION" 10-16 --locked

CURRENT_STEP=""
echo "setup: all tools present (the gateway's and the test command's)"
