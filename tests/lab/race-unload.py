#!/usr/bin/env python3
"""Guest side: `rmmod pp_backport` racing the return of destroyed pools' last pages.

Each round binds a packet socket on lo, loads pp_backport with a release
period of 1 ms, lets pp_sockhold send datagrams from several pools into that
socket and destroy the pools (their pages stay in the socket), unloads
pp_sockhold, then drains and closes the socket and unloads pp_backport at
nearly the same moment: reading the socket gives the pages back, so each
destroyed pool's release work frees its pool while the module's exit walks
the pools.  The drain is offset from the unload by a delay swept over the
rounds, from 8 ms before the unload to 2 ms after it.  The modules are
loaded and unloaded with the syscalls themselves (no fork and exec between
the two sides).

The lab fails the run on any splat (use-after-free, double free, slab
poison: run-all.sh boots it with slub_debug); this script fails when
a syscall does, or when pp_backport stays loaded.

    race-unload.py [ROUNDS]     (default 200)
"""
import ctypes
import os
import socket
import sys
import threading
import time

SYS_FINIT_MODULE = 313      # x86_64
SYS_DELETE_MODULE = 176
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
libc = ctypes.CDLL(None, use_errno=True)
# another build of kmod/ (a negative control: the code before a fix)
MODS = os.environ.get("PP_KMOD", "kmod")
BACKPORT_PARAMS = os.environ.get("PP_BACKPORT_PARAMS", "release_retry_ms=1 lend_timeout_ms=600000")


def load(path, params=""):
    fd = os.open(os.path.join(ROOT, path), os.O_RDONLY)
    try:
        if libc.syscall(SYS_FINIT_MODULE, fd, params.encode(), 0) != 0:
            e = ctypes.get_errno()
            raise OSError(e, f"finit_module {path}: {os.strerror(e)}")
    finally:
        os.close(fd)


def unload(name):
    if libc.syscall(SYS_DELETE_MODULE, name.encode(), os.O_NONBLOCK) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"delete_module {name}: {os.strerror(e)}")


def loaded(name):
    with open("/proc/modules") as f:
        return any(line.split()[0] == name for line in f)


def one_round(r, delay_s):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(0x0800))
    s.bind(("lo", 0x0800))
    s.setsockopt(socket.SOL_SOCKET, 33, 4 << 20)   # SO_RCVBUFFORCE
    load(f"{MODS}/pool/pp_backport.ko", BACKPORT_PARAMS)
    load(f"{MODS}/tests/pp_sockhold.ko", "port=9999 count=4 pools=16")
    unload("pp_sockhold")
    start = threading.Event()

    def closer():
        start.wait()
        if delay_s > 0:
            time.sleep(delay_s)
        # Reading frees each skb at once; close() alone would wait for a
        # grace period (packet_release) and miss the moment.
        s.setblocking(False)
        try:
            while s.recv(4096):
                pass
        except BlockingIOError:
            pass
        s.close()

    t = threading.Thread(target=closer)
    t.start()
    if delay_s < 0:
        start.set()
        time.sleep(-delay_s)
        unload("pp_backport")
    else:
        start.set()
        unload("pp_backport")
    t.join()
    if loaded("pp_backport"):
        raise RuntimeError(f"round {r}: pp_backport still loaded")


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    os.system("ip link set lo up")
    t0 = time.monotonic()
    # close from 8 ms before the unload (the release work runs once a
    # jiffy, up to 4 ms after the pages came back) to 2 ms after it, in
    # 0.1 ms steps (coarser with fewer than 101 rounds: the whole span)
    span = min(rounds, 101)
    for r in range(rounds):
        delay = (-80 + (r % span) * 100 / max(span - 1, 1)) * 1e-4
        try:
            one_round(r, delay)
        except (OSError, RuntimeError) as e:
            print(f"FAIL: round {r} (close {delay * 1e3:+.1f} ms): {e}", flush=True)
            return 1
    print(f"race-unload: {rounds} rounds in {time.monotonic() - t0:.0f} s, "
          "close swept from -8.0 to +2.0 ms around the unload", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
