#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A link that trains at a lower speed while staying up is not silent: the
# periodic re-query (poll_ms, poll_query) finds it and emits PORT_SPEED with the old
# and new bandwidth; sysfs and the state page follow.  rxe derives its
# port speed from the netdev's ethtool speed.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
command -v ethtool >/dev/null || skip_all "no ethtool"
plan_later

s=/sys/kernel/r2cc/devices/rxe0/ports/1
tb_exec node0 ethtool -s eth0 speed 25000 duplex full
run_ok "insmod poll_ms=200 poll_query=1" kmod_load node0 poll_ms=200 poll_query=1
bw0=$(tb_exec node0 cat $s/bandwidth_mbps)
out=$(mktemp)
tb_exec node0 "$KTEST/watch" -n 1 -t 5000 >"$out" 2>&1 &
w=$!
for ((t = 0; t < 100; t++)); do grep -q ready "$out" && break; sleep 0.1; done
tb_exec node0 ethtool -s eth0 speed 10000 duplex full
wait "$w"
diag "$(cat "$out")"
rec=$(awk '$2 == "PORT_SPEED" {print $3, $4, $5 "->" $6, $14 "->" $9}' "$out")
bw1=$(tb_exec node0 cat $s/bandwidth_mbps)
ok "$([ "$bw1" -lt "$bw0" ] && echo 1)" "bandwidth fell: $bw0 -> $bw1 Mbit/s"
is "$rec" "rxe0 1 4->4 $bw0->$bw1" "PORT_SPEED rxe0 port 1, ACTIVE, old and new bandwidth"
is "$(tb_exec node0 cat $s/state)" ACTIVE "the port stays ACTIVE"
run_ok "state page agrees" tb_exec node0 "$KTEST/state_page"
run_ok "poll_query=0: no more re-queries" \
	tb_exec node0 sh -c 'echo 0 > /sys/module/r2cc/parameters/poll_query'
run_fails "poll_ms above 60000 is refused" "error" \
	tb_exec node0 sh -c 'echo 60001 > /sys/module/r2cc/parameters/poll_ms'
# 1000 maps to the same rate as the unknown speed rxe assumes by default.
tb_exec node0 ethtool -s eth0 speed 1000 duplex full
run_ok "rmmod" kmod_unload node0
rm -f "$out"
tb_finish
