# shellcheck shell=bash
# Shared helpers for the lab scripts (sourced, not run).

# The Debian 6.1 amd64 kernel the lab boots: LAB_KVER if set, else the newest
# installed 6.1 kernel whose headers are installed too (modules are built
# against those headers, so both must match).
lab_kver() {
	if [ -n "${LAB_KVER:-}" ]; then
		echo "$LAB_KVER"
		return
	fi
	local v best=""
	for v in $(find /lib/modules -mindepth 1 -maxdepth 1 -printf '%f\n' 2>/dev/null |
		grep -E '^6\.1\.[0-9]+-[0-9]+-amd64$' | sort -V); do
		[ -f "/boot/vmlinuz-$v" ] && [ -d "/lib/modules/$v/build" ] && best=$v
	done
	if [ -z "$best" ]; then
		echo "lab: no Debian 6.1 amd64 kernel with headers installed; run scripts/deps.sh" >&2
		return 1
	fi
	echo "$best"
}

# The kernel a lab run boots, from LAB_KERNEL:
#   debian (default), 6.1  Debian's 6.1 kernel (lab_kver), its modules in /lib/modules
#   debug             the debug kernel scripts/lab/debug-kernel.sh built and cached
#   5.10, 6.12        a line of the kernel matrix (scripts/lab/kernels), unpacked
#                     by scripts/lab/kernels.sh; our modules from build/kmod-LINE
#                     (make modules KVER=LINE)
# Sets KVER (its release), LAB_IMAGE (the bzImage), LAB_MODROOT (the directory
# holding lib/modules/KVER: / for Debian's kernel) and LAB_KMOD_DIR (where our
# modules for it are built, relative to the tree: kmod for 6.1).
LAB_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck disable=SC2034 # LAB_IMAGE, LAB_MODROOT, LAB_KMOD_DIR: for the script that sources this
lab_kernel() {
	local p dir
	LAB_KMOD_DIR=kmod
	case "${LAB_KERNEL:-debian}" in
	debian | 6.1)
		KVER=$(lab_kver) || return 1
		LAB_IMAGE=/boot/vmlinuz-$KVER LAB_MODROOT=/
		;;
	debug)
		p=$(LAB_KERNEL='' "$LAB_LIB_DIR/debug-kernel.sh" --print) || {
			echo "lab: LAB_KERNEL=debug, but no debug kernel is built for this lab kernel: run scripts/lab/debug-kernel.sh (about half an hour the first time)" >&2
			return 1
		}
		read -r KVER dir <<<"$p"
		LAB_IMAGE=$dir/vmlinuz LAB_MODROOT=$dir/root LAB_KMOD_DIR=build/kmod-debug
		;;
	*)
		if ! "$LAB_LIB_DIR/kernels.sh" --lines | grep -qx -- "$LAB_KERNEL"; then
			echo "lab: LAB_KERNEL='$LAB_KERNEL': use debian (the default, or 6.1), debug, or a line of scripts/lab/kernels ($("$LAB_LIB_DIR/kernels.sh" --lines | tr '\n' ' '))" >&2
			return 1
		fi
		p=$("$LAB_LIB_DIR/kernels.sh" --print "$LAB_KERNEL") || {
			echo "lab: LAB_KERNEL=$LAB_KERNEL: that kernel is not unpacked: run scripts/deps.sh (or scripts/lab/kernels.sh $LAB_KERNEL) as root" >&2
			return 1
		}
		read -r KVER LAB_MODROOT _ LAB_IMAGE _ <<<"$p"
		LAB_KMOD_DIR=build/kmod-$LAB_KERNEL
		;;
	esac
}

# Lines of a guest kernel log that fail a lab run: the one pattern every
# test reads, from forbidden.re (used by scripts/lab/run, tests/lab/run-all.sh).
# shellcheck disable=SC2034
LAB_FORBIDDEN=$(grep -v '^#' "$LAB_LIB_DIR/forbidden.re" | head -n 1)
