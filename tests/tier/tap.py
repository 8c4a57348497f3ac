#!/usr/bin/env python3
"""The one parser of test results: TAP-like lines from the shell and Python
scenarios and KTAP from the kernel, in one log.

    tap.py [--allow-skip] [--ktap] < log     judge, print the cases
    tap.py --skips < log                     WHAT<TAB>REASON per skip

A case is a line (after any dmesg timestamp) of the form
    ok N - WHAT  /  not ok N - WHAT  /  ok N - WHAT # SKIP REASON
(the shell scenarios, tests/lab/checks.sh; the dash is optional, as in KTAP:
"ok 3 name").  Indented lines are a KTAP subtest's own cases and are not
counted.  A plan is a line "1..N".

--ktap (a kernel log: kmod/tests/ktap.h prints "KTAP version 1", "1..N",
then the N cases): only the lines after a "KTAP version" line count, each
such line beginning a run of its own (a log may hold two modules' runs).
Every run must have a plan, its cases must be numbered 1, 2, ... in order,
and their count must be the plan's N: a case the log lost (a wrapped ring
buffer, a module that stopped half way) is a failure, not a smaller total.
A log with no run, or no case, is a failure.  Without --ktap, a plan is
optional (the shell scenarios print it at the end), and checked if there.

Judging prints the cases, then 'N passed, N failed, N skipped', and exits 1
when a case failed, no case was seen, the plan is missing (--ktap) or does
not match, or a case was skipped without --allow-skip.  --min-pass N (old
callers: the plan is the guard now) also wants N passes.

--skips prints each skipped case, and each plain line "SKIP: WHAT: REASON"
(or "SKIP: REASON") of a step that exits 0 (tests/tier/step.sh), once: the
unit tests print both forms of one skip (tests/tier/unit.sh).

The self-test: tests/tier/tap-selftest.py.
"""
import argparse
import re
import sys

CASE = re.compile(r'^(not ok|ok) (\d+)(?: -)? (.*?)(?:\s+#\s*(SKIP|TODO)\b\s*(.*))?$')
PLAN = re.compile(r'^1\.\.(\d+)$')
STAMP = re.compile(r'^\[\s*\d+\.\d+\]\s?')
PLAIN_SKIP = re.compile(r'^SKIP: (?:(.*): )?(.*)$')


class Run:
    """One KTAP run (or the whole log, without --ktap)."""

    def __init__(self):
        self.plan = None
        self.plans = 0
        self.numbers = []


def parse(lines, ktap):
    """(runs, passed, failed, skipped); skipped holds (what, reason)."""
    runs = [] if ktap else [Run()]
    passed, failed, skipped = [], [], []
    for raw in lines:
        line = STAMP.sub('', raw.rstrip('\n'))
        if line.startswith('KTAP version'):
            runs.append(Run())
            continue
        if not runs:
            continue
        run = runs[-1]
        m = PLAN.match(line)
        if m:
            run.plan = int(m.group(1))
            run.plans += 1
            continue
        m = CASE.match(line)
        if not m:
            continue
        result, num, what, directive, why = m.groups()
        run.numbers.append(int(num))
        if directive == 'SKIP':
            skipped.append((what, why or 'no reason given'))
        elif result == 'ok':
            passed.append(what)
        else:
            failed.append(what)
    return runs, passed, failed, skipped


def plan_problems(runs, ktap):
    """What is wrong with the runs' plans and numbering."""
    bad = []
    for i, run in enumerate(runs, 1):
        where = f'KTAP run {i}: ' if ktap and len(runs) > 1 else ''
        seen = len(run.numbers)
        if run.plan is None:
            if ktap:
                bad.append(f'{where}no plan ("1..N"): cannot tell whether a case is missing'
                           f' ({seen} cases seen)')
            continue
        if run.plans > 1:
            bad.append(f'{where}{run.plans} plans in one run')
        if run.plan != seen:
            bad.append(f'{where}plan says {run.plan} cases, saw {seen}')
        if ktap:
            for want, num in enumerate(run.numbers, 1):
                if num != want:
                    bad.append(f'{where}case numbered {num} where {want} was expected'
                               ' (a case is missing or out of order)')
                    break
    return bad


def skip_list(lines, skipped):
    """The skipped cases and the plain "SKIP:" lines, each (what, why) once."""
    out = list(skipped)
    for raw in lines:
        m = PLAIN_SKIP.match(STAMP.sub('', raw.rstrip('\n')))
        if m:
            out.append((m.group(1) or 'skipped', m.group(2)))
    seen, uniq = set(), []
    for s in out:
        if s not in seen:
            seen.add(s)
            uniq.append(s)
    return uniq


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--min-pass', type=int, default=0)
    ap.add_argument('--allow-skip', action='store_true')
    ap.add_argument('--ktap', action='store_true')
    ap.add_argument('--skips', action='store_true')
    args = ap.parse_args()

    lines = sys.stdin.readlines()
    runs, passed, failed, skipped = parse(lines, args.ktap)
    if args.skips:
        for what, why in skip_list(lines, skipped):
            print(f'{what}\t{why}')
        return 0
    for raw in lines:
        line = STAMP.sub('', raw.rstrip('\n'))
        if CASE.match(line) or PLAN.match(line) or line.startswith('    #'):
            print(line)
    for what, why in skipped:
        print(f'tap: SKIP: {what}: {why}')
    print(f'tap: {len(passed)} passed, {len(failed)} failed, {len(skipped)} skipped')
    bad = []
    total = len(passed) + len(failed) + len(skipped)
    if args.ktap and not runs:
        bad.append('no KTAP run found (no "KTAP version" line)')
    elif total == 0:
        bad.append('no results found')
    bad += plan_problems(runs, args.ktap)
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
