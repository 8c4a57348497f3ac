#!/bin/bash
# A private sysroot of the libraries ppctl and ppctld link against, for a cross target:
# Debian's runtime and -dev packages of that architecture, downloaded and
# unpacked under $PPKIT_CACHE/<target>/sysroot (never installed on the host:
# no multiarch dependency resolution, no host package upgrades, and no
# reliance on every foreign package list being fetchable).  Idempotent.
#
#   scripts/tools/sysroot.sh arm|arm64      prints the sysroot's path
set -euo pipefail
. "$(dirname "$0")/../drivers/lib.sh"

t=$(drv_target "${1:?usage: sysroot.sh arm|arm64}")
[ "$t" != x86_64 ] || die "sysroot.sh: x86_64 builds natively"
debarch=$(drv_debarch "$t")
PKGS=(libnl-3-200 libnl-3-dev libnl-genl-3-200 libnl-genl-3-dev libfmt9 libfmt-dev
      libbpf1 libbpf-dev libelf1 libelf-dev zlib1g zlib1g-dev
      # ppctld: prometheus-cpp's pull exposer on civetweb.  Its CMake package
      # also looks for the push library and libcurl, which ppctld never links.
      prometheus-cpp-dev libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0
      libprometheus-cpp-push1.0 civetweb libcivetweb1 libcivetweb-dev libcurl4-openssl-dev libcurl4
      # not linked: Debian's ethtool of the target, for the guests' ethtool -S
      ethtool libmnl0)
# Header-only, architecture "all": in the sysroot too, so that a cross build
# never puts the host's /usr/include on the target compiler's path.
ALL=(nlohmann-json3-dev libcli11-dev)
root=$PPKIT_CACHE/$t/sysroot
stamp="${PKGS[*]} ${ALL[*]}"
if [ -f "$root/.ppkit-sysroot" ] && [ "$(cat "$root/.ppkit-sysroot")" = "$stamp" ]; then
	echo "$root"
	exit 0
fi
debs=$PPKIT_CACHE/$t/sysroot-debs
rm -rf "$root" "$debs"
mkdir -p "$root" "$debs"
say "sysroot for $t: downloading ${PKGS[*]} ($debarch)"
(cd "$debs" && apt-get download -o APT::Sandbox::User=root "${PKGS[@]/%/:$debarch}" "${ALL[@]}" >/dev/null) ||
	die "apt-get download of the $debarch libraries failed (architecture added? run scripts/deps.sh)"
for d in "$debs"/*.deb; do
	dpkg-deb -x "$d" "$root"
done
# Absolute symlinks (libfoo.so -> /lib/<triplet>/libfoo.so.1) point into the
# host: make them relative to the sysroot.
find "$root" -type l -lname '/*' | while read -r l; do
	tgt=$(readlink "$l")
	ln -sfn "$(realpath -m --relative-to="$(dirname "$l")" "$root$tgt")" "$l"
done
echo "$stamp" >"$root/.ppkit-sysroot"
echo "$root"
