#!/usr/bin/env python3
"""Parse KTAP from a kernel log (stdin) and judge it.

    ktap.py [--min-pass N] [--allow-skip] < log

Strips dmesg timestamps, prints the cases, a summary line
'N passed, N failed, N skipped', and exits 1 when a case failed, when the plan
does not match the cases seen, when fewer than --min-pass passed, or when a case
was skipped without --allow-skip.
"""
import argparse
import re
import sys

CASE = re.compile(r'^(not ok|ok) (\d+) (\S+)(?:\s+#\s*(SKIP|TODO)\b\s*(.*))?$')
PLAN = re.compile(r'^1\.\.(\d+)$')
STAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--min-pass', type=int, default=1)
    ap.add_argument('--allow-skip', action='store_true')
    args = ap.parse_args()

    plan = None
    passed, failed, skipped = [], [], []
    seen_version = False
    for raw in sys.stdin:
        line = STAMP.sub('', raw.rstrip('\n'))
        if line.startswith('KTAP version'):
            seen_version = True
            continue
        m = PLAN.match(line)
        if m and seen_version:
            plan = int(m.group(1))
            continue
        m = CASE.match(line)
        if m and seen_version:
            result, num, name, directive, why = m.groups()
            print(line)
            if directive == 'SKIP':
                skipped.append(name)
            elif result == 'ok':
                passed.append(name)
            else:
                failed.append(name)
        elif line.startswith('    #') and seen_version:
            print(line)

    total = len(passed) + len(failed) + len(skipped)
    print(f'ktap: {len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped')
    bad = []
    if not seen_version:
        bad.append('no KTAP output found')
    if plan is not None and plan != total:
        bad.append(f'plan says {plan} cases, saw {total}')
    if failed:
        bad.append('failed: ' + ', '.join(failed))
    if skipped and not args.allow_skip:
        bad.append('skipped: ' + ', '.join(skipped))
    if len(passed) < args.min_pass:
        bad.append(f'only {len(passed)} passed, need {args.min_pass}')
    for b in bad:
        print(f'ktap: FAIL: {b}')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
