"""An emulated Debian arm64 board you can ssh into, and its traffic peer.

Board: the root filesystem of scripts/boards/image.sh (Debian 12 arm64,
mmdebstrap'ed, with sshd and Debian's arm64 kernel package) on
`qemu-system-aarch64 -M virt`, booted through its own kernel and initramfs,
writing to a qcow2 overlay so the cached image stays as built.  eth0 is QEMU
user networking with the board's port 22 forwarded to a free port of the
host's loopback; eth1 is a cable (QEMU socket networking) to the peer.

Peer: a lab guest (scripts/lab/run: Debian's x86_64 kernel, the host's
userland) on the other end of the cable, running tests/boards/peer.sh: sshd
with the board's key, pktgen and iperf3, as a traffic machine next to a board.

Both write what they print into the work directory.  ssh_config() there
names the board `board`, and env() puts `ssh` and `scp` first in PATH that
read it (ssh finds its user configuration through the password database,
not HOME: the user's own ~/.ssh is left alone), so that `ssh board ...` and
`scp FILE board:` run as the README writes them.
"""
import os
import shutil
import signal
import socket
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
BOARD_LINK = '10.99.0.1'
PEER_LINK = '10.99.0.2'
PEER_MAC = '52:54:00:99:00:02'


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def image():
    """The board image's directory (built and cached by scripts/boards/image.sh)."""
    r = subprocess.run([os.path.join(ROOT, 'scripts/boards/image.sh')],
                       capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f'scripts/boards/image.sh failed:\n{r.stderr.strip()}')
    return r.stdout.strip().splitlines()[-1]


class Board:
    """with Board(work) as b: b.ssh('uname -r') ..."""

    def __init__(self, work, smp=2, mem=1024, boot_timeout=600):
        self.work = work
        self.img = image()
        self.smp, self.mem, self.boot_timeout = smp, mem, boot_timeout
        self.ssh_port = free_port()
        self.link_port = free_port()
        self.home = os.path.join(work, 'home')
        self.console = os.path.join(work, 'board-console.log')
        self.qemu = None
        with open(os.path.join(self.img, 'krel')) as f:
            self.krel = f.read().strip()

    def ssh_config(self):
        d = os.path.join(self.home, 'ssh')
        os.makedirs(d, mode=0o700, exist_ok=True)
        key = os.path.join(d, 'id_board')
        shutil.copy(os.path.join(self.img, 'id_ed25519'), key)
        os.chmod(key, 0o600)
        self.config = os.path.join(d, 'config')
        bindir = os.path.join(self.home, 'bin')
        os.makedirs(bindir, exist_ok=True)
        for tool in ('ssh', 'scp'):
            w = os.path.join(bindir, tool)
            with open(w, 'w') as f:
                f.write(f'#!/bin/sh\nexec /usr/bin/{tool} -F {self.config} "$@"\n')
            os.chmod(w, 0o755)
        with open(self.config, 'w') as f:
            f.write(f'Host board\n  HostName 127.0.0.1\n  Port {self.ssh_port}\n  User root\n'
                    f'  IdentityFile {key}\n  IdentitiesOnly yes\n  StrictHostKeyChecking no\n'
                    '  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n  ConnectTimeout 20\n'
                    '  ServerAliveInterval 15\n  ServerAliveCountMax 8\n')
        return self.home

    def env(self):
        """The environment a command runs in to reach `board` by that name."""
        return dict(os.environ, PATH=os.path.join(self.home, 'bin') + ':' + os.environ['PATH'])

    def __enter__(self):
        overlay = os.path.join(self.work, 'board.qcow2')
        subprocess.run(['qemu-img', 'create', '-q', '-f', 'qcow2', '-F', 'raw', '-b',
                        os.path.join(self.img, 'root.img'), overlay], check=True)
        self.ssh_config()
        q = ['qemu-system-aarch64', '-M', 'virt', '-cpu', 'cortex-a72',
             '-smp', str(self.smp), '-m', str(self.mem), '-nographic', '-no-reboot',
             '-kernel', os.path.join(self.img, f'vmlinuz-{self.krel}'),
             '-initrd', os.path.join(self.img, f'initrd.img-{self.krel}'),
             '-append', 'root=/dev/vda rw console=ttyAMA0 net.ifnames=0 panic=-1',
             '-drive', f'file={overlay},format=qcow2,if=none,id=d0,cache=unsafe',
             '-device', 'virtio-blk-pci,drive=d0',
             '-netdev', f'user,id=u0,hostfwd=tcp:127.0.0.1:{self.ssh_port}-:22',
             '-device', 'virtio-net-pci,netdev=u0',
             '-netdev', f'socket,id=l0,listen=127.0.0.1:{self.link_port}',
             '-device', 'virtio-net-pci,netdev=l0,mac=52:54:00:99:00:01']
        self.console_f = open(self.console, 'w')
        self.qemu = subprocess.Popen(q, stdin=subprocess.DEVNULL, stdout=self.console_f,
                                     stderr=subprocess.STDOUT)
        try:
            self.wait_ssh()
        except BaseException:
            # __exit__ is not called when __enter__ raises
            self.qemu.kill()
            self.qemu.wait()
            self.console_f.close()
            raise
        return self

    def wait_ssh(self):
        deadline = time.monotonic() + self.boot_timeout
        while True:
            if self.qemu.poll() is not None:
                raise RuntimeError(f'the board stopped while booting (QEMU exit {self.qemu.returncode}); '
                                   f'console in {self.console}')
            r = self.ssh('true', check=False, timeout=30, quiet=True)
            if r.returncode == 0:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f'no ssh on the board after {self.boot_timeout} s; '
                                   f'console in {self.console}')
            time.sleep(3)
        self.boot_s = self.boot_timeout - (deadline - time.monotonic())

    def ssh(self, cmd, check=True, timeout=900, quiet=False):
        r = subprocess.run(['ssh', '-F', self.config, 'board', cmd], capture_output=True,
                           text=True, timeout=timeout, errors='replace')
        if check and r.returncode:
            raise RuntimeError(f'ssh board {cmd!r}: exit {r.returncode}\n{r.stdout}{r.stderr}')
        return r

    def __exit__(self, *exc):
        if self.qemu and self.qemu.poll() is None:
            try:
                self.ssh('systemctl poweroff', check=False, timeout=30, quiet=True)
                self.qemu.wait(timeout=120)
            except subprocess.TimeoutExpired:
                self.qemu.kill()
                self.qemu.wait()
        self.console_f.close()
        return False

    def kernel_log(self):
        return self.ssh('dmesg', check=False, timeout=120).stdout


class Peer:
    """The traffic peer: a lab guest cabled to the board's eth1, running
    tests/boards/peer.sh until stop().  AUTHORIZED: the public key it lets in."""

    def __init__(self, board, authorized, timeout=3600):
        self.board = board
        self.dir = os.path.join(board.work, 'peer')
        os.makedirs(self.dir, exist_ok=True)
        with open(os.path.join(self.dir, 'authorized_keys'), 'w') as f:
            f.write(authorized.strip() + '\n')
        self.timeout = timeout
        self.proc = None

    def __enter__(self):
        self.out = open(os.path.join(self.board.work, 'peer.log'), 'w')
        self.proc = subprocess.Popen(
            # two vCPUs: pktgen's thread spins on CPU 0, sshd answers on CPU 1
            [os.path.join(ROOT, 'scripts/lab/run'), '--smp', '2', '--mem', '1024',
             '--timeout', str(self.timeout), '--net', f'connect=127.0.0.1:{self.board.link_port}',
             '--log', os.path.join(self.board.work, 'peer.dmesg'), '--',
             os.path.join(HERE, 'peer.sh'), self.dir, PEER_LINK, PEER_MAC],
            stdin=subprocess.DEVNULL, stdout=self.out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 600
        ready = os.path.join(self.dir, 'ready')
        while not os.path.exists(ready):
            err = None
            if self.proc.poll() is not None:
                err = f'the peer stopped (exit {self.proc.returncode}); see {self.out.name}'
            elif time.monotonic() > deadline:
                err = f'the peer was not ready within 600 s; see {self.out.name}'
            if err:
                self.__exit__()
                raise RuntimeError(err)
            time.sleep(2)
        return self

    def __exit__(self, *exc):
        with open(os.path.join(self.dir, 'stop'), 'w'):
            pass
        try:
            self.rc = self.proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            # scripts/lab/run stops its guest on SIGUSR1 (exit 124)
            self.proc.send_signal(signal.SIGUSR1)
            self.rc = self.proc.wait()
        self.out.close()
        return False
