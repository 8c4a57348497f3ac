#!/usr/bin/env python3
"""Print a tier's summary table from its results file and judge it.

    tests/tier/summary.py RESULTS.tsv [--title NAME] [--matrix]

RESULTS.tsv has one row per scenario (tests/tier/step.sh and
tests/lab/run-all.sh write them): name, lane, result (pass, FAIL or SKIP),
seconds, timeout, note; tab-separated.  Prints the table, the skips with
their reasons, the failures (each with the last lines of the log its note
names, "log PATH"), and 'NAME: N passed, N failed, N skipped'.  A skip is never
a pass.  Exits 1 when a row failed or the file has no rows.  --matrix
(make test-matrix) also prints the scenarios against the lanes, one
column a kernel: pass, FAIL, SKIP or '-' (not run there).
"""
import argparse
import re
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('results')
    ap.add_argument('--title', default='summary')
    ap.add_argument('--matrix', action='store_true')
    args = ap.parse_args()

    rows = []
    try:
        with open(args.results, encoding='utf-8') as f:
            for line in f:
                cols = line.rstrip('\n').split('\t')
                if len(cols) < 5:
                    continue
                cols += [''] * (6 - len(cols))
                rows.append(cols[:6])
    except FileNotFoundError:
        pass

    heads = ('scenario', 'lane', 'result', 'seconds', 'timeout')
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(heads)]
    fmt = '  '.join(f'{{:<{w}}}' for w in widths)
    print(f'=== {args.title}: summary')
    print(fmt.format(*heads) + '  note')
    for r in rows:
        print((fmt.format(*r[:5]) + '  ' + r[5]).rstrip())
    passed = [r for r in rows if r[2] == 'pass']
    failed = [r for r in rows if r[2] == 'FAIL']
    skipped = [r for r in rows if r[2] == 'SKIP']
    odd = [r for r in rows if r[2] not in ('pass', 'FAIL', 'SKIP')]
    for r in skipped:
        print(f'skipped: {r[0]} ({r[1]}): {r[5]}')
    for r in failed:
        print(f'failed: {r[0]} ({r[1]}){": " + r[5] if r[5] else ""}')
        log_tail(r[5])
    for r in odd:
        print(f'failed: {r[0]}: unknown result {r[2]!r}')
    if args.matrix:
        matrix(rows)
    total = sum(int(r[3]) for r in rows if r[3].isdigit())
    print(f'{args.title}: {len(passed)} passed, {len(failed) + len(odd)} failed, '
          f'{len(skipped)} skipped ({total} s in the rows)')
    if not rows:
        print(f'{args.title}: no results in {args.results}', file=sys.stderr)
        return 1
    return 1 if failed or odd else 0


def log_tail(note, n=12):
    """The last lines of the log a failed row's note names ("log PATH"):
    a CI log may keep only the end of the output."""
    m = re.search(r'\blog (\S+)', note)
    if not m:
        return
    try:
        with open(m.group(1), encoding='utf-8', errors='replace') as f:
            lines = [ln.rstrip() for ln in f if ln.strip()]
    except OSError:
        return
    for ln in lines[-n:]:
        print(f'    {ln}')


def matrix(rows):
    """Scenario x lane: each cell the row's result (the last, if twice)."""
    lanes, names, cell = [], [], {}
    for r in rows:
        if r[1] not in lanes:
            lanes.append(r[1])
        if r[0] not in names:
            names.append(r[0])
        cell[(r[0], r[1])] = r[2]
    w = max([len('scenario')] + [len(n) for n in names])
    cw = [max(len(ln), 4) for ln in lanes]
    print('=== matrix: scenario x kernel')
    print('  '.join(['scenario'.ljust(w)] + [ln.ljust(c) for ln, c in zip(lanes, cw)]).rstrip())
    for n in names:
        print('  '.join([n.ljust(w)] + [cell.get((n, ln), '-').ljust(c)
                                        for ln, c in zip(lanes, cw)]).rstrip())


if __name__ == '__main__':
    sys.exit(main())
