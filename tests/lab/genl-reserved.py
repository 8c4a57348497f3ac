#!/usr/bin/env python3
"""Guest side: the ppkit and ppsim families validate the genetlink header.

A family registered with resv_start_op 0 (as every new family should be)
gets the core's checks on every command: a request whose header has a
non-zero reserved field is refused with EINVAL, while the same request
with it zero is answered (here ENOENT or ENODEV: no pool or device by that
id).

    genl-reserved.py        (pp_backport and ppsim loaded)
"""
import errno
import socket
import struct
import sys

NETLINK_GENERIC = 16
GENL_ID_CTRL = 0x10
CTRL_CMD_GETFAMILY = 3
CTRL_ATTR_FAMILY_ID = 1
CTRL_ATTR_FAMILY_NAME = 2
NLM_F_REQUEST = 1
NLM_F_ACK = 4
NLMSG_ERROR = 2


def attr(kind, data):
    raw = struct.pack("=HH", 4 + len(data), kind) + data
    return raw + b"\0" * (-len(raw) % 4)


class Genl:
    def __init__(self):
        self.s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_GENERIC)
        self.s.bind((0, 0))
        self.seq = 0

    def request(self, family, cmd, attrs=b"", reserved=0):
        """The reply's payload, or -errno: read up to the ack of this request."""
        self.seq += 1
        payload = struct.pack("=BBH", cmd, 1, reserved) + attrs
        self.s.send(struct.pack("=IHHII", 16 + len(payload), family,
                                NLM_F_REQUEST | NLM_F_ACK, self.seq, 0) + payload)
        reply = b""
        while True:
            data = self.s.recv(65536)
            off = 0
            while off + 16 <= len(data):
                size, kind, _, seq, _ = struct.unpack("=IHHII", data[off:off + 16])
                body = data[off + 16:off + size]
                off += (size + 3) & ~3
                if seq != self.seq:
                    continue
                if kind == NLMSG_ERROR:
                    err = struct.unpack("=i", body[:4])[0]
                    return err if err else reply
                reply = body[4:]        # after the genetlink header

    def family(self, name):
        reply = self.request(GENL_ID_CTRL, CTRL_CMD_GETFAMILY,
                             attr(CTRL_ATTR_FAMILY_NAME, name.encode() + b"\0"))
        if isinstance(reply, int):
            raise OSError(-reply, f"family {name}: {errno.errorcode.get(-reply)}")
        off = 0
        while off + 4 <= len(reply):
            size, kind = struct.unpack("=HH", reply[off:off + 4])
            if kind == CTRL_ATTR_FAMILY_ID:
                return struct.unpack("=H", reply[off + 4:off + 6])[0]
            off += (size + 3) & ~3
        raise OSError(errno.ENOENT, f"family {name}: no id")


def main():
    g = Genl()
    fails = 0
    # (family, a do command, its u32 id attribute, the answer for an id
    # that does not exist): pool-get, stats-get, dev-get
    for name, cmd, id_attr, gone in (("ppkit", 1, 2, errno.ENOENT), ("ppkit", 5, 2, errno.ENOENT),
                                     ("ppsim", 1, 1, errno.ENODEV)):
        fam = g.family(name)
        ask = attr(id_attr, struct.pack("=I", 0x7ffffff0))
        plain = g.request(fam, cmd, ask)
        bad = g.request(fam, cmd, ask, reserved=1)
        ok = plain == -gone and bad == -errno.EINVAL
        fails += not ok
        print(f"# {'ok' if ok else 'FAIL'}: {name} command {cmd}: reserved 0 -> {plain}, "
              f"reserved 1 -> {bad} (want {-gone}, {-errno.EINVAL})")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
