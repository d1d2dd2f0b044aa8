#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A peer that has moved on: the receiver, done with its last message,
# blocks for 2.5 times the peer timeout (2 s here) without a call into the
# library (as an application in compute or in another library's barrier),
# while the sender still needs its fence report.  Node1's rail 1 drops
# everything node1 sends on it (netem, 100% loss on its egress), the ACKs
# of the sender's writes, so every chunk arrives but the sender's rail 1
# writes hang until the stall detector fails the rail, after the receiver
# has every byte.  The receiver's progress thread (R2CC_PROGRESS_MS,
# 10 ms) answers: the sender completes long before the receiver comes
# back, and no rank fails.  With the thread off the sender waits for it,
# which is what the thread is for (and shows this test can fail).  Both
# runs use fenced repair (R2CC_REPAIR=fenced), where the sender needs the
# receiver's fence report.  Staged repair needs no answer: the sender
# stages rail 1's unacknowledged chunks on rail 0 into the receiver's
# ring and completes once its own rail 1 has drained, with no progress
# thread either; the receiver, back, finds its messages whole and frees
# the entries.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
[ "$TB_NICS" -ge 2 ] || skip_all "needs 2 NICs"
plan_later

# The stall detector at 1.5 s and the ACK timeout at 537 ms (rxe would
# otherwise fail the rail after 7 retries of 67 ms, before the receiver is
# done): 8 messages of 256 KiB are through well before either.  rxe sends
# at most 128 packets ahead of its ACKs, so a rail holds 4 chunks of
# 16 KiB (64 packets of 1 KiB): all of them reach the receiver unACKed.
# No stall questions: here the writes land and only the ACKs are lost, so
# the receiver's first answer keeps the rail for one more bound (1.5 s),
# and the time measured would be the questions', not the progress thread's.
env="R2CC_STALL_MS=1500 R2CC_STALL_ASK=0 R2CC_IB_TIMEOUT=17 R2CC_CHUNK_SIZE=16384 R2CC_RAIL_DEPTH=4 R2CC_PEER_TIMEOUT_MS=2000"
idle=5000

# dump: both ranks' logs, for a failure.
dump() {
	diag "sender: $(cat "$XF_DIR/0.log")" "receiver: $(cat "$XF_DIR/1.log")"
}

# idle_run WHAT ENV: the stream with node1's rail 1 mute once the rails
# are connected (their neighbours resolved), before it starts.
idle_run() {
	xfer_start "$env $2" --msgs 8 --size 262144 --idle-ms "$idle" \
		--hold-ms 1500
	run_ok "$1: both ranks connected" xfer_streaming
	run_ok "$1: node1's rail 1 drops what node1 sends" \
		tb shape node1 1 --loss 100
	xfer_wait
	tb shape node1 1 --clear
	xfer_ok "$1" 8 262144
	ok "$(grep -q "^idle $idle ms" "$XF_DIR/1.log" && echo 1)" \
		"$1: the receiver was idle for $idle ms after its last message"
	ok "$([ "$(xfer_rail 0 1 failures)" -ge 1 ] && echo 1)" \
		"$1: the sender failed rail 1 ($(xfer_rail 0 1 failures) failures)"
	case $2 in
	*R2CC_REPAIR=staged*)
		ok "$([ "$(xfer_field 0 staged)" -ge 1 ] && echo 1)" \
			"$1: the sender staged rail 1's chunks on rail 0 ($(xfer_field 0 staged) staged)" ;;
	*)
		is "$(xfer_rail 0 1 rollbacks)" 0 \
			"$1: every chunk of rail 1 had arrived (none sent again): the receiver was done first" ;;
	esac
}

idle_run "progress thread" "R2CC_REPAIR=fenced"
secs=$(xfer_field 0 secs)
ok "$(awk -v s="${secs:-99}" 'BEGIN {exit !(s < 4)}' && echo 1)" \
	"progress thread: the sender completed in $secs s, before the idle receiver came back ($idle ms)"
[ "$_tap_failed" = 0 ] || dump

idle_run "no progress thread" "R2CC_REPAIR=fenced R2CC_PROGRESS_MS=0"
secs=$(xfer_field 0 secs)
ok "$(awk -v s="${secs:-0}" 'BEGIN {exit !(s >= 4)}' && echo 1)" \
	"no progress thread: the sender waited for the receiver ($secs s)"
[ "$_tap_failed" = 0 ] || dump

idle_run "staged, no progress thread" "R2CC_REPAIR=staged R2CC_PROGRESS_MS=0"
secs=$(xfer_field 0 secs)
ok "$(awk -v s="${secs:-99}" 'BEGIN {exit !(s < 4)}' && echo 1)" \
	"staged, no progress thread: the sender completed in $secs s, needing no answer from the idle receiver"
[ "$_tap_failed" = 0 ] || dump
tb_finish
