#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `make install DESTDIR= PREFIX=` puts the library, headers, pkg-config
# file and udev rules in place, and a program builds and runs against the
# installed tree alone.
. "$(dirname "$0")/../lib/tap.sh"
cd "$R2CC_REPO" || exit 1
[ -e "$R2CC_BUILD/lib/libr2cc.so" ] || skip_all "libr2cc not built"
plan 6
d=$(mktemp -d)
run_ok "make install DESTDIR=$d PREFIX=/usr" make -s install DESTDIR="$d" PREFIX=/usr
missing=
for f in usr/lib/libr2cc.so.0.1.0 usr/lib/libr2cc.so.0 usr/lib/libr2cc.so \
	 usr/lib/libr2cc.a usr/lib/pkgconfig/r2cc.pc usr/include/r2cc/r2cc.h \
	 usr/include/linux/r2cc.h lib/udev/rules.d/70-r2cc.rules; do
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
run_ok "make uninstall removes it" make -s uninstall DESTDIR="$d" PREFIX=/usr
rm -rf "$d"
done_testing
