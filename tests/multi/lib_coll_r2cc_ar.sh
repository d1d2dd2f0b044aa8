#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# R2CC-AllReduce (R2CC_ALGO=r2cc-ar, lib/coll/paper.c) on a mesh
# communicator of four nodes: the allreduce part of the collectives'
# matrix while the view is even (the ring alone); back-to-back allreduces
# while node1 loses all but one NIC and gets them back, and others with
# node1 down to one NIC from the start, of a size that splits unevenly:
# every result exact on every rank, every allreduce by r2cc-ar, the ring
# over every rank taking node1's fraction of the data (1/NICS) while it
# is degraded and all of it after, the same split at the same collective
# on every rank; r2cc-ar without the mesh is refused, and "balance" is
# the ring.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 4
[ "$TB_NICS" -ge 2 ] || skip_all "needs 2 NICs"
plan_later

coll_start 4 "COLL_MESH=1 R2CC_ALGO=r2cc-ar R2CC_COLL_RD_MAX=0 COLL_KINDS=allreduce"
coll_wait
coll_report
coll_cleanup

# split RANK: the r2cc-ar lines of RANK's log, from "rank ..." on.
split() { grep -o "r2cc-ar: .*" "$CO_DIR/$1.log" | sed 's/ from collective.*//'; }
# when RANK: the collectives at which RANK's split changed.
when() { grep -o "r2cc-ar: .*from collective #[0-9]*" "$CO_DIR/$1.log" | grep -o '#[0-9]*$' | tr '\n' ' '; }
frac=$(awk -v k="$TB_NICS" 'BEGIN { printf "%.3f", 1 / k }')

# stream WHAT ITERS BYTES: every rank exact, all by r2cc-ar, one split.
stream() {
	local i
	for i in 0 1 2 3; do
		ok "$([ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
			[ "$(coll_field $i iters)" = "$2" ] &&
			[ "$(coll_field $i r2cc_ar)" = "$2" ] && echo 1)" \
			"$1, rank $i: $(coll_field $i iters) allreduces of $3 bytes, $(coll_field $i r2cc_ar) by r2cc-ar, $(coll_field $i bad) wrong elements, error $(coll_field $i error)"
	done
	ok "$(split 0 | grep -q "rank 1 the slowest, [0-9]* of [0-9]* Mbit/s: the ring over every rank takes $frac of the data" && echo 1)" \
		"$1: while node1 had one NIC of $TB_NICS, the ring took $frac of the data ($(split 0 | grep slowest | head -n1))"
	for i in 1 2 3; do
		ok "$([ "$(split $i)" = "$(split 0)" ] && [ "$(when $i)" = "$(when 0)" ] && echo 1)" \
			"$1: rank $i took the same splits at the same collectives ($(when 0))"
	done
}

iters=${COLL_ITERS:-60}
coll_start 4 "COLL_LOG=info COLL_MESH=1 R2CC_ALGO=r2cc-ar R2CC_COLL_RD_MAX=0" \
	-l "$iters" -s 262144
coll_flap "node1 degraded and back: all four ranks reducing" 5
coll_report
stream "node1 degraded and back" "$iters" 262144
ok "$(split 0 | tail -n1 | grep -q "every rank at" && echo 1)" \
	"the ring alone again once node1's NICs were back ($(split 0 | tail -n1))"
[ "$_tap_failed" = 0 ] || diag "$(grep -h 'view\|r2cc-ar' "$CO_DIR"/0.log | head -n 20)"
coll_cleanup

# node1 at one NIC from the first collective on; 1000004 bytes are
# 250001 elements, which no split of these makes even.
coll_node_nics node1 down
iters=${COLL_ITERS_DEG:-30}
coll_start 4 "COLL_LOG=info COLL_MESH=1 R2CC_ALGO=r2cc-ar R2CC_COLL_RD_MAX=0" \
	-l "$iters" -s 1000004
coll_wait
coll_node_nics node1 up
coll_report
stream "node1 degraded throughout" "$iters" 1000004
[ "$_tap_failed" = 0 ] || diag "$(grep -h 'view\|r2cc-ar' "$CO_DIR"/0.log | head -n 20)"
coll_cleanup

coll_refused R2CC_ALGO=r2cc-ar 'the r2cc-ar allreduce needs the mesh' \
	"says r2cc-ar needs the mesh (R2CC_COMM_MESH)"
coll_start 4 "R2CC_ALGO=balance" -l 20 -s 65536
coll_wait
for i in 0 1 2 3; do
	ok "$([ "${CO_RCS[i]}" = 0 ] && [ "$(coll_field $i bad)" = 0 ] &&
		[ "$(coll_field $i r2cc_ar)" = 0 ] && [ "$(coll_field $i optimal)" = 0 ] &&
		echo 1)" \
		"R2CC_ALGO=balance, rank $i: 20 allreduces by the ring, $(coll_field $i bad) wrong (exit ${CO_RCS[i]})"
done
coll_cleanup
tb_finish
