#!/bin/bash
# The driver lanes of `make test`, each timed:
#   build-ARCH    pp_backport and every driver for ARCH, patched and unpatched,
#                 with sparse (when the run has ARCH's static lane; else the
#                 patched build alone); vermagic checked against Debian's
#                 (build.sh)
#   series        every series (and its fixes-only set) applies with no fuzz
#                 to every point release driver.conf claims (tested_LINE=),
#                 each from its own cached source, and each cross target's
#                 kernel from the package lists is a claimed release
#                 (tests/drivers/series.sh)
#   unsupported-version  a kernel source of another stable line, or older
#                 than the tested releases, is refused with the reason
#   point-release  a newer point release of the line (6.1.193, simulated)
#                 is built with a notice and loaded; a patch that no
#                 longer applies to it fails the build by name
#   static-ARCH   sparse and checkpatch --strict: nothing the unpatched driver
#                 does not already have
#   load-ARCH     every module loads and unloads with pp_backport in QEMU
#                 (x86_64 lab, arm64 -M virt)
#   build-, static-, load-ARCH-LINE, orangepi-LINE  the same for a line of
#                 the kernel matrix (5.10, 6.12), its kernel and drivers/*/LINE/
#                 (x86_64: the lab kernel of the line; arm: its armmp kernel;
#                 arm64-16k: 6.12's arm64 kernel with 16 KiB pages, on -cpu max)
#   mcbin         Debian's own mvpp2 on the emulated Macchiatobin (ppkit's
#                 QEMU with the PPv2 model): probe, link, ping, TCP both
#                 ways, MTU 9000, XDP, ethtool -S, down/up, unload; with and
#                 without swiotlb=force (tests/emu/mcbin.py; MCBIN_MODES=swiotlb:
#                 with it only, as make test runs it)
#   orangepi      stmmac on qemu -M orangepi-pc: TCP both ways, ppctl hit
#                 rate, ORANGEPI_STRESS_S (default 20; make soak: 150) s of
#                 /proc/net/dev reads under traffic; under TCP both ways,
#                 XDP_TX and XDP_REDIRECT echoes counted at both ends, MTU
#                 changes (2000, 3000, 1280, 1500; 4000 and 9000 refused),
#                 and down/up cycles with the counters still counting
# Prints 'drivers: N passed, N failed'; exits non-zero if a lane failed.
#
#   tests/drivers/run.sh [LANE...]     (default: make test's lanes, the 6.1
#                                       ones and build and load of 5.10's
#                                       and 6.12's x86_64 drivers)
#   tests/drivers/run.sh lines         every lane of the other lines (make
#                                       test-matrix)
set -u
cd "$(dirname "$0")/../.." || exit 1
# shellcheck source=tests/tier/results.sh
. tests/tier/results.sh
# this run's logs (build/drivers/results links to the last run's)
OUT=build/drivers/runs/$(date +%Y%m%d-%H%M%S)-$$
mkdir -p "$OUT"
ln -sfn "$(realpath "$OUT")" build/drivers/results
pass=0 failn=0 failed=() times=()

lane() {
	local name=$1 t0=$SECONDS rc limit note
	shift
	# each lane's time limit (s): a hung guest costs that much, no more
	case $name in build-*) limit=1800 ;; orangepi* | mcbin*) limit=900 ;; *) limit=600 ;; esac
	echo "=== drivers: $name (at most $limit s)"
	# a lane may be a function of this script: timeout runs it in a bash
	# that has it (export -f, below)
	timeout --foreground -k 15 "$limit" bash -c '"$@"' lane "$@" >"$OUT/$name.log" 2>&1
	rc=$?
	sed 's/^/    /' "$OUT/$name.log" | tail -40
	case $rc in 0) note= ;; 124 | 137) note="timed out after $limit s; log $OUT/$name.log" ;; *) note="exit $rc; log $OUT/$name.log" ;; esac
	# a row per lane; another line's lane is its 6.1 lane on that kernel's
	# column (make test-matrix's table: scenario x kernel)
	local row=$name col=${name#*-}
	if [ "${DRV_LINE:-6.1}" != 6.1 ]; then
		row=${name%-"$DRV_LINE"} col="debian $DRV_LINE"
	fi
	results_row "${PPKIT_RESULTS:-}" "drivers: $row" "$col" \
		"$([ $rc -eq 0 ] && echo pass || echo FAIL)" $((SECONDS - t0)) "$limit" "$note"
	if [ $rc -eq 0 ]; then
		echo "=== drivers: $name: PASS ($((SECONDS - t0)) s)"
		pass=$((pass + 1))
	else
		echo "=== drivers: $name: FAIL (exit $rc, $((SECONDS - t0)) s; log $OUT/$name.log)"
		failn=$((failn + 1))
		failed+=("$name")
	fi
	times+=("$name $((SECONDS - t0))s")
}

build_both() { # arch
	scripts/drivers/build.sh --sparse "$1" && scripts/drivers/build.sh --unpatched --sparse "$1"
}

drivers_for() { # arch -> drivers built for it on the line DRV_LINE (6.1)
	local c
	for c in drivers/*/driver.conf; do
		grep -q "^config_${1%-16k}=" "$c" && [ -f "$(dirname "$c")/${DRV_LINE:-6.1}/series" ] &&
			basename "$(dirname "$c")"
	done
}

# The armhf ppctl (make tools ARCH=arm) and its libraries, for the guest.
orangepi() {
	local g=build/guest-root/arm
	[ -x build/bin/arm/ppctl ] || { echo "no build/bin/arm/ppctl: run make tools ARCH=arm"; return 1; }
	rm -rf "$g"
	mkdir -p "$g/usr/bin"
	arm-linux-gnueabihf-strip -o "$g/usr/bin/ppctl" build/bin/arm/ppctl
	SYSROOT=$(scripts/tools/sysroot.sh arm) scripts/tools/guest-libs.sh arm build/bin/arm/ppctl "$g" ||
		return 1
	local own=build/drivers/arm out=build/drivers/orangepi
	if [ "${DRV_LINE:-6.1}" != 6.1 ]; then
		own=$own-$DRV_LINE out=$out-$DRV_LINE
	fi
	# the XDP phases where the driver has XDP (5.10's stmmac has none)
	local xdp=--xdp src=$own/work/stmmac/drivers/net/ethernet/stmicro/stmmac/stmmac_main.c
	[ -f "$src" ] || { echo "no $src: run the build lane first"; return 1; }
	if ! grep -q '\.ndo_bpf' "$src"; then
		xdp=
		# by design, not a gap of this machine: a "not run" row
		echo "not run: XDP phases: the line's stmmac has no XDP (no ndo_bpf in $src)"
		results_row "${PPKIT_RESULTS:-}" "drivers: orangepi: XDP phases" "debian ${DRV_LINE:-6.1}" \
			"not run" - - "the line's stmmac has no XDP (no ndo_bpf)"
	fi
	python3 tests/drivers/orangepi.py --set own="$own" --mib 16 --stress "${1:-${ORANGEPI_STRESS_S:-20}}" $xdp \
		--ppctl-root "$g" --json "$out.json" --log "$out.log"
}

# The emulated Macchiatobin (tests/emu/mcbin.py): Debian's unmodified mvpp2
# on the PPv2 model, with the arm64 ppctl (make tools ARCH=arm64) and
# Debian's arm64 ethtool in the guest; once as it boots, once with
# swiotlb=force (every DMA through bounce buffers: a short or missing sync
# shows as wrong bytes).
mcbin() {
	local g=build/guest-root/arm64 sysroot out=build/drivers/mcbin rc=0
	[ -x build/bin/arm64/ppctl ] || make --no-print-directory tools ARCH=arm64 || return 1
	sysroot=$(scripts/tools/sysroot.sh arm64)
	rm -rf "$g"
	mkdir -p "$g/usr/bin" "$g/usr/sbin"
	aarch64-linux-gnu-strip -o "$g/usr/bin/ppctl" build/bin/arm64/ppctl
	cp "$sysroot/sbin/ethtool" "$g/usr/sbin/ethtool"
	SYSROOT=$sysroot scripts/tools/guest-libs.sh arm64 build/bin/arm64/ppctl "$g" >/dev/null &&
		SYSROOT=$sysroot scripts/tools/guest-libs.sh arm64 "$g/usr/sbin/ethtool" "$g" >/dev/null ||
		return 1
	[ "${DRV_LINE:-6.1}" = 6.1 ] || out=$out-$DRV_LINE
	# MCBIN_MODES=swiotlb (make test): the stricter boot alone
	if [ "${MCBIN_MODES:-both}" = swiotlb ]; then
		results_row "${PPKIT_RESULTS:-}" "drivers: mcbin: as booted" "debian arm64 ${DRV_LINE:-6.1}" \
			"not run" - - "make test boots with swiotlb=force only, the stricter; make test-matrix and tests/drivers/run.sh mcbin run both"
	else
		python3 tests/emu/mcbin.py --line "${DRV_LINE:-6.1}" --guest-root "$g" --log "$out.log" || rc=1
	fi
	if [ "${DRV_LINE:-6.1}" != 5.10 ]; then
		python3 tests/emu/mcbin.py --line "${DRV_LINE:-6.1}" --guest-root "$g" --swiotlb \
			--log "$out-swiotlb.log" || rc=1
		return $rc
	fi
	# 5.10's mvpp2_rx syncs the buffer for the CPU from its start, for the
	# frame's length, but the frame lies 224 bytes in (the queue's packet
	# offset): through bounce buffers every frame's tail is stale, and
	# port 1 never answers a ping.  6.1 and 6.12 sync from the offset.
	# Expected here, until Debian's 5.10 carries the fix.
	python3 tests/emu/mcbin.py --line 5.10 --guest-root "$g" --swiotlb --log "$out-swiotlb.log" \
		> "$out-swiotlb.out" 2>&1
	if grep -q '^not ok [0-9]* - ping: port 0' "$out-swiotlb.out"; then
		echo "mcbin 5.10 swiotlb=force: fails at the first ping, as 5.10's RX sync range predicts ($out-swiotlb.out)"
	else
		echo "mcbin 5.10 swiotlb=force: did not fail at the first ping: has 5.10's RX sync changed? ($out-swiotlb.out)"
		rc=1
	fi
	return $rc
}

# A kernel source the series were not tested against is refused by name.
unsupported() {
	local d out rc v want fail=0
	for v in 6.1.150 4.19.316; do
		d=$(mktemp -d)
		printf 'kernelversion:\n\t@echo %s\n' "$v" >"$d/Makefile"
		out=$(KSRC=$d scripts/drivers/build.sh x86_64 stmmac 2>&1)
		rc=$?
		rm -rf "$d"
		echo "$out" | tail -n 1
		case $v in
		6.1.*) want="is not supported: older than the newest tested 6.1 release (tested: 6.1.176 6.1.192)" ;;
		*) want="is not supported: stmmac has a series for the " ;;
		esac
		[ $rc -ne 0 ] && echo "$out" | grep -F "source $v " | grep -qF "$want" ||
			{ echo "FAIL: $v: want '$want'"; fail=1; }
	done
	return $fail
}

# A new point release of the line (a copy of the stmmac folder of the newest
# tested source, called 6.1.193): built with a notice, and loaded in the
# lab; then the same with a line a patch touches changed: the build fails
# and names the patch.
point_release() {
	local src d out rc path fail=0
	src=$(scripts/drivers/prepare.sh --print x86_64 | cut -d' ' -f3)
	path=drivers/net/ethernet/stmicro
	d=$(mktemp -d)
	mkdir -p "$d/$path"
	cp -r "$src/$path/." "$d/$path/"
	printf 'kernelversion:\n\t@echo 6.1.193\n' >"$d/Makefile"
	out=$(KSRC=$d scripts/drivers/build.sh x86_64 stmmac 2>&1)
	rc=$?
	echo "$out" | grep -E 'NOTICE|stmmac \(' | sed 's/^/# /'
	[ $rc -eq 0 ] || { echo "$out" | tail -n 5; echo "FAIL: 6.1.193: the build failed (exit $rc)"; fail=1; }
	echo "$out" | grep -q "NOTICE: stmmac: 6.1.193 is a newer 6.1 point release" ||
		{ echo "FAIL: 6.1.193: no notice"; fail=1; }
	if [ $rc -eq 0 ]; then
		python3 tests/drivers/load.py x86_64 --dir build/drivers/x86_64/ksrc-6.1.193 ||
			{ echo "FAIL: 6.1.193: the modules do not load"; fail=1; }
	fi
	# a line the first patch's first hunk keeps as context, changed
	python3 - "$d" drivers/stmmac/6.1/patches/0001-*.patch <<'PY'
import re, sys
root, patch = sys.argv[1], sys.argv[2]
lines = open(patch).read().splitlines()
for i, l in enumerate(lines):
    if l.startswith("+++ b/"):
        path = l[6:]
        ctx = next(x[1:] for x in lines[i + 2:] if x.startswith(" ") and len(x.strip()) > 8)
        break
f = f"{root}/{path}"
s = open(f).read()
assert ctx in s, ctx
open(f, "w").write(s.replace(ctx, ctx + " /* a later point release */", 1))
PY
	out=$(KSRC=$d scripts/drivers/build.sh x86_64 stmmac 2>&1)
	rc=$?
	echo "$out" | grep -E '^drivers: .*no longer applies' | sed 's/^/# /'
	[ $rc -ne 0 ] && echo "$out" | grep -qE 'stmmac: patch 0[0-9]+-[^ ]+\.patch no longer applies to 6\.1\.193' ||
		{ echo "FAIL: a patch that no longer applies is not named"; fail=1; }
	rm -rf "$d" build/drivers/x86_64/ksrc-6.1.193
	return $fail
}

# (results_row: for the lanes that write a row of their own, e.g. "not run")
export -f build_both drivers_for orangepi mcbin unsupported point_release results_row
lanes=("$@")
# make test: every 6.1 lane, and a build and load of each other line's
# drivers; `lines` (make test-matrix): everything the other lines have
if [ "${lanes[*]}" = lines ]; then
	lanes=(build-x86_64-5.10 static-x86_64-5.10 load-x86_64-5.10
		build-arm64-5.10 static-arm64-5.10 load-arm64-5.10
		build-arm-5.10 static-arm-5.10 orangepi-5.10
		build-x86_64-6.12 static-x86_64-6.12 load-x86_64-6.12
		build-arm64-6.12 static-arm64-6.12 load-arm64-6.12
		build-arm-6.12 static-arm-6.12 orangepi-6.12 mcbin mcbin-5.10 mcbin-6.12
		build-arm64-16k-6.12 load-arm64-16k-6.12)
fi
[ ${#lanes[@]} -gt 0 ] || lanes=(series build-x86_64 build-arm64 build-arm unsupported-version point-release
	static-x86_64 static-arm64 static-arm load-x86_64 load-arm64 orangepi
	build-x86_64-5.10 load-x86_64-5.10 build-x86_64-6.12 load-x86_64-6.12)
for l in "${lanes[@]}"; do
	# build-, static- and load-ARCH[-LINE]: LINE (default 6.1) a line of
	# the kernel matrix, its kernel and drivers/*/LINE/ series
	case "$l" in
	build-* | static-* | load-*)
		# ARCH may have a dash (arm64-16k); LINE is the last, N.N
		rest=${l#*-} arch=${l#*-} line=6.1
		case $rest in
		*-[0-9]*.[0-9]*) line=${rest##*-} arch=${rest%-*} ;;
		esac
		export DRV_LINE=$line
		;;
	esac
	case "$l" in
	# sparse and the unpatched baseline are for the static lane: without
	# one in this run (make test's other lines), the build alone
	build-*) if [[ " ${lanes[*]} " = *" static-${l#build-} "* ]]; then
			lane "$l" build_both "$arch"
		else
			lane "$l" scripts/drivers/build.sh "$arch"
		fi ;;
	static-*) mapfile -t drvs < <(drivers_for "$arch")
		lane "$l" tests/drivers/static.sh "$arch" "${drvs[@]}" ;;
	load-*) lane "$l" python3 tests/drivers/load.py "$arch" ;;
	orangepi) lane "$l" orangepi ;;
	# the Orange Pi PC on another line's armmp kernel (build-arm-LINE first)
	orangepi-[0-9]*) DRV_LINE=${l#orangepi-} lane "$l" orangepi ;;
	series) lane "$l" tests/drivers/series.sh ;;
	# the harness's own refusals: again only when what they test changed
	# (tests/tier/harness-cache.sh; HARNESS_RERUN=1 runs them anyway)
	unsupported-version) lane "$l" tests/tier/harness-cache.sh drivers-unsupported \
			scripts/drivers drivers tests/drivers/run.sh -- bash -c unsupported ;;
	point-release) lane "$l" tests/tier/harness-cache.sh drivers-point-release \
			scripts/drivers drivers kmod/pool kmod/include tests/drivers/run.sh tests/drivers/load.py \
			"@$(scripts/lab/kver 2>/dev/null | sed 's|^|/boot/vmlinuz-|')" -- bash -c point_release ;;
	mcbin) lane "$l" mcbin ;;
	mcbin-[0-9]*) DRV_LINE=${l#mcbin-} lane "$l" mcbin ;;
	orangepi-demo) orangepi 0; exit $? ;;	# make run: no stress, output as it comes
	*) echo "unknown lane $l" >&2; exit 2 ;;
	esac
	unset DRV_LINE
done

echo "drivers: lane times: ${times[*]}"
echo "drivers: $pass passed, $failn failed${failed:+ (${failed[*]})}"
[ $failn -eq 0 ]
