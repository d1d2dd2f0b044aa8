#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# r2cc.ko's /dev/r2cc: every ioctl with good and bad arguments, injected
# events through snapshot/read/poll/filters/state page, overflow accounting
# with a slow reader (queue_len=8), state page against sysfs and verbs,
# the generic netlink family.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later

# sub_test NAME CMD...: one in-node TAP program, reported as one result.
sub_test() {
	local name=$1 out rc
	shift
	out=$(tb_exec node0 "$@" 2>&1)
	rc=$?
	ok "$([ $rc = 0 ] && echo 1)" "$name ($(grep -c '^ok' <<<"$out") checks)"
	[ $rc = 0 ] || diag "$out"
}

run_ok "insmod r2cc.ko" kmod_load node0
sub_test "ioctl arguments" "$KTEST/ioctl_args"
sub_test "injected events" "$KTEST/inject_events"
sub_test "state page vs sysfs vs ibv_query_port" "$KTEST/state_page"
sub_test "generic netlink family" "$KTEST/genl"
run_ok "rmmod" kmod_unload node0
run_ok "insmod queue_len=8" kmod_load node0 queue_len=8
sub_test "overflow with a slow reader" "$KTEST/overflow"
run_ok "rmmod" kmod_unload node0
run_fails "queue_len=1 is refused" "Invalid|invalid" \
	tb_exec node0 insmod "$R2CC_BUILD/kmod/$TB_KVER/r2cc.ko" queue_len=1
run_fails "queue_len=junk is refused" "Invalid|invalid" \
	tb_exec node0 insmod "$R2CC_BUILD/kmod/$TB_KVER/r2cc.ko" queue_len=junk
tb_finish
