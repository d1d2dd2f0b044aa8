#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A new user's loop with no fault injected (tests/libr2cc/mixed): four
# ranks run allreduce, reduce-scatter, allgather, broadcast, reduce and
# barrier of 0 to 1 MiB, one to four in flight, with the default stall
# detector; every few rounds they compare their progress through the
# bootstrap's all-gather and each sleeps up to 300 ms, as an application
# blocks between calls.  Every rank must finish every collective with
# every element right and the same count as the others; no collective
# may hang or fail.  The failovers each rank saw are reported (a healthy
# run should have none; scripts/soak-mixed.sh measures that at length).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 4
plan_later

# shellcheck disable=SC2034 # read by coll_start
COLL=$R2CC_BUILD/tests/libr2cc/mixed
seed=${MIXED_SEED:-$((RANDOM + 1))}
diag "seed $seed (MIXED_SEED=$seed replays the same sequence)"
coll_start 4 "R2CC_STALL_MS=100" -t "${MIXED_SECONDS:-20}" -i 300 -s "$seed"
run_ok "all four ranks running collectives" coll_streaming
coll_wait
coll_report
mixed_field() { sed -n "s/^mixed-result: .*\b$2=\([^ ]*\).*/\1/p" "$CO_DIR/$1.log"; }
for i in 1 2 3; do
	is "$(mixed_field $i colls)" "$(mixed_field 0 colls)" \
		"rank $i finished as many collectives as rank 0 ($(mixed_field 0 colls))"
done
for i in 0 1 2 3; do
	diag "rank $i: $(grep '^mixed-result' "$CO_DIR/$i.log")"
done
coll_cleanup
tb_finish
