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
# R2CC_ALGO must be valid and the same on every rank, R2CC_COLL_SETS in
# range.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 4
[ "$TB_NICS" -ge 2 ] || skip_all "needs 2 NICs"
plan_later

iters=${COLL_ITERS:-150}
coll_start 4 "R2CC_ALGO=weighted R2CC_COLL_SETS=4" -l "$iters" -s 65536
run_ok "all four ranks reducing" coll_streaming
sleep 1
for ((k = 0; k < TB_NICS - 1; k++)); do
	tb link node1 "$k" down
done
sleep 4
for ((k = 0; k < TB_NICS - 1; k++)); do
	tb link node1 "$k" up
done
coll_wait
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

# refused ENV WANT WHAT: every rank started with ENV exits 1, its log
# saying WANT and r2cc_comm_init() failing with -EINVAL.
refused() {
	local i
	coll_start 4 "$1" -l 1 -s 4096
	coll_wait
	for i in 0 1 2 3; do
		ok "$([ "${CO_RCS[i]}" = 1 ] && grep -q "$2" "$CO_DIR/$i.log" &&
			grep -q '^setup: Invalid argument' "$CO_DIR/$i.log" && echo 1)" \
			"rank $i, $1: r2cc_comm_init() $3 and fails with -EINVAL (exit ${CO_RCS[i]})"
	done
	coll_cleanup
}

# R2CC_ALGO: a value it does not know, then ranks that disagree
refused R2CC_ALGO=bogus 'R2CC_ALGO=bogus: want auto, ring or weighted' "says what it wants"
refused R2CC_COLL_SETS=9 'R2CC_COLL_SETS=9: want 2..8' "says the range"
port=$((20000 + RANDOM % 20000))
dir=$(mktemp -d)
pids=()
for i in 3 2 1 0; do
	algo=weighted
	[ $i = 0 ] && algo=ring
	TB_TIMEOUT=120 tb_exec "node$i" env R2CC_ROOT=198.19.1.1:$port \
		WORLD_SIZE=4 RANK=$i R2CC_SOCKET_IFNAME=ctl0 R2CC_ALGO=$algo \
		"$COLL" -l 1 -s 4096 >"$dir/$i.log" 2>&1 &
	pids[i]=$!
done
for i in 0 1 2 3; do
	wait "${pids[i]}"
	rc=$?
	ok "$([ "$rc" = 1 ] && grep -q 'every rank must choose the same' "$dir/$i.log" &&
		grep -q '^setup: Invalid argument' "$dir/$i.log" && echo 1)" \
		"rank $i, rank 0 on ring and the others weighted: -EINVAL on every rank, naming the disagreement (exit $rc)"
done
[ "$_tap_failed" = 0 ] || diag "$(cat "$dir"/*.log)"
rm -rf "$dir"
tb_finish
