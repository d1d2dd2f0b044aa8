#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A graded drain (R2CC_DRAIN=graded): 2% loss on the sender's rail 1
# makes r2cc.ko report its port DEGRADED; the sender halves the rail's
# weight at once and again every R2CC_DEGRADE_HOLD_MS / 8 (here 6 s / 8)
# while it stays degraded, and drains it at the fourth step, instead of
# draining it at the first report.  Between the first step and the drain
# the rail still carries (at its share): over the 2.25 s, not over one
# step, since at 2% loss one chunk can wait out an ACK timeout (0.5 s).  The loss removed, the rail comes
# back after its hold at the last share and doubles back to its full
# weight step by step.  Every byte of the stream arrives.  Shaping, stall
# bound and ACK timeout as in lib_degraded.sh (30 Mbit/s rails).
# ci: kernel 6.1
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
[ "$TB_NICS" -ge 2 ] || skip_all "needs 2 NICs"
plan_later

# Either end may report the degradation first.
first="rail 1 (rxe1): local port degraded; its weight cut to 1/2"
pfirst="rail 1 (rxe1): peer's port degraded; its weight cut to 1/2"
for n in node0 node1; do
	run_ok "$n: insmod r2cc.ko" kmod_load $n
done
tb shape node0 0 --rate 30mbit
tb shape node0 1 --rate 30mbit
xfer_start "R2CC_DRAIN=graded R2CC_DEGRADE_HOLD_MS=6000 R2CC_STALL_MS=3000 R2CC_IB_TIMEOUT=17" \
	--msgs 400 --size 1048576 --ticks
run_ok "both ranks streaming" xfer_streaming
sleep 2
tb shape node0 1 --rate 30mbit --loss 2
run_ok "2% loss: the sender halves rail 1's weight" xfer_wait_log 1 40 "$first" "$pfirst"
b1=$(xfer_rail1_bytes)
run_ok "then to 1/4" xfer_wait_log 1 20 "rail 1 (rxe1): still degraded; its weight cut to 1/4"
run_ok "then to 1/8" xfer_wait_log 1 20 "rail 1 (rxe1): still degraded; its weight cut to 1/8"
run_ok "the fourth step drains it" xfer_wait_log 1 20 "rail 1 (rxe1): still degraded; drained"
b4=$(xfer_rail1_bytes)
ok "$([ "$b4" -gt "$b1" ] && echo 1)" \
	"between the first step and the drain, rail 1 still carried ($b1 -> $b4 bytes)"
tb shape node0 1 --rate 30mbit
run_ok "loss removed: back after its hold at 1/8 of its weight" \
	xfer_wait_log 1 60 "rail 1 (rxe1): port recovered; back in the schedule at 1/8 of its weight"
run_ok "and up in steps to its full weight" \
	xfer_wait_log 1 20 "rail 1 (rxe1): healthy; back to its full weight"
tb shape node0 0 --clear
tb shape node0 1 --clear
xfer_wait
xfer_ok "graded drain" 400 1048576
is "$(xfer_rail 0 1 cut)" 0 "at the end, rail 1 at its full weight (cut 0)"
diag "$(grep -e 'weight' -e 'drained' -e 'degraded' -e 'back in the' "$XF_DIR/0.log" | head -n 20)"
[ $_tap_failed = 0 ] || xfer_diag
xfer_cleanup
for n in node0 node1; do
	run_ok "$n: rmmod r2cc" kmod_unload $n
done
tb_finish
