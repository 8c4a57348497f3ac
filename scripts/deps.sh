#!/bin/bash
# Install every Debian package ppkit needs to build, test and run its lab.
# Idempotent: packages already present are skipped, so a second run is a no-op.
#
#   scripts/deps.sh            install what is missing (needs root)
#   scripts/deps.sh --check    only report what is missing, exit 1 if anything is
set -euo pipefail

# The lab boots Debian's own 6.1 kernel, and modules are built against its headers:
# the metapackages track the newest 6.1 ABI in the archive.
PKGS=(
	build-essential bc bison flex kmod cpio gzip xz-utils perl file
	procps e2fsprogs	# pkill/pgrep in the lab scripts; mkfs.ext4 for DKMS's disk
	shellcheck		# make check: every shell script of scripts/ and tests/
	python3 python3-yaml	# lab scripts; the netlink spec check
	sparse
	qemu-system-x86
	busybox-static
	linux-image-amd64
	linux-headers-amd64
	linux-source-6.1
	# user space (tools/): C++20, CMake, netlink, CLI, JSON, formatting, tests
	g++ cmake pkg-config
	ccache			# make tools: native and cross builds reuse earlier compiles
	libnl-3-dev libnl-genl-3-dev
	libcli11-dev nlohmann-json3-dev libfmt-dev
	catch2
	libcivetweb-dev		# ppctld's metrics endpoint
	civetweb		# its CMake package names /usr/bin/civetweb and fails without it
	curl wrk		# ppctld lab test: scrapes and a bounded /metrics load
	jq			# the lab's polls of JSON (Prometheus's API, ppctl --json)
	socat			# and of ppctld's API socket
	prometheus		# promtool for contrib/prometheus's rule tests; the lab's Prometheus
	# XDP programs (clang -target bpf, bpftool skeletons) and libbpf for ppctl xdp
	clang llvm libbpf-dev bpftool libelf-dev zlib1g-dev
	# ppsim lab traffic and the regression suite (the guest uses the host's userland)
	iproute2 iputils-ping ethtool iperf3 gnuplot-nox linux-perf
	# patched drivers (make drivers): cross toolchains, pahole (without it a
	# cross .config silently drifts from Debian's), ARM guests
	gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf g++-aarch64-linux-gnu g++-arm-linux-gnueabihf
	dwarves qemu-system-arm
	# release: man pages (rst2man, checked with groff), DKMS, board tarballs
	python3-docutils groff-base dkms
	systemd			# systemd-analyze security: ppctld.service's exposure (make test)
	# the emulated Debian arm64 board (scripts/boards/image.sh: mmdebstrap,
	# maintainer scripts under qemu-user-static) and the board flow's ssh, scp
	# and the traffic peer's sshd (started in a lab guest, never on the host)
	mmdebstrap arch-test qemu-user-static qemu-utils openssh-client openssh-server
	# the emulated Macchiatobin (scripts/emu/qemu.sh): Debian's qemu source
	# with the PPv2 model, built into the cache; its device trees
	dpkg-dev meson ninja-build libglib2.0-dev libpixman-1-dev libfdt-dev
	device-tree-compiler
)
# Debian architectures whose kernels and libraries the driver builds use.
FOREIGN=(arm64 armhf)

missing=()
newarch=()
# read whole before matching: under pipefail, grep -q leaving early
# kills dpkg with SIGPIPE and an architecture present looked missing
foreign=$(dpkg --print-foreign-architectures)
for a in "${FOREIGN[@]}"; do
	grep -qx "$a" <<< "$foreign" || newarch+=("$a")
done
for p in "${PKGS[@]}"; do
	if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != *'ok installed'* ]]; then
		missing+=("$p")
	fi
done

if [ "${1:-}" = "--check" ]; then
	[ ${#missing[@]} -eq 0 ] && [ ${#newarch[@]} -eq 0 ] && { echo "deps: all present"; exit 0; }
	echo "deps: missing: ${missing[*]} ${newarch[*]:+architectures ${newarch[*]}}"
	exit 1
fi

# Debian's kernels for the driver targets, their exact kernel sources and the
# prepared cross trees (scripts/drivers/prepare.sh; cached, idempotent).
prepare_drivers() {
	"$(dirname "$0")/drivers/prepare.sh"
	# the source of every point release a driver series claims (tested_LINE=
	# in drivers/*/driver.conf): make test applies each series to each
	"$(dirname "$0")/drivers/prepare.sh" --sources
	# ppctl's libraries for the ARM targets (make tools ARCH=arm|arm64)
	"$(dirname "$0")/tools/sysroot.sh" arm >/dev/null
	"$(dirname "$0")/tools/sysroot.sh" arm64 >/dev/null
	# ppkit's QEMU with the PPv2 model (cached; a few minutes the first time)
	"$(dirname "$0")/emu/qemu.sh" >/dev/null
}

# The kernel matrix's other lines (scripts/lab/kernels: Debian 11's 5.10,
# bookworm-backports' 6.12): downloaded with a private apt configuration
# under the cache and unpacked there, never installed, the host's apt
# sources untouched (scripts/lab/kernels.sh; cached, idempotent).
prepare_kernels() {
	local l missing=()
	if [ "$(id -u)" -eq 0 ]; then
		"$(dirname "$0")/lab/kernels.sh"
		return
	fi
	for l in $("$(dirname "$0")/lab/kernels.sh" --lines); do
		"$(dirname "$0")/lab/kernels.sh" --print "$l" >/dev/null || missing+=("$l")
	done
	[ ${#missing[@]} -eq 0 ] ||
		echo "deps: kernels ${missing[*]} not unpacked, and not root: run scripts/deps.sh as root for make modules KVER=LINE" >&2
}

# The package lists, fresh: the drivers look kernel versions up in them, and
# Debian's archive moves to new point releases (every few weeks).  Older
# than a day, as apt's own daily timer keeps them (or never fetched, or
# DEPS_UPDATE=1), means apt-get update, even with every package present:
# a minute or two of a warm make test otherwise.
STAMP=/var/cache/ppkit/apt-updated
lists_stale() { [ "${DEPS_UPDATE:-0}" = 1 ] || [ -z "$(find "$STAMP" -mmin -1440 2>/dev/null)" ]; }
update_lists() {
	# A mirror caught mid-sync fails one list ("File has unexpected size") and
	# apt-get update exits 100; the lists it did fetch are still good, and an
	# install that needs the missing one fails below with apt's own message.
	apt-get update -qq || echo "deps: apt-get update reported errors (above); going on with the lists it fetched" >&2
	mkdir -p "$(dirname "$STAMP")" && touch "$STAMP"
}

if [ ${#missing[@]} -eq 0 ] && [ ${#newarch[@]} -eq 0 ]; then
	echo "deps: all ${#PKGS[@]} packages present"
	if lists_stale; then
		if [ "$(id -u)" -eq 0 ]; then
			echo "deps: package lists older than a day: apt-get update"
			update_lists
		else
			echo "deps: package lists older than a day, and not root: kernel versions come from them as they are" >&2
		fi
	fi
	prepare_drivers
	prepare_kernels
	exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing ${missing[*]}; run scripts/deps.sh as root" >&2
	exit 1
fi

for a in "${newarch[@]}"; do
	dpkg --add-architecture "$a"
done
export DEBIAN_FRONTEND=noninteractive
update_lists
if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}"
	# No package of the list is installed to run as a service here (the lab
	# starts its own Prometheus): a policy-rc.d that refuses every start
	# keeps the postinst scripts from starting one (deb-systemd-invoke and
	# invoke-rc.d ask it), unless the host has a policy of its own.
	policy=
	if [ ! -e /usr/sbin/policy-rc.d ]; then
		policy=/usr/sbin/policy-rc.d
		printf '#!/bin/sh\n# scripts/deps.sh: no service starts while it installs\nexit 101\n' > "$policy"
		chmod 755 "$policy"
		trap 'rm -f "$policy"' EXIT
	fi
	apt-get install -y -qq --no-install-recommends "${missing[@]}"
	[ -z "$policy" ] || { rm -f "$policy"; trap - EXIT; }
	# ... nor at the next boot: Prometheus installed by deps.sh is for
	# promtool and the lab (contrib/prometheus), not a host daemon.
	if [[ " ${missing[*]} " = *" prometheus "* ]]; then
		if [ -d /run/systemd/system ]; then
			systemctl stop prometheus.service 2> /dev/null || true
		else
			/etc/init.d/prometheus stop > /dev/null 2>&1 || true
		fi
		# update-rc.d also removes the systemd unit's enablement
		update-rc.d prometheus disable > /dev/null 2>&1 || true
	fi
	if [[ " ${missing[*]} " = *" openssh-server "* ]]; then
		if [ -d /run/systemd/system ]; then
			systemctl disable --now ssh.service 2> /dev/null || true
		else
			/etc/init.d/ssh stop > /dev/null 2>&1 || true
		fi
		update-rc.d ssh disable > /dev/null 2>&1 || true
	fi
fi
prepare_drivers
prepare_kernels
