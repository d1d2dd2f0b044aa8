#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Up/down cycles (R2CC_UPDOWN_CYCLES, default 2; scripts/check-full runs
# 10) leave no process, socket, mount or namespace behind; kill powers a
# node off; errors when the testbed is down or not built.
# Needs the testbed down when it starts (it brings its own up).
. "$(dirname "$0")/../lib/tap.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root"
tb status >/dev/null 2>&1 && skip_all "a testbed is already up"
CYCLES=${R2CC_UPDOWN_CYCLES:-2}
plan_later

snapshot() {
	{
		ps -eo pid=,args= | awk '/[q]emu-system.*r2cc-node|[r]2cc-tb-hub/'
		wc -l </proc/self/mountinfo
		ip netns list 2>/dev/null
		ss -Hxl 2>/dev/null | grep -c "$R2CC_BUILD/testbed" || true
		find "$R2CC_BUILD/testbed" -type s 2>/dev/null
	}
}

run_fails "exec on a testbed that is down" "not up" tb exec node0 -- true
run_fails "link on a testbed that is down" "not up" tb link node0 0 down
run_fails "up with bad --nodes" "--nodes must be" tb up --nodes 0
run_fails "up with bad --nics" "--nics must be" tb up --nics 99
run_fails "up with too little memory" "--mem must be" tb up --mem 16
run_fails "up with a hostile --append" "not a list of kernel parameters" \
	tb up --append 'quiet; rm -rf /'
run_fails "up with an --append of two spaces" "not a list" \
	tb up --append 'a  b'
run_fails "health on a testbed that is down" "not up" tb health
run_fails "up without the helpers built" "not built" \
	env R2CC_BUILD_DIR=/nonexistent "$TESTBED" up
before=$(snapshot)
for ((c = 1; c <= CYCLES; c++)); do
	out=$(tb up 2>&1)
	ok "$([ $? = 0 ] && echo 1)" "cycle $c: up ($(head -n1 <<<"$out" |
		sed -n 's/.*ready in //p'))"
	if [ "$c" = "$CYCLES" ]; then
		run_ok "cycle $c: kill node1" tb kill node1
		ok "$(tb status | grep -q '^node1: killed' && echo 1)" \
			"cycle $c: status shows node1 killed"
		run_fails "cycle $c: exec on a killed node" "not up" \
			tb exec node1 -- true
		is "$(tb exec node0 -- hostname)" node0 "cycle $c: node0 still runs"
	fi
	run_ok "cycle $c: down" tb down
	after=$(snapshot)
	is "$after" "$before" "cycle $c: nothing left behind"
done
done_testing
