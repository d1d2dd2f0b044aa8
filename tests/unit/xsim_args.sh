#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The protocol simulator's R2CC_XSIM_CASE_SEEDS (seeds per scripted case):
# a value outside 1..100000, or not a number, is refused (exit 2, naming
# the variable) before any seed runs; a good one sets the count.
. "$(dirname "$0")/../lib/tap.sh"
XSIM=$R2CC_BUILD/tests/xsim/xsim
[ -x "$XSIM" ] || skip_all "xsim is not built"
plan_later

for v in 0 -3 100001 abc 5x " "; do
	out=$(R2CC_XSIM_CASE_SEEDS=$v "$XSIM" -n 1 2>&1)
	ok "$([ $? = 2 ] && grep -q 'R2CC_XSIM_CASE_SEEDS must be 1..100000' <<<"$out" &&
		! grep -q '^ok' <<<"$out" && echo 1)" \
		"R2CC_XSIM_CASE_SEEDS='$v': refused, exit 2"
done
out=$(R2CC_XSIM_CASE_SEEDS=2 "$XSIM" -n 1 2>&1)
ok "$([ $? = 0 ] && grep -q '^ok 2 - case slot-reuse: 2 seeds' <<<"$out" && echo 1)" \
	"R2CC_XSIM_CASE_SEEDS=2: every scripted case runs 2 seeds"
done_testing
