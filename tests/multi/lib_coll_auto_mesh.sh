#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# R2CC_ALGO=auto (the default) on a mesh communicator of four nodes
# (R2CC_COLL_MESH=1): back-to-back allreduces while node1 loses all but
# one NIC and gets them back.  auto must run the ring while the view is
# even and the optimal allreduce while node1 is degraded (beta = 1/2 or
# 1/3: the model has it at 0.67 or below of the ring's time, under
# lib/coll/model/weight.c's margin of 0.85), every rank must switch at the same
# collective both ways, and every result must be exact; without the
# mesh auto never runs it.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 4
[ "$TB_NICS" -ge 2 ] || skip_all "needs 2 NICs"
plan_later

iters=${COLL_ITERS:-60}
coll_start 4 "COLL_LOG=info R2CC_COLL_MESH=1 R2CC_COLL_RD_MAX=0" \
	-l "$iters" -s 262144
coll_flap "all four ranks reducing" 5
coll_report
for i in 0 1 2 3; do
	opt=$(coll_field $i optimal)
	ok "$([ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
		[ "$(coll_field $i iters)" = "$iters" ] &&
		[ "${opt:-0}" -gt 0 ] && [ "${opt:-0}" -lt "$iters" ] && echo 1)" \
		"rank $i: $(coll_field $i iters) allreduces, $opt by the optimal schedule, $(coll_field $i bad) wrong elements, error $(coll_field $i error)"
done
# "auto: allreduces run as the optimal allreduce from collective #S ..."
switches() { grep -o "auto: allreduces run as .* from collective #[0-9]*" "$CO_DIR/$1.log"; }
ok "$(switches 0 | head -n1 | grep -q "as the optimal allreduce from" &&
	switches 0 | tail -n1 | grep -q "as a ring from" && echo 1)" \
	"rank 0: to the optimal allreduce while node1 was degraded, and back ($(switches 0 | tr '\n' ';'))"
for i in 1 2 3; do
	is "$(switches $i)" "$(switches 0)" "rank $i switched at the same collectives"
	is "$(coll_field $i optimal)" "$(coll_field 0 optimal)" "rank $i ran as many optimal allreduces as rank 0"
done
[ "$_tap_failed" = 0 ] || diag "$(grep -h 'view\|auto' "$CO_DIR"/0.log | head -n 20)"
coll_cleanup

# Without the mesh there is no optimal allreduce to take.
iters=${COLL_ITERS_RING:-30}
coll_start 4 "R2CC_COLL_RD_MAX=0" -l "$iters" -s 262144
coll_flap "no mesh: all four ranks reducing" 3
for i in 0 1 2 3; do
	ok "$([ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
		[ "$(coll_field $i optimal)" = 0 ] && echo 1)" \
		"no mesh, rank $i: $(coll_field $i iters) allreduces, none optimal ($(coll_field $i optimal)), $(coll_field $i bad) wrong, error $(coll_field $i error)"
done
coll_cleanup
tb_finish
