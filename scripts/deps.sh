#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Installs what building and testing r2cc needs on Debian 12, from the
# Debian archive only: tools, rdma-core, QEMU, and the headers of the two
# testbed kernels (the current bookworm 6.1 and bookworm-security 6.12),
# PyTorch for the torch backend (bindings/torch),
# then fetches those kernels into build/cache.  Quiet and quick when all is
# already there.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cache=${BUILD:-$here/build}/cache
log=$(mktemp /tmp/r2cc-deps.XXXXXX)
trap 'rm -f "$log"' EXIT

pkgs=(gcc make libc6-dev perl pkg-config python3 iproute2 kmod cpio sparse
      linux-source-6.1 binutils
      busybox-static xz-utils zstd qemu-system-x86 rdma-core
      ibverbs-providers ibverbs-utils libibverbs-dev librdmacm-dev
      perftest ethtool libnl-3-dev libnl-genl-3-dev bpftrace dwarves systemtap-sdt-dev
      gnuplot-nox bpftool clang-14 libclang-rt-14-dev dkms python3-sphinx
      debhelper dh-dkms lintian fakeroot dpkg-dev
      python3-torch libtorch-dev pybind11-dev python3-dev
      python3-yaml python3-jsonschema)

headers_of() {
	apt-cache depends "$1" 2>/dev/null |
		sed -n 's/^  Depends: \(linux-headers-[0-9][^ ]*-amd64\)$/\1/p' |
		head -n1
}

if [ "$(id -u)" != 0 ]; then
	echo "deps: not root; assuming dependencies are installed" >&2
	exit 0
fi

updated=
apt_update() {
	[ -n "$updated" ] && return 0
	echo "deps: apt-get update"
	apt-get update -qq >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
	updated=1
}

h61=$(headers_of linux-headers-amd64)
h612=$(headers_of linux-headers-6.12-amd64)
if [ -z "$h61" ] || [ -z "$h612" ]; then
	apt_update
	h61=$(headers_of linux-headers-amd64)
	h612=$(headers_of linux-headers-6.12-amd64)
fi
[ -n "$h61" ] && [ -n "$h612" ] ||
	{ echo "deps: cannot resolve the 6.1 and 6.12 kernel headers" >&2; exit 1; }
pkgs+=("$h61" "$h612")

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
	apt_update
	echo "deps: installing ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends "${missing[@]}" >"$log" 2>&1 ||
		{ tail -n 40 "$log" >&2; exit 1; }
fi

for series in 6.1 6.12; do
	"$here/scripts/prepare-kernel" "$series" "$cache" >/dev/null
done

# promtool, to check r2ccctl's Prometheus output: taken out of Debian's
# prometheus package into the cache, since installing the package would
# start a Prometheus server.
if [ ! -x "$cache/promtool/promtool" ]; then
	tmp=$(mktemp -d /tmp/r2cc-promtool.XXXXXX)
	if ! (cd "$tmp" && apt-get download -qq prometheus >"$log" 2>&1); then
		apt_update
		(cd "$tmp" && apt-get download -qq prometheus >"$log" 2>&1) ||
			{ cat "$log" >&2; rm -rf "$tmp"; exit 1; }
	fi
	dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/root"
	mkdir -p "$cache/promtool"
	cp "$tmp/root/usr/bin/promtool" "$cache/promtool/promtool.tmp"
	mv "$cache/promtool/promtool.tmp" "$cache/promtool/promtool"
	rm -rf "$tmp"
fi

# The kernel's YNL tool (tools/net/ynl) and the netlink spec schemas, to
# drive r2cc.ko's generic netlink family from Documentation/netlink/specs/
# r2cc.yaml (tests/testbed/kmod_ynl.sh): taken out of Debian's
# linux-source-6.12 (6.1 predates them) into the cache, without installing
# its 150 MB.
ynl=$cache/ynl
if [ ! -f "$ynl/tools/net/ynl/cli.py" ]; then
	tmp=$(mktemp -d /tmp/r2cc-ynl.XXXXXX)
	if ! (cd "$tmp" && apt-get download -qq linux-source-6.12 >"$log" 2>&1); then
		apt_update
		(cd "$tmp" && apt-get download -qq linux-source-6.12 >"$log" 2>&1) ||
			{ cat "$log" >&2; rm -rf "$tmp"; exit 1; }
	fi
	mkdir -p "$tmp/src"
	dpkg-deb --fsys-tarfile "$tmp"/linux-source-6.12_*.deb |
		tar -xOf - --wildcards './usr/src/linux-source-6.12.tar.xz' |
		tar -xJf - -C "$tmp/src" --strip-components=1 --wildcards \
			'linux-source-6.12/tools/net/ynl/cli.py' \
			'linux-source-6.12/tools/net/ynl/lib/*.py' \
			'linux-source-6.12/Documentation/netlink/*.yaml'
	[ -f "$tmp/src/tools/net/ynl/cli.py" ] ||
		{ echo "deps: no tools/net/ynl in linux-source-6.12" >&2; rm -rf "$tmp"; exit 1; }
	mkdir -p "$cache"
	rm -rf "$ynl"
	mv "$tmp/src" "$ynl"
	rm -rf "$tmp"
fi
