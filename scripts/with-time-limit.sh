#!/usr/bin/env bash
# Runs a command with a time limit, its output shown and kept in a file.
#
# Usage: [TEST_EVENTS=FILE] scripts/with-time-limit.sh SECONDS OUTPUT_FILE COMMAND [ARGUMENT...]
#
# CI runs the test suites through it: a hang (an await that is never answered) would otherwise
# use up CI's whole budget and print nothing useful. When the limit is reached, the threads of
# the test process are printed (when gdb is installed), the command is stopped, the tests that
# started and never ended are listed (scripts/unfinished-tests.py, from Swift Testing's event
# stream TEST_EVENTS when the command writes one, since the console output `swift test` relays
# can stop mid-line), and the script exits 124. The threads are also printed, once, when the
# first stuck-await report of the package appears in the output (OPERATIONBRIDGE_STUCK_AWAIT_SECONDS)
# or a test exceeds its Swift Testing time limit (TEST_EVENTS).
# Otherwise it exits with the command's status,
# and when that is a failure it first repeats the sanitizer reports and failed tests of the
# output (scripts/failure-recap.py), since a CI log is read from its end.
set -uo pipefail
limit=$1
output=$2
shift 2

: >"$output"
# An event stream left by an earlier run must not be read as this one's.
if [[ -n "${TEST_EVENTS:-}" ]]; then rm -f "$TEST_EVENTS"; fi
# setsid: the command and everything it starts form one session, stopped together (`swift test`
# starts the test process in a process group of its own, within the session).
setsid bash -c 'set -o pipefail; "$@" 2>&1 | tee "$0"' "$output" "$@" &
group=$!

# The processes of session $1: with pgrep where procps is installed, from /proc otherwise.
session_processes() {
    if command -v pgrep >/dev/null; then
        pgrep -s "$1"
        return
    fi
    local stat line rest
    for stat in /proc/[0-9]*/stat; do
        line=$(cat "$stat" 2>/dev/null) || continue
        rest=${line##*) }     # after the command name, which may contain spaces
        read -r _ _ _ session _ <<<"$rest"
        if [[ "$session" == "$1" ]]; then
            line=${stat#/proc/}
            echo "${line%/stat}"
        fi
    done
}
# Prints the threads of the test processes of the session (when gdb is installed); $1 says why.
dump_threads() {
    command -v gdb >/dev/null || return 0
    local process
    for process in $(session_processes "$group"); do
        grep -q 'PackageTests' "/proc/$process/cmdline" 2>/dev/null || continue
        printf '\n--- threads of process %s, %s ---\n' "$process" "$1"
        timeout 120 gdb -p "$process" -batch -ex 'thread apply all bt 30' >"$output.gdb" 2>&1
        grep -E '^(Thread|#)' "$output.gdb" || { echo "(gdb printed no threads:)"; tail -5 "$output.gdb"; }
    done
}

deadline=$(($(date +%s) + limit))
# An await that outlives OPERATIONBRIDGE_STUCK_AWAIT_SECONDS prints its wait graph (the package
# does; .ci/run sets the variable). The first time one does, the threads are printed as well,
# while the await is still stuck: a Swift Testing time limit would otherwise fail the test and
# let the run go on, with nothing saying what each thread was doing. But `swift test` relays the
# test process's standard error and holds it until the process exits (checked: a line written
# at once reached the output 8.8 s later, when its 8 s test ended; CI72's one report came at the
# end, and no threads were printed), so the report mostly arrives too late for this; the first
# time limit a test exceeds — an issue in the event stream, which the test process writes itself
# — prints the threads too, when other tests keep the process running.
threads_shown=false
stuck_or_timed_out() {
    grep -q '^OperationBridge: .* has been waiting for more than' "$output" && return 0
    [[ -n "${TEST_EVENTS:-}" && -f "$TEST_EVENTS" ]] && grep -q 'Time limit was exceeded' "$TEST_EVENTS"
}
while kill -0 "$group" 2>/dev/null; do
    if (($(date +%s) >= deadline)); then
        printf '\n=== TIME LIMIT: %s s reached, stopped: %s ===\n' "$limit" "$*"
        dump_threads "at the time limit"
        # The session's leader by name too: `wait` then returns, whatever the lookup found.
        # shellcheck disable=SC2046 # one pid per word
        kill -KILL "$group" $(session_processes "$group") 2>/dev/null
        wait "$group" 2>/dev/null
        python3 "$(dirname "$0")/unfinished-tests.py" "$output" ${TEST_EVENTS:+"$TEST_EVENTS"}
        exit 124
    fi
    if ! $threads_shown && stuck_or_timed_out; then
        threads_shown=true
        dump_threads "at the first stuck-await report or exceeded time limit"
    fi
    sleep 2
done
wait "$group"
status=$?
# A failure's cause is printed where it happened, often far above the run's last line: repeat it.
if ((status != 0)); then python3 "$(dirname "$0")/failure-recap.py" "$output"; fi
exit "$status"
