#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A peer process killed mid-transfer: the survivor's pending operations
# fail with -ECONNRESET within a bounded time, whichever side died.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
plan_later

# kill_one VICTIM_NODE SURVIVOR_RANK
kill_one() {
	local t0
	xfer_start "" --msgs 400 --size 1048576 --expect 104
	run_ok "kill $1: both ranks streaming" xfer_streaming
	sleep 1
	t0=$SECONDS
	tb_exec "$1" pkill -KILL -f tests/libr2cc/xfer
	xfer_wait
	is "$(xfer_field "$2" err)" 104 "kill $1: the survivor got -ECONNRESET"
	ok "$((SECONDS - t0 <= 15))" "kill $1: within $((SECONDS - t0)) s"
	[ $_tap_failed = 0 ] || xfer_diag
	xfer_cleanup
}

kill_one node1 0
kill_one node0 1
tb_finish
