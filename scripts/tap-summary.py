#!/usr/bin/python3
"""Count the test cases of meson test runs and print "N passed, N failed".

    tap-summary.py TESTLOG.json...

meson counts one result per test program; each of ours is a TAP suite of
many cases, so the cases are counted from each program's TAP output.  A
program that failed without reporting a failing case (crash, timeout)
counts as one more failure.  With several logs (scripts/test.sh --repeat)
the cases of all of them are added up.  Skipped cases are counted on a
line of their own before the last one, which is always exactly
"N passed, N failed".  Exit status 1 if anything failed.
"""

import json
import re
import sys

OK = re.compile(r"^ok\b(.*)$")
NOT_OK = re.compile(r"^not ok\b(.*)$")
SKIP = re.compile(r"#\s*skip", re.I)
TODO = re.compile(r"#\s*todo", re.I)


def main():
    passed = failed = skipped = 0
    results = []
    for path in sys.argv[1:]:
        try:
            with open(path) as f:
                lines = [line for line in f if line.strip()]
        except FileNotFoundError:
            lines = []
        if not lines:
            print(f"{path}: no test results found", file=sys.stderr)
            failed += 1
        for line in lines:
            try:
                results.append(json.loads(line))
            except json.JSONDecodeError:
                # Never drop a result silently: count it as failed.
                results.append({"name": "unreadable log line",
                                "result": "ERROR"})
    if not sys.argv[1:]:
        print("no test log given", file=sys.stderr)
        failed = 1
    for r in results:
        suite_failed = 0
        for line in (r.get("stdout") or "").splitlines():
            if m := NOT_OK.match(line):
                if TODO.search(m.group(1)):
                    continue
                suite_failed += 1
            elif m := OK.match(line):
                if SKIP.search(m.group(1)):
                    skipped += 1
                else:
                    passed += 1
        if r.get("result") not in ("OK", "EXPECTEDFAIL", "SKIP") and suite_failed == 0:
            suite_failed = 1
            print(f"{r.get('name')}: {r.get('result')} without a failing case",
                  file=sys.stderr)
        failed += suite_failed
    if skipped:
        print(f"{skipped} skipped")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
