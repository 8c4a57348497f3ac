#!/usr/bin/python3
"""Dump the ppkit family's statistics with lent ages in a loop, as fast as a
process can: what any user may ask (tests/lab/rtnl-stall.sh runs it as
nobody).  No exec between dumps, so the kernel's side of the loop is as busy
as one reader can make it.

  stats-reader.py UAPI_HEADER READY_FILE

Touches READY_FILE after its first complete dump; runs until killed.
"""
import os
import re
import signal
import socket
import struct
import sys
import time

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 0x1, 0x4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3


def enum_value(text, first, name):
    """NAME's value in the uapi enum that starts at FIRST (= 0)."""
    body = text[text.index(first):]
    names = re.findall(r"^\s*(PPKIT_\w+)\s*[,=]", body, re.M)
    return names.index(name)


def attr(t, payload=b""):
    n = 4 + len(payload)
    return struct.pack("HH", n, t) + payload + b"\0" * (-n % 4)


def attrs(buf):
    out = {}
    while len(buf) >= 4:
        n, t = struct.unpack_from("HH", buf)
        out[t & 0x3fff] = buf[4:n]
        buf = buf[(n + 3) & ~3:]
    return out


def main():
    text = open(sys.argv[1]).read()
    ready = sys.argv[2]
    stats_get = enum_value(text, "PPKIT_CMD_UNSPEC", "PPKIT_CMD_STATS_GET")
    lent_ages = enum_value(text, "PPKIT_A_STATS_UNSPEC", "PPKIT_A_STATS_LENT_AGES")
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
    s.bind((0, 0))
    seq = 0

    def send(family, cmd, payload, flags):
        nonlocal seq
        seq += 1
        body = struct.pack("BBH", cmd, 1, 0) + payload
        s.send(struct.pack("IHHII", 16 + len(body), family, flags, seq, 0) + body)

    def replies():
        """The messages of the request just sent, until DONE or the ack."""
        while True:
            buf = s.recv(1 << 20)
            while len(buf) >= 16:
                n, typ = struct.unpack_from("IH", buf)
                msg, buf = buf[:n], buf[(n + 3) & ~3:]
                if typ == NLMSG_DONE:
                    return
                if typ == NLMSG_ERROR:
                    err = struct.unpack_from("i", msg, 16)[0]
                    if err:
                        raise OSError(-err, os.strerror(-err))
                    return
                yield msg

    send(GENL_ID_CTRL, CTRL_CMD_GETFAMILY, attr(CTRL_ATTR_FAMILY_NAME, b"ppkit\0"),
         NLM_F_REQUEST | NLM_F_ACK)
    family = None
    for msg in replies():
        a = attrs(msg[20:])
        family = struct.unpack("H", a[CTRL_ATTR_FAMILY_ID][:2])[0]
    if family is None:
        print("stats-reader: no ppkit family: load pp_backport", file=sys.stderr)
        return 1
    dumps, t0 = 0, time.monotonic()

    def done(*_):
        t = time.monotonic() - t0
        print(f"# stats-reader: {dumps} dumps in {t:.1f} s ({dumps / max(t, 1e-9):.0f}/s)",
              file=sys.stderr, flush=True)
        sys.exit(0)
    signal.signal(signal.SIGTERM, done)
    while True:
        send(family, stats_get, attr(lent_ages), NLM_F_REQUEST | NLM_F_DUMP)
        pools = sum(1 for _ in replies())
        dumps += 1
        if dumps == 1:
            open(ready, "w").write(f"{pools} pools\n")


if __name__ == "__main__":
    sys.exit(main())
