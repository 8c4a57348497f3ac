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
#   ethstat IFNAME KEY     one ethtool -S counter
#   qstats IFNAME KEY      KEY (e.g. packets) of every RX queue: "n0 n1 ..."
#   conserved              every ppsim pool's books balance: allocated ==
#                          released + orphaned + cache + ring + inflight
#   ppsim_unload           rmmod ppsim then pp_backport, checked: pools gone,
#                          nothing leaked or orphaned in the kernel log
KMOD=${PPSIM_KMOD:-kmod}
UAPI=kmod/include/uapi/linux/ppsim.h
log0=$(dmesg | wc -l)

ppsim_load() {
	PPSIM_KMOD=$KMOD tests/lab/ppsim-load.sh lend_timeout_ms=600000
}

quiet() { "$@" > /dev/null; }
ethstat() { ethtool -S "$1" | awk -v k="$2:" '$1 == k { print $2 }'; }
qstats() {
	ethtool -S "$1" | awk -v k="$2" '$1 ~ "^rx[0-9]+_" k ":$" { printf "%s ", $2 }' | sed 's/ $//'
}
sysstat() { cat "/sys/class/net/$1/statistics/$2"; }

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
	$PPCTL --json list > build/lab/ppsim-list.json &&
		$PPCTL --json stats > build/lab/ppsim-stats.json &&
		python3 - build/lab/ppsim-list.json build/lab/ppsim-stats.json <<'PY'
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
	wait_for 10 unbalanced > build/lab/ppsim-books.txt
	local rc=$?
	sed 's/^/# books: /' build/lab/ppsim-books.txt
	return $rc
}

ppsim_pools() {
	$PPCTL --json list | python3 -c '
import json, sys
print(sum(1 for p in json.load(sys.stdin)["pools"] if p["owner"] == "ppsim"))'
}
no_pools() { [ "$(ppsim_pools)" -eq 0 ]; }
ppsim_unload() {
	local c
	check "unload ppsim" rmmod ppsim
	# skbs freed on another CPU wait on its defer list until its next RX softirq
	ip link set lo up
	for c in $(seq 0 $(($(nproc) - 1))); do
		taskset -c "$c" ping -c 1 -W 1 127.0.0.1 > /dev/null 2>&1
	done
	check "ppsim's pools gone (every page came back)" wait_for 20 no_pools
	check "pp_backport unloads" rmmod pp_backport
	check "nothing leaked or orphaned" \
		sh -c "! dmesg | tail -n +$((log0 + 1)) | grep -Ei 'ppkit.*(leak|orphan)'"
}

# tcp_exact NS ADDR BYTES: BYTES over TCP to ADDR (in namespace NS), the
# receiver's byte count and SHA-256 checked against the sender's (iperf3's
# receiver stops counting a little before the last segment; this does not)
tcp_exact() {
	local ns=$1 addr=$2 bytes=$3 srv
	ip netns exec "$ns" python3 - "$addr" <<'PY' &
import hashlib, socket, sys
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind((sys.argv[1], 5202))
ls.listen(1)
c, _ = ls.accept()
h, n = hashlib.sha256(), 0
while True:
    b = c.recv(1 << 16)
    if not b:
        break
    h.update(b)
    n += len(b)
c.sendall(f"{n} {h.hexdigest()}".encode())
c.close()
PY
	srv=$!
	wait_for 20 sh -c "ip netns exec $ns ss -Hltn 'sport = :5202' | grep -q ."
	timeout 120 python3 - "$addr" "$bytes" <<'PY'
import hashlib, socket, sys
n = int(sys.argv[2])
block = bytes(range(256)) * 256
data = (block * (n // len(block) + 1))[:n]
s = socket.create_connection((sys.argv[1], 5202), timeout=60)
s.sendall(data)
s.shutdown(socket.SHUT_WR)
got = s.recv(200).decode().split()
want = [str(n), hashlib.sha256(data).hexdigest()]
print(f"# receiver counted {got[0] if got else '?'} bytes of {n}, sha256 {'matches' if got == want else 'DIFFERS'}")
sys.exit(0 if got == want else 1)
PY
	local rc=$?
	kill "$srv" 2> /dev/null
	wait "$srv" 2> /dev/null
	return $rc
}
