#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The weighted ring (R2CC_ALGO=weighted): back-to-back allreduces on four
# nodes while node1 loses all but one of its NICs and gets them back.
# Every result is exact; every rank runs the same allreduces weighted
# (the same count of them: the weights come from the agreed view), some
# while node1 was down to one NIC and none before the first view; the
# ring's equal chunks come back with the NICs; it runs with four receive
# slot sets (R2CC_COLL_SETS), the other tests with the default two, and
# a pipeline deeper than a connection's open receives runs exact.
# auto weights them where the engine's schedule model says it pays, and
# not at the default slicing.  R2CC_ALGO must be valid, R2CC_COLL_SETS
# in range, and both, with the slicing and the mesh, the same on every
# rank; a rank whose own settings are wrong fails every rank at once.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 4
[ "$TB_NICS" -ge 2 ] || skip_all "needs 2 NICs"
plan_later


iters=${COLL_ITERS:-100}
coll_start 4 "R2CC_ALGO=weighted R2CC_COLL_SETS=4" -l "$iters" -s 65536
coll_flap "all four ranks reducing" 4
coll_report
for i in 0 1 2 3; do
	ok "$([ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
		[ "$(coll_field $i iters)" = "$iters" ] && echo 1)" \
		"rank $i: $(coll_field $i iters) allreduces, $(coll_field $i bad) wrong elements, error $(coll_field $i error)"
done
w0=$(coll_field 0 weighted)
ok "$([ "${w0:-0}" -gt 0 ] && [ "$w0" -lt "$iters" ] && echo 1)" \
	"rank 0 ran ${w0:-?} of $iters allreduces on weighted chunks: while node1 was down to one NIC, not before or after"
for i in 1 2 3; do
	is "$(coll_field $i weighted)" "$w0" "rank $i ran the same $w0 allreduces weighted"
done
views() { grep '^view:' "$CO_DIR/$1.log"; }
last=$(views 0 | tail -n1 | sed 's/.*mbps=//' | tr ',' '\n' | sort -u | wc -l)
is "$last" 1 "the last view has every rank whole again, so the ring's equal chunks came back ($(views 0 | tail -n1))"
[ "$_tap_failed" = 0 ] || diag "$(views 0)"
coll_cleanup

# auto (the default): the engine's schedule model (lib/coll/model/sched.c)
# picks.  Node1 cut to one NIC under 256 KiB allreduces in 4 KiB slices,
# 16 in flight, 4 slot sets (the model: the weighted ring about 0.8 of
# the ring's time): some run weighted, the same ones on every rank, every
# result exact; with the default slicing (256 KiB x 4, 2 sets: 1.17 x
# the ring's time) the same cut leaves every allreduce on the ring.
# auto_run ENV ITERS [LINE]: node1 down to one NIC under 256 KiB
# allreduces, for 6 s or, with LINE, until every rank logged it (at most
# 60 s) and 2 s more.
auto_run() {
	local t
	coll_start 4 "$1" -l "$2" -s 262144
	run_ok "all four ranks reducing ($1)" coll_streaming
	sleep 1
	coll_node_nics node1 down
	sleep 6
	for ((t = 0; t < 60 && $# > 2; t++)); do
		[ "$(grep -l "$3" "$CO_DIR"/?.log | wc -l)" = 4 ] && break
		sleep 1
	done
	[ $# -gt 2 ] && sleep 2
	coll_node_nics node1 up
	coll_wait
	coll_report
}
aiters=${COLL_AUTO_ITERS:-30}
switched='auto: allreduces of 65536 elements run as the weighted ring'
auto_run "COLL_LOG=info R2CC_COLL_SLICE=4096 R2CC_COLL_DEPTH=16 R2CC_COLL_SETS=4" \
	"$aiters" "$switched"
w0=$(coll_field 0 weighted)
bad=0
for i in 0 1 2 3; do
	[ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
		[ "$(coll_field $i iters)" = "$aiters" ] &&
		[ "$(coll_field $i weighted)" = "$w0" ] || bad=$((bad + 1))
done
ok "$([ "$bad" = 0 ] && [ "${w0:-0}" -gt 0 ] && [ "$w0" -lt "$aiters" ] && echo 1)" \
	"auto, 4 KiB x 16, 4 sets: ${w0:-?} of $aiters allreduces weighted on every rank, all exact ($bad ranks differ or erred)"
n=$(grep -l "$switched" "$CO_DIR"/?.log | wc -l)
is "$n" 4 "every rank's log says when auto switched to the weighted ring"
[ "$_tap_failed" = 0 ] || diag "$(grep -h 'auto:\|view' "$CO_DIR"/*.log | head -n 20)"
coll_cleanup
auto_run "" 40
bad=0
for i in 0 1 2 3; do
	[ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
		[ "$(coll_field $i weighted)" = 0 ] || bad=$((bad + 1))
done
ch=$(views 0 | tail -n1 | sed -n 's/.*changes=\([0-9]*\).*/\1/p')
ok "$([ "$bad" = 0 ] && [ "${ch:-0}" -ge 1 ] && echo 1)" \
	"auto, default slicing: no allreduce weighted through the same cut (the view changed ${ch:-?} times), all exact ($bad ranks differ)"
coll_cleanup

# A pipeline deeper than the connection's 32 open receives: 8 sets x 64
# slices of 4 KiB would have 6 x 64 open; the ring posts them as earlier
# ones complete.
coll_start 4 "R2CC_ALGO=weighted R2CC_COLL_SETS=8 R2CC_COLL_DEPTH=64 R2CC_COLL_SLICE=4096" -l 3 -s 1048576
coll_wait
for i in 0 1 2 3; do
	ok "$([ "${CO_RCS[i]}" = 0 ] && [ "$(coll_field $i bad)" = 0 ] &&
		[ "$(coll_field $i error)" = 0 ] && echo 1)" \
		"rank $i, 8 sets x depth 64: $(coll_field $i iters) allreduces, $(coll_field $i bad) wrong, error $(coll_field $i error) (exit ${CO_RCS[i]})"
done
[ "$_tap_failed" = 0 ] || diag "$(tail -n 20 "$CO_DIR/0.log")"
coll_cleanup

# R2CC_ALGO: a value it does not know, then ranks that disagree
coll_refused R2CC_ALGO=bogus 'R2CC_ALGO=bogus: want auto, ring (or balance), weighted, optimal or r2cc-ar' "says what it wants"
coll_refused R2CC_COLL_SETS=9 'R2CC_COLL_SETS=9: want 2..8' "says the range"
# disagree ENV0 ENV WANT WHAT: rank 0 started with ENV0, the others with
# ENV; every rank's r2cc_comm_init() fails with -EINVAL, logging WANT,
# and none waits for the others (bounded well below the 120 s the nodes
# would let it hang).
disagree() {
	local port=$((20000 + RANDOM % 20000)) dir i rc pids=() t0=$SECONDS
	dir=$(mktemp -d)
	for i in 3 2 1 0; do
		# shellcheck disable=SC2046
		TB_TIMEOUT=120 tb_exec "node$i" env R2CC_ROOT=198.19.1.1:$port \
			WORLD_SIZE=4 RANK=$i R2CC_SOCKET_IFNAME=ctl0 \
			$([ $i = 0 ] && echo "$1" || echo "$2") \
			"$COLL" -l 1 -s 4096 >"$dir/$i.log" 2>&1 &
		pids[i]=$!
	done
	for i in 0 1 2 3; do
		wait "${pids[i]}"
		rc=$?
		ok "$([ "$rc" = 1 ] && grep -q "$3" "$dir/$i.log" &&
			grep -q '^setup: Invalid argument' "$dir/$i.log" && echo 1)" \
			"rank $i, $4: -EINVAL on every rank, naming the disagreement (exit $rc)"
	done
	ok "$((SECONDS - t0 <= 60))" "$4: every rank told within $((SECONDS - t0)) s"
	[ "$_tap_failed" = 0 ] || diag "$(cat "$dir"/*.log)"
	rm -rf "$dir"
}
disagree R2CC_ALGO=ring R2CC_ALGO=weighted \
	'every rank must choose the same (R2CC_ALGO)' \
	"rank 0 on ring and the others weighted"
# the slicing sets every message and auto's choice: it must agree too
# (slice and depth go through the same check as the sets)
disagree R2CC_COLL_SETS=4 R2CC_COLL_SETS=2 \
	'R2CC_COLL_SETS [24], rank [0-9]'"'"'s [24]: every rank must choose the same' \
	"rank 0 with 4 slot sets and the others 2"
# the mesh too: a rank on it waits for connections the others never make
disagree R2CC_COLL_MESH=1 R2CC_COLL_MESH=0 \
	'the mesh (R2CC_COMM_MESH or R2CC_COLL_MESH) [01], rank [0-9]'"'"'s [01]: every rank must choose the same' \
	"rank 0 on the mesh and the others not"
# one rank's own settings are wrong: it says why, and the others that it
# could not set up, instead of waiting for it in the bootstrap
disagree R2CC_ALGO=bogus "" \
	'R2CC_ALGO=bogus: want\|rank 0 could not set up its side (Invalid argument)' \
	"rank 0 with a bad R2CC_ALGO, the others fine"
disagree R2CC_COLL_SLICE=1 "" \
	'R2CC_COLL_SLICE=1: want\|rank 0 could not set up its side (Invalid argument)' \
	"rank 0 with a bad R2CC_COLL_SLICE, the others fine"
tb_finish
