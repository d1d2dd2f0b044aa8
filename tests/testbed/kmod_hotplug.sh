#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# RDMA devices removed and added R2CC_HOTPLUG_ROUNDS times (default 25;
# scripts/check-full.sh 100) while a subscriber reads: every add and
# remove is a record, nothing is lost, the kernel stays clean; rmmod is
# refused while /dev/r2cc is open and works once it is closed.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later
N=${R2CC_HOTPLUG_ROUNDS:-25}

run_ok "insmod r2cc.ko" kmod_load node0
out=$(mktemp)
TB_TIMEOUT=600 tb_exec node0 "$KTEST/watch" -t 15000 >"$out" 2>&1 &
wpid=$!
for ((t = 0; t < 100; t++)); do grep -q ready "$out" && break; sleep 0.1; done
run_ok "$N x rdma link delete/add rxe1" tb_exec node0 bash -c "
	for ((i = 0; i < $N; i++)); do
		rdma link delete rxe1 || exit 1
		rdma link add rxe1 type rxe netdev eth1 || exit 1
	done"
wait "$wpid"
adds=$(awk '$2 == "DEVICE_ADD" && $3 == "rxe1"' "$out" | wc -l)
rems=$(awk '$2 == "DEVICE_REMOVE" && $3 == "rxe1"' "$out" | wc -l)
is "$adds $rems" "$N $N" "$N DEVICE_ADD and $N DEVICE_REMOVE records"
is "$(awk '$2 == "OVERFLOW"' "$out" | wc -l)" 0 "no overflow"
seqs=$(awk '$1 ~ /^[0-9]+$/ {print $1}' "$out")
ok "$(awk 'NR > 1 && $1 != prev + 1 {bad = 1} {prev = $1} END {exit bad}' <<<"$seqs" && echo 1)" \
	"sequence numbers are consecutive ($(wc -l <<<"$seqs") records)"
is "$(tb_exec node0 cat /sys/kernel/r2cc/devices/rxe1/ports/1/state)" ACTIVE \
	"the last rxe1 is tracked and ACTIVE"
rm -f "$out"

# rmmod while a file is open
tb_exec node0 sh -c 'exec sleep 30 < /dev/r2cc' &
hold=$!
sleep 1
run_fails "rmmod with /dev/r2cc open is refused" "in use" tb_exec node0 rmmod r2cc
kill "$hold"
wait "$hold" 2>/dev/null
tb_exec node0 pkill -x sleep
sleep 0.5
run_ok "rmmod once it is closed" kmod_unload node0
tb_finish
