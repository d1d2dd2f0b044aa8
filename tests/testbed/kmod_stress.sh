#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Concurrent readers, injectors and real events: four subscribers read
# while two processes inject on rxe1 (R2CC_STRESS_ROUNDS down/up pairs
# each, default 40; scripts/check-full.sh 150) and rxe0's carrier flaps;
# every subscriber sees the same records, with consecutive sequence
# numbers.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
[ "$TB_NICS" -ge 2 ] || skip_all "needs 2 NICs"
plan_later

run_ok "insmod r2cc.ko" kmod_load node0
outs=()
pids=()
for ((i = 0; i < 4; i++)); do
	outs[i]=$(mktemp)
	TB_TIMEOUT=300 tb_exec node0 "$KTEST/watch" -t 15000 >"${outs[i]}" 2>&1 &
	pids[i]=$!
done
for ((t = 0; t < 100; t++)); do
	n=0
	for f in "${outs[@]}"; do grep -q ready "$f" && n=$((n + 1)); done
	[ $n = 4 ] && break
	sleep 0.1
done
rounds=${R2CC_STRESS_ROUNDS:-40}
inj='for ((i = 0; i < '"$rounds"'; i++)); do
	'"$KTEST"'/inject rxe1 1 down 2>/dev/null
	'"$KTEST"'/inject rxe1 1 up 2>/dev/null
done; true'
tb_exec node0 bash -c "$inj" &
a=$!
tb_exec node0 bash -c "$inj" &
b=$!
# Downs last 1 s: a shorter flap may never reach the node's RDMA stack
# under this load (linkwatch sees the carrier already back).
for ((k = 0; k < 4; k++)); do
	tb link node0 0 down
	sleep 1
	tb link node0 0 up
	sleep 0.3
done
wait "$a" "$b"
wait "${pids[@]}"

first=$(awk '$1 ~ /^[0-9]+$/ {print $1}' "${outs[0]}")
n=$(wc -l <<<"$first")
# Two injectors' downs and ups overlap: one's inject finding the port
# already there makes no record.  Still, each round of one injector takes
# the port down and up, so at least 2 x rounds records, and the 4 real
# losses add 8 (CI of 2026-12-03 saw exactly that minimum, 88).
ok "$([ "$n" -ge $((2 * rounds + 8)) ] && echo 1)" \
	"subscriber 0 read $n records (at least $((2 * rounds + 8)))"
ok "$(awk 'NR > 1 && $1 != prev + 1 {bad = 1} {prev = $1} END {exit bad}' <<<"$first" && echo 1)" \
	"its sequence numbers are consecutive"
for ((i = 1; i < 4; i++)); do
	other=$(awk '$1 ~ /^[0-9]+$/ {print $1}' "${outs[i]}")
	is "$(md5sum <<<"$other")" "$(md5sum <<<"$first")" \
		"subscriber $i saw exactly the same records"
done
downs=$(awk '$2 == "PORT_DOWN" && $3 == "rxe0" && $8 == 0' "${outs[0]}" | wc -l)
is "$downs" 4 "the 4 real carrier losses on rxe0 are there"
is "$(cat "${outs[@]}" | awk '$2 == "OVERFLOW"' | wc -l)" 0 "no overflow"
is "$(tb_exec node0 cat /sys/kernel/r2cc/devices/rxe1/ports/1/state)" ACTIVE \
	"rxe1 ends ACTIVE"
rm -f "${outs[@]}"
run_ok "rmmod" kmod_unload node0
tb_finish
