#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# r2cc.ko, built against this node's kernel, loads and unloads cleanly,
# and says its version.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later

ko=$R2CC_BUILD/kmod/$TB_KVER/r2cc.ko
[ -f "$ko" ] || { fail "$ko is built (make kmod-testbed)"; tb_finish; }
is "$(tb_exec node0 modinfo -F vermagic "$ko" | awk '{print $1}')" "$TB_KVER" \
	"r2cc.ko vermagic matches $TB_KVER"
for ((n = 1; n <= 3; n++)); do
	run_ok "cycle $n: insmod" tb_exec node0 insmod "$ko"
	ok "$(tb_exec node0 test -d /sys/module/r2cc && echo 1)" \
		"cycle $n: /sys/module/r2cc exists"
	[ $n = 1 ] && is "$(tb_exec node0 cat /sys/module/r2cc/version)" \
		"$(cat "$R2CC_REPO/VERSION")" "MODULE_VERSION is the project's VERSION"
	run_ok "cycle $n: rmmod" tb_exec node0 rmmod r2cc
	ok "$(tb_exec node0 test -d /sys/module/r2cc || echo 1)" \
		"cycle $n: /sys/module/r2cc is gone"
done
log=$(tb_exec node0 dmesg)
is "$(grep -c 'r2cc: loaded, ABI version' <<<"$log")" 3 "three load messages"
is "$(grep -c 'r2cc: unloaded' <<<"$log")" 3 "three unload messages"
tb_finish
