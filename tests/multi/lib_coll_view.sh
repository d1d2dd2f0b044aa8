#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The agreed view under faults on several nodes at once: back-to-back
# allreduces on every node while node1's first NIC and node2's second go
# down together and come back, then node3's third flaps.  Every result is
# exact, and every rank adopts the same views at the same collectives
# (tests/unit/coll_plan proves the propagation; this shows it on real
# ranks, with port events landing mid-collective).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 4
[ "$TB_NICS" -ge 3 ] || skip_all "needs 3 NICs"
plan_later

iters=${COLL_ITERS:-200}
coll_start 4 "" -l "$iters" -s 65536
run_ok "all four ranks reducing" coll_streaming
sleep 1
tb link node1 0 down
tb link node2 1 down
sleep 3
tb link node1 0 up
tb link node2 1 up
sleep 2
for i in 1 2 3; do
	tb link node3 2 down
	sleep 0.5
	tb link node3 2 up
	sleep 0.5
done
coll_wait
coll_report
views() { grep '^view:' "$CO_DIR/$1.log"; }
for i in 0 1 2 3; do
	ok "$([ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
		[ "$(coll_field $i iters)" = "$iters" ] && echo 1)" \
		"rank $i: $(coll_field $i iters) allreduces, $(coll_field $i bad) wrong elements, error $(coll_field $i error)"
done
for i in 1 2 3; do
	ok "$([ -n "$(views 0)" ] && [ "$(views $i)" = "$(views 0)" ] && echo 1)" \
		"rank $i adopted the same views as rank 0, at the same collectives ($(views $i | wc -l) views)"
done
# rank R's bandwidth in each view, one a line
mbps() { views 0 | sed 's/.*mbps=//' | cut -d, -f$(($1 + 1)); }
fell() {
	mbps "$1" | awk 'NR == 1 {f = $1} {l = $1; if ($1 < f) low = 1}
		END {exit !(low && l == f)}'
}
for i in 1 2; do
	ok "$(fell $i && echo 1)" "node$i's bandwidth fell while its NIC was down and came back ($(mbps $i | tr '\n' ' '))"
done
ok "$(fell 3 && echo 1)" \
	"node3's flapping NIC showed in the view at least once, and it ended whole ($(mbps 3 | tr '\n' ' '))"
is "$(mbps 0 | sort -u | wc -l)" 1 "node0, untouched, kept its bandwidth in every view"
for i in 0 1 2 3; do
	is "$(coll_field $i weighted)" 0 "rank $i: R2CC_ALGO=auto (the default) is the ring: no allreduce weighted"
done
[ "$_tap_failed" = 0 ] || diag "$(views 0)"
coll_cleanup
tb_finish
