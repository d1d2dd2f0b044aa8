#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The NCCL net plugin driven as NCCL's proxy drives it (tests/nccl/harness:
# a service thread for setup and registrations, a progress thread for data,
# two channels, grouped receives, 32 requests in flight), through each
# exported version v12 .. v8 in turn, between the two nodes: every byte
# arrives, no call fails, and the standby NIC carries nothing while the
# primary is healthy; a virtual device of both NICs (makeVDevice) uses
# both; R2CC_NCCL_MODE=stripe spreads over both.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/nccl.sh"
tb_require 2
plan_later

# The stall detector at 3 s here, not 500 ms: a TCG guest descheduled for
# half a second on a busy host makes a spurious stall, and the failover it
# triggers (correctly, for its setting) would put bytes on the standby.
# What this checks is the schedule on a healthy primary.
nccl_start 2 "R2CC_STALL_MS=3000" --iters 30 --max-size 4194304
nccl_wait
nccl_ok "standby mode, v12..v8" 12 11 10 9 8
# A primary that failed under the test is failed over from, rightly: the
# check is then void, and says why (on 6.1, rxe has flushed a healthy
# receive QP under this load, the receiver's first sign being the flush).
for r in 0 1; do
	standby=$(nccl_rail $r 1 bytes) failures=$(nccl_rail $r 0 failures)
	what="rank $r: the standby rail carried nothing (primary: $(nccl_rail $r 0 bytes) bytes)"
	if [ "$standby" = 0 ] || [ "$failures" = 0 ]; then
		is "$standby" 0 "$what"
	else
		skip "$what: the primary failed $failures times, and the standby carried $standby bytes"
	fi
	[ "$standby" = 0 ] || diag "$(grep -h -e 'failing over' -e 'back in service' \
		-e 'reconnected' "$NC_DIR"/[01].log | head -n 20)"
done
grep -q 'NET/r2cc : device 0 (rxe0:1): rails rxe0:1,rxe1:1' "$NC_DIR/0.log"
ok "$([ $? = 0 ] && echo 1)" "device 0's rails: its own NIC, then the standby"
nccl_cleanup

# A virtual device fusing both NICs (makeVDevice, v12 and v9): both are
# primaries, so both carry the traffic.
nccl_start 2 "" --versions 12,9 --vdev 0,1 --iters 20 --max-size 1048576
nccl_wait
nccl_ok "virtual device rxe0+rxe1" 12 9
ok "$(grep -q 'NET/r2cc : virtual device 2: rxe0:1+rxe1:1' "$NC_DIR/0.log" &&
	[ "$(nccl_rail 0 0 bytes)" -gt 0 ] && [ "$(nccl_rail 0 1 bytes)" -gt 0 ] && echo 1)" \
	"virtual device: both NICs primaries, both carry data ($(nccl_rail 0 0 bytes), $(nccl_rail 0 1 bytes) bytes)"
nccl_cleanup

nccl_start 2 "R2CC_NCCL_MODE=stripe" --versions 11 --iters 30 --max-size 4194304
nccl_wait
nccl_ok "stripe mode" 11
ok "$([ "$(nccl_rail 0 1 bytes)" -gt 0 ] && [ "$(nccl_rail 0 0 bytes)" -gt 0 ] && echo 1)" \
	"stripe: both rails carry data ($(nccl_rail 0 0 bytes), $(nccl_rail 0 1 bytes) bytes)"
nccl_cleanup
tb_finish
