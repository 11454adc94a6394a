#!/usr/bin/env python3
"""Repeats, at the end of a failed test run, what failed it: sanitizer reports and failed tests.

Usage: scripts/failure-recap.py OUTPUT_FILE. Used by scripts/with-time-limit.sh when the command
it ran exits non-zero. A sanitizer report is printed where it happens, often thousands of lines
before the run ends, and a CI log is often read from its end: "ThreadSanitizer: reported 2
warnings" on the last line says nothing of where. So this prints each report again (its first
lines: the kind, both stacks' first frames, the summary), then the failed tests, then one line
counting them. Prints nothing when the output holds neither.
"""
import re
import sys

REPORT_START = re.compile(r"^(WARNING: ThreadSanitizer:|==\d+==ERROR: AddressSanitizer:)")
REPORT_END = re.compile(r"^SUMMARY: (Thread|Address)Sanitizer:")
FAILED_TEST = re.compile(r"^(✘ Test |Test Case .* failed|.*: error: |.*Fatal error: )")
LINES_PER_REPORT = 30
MAX_REPORTS = 4
MAX_FAILED_LINES = 20


def main(path):
    reports, failed = [], []
    current = None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if current is None and REPORT_START.search(line):
            current = [line]
            continue
        if current is not None:
            current.append(line)
            if REPORT_END.search(line):
                reports.append(current)
                current = None
            continue
        if FAILED_TEST.search(line):
            failed.append(line)
    if current is not None:
        reports.append(current)  # cut short: the run ended inside a report
    if not reports and not failed:
        return
    print(f"\n=== what failed this run (repeated from {path}) ===")
    for number, report in enumerate(reports[:MAX_REPORTS], start=1):
        print(f"--- sanitizer report {number} of {len(reports)} ---")
        shown = report[:LINES_PER_REPORT]
        print("\n".join(shown))
        if len(report) > len(shown):
            print(f"  … {len(report) - len(shown)} more lines …")
            print(report[-1])
    if failed:
        print("--- failed tests and errors ---")
        print("\n".join(failed[:MAX_FAILED_LINES]))
        if len(failed) > MAX_FAILED_LINES:
            print(f"  … {len(failed) - MAX_FAILED_LINES} more")
    print(f"=== {len(reports)} sanitizer report(s), {len(failed)} failure line(s) ===")


if __name__ == "__main__":
    main(sys.argv[1])
