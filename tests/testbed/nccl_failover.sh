#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The NCCL net plugin (v11, what NCCL 2.28 loads) under faults on node0's
# primary NIC mid-stream: a carrier cut, a silent black hole, a flap.  No
# call returns an error, every byte arrives, the traffic moves to the
# standby NIC and, after the fault, back to the primary; NCCL's log says so.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/nccl.sh"
tb_require 2
plan_later

fault() {
	local what=$1
	shift
	nccl_start 2 "" --versions 11 --iters 150 --max-size 4194304 --ticks
	run_ok "$what: both ranks streaming" nccl_streaming
	sleep 1.5
	"$@"
	nccl_wait
	nccl_ok "$what" 11
	ok "$([ "$(nccl_rail 0 1 bytes)" -gt 0 ] && echo 1)" \
		"$what: the standby took the traffic ($(nccl_rail 0 1 bytes) bytes)"
	ok "$([ "$(nccl_rail 0 0 failbacks)" -ge 1 ] && echo 1)" \
		"$what: the primary came back ($(nccl_rail 0 0 failbacks) failbacks, $(nccl_rail 0 0 bytes) bytes)"
	ok "$(grep -q 'send comm .*: rail 0 (rxe0:1) up -> down' "$NC_DIR/0.log" &&
		grep -q 'send comm .*: rail 0 (rxe0:1) .* -> up' "$NC_DIR/0.log" && echo 1)" \
		"$what: NCCL's log shows rail 0 going down and coming back"
	[ $_tap_failed = 0 ] || diag "$(grep "rail 0 (rxe0" "$NC_DIR/0.log")"
	nccl_cleanup
}

cut() { tb link node0 0 down; sleep 2; tb link node0 0 up; }
hole() { tb blackhole node0 0 on; sleep 2; tb blackhole node0 0 off; }
flap() { tb flap node0 0 --period 0.6 --duration 3; }

# The early warning off (degrade_rate=0): a black hole or a flap also
# raises rxe's error counters, and a rail drained for that would not show
# the failure and failback checked here (lib_degraded.sh tests draining).
run_ok "insmod r2cc.ko on node0" kmod_load node0 degrade_rate=0
run_ok "insmod r2cc.ko on node1" kmod_load node1 degrade_rate=0
fault "carrier cut" cut
fault "black hole" hole
fault "flap" flap
run_ok "rmmod r2cc on node0" kmod_unload node0
run_ok "rmmod r2cc on node1" kmod_unload node1
tb_finish
