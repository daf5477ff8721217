# One attempt of a crate's wasm-bindgen tests in headless Chromium, for
# suite_wasm_chrome in scripts/test.sh (sourced from there).
#
# The runner (wasm-bindgen-test-runner, through wasm-pack) prints "Running
# headless tests" before it starts a ChromeDriver session, then opens the
# test page; the page prints "Loading Wasm module" once its scripts run.
# Sometimes the page gets no further for minutes (RELIABILITY.md, "Headless
# Chromium stalls": a lost wake-up in the runner's HTTP server). The
# watchdog pokes the server after CHROME_POKE_S seconds, which ends such a
# stall, and stops an attempt whose page has still not started loading
# CHROME_STALL_S seconds after the runner began, reporting it as stalled
# (status 75) with the end of ChromeDriver's log.

CHROME_STALL_S=${CHROME_STALL_S:-60}
# The usual stall is a lost wake-up in the runner's HTTP server (tiny_http
# 0.12's TaskPool, RELIABILITY.md): the page's request for one of its
# scripts waits, on a connection nobody serves, until another connection to
# the server closes. After CHROME_POKE_S seconds without a page, and every
# 5 s after that, the watchdog opens and closes such a connection itself.
CHROME_POKE_S=${CHROME_POKE_S:-10}

# The port of the test server the runner's last page was opened from
# (ChromeDriver's log has the Navigate command), or nothing.
test_server_port() {
    grep -o '"url": "http://127.0.0.1:[0-9]*/#' "$1" 2>/dev/null | tail -n 1 | grep -o '[0-9]*/#' | tr -d '/#' || true
}

# One HTTP/1.0 request to the test server of ChromeDriver log $1 (the
# server answers and closes: the thread that served it then takes the
# connection that was left waiting).
poke_test_server() {
    local port
    port=$(test_server_port "$1")
    [ -n "$port" ] || return 0
    echo "wasm_chrome: no test page yet; poking the runner's server on port $port"
    (
        exec 3<>"/dev/tcp/127.0.0.1/$port" || exit 0
        printf 'GET /favicon.ico HTTP/1.0\r\n\r\n' >&3
        timeout 2 cat <&3 >/dev/null || true
    ) 2>/dev/null || true
}

# Kills every process of session $1 and waits until none is left (a
# killed Chromium can take a moment to go; its files are removed after).
stop_session() {
    local i
    for i in $(seq 1 50); do
        pkill -KILL -s "$1" 2>/dev/null || true
        pgrep -s "$1" >/dev/null || break
        sleep 0.1
    done
    wait "$1" 2>/dev/null || true
}

# Where ChromeDriver's log says a stalled attempt was: its last commands
# (a COMMAND with no RESPONSE is the one that hung) and what Chromium
# printed last, without its D-Bus noise (no bus on these machines).
show_stall() {
    local driver_log=$1
    echo "wasm_chrome: the attempt stalled; the end of ChromeDriver's log ($CHROME_STALL_S s without a test page loading):"
    if [ -f "$driver_log" ]; then
        grep -E "COMMAND|RESPONSE|Launching chrome|DevTools listening|ERROR|WARNING" "$driver_log" |
            grep -v "dbus" | cut -c1-300 | tail -n 15 | sed 's/^/    /'
    else
        echo "    (no log: ChromeDriver never started)"
    fi
}

# Runs the browser tests of crate $1, its output in $2. Returns the runner's
# status, or 75 when the browser stalled.
chrome_attempt() {
    local crate=$1 log=$2 session status=0 waiting=0 tmp
    # ChromeDriver and Chromium put the browser's profile (~16 MB) and
    # singleton socket in TMPDIR; the runner kills ChromeDriver right after
    # closing the window, before either is removed. A folder of the
    # attempt's own, removed once its processes are gone, takes them.
    tmp=$(mktemp -d)
    # A session of its own (setsid: its pid is the session id), so that a
    # stalled attempt's chromedriver and Chromium can be stopped without
    # touching any other browser. WASM_BINDGEN_USE_BROWSER=1: the tests are
    # configured for Node.js (wasm-pack's default); it runs them in the
    # browser too. ChromeDriver runs through scripts/chromedriver-logged.sh.
    # The runner gives ChromeDriver 5 s to bind its port; on a loaded
    # machine that fails the binary ("driver failed to bind port during
    # startup", seen here at load 11): 30 s.
    CHROMEDRIVER_LOG="$tmp/chromedriver.log" TMPDIR="$tmp" WASM_BINDGEN_USE_BROWSER=1 \
        WASM_BINDGEN_TEST_DRIVER_TIMEOUT="${WASM_BINDGEN_TEST_DRIVER_TIMEOUT:-30}" setsid timeout 600 \
        wasm-pack test --headless --chrome --chromedriver "$ROOT/scripts/chromedriver-logged.sh" "$crate" \
        >"$log" 2>&1 &
    session=$!
    # A watchdog, not a synchronisation: the runner reports no event for a
    # page that never loads, so the wait is counted in seconds.
    while kill -0 "$session" 2>/dev/null; do
        sleep 1
        if [ "$(grep -c "Running headless tests" "$log")" -gt "$(grep -c "Loading Wasm module" "$log")" ]; then
            waiting=$((waiting + 1))
        else
            waiting=0
        fi
        if [ "$waiting" -ge "$CHROME_POKE_S" ] && [ $(((waiting - CHROME_POKE_S) % 5)) -eq 0 ]; then
            poke_test_server "$tmp/chromedriver.log" >>"$log"
        fi
        if [ "$waiting" -ge "$CHROME_STALL_S" ]; then
            status=75
            break
        fi
    done
    [ "$status" -eq 75 ] || wait "$session" || status=$?
    # Whatever the attempt left running (a browser outliving the runner, or
    # the whole stalled attempt), then what it left in its folder.
    stop_session "$session"
    [ "$status" -ne 75 ] || show_stall "$tmp/chromedriver.log" >>"$log"
    rm -rf "$tmp"
    return "$status"
}
