#!/usr/bin/python3
"""Check Documentation/netlink/specs/ppkit.yaml against the uapi header.

Every attribute, operation, multicast group and enum of the spec must have
the same name (ynl's lower-case-dashed form) and value as in
kmod/include/uapi/linux/ppkit.h, and the other way round.
Prints 'N passed, N failed' and exits 1 on any mismatch.
"""
import re
import sys

import yaml

ROOT = sys.argv[1] if len(sys.argv) > 1 else '.'
HDR = open(f'{ROOT}/kmod/include/uapi/linux/ppkit.h').read()
SPEC = yaml.safe_load(open(f'{ROOT}/Documentation/netlink/specs/ppkit.yaml'))


def header_enum(first):
    """Names and values of the C enum that starts with @first."""
    block = HDR[HDR.index(first):]
    block = block[:block.index('};')]
    out, v = {}, 0
    for name, val in re.findall(r'^\s*(\w+)(?:\s*=\s*(\w+))?,', block, re.M):
        if val:
            v = int(val, 0)
        if not name.startswith('__'):
            out[name] = v
        v += 1
    return out


def spec_values(items, first=1):
    out, v = {}, first
    for it in items:
        v = it.get('value', v)
        out[it['name']] = v
        v += 1
    return out


def c_name(prefix, name):
    return prefix + name.upper().replace('-', '_')


checks, failed = 0, []


def compare(what, hdr, spec, prefix, skip=()):
    global checks
    want = {c_name(prefix, k): v for k, v in spec.items()}
    have = {k: v for k, v in hdr.items() if k not in skip}
    for k in sorted(set(want) | set(have)):
        checks += 1
        if want.get(k) != have.get(k):
            failed.append(f'{what}: {k}: spec {want.get(k)}, header {have.get(k)}')


sets = {s['name']: s for s in SPEC['attribute-sets']}
compare('pool attributes', header_enum('PPKIT_A_POOL_UNSPEC'),
        spec_values(sets['pool']['attributes']), 'PPKIT_A_POOL_',
        skip=('PPKIT_A_POOL_UNSPEC', 'PPKIT_A_POOL_MAX'))
compare('stats attributes', header_enum('PPKIT_A_STATS_UNSPEC'),
        spec_values(sets['stats']['attributes']), 'PPKIT_A_STATS_',
        skip=('PPKIT_A_STATS_UNSPEC', 'PPKIT_A_STATS_MAX'))
compare('operations', header_enum('PPKIT_CMD_UNSPEC'),
        spec_values(SPEC['operations']['list']), 'PPKIT_CMD_',
        skip=('PPKIT_CMD_UNSPEC', 'PPKIT_CMD_MAX'))
dma = next(d for d in SPEC['definitions'] if d['name'] == 'dma-dir')
compare('dma-dir', header_enum('PPKIT_DMA_NONE'),
        {e: i for i, e in enumerate(dma['entries'])}, 'PPKIT_DMA_')
checks += 1
grp = SPEC['mcast-groups']['list'][0]['name']
if f'#define PPKIT_MCGRP_MGMT\t"{grp}"' not in HDR:
    failed.append(f'multicast group {grp} not PPKIT_MCGRP_MGMT')
checks += 1
if f'#define PPKIT_FAMILY_NAME\t"{SPEC["name"]}"' not in HDR:
    failed.append('family name differs')

for f in failed:
    print('check-spec: FAIL:', f)
print(f'check-spec: {checks - len(failed)} passed, {len(failed)} failed')
sys.exit(1 if failed else 0)
