#!/usr/bin/env python3
"""Lists the Swift Testing tests and suites that a test run shows started but not ended.

Usage: scripts/unfinished-tests.py OUTPUT_FILE [EVENTS_FILE]. Used by scripts/with-time-limit.sh
when a run outlives its time limit, so that a hang names the test that hangs.

EVENTS_FILE is Swift Testing's event stream (`swift test --event-stream-output-path`), one JSON
object per line, written by the test process itself: it names the unfinished tests even when
the console output that `swift test` relays stops mid-line. Without it (or when it is empty),
the console output is read instead.
"""
import json
import os
import re
import sys


def from_events(path):
    started, ended = {}, set()
    for line in open(path, errors="replace"):
        try:
            record = json.loads(line)
        except ValueError:
            continue  # the last line of a killed run may be cut short
        if record.get("kind") != "event":
            continue
        payload = record["payload"]
        kind, test = payload.get("kind"), payload.get("testID")
        if kind == "testStarted":
            text = payload["messages"][0]["text"] if payload.get("messages") else test
            started[test] = text.removesuffix(" started.")
        elif kind in ("testEnded", "testSkipped"):
            ended.add(test)
    return [text for test, text in started.items() if test not in ended]


def from_console(path):
    started, ended = {}, set()
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        match = re.match(r"◇ (Test|Suite) (.*) started\.$", line)
        # "◇ Test run started." is the whole run, not a test (its end line counts tests).
        if match and match.group(2) != "run" and not match.group(2).startswith("case "):
            started[match.group(2)] = f"{match.group(1)} {match.group(2)}"
            continue
        match = re.match(
            r"[✔✘] (Test|Suite) (.*?)(?: with \d+ test cases?)? (?:passed|failed) after [0-9.]+ seconds", line)
        match = match or re.match(r"➜ (Test|Suite) (.*) skipped", line)
        if match:
            ended.add(match.group(2))
    return [text for name, text in started.items() if name not in ended]


events = sys.argv[2] if len(sys.argv) > 2 else None
if events and os.path.exists(events) and os.path.getsize(events) > 0:
    print(f"  (from the event stream {events})")
    unfinished = from_events(events)
else:
    unfinished = from_console(sys.argv[1])
for text in unfinished:
    print(f"  still running: {text}")
if not unfinished:
    print("  every test that started has ended (the hang is outside the tests)")
