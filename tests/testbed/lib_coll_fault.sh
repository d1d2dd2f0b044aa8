#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Back-to-back allreduces on two nodes while node0's first rail is cut and
# restored, then black-holed: every result exact, no rank errs, and the
# communicator's counters show the failovers the transport absorbed.  Both
# ranks adopt the same views of the cluster at the same collectives: the
# cut shows node0's bandwidth falling by a NIC and coming back, and so
# does the black hole (ports up) once the transport has located it on the
# path and confirmed it with two failed probes.  Small allreduces by
# recursive doubling on a mesh survive the cut too.  A rank killed
# mid-collective makes the other's fail with -ECONNRESET within seconds,
# whichever one died.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 2
plan_later

# rank_views RANK: its "view:" lines (printed when the view changed).
rank_views() { grep '^view:' "$CO_DIR/$1.log"; }

# node0_mbps: rank 0's bandwidth in each view rank 0 printed, one a line.
node0_mbps() { rank_views 0 | sed 's/.*mbps=\([0-9]*\).*/\1/'; }

fault() {
	local what=$1 iters=$2 f0 v
	shift 2
	coll_start 2 "" -l "$iters" -s 262144
	run_ok "$what: both ranks reducing" coll_streaming
	sleep 1
	"$@"
	coll_wait
	coll_report
	for i in 0 1; do
		ok "$([ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
			[ "$(coll_field $i iters)" = "$iters" ] && echo 1)" \
			"$what: rank $i: $(coll_field $i iters) allreduces, $(coll_field $i bad) wrong elements, error $(coll_field $i error)"
	done
	f0=$(coll_field 0 failovers)
	ok "$([ "${f0:-0}" -ge 1 ] && echo 1)" \
		"$what: rank 0's connections failed over ($f0 failovers, $(coll_field 0 resent) bytes re-sent)"
	v=$(node0_mbps | tr '\n' ' ')
	ok "$([ -n "$(rank_views 0)" ] && [ "$(rank_views 0)" = "$(rank_views 1)" ] && echo 1)" \
		"$what: both ranks adopted the same views at the same collectives ($(rank_views 0 | wc -l) views; node0's Mbit/s: $v)"
	case $what in
	"carrier cut")
		ok "$(node0_mbps | awk 'NR == 1 {f = $1} {l = $1; if ($1 < f) low = 1} END {exit !(low && l == f)}' && echo 1)" \
			"$what: node0's bandwidth fell while its port was down and came back" ;;
	*)
		ok "$(node0_mbps | awk 'NR == 1 {f = $1} {l = $1; if ($1 < f) low = 1} END {exit !(low && l == f)}' && echo 1)" \
			"$what: ports stayed up, yet node0's bandwidth fell once the fault was located on its path and confirmed, and came back" ;;
	esac
	[ "$_tap_failed" = 0 ] || diag "views: $(rank_views 0)"
	coll_cleanup
}

cut() { tb link node0 0 down; sleep 2; tb link node0 0 up; }
# A black hole is confirmed by two failed probes after the stall detector
# saw it: with R2CC_STALL_MS=500 each probe waits 2 s, so it lasts until
# rank 0 printed a second view (up to 20 s), then 1 s more.
hole() {
	local t
	tb blackhole node0 0 on
	for ((t = 0; t < 200; t++)); do
		[ "$(rank_views 0 | wc -l)" -ge 2 ] && break
		sleep 0.1
	done
	sleep 1
	tb blackhole node0 0 off
}

# killed VICTIM SURVIVOR: a rank killed in the middle of the allreduces;
# the survivor's collective fails with -ECONNRESET, in bounded time, and
# it exits instead of waiting for ever.
killed() {
	local t0 rc
	coll_start 2 "" -l 100000 -s 262144
	run_ok "kill rank $1: both ranks reducing" coll_streaming
	sleep 1
	t0=$SECONDS
	tb_exec "node$1" pkill -KILL -f tests/libr2cc/coll
	wait "${CO_PIDS[$2]}"
	rc=$?
	wait "${CO_PIDS[$1]}"
	ok "$([ "$rc" = 1 ] && [ "$(coll_field "$2" error)" = -104 ] &&
		[ "$(coll_field "$2" bad)" = 0 ] && echo 1)" \
		"kill rank $1: rank $2's collective failed with -ECONNRESET ($(coll_field "$2" error)) after $(coll_field "$2" iters) right ones, exit $rc"
	ok "$((SECONDS - t0 <= 15))" "kill rank $1: rank $2 gave up within $((SECONDS - t0)) s"
	[ "$_tap_failed" = 0 ] || diag "$(tail -n 20 "$CO_DIR/$2.log")"
	coll_cleanup
}

fault "carrier cut" "${COLL_ITERS:-120}" cut
fault "black hole" "${COLL_ITERS:-600}" hole

# Small allreduces by recursive doubling (a mesh communicator: on two
# ranks every allreduce up to the slice goes that way) while node0's
# first rail is cut: each exact, none fails, all by recursive doubling.
coll_start 2 "COLL_MESH=1" -l 600 -s 4096
run_ok "recursive doubling, carrier cut: both ranks reducing" coll_streaming
sleep 1
cut
coll_wait
for i in 0 1; do
	ok "$([ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
		[ "$(coll_field $i iters)" = 600 ] && [ "$(coll_field $i rd)" = 600 ] &&
		echo 1)" \
		"recursive doubling, carrier cut: rank $i: $(coll_field $i iters) allreduces of 4 KiB, $(coll_field $i rd) by recursive doubling, $(coll_field $i bad) wrong elements, error $(coll_field $i error)"
done
f0=$(coll_field 0 failovers)
ok "$([ "${f0:-0}" -ge 1 ] && echo 1)" \
	"recursive doubling, carrier cut: rank 0's connection failed over ($f0 failovers) in $(coll_field 0 seconds) s"
[ "$_tap_failed" = 0 ] || diag "$(tail -n 20 "$CO_DIR/0.log")"
coll_cleanup
killed 1 0
killed 0 1
tb_finish
