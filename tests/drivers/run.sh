#!/bin/bash
# The driver lanes of `make test`, each timed:
#   build-ARCH    pp_backport and every driver for ARCH, patched and unpatched,
#                 with sparse; vermagic checked against Debian's (build.sh)
#   unsupported-version  a kernel source the series are not tested against
#                 is refused with the list of supported versions
#   static-ARCH   sparse and checkpatch --strict: nothing the unpatched driver
#                 does not already have
#   load-ARCH     every module loads and unloads with pp_backport in QEMU
#                 (x86_64 lab, arm64 -M virt)
#   orangepi      stmmac on qemu -M orangepi-pc: TCP both ways, ppctl hit
#                 rate, 150 s of /proc/net/dev reads under traffic
# Prints 'drivers: N passed, N failed'; exits non-zero if a lane failed.
#
#   tests/drivers/run.sh [LANE...]     (default: all)
set -u
cd "$(dirname "$0")/../.."
OUT=build/drivers/results
mkdir -p "$OUT"
pass=0 failn=0 failed=() times=()

lane() {
	local name=$1 t0=$SECONDS rc
	shift
	echo "=== drivers: $name"
	"$@" >"$OUT/$name.log" 2>&1
	rc=$?
	sed 's/^/    /' "$OUT/$name.log" | tail -40
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

drivers_for() { # arch -> drivers built for it
	local c
	for c in drivers/*/driver.conf; do
		grep -q "^config_$1=" "$c" && basename "$(dirname "$c")"
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
	python3 tests/drivers/orangepi.py --set own=build/drivers/arm --mib 16 --stress "${1:-150}" --xdp \
		--ppctl-root "$g" --json build/drivers/orangepi.json
}

# A kernel source the series were not tested against is refused by name.
unsupported() {
	local d out rc
	d=$(mktemp -d)
	printf 'kernelversion:\n\t@echo 6.1.150\n' >"$d/Makefile"
	out=$(KSRC=$d scripts/drivers/build.sh x86_64 stmmac 2>&1)
	rc=$?
	rm -rf "$d"
	echo "$out" | tail -n 2
	[ $rc -ne 0 ] && echo "$out" | grep -q "6.1.150 .* is not supported; supported: 6.1.176 6.1.192"
}

lanes=("$@")
[ ${#lanes[@]} -gt 0 ] || lanes=(build-x86_64 build-arm64 build-arm unsupported-version
	static-x86_64 static-arm64 static-arm load-x86_64 load-arm64 orangepi)
for l in "${lanes[@]}"; do
	case "$l" in
	build-*) lane "$l" build_both "${l#build-}" ;;
	static-*) lane "$l" tests/drivers/static.sh "${l#static-}" $(drivers_for "${l#static-}") ;;
	load-*) lane "$l" python3 tests/drivers/load.py "${l#load-}" ;;
	orangepi) lane "$l" orangepi ;;
	unsupported-version) lane "$l" unsupported ;;
	orangepi-demo) orangepi 0; exit $? ;;	# make run: no stress, output as it comes
	*) echo "unknown lane $l" >&2; exit 2 ;;
	esac
done

echo "drivers: lane times: ${times[*]}"
echo "drivers: $pass passed, $failn failed${failed:+ (${failed[*]})}"
[ $failn -eq 0 ]
