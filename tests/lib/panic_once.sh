#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# For tests/lifecycle/run_all_rerun.sh: the first run (no file at
# $R2CC_PANIC_ONCE yet) ends node1's kernel with sysrq and fails; a run
# after that passes.  R2CC_PANIC_HOW=crash (default) panics the kernel,
# =poweroff powers it off, which leaves no kernel failure report.  Not a
# test of its own (nothing runs tests/lib).
. "$(dirname "$0")/tap.sh"
tb_require 2
plan_later
: "${R2CC_PANIC_ONCE:?set R2CC_PANIC_ONCE to a file that does not exist}"
if [ -e "$R2CC_PANIC_ONCE" ]; then
	pass "second run: node1 is up on a fresh testbed"
	tb_finish
fi
touch "$R2CC_PANIC_ONCE"
# The agent may not answer: node1 is gone before it can.
key=c
[ "${R2CC_PANIC_HOW:-crash}" = poweroff ] && key=o
tb exec --timeout 10 node1 -- sh -c "echo $key >/proc/sysrq-trigger" \
	>/dev/null 2>&1
for _ in $(seq 50); do
	tb status | grep -q '^node1: exited' && break
	sleep 0.2
done
pass "first run: node1's kernel was ended ($key)"
tb_finish
