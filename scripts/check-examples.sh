#!/usr/bin/env bash
# Runs every example and compares what it prints with its expected transcript in
# Examples/Transcripts/<name>.txt, so that an example never contradicts its own comments.
# The examples are deterministic (no timing-dependent lines). Exits 1 on the first difference.
# To accept a deliberate change: `scripts/check-examples.sh --update`.
set -euo pipefail
cd "$(dirname "$0")/.."

examples=(UnfurlDemo BatchDownloads MixedPipeline FlakyService LegacyQueueActor MigrationBefore MigrationAfter ClassicSwift5)
swift build >/dev/null
bin="$(swift build --show-bin-path)"
status=0
for example in "${examples[@]}"; do
    expected="Examples/Transcripts/$example.txt"
    actual="$(mktemp)"
    "$bin/$example" >"$actual" 2>&1
    if [ "${1:-}" = "--update" ]; then
        cp "$actual" "$expected"
        echo "updated $expected"
    elif diff -u "$expected" "$actual"; then
        echo "ok   $example matches $expected"
    else
        echo "FAIL $example differs from $expected (above)"
        status=1
    fi
    rm -f "$actual"
done
exit $status
