#!/usr/bin/env python3
"""Print a tier's critical path from its timeline (tests/tier/step.sh).

    tests/tier/critical.py TIMELINE.tsv [--total SECONDS]

TIMELINE.tsv: one line per step, NAME SLOT START END [CPU] (seconds since
the tier began; CPU: the step's user and system time, in seconds).  The steps of a slot run one after another; the slots run side
by side.  The critical path is the chain that ends last: from the step that
ended last, back through the step of the same slot (or, where the slot
waited for another, of any slot) that ended latest before it began.  Each
step is printed with its start offset and length, and a wait between two
steps of the chain (a dependency, or the slot idle) with its length, so the
time the tier spends waiting shows.
"""
import argparse
import sys


def read(path):
    steps = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            cols = line.rstrip('\n').split('\t')
            if len(cols) < 4:
                continue
            try:
                steps.append((cols[0], cols[1], int(cols[2]), int(cols[3]),
                              int(cols[4]) if len(cols) > 4 else 0))
            except ValueError:
                continue
    return steps


def chain(steps):
    """The critical path, first step first."""
    if not steps:
        return []
    cur = max(steps, key=lambda s: (s[3], s[3] - s[2]))
    path = [cur]
    while True:
        before = [s for s in steps if s[3] <= cur[2] and s is not cur]
        if not before:
            break
        same = [s for s in before if s[1] == cur[1]]
        # the slot's own previous step, unless another slot's ended later
        # (the slot waited for it)
        prev = max(before, key=lambda s: (s[3], s[1] == cur[1]))
        if same and max(same, key=lambda s: s[3])[3] >= prev[3]:
            prev = max(same, key=lambda s: s[3])
        path.append(prev)
        cur = prev
    return path[::-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('timeline')
    ap.add_argument('--total', type=int)
    args = ap.parse_args()
    try:
        steps = read(args.timeline)
    except OSError as e:
        print(f'critical path: no timeline ({e})')
        return 0
    path = chain(steps)
    if not path:
        print('critical path: no timed steps')
        return 0
    print('=== critical path (start offset, seconds; a gap is a wait)')
    t = 0
    waited = 0
    for name, slot, start, end, _cpu in path:
        if start > t:
            print(f'  {t:>5}  {start - t:>5}  (waiting)')
            waited += start - t
        print(f'  {start:>5}  {end - start:>5}  {name} [{slot}]')
        t = end
    total = args.total if args.total is not None else t
    print(f'critical path: {t} s of {total} s, {waited} s of it waiting; '
          f'slots: ' + ', '.join(f'{sl} {max(s[3] for s in steps if s[1] == sl)} s'
                                 for sl in sorted({s[1] for s in steps})))
    cpu = sum(s[4] for s in steps)
    if cpu:
        # the machine's cores bound the tier from below: CPU / cores
        print(f'cpu: {cpu} s in the steps; the most: ' +
              ', '.join(f'{s[0]} {s[4]} s' for s in sorted(steps, key=lambda s: -s[4])[:8]))
    return 0


if __name__ == '__main__':
    sys.exit(main())
