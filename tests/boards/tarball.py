#!/usr/bin/env python3
"""The board tarball, installed and run on an emulated board.

  tarball.py arm64|arm [TARBALL]

Boots Debian's kernel of that architecture (the one scripts/drivers/prepare.sh
caches, which `make dist-board ARCH=...` builds against by default) on
`qemu-system-aarch64 -M virt` or `qemu-system-arm -M virt`, with a busybox
initramfs that holds the tarball (default: the newest
build/dist/ppkit-*-ARCH-*.tar.gz) and the C and C++ runtime libraries the
tools need (what a Debian 12 board has after `apt install` of the MANIFEST's
runtime packages).  In the guest, tests/boards/tarball-guest.sh installs it
with its install.sh, loads the modules with modprobe, runs ppsim traffic,
reads it with the board's ppctl and ppctld, and uninstalls.  Fails on a failed
check or a kernel splat in the guest log.  The guest's output is kept in
build/boards/ARCH.log.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'drivers'))
sys.path.insert(0, os.path.join(ROOT, 'scripts', 'lab'))
import armvirt  # noqa: E402
import forbidden  # noqa: E402
# A splat, or a module the kernel refused.
BAD = forbidden.regex(r'disagrees about version|Unknown symbol|version magic')


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    t = {'aarch64': 'arm64', 'armhf': 'arm'}.get(sys.argv[1], sys.argv[1])
    if t not in armvirt.QEMU:
        sys.exit(f'tarball: unknown board architecture {sys.argv[1]}: use arm64 or arm')
    if len(sys.argv) == 3:
        tarball = os.path.abspath(sys.argv[2])
    else:
        found = sorted(glob.glob(os.path.join(ROOT, f'build/dist/ppkit-*-{t}-*.tar.gz')),
                       key=os.path.getmtime)
        if not found:
            sys.exit(f'tarball: no build/dist/ppkit-*-{t}-*.tar.gz: run make dist-board ARCH={t}')
        tarball = found[-1]
    krel, _ver, _src, _kbuild, root = subprocess.run(
        [os.path.join(ROOT, 'scripts/drivers/prepare.sh'), '--print', t],
        check=True, capture_output=True, text=True).stdout.split()
    m = re.search(rf'-{t}-(.+)\.tar\.gz$', tarball)
    if not m or m.group(1) != krel:
        sys.exit(f'tarball: {os.path.basename(tarball)} is not built for the lab\'s {t} kernel {krel}')
    print(f'tarball: {os.path.basename(tarball)} on {t}, kernel {krel}', flush=True)

    work = tempfile.mkdtemp(prefix='ppk-board-')
    try:
        rootfs = armvirt.rootfs(work, root, ('root', 'run', 'tmp', 'etc', f'lib/modules/{krel}'))
        shutil.copy(tarball, os.path.join(rootfs, 'root'))
        shutil.copy(os.path.join(HERE, 'tarball-guest.sh'), os.path.join(rootfs, 'tarball-guest.sh'))
        # The tools' shared libraries, from the same sysroot they were linked against.
        bins = os.path.join(work, 'bins')
        with tarfile.open(tarball) as tf:
            members = [mb for mb in tf.getmembers() if re.search(r'/sbin/ppctld?$', mb.name)]
            tf.extractall(bins, members=members)
        sysroot = subprocess.run([os.path.join(ROOT, 'scripts/tools/sysroot.sh'), t], check=True,
                                 capture_output=True, text=True).stdout.split()[-1]
        for b in members:
            subprocess.run([os.path.join(ROOT, 'scripts/tools/guest-libs.sh'), t,
                            os.path.join(bins, b.name), rootfs], check=True,
                           env=dict(os.environ, SYSROOT=sysroot), stdout=subprocess.DEVNULL)
        t0 = time.time()
        out, rc = armvirt.boot(
            t, root, krel, rootfs,
            'mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp\n'
            f'sh /tarball-guest.sh /root/{os.path.basename(tarball)}', smp=2, timeout=900)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(ROOT, 'build/boards'), exist_ok=True)
    log = os.path.join(ROOT, f'build/boards/{t}.log')
    with open(log, 'w') as f:
        f.write(out)
    for line in out.splitlines():
        if re.match(r'\s*(ok \d+ - |not ok \d+ - |#|board:)', line):
            print('   ', line.strip())
    bad = [ln for ln in out.splitlines() if BAD.search(ln)]
    if rc or bad or 'PPK_RC=0' not in out:
        print(f'tarball: {t}: FAIL (rc {rc}, {time.time() - t0:.0f} s in the guest); see {log}',
              *bad[:5], sep='\n  ')
        return 1
    print(f'tarball: {t}: PASS ({time.time() - t0:.0f} s in the guest)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
