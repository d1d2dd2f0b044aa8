#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Both rails of the sender are cut mid-transfer.  By default the rest of
# the stream goes over the TCP control channel and every byte arrives;
# with R2CC_TCP_FALLBACK=0 both ranks fail with -ENETDOWN instead, and
# nothing hangs.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
plan_later

cut_both() {
	tb link node0 0 down
	tb link node0 1 down
}

restore_both() {
	tb link node0 0 up
	tb link node0 1 up
}

xfer_start "" --msgs 40 --size 1048576
run_ok "fallback: both ranks streaming" xfer_streaming
sleep 1
cut_both
xfer_wait
restore_both
xfer_ok "fallback" 40 1048576
tcp=$(xfer_field 1 tcp)
ok "$([ "${tcp:-0}" -gt 0 ] && echo 1)" \
	"fallback: the TCP path carried ${tcp:-0} bytes"
[ $_tap_failed = 0 ] || xfer_diag
xfer_cleanup

# ENETDOWN is 100 on Linux.
xfer_start "R2CC_TCP_FALLBACK=0" --msgs 400 --size 1048576 --expect 100
run_ok "no fallback: both ranks streaming" xfer_streaming
sleep 1
t0=$SECONDS
cut_both
xfer_wait
restore_both
ok "$([ "$XF_RC0" = 0 ] && [ "$XF_RC1" = 0 ] && echo 1)" \
	"no fallback: both ranks failed with -ENETDOWN (exit $XF_RC0, $XF_RC1)"
is "$(xfer_field 0 err)/$(xfer_field 1 err)" "100/100" \
	"no fallback: the error is ENETDOWN at both ends"
ok "$((SECONDS - t0 <= 20))" "no fallback: within $((SECONDS - t0)) s"
is "$(xfer_field 1 bad)" 0 "no fallback: what arrived was intact"
[ $_tap_failed = 0 ] || xfer_diag
xfer_cleanup
# Let the rails come back before the next test uses them.
sleep 2
tb_finish
