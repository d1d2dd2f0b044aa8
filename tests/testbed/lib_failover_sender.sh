#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The carrier of the sender's rail 1 is cut mid-transfer and restored:
# no byte is lost or corrupted, the sender rolls back and re-sends, the
# receiver hears of it, both ends blame the sender's port, and traffic
# returns to the rail after the restore.  Once with r2cc.ko, once with
# verbs events only and fenced repair (R2CC_REPAIR=fenced: the fence
# report alone), once with staged repair (the default) asked for by name
# and counted.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
plan_later

cut_and_restore() {
	local what=$1
	xfer_start "" --msgs 100 --size 1048576 --ticks
	run_ok "$what: both ranks streaming" xfer_streaming
	sleep 1.5
	tb link node0 1 down
	sleep 2
	tb link node0 1 up
	xfer_wait
	xfer_ok "$what" 100 1048576
	ok "$([ "$(xfer_rail 0 1 failures)" -ge 1 ] && echo 1)" \
		"$what: the sender failed rail 1 over"
	ok "$([ "$(xfer_field 0 repairs)" -ge 1 ] && echo 1)" \
		"$what: re-sent chunks completed ($(xfer_field 0 resent) bytes, repair $(xfer_field 0 repair_ms_max) ms)"
	ok "$([ "$(xfer_rail 1 1 failures)" -ge 1 ] && echo 1)" \
		"$what: the receiver knows rail 1 failed"
	ok "$(xfer_located 0 1 "this end's port" && echo 1)" \
		"$what: the sender located the fault at its own port"
	ok "$(xfer_located 1 1 "the peer's port" && echo 1)" \
		"$what: the receiver located it at the sender's port"
	ok "$(xfer_returned 0 1 && echo 1)" \
		"$what: traffic returned to rail 1 after the restore"
	is "$(xfer_field 0 source)" "$2" "$what: notified by the expected source"
	case ${XF_ENV:-} in
	R2CC_REPAIR=staged)
		ok "$([ "$(xfer_field 0 staged)" -ge 1 ] && echo 1)" \
			"$what: chunks staged in the receiver's ring ($(xfer_field 0 staged) sent, $(xfer_field 1 staged) copied in)" ;;
	R2CC_REPAIR=fenced)
		is "$(xfer_field 0 staged)/$(xfer_field 1 staged)" 0/0 \
			"$what: nothing staged" ;;
	esac
	[ $_tap_failed = 0 ] || xfer_diag
	xfer_cleanup
}

run_ok "insmod r2cc.ko on node0" kmod_load node0
run_ok "insmod r2cc.ko on node1" kmod_load node1
cut_and_restore "r2cc.ko" 1
run_ok "rmmod r2cc on node0" kmod_unload node0
run_ok "rmmod r2cc on node1" kmod_unload node1
XF_ENV=R2CC_REPAIR=fenced cut_and_restore "verbs events, fenced repair" 2
# Staged repair: the same, lossless, with the failed rail's chunks re-sent
# at once through the receiver's repair ring.
XF_ENV=R2CC_REPAIR=staged cut_and_restore "staged repair" 2
tb_finish
