#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `r2cc-testbed link NODE NIC down` is a real carrier loss: the rxe port
# leaves ACTIVE and IBV_EVENT_PORT_ERR reaches an async-event listener in the
# node; `up` brings the port back with IBV_EVENT_PORT_ACTIVE.  The peer's
# port on the same rail stays ACTIVE (its own carrier is up).
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 2
plan_later

port_state() {
	tb_exec "$1" cat "/sys/class/infiniband/rxe$2/ports/1/state" |
		awk '{print $2}'
}

# wait_state NODE K STATE: poll sysfs for up to 10 s.
wait_state() {
	local t
	for ((t = 0; t < 100; t++)); do
		[ "$(port_state "$1" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

for ((k = 0; k < TB_NICS; k++)); do
	events=$(mktemp)
	TB_TIMEOUT=60 tb_exec node0 stdbuf -oL ibv_asyncwatch -d "rxe$k" \
		>"$events" 2>&1 &
	wpid=$!
	for ((t = 0; t < 100; t++)); do
		grep -q "async event FD" "$events" && break
		sleep 0.1
	done

	run_ok "rail $k: link node0 $k down" tb link node0 "$k" down
	wait_state node0 "$k" DOWN
	is "$(port_state node0 "$k")" DOWN "rail $k: node0 rxe$k port 1 is DOWN"
	is "$(tb_exec node0 cat /sys/class/net/eth$k/operstate)" down \
		"rail $k: node0 eth$k carrier is down"
	is "$(port_state node1 "$k")" ACTIVE "rail $k: node1 rxe$k stays ACTIVE"

	run_ok "rail $k: link node0 $k up" tb link node0 "$k" up
	wait_state node0 "$k" ACTIVE
	is "$(port_state node0 "$k")" ACTIVE "rail $k: node0 rxe$k is ACTIVE again"

	for ((t = 0; t < 50; t++)); do
		grep -q PORT_ACTIVE "$events" && break
		sleep 0.1
	done
	kill "$wpid" 2>/dev/null
	wait "$wpid" 2>/dev/null
	ok "$(grep -q 'IBV_EVENT_PORT_ERR (10), port 1' "$events" && echo 1)" \
		"rail $k: IBV_EVENT_PORT_ERR delivered to the listener"
	ok "$(sed -n '/PORT_ERR/,$p' "$events" |
		grep -q 'IBV_EVENT_PORT_ACTIVE (9), port 1' && echo 1)" \
		"rail $k: then IBV_EVENT_PORT_ACTIVE"
	diag "$(cat "$events")"
	rm -f "$events"
done
tb_finish
