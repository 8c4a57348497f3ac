#!/usr/bin/env python3
"""Print a tier's summary table from its results file and judge it.

    tests/tier/summary.py RESULTS.tsv [--title NAME] [--matrix]
                          [--allowlist FILE]

RESULTS.tsv has one row per scenario (tests/tier/step.sh and
tests/lab/run-all.sh write them): name, lane, result, seconds, timeout,
note; tab-separated.  A result is one of
    pass      it ran and passed
    FAIL      it ran and failed (or could not run when it should have)
    SKIP      it could not run here: an environmental gap, with its reason
    not run   left out by design (the other lines' quick forms, the long
              rows make test-matrix runs, a row for another kernel): the
              note says where it runs
Prints the table (the rows that ran or should have), the skips with their
reasons, the rows not run here in a section of their own, the failures
(each with the last lines of the log its note names, "log PATH"), and
'NAME: N passed, N failed, N skipped, N not run here'.  Neither a skip nor
a row not run is ever a pass.  Exits 1 when a row failed or the file has no
rows.

--allowlist FILE (make test: tests/tier/skip-allowlist): a SKIP row fails
the run unless an entry of FILE matches it.  An entry is a line
    NAME-GLOB | LANE-GLOB | REASON-GLOB
(fnmatch patterns; a missing field matches anything) right below a comment
that says why the skip is acceptable; an entry without one is an error.
--matrix (make test-matrix) also prints the scenarios against the lanes,
one column a kernel: pass, FAIL, SKIP or '-' (not run there).
"""
import argparse
import fnmatch
import re
import sys

RESULTS = ('pass', 'FAIL', 'SKIP', 'not run')


def read_rows(path):
    rows = []
    try:
        with open(path, encoding='utf-8') as f:
            for line in f:
                cols = line.rstrip('\n').split('\t')
                if len(cols) < 5:
                    continue
                cols += [''] * (6 - len(cols))
                rows.append(cols[:6])
    except FileNotFoundError:
        pass
    return rows


def read_allowlist(path):
    """[(name, lane, reason globs, why)]; raises ValueError on an entry
    without its comment."""
    entries, comment = [], []
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                comment = []
                continue
            if line.startswith('#'):
                comment.append(line.lstrip('#').strip())
                continue
            if not comment:
                raise ValueError(f'{path}:{n}: an entry without a comment saying why: {line}')
            globs = [g.strip() for g in line.split('|')] + ['*', '*']
            entries.append((globs[0], globs[1] or '*', globs[2] or '*', ' '.join(comment)))
    return entries


def allowed(row, entries):
    for name, lane, reason, why in entries:
        if (fnmatch.fnmatchcase(row[0], name) and fnmatch.fnmatchcase(row[1], lane)
                and fnmatch.fnmatchcase(row[5], reason)):
            return why
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('results')
    ap.add_argument('--title', default='summary')
    ap.add_argument('--matrix', action='store_true')
    ap.add_argument('--allowlist')
    args = ap.parse_args()

    rows = read_rows(args.results)
    entries = None
    if args.allowlist:
        try:
            entries = read_allowlist(args.allowlist)
        except (OSError, ValueError) as e:
            print(f'{args.title}: FAIL: the skip allowlist: {e}')
            return 1

    ran = [r for r in rows if r[2] != 'not run']
    notrun = [r for r in rows if r[2] == 'not run']
    heads = ('scenario', 'lane', 'result', 'seconds', 'timeout')
    widths = [max([len(h)] + [len(r[i]) for r in ran]) for i, h in enumerate(heads)]
    fmt = '  '.join(f'{{:<{w}}}' for w in widths)
    print(f'=== {args.title}: summary')
    print(fmt.format(*heads) + '  note')
    for r in ran:
        print((fmt.format(*r[:5]) + '  ' + r[5]).rstrip())
    passed = [r for r in rows if r[2] == 'pass']
    failed = [r for r in rows if r[2] == 'FAIL']
    skipped = [r for r in rows if r[2] == 'SKIP']
    odd = [r for r in rows if r[2] not in RESULTS]
    if notrun:
        print(f'=== {args.title}: not run here, by design (not a pass, not a skip)')
        for r in notrun:
            print(f'not run: {r[0]} ({r[1]}): {r[5]}')
    unlisted = []
    for r in skipped:
        why = allowed(r, entries) if entries is not None else None
        if entries is not None and why is None:
            unlisted.append(r)
            print(f'skipped: {r[0]} ({r[1]}): {r[5]} -- NOT on the allowlist')
        else:
            print(f'skipped: {r[0]} ({r[1]}): {r[5]}' + (f' (allowed: {why})' if why else ''))
    for r in failed:
        print(f'failed: {r[0]} ({r[1]}){": " + r[5] if r[5] else ""}')
        log_tail(r[5])
    for r in odd:
        print(f'failed: {r[0]}: unknown result {r[2]!r}')
    if unlisted:
        print(f'failed: {len(unlisted)} SKIP row(s) not on the allowlist {args.allowlist}: '
              'a SKIP here is a gap in this machine (install or build what the reason names), '
              'or, if the skip is right, an entry there with a comment saying why')
    if args.matrix:
        matrix(rows)
    total = sum(int(r[3]) for r in rows if r[3].isdigit())
    print(f'{args.title}: {len(passed)} passed, {len(failed) + len(odd)} failed, '
          f'{len(skipped)} skipped'
          + (f' ({len(unlisted)} not allowed)' if unlisted else '')
          + f', {len(notrun)} not run here ({total} s in the rows)')
    if not rows:
        print(f'{args.title}: no results in {args.results}', file=sys.stderr)
        return 1
    return 1 if failed or odd or unlisted else 0


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
    """Scenario x lane: each cell the row's result (the last, if twice);
    '-' where it did not run, by design or for want of a row."""
    lanes, names, cell = [], [], {}
    for r in rows:
        if r[1] not in lanes:
            lanes.append(r[1])
        if r[0] not in names:
            names.append(r[0])
        cell[(r[0], r[1])] = '-' if r[2] == 'not run' else r[2]
    w = max([len('scenario')] + [len(n) for n in names])
    cw = [max(len(ln), 4) for ln in lanes]
    print('=== matrix: scenario x kernel')
    print('  '.join(['scenario'.ljust(w)] + [ln.ljust(c) for ln, c in zip(lanes, cw)]).rstrip())
    for n in names:
        print('  '.join([n.ljust(w)] + [cell.get((n, ln), '-').ljust(c)
                                        for ln, c in zip(lanes, cw)]).rstrip())


if __name__ == '__main__':
    sys.exit(main())
