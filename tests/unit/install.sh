#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make install DESTDIR= PREFIX=` puts the library, headers, pkg-config
# file, tools, manual pages, systemd units and udev rules in place, a program builds and
# runs against the installed tree alone, man(1) finds the pages there,
# Debian's python3 imports the torch backend from it (where torch is
# built), and `make uninstall` leaves no file behind.
. "$(dirname "$0")/../lib/tap.sh"
cd "$R2CC_REPO" || exit 1
[ -e "$R2CC_BUILD/lib/libr2cc.so" ] || skip_all "libr2cc not built"
plan 14
d=$(mktemp -d)
run_ok "make install DESTDIR=$d PREFIX=/usr" make -s install DESTDIR="$d" PREFIX=/usr
missing=
for f in usr/lib/libr2cc.so.0.1.0 usr/lib/libr2cc.so.0 usr/lib/libr2cc.so \
	 usr/lib/libr2cc.a usr/lib/pkgconfig/r2cc.pc usr/include/r2cc/r2cc.h \
	 usr/include/linux/r2cc.h lib/udev/rules.d/70-r2cc.rules \
	 usr/include/r2cc/job.h usr/lib/tmpfiles.d/r2cc.conf \
	 usr/share/ynl/specs/r2cc.yaml \
	 usr/bin/r2cc-perf usr/bin/r2cc-sim usr/share/man/man3/libr2cc.3 \
	 usr/share/man/man3/r2cc_isend.3 usr/share/man/man4/r2cc.4 \
	 usr/share/man/man1/r2cc-perf.1 usr/share/man/man1/r2cc-sim.1 \
	 usr/sbin/r2ccctl usr/share/man/man8/r2ccctl.8 \
	 lib/systemd/system/r2cc-prometheus.service \
	 lib/systemd/system/r2cc-prometheus.timer \
	 usr/src/r2cc-0.1.0/dkms.conf usr/src/r2cc-0.1.0/Kbuild \
	 usr/src/r2cc-0.1.0/VERSION \
	 usr/src/r2cc-0.1.0/kmod/compat.h \
	 usr/src/r2cc-0.1.0/include/uapi/linux/r2cc.h; do
	[ -e "$d/$f" ] || missing+=" $f"
done
ok "$([ -z "$missing" ] && echo 1)" "every file installed${missing:+ (missing:$missing)}"
is "$(sed -n 's/^prefix=//p' "$d/usr/lib/pkgconfig/r2cc.pc")" /usr "r2cc.pc says prefix=/usr"
cat >"$d/use.c" <<'C'
#include <r2cc/r2cc.h>
#include <linux/r2cc.h>
#include <stdio.h>
int main(void)
{
	printf("%s %d\n", r2cc_version(), R2CC_ABI_VERSION);
	return r2cc_check_version(R2CC_VERSION_MAJOR, R2CC_VERSION_MINOR) ? 1 : 0;
}
C
run_ok "a program compiles against the installed headers and library" \
	cc -Wall -Werror -I"$d/usr/include" "$d/use.c" -L"$d/usr/lib" -lr2cc -o "$d/use"
out=$(LD_LIBRARY_PATH=$d/usr/lib "$d/use")
ok "$([ $? = 0 ] && echo 1)" "and runs: $out"
is "$(find "$d/usr/share/man/man3" -name 'r2cc_*.3' | wc -l)" \
	"$(find man/man3 -name 'r2cc_*.3' | wc -l)" "a page per function"
# man -M: the installed tree alone; an alias page (.so) must resolve there.
out=$(MANWIDTH=80 man -M "$d/usr/share/man" 3 r2cc_irecv 2>&1 | head -n 3)
grep -q 'r2cc_isend' <<<"$out"
ok "$([ $? = 0 ] && echo 1)" "man -M finds r2cc_irecv(3), the page it links to"
# The units, pointed at the installed r2ccctl, as systemd reads them.
if command -v systemd-analyze >/dev/null; then
	mkdir "$d/v"
	for u in "$d"/lib/systemd/system/r2cc-prometheus.*; do
		sed "s|=/usr/sbin/|=$d/usr/sbin/|" "$u" >"$d/v/${u##*/}"
	done
	out=$(systemd-analyze verify --man=no "$d"/v/* 2>&1)
	ok "$([ $? = 0 ] && [ -z "$out" ] && echo 1)" \
		"systemd-analyze verify: the timer and service are clean${out:+: $out}"
	grep -q "^ExecStart=/usr/sbin/r2ccctl prometheus --output" \
		"$d/lib/systemd/system/r2cc-prometheus.service"
	ok "$([ $? = 0 ] && echo 1)" "the service runs the installed r2ccctl"
	rm -rf "$d/v"
else
	skip "no systemd-analyze"
	skip "no systemd-analyze"
fi
# The tmpfiles.d entry, as systemd-tmpfiles applies it at boot.
if command -v systemd-tmpfiles >/dev/null; then
	systemd-tmpfiles --root="$d" --create r2cc.conf 2>/dev/null
	is "$(stat -c '%a %U' "$d/run/r2cc" 2>&1)" "1777 root" \
		"tmpfiles.d makes /run/r2cc, mode 1777, for every job's stats file"
	rm -rf "$d/run"
else
	skip "no systemd-tmpfiles"
fi
# The torch backend, in Debian's python3's own dist-packages for /usr.
pkg=usr/lib/python3/dist-packages/r2cc_torch
if [ -e "$R2CC_BUILD/lib/torch/r2cc_torch/__init__.py" ]; then
	ok "$([ -e "$d/$pkg/__init__.py" ] && ls "$d/$pkg"/_C*.so >/dev/null 2>&1 && echo 1)" \
		"the torch backend is installed in /$pkg"
	out=$(cd / && PYTHONPATH=$d/usr/lib/python3/dist-packages LD_LIBRARY_PATH=$d/usr/lib \
		/usr/bin/python3 -c 'import r2cc_torch, torch.distributed as d
lib = [l.split()[-1] for l in open("/proc/self/maps") if "libr2cc.so" in l]
print(r2cc_torch._C.__file__, lib[0], d.Backend.R2CC)' 2>&1)
	ok "$([[ $out == "$d/$pkg/_C"*" $d/usr/lib/libr2cc.so.0"*" R2CC" ]] && echo 1)" \
		"python3 imports it from there, with the installed libr2cc, and torch knows the backend: $out"
else
	skip "torch backend not built"
	skip "torch backend not built"
fi
rm -f "$d/use" "$d/use.c"
run_ok "make uninstall" make -s uninstall DESTDIR="$d" PREFIX=/usr
left=$(find "$d" -type f -o -type l)
ok "$([ -z "$left" ] && echo 1)" "and no file is left${left:+: $(echo $left)}"
rm -rf "$d"
done_testing
