#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The carrier of the sender's rail 1 flaps every 200 ms for 5 s during a
# transfer: every byte arrives intact, and the rail ends up in service.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
plan_later

xfer_start "" --msgs 150 --size 1048576 --ticks
run_ok "both ranks streaming" xfer_streaming
sleep 1
run_ok "carrier flaps every 200 ms for 5 s" tb flap node0 1 --period 0.2 --duration 5
flapped=$(xfer_ticks 0)
xfer_wait
xfer_ok "flapping rail" 150 1048576
ok "$([ "$(xfer_rail 0 1 failures)" -ge 1 ] && echo 1)" \
	"rail 1 failed over $(xfer_rail 0 1 failures) times, back $(xfer_rail 0 1 failbacks) times"
# failed and back between two ticks, a rail never shows down in them:
# what counts is that it carries bytes after the last flap
ok "$(xfer_carries_since 0 1 "$flapped" && echo 1)" \
	"rail 1 carries traffic after the flapping (from tick $flapped on)"
[ $_tap_failed = 0 ] || xfer_diag
xfer_cleanup
tb_finish
