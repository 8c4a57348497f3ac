# shellcheck shell=bash
# Sourced by the ppsim-*.sh lab tests, after checks.sh; needs $PPCTL.
#   ppsim_load             insmod pp_backport and ppsim (devs=0) from $KMOD
#                          (default kmod; PPSIM_KMOD=DIR loads another
#                          build's, e.g. the one before a fix)
#   ppsim_nl CMD IFNAME [ATTR=VALUE...]
#                          a ppsim genl request with attributes ppctl does not
#                          have yet (tx_delay_us, gen_flows, ...: the uapi's
#                          PPSIM_A_* names in lower case, types from its
#                          comments); dev-get prints the reply as JSON; an
#                          error prints the extack message and fails
#   log_clean              the kernel log since this was sourced
#                          (tests/lab/ktap-load.sh's marker) reports no
#                          leak and no orphaned page of ppkit's
#   ethstat IFNAME KEY     one ethtool -S counter
#   qstats IFNAME KEY      KEY (e.g. packets) of every RX queue: "n0 n1 ..."
#   conserved              every ppsim pool's books balance: allocated ==
#                          released + orphaned + cache + ring + inflight
#   ppsim_unload           rmmod ppsim then pp_backport, checked: pools gone,
#                          nothing leaked or orphaned in the kernel log
#   tcp_exact NS ADDR BYTES [STREAMS]
#                          TCP to ADDR in NS, every byte counted and hashed at
#                          the receiver
#   iperf3_received JSON BYTES
#                          iperf3's receiver count (the server's report)
#                          against its sender's
KMOD=${PPSIM_KMOD:-kmod}
# the books' files, in the guest: scenarios of several guests at once (make
# test's slots) must not share them
SIM_TMP=$(mktemp -d)
UAPI=kmod/include/uapi/linux/ppsim.h
# shellcheck source=tests/lab/ktap-load.sh
. tests/lab/ktap-load.sh
kmsg_mark "ppsim-lib: $0"

ppsim_load() {
	PPSIM_KMOD=$KMOD tests/lab/ppsim-load.sh lend_timeout_ms=600000
}

quiet() { "$@" > /dev/null; }
ethstat() { ethtool -S "$1" | awk -v k="$2:" '$1 == k { print $2 }'; }
qstats() {
	ethtool -S "$1" | awk -v k="$2" '$1 ~ "^rx[0-9]+_" k ":$" { printf "%s ", $2 }' | sed 's/ $//'
}

ppsim_nl() {
	python3 - "$UAPI" "$@" <<'PY'
import json, os, re, socket, struct, sys
hdr, cmd, ifname, *kv = sys.argv[1:]
text = open(hdr).read()
# PPSIM_A_* in enum order, with the type their comment starts with
enum = text[text.index("PPSIM_A_UNSPEC"):text.index("__PPSIM_A_MAX")]
attrs, types = {}, {}
for i, m in enumerate(re.finditer(r"^\s*PPSIM_A_(\w+),\s*(?:/\*\s*(\w+))?", enum, re.M)):
    attrs[m.group(1).lower()] = i
    types[i] = m.group(2) or ""
cmds = {"dev-get": 1, "dev-set": 4, "gen-start": 5, "gen-stop": 6}
fmt = {"u8": "B", "u16": "H", "u32": "I", "s32": "i", "u64": "Q"}

def attr(t, payload):
    n = 4 + len(payload)
    return struct.pack("HH", n, t) + payload + b"\0" * (-n % 4)

def parse(buf):
    out = {}
    while len(buf) >= 4:
        n, t = struct.unpack_from("HH", buf)
        out[t & 0x3fff] = buf[4:n]
        buf = buf[(n + 3) & ~3:]
    return out

s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 16)
s.setsockopt(270, 11, 1)        # NETLINK_EXT_ACK
s.bind((0, 0))
seq = 0

def request(family, c, payload, flags=0x5):  # NLM_F_REQUEST | NLM_F_ACK
    global seq
    seq += 1
    body = struct.pack("BBH", c, 1, 0) + payload
    s.send(struct.pack("IHHII", 16 + len(body), family, flags, seq, 0) + body)
    replies = []
    while True:
        data = s.recv(65536)
        while data:
            n, typ, fl = struct.unpack_from("IHH", data)
            msg, data = data[:n], data[(n + 3) & ~3:]
            if typ == 2:                     # NLMSG_ERROR
                err = struct.unpack_from("i", msg, 16)[0]
                if err:
                    off = 20 + (16 if fl & 0x100 else struct.unpack_from("I", msg, 20)[0])
                    tlv = parse(msg[off:]) if fl & 0x200 else {}
                    why = tlv.get(1, b"").rstrip(b"\0").decode()
                    print(f"ppsim_nl: {cmd}: {os.strerror(-err)} ({err}): {why}", file=sys.stderr)
                    sys.exit(1)
                return replies
            replies.append(parse(msg[20:]))

fam = request(16, 3, attr(2, b"ppsim\0"))[0]  # CTRL_CMD_GETFAMILY
family = struct.unpack("H", fam[1][:2])[0]
payload = attr(attrs["ifindex"], struct.pack("I", socket.if_nametoindex(ifname)))
for item in kv:
    k, v = item.split("=", 1)
    t = attrs[k]
    payload += attr(t, struct.pack(fmt[types[t]], int(v, 0)))
rep = request(family, cmds[cmd], payload)
if cmd == "dev-get":
    names = {v: k for k, v in attrs.items()}
    d = {}
    for t, v in rep[0].items():
        f = fmt.get(types.get(t, ""))
        if f and len(v) == struct.calcsize(f):
            d[names[t]] = struct.unpack(f, v)[0]
    print(json.dumps(d))
PY
}

# the pools of ppsim (ppctl list) whose books do not balance (ppctl stats)
unbalanced() {
	$PPCTL --json list > "$SIM_TMP/list.json" &&
		$PPCTL --json stats > "$SIM_TMP/stats.json" &&
		python3 - "$SIM_TMP/list.json" "$SIM_TMP/stats.json" <<'PY'
import json, sys
ours = {p["id"] for p in json.load(open(sys.argv[1]))["pools"] if p["owner"] == "ppsim"}
bad = []
for p in json.load(open(sys.argv[2]))["pools"]:
    if p["id"] not in ours:
        continue
    c, g = p["counters"], p["gauges"]
    rhs = c["pages_released"] + c["pages_orphaned"] + g["cache_pages"] + g["ring_pages"] + g["inflight"]
    if c["pages_allocated"] != rhs:
        bad.append((p["id"], c["pages_allocated"], rhs))
print(f"{len(ours)} pools", "balanced" if not bad else f"(id, allocated, released+orphaned+cache+ring+inflight): {bad}")
sys.exit(1 if bad or not ours else 0)
PY
}
conserved() {
	wait_for 10 unbalanced > "$SIM_TMP/books.txt"
	local rc=$?
	sed 's/^/# books: /' "$SIM_TMP/books.txt"
	return $rc
}

ppsim_pools() {
	$PPCTL --json list | python3 -c '
import json, sys
print(sum(1 for p in json.load(sys.stdin)["pools"] if p["owner"] == "ppsim"))'
}
no_pools() { [ "$(ppsim_pools)" -eq 0 ]; }
log_clean() {
	local log
	log=$(kmsg_since) || { echo "$log"; return 1; }
	! grep -Ei 'ppkit.*(leak|orphan)' <<< "$log"
}
ppsim_unload() {
	check "unload ppsim" rmmod ppsim
	flush_defer_lists
	check "ppsim's pools gone (every page came back)" wait_for 20 no_pools
	check "pp_backport unloads" rmmod pp_backport
	check "nothing leaked or orphaned" log_clean
}

# tcp_exact NS ADDR BYTES [STREAMS]: BYTES over TCP to ADDR (in namespace
# NS), on STREAMS connections at once (default 1; each its share, from its
# own source port), each receiver's byte count and SHA-256 checked against
# its sender's.  iperf3 (3.12) cannot do this: its server closes the data
# sockets without reading on when the client says the test ended, so it
# counts what had been read by then, not what arrived (16777216 sent,
# 15728640 counted over the host's loopback).
tcp_exact() {
	local ns=$1 addr=$2 bytes=$3 streams=${4:-1} srv
	ip netns exec "$ns" python3 - "$addr" "$streams" <<'PY' &
import hashlib, socket, sys, threading
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((sys.argv[1], 5202))
ls.listen(int(sys.argv[2]))

def serve(c):
    h, n = hashlib.sha256(), 0
    while True:
        b = c.recv(1 << 16)
        if not b:
            break
        h.update(b)
        n += len(b)
    c.sendall(f"{n} {h.hexdigest()}".encode())
    c.close()

ts = []
for _ in range(int(sys.argv[2])):
    c, _ = ls.accept()
    ts.append(threading.Thread(target=serve, args=(c,)))
    ts[-1].start()
for t in ts:
    t.join()
PY
	srv=$!
	wait_for 20 sh -c "ip netns exec $ns ss -Hltn 'sport = :5202' | grep -q ."
	timeout 180 python3 - "$addr" "$bytes" "$streams" <<'PY'
import hashlib, socket, sys, threading
total, k = int(sys.argv[2]), int(sys.argv[3])
res = [None] * k

def send(i):
    n = total // k + (1 if i < total % k else 0)
    block = bytes((j + i) % 256 for j in range(256)) * 256
    data = (block * (n // len(block) + 1))[:n]
    s = socket.create_connection((sys.argv[1], 5202), timeout=120)
    s.sendall(data)
    s.shutdown(socket.SHUT_WR)
    got = b""
    while True:
        b = s.recv(200)
        if not b:
            break
        got += b
    res[i] = (got.decode().split(), [str(n), hashlib.sha256(data).hexdigest()])

ts = [threading.Thread(target=send, args=(i,)) for i in range(k)]
for t in ts:
    t.start()
for t in ts:
    t.join()
bad = [i for i, r in enumerate(res) if r is None or r[0] != r[1]]
got = sum(int(r[0][0]) for r in res if r and r[0])
print(f"# {k} stream(s): the receiver counted {got} bytes of {total}; "
      f"byte count or sha256 wrong on streams {bad}" if bad else
      f"# {k} stream(s): the receiver counted {got} bytes of {total}, every sha256 matches")
sys.exit(1 if bad or got != total else 0)
PY
	local rc=$?
	kill "$srv" 2> /dev/null
	wait "$srv" 2> /dev/null
	return $rc
}

# iperf3_received JSON BYTES: what iperf3's receiver (the server's report in
# the client's JSON) counted, stream by stream, against what its sender
# sent: BYTES sent in all, every stream received some and at most what it
# was sent, and what is missing is at most what the stream's two sockets can
# still hold when iperf3's server stops reading (see tcp_exact: the
# sender's send buffer and the receiver's receive buffer, each at most
# tcp_wmem's and tcp_rmem's maximum).  tcp_exact checks the exact count.
iperf3_received() {
	python3 - "$1" "$2" "$(cut -f3 /proc/sys/net/ipv4/tcp_wmem)" "$(cut -f3 /proc/sys/net/ipv4/tcp_rmem)" <<'PY'
import json, sys
path, want, wmem, rmem = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
try:
    d = json.load(open(path))
    streams = [(s["sender"]["bytes"], s["receiver"]["bytes"]) for s in d["end"]["streams"]]
    sent, got = d["end"]["sum_sent"]["bytes"], d["end"]["sum_received"]["bytes"]
except (OSError, ValueError, KeyError, TypeError) as e:
    print(f"# iperf3 gave no result: {e}")
    sys.exit(1)
room = len(streams) * (wmem + rmem)
print(f"# iperf3: sent {sent} on {len(streams)} stream(s), its receiver counted {got} "
      f"({sent - got} short; at most {room} may be)")
bad = [i for i, (s, r) in enumerate(streams) if not 0 < r <= s or s - r > wmem + rmem]
if bad:
    print(f"# streams received nothing, more than sent or too little: {bad}: {streams}")
sys.exit(0 if sent >= want and got == sum(r for _, r in streams) and got <= sent
         and sent - got <= room and not bad else 1)
PY
}
