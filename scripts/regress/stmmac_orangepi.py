#!/usr/bin/env python3
"""The patched stmmac against the unpatched one on the emulated Orange Pi PC.

Seed 001's series took TCP RX from 2.18 to 3.06 Gbit/s (x1.40) on one
Cortex-A65 core.  Here both drivers run in one boot of qemu -M orangepi-pc,
alternating transfer by transfer (tests/drivers/orangepi.py with two module
sets): ours (build/drivers/arm) and the kernel's stmmac with only our bug
fixes (build/drivers/arm/fixes-only: unpatched, Debian's driver hangs in
get_stats64 on this guest).  The ratio is the median of the per-round
ratios; under TCG it is not a throughput claim.

With --line 5.10|6.12 the guest boots that line's armmp kernel and the sets
are that line's builds (build/drivers/arm-LINE and its fixes-only/: on 5.10
the unpatched driver is 5.10's own stmmac, which copies every frame).

  stmmac_orangepi.py [--rounds N] [--mib M] [--line LINE]
      -> build/regress/stmmac-orangepi[-LINE].json
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), '..', '..'))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--rounds', type=int, default=7)
    ap.add_argument('--mib', type=int, default=32)
    ap.add_argument('--line', default='6.1', help='kernel line (5.10, 6.1, 6.12)')
    a = ap.parse_args()
    out = os.path.join(ROOT, 'build/regress')
    os.makedirs(out, exist_ok=True)
    name = 'stmmac-orangepi' + ('' if a.line == '6.1' else '-' + a.line)
    drv = os.path.join(ROOT, 'build/drivers/arm' + ('' if a.line == '6.1' else '-' + a.line))
    for d in (drv, os.path.join(drv, 'fixes-only')):
        if not os.path.exists(os.path.join(d, 'stmmac.ko')):
            sys.exit(f'{name}: no {d}/stmmac.ko: run scripts/drivers/build.sh [--fixes-only] arm '
                     f'stmmac with DRV_LINE={a.line}')
    raw = os.path.join(out, name + '.raw.json')
    r = subprocess.run([sys.executable, os.path.join(ROOT, 'tests/drivers/orangepi.py'),
                        '--set', 'patched=' + drv,
                        '--set', 'unpatched=' + os.path.join(drv, 'fixes-only'),
                        '--rounds', str(a.rounds), '--mib', str(a.mib), '--json', raw,
                        # a round of both sets, both ways, took up to 300 s
                        # for 32 MiB on a busy 2-core host (TCG)
                        '--timeout', str(300 + a.rounds * 10 * max(a.mib, 8)),
                        '--allow-short',
                        '--log', os.path.join(out, name + '.log')],
                       env=dict(os.environ, DRV_LINE=a.line))
    if r.returncode != 0:
        return r.returncode
    res = json.load(open(raw))
    rows = []
    for v in ('patched', 'unpatched'):
        for d in ('rx', 'tx'):
            s = res['sets'][v][d + '_mbit']
            rows.append({'variant': v, 'metric': d + '_mbit', 'median': res['sets'][v][d + '_median'],
                         'runs': len(s), 'samples': s})
    doc = {'name': name, 'line': a.line, 'rows': rows, 'ratios': {},
           'paired_rounds': res.get('paired_rounds'), 'short_transfers': res.get('short_transfers', [])}
    # summary.py reads a ratio's samples from the rows of variant a and b:
    # keep one metric per variant name there, the RX one the seed measured.
    doc['rows'] = [row for row in rows if row['metric'] == 'rx_mbit'] + \
                  [dict(row, variant=row['variant'] + '-tx') for row in rows
                   if row['metric'] == 'tx_mbit']
    doc['ratios']['guest RX (TCP) patched/unpatched'] = {
        'a': 'patched', 'b': 'unpatched', 'ratio': res['rx_ratio_patched_over_unpatched'],
        'seed': 3.06 / 2.18, 'seed_source': 'seed 001: 2.18 -> 3.06 Gbit/s TCP RX, Cortex-A65'}
    doc['ratios']['guest TX (TCP) patched/unpatched'] = {
        'a': 'patched-tx', 'b': 'unpatched-tx', 'ratio': res['tx_ratio_patched_over_unpatched'],
        'seed': None, 'seed_source': 'control: the series does not touch TX'}
    with open(os.path.join(out, name + '.json'), 'w') as f:
        json.dump(doc, f, indent=1)
    print(f"{name}: RX patched/unpatched {res['rx_ratio_patched_over_unpatched']}, "
          f"TX {res['tx_ratio_patched_over_unpatched']} (median of "
          f"{len(res['paired_rounds'])} paired rounds of {a.rounds}; short transfers left out: "
          f"{res.get('short_transfers', [])})")
    return 0


if __name__ == '__main__':
    sys.exit(main())
