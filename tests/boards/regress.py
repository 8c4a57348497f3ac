#!/usr/bin/env python3
"""The regression scripts in board mode, on the emulated board, against a peer.

  regress.py [--runs N] [--scenarios drop,tcp-rx-pool,tcp-rx-rx] [--keep]

The board of tests/boards/board.py (Debian 12 arm64) gets the board tarball
(`make dist-board ARCH=arm64`, installed with its install.sh) and a copy of
scripts/regress/, as Documentation/regress.rst tells a board owner; the peer
is a lab guest (Debian's x86_64 kernel, pktgen, iperf3, sshd) on the other
end of the board's eth1, reachable from the board by ssh with a key the
board made.  The port under test is a ppsim port on the board, wired to eth1
as a NIC is wired to its cable: tc redirects what eth1 receives out of the
pair's other port, whose frames land in the tested port's RX ring (its page
pool), and what the tested port sends back out of eth1.  So the peer's
pktgen frames and iperf3 streams arrive through the board's RX path, and
each variant is a command (`--variant NAME='ppctl sim set ...'`) as a
variant on real hardware reloads a driver.

Scenarios, each `scripts/regress/SCRIPT --dev PORT --peer root@PEER ...` run
on the board:
  drop          pktgen on the peer (--peer-dev), RX pps: none/native/ppkit
  tcp-rx-pool   iperf3 -c on the peer: the kernel's page_pool vs ppkit
  tcp-rx-rx     iperf3 -c on the peer: copy vs zero-copy RX
The JSON files come back to build/boards/regress/, and the PNG plots are
drawn there from them (the board has no gnuplot).  Fails when a
script fails, a JSON is missing, or the board's or peer's kernel log has a
splat.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'scripts', 'lab'))
sys.path.insert(0, os.path.join(ROOT, 'scripts', 'regress'))
import board as boardlib  # noqa: E402
import rlib  # noqa: E402
import forbidden  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, 'tests', 'lab'))
from checks import Checks  # noqa: E402

OUT = os.path.join(ROOT, 'build', 'boards', 'regress')
PEER = f'root@{boardlib.PEER_LINK}'


def scenarios(port, peer_dev, runs):
    sim = f'ppctl sim set {port}'
    common = f'--dev {port} --peer {PEER} --runs {runs} --out /root/regress-out'
    return {
        'drop': f'./drop {common} --peer-dev {peer_dev} '
                f"--variant none='{sim} --pool none' --variant native='{sim} --pool native' "
                f"--variant ppkit='{sim} --pool ppkit'",
        'tcp-rx-pool': f'./tcp-rx --experiment pool {common} '
                       f"--variant native='{sim} --pool native --rx zerocopy' "
                       f"--variant ppkit='{sim} --pool ppkit --rx zerocopy'",
        'tcp-rx-rx': f'./tcp-rx --experiment rx {common} '
                     f"--variant copy='{sim} --pool ppkit --rx copy' "
                     f"--variant zerocopy='{sim} --pool ppkit --rx zerocopy'",
    }


# The board's side of the cable: eth1 in promiscuous mode, redirected both
# ways to the outer port of a ppsim pair; the inner port is the one tested.
WIRE = r'''set -e
modprobe pp_backport; modprobe ppsim devs=0
ports=$(ppctl sim add --pair --ring-size 256)
outer=$(echo $ports | cut -d' ' -f1); inner=$(echo $ports | cut -d' ' -f2)
ip link set eth1 up promisc on; ip link set $outer up; ip link set $inner up
ip addr add {addr}/24 dev $inner
tc qdisc add dev eth1 clsact
tc filter add dev eth1 ingress matchall action mirred egress redirect dev $outer
tc qdisc add dev $outer clsact
tc filter add dev $outer ingress matchall action mirred egress redirect dev eth1
echo $inner
'''


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split('\n\n')[1].strip())
    ap.add_argument('--runs', type=int, default=6, help='runs a variant (6: the fewest with a 95%% interval)')
    ap.add_argument('--scenarios', default='drop,tcp-rx-pool,tcp-rx-rx')
    ap.add_argument('--keep', action='store_true')
    args = ap.parse_args()
    want = args.scenarios.split(',')
    tarballs = sorted((os.path.join(ROOT, 'build/dist', f) for f in os.listdir(os.path.join(ROOT, 'build/dist'))
                       if '-arm64-' in f and f.endswith('-arm64.tar.gz')), key=os.path.getmtime) \
        if os.path.isdir(os.path.join(ROOT, 'build/dist')) else []
    if not tarballs:
        sys.exit('regress: no build/dist/ppkit-*-arm64-*.tar.gz: run make dist-board ARCH=arm64')
    tarball = tarballs[-1]
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    # under the repository: the peer, a lab guest, sees it (not the host's /tmp)
    work = tempfile.mkdtemp(prefix='regress-', dir=os.path.dirname(OUT))
    os.makedirs(OUT, exist_ok=True)
    t0 = time.monotonic()
    checks = Checks('board regress')

    def step(what, ok):
        return checks.check(ok, what)

    try:
        with boardlib.Board(work) as b:
            print(f'regress: board up after {b.boot_s:.0f} s; {os.path.basename(tarball)}', flush=True)
            env = b.env()
            name = os.path.basename(tarball)[:-len('.tar.gz')]
            subprocess.run(['scp', '-q', tarball, 'board:'], env=env, check=True)
            subprocess.run(['scp', '-q', '-r', os.path.join(ROOT, 'scripts/regress'), 'board:'],
                           env=env, check=True)
            b.ssh(f'tar xzf {name}.tar.gz && cd {name} && ./install.sh >/dev/null && rm -rf ~/regress/__pycache__')
            pub = b.ssh('ssh-keygen -q -t ed25519 -N "" -f /root/.ssh/id_ed25519 && '
                        'cat /root/.ssh/id_ed25519.pub').stdout
            port = b.ssh(WIRE.format(addr=boardlib.BOARD_LINK)).stdout.split()[-1]
            with boardlib.Peer(b, pub) as peer:
                with open(os.path.join(peer.dir, 'dev')) as f:
                    peer_dev = f.read().strip()
                r = b.ssh(f'ping -c 3 -W 10 {boardlib.PEER_LINK} >/dev/null && '
                          f'ssh -o StrictHostKeyChecking=accept-new -o BatchMode=yes {PEER} '
                          'uname -r', check=False, timeout=180)
                step(f'the board reaches the peer through {port} and eth1, by ssh '
                     f'(peer kernel {r.stdout.strip()})', r.returncode == 0)
                if r.returncode == 0:
                    for sc, cmd in scenarios(port, peer_dev, args.runs).items():
                        if sc not in want:
                            continue
                        ts = time.monotonic()
                        print(f'board$ cd regress && {cmd}', flush=True)
                        r = b.ssh(f'cd regress && {cmd}', check=False, timeout=1800)
                        with open(os.path.join(OUT, f'{sc}.log'), 'w') as f:
                            f.write(r.stdout + r.stderr)
                        table = r.stdout[r.stdout.rfind('medians of'):] if 'medians of' in r.stdout else r.stdout[-1500:]
                        for ln in table.splitlines():
                            print(f'    {ln}')
                        step(f'{sc} on the board: exit {r.returncode} ({time.monotonic() - ts:.0f} s)',
                             r.returncode == 0)
                subprocess.run(['scp', '-q', '-r', 'board:regress-out/.', OUT], env=env, check=False)
                # the board has no gnuplot (a Debian board without it): drawn here
                for sc in want:
                    if os.path.exists(os.path.join(OUT, f'{sc}.json')):
                        rlib.plot_json(os.path.join(OUT, f'{sc}.json'))
            log = b.kernel_log()
        peer_log = open(os.path.join(work, 'peer.dmesg'), errors='replace').read() \
            if os.path.exists(os.path.join(work, 'peer.dmesg')) else ''
        step(f'the peer lab guest ended cleanly (exit {peer.rc})', peer.rc == 0)
    except (RuntimeError, subprocess.SubprocessError, OSError) as e:
        step(f'board and peer: {e}', False)
        log, peer_log = '', ''
    for who, text in (('board', log), ('peer', peer_log)):
        bad = [ln for ln in text.splitlines() if forbidden.regex().search(ln)]
        step(f'the {who}\'s kernel log has no splat' + (':\n  ' + '\n  '.join(bad[:5]) if bad else ''),
             bool(text) and not bad)
    for sc in want:
        p = os.path.join(OUT, f'{sc}.json')
        if os.path.exists(p):
            doc = json.load(open(p))
            step(f'{sc}.json: mode {doc.get("mode")}, dev {doc.get("dev")}, kernel {doc.get("kernel")}',
                 doc.get('mode') == 'board')
        else:
            step(f'{sc}.json came back from the board', False)
    if not args.keep:
        subprocess.run(['rm', '-rf', work])
    print(f'board regress: {time.monotonic() - t0:.0f} s; results in {OUT}', flush=True)
    return checks.finish()


if __name__ == '__main__':
    sys.exit(main())
