#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# R2CC_STALL_ASK=1: before the sender fails a rail past its stall bound
# it asks the receiver over the control channel when a write last landed
# on it.  Behind a black hole (rail 1 of node0 drops every frame, its
# carrier up) nothing lands, so the answer fails the rail as the stall
# detector alone would, chunks move to rail 0 with nothing lost, and the
# rail comes back once the black hole ends.  The protocol simulator
# covers the other answer (a write landed: the rail is kept) and a
# receiver that lies (tests/xsim, cases stall-ask and stall-ask-blind).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
[ "$TB_NICS" -ge 2 ] || skip_all "needs 2 NICs"
plan_later

xfer_blackhole_stream "R2CC_STALL_MS=100 R2CC_STALL_ASK=1"
xfer_ok "black hole, the receiver asked" 100 1048576
ok "$([ "$(xfer_rail 0 1 failures)" -ge 1 ] && echo 1)" \
	"rail 1 failed over ($(xfer_rail 0 1 failures) times)"
grep -q 'rail 1 (rxe1): stalled: no completion in time, none landed at the peer' "$XF_DIR/0.log"
ok "$([ $? = 0 ] && echo 1)" \
	"the receiver's answer, nothing landed, failed it"
ok "$(xfer_returned 0 1 && echo 1)" "rail 1 probed back into service"
diag "rail 1 kept on the receiver's word $(xfer_rail 0 1 stalls_spared) times"
[ $_tap_failed = 0 ] || xfer_diag
xfer_cleanup
tb_finish
