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
import gzip
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
BAD = re.compile(r'BUG:|WARNING:|Oops|refcount_t|list_del corruption|ppkit.*leak|'
                 r'Kernel panic|disagrees about version|Unknown symbol|version magic')
QEMU = {'arm64': ['qemu-system-aarch64', '-M', 'virt', '-cpu', 'cortex-a72', '-smp', '2'],
        'arm': ['qemu-system-arm', '-M', 'virt', '-cpu', 'cortex-a15', '-smp', '2']}


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    t = {'aarch64': 'arm64', 'armhf': 'arm'}.get(sys.argv[1], sys.argv[1])
    if t not in QEMU:
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
        rootfs = os.path.join(work, 'rootfs')
        for d in ('bin', 'proc', 'sys', 'dev', 'root', 'run', 'tmp', 'etc', f'lib/modules/{krel}'):
            os.makedirs(os.path.join(rootfs, d))
        shutil.copy(os.path.join(root, 'bin/busybox'), os.path.join(rootfs, 'bin/busybox'))
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
        with open(os.path.join(rootfs, 'init'), 'w') as f:
            f.write('#!/bin/busybox sh\n/bin/busybox --install -s /bin\n'
                    'mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev\n'
                    'mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp\n'
                    f'sh /tarball-guest.sh /root/{os.path.basename(tarball)}; echo "PPK_RC=$?"\n'
                    'dmesg | tail -n 30; poweroff -f\n')
        os.chmod(os.path.join(rootfs, 'init'), 0o755)
        cpio = subprocess.run('find . | cpio -o -H newc --quiet', shell=True, cwd=rootfs,
                              check=True, capture_output=True).stdout
        initrd = os.path.join(work, 'initrd.gz')
        with gzip.open(initrd, 'wb', compresslevel=1) as f:
            f.write(cpio)
        q = QEMU[t] + ['-m', '1024', '-nographic', '-no-reboot', '-kernel',
                       os.path.join(root, f'boot/vmlinuz-{krel}'), '-initrd', initrd,
                       '-append', 'console=ttyAMA0 panic=-1 loglevel=4']
        t0 = time.time()
        try:
            r = subprocess.run(q, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                               timeout=900, errors='replace')
            out, rc = r.stdout + r.stderr, 0
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode('utf-8', 'replace') if isinstance(e.stdout, bytes) else (e.stdout or '')
            rc = 124
    finally:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.join(ROOT, 'build/boards'), exist_ok=True)
    log = os.path.join(ROOT, f'build/boards/{t}.log')
    with open(log, 'w') as f:
        f.write(out)
    for line in out.splitlines():
        if re.match(r'\s*(ok:|FAIL:|#|board:)', line):
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
