#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# bpftrace in a testbed node, for the tests of tools/bpftrace: start a
# script in the background and wait until it prints its first line (it
# has attached then: under TCG that takes seconds), and stop it so that
# its END runs.  What bpftrace prints goes to a file in the node too
# (through tee: bpftrace's own -o buffers it whole), read with bt_read:
# what it prints as it exits would race its exit through the node's
# agent.

# bt_start NODE READY SCRIPT ARGS...: bpftrace SCRIPT ARGS on NODE;
# returns once a line of its output matches READY (a grep pattern), 0, or
# 1 if bpftrace exited or two minutes passed first.  Not in a subshell
# (run_ok): it sets BT_NODE, BT_OUT and BT_PID for bt_read and bt_stop.
bt_start() {
	local node=$1 ready=$2 t
	shift 2
	BT_NODE=$node
	BT_OUT=/tmp/r2cc-bt.$$.out
	tb_exec "$node" rm -f "$BT_OUT"
	# shellcheck disable=SC2016
	TB_TIMEOUT=300 tb_exec "$node" sh -c \
		'o=$1; shift; timeout 280 bpftrace "$@" 2>&1 | tee "$o"' \
		sh "$BT_OUT" "$@" >/dev/null 2>&1 &
	BT_PID=$!
	for ((t = 0; t < 600; t++)); do
		bt_read | grep -q "$ready" && return 0
		kill -0 "$BT_PID" 2>/dev/null || return 1
		sleep 0.2
	done
	return 1
}

# bt_read: what bpftrace has written so far.
bt_read() {
	tb_exec "$BT_NODE" cat "$BT_OUT" 2>/dev/null
}

# bt_stop OUT: SIGINT to bpftrace, so that its END runs; KILL if it has
# not exited 10 s later (it has taken 140 s once, CI on 6.12).  All it
# printed goes to OUT.
bt_stop() {
	local t
	tb_exec "$BT_NODE" pkill -INT -x bpftrace
	for ((t = 0; t < 100; t++)); do
		kill -0 "$BT_PID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$BT_PID" 2>/dev/null; then
		echo "# bt_stop: bpftrace still running 10 s after SIGINT: KILL"
		tb_exec "$BT_NODE" pkill -KILL -x bpftrace
	fi
	wait "$BT_PID"
	bt_read >"$1"
	tb_exec "$BT_NODE" rm -f "$BT_OUT"
}
