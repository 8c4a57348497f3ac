#!/usr/bin/env python3
"""The README's board flow, verbatim, on an emulated Debian arm64 board.

  flow.py [--keep]

Runs the commands of the README's "Boards" block as a board owner types
them, from the repository's root, against the board of tests/boards/board.py
(Debian 12 arm64 from debootstrap, booted on qemu-system-aarch64 -M virt,
reached as `board` through ssh): `make dist-board ARCH=arm64` (the README's
KDIR= is left out: without it the tarball is built for Debian's arm64 kernel,
the one the board runs), `scp` of the tarball, `ssh board` to unpack,
install, modprobe and read the stats, ppctld enabled as a systemd service,
and the uninstall.  Between them it checks what each should have done:
the pools ppctl lists, ppctld started by systemd and sampling (its history
and its /metrics, read on the board), and nothing left behind by the
uninstall (files, unit, daemon).  Fails on a failed command or check, or a
splat in the board's kernel log.  The transcript (each command, its exit
status, time and output) goes to stdout and build/boards/flow.log.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'scripts', 'lab'))
import board as boardlib  # noqa: E402
import forbidden  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, 'tests', 'lab'))
from checks import Checks, wait_for  # noqa: E402

LOG = os.path.join(ROOT, 'build', 'boards', 'flow.log')


def readme_commands():
    """The commands of README.md's first sh block under '## Boards'."""
    with open(os.path.join(ROOT, 'README.md')) as f:
        text = f.read()
    sec = text.split('\n## Boards', 1)
    if len(sec) < 2:
        raise SystemExit('flow: README.md has no "## Boards" section')
    m = re.search(r'```sh\n(.*?)```', sec[1], re.S)
    if not m:
        raise SystemExit('flow: README.md\'s Boards section has no sh block')
    cmds = []
    for line in m.group(1).splitlines():
        line = re.sub(r'\s+#.*$', '', line).strip()
        if line:
            cmds.append(line)
    return cmds


class Transcript:
    def __init__(self):
        self.lines = []
        self.checks = Checks('flow', say=self.say)

    def say(self, s):
        print(s, flush=True)
        self.lines.append(s)

    def run(self, cmd, env=None, timeout=1800, show=20):
        t0 = time.monotonic()
        r = subprocess.run(['bash', '-c', cmd], cwd=ROOT, env=env, capture_output=True,
                           text=True, timeout=timeout, errors='replace')
        dt = time.monotonic() - t0
        self.say(f'$ {cmd}')
        out = (r.stdout + r.stderr).rstrip('\n').splitlines()
        for ln in out[-show:] if len(out) > show else out:
            self.say(f'  {ln}')
        if len(out) > show:
            self.say(f'  ({len(out) - show} earlier lines left out)')
        self.say(f'  -> exit {r.returncode}, {dt:.1f} s')
        return r

    def check(self, ok, what):
        return self.checks.check(ok, what)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split('\n\n')[1].strip())
    ap.add_argument('--keep', action='store_true', help='keep the work directory')
    args = ap.parse_args()
    cmds = readme_commands()
    tr = Transcript()
    t_start = time.monotonic()
    os.makedirs(os.path.dirname(LOG), exist_ok=True)
    # under the repository: the peer, a lab guest, sees it (not the host's /tmp)
    work = tempfile.mkdtemp(prefix='flow-', dir=os.path.dirname(LOG))
    tr.say(f'flow: the README\'s board flow ({len(cmds)} commands), work directory {work}')
    try:
        with boardlib.Board(work) as b:
            tr.say(f'flow: board up, ssh after {b.boot_s:.0f} s (kernel {b.krel})')
            env = b.env()
            for cmd in cmds:
                argv = shlex.split(cmd)
                if argv[:2] == ['make', 'dist-board']:
                    # Debian's kernel is the board's: the README's KDIR= is for others.
                    cmd = ' '.join(a for a in argv if not a.startswith('KDIR='))
                r = tr.run(cmd, env=env)
                tr.check(r.returncode == 0, f'README: {cmd}')
                if r.returncode:
                    break
                if 'ppctl stats' in cmd:
                    tr.check(re.search(r'\bsim0\b', r.stdout) is not None,
                             'ppctl stats on the board lists sim0\'s pool')
                if 'ppctld' in cmd and 'enable' in cmd:
                    board_daemon_checks(tr, b)
                if '--uninstall' in cmd:
                    board_uninstall_checks(tr, b)
            log = b.kernel_log()
    except (RuntimeError, subprocess.SubprocessError, OSError) as e:
        tr.check(False, f'the board: {e}')
        log = ''
    bad = [ln for ln in log.splitlines() if forbidden.regex().search(ln)]
    tr.check(bool(log) and not bad, 'the board\'s kernel log has no splat' +
             (':\n  ' + '\n  '.join(bad[:5]) if bad else ''))
    total = time.monotonic() - t_start
    tr.say(f'flow: {total:.0f} s')
    rc = tr.checks.finish()
    os.makedirs(os.path.dirname(LOG), exist_ok=True)
    with open(LOG, 'w') as f:
        f.write('\n'.join(tr.lines) + '\n')
    if not args.keep:
        subprocess.run(['rm', '-rf', work])
    return rc


def board_daemon_checks(tr, b):
    """ppctld as systemd runs it: the unit's process, sampling, serving."""
    r = tr.run('ssh board systemctl show -p ActiveState -p MainPID -p FragmentPath ppctld', env=b.env())
    props = dict(ln.split('=', 1) for ln in r.stdout.splitlines() if '=' in ln)
    tr.check(props.get('ActiveState') == 'active' and props.get('MainPID', '0') != '0' and
             props.get('FragmentPath') == '/etc/systemd/system/ppctld.service',
             'systemd runs ppctld from the unit install.sh put in /etc/systemd/system')

    def history():
        r = b.ssh('ppctl --json list', check=False)
        try:
            pools = json.loads(r.stdout).get('pools', [])
        except ValueError:
            return None
        if not pools:
            return None
        r = b.ssh(f'ppctl --json history {pools[0]["id"]}', check=False)
        try:
            doc = json.loads(r.stdout)
        except ValueError:
            return None
        n = len(doc.get('points', []))
        return (pools[0]['id'], n) if n >= 2 else None
    h = wait_for(60, history, 2)
    tr.check(bool(h), 'ppctld samples the pool: ppctl history gives its points' +
             (f' (pool {h[0]}: {h[1]} points)' if h else ''))
    r = tr.run('ssh board python3 -c \'"import urllib.request as u; '
               'print(u.urlopen(\\"http://127.0.0.1:9105/metrics\\").read().decode())"\' '
               '| grep -c "^ppkit_"', env=b.env(), show=3)
    tr.check(r.returncode == 0 and int((r.stdout.strip() or '0').splitlines()[-1]) > 0,
             'ppctld serves /metrics on the board (127.0.0.1:9105, ppctld.conf\'s listen)')


def board_uninstall_checks(tr, b):
    r = tr.run('ssh board \'for f in /usr/local/sbin/ppctl /usr/local/sbin/ppctld '
               '/etc/systemd/system/ppctld.service /lib/modules/$(uname -r)/extra/ppkit '
               '/usr/local/share/ppkit; do [ ! -e $f ] || echo "left: $f"; done; '
               'echo "active: $(systemctl is-active ppctld)"; '
               'echo "enabled: $(systemctl is-enabled ppctld 2>&1)"\'', env=b.env())
    out = r.stdout
    tr.check('left:' not in out, 'after --uninstall no file of the install is left')
    tr.check('active: inactive' in out and 'enabled: enabled' not in out,
             'after --uninstall ppctld is stopped and no longer enabled')
    r = tr.run('ssh board \'rmmod ppsim pp_backport && ! test -d /sys/module/pp_backport\'',
               env=b.env())
    tr.check(r.returncode == 0, 'the modules unload after the uninstall')


if __name__ == '__main__':
    sys.exit(main())
