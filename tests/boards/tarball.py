#!/usr/bin/env python3
"""The board tarball, installed and run on an emulated board.

  tarball.py arm64|arm|arm64-16k [--kver LINE] [TARBALL]

Boots Debian's kernel of that target (the one scripts/drivers/prepare.sh
caches, which `make dist-board ARCH=...` builds against by default; with
--kver LINE, a line of the kernel matrix such as 6.12, that line's kernel of
the target, as `make dist-board ARCH=... KVER=LINE` builds for it) on
`qemu-system-aarch64 -M virt` or `qemu-system-arm -M virt` (arm64-16k, the
arm64 kernel with 16 KiB pages: `-cpu max`), with a busybox initramfs that
holds the tarball (default: the newest build/dist/ppkit-*-ARCH-KERNEL.tar.gz
for that kernel) and the C and C++ runtime libraries the tools need (what a
Debian 12 board has after `apt install` of the MANIFEST's runtime packages).
In the guest, tests/boards/tarball-guest.sh checks the page size against the
kernel's configuration, installs the tarball with its install.sh, loads the
modules with modprobe, runs ppsim traffic, reads it with the board's ppctl
and ppctld, runs pp_selftest's KTAP cases (from the same build's
build/kmod-TARGET[-LINE]/tests/, when it is there: the tarball does not ship
it) and uninstalls.  Fails on a failed check or a kernel splat in the guest
log.  The guest's output is kept in build/boards/TARGET[-LINE].log.
"""
import argparse
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


def page_size(kconfig):
    """The page size a kernel configuration builds for (CONFIG_PAGE_SHIFT from
    6.7 on; before, the arm64 granule options; 4 KiB otherwise)."""
    with open(kconfig) as f:
        cfg = f.read()
    m = re.search(r'^CONFIG_PAGE_SHIFT=(\d+)$', cfg, re.M)
    if m:
        return 1 << int(m.group(1))
    for size in (16, 64):
        if re.search(rf'^CONFIG_ARM64_{size}K_PAGES=y$', cfg, re.M):
            return size * 1024
    return 4096


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split('\n\n')[1].strip())
    ap.add_argument('target')
    ap.add_argument('--kver', default='6.1', metavar='LINE')
    ap.add_argument('tarball', nargs='?')
    args = ap.parse_args()
    t = {'aarch64': 'arm64', 'armhf': 'arm'}.get(args.target, args.target)
    if t not in armvirt.QEMU:
        sys.exit(f'tarball: unknown board target {args.target}: use arm64, arm or arm64-16k')
    arch = 'arm' if t == 'arm' else 'arm64'
    line = args.kver
    r = subprocess.run([os.path.join(ROOT, 'scripts/drivers/prepare.sh'), '--print', t],
                       capture_output=True, text=True, env=dict(os.environ, DRV_LINE=line))
    if r.returncode or len(r.stdout.split()) != 5:
        sys.exit(f'tarball: no {t} kernel of line {line}: {r.stderr.strip()}')
    krel, _ver, _src, kbuild, root = r.stdout.split()
    make = f'make dist-board ARCH={t}' + ('' if line == '6.1' else f' KVER={line}')
    if args.tarball:
        tarball = os.path.abspath(args.tarball)
    else:
        found = sorted(glob.glob(os.path.join(ROOT, f'build/dist/ppkit-*-{arch}-{krel}.tar.gz')),
                       key=os.path.getmtime)
        if not found:
            sys.exit(f'tarball: no build/dist/ppkit-*-{arch}-{krel}.tar.gz: run {make}')
        tarball = found[-1]
    m = re.search(rf'-{arch}-(.+)\.tar\.gz$', tarball)
    if not m or m.group(1) != krel:
        sys.exit(f'tarball: {os.path.basename(tarball)} is not built for the lab\'s {t} kernel {krel}: run {make}')
    if not os.path.isdir(root):
        sys.exit(f'tarball: {root} missing: run DRV_LINE={line} scripts/drivers/prepare.sh {t}')
    psize = page_size(os.path.join(kbuild, '.config'))
    # pp_selftest of the same build (make modules builds it beside the tarball's modules)
    sel = os.path.join(ROOT, 'build', f'kmod-{t}' + ('' if line == '6.1' else f'-{line}'),
                       'tests', 'pp_selftest.ko')
    if not os.path.exists(sel) or subprocess.run(
            ['modinfo', '-F', 'vermagic', sel], capture_output=True, text=True).stdout.split()[:1] != [krel]:
        sel = None
    print(f'tarball: {os.path.basename(tarball)} on {t}, kernel {krel}, {psize}-byte pages'
          f'{", with pp_selftest" if sel else ""}', flush=True)

    log = os.path.join(ROOT, 'build/boards', t + ('' if line == '6.1' else f'-{line}') + '.log')
    work = tempfile.mkdtemp(prefix='ppk-board-')
    try:
        rootfs = armvirt.rootfs(work, root, ('root', 'run', 'tmp', 'etc', f'lib/modules/{krel}'))
        shutil.copy(tarball, os.path.join(rootfs, 'root'))
        shutil.copy(os.path.join(HERE, 'tarball-guest.sh'), os.path.join(rootfs, 'tarball-guest.sh'))
        if sel:
            shutil.copy(sel, os.path.join(rootfs, 'root', 'pp_selftest.ko'))
        # The tools' shared libraries, from the same sysroot they were linked against.
        bins = os.path.join(work, 'bins')
        with tarfile.open(tarball) as tf:
            members = [mb for mb in tf.getmembers() if re.search(r'/sbin/ppctld?$', mb.name)]
            tf.extractall(bins, members=members)
        sysroot = subprocess.run([os.path.join(ROOT, 'scripts/tools/sysroot.sh'), arch], check=True,
                                 capture_output=True, text=True).stdout.split()[-1]
        for b in members:
            subprocess.run([os.path.join(ROOT, 'scripts/tools/guest-libs.sh'), arch,
                            os.path.join(bins, b.name), rootfs], check=True,
                           env=dict(os.environ, SYSROOT=sysroot), stdout=subprocess.DEVNULL)
        t0 = time.time()
        out, rc = armvirt.boot(
            t, root, krel, rootfs,
            'mount -t tmpfs tmpfs /run; mount -t tmpfs tmpfs /tmp\n'
            f'PPK_PAGE_SIZE={psize} PPK_SELFTEST={"/root/pp_selftest.ko" if sel else ""} '
            f'sh /tarball-guest.sh /root/{os.path.basename(tarball)}', smp=2, timeout=900)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    os.makedirs(os.path.dirname(log), exist_ok=True)
    with open(log, 'w') as f:
        f.write(out)
    for ln in out.splitlines():
        if re.match(r'\s*(ok \d+ - |not ok \d+ - |#|board:)', ln):
            print('   ', ln.strip())
    bad = [ln for ln in out.splitlines() if BAD.search(ln)]
    name = t + ('' if line == '6.1' else f' ({line})')
    if rc or bad or 'PPK_RC=0' not in out:
        print(f'tarball: {name}: FAIL (rc {rc}, {time.time() - t0:.0f} s in the guest); see {log}',
              *bad[:5], sep='\n  ')
        return 1
    print(f'tarball: {name}: PASS ({time.time() - t0:.0f} s in the guest)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
