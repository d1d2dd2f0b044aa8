#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# For tests/lifecycle/run_all_rerun.sh: the first $R2CC_BREAK_TIMES runs
# (default 1; counted in the file $R2CC_BREAK_ONCE) break the testbed as
# $R2CC_BREAK_HOW says; a run after that passes.  Not a test of its own
# (nothing runs tests/lib).
#   crash      node1's kernel panics (sysrq c): a report, no r2cc.ko frame
#   poweroff   node1 powers off (sysrq o): no report; the file fails
#   rail       node1's rail 1 stops answering (ARP off), the carrier up
#              and no testbed fault set, as a stalled NIC; the file fails
#   blackhole  node1's rail 1 is left black-holed; the file passes
. "$(dirname "$0")/tap.sh"
tb_require 2
plan_later
: "${R2CC_BREAK_ONCE:?set R2CC_BREAK_ONCE to a file that does not exist}"
runs=$(cat "$R2CC_BREAK_ONCE" 2>/dev/null || echo 0)
echo $((runs + 1)) >"$R2CC_BREAK_ONCE"
if [ "$runs" -ge "${R2CC_BREAK_TIMES:-1}" ]; then
	pass "run $((runs + 1)): a fresh testbed"
	tb_finish
fi
how=${R2CC_BREAK_HOW:-crash}
case $how in
crash|poweroff)
	key=c
	[ "$how" = poweroff ] && key=o
	# The agent may not answer: node1 is gone before it can.
	tb exec --timeout 10 node1 -- sh -c "echo $key >/proc/sysrq-trigger" \
		>/dev/null 2>&1
	for _ in $(seq 50); do
		tb status | grep -q '^node1: exited' && break
		sleep 0.2
	done
	pass "first run: node1's kernel was ended ($key)"
	;;
rail)
	tb_exec node1 sh -c 'ip link set eth1 arp off && ip neigh flush dev eth1'
	fail "first run: rail 1 broke under the test"
	;;
blackhole)
	tb blackhole node1 1 on
	pass "first run: rail 1 of node1 black-holed, and left so"
	;;
*)
	fail "R2CC_BREAK_HOW=$how: want crash, poweroff, rail or blackhole"
	;;
esac
tb_finish
