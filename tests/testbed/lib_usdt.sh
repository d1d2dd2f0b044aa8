#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# libr2cc's USDT probes fire where a failure is handled: bpftrace on
# node0 sees rail_fail, fault (located at this end's port), fence,
# rollback, repair and failback while a cable of the sender's rail 1 is
# cut and restored under a checked stream.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
tb_require 2
plan_later

tb_exec node0 sh -c 'command -v bpftrace' >/dev/null ||
	skip_all "bpftrace not installed"
lib=$(readlink -f "$R2CC_BUILD/lib/libr2cc.so")
tb_exec node0 sh -c "bpftrace -l 'usdt:$lib:*'" | grep -q r2cc:rail_fail ||
	skip_all "libr2cc built without USDT probes"

script="BEGIN { printf(\"READY\\n\"); }"
for p in rail_fail fence rollback repair failback; do
	script="$script usdt:$lib:r2cc:$p { printf(\"%s rail %d\\n\", \"$p\", arg1); }"
done
# arg2: enum r2cc_rail_reason (2: this end's port)
script="$script usdt:$lib:r2cc:fault { printf(\"fault rail %d at %d\\n\", arg1, arg2); }"
bt=$(mktemp)
TB_TIMEOUT=180 tb_exec node0 timeout 150 bpftrace -e "$script" >"$bt" 2>&1 &
bpid=$!
for ((t = 0; t < 1200; t++)); do
	grep -q '^READY' "$bt" && break
	kill -0 "$bpid" 2>/dev/null || break
	sleep 0.1
done
run_ok "bpftrace attached to the probes" grep -q '^READY' "$bt"

xfer_start "" --msgs 100 --size 1048576
run_ok "both ranks streaming" xfer_streaming
sleep 1.5
tb link node0 1 down
sleep 2
tb link node0 1 up
xfer_wait
xfer_ok "cut under bpftrace" 100 1048576
sleep 0.5
tb_exec node0 pkill -INT -x bpftrace
wait "$bpid"
for p in rail_fail fence rollback repair failback; do
	ok "$(grep -q "^$p rail" "$bt" && echo 1)" "probe r2cc:$p fired"
done
ok "$(grep -q "^fault rail 1 at 2$" "$bt" && echo 1)" \
	"probe r2cc:fault fired: rail 1, at this end's port"
[ $_tap_failed = 0 ] || diag "$(cat "$bt")"
rm -f "$bt"
xfer_cleanup
tb_finish
