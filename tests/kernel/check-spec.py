#!/usr/bin/python3
"""Check Documentation/netlink/specs/ppkit.yaml against the uapi header and
against Documentation/netlink.rst.

Every attribute, operation, multicast group and enum of the spec must have
the same name (ynl's lower-case-dashed form) and value as in
kmod/include/uapi/linux/ppkit.h, and the other way round.

The counters' names in pp_backport (ppb_stat_names[], kmod/pool/stats.c)
and in libppkit (kNames, tools/lib/types.cpp) must be the spec's stats
attributes from alloc-fast on (but request flags), with underscores: the spec is the one list,
the uapi header numbers it, and everything else is keyed by the uapi or
checked here.

Documentation/netlink.rst must document the same family: its section
"Attribute set NAME" lists every attribute of that set, with the spec's
value and type, in a table whose rows start with ``name``; "Commands"
lists every operation with its value, the request attributes of its do and
dump ("do: ``id``; dump: ``ifindex``", or "nothing"), CAP_NET_ADMIN for
admin-perm operations and the multicast group of notifications; "Enum
NAME" lists every entry with its value; "Family" names the family and its
multicast groups.  Nothing may be documented that the spec does not have.

  tests/kernel/check-spec.py [REPO_ROOT]

Prints one line per failure and 'check-spec: N passed, N failed'; exits 1
on any mismatch.
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
compare('holders attributes', header_enum('PPKIT_A_HOLDERS_UNSPEC'),
        spec_values(sets['holders']['attributes']), 'PPKIT_A_HOLDERS_',
        skip=('PPKIT_A_HOLDERS_UNSPEC', 'PPKIT_A_HOLDERS_MAX'))
compare('holder attributes', header_enum('PPKIT_A_HOLDER_UNSPEC'),
        spec_values(sets['holder']['attributes']), 'PPKIT_A_HOLDER_',
        skip=('PPKIT_A_HOLDER_UNSPEC', 'PPKIT_A_HOLDER_MAX'))
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

# The counters' names, by the spec's stats attributes from alloc-fast on:
# pp_backport's ppb_stat_names[] (keyed by the uapi's attribute names) and
# libppkit's kNames (in attribute order, gauges and fragment counters too,
# request flags left out).
STATS_ATTRS = [a['name'] for a in sets['stats']['attributes']]
COUNTERS = STATS_ATTRS[STATS_ATTRS.index('alloc-fast'):STATS_ATTRS.index('inflight')]
STATS_C = open(f'{ROOT}/kmod/pool/stats.c').read()
KERN_NAMES = dict(re.findall(r'^\t\[PPB_STAT\((\w+)\)\]\s*= "(\w+)",$', STATS_C, re.M))
for k in sorted(set(KERN_NAMES) | {c_name('', a) for a in COUNTERS}):
    checks += 1
    want = k.lower() if k.lower().replace('_', '-') in COUNTERS else None
    if KERN_NAMES.get(k) != want:
        failed.append(f'ppb_stat_names[PPB_STAT({k})]: spec {want}, stats.c {KERN_NAMES.get(k)}')
TYPES_CPP = open(f'{ROOT}/tools/lib/types.cpp').read()
KNAMES = TYPES_CPP[TYPES_CPP.index('kNames = {'):]
KNAMES = re.findall(r'^\t"(\w+)",$', KNAMES[:KNAMES.index('};')], re.M)
checks += 1
VALUES = [a['name'] for a in sets['stats']['attributes'][STATS_ATTRS.index('alloc-fast'):]
          if a['type'] != 'flag']
if KNAMES != [a.replace('-', '_') for a in VALUES]:
    failed.append('tools/lib/types.cpp kNames: not the spec stats attributes from alloc-fast on '
                  '(request flags left out)')

# Documentation/netlink.rst against the spec.
DOC = open(f'{ROOT}/Documentation/netlink.rst').read().split('\n')
SEP = re.compile(r'^=+( +=+)+$')


def doc_sections():
    """Section title -> its lines, for titles underlined with = or -."""
    out, cur = {}, None
    for i, line in enumerate(DOC):
        nxt = DOC[i + 1] if i + 1 < len(DOC) else ''
        if (line.strip() and not re.fullmatch(r'[=-]+', line) and
                re.fullmatch(r'[=-]+', nxt) and len(nxt) >= len(line.strip())):
            cur = line.strip()
            out[cur] = []
        elif cur is not None:
            out[cur].append(line)
    return out


def table_rows(lines):
    """Rows of the simple tables in @lines whose first cell is ``name``:
    name -> the rest of the row, continuation lines joined."""
    rows, seps, last = {}, 0, None
    for line in lines:
        if SEP.match(line):
            seps = (seps + 1) % 3
            last = None
            continue
        if seps != 2:
            continue
        m = re.match(r'^``([a-z0-9-]+)``\s+(.*)$', line)
        if m:
            last = m.group(1)
            if last in rows:
                failed.append(f'netlink.rst: {last} documented twice in one section')
            rows[last] = m.group(2).strip()
        elif last and line.startswith(' ') and line.strip():
            rows[last] += ' ' + line.strip()
    return rows


def doc_compare(what, want, have):
    """@want (spec) and @have (doc): name -> value, both ways."""
    global checks
    for k in sorted(set(want) | set(have)):
        checks += 1
        if k not in have:
            failed.append(f'netlink.rst: {what}: {k} is not documented')
        elif k not in want:
            failed.append(f'netlink.rst: {what}: {k} is documented but not in the spec')
        elif want[k] != have[k]:
            failed.append(f'netlink.rst: {what}: {k}: spec {want[k]}, documented {have[k]}')


def names(text):
    return re.findall(r"``([a-z0-9-]+)``", text)


secs = doc_sections()
for st in SPEC['attribute-sets']:
    title = f'Attribute set {st["name"]}'
    checks += 1
    if title not in secs:
        failed.append(f'netlink.rst: no section "{title}"')
        continue
    v, want = 1, {}
    for a in st['attributes']:
        v = a.get('value', v)
        want[a['name']] = (v, a['type'])
        v += 1
    have = {}
    for k, rest in table_rows(secs[title]).items():
        cells = rest.split()
        have[k] = (int(cells[0]) if cells and cells[0].isdigit() else cells[:1],
                   cells[1] if len(cells) > 1 else None)
    doc_compare(f'attribute set {st["name"]} (value, type)', want, have)

checks += 1
if 'Commands' not in secs:
    failed.append('netlink.rst: no section "Commands"')
else:
    rows = table_rows(secs['Commands'])
    v, want = 1, {}
    for op in SPEC['operations']['list']:
        v = op.get('value', v)
        want[op['name']] = v
        v += 1
    have = {k: int(r.split()[0]) if r.split()[0].isdigit() else r.split()[0]
            for k, r in rows.items()}
    doc_compare('commands (value)', want, have)
    for op in SPEC['operations']['list']:
        row = rows.get(op['name'])
        if row is None:
            continue
        for kind in ('do', 'dump'):
            checks += 1
            spec_req = op.get(kind, {}).get('request', {}).get('attributes', [])
            m = re.search(rf'\b{kind}: ([^;]*)', row)
            if kind not in op:
                if m:
                    failed.append(f'netlink.rst: {op["name"]}: documents a {kind} the spec lacks')
                continue
            if not m:
                failed.append(f'netlink.rst: {op["name"]}: its {kind} request is not documented')
            elif names(m.group(1)) != spec_req and not (not spec_req and
                                                          m.group(1).startswith('nothing')):
                failed.append(f'netlink.rst: {op["name"]} {kind} request: spec {spec_req}, '
                              f'documented {names(m.group(1))}')
        checks += 1
        if 'admin-perm' in op.get('flags', []) and 'CAP_NET_ADMIN' not in row:
            failed.append(f'netlink.rst: {op["name"]}: admin-perm, but CAP_NET_ADMIN not said')
        if 'mcgrp' in op and f'``{op["mcgrp"]}``' not in row:
            failed.append(f'netlink.rst: {op["name"]}: multicast group {op["mcgrp"]} not said')

for d in SPEC['definitions']:
    if d['type'] != 'enum':
        continue
    title = f'Enum {d["name"]}'
    checks += 1
    if title not in secs:
        failed.append(f'netlink.rst: no section "{title}"')
        continue
    have = {k: int(r.split()[0]) if r.split()[0].isdigit() else r.split()[0]
            for k, r in table_rows(secs[title]).items()}
    doc_compare(f'enum {d["name"]} (value)', {e: i for i, e in enumerate(d['entries'])}, have)

checks += 1
fam = '\n'.join(secs.get('Family', []))
for want in [SPEC['name']] + [g['name'] for g in SPEC['mcast-groups']['list']]:
    if f'``{want}``' not in fam:
        failed.append(f'netlink.rst: section "Family" does not name ``{want}``')

for f in failed:
    print('check-spec: FAIL:', f)
print(f'check-spec: {checks - len(failed)} passed, {len(failed)} failed')
sys.exit(1 if failed else 0)
