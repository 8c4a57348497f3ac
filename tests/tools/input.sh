#!/bin/bash
# Bad input for ppctl and ppctld, on the host: command lines, configuration
# files, API requests and HTTP garbage.  Every bad input must be refused with
# a message and a non-zero exit (1 for usage, 2 for what the kernel or the
# system refused), never a crash; a running daemon must survive its bad
# clients and still answer.  Meant for the sanitizer build (make test-asan:
# any AddressSanitizer, LeakSanitizer or UBSan report fails the case), and
# works with any build:
#
#   tests/tools/input.sh [BIN_DIR]      (default build/tools-asan/bin)
#
# Ends with "input: N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
. tests/lab/checks.sh
BIN=${1:-build/tools-asan/bin}
PPCTL=$BIN/ppctl
PPCTLD=$BIN/ppctld
for b in "$PPCTL" "$PPCTLD"; do
	[ -x "$b" ] || { echo "input: $b missing: make test-asan builds it"; exit 1; }
done
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:exitcode=99}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:exitcode=99}
SAN='AddressSanitizer|LeakSanitizer|runtime error:|UndefinedBehaviorSanitizer'

# refused WANT WHAT CMD...: CMD exits with WANT (1 or 2), says something on
# stderr, and no sanitizer spoke.
refused() {
	local want=$1 what=$2 rc
	shift 2
	"$@" > "$T/out" 2> "$T/err" < /dev/null
	rc=$?
	if [ $rc -eq "$want" ] && [ -s "$T/err" ] && ! grep -Eq "$SAN" "$T/err" "$T/out"; then
		ok "$what: exit $rc, '$(head -1 "$T/err" | cut -c1-100)'"
	else
		bad "$what: exit $rc (want $want)"
		head -20 "$T/err" "$T/out" | sed 's/^/    /'
	fi
}
long=$(head -c 5000 /dev/zero | tr '\0' x)

echo "== ppctl: command lines"
refused 1 "ppctl: unknown command" $PPCTL frobnicate
refused 1 "ppctl: unknown option" $PPCTL stats --frobnicate
refused 1 "ppctl: unknown source" $PPCTL --source bogus list
refused 1 "ppctl set: no pool id" $PPCTL set
refused 1 "ppctl set: pool id not a number" $PPCTL set abc --ring-size 64
refused 1 "ppctl set: pool id past u32" $PPCTL set 99999999999999999999 --ring-size 64
refused 1 "ppctl set: negative ring size" $PPCTL set 1 --ring-size -5
refused 1 "ppctl set: ring size not a number" $PPCTL set 1 --ring-size 6x4
refused 1 "ppctl stats: interval not a duration" $PPCTL stats --interval soon
refused 1 "ppctl stats: negative interval" $PPCTL stats --interval -1s
refused 1 "ppctl history: 5,000-byte pool id" $PPCTL history "$long"
refused 1 "ppctl sim add: zero queues" $PPCTL sim add --rx-queues 0
refused 1 "ppctl sim gen start: 5,000-byte interface name" $PPCTL sim gen start "$long"
refused 1 "ppctl xdp attach: no interface" $PPCTL xdp attach
refused 1 "ppctl: an argument with an invalid UTF-8 byte" $PPCTL stats "$(printf '\xff\xfe')"

echo "== ppctld: command lines"
refused 1 "ppctld: unknown option" $PPCTLD --frobnicate
refused 1 "ppctld: interval 0" $PPCTLD -f --config /dev/null --interval 0
refused 1 "ppctld: interval not a duration" $PPCTLD -f --config /dev/null --interval often
refused 1 "ppctld: history shorter than the interval" $PPCTLD -f --config /dev/null --interval 10s --history 1s
refused 1 "ppctld: history of 6,048,000 points a pool" $PPCTLD -f --config /dev/null --interval 100ms --history 7d
refused 1 "ppctld: listen address without a port" $PPCTLD -f --config /dev/null --listen 127.0.0.1
refused 1 "ppctld: port past 65535" $PPCTLD -f --config /dev/null --listen 127.0.0.1:99999
refused 1 "ppctld: socket mode not octal" $PPCTLD -f --config /dev/null --socket-mode 999
refused 1 "ppctld: max-clients 0" $PPCTLD -f --config /dev/null --max-clients 0
refused 1 "ppctld: hit alert past 100%" $PPCTLD -f --config /dev/null --alert-hit-below 101
refused 1 "ppctld: socket path longer than sun_path" $PPCTLD -f --config /dev/null --listen none --socket "/tmp/$long"

echo "== ppctld: configuration files"
conf() { printf '%s\n' "$@" > "$T/c.conf"; }
conf 'frobnicate = 1'
refused 1 "ppctld.conf: unknown key" $PPCTLD -f --config "$T/c.conf"
conf 'interval = sometimes'
refused 1 "ppctld.conf: bad value" $PPCTLD -f --config "$T/c.conf"
conf 'max-clients = 100000'
refused 1 "ppctld.conf: value out of range" $PPCTLD -f --config "$T/c.conf"
head -c 65536 /dev/urandom > "$T/c.conf"
refused 1 "ppctld.conf: 64 KiB of random bytes" $PPCTLD -f --config "$T/c.conf"
{ printf 'listen = '; head -c 1048576 /dev/zero | tr '\0' 9; echo; } > "$T/c.conf"
refused 1 "ppctld.conf: a 1 MiB value" $PPCTLD -f --config "$T/c.conf"
mkdir "$T/dir.conf"
refused 1 "ppctld.conf: a directory" $PPCTLD -f --config "$T/dir.conf"

echo "== ppctld: bad clients of a running daemon"
port=$((20000 + RANDOM % 20000))
$PPCTLD -f --config /dev/null --socket "$T/api.sock" --listen "127.0.0.1:$port" \
	--interval 200ms > "$T/d.out" 2> "$T/d.err" &
D=$!
check "ppctld starts (its API socket appears)" wait_for 15 test -S "$T/api.sock"
python3 - "$T/api.sock" "$port" > "$T/clients.out" 2>&1 <<'PY'
import json, socket, sys, time
path, port = sys.argv[1], int(sys.argv[2])
def api(payload, read=True):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    try:
        s.sendall(payload)
    except OSError:
        pass
    out = b""
    if read:
        try:
            while not out.endswith(b"\n"):
                b = s.recv(65536)
                if not b:
                    break
                out += b
        except OSError:
            pass
    s.close()
    return out
cases = [
    ("not JSON", b"hello\n"),
    ("JSON, not an object", b"[1,2,3]\n"),
    ("no cmd", b'{"x":1}\n'),
    ("cmd not a string", b'{"cmd":5}\n'),
    ("unknown cmd", b'{"cmd":"frobnicate"}\n'),
    ("history without a pool", b'{"cmd":"history"}\n'),
    ("history of a pool id past u64", b'{"cmd":"history","pool":184467440737095516160}\n'),
    ("a NUL byte", b'{"cmd":"st\x00atus"}\n'),
    ("2,000 nested arrays", b"[" * 2000 + b"]" * 2000 + b"\n"),
    ("100,000 nested arrays", b"[" * 100000 + b"]" * 100000 + b"\n"),
    ("invalid UTF-8", b'{"cmd":"\xff\xfe"}\n'),
    ("a 2 MiB line", b'{"cmd":"' + b"a" * (2 << 20) + b'"}\n'),
]
for name, payload in cases:
    r = api(payload)
    # Every bad request is answered (an oversized one too, before the hang-up):
    # an empty reply is a daemon that said nothing, not a refusal.
    try:
        d = json.loads(r)
        ok = isinstance(d, dict) and "error" in d
    except ValueError:
        ok = False
    print(("ok" if ok else "FAIL") + ": API, " + name + ": " +
          (r[:100].decode(errors="replace").strip() or "(no reply)"))
api(b'{"cmd":"status"}', read=False)            # no newline, then gone
api(b'{"cmd":"pools"}\n' * 2000, read=False)     # never reads the answers
def http(raw):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(raw)
        s.recv(4096)
    except OSError:
        pass
    s.close()
for raw in (b"GARBAGE\r\n\r\n", b"GET /" + b"a" * 100000 + b" HTTP/1.1\r\n\r\n",
            b"GET /metrics HTTP/1.1\r\n" + b"X: y\r\n" * 5000 + b"\r\n",
            b"POST /metrics HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\nabc", b"\x00" * 4096):
    http(raw)
time.sleep(1)
d = json.loads(api(b'{"cmd":"status"}\n'))
print(("ok" if d.get("ok") else "FAIL") + ": after all that the API answers status: " + json.dumps(d)[:100])
PY
prc=$?
while read -r line; do
	case "$line" in
	ok:*) ok "${line#ok: }" ;;
	FAIL:*) bad "${line#FAIL: }" ;;
	*) echo "    $line" ;;
	esac
done < "$T/clients.out"
check "the API clients ran to their end (exit $prc)" test $prc -eq 0
check "ppctld is still running" kill -0 $D
check "/metrics still answers" sh -c "curl -sf --max-time 10 http://127.0.0.1:$port/metrics | grep -q ppctld_samples_total"

echo "== ppctld: a reload whose new endpoints cannot be opened keeps the old ones"
# api_ok SOCK: the API on SOCK answers status.
api_ok() {
	python3 -c 'import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(5)
s.connect(sys.argv[1])
s.sendall(b"{\"cmd\":\"status\"}\n")
r = b""
while not r.endswith(b"\n"):
    b = s.recv(65536)
    if not b:
        break
    r += b
sys.exit(0 if json.loads(r).get("ok") else 1)' "$1" 2> /dev/null
}
metrics_ok() { curl -sf --max-time 5 "http://127.0.0.1:$1/metrics" | grep -q ppctld_samples_total; }
# logged N: the reloading daemon's stderr holds N "SIGHUP" lines.
logged() { [ "$(grep -c SIGHUP "$T/r.err")" -ge "$1" ]; }
rport=$((port + 1))
nport=$((port + 2))
printf 'socket = %s\nlisten = 127.0.0.1:%s\ninterval = 200ms\n' "$T/r.sock" "$rport" > "$T/r.conf"
$PPCTLD -f --config "$T/r.conf" > "$T/r.out" 2> "$T/r.err" &
R=$!
check "ppctld starts with the first configuration" wait_for 15 api_ok "$T/r.sock"
# A free port for the metrics, a socket two directories below any that
# exists (ppctld makes the socket's own directory, not its parents).
printf 'socket = %s\nlisten = 127.0.0.1:%s\n' "$T/none/sub/r.sock" "$nport" > "$T/r.conf"
kill -HUP $R
check "the failed reload is logged" wait_for 10 logged 1
check "the old API socket still answers" api_ok "$T/r.sock"
check "the old metrics port still answers" metrics_ok "$rport"
check "the new metrics port was not left open" sh -c "! curl -s --max-time 2 http://127.0.0.1:$nport/metrics > /dev/null"
# A port another daemon holds.
printf 'socket = %s\nlisten = 127.0.0.1:%s\n' "$T/r.sock" "$port" > "$T/r.conf"
kill -HUP $R
check "the second failed reload is logged" wait_for 10 logged 2
check "the old metrics port still answers after a taken port" metrics_ok "$rport"
check "the API socket still answers after a taken port" api_ok "$T/r.sock"
# Both new, and both free: the daemon moves.
printf 'socket = %s\nlisten = 127.0.0.1:%s\n' "$T/r2.sock" "$nport" > "$T/r.conf"
kill -HUP $R
check "a good reload moves the API socket" wait_for 10 api_ok "$T/r2.sock"
check "a good reload moves the metrics port" wait_for 10 metrics_ok "$nport"
check "the old API socket is gone" test ! -e "$T/r.sock"
kill -TERM $R
wait $R
rc=$?
check "the reloaded ppctld exits 0 on SIGTERM (exit $rc)" test $rc -eq 0
if grep -Eq "$SAN" "$T/r.err" "$T/r.out"; then
	bad "the reloaded daemon's sanitizers reported"
	grep -E -A20 "$SAN" "$T/r.err" | head -40 | sed 's/^/    /'
fi

kill -TERM $D
wait $D
rc=$?
check "ppctld exits 0 on SIGTERM (exit $rc)" test $rc -eq 0
if grep -Eq "$SAN" "$T/d.err" "$T/d.out"; then
	bad "the daemon's sanitizers reported"
	grep -E -A20 "$SAN" "$T/d.err" | head -40 | sed 's/^/    /'
else
	ok "no sanitizer report from the daemon's whole run"
fi
echo "input: $pass passed, $failn failed"
[ "$failn" -eq 0 ]
