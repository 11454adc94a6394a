#!/usr/bin/env python3
"""Checks that every Swift code block in the documentation compiles.

Each ```swift block of Migration.md and of the DocC articles must appear, line for line (leading
and trailing white space ignored, blank lines and `// ...` elision lines skipped), as a
contiguous run in a Swift file under Examples/ or Tests/ — files that CI compiles (and, for
Tests/, runs). A block that should not be checked (pseudo-code) must be fenced as ```text.

Exit status: 0 when every block is found, 1 otherwise (each missing block is printed).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "Migration.md"] + sorted((ROOT / "Sources/OperationBridge/OperationBridge.docc").glob("*.md"))
SOURCES = sorted(ROOT.glob("Examples/**/*.swift")) + sorted(ROOT.glob("Tests/**/*.swift"))
BLOCK = re.compile(r"^```swift[^\n]*\n(.*?)^```", re.S | re.M)


def normalize(text):
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line == "// ..." or line == "// …":
            continue
        lines.append(line)
    return lines


def contains(haystack, needle):
    if not needle:
        return True
    first = needle[0]
    for start, line in enumerate(haystack):
        if line == first and haystack[start:start + len(needle)] == needle:
            return True
    return False


def main():
    sources = {path: normalize(path.read_text()) for path in SOURCES}
    missing = 0
    checked = 0
    for doc in DOCS:
        if not doc.exists():
            continue
        text = doc.read_text()
        for match in BLOCK.finditer(text):
            checked += 1
            block = normalize(match.group(1))
            if not any(contains(lines, block) for lines in sources.values()):
                missing += 1
                line_number = text[: match.start()].count("\n") + 1
                print(f"{doc.relative_to(ROOT)}:{line_number}: swift block not found in Examples/ or Tests/:")
                print("    " + "\n    ".join(block[:6]) + ("\n    ..." if len(block) > 6 else ""))
    print(f"check-snippets: {checked} swift blocks checked, {missing} not found in compiled sources")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
