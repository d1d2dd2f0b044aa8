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

nccl_start 2 "" --iters 60 --max-size 4194304
nccl_wait
nccl_ok "standby mode, v12..v8" 12 11 10 9 8
for r in 0 1; do
	is "$(nccl_rail $r 1 bytes)" 0 \
		"rank $r: the standby rail carried nothing (primary: $(nccl_rail $r 0 bytes) bytes)"
done
grep -q 'NET/r2cc : device 0 (rxe0:1): rails rxe0:1,rxe1:1' "$NC_DIR/0.log"
ok "$([ $? = 0 ] && echo 1)" "device 0's rails: its own NIC, then the standby"
nccl_cleanup

# A virtual device fusing both NICs (makeVDevice, v12 and v9): both are
# primaries, so both carry the traffic.
nccl_start 2 "" --versions 12,9 --vdev 0,1 --iters 40 --max-size 1048576
nccl_wait
nccl_ok "virtual device rxe0+rxe1" 12 9
ok "$(grep -q 'NET/r2cc : virtual device 2: rxe0:1+rxe1:1' "$NC_DIR/0.log" &&
	[ "$(nccl_rail 0 0 bytes)" -gt 0 ] && [ "$(nccl_rail 0 1 bytes)" -gt 0 ] && echo 1)" \
	"virtual device: both NICs primaries, both carry data ($(nccl_rail 0 0 bytes), $(nccl_rail 0 1 bytes) bytes)"
nccl_cleanup

nccl_start 2 "R2CC_NCCL_MODE=stripe" --versions 11 --iters 60 --max-size 4194304
nccl_wait
nccl_ok "stripe mode" 11
ok "$([ "$(nccl_rail 0 1 bytes)" -gt 0 ] && [ "$(nccl_rail 0 0 bytes)" -gt 0 ] && echo 1)" \
	"stripe: both rails carry data ($(nccl_rail 0 0 bytes), $(nccl_rail 0 1 bytes) bytes)"
nccl_cleanup
tb_finish
