#!/usr/bin/env python3
"""The one parser of test results: TAP-like lines from the shell and Python
scenarios and KTAP from the kernel, in one log.

    tap.py [--min-pass N] [--allow-skip] [--ktap] < log     judge, print the cases
    tap.py --skips < log                                    WHAT<TAB>REASON per skip

A case is a line (after any dmesg timestamp) of the form
    ok N - WHAT  /  not ok N - WHAT  /  ok N - WHAT # SKIP REASON
(the shell scenarios, tests/lab/checks.sh; the dash is optional, as in KTAP:
"ok 3 name").  Indented lines are a KTAP subtest's own cases and are not
counted.  --ktap: only cases after a "KTAP version" line count, and the plan
("1..N") must match them.

Judging prints the cases, then 'N passed, N failed, N skipped', and exits 1
when a case failed, no case was seen, fewer than --min-pass passed, a case
was skipped without --allow-skip, or the plan does not match.
"""
import argparse
import re
import sys

CASE = re.compile(r'^(not ok|ok) (\d+)(?: -)? (.*?)(?:\s+#\s*(SKIP|TODO)\b\s*(.*))?$')
PLAN = re.compile(r'^1\.\.(\d+)$')
STAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')


def parse(lines, ktap):
    """(plan, passed, failed, skipped); skipped holds (what, reason)."""
    plan = None
    passed, failed, skipped = [], [], []
    live = not ktap
    for raw in lines:
        line = STAMP.sub('', raw.rstrip('\n'))
        if line.startswith('KTAP version'):
            live = True
            continue
        if not live:
            continue
        m = PLAN.match(line)
        if m:
            plan = int(m.group(1))
            continue
        m = CASE.match(line)
        if not m:
            continue
        result, _num, what, directive, why = m.groups()
        if directive == 'SKIP':
            skipped.append((what, why or 'no reason given'))
        elif result == 'ok':
            passed.append(what)
        else:
            failed.append(what)
    return plan, passed, failed, skipped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--min-pass', type=int, default=1)
    ap.add_argument('--allow-skip', action='store_true')
    ap.add_argument('--ktap', action='store_true')
    ap.add_argument('--skips', action='store_true')
    args = ap.parse_args()

    lines = sys.stdin.readlines()
    plan, passed, failed, skipped = parse(lines, args.ktap)
    if args.skips:
        for what, why in skipped:
            print(f'{what}\t{why}')
        return 0
    for raw in lines:
        line = STAMP.sub('', raw.rstrip('\n'))
        if CASE.match(line) or line.startswith('    #'):
            print(line)
    print(f'tap: {len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped')
    bad = []
    total = len(passed) + len(failed) + len(skipped)
    if total == 0:
        bad.append('no results found')
    if args.ktap and plan is not None and plan != total:
        bad.append(f'plan says {plan} cases, saw {total}')
    if failed:
        bad.append('failed: ' + ', '.join(failed))
    if skipped and not args.allow_skip:
        bad.append('skipped: ' + ', '.join(w for w, _ in skipped))
    if len(passed) < args.min_pass:
        bad.append(f'only {len(passed)} passed, need {args.min_pass}')
    for b in bad:
        print(f'tap: FAIL: {b}')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
