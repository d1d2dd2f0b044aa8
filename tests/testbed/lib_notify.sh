#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# libr2cc reports a real carrier loss and its restore as NIC events, from
# r2cc.ko when it is loaded and from verbs async events when it is not;
# r2cc_nic_is_active() follows.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later

# watch_link SOURCE: run the notify program, cut and restore rail 0.
watch_link() {
	local out rc
	out=$(mktemp)
	tb_exec node0 "$R2CC_BUILD/tests/libr2cc/notify" "$1" 2 >"$out" 2>&1 &
	local pid=$!
	for ((t = 0; t < 100; t++)); do grep -q '^ready' "$out" && break; sleep 0.1; done
	is "$(awk '/^ready/ {print $2}' "$out")" "$1" "$1: the context uses $1"
	tb link node0 0 down
	sleep 1
	tb link node0 0 up
	wait "$pid"
	rc=$?
	ok "$([ $rc = 0 ] && echo 1)" "$1: two events"
	diag "$(cat "$out")"
	local src=1
	[ "$1" = verbs ] && src=2
	is "$(awk '/^event/ && NR == 2 {print $2, $3, $4, $5, $6, $7}' "$out")" \
		"0 4 1 $src 0 0" "$1: NIC 0 ACTIVE -> DOWN, real, not active"
	is "$(awk '/^event/ && NR == 3 {print $2, $3, $4, $5, $6, $7}' "$out")" \
		"0 1 4 $src 0 1" "$1: NIC 0 DOWN -> ACTIVE, active again"
	rm -f "$out"
}

tb_exec node0 sh -c 'rmmod r2cc 2>/dev/null; true'
watch_link verbs
run_ok "insmod r2cc.ko" kmod_load node0
watch_link kmod
run_ok "rmmod" kmod_unload node0
tb_finish
