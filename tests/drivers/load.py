#!/usr/bin/env python3
"""Load and unload the built modules of one target in QEMU, with pp_backport.

  load.py x86_64|arm64|arm [--dir DIR]

DIR: where the modules are (default build/drivers/<target>, or
build/drivers/x86_64-<line> with DRV_LINE=5.10|6.12; e.g. the
ksrc-<version>/ folder of a build from another kernel source).

x86_64 runs in the lab (scripts/lab/run, Debian's amd64 kernel); arm64 and
arm boot Debian's own kernel of that target on `qemu-system-aarch64 -M virt`
or `qemu-system-arm -M virt` with a busybox initramfs.  Every module in
build/drivers/<target>/ is loaded after the Debian modules it depends on,
then ours are unloaded in reverse.  No device is needed: the drivers
register and wait for hardware that is not there.  Fails on any insmod or
rmmod error, a version/symbol complaint or a splat in the guest log.
"""
import os
import shutil
import subprocess
import sys
import tempfile

import armvirt

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'scripts', 'lab'))
import forbidden  # noqa: E402
# A splat, or a module the kernel refused.
BAD = forbidden.regex(r'disagrees about version|Invalid module format|Unknown symbol|'
                      r'version magic|Exec format|PPK_LOAD_FAIL')
# Seconds a guest may take: about 25 s here, 600 s the lane's limit.
GUEST_S = 300
# Load order of our modules: the pool, then libraries before their users.
ORDER = ['pp_backport', 'stmmac', 'stmmac-platform', 'dwmac-generic', 'dwmac-sun8i',
         'dwmac-intel', 'mvpp2', 'mlx4_en']


def main():
    args = sys.argv[1:]
    built = None
    if len(args) == 3 and args[1] == '--dir':
        built = os.path.abspath(args[2])
        args = args[:1]
    if len(args) != 1:
        sys.exit(__doc__)
    t = {'x86': 'x86_64', 'amd64': 'x86_64', 'armhf': 'arm', 'aarch64': 'arm64'}.get(
        args[0], args[0])
    krel, _ver, _src, _kbuild, root = subprocess.run(
        [os.path.join(ROOT, 'scripts/drivers/prepare.sh'), '--print', t],
        check=True, capture_output=True, text=True).stdout.split()
    line = os.environ.get('DRV_LINE', '6.1')
    built = built or os.path.join(ROOT, 'build/drivers', t if line == '6.1' else f'{t}-{line}')
    own = [m for m in ORDER if os.path.exists(os.path.join(built, m + '.ko'))]
    extra = sorted(set(f[:-3] for f in os.listdir(built) if f.endswith('.ko')) - set(own))
    if extra:
        sys.exit(f'load: add {extra} to ORDER in {__file__}')
    if 'pp_backport' not in own or len(own) < 2:
        sys.exit(f'load: nothing built in {built}: run make drivers ARCH={t}')

    mdir = os.path.join(root, 'lib/modules', krel)
    deps = armvirt.modules_dep(mdir)
    ownset = {m.replace('-', '_') for m in own}
    order = []

    def need(name):
        name = name.replace('-', '_')
        if name in ownset or any(n == name for n, _ in order):
            return
        mod, dl = deps[name]
        for d in reversed(dl):
            need(os.path.basename(d).split('.ko')[0])
        order.append((name, os.path.join(mdir, mod)))
    for m in own:
        ko = os.path.join(built, m + '.ko')
        for d in filter(None, subprocess.run(['modinfo', '-F', 'depends', ko], check=True,
                                             capture_output=True, text=True).stdout.strip().split(',')):
            need(d)

    load = os.path.join(built, 'load')
    shutil.rmtree(load, ignore_errors=True)
    os.makedirs(load)
    with open(os.path.join(load, 'list'), 'w') as lst:
        i = 0
        for name, path in order + [(m, os.path.join(built, m + '.ko')) for m in own]:
            i += 1
            fn = f'{i:02d}-{os.path.basename(path)}'
            if fn.endswith('.ko.xz'):
                # 6.12's modules come compressed, and busybox's insmod does not
                # decompress
                fn = fn[:-3]
                with open(os.path.join(load, fn), 'wb') as out:
                    subprocess.run(['xz', '-dc', path], stdout=out, check=True)
            else:
                shutil.copy(path, os.path.join(load, fn))
            lst.write(f'{fn} {"own" if name.replace("-", "_") in ownset else "debian"}\n')
    print(f'load: {t} {krel}: Debian deps {[n for n, _ in order]}, ours {own}', flush=True)

    if t == 'x86_64':
        # DRV_LINE (make drivers KVER=LINE): the lab boots that line's kernel
        line = os.environ.get('DRV_LINE', '6.1')
        env = dict(os.environ, LAB_KERNEL=line) if line != '6.1' else None
        # the guest's own limit, well inside the lane's: a hung guest ends
        # with the console's tail in the log
        r = subprocess.run([os.path.join(ROOT, 'scripts/lab/run'), '--timeout', str(GUEST_S), '--', 'sh',
                            os.path.join(HERE, 'load-guest.sh'), load],
                           capture_output=True, text=True, env=env)
        out = r.stdout + r.stderr
        rc = r.returncode
    else:
        work = tempfile.mkdtemp(prefix='ppk-load-')
        rootfs = armvirt.rootfs(work, root)
        shutil.copytree(load, os.path.join(rootfs, 'load'))
        shutil.copy(os.path.join(HERE, 'load-guest.sh'), os.path.join(rootfs, 'load-guest.sh'))
        out, rc = armvirt.boot(t, root, krel, rootfs, 'sh /load-guest.sh /load', timeout=GUEST_S)
        shutil.rmtree(work, ignore_errors=True)
        if 'PPK_RC=0' not in out:
            rc = rc or 1
    with open(os.path.join(built, 'load.log'), 'w') as f:
        f.write(out)
    for line in out.splitlines():
        if 'PPK_' in line and 'PPK_RC' not in line:
            print('   ', line.strip())
    bad = [ln for ln in out.splitlines() if BAD.search(ln)]
    if rc != 0 or bad or 'PPK_LOAD_OK' not in out:
        print(f'load: {t}: FAIL (rc {rc}); see {built}/load.log', *bad[:5], sep='\n  ')
        print('load: the guest\'s last lines:', *out.splitlines()[-20:], sep='\n  ')
        return 1
    print(f'load: {t}: PASS: {len(own)} modules loaded and unloaded with {len(order)} Debian deps')
    return 0


if __name__ == '__main__':
    sys.exit(main())
