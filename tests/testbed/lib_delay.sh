#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Rail 1 of the sender is delayed by 400 ms (netem), far above the stall
# timeout: the rail is suspected and fenced, its late writes are refused
# by the fenced QP, and buffers that are reused at once never see them.
# Every message is checked, so a late write into a reused buffer fails.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
plan_later

xfer_start "R2CC_STALL_MS=100" --msgs 240 --size 262144 --window 2
run_ok "both ranks streaming" xfer_streaming
sleep 1
tb shape node0 1 --delay 400ms
sleep 3
tb shape node0 1 --clear
xfer_wait
xfer_ok "delayed rail, buffers reused" 240 262144
ok "$([ "$(xfer_rail 0 1 failures)" -ge 1 ] && echo 1)" \
	"the delayed rail was suspected and fenced"
[ $_tap_failed = 0 ] || xfer_diag
xfer_cleanup
tb_finish
