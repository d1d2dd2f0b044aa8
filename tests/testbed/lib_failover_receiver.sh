#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The carrier of the receiver's rail 0 is cut mid-transfer: the receiver
# sees it first, fences the rail and tells the sender, which re-sends
# what did not arrive; nothing is lost or corrupted, and both ends blame
# the receiver's port.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
plan_later

run_ok "insmod r2cc.ko on node0" kmod_load node0
run_ok "insmod r2cc.ko on node1" kmod_load node1
xfer_start "" --msgs 100 --size 1048576 --ticks
run_ok "both ranks streaming" xfer_streaming
sleep 1.5
tb link node1 0 down
sleep 2
tb link node1 0 up
xfer_wait
xfer_ok "receiver's rail cut" 100 1048576
ok "$([ "$(xfer_rail 1 0 failures)" -ge 1 ] && echo 1)" \
	"the receiver failed rail 0 over"
ok "$([ "$(xfer_rail 0 0 failures)" -ge 1 ] && echo 1)" \
	"the sender heard of it and stopped using rail 0"
ok "$([ "$(xfer_field 0 repairs)" -ge 1 ] && echo 1)" \
	"re-sent chunks completed ($(xfer_field 0 resent) bytes, repair $(xfer_field 0 repair_ms_max) ms)"
ok "$(xfer_located 1 0 "this end's port" && echo 1)" \
	"the receiver located the fault at its own port"
ok "$(xfer_located 0 0 "the peer's port" && echo 1)" \
	"the sender located it at the receiver's port"
ok "$(xfer_returned 0 0 && echo 1)" "traffic returned to rail 0"
[ $_tap_failed = 0 ] || xfer_diag
xfer_cleanup
run_ok "rmmod r2cc on node0" kmod_unload node0
run_ok "rmmod r2cc on node1" kmod_unload node1
tb_finish
