#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Renamed RDMA devices stay monitored: sysfs and records follow the new
# name, and a device that takes an old name is monitored under it (no
# -EEXIST, no silently unwatched device).
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later

d=/sys/kernel/r2cc/devices
run_ok "insmod r2cc.ko" kmod_load node0
i0=$(tb_exec node0 cat $d/rxe0/index)
i1=$(tb_exec node0 cat $d/rxe1/index)
run_ok "rdma dev set rxe1 name r2t1" tb_exec node0 rdma dev set rxe1 name r2t1
is "$(tb_exec node0 cat $d/r2t1/index)" "$i1" "sysfs follows: devices/r2t1 is rxe1's index"
run_ok "rdma dev set rxe0 name rxe1 (an old name, taken by another device)" \
	tb_exec node0 rdma dev set rxe0 name rxe1
is "$(tb_exec node0 cat $d/rxe1/index)" "$i0" "devices/rxe1 is now rxe0's device"
ok "$(tb_exec node0 test ! -e $d/rxe0 && echo 1)" "devices/rxe0 is gone"
out=$(mktemp)
tb_exec node0 "$KTEST/watch" -n 2 -t 8000 >"$out" 2>&1 &
w=$!
for ((t = 0; t < 100; t++)); do grep -q ready "$out" && break; sleep 0.1; done
tb_exec node0 "$KTEST/inject" rxe1 1 down
tb_exec node0 "$KTEST/inject" r2t1 1 down
wait "$w"
diag "$(cat "$out")"
is "$(awk '$1 ~ /^[0-9]+$/ {print $3}' "$out" | tr '\n' ' ')" "rxe1 r2t1 " \
	"records carry the new names"
tb_exec node0 "$KTEST/inject" rxe1 1 up >/dev/null
tb_exec node0 "$KTEST/inject" r2t1 1 up >/dev/null
run_ok "rename back" tb_exec node0 sh -c \
	'rdma dev set rxe1 name rxe0 && rdma dev set r2t1 name rxe1'
is "$(tb_exec node0 cat $d/rxe0/index) $(tb_exec node0 cat $d/rxe1/index)" \
	"$i0 $i1" "both back under their names"
run_ok "rmmod" kmod_unload node0
rm -f "$out"
tb_finish
