"""Boot Debian's ARM kernel of the lab on `qemu -M virt` with a busybox initramfs.

Shared by tests/drivers/load.py and tests/boards/tarball.py.
"""
import gzip
import os
import shutil
import subprocess

# arm64-16k (Debian's arm64 kernel with 16 KiB pages): the Cortex-A72 has no
# 16K translation granule, QEMU's "max" CPU has; pauth-impdef: QEMU's own
# pointer-authentication hash instead of QARMA, which costs a lot under TCG.
QEMU = {'arm64': ['qemu-system-aarch64', '-M', 'virt', '-cpu', 'cortex-a72'],
        'arm64-16k': ['qemu-system-aarch64', '-M', 'virt', '-cpu', 'max,pauth-impdef=on'],
        'arm': ['qemu-system-arm', '-M', 'virt', '-cpu', 'cortex-a15']}


def rootfs(work, debian_root, dirs=()):
    """A root under WORK with busybox from DEBIAN_ROOT (the target's unpacked Debian
    packages, scripts/drivers/prepare.sh) and the directories init mounts on."""
    r = os.path.join(work, 'rootfs')
    for d in ('bin', 'proc', 'sys', 'dev') + tuple(dirs):
        os.makedirs(os.path.join(r, d), exist_ok=True)
    shutil.copy(os.path.join(debian_root, 'bin/busybox'), os.path.join(r, 'bin/busybox'))
    return r


def modules_dep(mdir):
    """MDIR's modules.dep as {name: (path in MDIR, [paths it depends on])},
    names with '_' for '-' as the kernel spells them."""
    deps = {}
    with open(os.path.join(mdir, 'modules.dep')) as f:
        for line in f:
            mod, _, rest = line.partition(':')
            deps[os.path.basename(mod).split('.ko')[0].replace('-', '_')] = (mod, rest.split())
    return deps


def pack(root):
    """ROOT as a gzipped initramfs beside it; returns its path."""
    cpio = subprocess.run('find . | cpio -o -H newc --quiet', shell=True, cwd=root,
                          check=True, capture_output=True).stdout
    initrd = os.path.join(os.path.dirname(root), 'initrd.gz')
    with gzip.open(initrd, 'wb', compresslevel=1) as f:
        f.write(cpio)
    return initrd


def boot(target, debian_root, krel, root, commands, smp=1, timeout=600):
    """Run shell COMMANDS as init in ROOT (from rootfs()), on Debian's kernel KREL
    of TARGET; the guest prints PPK_RC=<exit status>, then its whole kernel log
    between PPK_DMESG_BEGIN and PPK_DMESG_END, and powers off.
    Returns (console output, 0, 124 on timeout, or 125 if the kernel log did not
    come back whole): callers scan the output for splats."""
    with open(os.path.join(root, 'init'), 'w') as f:
        # The console is at loglevel 4, which hides WARN and refcount lines
        # (KERN_WARNING): the log is read in full from dmesg at the end.
        f.write('#!/bin/busybox sh\n/bin/busybox --install -s /bin\n'
                'mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev\n'
                f'{commands}\necho "PPK_RC=$?"\n'
                'echo PPK_DMESG_BEGIN; dmesg; echo "PPK_DMESG_END rc=$?"; poweroff -f\n')
    os.chmod(os.path.join(root, 'init'), 0o755)
    initrd = pack(root)
    q = QEMU[target] + ['-smp', str(smp), '-m', '1024', '-nographic', '-no-reboot', '-kernel',
                        os.path.join(debian_root, f'boot/vmlinuz-{krel}'), '-initrd', initrd,
                        '-append', 'console=ttyAMA0 panic=-1 loglevel=4 log_buf_len=4M']
    try:
        r = subprocess.run(q, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=timeout, errors='replace')
        out = r.stdout + r.stderr
        head = out.find('PPK_DMESG_BEGIN')
        # Without its first line (the banner) the log wrapped: boot splats may be gone.
        whole = head >= 0 and 'Linux version ' in out[head:] and 'PPK_DMESG_END rc=0' in out
        return out, 0 if whole else 125
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode('utf-8', 'replace') if isinstance(e.stdout, bytes) else (e.stdout or '')
        return out, 124
