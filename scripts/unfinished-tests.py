#!/usr/bin/env python3
"""Lists the Swift Testing tests and suites that a test run's output shows started but not ended.

Usage: scripts/unfinished-tests.py OUTPUT_FILE. Used by scripts/with-time-limit.sh when a run
outlives its time limit, so that a hang names the test that hangs.
"""
import re
import sys

started = {}
ended = set()
for line in open(sys.argv[1], errors="replace"):
    line = line.rstrip("\n")
    match = re.match(r"◇ (Test|Suite) (.*) started\.$", line)
    if match and not match.group(2).startswith("case "):
        started[match.group(2)] = match.group(1)
        continue
    match = re.match(r"[✔✘] (Test|Suite) (.*?)(?: with \d+ test cases?)? (?:passed|failed) after [0-9.]+ seconds", line)
    match = match or re.match(r"➜ (Test|Suite) (.*) skipped", line)
    if match:
        ended.add(match.group(2))

unfinished = [(kind, name) for name, kind in started.items() if name not in ended]
for kind, name in unfinished:
    print(f"  still running: {kind} {name}")
if not unfinished:
    print("  every test that started has ended (the hang is outside the tests)")
