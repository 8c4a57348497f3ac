#!/usr/bin/env python3
"""mvpp2 on an emulated Macchiatobin: Debian's arm64 kernel on ppkit's QEMU
(scripts/emu/qemu.sh: Debian's qemu with the PPv2.2 model), three ports.

Ports 0 and 1 share a QEMU hub; port 2 is a UDP socket backend whose other
end is this script.  The guest (tests/emu/mcbin-init.sh) loads a module set,
checks the probe and the links, moves port 1 to a namespace of its own and
sends TCP both ways between ports 0 and 1 (counts and hashes); this script
pings port 2 with frames of many sizes (answering the guest's ARP itself)
and checks every echo; then the guest takes the ports down and unloads.
Every step is a check; the guest's log must hold no splat.

  mcbin.py [--line 6.1|5.10|6.12] [--guest-root DIR] [--swiotlb]
           [--params 'queue_mode=0'] [--set debian] [--smp 2] [--mib 8]
           [--log LOG] [--monitor SOCKET]

--guest-root: the arm64 ppctl and ethtool with their libraries (without
it, no XDP phases); --monitor: a QEMU monitor on that unix socket.

--set debian: the unmodified driver of the arm64 kernel (the model's oracle).
"""
import argparse
import os
import random
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
sys.path.insert(0, os.path.join(ROOT, 'scripts', 'lab'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'lab'))
sys.path.insert(0, os.path.join(ROOT, 'tests', 'drivers'))
import armvirt  # noqa: E402
import forbidden  # noqa: E402
from checks import Checks  # noqa: E402
from orangepi import ECHO_PORTS, build_xdp_echo, echo_payload  # noqa: E402

FORBIDDEN = forbidden.regex()
# -net none: -M virt's default NIC (virtio-net-pci) is not in ppkit's QEMU
CPU = ['-M', 'virt', '-cpu', 'cortex-a72', '-net', 'none']
MEM = 1024
PORTS = 3
IRQS_PER_PORT = 10
SPI_BASE = 112          # -M virt's platform bus: its first SPI
GOP = (0, 2, 3)         # the CP110's port-id -> gop-port-id (the model's too)
MACS = [f'52:54:00:12:34:{p:02x}' for p in range(PORTS)]
HOST_MAC = bytes.fromhex('020000000901')
HOST_IP = socket.inet_aton('10.9.0.1')
GUEST_IP = socket.inet_aton('10.9.0.2')
PINGS = 200
ECHOES = 500            # datagrams per XDP echo port (tx, redirect)
GUEST_S = 900
# swiotlb=force: 256 MiB of bounce buffers (2 KiB slabs).  The default
# 64 MiB is exactly what the per-CPU pools map (8 pools of 2048 pages), and
# the driver then runs dry ("swiotlb buffer is full").
SWIOTLB_SLABS = 131072


def emu_qemu():
    r = subprocess.run([os.path.join(ROOT, 'scripts/emu/qemu.sh'), '--print'],
                       capture_output=True, text=True)
    if r.returncode:
        sys.exit('mcbin: ppkit\'s QEMU is not built: run scripts/deps.sh (it runs scripts/emu/qemu.sh)')
    return r.stdout.strip()


def port_node(p):
    irqs = ', '.join(f'<0 {SPI_BASE + IRQS_PER_PORT * p + k} 4>' for k in range(IRQS_PER_PORT))
    names = ', '.join([f'"hif{k}"' for k in range(9)] + ['"link"'])
    mac = ' '.join(MACS[p].split(':'))
    return f'''
		ethernet-port@{p} {{
			port-id = <{p}>;
			gop-port-id = <{GOP[p]}>;
			phy-mode = "sgmii";
			local-mac-address = [{mac}];
			interrupts = {irqs};
			interrupt-names = {names};
			fixed-link {{
				speed = <1000>;
				full-duplex;
			}};
		}};'''


def make_dtb(qemu, work, smp):
    """-M virt's own tree (dumped with the same CPUs and memory), with the
    CP110's packet processor on the platform bus: the model's one region
    lands at its base, its interrupts at the bus's first SPIs."""
    base = os.path.join(work, 'base.dtb')
    subprocess.run([qemu] + CPU + ['-smp', str(smp), '-m', str(MEM), '-nographic',
                                   '-M', f'virt,dumpdtb={base},dtb-randomness=off'],
                   check=True, capture_output=True)
    dts = subprocess.run(['dtc', '-q', '-I', 'dtb', '-O', 'dts', base], check=True,
                         capture_output=True, text=True).stdout
    bus = re.search(r'(platform-bus@[0-9a-f]+) \{', dts)
    if not bus:
        sys.exit('mcbin: -M virt\'s tree has no platform bus')
    ports = ''.join(port_node(p) for p in range(PORTS))
    dts += f'''
/ {{
	pp22_clk: pp22-clk {{
		compatible = "fixed-clock";
		#clock-cells = <0>;
		clock-frequency = <333333333>;
	}};
}};

&{{/{bus.group(1)}}} {{
	ethernet@0 {{
		compatible = "marvell,armada-7k-pp22";
		reg = <0x0 0x100000>, <0x129000 0xb000>;
		clocks = <&pp22_clk>, <&pp22_clk>, <&pp22_clk>, <&pp22_clk>, <&pp22_clk>;
		clock-names = "pp_clk", "gop_clk", "mg_clk", "mg_core_clk", "axi_clk";
		dma-coherent;
		#address-cells = <1>;
		#size-cells = <0>;
{ports}
	}};
}};
'''
    src = os.path.join(work, 'mcbin.dts')
    with open(src, 'w') as f:
        f.write(dts)
    out = os.path.join(work, 'mcbin.dtb')
    subprocess.run(['dtc', '-q', '-I', 'dts', '-O', 'dtb', '-o', out, src], check=True)
    return out


def debian_set(root, krel, dest, params=''):
    """Debian's mvpp2 and what it needs, in load order, under DEST; PARAMS
    for mvpp2 (e.g. queue_mode=0)."""
    mdir = os.path.join(root, 'lib/modules', krel)
    deps = armvirt.modules_dep(mdir)
    order = []

    def need(name):
        if name in order:
            return
        for d in reversed(deps[name][1]):
            need(os.path.basename(d).split('.ko')[0].replace('-', '_'))
        order.append(name)
    need('mvpp2')
    os.makedirs(dest)
    with open(os.path.join(dest, 'list'), 'w') as lst:
        for name in order:
            path = os.path.join(mdir, deps[name][0])
            fn = name + '.ko'
            if path.endswith('.xz'):
                with open(os.path.join(dest, fn), 'wb') as out:
                    subprocess.run(['xz', '-dc', path], stdout=out, check=True)
            else:
                shutil.copy(path, os.path.join(dest, fn))
            lst.write(fn + (f' {params}' if name == 'mvpp2' and params else '') + '\n')
    return order


def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack(f'!{len(b) // 2}H', b))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


class HostPort:
    """The host's end of port 2: answers ARP for HOST_IP, sends ICMP echo
    requests of many sizes and checks each reply's payload."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(('127.0.0.1', 0))
        self.guest = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.guest.bind(('127.0.0.1', 0))
        self.gport = self.guest.getsockname()[1]
        self.guest.close()      # QEMU binds it
        self.hport = self.sock.getsockname()[1]
        self.guest_mac = None
        self.replies = {}

    def netdev(self):
        return f'socket,id=s0,udp=127.0.0.1:{self.hport},localaddr=127.0.0.1:{self.gport}'

    def send(self, frame):
        self.sock.sendto(frame, ('127.0.0.1', self.gport))

    def handle(self, f):
        if len(f) < 14:
            return
        etype = struct.unpack('!H', f[12:14])[0]
        if etype == 0x0806 and f[21] == 1 and f[38:42] == HOST_IP:
            sha, spa = f[22:28], f[28:32]
            arp = struct.pack('!HHBBH', 1, 0x0800, 6, 4, 2) + HOST_MAC + HOST_IP + sha + spa
            self.send(sha + HOST_MAC + b'\x08\x06' + arp)
        elif etype == 0x0800 and f[23] == 1:
            ihl = (f[14] & 15) * 4
            icmp = f[14 + ihl:]
            if icmp[0] != 0:
                return
            seq = struct.unpack('!H', icmp[6:8])[0]
            tot = struct.unpack('!H', f[16:18])[0]
            self.replies[seq] = bytes(icmp[8:tot - ihl])

    def run(self, n, deadline):
        self.sock.settimeout(0.2)
        rnd = random.Random(1)
        sent = {}
        for seq in range(n):
            size = rnd.choice([0, 18, 100, 150, 190, 300, 1000, 1400, 1472]) + seq % 7
            size = min(size, 1472)
            payload = bytes(rnd.getrandbits(8) for _ in range(size))
            sent[seq] = payload
            icmp = struct.pack('!BBHHH', 8, 0, 0, 0x7070, seq) + payload
            icmp = icmp[:2] + struct.pack('!H', csum(icmp)) + icmp[4:]
            ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(icmp), seq, 0, 64, 1, 0,
                             HOST_IP, GUEST_IP)
            ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
            dst = self.guest_mac or b'\xff' * 6
            self.send(dst + HOST_MAC + b'\x08\x00' + ip + icmp)
            end = time.monotonic() + (5 if seq < 3 else 1)
            while seq not in self.replies and time.monotonic() < min(end, deadline):
                try:
                    self.handle(self.sock.recv(65536))
                except socket.timeout:
                    pass
        good = sum(1 for s, p in sent.items() if self.replies.get(s) == p)
        return good, len(self.replies)


def udp_frame(dst_mac, dport, payload):
    udp = struct.pack('!HHHH', 40000 + dport % 1000, dport, 8 + len(payload), 0) + payload
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, HOST_IP, GUEST_IP)
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    return dst_mac + HOST_MAC + b'\x08\x00' + ip + udp


def echo(host, n, deadline):
    """N numbered datagrams to each of the guest's XDP echo ports, a window
    of 32 in flight; the echoes come back with the addresses swapped."""
    res = {}
    host.sock.settimeout(0.5)
    for kind, port in ECHO_PORTS.items():
        want, got, bad, sent = {}, 0, 0, 0
        while (sent < n or want) and time.monotonic() < deadline:
            while sent < n and len(want) < 32:
                want[sent] = echo_payload(sent, port)
                host.send(udp_frame(host.guest_mac, port, want[sent]))
                sent += 1
            try:
                f = host.sock.recv(65536)
            except socket.timeout:
                break
            if len(f) < 42 or f[12:14] != b'\x08\x00' or f[23] != 17:
                host.handle(f)
                continue
            ihl = (f[14] & 15) * 4
            sport = struct.unpack('!H', f[14 + ihl:16 + ihl])[0]
            body = f[14 + ihl + 8:14 + struct.unpack('!H', f[16:18])[0]]
            seq = int.from_bytes(body[:4], 'big')
            if sport == port and want.get(seq) == body and f[0:6] == HOST_MAC:
                del want[seq]
                got += 1
            else:
                bad += 1
        res[kind] = {'sent': sent, 'echoed': got, 'bad': bad, 'lost': len(want)}
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--set', default='debian')
    ap.add_argument('--line', default='6.1', help='the arm64 kernel line (6.1, 5.10, 6.12)')
    ap.add_argument('--guest-root', help='root with usr/bin/ppctl, usr/sbin/ethtool and their libraries')
    ap.add_argument('--swiotlb', action='store_true', help='boot with swiotlb=force')
    ap.add_argument('--params', default='', help='mvpp2\'s module parameters, e.g. queue_mode=0')
    ap.add_argument('--smp', type=int, default=2)
    ap.add_argument('--mib', type=int, default=8)
    ap.add_argument('--log')
    ap.add_argument('--monitor', metavar='PATH', help='a QEMU monitor on this unix socket')
    a = ap.parse_args()
    c = Checks('mcbin')
    qemu = emu_qemu()
    env = dict(os.environ, DRV_LINE=a.line)
    krel, _ver, _src, _kbuild, root = subprocess.run(
        [os.path.join(ROOT, 'scripts/drivers/prepare.sh'), '--print', 'arm64'],
        check=True, capture_output=True, text=True, env=env).stdout.split()
    if not os.path.exists(os.path.join(root, f'boot/vmlinuz-{krel}')):
        sys.exit(f'mcbin: no arm64 kernel of {a.line}: run DRV_LINE={a.line} scripts/drivers/prepare.sh arm64')
    work = tempfile.mkdtemp(prefix='ppk-mcbin-')
    try:
        dtb = make_dtb(qemu, work, a.smp)
        rootfs = armvirt.rootfs(work, root, dirs=('tmp', 'lib/modules/ppkit'))
        if a.set != 'debian':
            sys.exit(f'mcbin: unknown set {a.set}')
        mods = debian_set(root, krel, os.path.join(rootfs, 'lib/modules/ppkit', a.set), a.params)
        c.note(f'{krel}: {" ".join(mods)} {a.params}{" swiotlb=force" if a.swiotlb else ""}; {qemu}')
        if a.guest_root:
            subprocess.run(['cp', '-a', a.guest_root + '/.', rootfs], check=True)
            os.makedirs(os.path.join(rootfs, 'usr/lib/ppkit'), exist_ok=True)
            shutil.copy(build_xdp_echo(work), os.path.join(rootfs, 'usr/lib/ppkit/xdp-echo.o'))
        else:
            c.note('no --guest-root: no ppctl, so no XDP phases, and no ethtool')
        shutil.copy(os.path.join(HERE, 'mcbin-init.sh'), os.path.join(rootfs, 'init'))
        os.chmod(os.path.join(rootfs, 'init'), 0o755)
        initrd = armvirt.pack(rootfs)
        host = HostPort()
        cmd = [qemu] + CPU + [
            '-smp', str(a.smp), '-m', str(MEM), '-nographic', '-no-reboot',
            '-kernel', os.path.join(root, f'boot/vmlinuz-{krel}'), '-initrd', initrd,
            '-dtb', dtb,
            '-append', f'console=ttyAMA0 panic=-1 loglevel=4 log_buf_len=4M '
                       f'ppk.set={a.set} ppk.mib={a.mib}' + (f' swiotlb={SWIOTLB_SLABS},force' if a.swiotlb else ''),
            '-netdev', 'hubport,id=h0,hubid=0', '-netdev', 'hubport,id=h1,hubid=0',
            '-netdev', host.netdev(),
            '-device', 'mvpp2,' + ','.join(f'netdev{p}={n},mac{p}={MACS[p]}'
                                           for p, n in enumerate(('h0', 'h1', 's0')))]
        if a.monitor:
            cmd += ['-monitor', f'unix:{a.monitor},server,nowait']
        live = open(a.log + '.live', 'w') if a.log else None
        out = run_guest(cmd, host, c, live)
        if live:
            live.close()
            os.unlink(a.log + '.live')
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a.log:
        with open(a.log, 'w') as f:
            f.write(out)
    judge(out, c)
    return c.finish()


def run_guest(cmd, host, c, live=None):
    """Run the guest; its console goes to LIVE as it comes (when given)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, errors='replace')
    lines = []
    timer = threading.Timer(GUEST_S, p.kill)
    timer.start()
    try:
        for line in p.stdout:
            lines.append(line)
            if live:
                live.write(line)
                live.flush()
            s = line.strip()
            if s.startswith('PPK_') and not s.startswith('PPK_DMESG'):
                print(f'# {s}', flush=True)
            m = re.search(r'PPK_HOST phase=(\w+) ip=\S+ mac=(\S+)', s)
            if m:
                host.guest_mac = bytes.fromhex(m.group(2).replace(':', ''))
                if m.group(1) == 'ping':
                    good, got = host.run(PINGS, time.monotonic() + 300)
                    c.check(good == PINGS, f'port 2: {PINGS} pings from the host through QEMU\'s '
                                           f'socket backend, {good} echoed intact ({got} replies)')
                    answer = f'pings sent={PINGS} good={good}'
                else:
                    r = echo(host, ECHOES, time.monotonic() + 300)
                    for kind, v in r.items():
                        c.check(v['echoed'] == ECHOES and not v['bad'],
                                f'xdp {kind}: {ECHOES} datagrams of the host echoed by the program on '
                                f'port 2 ({v["echoed"]} back intact, {v["bad"]} changed, {v["lost"]} lost)')
                    answer = ' '.join(f'{k}={v["echoed"]}/{ECHOES}' for k, v in r.items())
                p.stdin.write(answer + '\n')
                p.stdin.flush()
        p.wait()
    finally:
        timer.cancel()
        if p.poll() is None:
            p.kill()
    c.note(f'guest: {time.monotonic() - t0:.0f} s, exit {p.returncode}')
    return ''.join(lines)


def judge(out, c):
    steps = ['probe: three ports', 'link: three ports up with carrier', 'ping: port 0',
             'tcp: ', 'ethtool -S: ', 'mtu 9000: ', 'down/up: ']
    if 'PPK_NOXDP' not in out:
        steps += ['xdp pass: ', 'xdp drop: ']
    for what in steps + ['unload']:
        m = re.search(r'PPK_OK (' + re.escape(what) + r'.*)', out)
        c.check(m is not None, m.group(1).strip() if m else f'{what.strip()} (never reached)')
    for m in re.finditer(r'PPK_FAIL (.*)', out):
        c.bad(f'guest: {m.group(1).strip()}')
    bad = [ln for ln in out.splitlines() if FORBIDDEN.search(ln)]
    c.check(not bad, 'the guest log has no splat' + (f': {bad[0].strip()}' if bad else ''))
    c.check('PPK_DONE rc=0' in out, 'the guest ran to its end')


if __name__ == '__main__':
    sys.exit(main())
