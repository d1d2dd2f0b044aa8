#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Rail 1 silently drops every frame of node0 while its carrier stays up:
# no port event comes, the stall detector declares the rail suspect
# within R2CC_STALL_MS, chunks move to rail 0 with nothing lost, both
# ends locate the fault between the ports (both stay up), the rail,
# rebuilt, fails two probes in a row (its failure is confirmed, not only
# suspected), and it is probed back into service once the black hole ends.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
plan_later

xfer_blackhole_stream "R2CC_STALL_MS=100"
xfer_ok "silent black hole" 100 1048576
ok "$([ "$(xfer_rail 0 1 failures)" -ge 1 ] && echo 1)" \
	"the stall detector failed rail 1 over"
grep -q 'stalled' "$XF_DIR/0.log"
ok "$([ $? = 0 ] && echo 1)" "the sender logged the stall"
ok "$([ "$(xfer_field 0 repairs)" -ge 1 ] && echo 1)" \
	"re-sent chunks completed (repair $(xfer_field 0 repair_ms_max) ms)"
ok "$(xfer_located 0 1 "the path" && echo 1)" \
	"the sender located the fault between the ports (both up)"
ok "$(xfer_located 1 1 "the path" && echo 1)" \
	"the receiver located it there too"
ok "$([ "$(xfer_rail 0 1 probe_failures)" -ge 2 ] &&
	grep -q 'rail 1 .*failure confirmed' "$XF_DIR/0.log" && echo 1)" \
	"rebuilt, rail 1 failed $(xfer_rail 0 1 probe_failures) probes: its failure confirmed"
ok "$(xfer_returned 0 1 && echo 1)" "rail 1 probed back into service"
is "$(xfer_rail 0 1 confirmed)" 0 "back in service, it is no longer confirmed failed"
[ $_tap_failed = 0 ] || xfer_diag
xfer_cleanup
tb_finish
