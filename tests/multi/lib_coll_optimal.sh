#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The optimal allreduce (R2CC_ALGO=optimal, lib/coll/direct.c) on a mesh
# communicator of four nodes: the allreduce part of the collectives'
# matrix (every dtype x op x count, in place, the same bits everywhere,
# ranks that disagree) with every allreduce on it (recursive doubling
# off); then back-to-back allreduces while node1 loses all but one NIC
# and gets them back: every result exact, every allreduce by the optimal
# schedule on every rank, node1's share 0 while it is down to one NIC
# (beta = 1/2 < 3/5 at n = 4: the bound is its own data, once each
# way) and equal shares again after; node2 with no NIC left; a killed
# rank fails the others in bounded time; optimal without the mesh, and a
# bad R2CC_COLL_MESH, are refused.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 4
[ "$TB_NICS" -ge 2 ] || skip_all "needs 2 NICs"
plan_later

coll_start 4 "COLL_MESH=1 R2CC_ALGO=optimal R2CC_COLL_RD_MAX=0 COLL_KINDS=allreduce"
coll_wait
coll_report
coll_cleanup

# The mesh asked for in the environment (R2CC_COLL_MESH), as a program
# that cannot pass flags (the PyTorch backend) does.
iters=${COLL_ITERS:-60}
coll_start 4 "COLL_LOG=info R2CC_COLL_MESH=1 R2CC_ALGO=optimal R2CC_COLL_RD_MAX=0" \
	-l "$iters" -s 262144
coll_flap "all four ranks reducing" 5
coll_report
for i in 0 1 2 3; do
	ok "$([ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
		[ "$(coll_field $i iters)" = "$iters" ] &&
		[ "$(coll_field $i optimal)" = "$iters" ] && echo 1)" \
		"rank $i: $(coll_field $i iters) allreduces, $(coll_field $i optimal) by the optimal schedule, $(coll_field $i bad) wrong elements, error $(coll_field $i error)"
done
# "view of collective #S: the optimal allreduce's shares a b c d"
shares() { grep -o "optimal allreduce's shares .*" "$CO_DIR/$1.log"; }
ok "$(shares 0 | grep -q "shares 0\.[0-9]* 0\.000 0\.[0-9]* 0\.[0-9]*$" && echo 1)" \
	"rank 0: node1's share was 0 while it had one NIC left"
ok "$(shares 0 | tail -n1 | grep -q "shares 0.250 0.250 0.250 0.250$" && echo 1)" \
	"rank 0: equal shares again once node1's NICs were back ($(shares 0 | tail -n1))"
for i in 1 2 3; do
	is "$(shares $i)" "$(shares 0)" "rank $i took the same shares at the same collectives"
done
[ "$_tap_failed" = 0 ] || diag "$(grep -h 'view\|shares' "$CO_DIR"/0.log | head -n 20)"
coll_cleanup

# A node with no NIC left: node2 loses every one for 3 s.  Its share is 0
# (counted at 1/64 of the others), its data goes over the TCP fallback,
# and every allreduce still completes exact on every rank.
iters=${COLL_ITERS_NONE:-40}
coll_start 4 "COLL_LOG=info COLL_MESH=1 R2CC_ALGO=optimal R2CC_COLL_RD_MAX=0" \
	-l "$iters" -s 65536
run_ok "all four ranks reducing" coll_streaming
sleep 1
for ((k = 0; k < TB_NICS; k++)); do tb link node2 "$k" down; done
sleep 3
for ((k = 0; k < TB_NICS; k++)); do tb link node2 "$k" up; done
coll_wait
coll_report
for i in 0 1 2 3; do
	ok "$([ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
		[ "$(coll_field $i optimal)" = "$iters" ] && echo 1)" \
		"node2 without a NIC, rank $i: $(coll_field $i optimal) of $iters allreduces by the optimal schedule, $(coll_field $i bad) wrong, error $(coll_field $i error)"
done
tcp=$(coll_field 2 tcp)
ok "$([ "${tcp:-0}" -gt 0 ] && echo 1)" "rank 2's bytes went over the TCP fallback meanwhile (${tcp:-?} bytes)"
# rank 0's ring neighbours are 1 and 3: what it exchanged with node2 went
# on the mesh, and its stats count that too
tcp=$(coll_field 0 tcp) fo=$(coll_field 0 failovers)
ok "$([ "${tcp:-0}" -gt 0 ] && [ "${fo:-0}" -gt 0 ] && echo 1)" \
	"rank 0's stats count its mesh connections with node2, not a ring neighbour: ${fo:-?} failovers, ${tcp:-?} bytes over TCP"
[ "$_tap_failed" = 0 ] || diag "$(grep -h 'view\|shares\|fallback' "$CO_DIR"/2.log | head -n 20)"
coll_cleanup

# A rank killed in the middle: every other rank exchanges with it in
# every allreduce, so each one's collective fails with -ECONNRESET within
# seconds and it exits, none waiting for ever.
coll_start 4 "COLL_MESH=1 R2CC_ALGO=optimal R2CC_COLL_RD_MAX=0" -l 100000 -s 262144
run_ok "kill rank 2: all four ranks reducing" coll_streaming
sleep 1
t0=$SECONDS
tb_exec node2 pkill -KILL -f tests/libr2cc/coll
coll_wait
for i in 0 1 3; do
	ok "$([ "${CO_RCS[i]}" = 1 ] && [ "$(coll_field $i error)" = -104 ] &&
		[ "$(coll_field $i bad)" = 0 ] && echo 1)" \
		"kill rank 2: rank $i's collective failed with -ECONNRESET ($(coll_field $i error)) after $(coll_field $i iters) right ones, exit ${CO_RCS[i]}"
done
ok "$((SECONDS - t0 <= 15))" "kill rank 2: every other rank gave up within $((SECONDS - t0)) s"
[ "$_tap_failed" = 0 ] || diag "$(tail -n 5 "$CO_DIR"/[013].log)"
coll_cleanup

# Without the mesh there is no connection to every rank: refused.
coll_refused R2CC_ALGO=optimal 'the optimal allreduce needs the mesh' \
	"says optimal needs the mesh (R2CC_COMM_MESH)"
coll_refused "R2CC_COLL_MESH=2 R2CC_ALGO=optimal" 'R2CC_COLL_MESH=2: want 0..1' \
	"names R2CC_COLL_MESH's range"
tb_finish
