#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The r2cc: tracepoints fire for transitions, deliveries and overflows
# (ftrace), and tools/bpftrace/r2cc-transitions.bt sees a transition.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/bpftrace.sh"
tb_require 1
plan_later

run_ok "insmod r2cc.ko" kmod_load node0
ev=/sys/kernel/tracing/events/r2cc
is "$(tb_exec node0 ls $ev | grep '^r2cc_' | tr '\n' ' ')" \
	"r2cc_damping r2cc_deliver r2cc_errors r2cc_overflow r2cc_query_failed r2cc_transition " \
	"six tracepoints"
out=$(tb_exec node0 bash -c "
	echo 1 > $ev/enable
	echo > /sys/kernel/tracing/trace
	$KTEST/inject rxe0 1 down && $KTEST/inject rxe0 1 up
	echo 0 > $ev/enable
	cat /sys/kernel/tracing/trace")
ok "$(grep -q 'r2cc_transition:.*dev=rxe0 .*port=1 kind=1 flags=0x1 state=4->1 reason=0 bw=[0-9]* old_bw=[0-9]* error_rate=0' <<<"$out" && echo 1)" \
	"ftrace: r2cc_transition for the injected down, with reason, old bandwidth and error rate"
ok "$(grep -q 'r2cc_transition:.*kind=2 flags=0x1 state=1->4' <<<"$out" && echo 1)" \
	"ftrace: r2cc_transition for the injected up"
# The injecting process holds /dev/r2cc open: it is the one subscriber.
ok "$(grep -q 'r2cc_deliver: seq=[0-9]* subscribers=1' <<<"$out" && echo 1)" \
	"ftrace: r2cc_deliver to the one subscriber"
diag "$(grep r2cc_ <<<"$out")"

# Failed queries and the error-counter poll have their own.
dev=$(tb_exec node0 cat /sys/kernel/r2cc/devices/rxe0/index)
out=$(tb_exec node0 bash -c "
	mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
	echo 1 > $ev/enable
	echo > /sys/kernel/tracing/trace
	echo '$dev 1 1' > /sys/kernel/debug/r2cc/fail_query
	sleep 2.5
	echo 0 > $ev/enable
	cat /sys/kernel/tracing/trace")
ok "$(grep -q 'r2cc_query_failed: dev=rxe0 port=1 fails=1' <<<"$out" && echo 1)" \
	"ftrace: r2cc_query_failed for a failed query"
ok "$(grep -q 'r2cc_errors: dev=rxe0 port=1 rate=[0-9]* total=[0-9]* degraded=0' <<<"$out" && echo 1)" \
	"ftrace: r2cc_errors at each poll"


if tb_exec node0 sh -c 'command -v bpftrace' >/dev/null; then
	bt=$(mktemp)
	bt_start node0 '^SEQ' "$R2CC_REPO/tools/bpftrace/r2cc-transitions.bt"
	tb_exec node0 "$KTEST/inject" rxe0 1 down
	tb_exec node0 "$KTEST/inject" rxe0 1 up
	for ((t = 0; t < 50; t++)); do
		bt_read | grep -q ' 1->4 ' && break
		sleep 0.2
	done
	bt_stop "$bt"
	ok "$(grep -Eq '^[0-9]+ +rxe0 +1 +1 +4->1 ' "$bt" && grep -q ' 1->4 ' "$bt" && echo 1)" \
		"bpftrace script prints the down and the up"
	diag "$(cat "$bt")"
	rm -f "$bt"
else
	ok 1 "# SKIP bpftrace not installed"
fi
run_ok "rmmod" kmod_unload node0
tb_finish
