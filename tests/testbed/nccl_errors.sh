#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The NCCL net plugin's errors are NCCL's: a peer that is gone gives
# ncclRemoteError (6), no rail left with the TCP fallback off gives
# ncclSystemError (2), and neither crashes the process.  And NCCL's own
# NCCL_SOCKET_IFNAME picks the control channel when R2CC_SOCKET_IFNAME
# is unset.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/nccl.sh"
tb_require 2
plan_later

# failed_with WHAT CODE NAME: rank 0 exited 1 (not by a signal) after a
# call returned CODE.
failed_with() {
	ok "$([ "${NC_RCS[0]}" = 1 ] && echo 1)" \
		"$1: rank 0 fails cleanly (exit ${NC_RCS[0]}, no signal)"
	ok "$(grep -q "nccl result $2" "$NC_DIR/0.log" && echo 1)" \
		"$1: a call returned $3"
	[ $_tap_failed = 0 ] || diag "$(tail -n 20 "$NC_DIR/0.log")"
	nccl_cleanup
}

NC_IFENV=NCCL_SOCKET_IFNAME=ctl0 nccl_start 2 "" --versions 11 --iters 30 \
	--max-size 1048576
nccl_wait
nccl_ok "NCCL_SOCKET_IFNAME=ctl0" 11
ok "$(grep -q 'NET/r2cc : listening on 198\.19\.1\.1:' "$NC_DIR/0.log" && echo 1)" \
	"the control channel listens on ctl0's address"
nccl_cleanup
# An interface that is not there: the plugin took it, and listen says so.
out=$(tb_exec node0 env R2CC_ROOT=198.19.1.1:$((20000 + RANDOM % 20000)) \
	WORLD_SIZE=1 RANK=0 NCCL_SOCKET_IFNAME=nosuch0 \
	LD_LIBRARY_PATH="$R2CC_BUILD/lib" NCCL_DEBUG=INFO "$HARNESS" \
	--versions 11 --iters 1 2>&1)
ok "$(grep -q 'v11: listen: ' <<<"$out" && echo 1)" \
	"NCCL_SOCKET_IFNAME=nosuch0: listen fails ($(grep -m1 'WARN' <<<"$out"))"

nccl_start 2 "" --versions 11 --iters 2000 --max-size 1048576
run_ok "peer gone: both ranks streaming" nccl_streaming
sleep 1
tb_exec node1 pkill -9 -f tests/nccl/harness
nccl_wait
failed_with "peer gone" 6 ncclRemoteError

nccl_start 2 "R2CC_TCP_FALLBACK=0" --versions 11 --iters 2000 --max-size 1048576
run_ok "no rail: both ranks streaming" nccl_streaming
sleep 1
tb link node0 0 down
tb link node0 1 down
nccl_wait
tb link node0 0 up
tb link node0 1 up
failed_with "no rail, no fallback" 2 ncclSystemError
tb_finish
