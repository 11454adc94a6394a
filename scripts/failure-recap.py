#!/usr/bin/env python3
"""Repeats, at the end of a failed test run, what failed it: sanitizer reports, stuck awaits and
failed tests.

Usage: scripts/failure-recap.py OUTPUT_FILE. Used by scripts/with-time-limit.sh when the command
it ran exits non-zero. A sanitizer report is printed where it happens, often thousands of lines
before the run ends, and a CI log is often read from its end: "ThreadSanitizer: reported 2
warnings" on the last line says nothing of where. So this prints each report again (its first
lines: the kind, both stacks' first frames, the summary), then the failed tests, then one line
counting them. An await that outlived OPERATIONBRIDGE_STUCK_AWAIT_SECONDS (.ci/run sets it) is
repeated too: its first line, what its report says of the awaited operation, and the wait graph's
"Waiting chains" — not the graph's list of operations, which a stuck 20,000-step pipeline makes
20,000 lines long. Prints nothing when the output holds none of these.
"""
import re
import sys

REPORT_START = re.compile(r"^(WARNING: ThreadSanitizer:|==\d+==ERROR: AddressSanitizer:)")
REPORT_END = re.compile(r"^SUMMARY: (Thread|Address)Sanitizer:")
STUCK_START = re.compile(r"^OperationBridge: .* has been waiting for more than")
# The lines of a stuck-await report: the awaited operation's, then its wait graph's.
STUCK_BODY = re.compile(r"^(  |- |    |Operations:|Waiting chains:|Wait graph|Nothing is pending|\S.*: (pending|executing|started|finished))")
FAILED_TEST = re.compile(r"^(✘ Test |Test Case .* failed|.*: error: |.*Fatal error: )")
LINES_PER_REPORT = 30
MAX_REPORTS = 4
MAX_FAILED_LINES = 20
MAX_STUCK_REPORTS = 3
MAX_CHAIN_LINES = 8


def summarize_stuck(report):
    """The report's first lines (up to its wait graph's list of operations) and its chains."""
    head, chains, section = [], [], "head"
    for line in report:
        if line.startswith("Operations:"):
            section = "operations"
        elif line.startswith("Waiting chains:"):
            section = "chains"
        if section == "head":
            head.append(line)
        elif section == "chains":
            chains.append(line)
    operations = sum(1 for line in report if line.startswith("- ")) - max(0, len(chains) - 1)
    shown = head[:12] + [f"  ({operations} operations in the graph, not repeated)"] + chains[: MAX_CHAIN_LINES + 1]
    if len(chains) > MAX_CHAIN_LINES + 1:
        shown.append(f"  … {len(chains) - MAX_CHAIN_LINES - 1} more chains")
    return shown


def main(path):
    reports, failed, stuck = [], [], []
    current = None
    stuck_current = None
    for line in open(path, errors="replace"):
        line = line.rstrip("\n")
        if stuck_current is not None:
            if STUCK_BODY.search(line):
                stuck_current.append(line)
                continue
            stuck.append(stuck_current)
            stuck_current = None
        if current is None and STUCK_START.search(line):
            stuck_current = [line]
            continue
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
    if stuck_current is not None:
        stuck.append(stuck_current)
    if not reports and not failed and not stuck:
        return
    print(f"\n=== what failed this run (repeated from {path}) ===")
    for number, report in enumerate(reports[:MAX_REPORTS], start=1):
        print(f"--- sanitizer report {number} of {len(reports)} ---")
        shown = report[:LINES_PER_REPORT]
        print("\n".join(shown))
        if len(report) > len(shown):
            print(f"  … {len(report) - len(shown)} more lines …")
            print(report[-1])
    for number, report in enumerate(stuck[:MAX_STUCK_REPORTS], start=1):
        print(f"--- stuck await {number} of {len(stuck)} ---")
        print("\n".join(summarize_stuck(report)))
    if failed:
        print("--- failed tests and errors ---")
        print("\n".join(failed[:MAX_FAILED_LINES]))
        if len(failed) > MAX_FAILED_LINES:
            print(f"  … {len(failed) - MAX_FAILED_LINES} more")
    print(f"=== {len(reports)} sanitizer report(s), {len(stuck)} stuck await(s), {len(failed)} failure line(s) ===")


if __name__ == "__main__":
    main(sys.argv[1])
