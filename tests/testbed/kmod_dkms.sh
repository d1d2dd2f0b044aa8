#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# DKMS: the sources `make install-dkms` puts in /usr/src/r2cc-VERSION are
# added to and built by Debian's dkms, on the host, against the headers of
# the testbed's kernel (private dkms and source trees: the host's own are
# not touched); the module it builds loads in the node, is the kernel's
# (vermagic), and works (/dev/r2cc, sysfs).  dkms itself makes its
# module-signing key in /var/lib/dkms (mok.key, mok.pub) the first time it
# builds anything, as it does on any machine.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
command -v dkms >/dev/null || skip_all "no dkms (make deps installs it)"
[ -e "/lib/modules/$TB_KVER/build" ] || skip_all "no headers for $TB_KVER"
plan_later
ver=$(cat "$R2CC_REPO/VERSION")
d=$(mktemp -d "$R2CC_BUILD/tests/dkms.XXXXXX")
trap 'rm -rf "$d"; tb_finish' EXIT
trees=(--dkmstree "$d/dkms" --sourcetree "$d/src")
mkdir -p "$d/dkms"

run_ok "make install-dkms" make -s -C "$R2CC_REPO" install-dkms \
	DESTDIR="$d/root"
mkdir -p "$d/src"
cp -a "$d/root/usr/src/r2cc-$ver" "$d/src/"
run_ok "dkms add r2cc/$ver" dkms add "${trees[@]}" -m r2cc -v "$ver"
out=$(dkms build "${trees[@]}" -m r2cc -v "$ver" -k "$TB_KVER" 2>&1)
rc=$?
is "$rc" 0 "dkms build for $TB_KVER"
[ "$rc" = 0 ] || diag "$out$(cat "$d"/dkms/r2cc/"$ver"/build/make.log 2>/dev/null)"
status=$(dkms status "${trees[@]}" -m r2cc -v "$ver" -k "$TB_KVER" 2>&1)
grep -q "r2cc/$ver, $TB_KVER, x86_64: built" <<<"$status"
ok "$([ $? = 0 ] && echo 1)" "dkms status: built ($status)"
ko=$(find "$d/dkms/r2cc/$ver/$TB_KVER" -name 'r2cc.ko*' | head -n 1)
ok "$([ -n "$ko" ] && echo 1)" "the module: ${ko#"$d"/}"
vm=$(modinfo -F vermagic "$ko" 2>/dev/null)
is "${vm%% *}" "$TB_KVER" "its vermagic is the testbed kernel's"

tb_exec node0 sh -c 'rmmod r2cc 2>/dev/null; true'
run_ok "the DKMS-built module loads in node0" tb_exec node0 insmod "$ko"
tb_exec node0 sh -c 'for i in $(seq 50); do [ -c /dev/r2cc ] && exit 0
	sleep 0.1; done; exit 1'
ok "$([ $? = 0 ] && echo 1)" "/dev/r2cc is there"
ok "$(tb_exec node0 sh -c '[ -d /sys/kernel/r2cc/devices/rxe0/ports/1 ]' && echo 1)" \
	"it watches rxe0 port 1"
run_ok "rmmod r2cc" kmod_unload node0
run_ok "dkms remove" dkms remove "${trees[@]}" -m r2cc -v "$ver" --all
