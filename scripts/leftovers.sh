# What a test run leaves behind: files in the temp folder and processes.
# Sourced by scripts/test.sh:
#
#   leftovers_begin   # before the first suite: the run's own temp folder and marker
#   leftovers_check   # after the last one: fails (status 1) on anything left
#
# leftovers_begin snapshots the system temp folder, then points TMPDIR at a
# new folder of the run's own (every tool of the suites honours TMPDIR:
# mktemp, Node's os.tmpdir(), Rust's temp_dir, Chromium and ChromeDriver),
# and marks every process the run starts with EDGESHED_TEST_RUN in its
# environment. leftovers_check then fails, listing them, on
#   - any file or folder still in the run's temp folder,
#   - any process still alive that carries the marker,
#   - any entry of the system temp folder that was not in the snapshot, when
#     CI is set (elsewhere other users of the folder may have made it: then
#     it is only listed).
# It removes what it found either way, so a failed run leaves nothing too.
# LEFTOVERS_PLANT=chromium (for checking the check) plants a Chromium
# profile folder in the run's temp folder just before the check.

LEFTOVERS_SYSTEM_TMP=""
LEFTOVERS_RUN_TMP=""
LEFTOVERS_BEFORE=""

leftovers_begin() {
    LEFTOVERS_SYSTEM_TMP="${TMPDIR:-/tmp}"
    LEFTOVERS_BEFORE=$(ls -A "$LEFTOVERS_SYSTEM_TMP")
    LEFTOVERS_RUN_TMP=$(mktemp -d "$LEFTOVERS_SYSTEM_TMP/edgeshed-test.XXXXXX")
    export TMPDIR="$LEFTOVERS_RUN_TMP"
    export EDGESHED_TEST_RUN="$LEFTOVERS_RUN_TMP"
}

# The pids (other than this shell) whose environment carries the run's
# marker. Bash builtins only: a helper process would carry the marker too.
marked_processes() {
    local dir pid entry
    local -a environ
    local stat
    for dir in /proc/[0-9]*; do
        pid=${dir#/proc/}
        [ "$pid" = "$$" ] || [ "$pid" = "$BASHPID" ] && continue
        # A zombie has ended already (its parent, or init, reaps it).
        read -r stat 2>/dev/null <"$dir/stat" || continue
        stat=${stat##*) }
        [ "${stat%% *}" = Z ] && continue
        mapfile -d '' environ 2>/dev/null <"$dir/environ" || continue
        for entry in "${environ[@]}"; do
            if [ "$entry" = "EDGESHED_TEST_RUN=$LEFTOVERS_RUN_TMP" ]; then
                echo "$pid"
                break
            fi
        done
    done
    return 0
}

leftovers_check() {
    local found=0 pids files new entry
    if [ "${LEFTOVERS_PLANT:-}" = chromium ]; then
        mkdir -p "$LEFTOVERS_RUN_TMP/org.chromium.Chromium.scoped_dir.planted/Default"
        head -c 1048576 /dev/zero >"$LEFTOVERS_RUN_TMP/org.chromium.Chromium.scoped_dir.planted/Default/History"
    fi
    pids=$(marked_processes)
    # A process may be on its way out (a child ending after its parent):
    # up to 5 s for those to go.
    for _ in $(seq 1 25); do
        [ -n "$pids" ] || break
        sleep 0.2
        pids=$(marked_processes)
    done
    if [ -n "$pids" ]; then
        found=1
        echo "leftovers: processes of this run still running:" >&2
        # shellcheck disable=SC2086
        ps -o pid=,ppid=,etime=,args= -p $(echo $pids | tr ' ' ',') >&2 || true
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null || true
    fi
    files=$(find "$LEFTOVERS_RUN_TMP" -mindepth 1 -maxdepth 1 2>/dev/null)
    if [ -n "$files" ]; then
        found=1
        echo "leftovers: in the run's temp folder ($LEFTOVERS_RUN_TMP):" >&2
        while IFS= read -r entry; do
            echo "  $(du -sh "$entry" 2>/dev/null | cut -f1 || true) ${entry#"$LEFTOVERS_RUN_TMP"/}" >&2
        done <<<"$files"
    fi
    rm -rf "$LEFTOVERS_RUN_TMP"
    new=$(comm -13 <(sort <<<"$LEFTOVERS_BEFORE") <(ls -A "$LEFTOVERS_SYSTEM_TMP" 2>/dev/null | sort) || true)
    if [ -n "$new" ]; then
        if [ -n "${CI:-}" ]; then
            found=1
            echo "leftovers: new in $LEFTOVERS_SYSTEM_TMP since the run started:" >&2
        else
            echo "leftovers: new in $LEFTOVERS_SYSTEM_TMP since the run started (not counted: CI is not set, and other processes share the folder):"
        fi
        while IFS= read -r entry; do echo "  $entry"; done <<<"$new"
    fi
    if [ "$found" -ne 0 ]; then
        echo "leftovers: this run left the above behind (removed now)" >&2
        return 1
    fi
    echo "leftovers: none (temp folder $LEFTOVERS_RUN_TMP empty, no process of the run alive)"
}

# After a failed suite: stop the run's processes and remove its temp folder
# (the failure is reported already; what was left is listed).
leftovers_cleanup() {
    [ -n "$LEFTOVERS_RUN_TMP" ] || return 0
    local pids
    pids=$(marked_processes)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    if [ -n "$(ls -A "$LEFTOVERS_RUN_TMP" 2>/dev/null)" ]; then
        echo "leftovers: removing what the failed run left in $LEFTOVERS_RUN_TMP: $(ls -A "$LEFTOVERS_RUN_TMP" | tr '\n' ' ')" >&2
    fi
    rm -rf "$LEFTOVERS_RUN_TMP"
}
