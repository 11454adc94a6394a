#!/usr/bin/env bash
# Runs a command with a time limit, its output shown and kept in a file.
#
# Usage: scripts/with-time-limit.sh SECONDS OUTPUT_FILE COMMAND [ARGUMENT...]
#
# CI runs the test suites through it: a hang (an await that is never answered) would otherwise
# use up CI's whole budget and print nothing useful. When the limit is reached, the command is
# stopped, the tests that started and never ended are listed (scripts/unfinished-tests.py), and
# the script exits 124. Otherwise it exits with the command's status.
set -uo pipefail
limit=$1
output=$2
shift 2

: >"$output"
# setsid: the command and everything it starts form one process group, stopped together.
setsid bash -c 'set -o pipefail; "$@" 2>&1 | tee "$0"' "$output" "$@" &
group=$!
deadline=$(($(date +%s) + limit))
while kill -0 "$group" 2>/dev/null; do
    if (($(date +%s) >= deadline)); then
        kill -KILL -- "-$group" 2>/dev/null
        wait "$group" 2>/dev/null
        printf '\n=== TIME LIMIT: %s s reached, stopped: %s ===\n' "$limit" "$*"
        python3 "$(dirname "$0")/unfinished-tests.py" "$output"
        exit 124
    fi
    sleep 2
done
wait "$group"
