#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tools/bpftrace/r2cc-flaps.bt on real flaps: node0's first port goes
# down three times; a line each, FLAPPING from the second, how long each
# down lasted, and the count of three in its totals.  (r2cc-failover.bt
# runs in lib_bpftrace.sh, which needs a stream, r2cc-degraded.bt in
# kmod_degraded.sh, which needs a lossy link: both on 6.1 only, where rxe
# survives their load.)
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/bpftrace.sh"
tb_require 1
tb_exec node0 sh -c 'command -v bpftrace' >/dev/null ||
	skip_all "bpftrace not installed"
plan_later
BT=$R2CC_REPO/tools/bpftrace
run_ok "insmod r2cc.ko" kmod_load node0
bt=$(mktemp)

bt_start node0 '^watching' "$BT/r2cc-flaps.bt"
ok "$([ $? = 0 ] && echo 1)" "r2cc-flaps.bt attached"
for i in 1 2 3; do
	tb link node0 0 down
	sleep 1.5
	tb link node0 0 up
	sleep 1.5
done
bt_stop "$bt"
diag "$(cat "$bt")"
is "$(grep -c 'rxe0 port 1: down' "$bt")" 3 "r2cc-flaps.bt: three downs of rxe0 port 1"
ok "$(grep -q 'rxe0 port 1: down, FLAPPING (2 downs' "$bt" &&
	grep -q 'rxe0 port 1: down, FLAPPING (3 downs' "$bt" &&
	! grep -q 'FLAPPING (1 down' "$bt" && echo 1)" \
	"FLAPPING from the second down on"
ok "$(grep -q 'rxe0 port 1: up after [0-9]* ms down' "$bt" && echo 1)" \
	"each up says how long the port was down"
ok "$(grep -q '^@downs\[rxe0, 1\]: 3$' "$bt" && echo 1)" "the totals: rxe0 port 1 down 3 times"
rm -f "$bt"
run_ok "rmmod" kmod_unload node0
tb_finish
