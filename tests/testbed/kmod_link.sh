#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A real carrier loss (`r2cc-testbed link node0 0 down`) becomes a PORT_DOWN
# record for rxe0 port 1 with the right states, ifindex and bandwidth,
# reported by the netdev notifier before any query with carrier_down=1
# (phys_state 0, unknown; the query that follows fills it in); `up` a
# PORT_UP record; sysfs counts both and the downtime.  An address change
# on a rail netdev is a GID_CHANGE record.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later

run_ok "insmod r2cc.ko" kmod_load node0
run_ok "carrier_down=1" \
	tb_exec node0 sh -c 'echo 1 > /sys/module/r2cc/parameters/carrier_down'
out=$(mktemp)
tb_exec node0 "$KTEST/watch" -n 2 -t 20000 >"$out" 2>&1 &
wpid=$!
for ((t = 0; t < 100; t++)); do grep -q ready "$out" && break; sleep 0.1; done

s=/sys/kernel/r2cc/devices/rxe0/ports/1
tb link node0 0 down
sleep 1
phys_down=$(tb_exec node0 cat $s/phys_state)
tb link node0 0 up
wait "$wpid"
rc=$?
ok "$([ $rc = 0 ] && echo 1)" "watcher got two records"
diag "$(cat "$out")"
down=$(awk '$2 == "PORT_DOWN"' "$out")
up=$(awk '$2 == "PORT_UP"' "$out")
ifindex=$(tb_exec node0 cat /sys/class/net/eth0/ifindex)
# rxe maps an unknown netdev speed to SDR x1: 2000 Mbit/s of data.
width=$(tb_exec node0 ibv_devinfo -d rxe0 -v | sed -n 's/.*active_width:.*(\([0-9]*\)).*/\1/p')
speed=$(tb_exec node0 ibv_devinfo -d rxe0 -v | sed -n 's/.*active_speed:.*(\([0-9]*\)).*/\1/p')
case "$speed" in
1) lane=2000 ;; 2) lane=4000 ;; 4) lane=8000 ;; 8) lane=10000 ;;
16) lane=13636 ;; 32) lane=25000 ;; 64) lane=50000 ;; 128) lane=100000 ;;
*) lane=0 ;;
esac
case "$width" in 1) w=1 ;; 2) w=4 ;; 4) w=8 ;; 8) w=12 ;; 16) w=2 ;; *) w=0 ;; esac
set -- $down
is "$3 $4 $5 $6" "rxe0 1 4 1" "PORT_DOWN: rxe0 port 1, ACTIVE -> DOWN"
is "${10}" "$ifindex" "PORT_DOWN carries eth0's ifindex"
is "$8" 0 "PORT_DOWN is not flagged injected"
is "$7" 0 "PORT_DOWN came from the carrier loss, before any query: phys_state 0"
ok "$([ "${phys_down:-0}" -gt 0 ] && echo 1)" \
	"the query after it fills in sysfs phys_state ($phys_down)"
set -- $up
is "$3 $4 $5 $6" "rxe0 1 1 4" "PORT_UP: rxe0 port 1, DOWN -> ACTIVE"
is "$9" "$((lane * w))" "PORT_UP bandwidth $9 Mbit/s = verbs' speed x width"
is "$(tb_exec node0 cat $s/down_events $s/up_events | tr '\n' ' ')" "1 1 " \
	"sysfs: one down, one up"
dt=$(tb_exec node0 cat $s/down_time_ms)
ok "$([ "$dt" -ge 500 ] && [ "$dt" -lt 20000 ] && echo 1)" "sysfs down_time_ms $dt"
is "$(tb_exec node0 cat $s/state)" ACTIVE "sysfs state ACTIVE"
# A new address on eth1 changes rxe1's GID table: a GID_CHANGE record.
tb_exec node0 "$KTEST/watch" -n 1 -t 10000 >"$out" 2>&1 &
wpid=$!
for ((t = 0; t < 100; t++)); do grep -q ready "$out" && break; sleep 0.1; done
tb_exec node0 ip addr add 198.18.1.200/24 dev eth1
wait "$wpid"
tb_exec node0 ip addr del 198.18.1.200/24 dev eth1
set -- $(awk '$1 ~ /^[0-9]+$/' "$out")
is "$2 $3 $4" "GID_CHANGE rxe1 1" "an address added to eth1: GID_CHANGE for rxe1 port 1"
run_ok "rmmod" kmod_unload node0
rm -f "$out"
tb_finish
