#!/usr/bin/env python3
"""The harness's own judging, on made-up logs and results (host only, a few
seconds; a step of make check and make test):

  tests/tier/tap.py       --ktap: a run without a plan, a plan that does not
                          match the cases (one lost, one out of order), no
                          case at all are failures; a skip is reported with
                          its reason and fails without --allow-skip; plain
                          "SKIP:" lines are skips, each once
  tests/tier/summary.py   a SKIP row fails against the allowlist unless an
                          entry names it; "not run" rows are listed apart,
                          never counted as passes or skips; an allowlist
                          entry without its comment is an error; the
                          shipped tests/tier/skip-allowlist parses
  tests/tier/step.sh      a step that exits 0 and prints "SKIP: ..." gets a
                          SKIP row; exit 77 or 4 is a SKIP with the reason,
                          without one a FAIL
  tests/lab/checks.sh     finish: the plan, exit 0, 1 or 4 (kselftest's)
  tests/lab/checks.py     the same lines and exit codes as checks.sh
  tests/lab/ktap-load.sh  kmsg_since: the lines after the marker; a
                          marker the ring buffer lost is a failure
  tests/tier/results.sh   results_row: a row of six columns, a tab or
                          newline in the note folded, an unknown result
                          refused

    tests/tier/tap-selftest.py [-v]

Prints "ok N - WHAT" / "not ok N - WHAT" (with the output that was wrong),
the plan, and exits 1 if a check failed.
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TAP = os.path.join(ROOT, 'tests/tier/tap.py')
SUMMARY = os.path.join(ROOT, 'tests/tier/summary.py')
STEP = os.path.join(ROOT, 'tests/tier/step.sh')
CHECKS = os.path.join(ROOT, 'tests/lab/checks.sh')
RESULTS_SH = os.path.join(ROOT, 'tests/tier/results.sh')
KTAP_LOAD = os.path.join(ROOT, 'tests/lab/ktap-load.sh')
sys.path.insert(0, os.path.join(ROOT, 'tests/lab'))
import checks as checks_py  # noqa: E402
ALLOW = os.path.join(ROOT, 'tests/tier/skip-allowlist')
VERBOSE = '-v' in sys.argv[1:]
n = failed = 0


def check(what, cond, out=''):
    global n, failed
    n += 1
    if cond:
        print(f'ok {n} - {what}')
    else:
        failed += 1
        print(f'not ok {n} - {what}')
    if out and (not cond or VERBOSE):
        for ln in out.rstrip('\n').split('\n'):
            print(f'#   {ln}')


def run(cmd, stdin='', env=None):
    r = subprocess.run(cmd, input=stdin, capture_output=True, text=True, cwd=ROOT,
                       env=dict(os.environ, **(env or {})))
    return r.returncode, r.stdout + r.stderr


def tap(log, *args):
    return run([sys.executable, TAP, *args], stdin=log)


GOOD = '''[    5.100000] KTAP version 1
[    5.100001] 1..3
[    5.100002] ok 1 alloc_basic
[    5.100003]     # a diagnostic line of a case
[    5.100004] ok 2 recycle_direct
[    5.100005] ok 3 numa_remote
[    5.100006] # pp_selftest: 3 cases, 0 failed
'''


def tap_checks():
    rc, out = tap(GOOD, '--ktap')
    check('tap.py --ktap: a run whose plan matches its cases passes', rc == 0, out)
    rc, out = tap(GOOD.replace('[    5.100001] 1..3\n', ''), '--ktap')
    check('tap.py --ktap: no plan is a FAIL', rc == 1 and 'no plan' in out, out)
    rc, out = tap(GOOD.replace('1..3', '1..4'), '--ktap')
    check('tap.py --ktap: a plan of 4 with 3 cases is a FAIL',
          rc == 1 and 'plan says 4 cases, saw 3' in out, out)
    rc, out = tap(GOOD.replace('[    5.100004] ok 2 recycle_direct\n', '').replace('1..3', '1..2'),
                  '--ktap')
    check('tap.py --ktap: a case lost from the middle (1, 3 of "1..2") is a FAIL',
          rc == 1 and 'numbered 3 where 2 was expected' in out, out)
    rc, out = tap('KTAP version 1\n1..0\n# pp: 0 cases\n', '--ktap')
    check('tap.py --ktap: zero cases (plan 1..0) is a FAIL', rc == 1 and 'no results' in out, out)
    rc, out = tap('some console\nok 1 - a shell check\n', '--ktap')
    check('tap.py --ktap: a log without a KTAP run is a FAIL', rc == 1 and 'no KTAP run' in out, out)
    rc, out = tap('', '--ktap')
    check('tap.py --ktap: an empty log is a FAIL', rc == 1, out)
    rc, out = tap(GOOD.replace('ok 2 recycle_direct', 'not ok 2 recycle_direct'), '--ktap')
    check('tap.py --ktap: a failed case is a FAIL', rc == 1 and 'failed: recycle_direct' in out, out)
    two = GOOD + GOOD.replace('pp_selftest', 'pp_race')
    rc, out = tap(two, '--ktap')
    check('tap.py --ktap: two runs, each with its plan, pass', rc == 0, out)
    rc, out = tap(GOOD + GOOD.replace('[    5.100001] 1..3\n', ''), '--ktap')
    check('tap.py --ktap: the second of two runs without a plan is a FAIL',
          rc == 1 and 'KTAP run 2: no plan' in out, out)
    rc, out = tap(GOOD, '--ktap', '--min-pass', '4')
    check('tap.py --min-pass (old callers) still counts passes', rc == 1, out)

    skipped = GOOD.replace('ok 3 numa_remote', 'ok 3 numa_remote # SKIP needs 2 NUMA nodes')
    rc, out = tap(skipped, '--ktap')
    check('tap.py --ktap: a skipped case is reported with its reason, and fails without --allow-skip',
          rc == 1 and 'tap: SKIP: numa_remote: needs 2 NUMA nodes' in out
          and '1 passed' not in out and '2 passed, 0 failed, 1 skipped' in out, out)
    rc, out = tap(skipped, '--ktap', '--allow-skip')
    check('tap.py --ktap --allow-skip: the skip is still reported, not as a pass',
          rc == 0 and 'tap: SKIP: numa_remote: needs 2 NUMA nodes' in out
          and '2 passed, 0 failed, 1 skipped' in out, out)
    rc, out = tap(skipped, '--skips')
    check('tap.py --skips: WHAT<TAB>REASON', rc == 0 and out == 'numa_remote\tneeds 2 NUMA nodes\n', out)
    rc, out = tap('ok 1 - a\nok 2 - b # SKIP\n', '--skips')
    check('tap.py --skips: a skip without a reason says so', out == 'b\tno reason given\n', out)
    unit = ('SKIP: host netdev list: no netdev family\n'
            'All tests passed\n'
            'ok 1 - host netdev list # SKIP no netdev family\n'
            'SKIP: XDP phases: no ndo_bpf in stmmac_main.c\n'
            'SKIP: promtool is missing\n')
    rc, out = tap(unit, '--skips')
    check('tap.py --skips: plain "SKIP:" lines are skips, the one printed both ways once',
          out == ('host netdev list\tno netdev family\n'
                  'XDP phases\tno ndo_bpf in stmmac_main.c\n'
                  'skipped\tpromtool is missing\n'), out)
    rc, out = tap('ok 1 - a\nok 2 - b\n1..3\n')
    check('tap.py (shell checks): a plan at the end that does not match is a FAIL', rc == 1, out)
    rc, out = tap('ok 1 - a\nok 2 - b\n1..2\n')
    check('tap.py (shell checks): a plan at the end that matches passes', rc == 0, out)


def summary(rows, *args, allow=None):
    with tempfile.TemporaryDirectory() as d:
        res = os.path.join(d, 'results.tsv')
        with open(res, 'w') as f:
            f.write(''.join('\t'.join(r) + '\n' for r in rows))
        extra = []
        if allow is not None:
            extra = ['--allowlist', os.path.join(d, 'allow')]
            with open(extra[1], 'w') as f:
                f.write(allow)
        return run([sys.executable, SUMMARY, res, '--title', 't', *args, *extra])


def summary_checks():
    base = [['unit', 'host', 'pass', '3', '600', ''],
            ['ppctl-e2e', 'debian 6.12', 'not run', '-', '300', 'make test runs it on 6.1'],
            ['dkms', 'debian 6.1', 'not run', '-', '900', 'make test-matrix runs it']]
    rc, out = summary(base, allow='')
    check('summary.py: "not run" rows in their own section, counted apart, not failing',
          rc == 0 and 'not run here, by design' in out
          and 'not run: dkms (debian 6.1): make test-matrix runs it' in out
          and 't: 1 passed, 0 failed, 0 skipped, 2 not run here' in out, out)
    table = out.split('not run here, by design')[0]
    check('summary.py: a "not run" row is not in the table of what ran', 'dkms' not in table, out)
    skip = base + [['prometheus', 'debian 6.1', 'SKIP', '3', '600', 'no prometheus: run scripts/deps.sh']]
    rc, out = summary(skip)
    check('summary.py without --allowlist (make check): a SKIP is listed, does not fail',
          rc == 0 and 'skipped: prometheus' in out and '1 skipped' in out, out)
    rc, out = summary(skip, allow='# the debug kernel\ndebug subset | debug 6.1 | no debug kernel*\n')
    check('summary.py --allowlist: a SKIP the allowlist does not name fails the run',
          rc == 1 and 'NOT on the allowlist' in out and '(1 not allowed)' in out, out)
    dbg = base + [['debug subset', 'debug 6.1', 'SKIP', '-', '-', 'no debug kernel cached (...)']]
    rc, out = summary(dbg, allow='# the debug kernel: a fresh machine has none\n'
                                 'debug subset | debug 6.1 | no debug kernel*\n')
    check('summary.py --allowlist: a SKIP the allowlist names passes, with the entry\'s why',
          rc == 0 and 'allowed: the debug kernel: a fresh machine has none' in out, out)
    dbg2 = base + [['debug subset', 'debug 6.1', 'SKIP', '-', '-', 'DEBUG_LANE=no']]
    rc, out = summary(dbg2, allow='# the debug kernel\ndebug subset | debug 6.1 | no debug kernel*\n')
    check('summary.py --allowlist: the entry\'s reason must match too', rc == 1, out)
    rc, out = summary(dbg, allow='debug subset | debug 6.1 | no debug kernel*\n')
    check('summary.py --allowlist: an entry without a comment is an error',
          rc == 1 and 'without a comment' in out, out)
    rc, out = run([sys.executable, SUMMARY, '/dev/null', '--allowlist', ALLOW])
    check('summary.py: the shipped tests/tier/skip-allowlist parses', 'without a comment' not in out
          and 'allowlist' not in out.split('no results')[0], out)
    rc, out = summary(base + [['x', 'host', 'FAIL', '1', '9', 'exit 1']], allow='')
    check('summary.py: a FAIL row fails', rc == 1 and '1 failed' in out, out)
    rc, out = summary([['x', 'host', 'maybe', '1', '9', '']])
    check('summary.py: an unknown result fails', rc == 1, out)
    rc, out = summary([['ppctl-e2e', 'debian 6.1', 'pass', '3', '300', ''],
                       ['ppctl-e2e', 'debian 6.12', 'not run', '-', '300', 'on 6.1']], '--matrix')
    check('summary.py --matrix: a "not run" cell is "-"',
          rc == 0 and any(ln.split() == ['ppctl-e2e', 'pass', '-'] for ln in out.split('\n')), out)


def step(script, name='s'):
    with tempfile.TemporaryDirectory() as d:
        res = os.path.join(d, 'results.tsv')
        open(res, 'w').close()
        rc, out = run([STEP, name, 'host', '30', 'bash', '-c', script], env={'PPKIT_RESULTS': res})
        with open(res) as f:
            rows = [ln.rstrip('\n').split('\t') for ln in f]
    return rc, out, rows


def step_checks():
    rc, out, rows = step('echo building; echo "SKIP: XDP phases: no ndo_bpf"; exit 0')
    check('step.sh: exit 0 with a plain "SKIP:" line: a pass row and a SKIP row with the reason',
          rc == 0 and [r[:3] for r in rows] == [['s', 'host', 'pass'], ['s: XDP phases', 'host', 'SKIP']]
          and rows[1][5] == 'no ndo_bpf', out + repr(rows))
    rc, out, rows = step('echo "SKIP: promtool is missing: run scripts/deps.sh"; exit 77')
    check('step.sh: exit 77: one SKIP row, the reason the "SKIP:" line\'s',
          rc == 0 and len(rows) == 1 and rows[0][2] == 'SKIP'
          and rows[0][5] == 'promtool is missing: run scripts/deps.sh', out + repr(rows))
    rc, out, rows = step('echo "ok 1 - a # SKIP no clang"; exit 4')
    check('step.sh: exit 4 (KSFT_SKIP): a SKIP row with the skipped case\'s reason',
          rc == 0 and len(rows) == 1 and rows[0][2] == 'SKIP' and rows[0][5] == 'no clang',
          out + repr(rows))
    rc, out, rows = step('echo nothing to say; exit 77')
    check('step.sh: a skip without a reason is a FAIL',
          rc == 77 and len(rows) == 1 and rows[0][2] == 'FAIL' and 'without a reason' in rows[0][5],
          out + repr(rows))
    rc, out, rows = step('echo "ok 1 - a"; echo "ok 2 - b # SKIP why"; exit 0')
    check('step.sh: a skipped case of a step that passes is a SKIP row',
          [r[2] for r in rows] == ['pass', 'SKIP'] and rows[1][0] == 's: b', out + repr(rows))


def checks_checks():
    for body, want, what in (('ok a; ok b', 0, 'all passed: exit 0'),
                             ('ok a; bad b; skip c why', 1, 'a failure: exit 1'),
                             ('skip a "no prometheus"', 4, 'only skips: exit 4 (KSFT_SKIP)'),
                             (':', 1, 'no check at all: exit 1, never a pass'),
                             ('ok a; skip b why', 0, 'passes and a skip: exit 0')):
        rc, out = run(['bash', '-c', f'. {CHECKS}; {body}; finish t'])
        trc, tout = tap(out, '--allow-skip')
        plan_ok = want == 1 and body == ':' or trc == (1 if want == 1 else 0)
        check(f'checks.sh finish: {what}, and its plan agrees with tap.py',
              rc == want and '\n1..' in '\n' + out and plan_ok, out + tout)
    rc, out = run(['bash', '-c', f'. {CHECKS}; t=$EPOCHREALTIME; wait_for 0.5 false; echo $? $t $EPOCHREALTIME'])
    try:
        r, t0, t1 = out.split()
        took = float(t1.replace(',', '.')) - float(t0.replace(',', '.'))
    except ValueError:
        r, took = '?', -1
    check(f'checks.sh wait_for 0.5: gives up after half a second ({took:.2f} s), not 0 or 1',
          r == '1' and 0.45 <= took < 0.95, out)
    # checks.py: the same bodies give the same lines and exit codes
    for body, what in (('ok a; ok b', 'all passed'), ('ok a; bad b; skip c why', 'a failure'),
                       ('skip a "no prometheus"', 'only skips'), (':', 'no check at all'),
                       ('ok a; skip b why', 'passes and a skip')):
        rc, out = run(['bash', '-c', f'. {CHECKS}; {body}; finish t'])
        lines = []
        c = checks_py.Checks('t', say=lines.append)
        for cmd in body.split(';'):
            words = cmd.split(None, 1)
            if words[0] == 'ok':
                c.ok(words[1])
            elif words[0] == 'bad':
                c.bad(words[1])
            elif words[0] == 'skip':
                w, why = words[1].split(None, 1)
                c.skip(w, why.strip('"'))
        prc = c.finish()
        pout = '\n'.join(lines) + '\n'
        check(f'checks.py finish: {what}: the lines and exit code of checks.sh ({prc})',
              prc == rc and pout == out, f'sh (exit {rc}):\n{out}py (exit {prc}):\n{pout}')


def kmsg_checks():
    # dmesg reads the file KMSG names, as the kernel log would
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, 'kmsg')
        body = (f'. {KTAP_LOAD}; dmesg() {{ cat "$KMSG"; }}; export KMSG={log}; '
                'echo "[ 1.0] old line" > $KMSG; kmsg_mark round 1; echo "[ 2.0] new line" >> $KMSG; ')
        rc, out = run(['bash', '-c', body + 'kmsg_since'])
        check('ktap-load.sh kmsg_since: the lines after the marker, without timestamps',
              rc == 0 and out == 'new line\n', out)
        rc, out = run(['bash', '-c', body + 'sed -i "/ppkit-lab: mark/d" $KMSG; kmsg_since'])
        check('ktap-load.sh kmsg_since: a marker the ring buffer dropped is a failure, said',
              rc == 1 and 'no longer in the kernel log' in out and 'new line' not in out, out)


def results_checks():
    with tempfile.TemporaryDirectory() as d:
        res = os.path.join(d, 'r.tsv')
        rc, out = run(['bash', '-c', f'. {RESULTS_SH}; results_row {res} "a" host pass 3 60 '
                       f'"one\ttwo\nthree"; results_row {res} b host "not run" - - elsewhere; '
                       f'results_row "" c host pass 1 1; results_row {res} d host PASS 1 1'])
        with open(res) as f:
            rows = [ln.rstrip('\n').split('\t') for ln in f]
    check('results.sh results_row: six columns, the note\'s tab and newline folded, '
          'no file no row, an unknown result refused (exit 2)',
          rc == 2 and rows == [['a', 'host', 'pass', '3', '60', 'one two three'],
                               ['b', 'host', 'not run', '-', '-', 'elsewhere']]
          and "'PASS' is not a result" in out, out + repr(rows))


tap_checks()
summary_checks()
step_checks()
checks_checks()
kmsg_checks()
results_checks()
print(f'1..{n}')
print(f'tap-selftest: {n - failed} passed, {failed} failed')
sys.exit(1 if failed else 0)
