#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# libr2cc moves checked data between two nodes over both rails: message
# sizes that are not multiples of the chunk or of 8, many small messages,
# a small chunk size; notification from r2cc.ko when it is loaded and
# from verbs events when it is not.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
plan_later

# stream WHAT "ENV" MSGS SIZE [ARGS...].  The stall detector gets 1 s:
# a TCG guest can pause 100 ms, a healthy rail never pauses 1 s.
stream() {
	local what=$1 env=$2 msgs=$3 size=$4
	shift 4
	xfer_start "R2CC_STALL_MS=1000 $env" --msgs "$msgs" --size "$size" "$@"
	xfer_wait
	xfer_ok "$what" "$msgs" "$size"
	is "$(xfer_field 0 failovers)" 0 "$what: no failover without a fault"
}

run_ok "insmod r2cc.ko on node0" kmod_load node0
run_ok "insmod r2cc.ko on node1" kmod_load node1
stream "1 MiB x 30" "" 30 1048576 --window 4
is "$(xfer_field 0 source)/$(xfer_field 1 source)" "1/1" \
	"both ranks are notified by r2cc.ko"
for r in 0 1; do
	b=$(xfer_rail 0 "$r" bytes)
	ok "$([ "${b:-0}" -gt 0 ] && echo 1)" "rail $r carried data (${b:-0} bytes)"
done
xfer_cleanup
stream "odd size 1000003 x 7" "" 7 1000003 --window 3
xfer_cleanup
stream "200 messages of 100 bytes" "" 200 100 --window 8
xfer_cleanup
stream "4 KiB chunks, 300001 x 5" "R2CC_CHUNK_SIZE=4096" 5 300001
xfer_cleanup
run_ok "rmmod r2cc on node0" kmod_unload node0
run_ok "rmmod r2cc on node1" kmod_unload node1
stream "without r2cc.ko" "" 10 1048576
is "$(xfer_field 0 source)/$(xfer_field 1 source)" "2/2" \
	"both ranks fall back to verbs async events"
xfer_cleanup
tb_finish
