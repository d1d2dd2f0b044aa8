#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# `r2cc-testbed blackhole NODE NIC on` drops the NIC's frames in the rail's
# switch while the carrier stays up: both ports stay ACTIVE, yet RDMA
# traffic on the rail stops; `off` makes the rail usable again.
. "$(dirname "$0")/../lib/tap.sh"
tb_require 2
plan_later

rcvd() {
	tb_exec node1 cat /sys/class/infiniband/rxe0/ports/1/hw_counters/rcvd_pkts
}
state() {
	tb_exec "$1" cat /sys/class/infiniband/rxe0/ports/1/state | awk '{print $2}'
}
wait_listen() {
	local t
	for ((t = 0; t < 100; t++)); do
		tb_exec node1 ss -Htln 'sport = :18515' | grep -q . && return 0
		sleep 0.2
	done
	return 1
}
# bw_run SECONDS: a timed ib_write_bw on rail 0, node0 -> node1, in the
# background; sets SPID and CPID.
bw_run() {
	TB_TIMEOUT=$(($1 + 30)) tb_exec node1 ib_write_bw -d rxe0 -x 1 \
		-s 65536 -D "$1" >/dev/null 2>&1 &
	SPID=$!
	wait_listen
	TB_TIMEOUT=$(($1 + 30)) tb_exec node0 ib_write_bw -d rxe0 -x 1 \
		-s 65536 -D "$1" 198.18.0.2 >/dev/null 2>&1 &
	CPID=$!
}

bw_run 10
c0=$(rcvd)
for ((t = 0; t < 50; t++)); do
	[ "$(rcvd)" -gt "$((c0 + 100))" ] && break
	sleep 0.2
done
ok "$([ "$(rcvd)" -gt "$((c0 + 100))" ] && echo 1)" "RDMA traffic flows on rail 0"

run_ok "blackhole node0 0 on" tb blackhole node0 0 on
sleep 1
c1=$(rcvd)
sleep 3
c2=$(rcvd)
is "$c2" "$c1" "node1 receives nothing on rail 0 for 3 s (rcvd_pkts $c1)"
is "$(state node0)" ACTIVE "node0 rxe0 stays ACTIVE"
is "$(state node1)" ACTIVE "node1 rxe0 stays ACTIVE"
is "$(tb_exec node0 cat /sys/class/net/eth0/operstate)" up \
	"node0 eth0 carrier stays up"
holed=$(tb status | awk '$1 == "rail0" && $2 == "node0:" {print $10}')
ok "$([ "${holed:-0}" -gt 0 ] && echo 1)" "rail0 hub counted $holed black-holed frames"

run_ok "blackhole node0 0 off" tb blackhole node0 0 off
kill "$CPID" "$SPID" 2>/dev/null
wait "$CPID" "$SPID" 2>/dev/null
# CPID and SPID are tb_exec's subshells: killing them leaves the testbed's
# exec, and the ib_write_bw of the first run, going on the nodes for the
# rest of their 10 s, where the old server on port 18515 can answer the
# new client (CI once failed the check below so).  End both, wait them out.
for n in node0 node1; do
	tb_exec "$n" pkill -x ib_write_bw >/dev/null 2>&1
done
for ((t = 0; t < 50; t++)); do
	tb_exec node0 pgrep -x ib_write_bw >/dev/null 2>&1 ||
		tb_exec node1 pgrep -x ib_write_bw >/dev/null 2>&1 || break
	sleep 0.2
done

bw_run 3
c3=$(rcvd)
wait "$CPID"
crc=$?
wait "$SPID"
ok "$([ $crc = 0 ] && [ "$(rcvd)" -gt "$c3" ] && echo 1)" \
	"after 'off' a new ib_write_bw on rail 0 succeeds (client exit $crc)"
tb_finish
