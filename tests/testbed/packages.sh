#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The Debian packages, installed into node0 (whose root is an overlay of
# the host's) and used there: dpkg -i runs r2cc-dkms' postinst, which
# builds r2cc.ko with DKMS for the node's own kernel and installs it;
# modprobe loads it; r2ccctl status and jobs work; a program built in the
# node with `pkg-config r2cc` runs over the node's NICs; the installed
# kselftest collection passes; dpkg --purge takes it all away.  DKMS and
# depmod under TCG take minutes, so make check leaves this file to
# scripts/check-full.sh (tests/unit/deb.sh builds and lints the packages
# in every run).
# ci: full only
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
for t in dpkg-buildpackage dh_dkms fakeroot; do
	command -v $t >/dev/null || skip_all "no $t (make deps installs it)"
done
plan_later

work=$(mktemp -d "$R2CC_BUILD/tests/deb.XXXXXX")
k=$(tb_exec node0 uname -r)
pkgs="libr2cc0 libr2cc-dev libnccl-net-r2cc r2cc-tools r2cc-dkms r2cc-tests"
cleanup() {
	tb_exec node0 sh -c "rmmod r2cc 2>/dev/null
		dpkg --purge $pkgs >/dev/null 2>&1
		umount /lib/modules/$k 2>/dev/null; rm -rf /tmp/r2cc-deb; true"
	rm -rf "$work"
}
trap cleanup EXIT

mkdir "$work/r2cc"
(cd "$R2CC_REPO" && git ls-files -co --exclude-standard | tar -cf - -T -) |
	tar -xf - -C "$work/r2cc"
out=$(cd "$work/r2cc" && dpkg-buildpackage -b -uc -us -J"$(nproc)" 2>&1)
is "$?" 0 "dpkg-buildpackage -b on the host"
ver=$(cat "$R2CC_REPO/VERSION")
debs=
for p in $pkgs; do debs+=" $(ls "$work/${p}_${ver}"_*.deb)"; done

# The node's module tree is the testbed kernel's, read-only: an overlay
# lets DKMS install into it, as on a real node's disk.  Its 'build' link
# to the headers (which linux-headers-* makes on a real node) is missing,
# and without it DKMS only adds the module and builds nothing.
# The node's /dev is a bare devtmpfs: /dev/fd (dkms' <(...)) is udev's.
# man-db's trigger would rebuild the index of every manual page on the
# host under TCG (over 2 minutes in a run of 2026-12-03): in the node's
# overlay it is switched off, as debconf's man-db/auto-update false does.
run_ok "a writable module tree in node0" tb_exec node0 sh -c "set -e
	rm -f /var/lib/man-db/auto-update
	[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
	rmmod r2cc 2>/dev/null || true
	d=/tmp/r2cc-deb; mkdir -p \$d/u \$d/w
	mount -t overlay overlay -o lowerdir=/lib/modules/$k,upperdir=\$d/u,workdir=\$d/w /lib/modules/$k
	ln -sfn /usr/src/linux-headers-$k /lib/modules/$k/build"
t0=$(date +%s)
out=$(TB_TIMEOUT=900 tb_exec node0 env DEBIAN_FRONTEND=noninteractive \
	dpkg -i $debs 2>&1)
rc=$?
is "$rc" 0 "dpkg -i the six packages in node0 ($(($(date +%s) - t0)) s, DKMS build included)"
[ "$rc" = 0 ] || diag "$(tail -n 30 <<<"$out")"
status=$(tb_exec node0 dkms status r2cc 2>&1)
ok "$(grep -q "r2cc/$ver, $k, x86_64: installed" <<<"$status" && echo 1)" \
	"dkms built and installed r2cc.ko for the node's kernel ($status)"
run_ok "modprobe r2cc" tb_exec node0 modprobe r2cc
is "$(tb_exec node0 cat /sys/module/r2cc/version)" "$ver" "the module is version $ver"
out=$(tb_exec node0 r2ccctl status 2>&1)
ok "$([ $? = 0 ] && grep -qE '^rxe0 +1 +ACTIVE' <<<"$out" && echo 1)" \
	"the installed r2ccctl status sees rxe0"
run_ok "r2ccctl jobs" tb_exec node0 r2ccctl jobs

cat >"$work/use.c" <<'C'
#include <stdio.h>
#include <r2cc/r2cc.h>
int main(void)
{
	struct r2cc_ctx *ctx;
	int ret = r2cc_ctx_create(NULL, &ctx);

	if (ret)
		return 1;
	printf("nics %d source %d\n", r2cc_nic_count(ctx),
	       r2cc_notify_source(ctx));
	return r2cc_ctx_destroy(ctx) ? 1 : 0;
}
C
out=$(TB_TIMEOUT=300 tb_exec node0 sh -c "cd /tmp && cc -o use $work/use.c \$(pkg-config --cflags --libs r2cc) && ./use" 2>&1)
is "$out" "nics 2 source 1" \
	"a program built with pkg-config r2cc in the node runs: 2 NICs, r2cc.ko"
out=$(TB_TIMEOUT=300 tb_exec node0 /usr/lib/r2cc/kselftest/run_kselftest.sh 2>&1)
ok "$([ $? = 0 ] && echo 1)" "the installed kselftest collection passes"
diag "$(grep -E '^(not )?ok' <<<"$out")"

tb_exec node0 rmmod r2cc
out=$(TB_TIMEOUT=300 tb_exec node0 dpkg --purge $pkgs 2>&1)
is "$?" 0 "dpkg --purge"
ok "$(tb_exec node0 sh -c "[ ! -e /lib/modules/$k/updates/dkms/r2cc.ko ] &&
	[ ! -e /usr/src/r2cc-$ver ] && ! command -v r2ccctl" && echo 1)" \
	"the module, its sources and the tools are gone"
tb_finish
