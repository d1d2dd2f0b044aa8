#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The Debian packages (debian/): dpkg-buildpackage -b builds them from a
# copy of the tree, lintian --pedantic finds nothing (each override says
# why), and each package holds what it should: the library, its
# development files, the NCCL plugin, the tools, the module's sources for
# DKMS (whose postinst builds it), the kselftest collection, the PyTorch
# backend (imported from the unpacked packages).  Installing
# them into a node and using them is tests/testbed/packages.sh.
. "$(dirname "$0")/../lib/tap.sh"
cd "$R2CC_REPO" || exit 1
for t in dpkg-buildpackage lintian dh_dkms fakeroot; do
	command -v $t >/dev/null || skip_all "no $t (make deps installs it)"
done
plan_later

work=$(mktemp -d /tmp/r2cc-deb.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/r2cc"
git ls-files -co --exclude-standard | tar -cf - -T - | tar -xf - -C "$work/r2cc"
ver=$(cat VERSION)
out=$(cd "$work/r2cc" && dpkg-buildpackage -b -uc -us -J"$(nproc)" 2>&1)
rc=$?
is "$rc" 0 "dpkg-buildpackage -b"
[ "$rc" = 0 ] || { diag "$(tail -n 40 <<<"$out")"; done_testing; }
ok "$(! grep -q 'dh_missing: warning' <<<"$out" && echo 1)" \
	"every installed file is in a package (dh_missing)"

lint=$(lintian --pedantic --fail-on error,warning,pedantic \
	"$work/r2cc_${ver}_amd64.changes" 2>"$work/lintian.err")
rc=$?
lint+=$(grep -v '^running with root' "$work/lintian.err")
ok "$([ "$rc" = 0 ] && [ -z "$lint" ] && echo 1)" "lintian --pedantic: clean"
[ -z "$lint" ] || diag "$lint"

# has PACKAGE PATH...: the package holds every PATH.
has() {
	local pkg=$1 deb list miss=
	shift
	deb=$(ls "$work/${pkg}_${ver}"_*.deb)
	list=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
	for p in "$@"; do
		grep -qx -- "$p" <<<"$list" || miss+=" $p"
	done
	ok "$([ -z "$miss" ] && echo 1)" "$pkg: $*${miss:+ (missing:$miss)}"
}
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
has libr2cc0 "/usr/lib/$ma/libr2cc.so.$ver" "/usr/lib/$ma/libr2cc.so.0"
has libr2cc-dev "/usr/lib/$ma/libr2cc.so" "/usr/lib/$ma/libr2cc.a" \
	"/usr/lib/$ma/pkgconfig/r2cc.pc" /usr/include/r2cc/r2cc.h \
	/usr/include/r2cc/job.h /usr/include/linux/r2cc.h \
	/usr/share/man/man3/r2cc_isend.3.gz
has libnccl-net-r2cc "/usr/lib/$ma/libnccl-net-r2cc.so"
has r2cc-tools /usr/sbin/r2ccctl /usr/bin/r2cc-perf /usr/bin/r2cc-sim \
	/usr/share/man/man8/r2ccctl.8.gz /usr/lib/tmpfiles.d/r2cc.conf \
	/lib/systemd/system/r2cc-prometheus.timer \
	/usr/share/r2cc/bpftrace/r2cc-transitions.bt \
	/usr/share/ynl/specs/r2cc.yaml
has r2cc-dkms "/usr/src/r2cc-$ver/dkms.conf" "/usr/src/r2cc-$ver/Kbuild" \
	"/usr/src/r2cc-$ver/VERSION" "/usr/src/r2cc-$ver/kmod/r2cc_main.c" \
	/lib/udev/rules.d/70-r2cc.rules /usr/share/man/man4/r2cc.4.gz
has r2cc-tests /usr/lib/r2cc/kselftest/run_kselftest.sh \
	/usr/lib/r2cc/kselftest/r2cc/ioctl_args

field() { dpkg-deb -f "$(ls "$work/$1_${ver}"_*.deb)" "$2"; }
ok "$(grep -q 'dkms' <<<"$(field r2cc-dkms Depends)" && echo 1)" \
	"r2cc-dkms depends on dkms ($(field r2cc-dkms Depends))"
post=$(dpkg-deb --ctrl-tarfile "$(ls "$work/r2cc-dkms_${ver}"_*.deb)" |
	tar -xOf - ./postinst)
ok "$(grep -q 'dkms' <<<"$post" && echo 1)" "its postinst builds the module with DKMS"
post=$(dpkg-deb --ctrl-tarfile "$(ls "$work/r2cc-tools_${ver}"_*.deb)" |
	tar -xOf - ./postinst)
ok "$(grep -q 'systemd-tmpfiles.*r2cc.conf' <<<"$post" &&
	! grep -q 'deb-systemd-invoke start' <<<"$post" && echo 1)" \
	"r2cc-tools' postinst makes /run/r2cc and starts no timer"
ok "$(grep -q 'libr2cc0 (= ' <<<"$(field libr2cc-dev Depends)" && echo 1)" \
	"libr2cc-dev depends on the same libr2cc0"
ok "$(grep -q 'libibverbs1' <<<"$(field libr2cc0 Depends)" && echo 1)" \
	"libr2cc0's shlibs: libibverbs1"

# The PyTorch backend: Debian's python3 path, no build-tree rpath, torch
# and the same libr2cc0 as dependencies, and it imports from the
# unpacked packages alone.
py=/usr/lib/python3/dist-packages/r2cc_torch
deb=$(ls "$work/python3-r2cc-torch_${ver}"_*.deb)
ext=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed -n 's|^\.\(.*/_C\..*\.so\)$|\1|p')
has python3-r2cc-torch "$py/__init__.py" "${ext:-$py/_C.so}"
dep=$(field python3-r2cc-torch Depends)
ok "$(grep -q 'python3-torch' <<<"$dep" && grep -q "libr2cc0 (= $ver" <<<"$dep" &&
	grep -q 'libtorch' <<<"$dep" && echo 1)" \
	"python3-r2cc-torch depends on python3-torch, libtorch and the same libr2cc0 ($dep)"
mkdir "$work/root"
dpkg-deb -x "$deb" "$work/root"
dpkg-deb -x "$(ls "$work/libr2cc0_${ver}"_*.deb)" "$work/root"
rp=$(readelf -d "$work/root$ext" 2>&1 | grep -E 'RPATH|RUNPATH')
ok "$([ -n "$ext" ] && [ -z "$rp" ] && echo 1)" "its extension has no rpath${rp:+: $rp}"
out=$(cd / && PYTHONPATH=$work/root/usr/lib/python3/dist-packages \
	LD_LIBRARY_PATH=$work/root/usr/lib/$ma /usr/bin/python3 -c \
	'import r2cc_torch, torch.distributed as d; print(d.Backend.R2CC)' 2>&1)
is "$out" R2CC "python3 imports it from the unpacked packages and torch knows the backend"
done_testing
