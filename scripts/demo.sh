#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The newcomer's demo, in two acts on one testbed of four soft-RoCE nodes
# with two rails each.
# Act 1: node0 streams checked data to node1 with r2cc-perf; a cable is
# cut mid-stream and later restored.  The timeline shows throughput per
# 100 ms, the failure, the repair latency and the failback, and the
# summary that every byte arrived intact.
# Act 2: the four nodes allreduce back to back (a ring, as NCCL's) while
# node1's rail 1 cable is cut and restored: once with r2cc on both rails,
# once on rail 1 alone with no fallback, which is what a transport without
# r2cc has (NCCL's own would retry for some 30 s, then abort).  r2cc's
# allreduces slow down for the repair and go on, every result checked;
# the one-NIC job dies at the cut.
# With gnuplot, both are drawn to build/demo/timeline.png and
# build/demo/allreduce.png.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$here/build}
tb=$here/tools/testbed/r2cc-testbed
perf=$build/tools/r2cc-perf
out=$build/demo
if [ -t 1 ]; then
	say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	say() { printf '\n== %s\n' "$*"; }
fi

if "$tb" status >/dev/null 2>&1; then
	echo "demo: a testbed is already up; run '$tb down' first" >&2
	exit 1
fi
trap '"$tb" down >/dev/null 2>&1' EXIT INT TERM

# cut_after PATTERN LOG TENTHS SECS NODE HOLD: once PATTERN is in LOG (at
# most TENTHS tenths of a second), wait SECS, then cut NODE's rail 1 cable
# for HOLD seconds.
cut_after() {
	local _
	for _ in $(seq "$3"); do
		grep -q "$1" "$2" && break
		sleep 0.1
	done
	sleep "$4"
	echo "  (cutting $5's rail 1 cable)"
	"$tb" link "$5" 1 down
	sleep "$6"
	echo "  (restoring it)"
	"$tb" link "$5" 1 up
}
mkdir -p "$out"

say "Booting 4 nodes (Debian 6.1 under QEMU/TCG), 2 soft-RoCE NICs each"
"$tb" up --nodes 4 --nics 2 || exit 1
kver=$("$tb" exec node0 -- uname -r)
for n in node0 node1 node2 node3; do
	"$tb" exec "$n" -- insmod "$build/kmod/$kver/r2cc.ko" ||
		echo "demo: r2cc.ko not loaded on $n; verbs events instead"
done

say "Each rail shaped to 50 Mbit/s (tc), so the network, not the emulator's CPU, limits"
for k in 0 1; do
	"$tb" shape node0 "$k" --rate 50mbit || exit 1
done

say "Act 1. r2cc-perf: node0 -> node1 over both rails for 10 s; rail 1's cable is cut at 3 s and restored at 6.5 s"
env="R2CC_SOCKET_IFNAME=ctl0"
"$tb" exec --timeout 120 node1 -- env $env "$perf" --root 198.19.1.1:7100 \
	--rank 1 --duration 10 --size 256K --window 8 --timeline \
	--csv /tmp/r2cc-demo.csv \
	>"$out/receiver.log" 2>&1 &
recv=$!
"$tb" exec --timeout 120 node0 -- env $env "$perf" --root 198.19.1.1:7100 \
	--rank 0 --duration 10 --size 256K --window 8 \
	>"$out/sender.log" 2>&1 &
send=$!
# The transfer starts once both ranks have met; count from there.
cut_after 's .*Mbit/s' "$out/receiver.log" 300 3 node0 3.5
wait "$send"
src=$?
wait "$recv"
rrc=$?

say "The receiver's timeline (Mbit/s per 100 ms, per rail)"
grep -v '^r2cc-perf-result' "$out/receiver.log"
say "The sender's view of the failure"
grep -E 'rail|connection|repair' "$out/sender.log" | grep -v '^ *[0-9.]* s '

"$tb" exec node1 -- cat /tmp/r2cc-demo.csv >"$out/timeline.csv" 2>/dev/null
if command -v gnuplot >/dev/null && [ -s "$out/timeline.csv" ]; then
	gnuplot <<-PLOT 2>/dev/null && say "Timeline plotted: $out/timeline.png"
	set terminal png size 900,420
	set output "$out/timeline.png"
	set datafile separator ","
	set key noenhanced
	set xlabel "seconds"
	set ylabel "Mbit/s (per 100 ms)"
	set yrange [0:*]
	set title "r2cc: rail 1 cut at 3 s, restored at 6.5 s; every byte verified"
	plot "$out/timeline.csv" every ::1 using 1:(\$3 + \$4) with lines lw 2 title "both rails", \
	     "" every ::1 using 1:3 with lines title "rail 0", \
	     "" every ::1 using 1:4 with lines title "rail 1"
	PLOT
fi
if [ $src = 0 ] && [ $rrc = 0 ]; then
	say "Every byte verified; the job never saw an error"
else
	say "Something went wrong: sender exit $src, receiver exit $rrc (logs in $out)"
	exit 1
fi
for k in 0 1; do
	"$tb" shape node0 "$k" --clear || exit 1
done

# act2 NAME ENV...: 60 allreduces of 256 KiB on the four nodes, node1's
# rail 1 cut 2 s into them for 3 s; rank r's log in $out/act2-NAME.r.log,
# and rank 0's per-allreduce times as "seconds since start,ms" in
# $out/act2-NAME.csv.
coll=$build/tests/libr2cc/coll
act2() {
	local name=$1 port=$((20000 + RANDOM % 20000)) i pids=()
	shift
	for i in 3 2 1 0; do
		"$tb" exec --timeout 180 "node$i" -- env R2CC_ROOT=198.19.1.1:$port \
			WORLD_SIZE=4 RANK=$i $env R2CC_STALL_MS=500 COLL_TIMES=1 "$@" \
			"$coll" -l 60 -s 262144 >"$out/act2-$name.$i.log" 2>&1 &
		pids+=($!)
	done
	cut_after '^streaming' "$out/act2-$name.0.log" 600 2 node1 3
	for i in "${pids[@]}"; do wait "$i"; done
	awk '/^iter: / {t += $3; printf "%.3f,%.1f\n", t, $3 * 1000}' \
		"$out/act2-$name.0.log" >"$out/act2-$name.csv"
	sed -n 's/^coll-result: /  rank 0: /p' "$out/act2-$name.0.log"
}

say "Act 2. Four nodes allreduce 256 KiB, 60 in a row; node1's rail 1 is cut 2 s in, for 3 s"
echo "With r2cc (both rails):"
act2 r2cc
echo "On rail 1 alone, no fallback (a transport without r2cc):"
act2 onenic R2CC_NICS=rxe1 R2CC_TCP_FALLBACK=0
if command -v gnuplot >/dev/null && [ -s "$out/act2-r2cc.csv" ]; then
	gnuplot <<-PLOT 2>/dev/null && say "Allreduce times plotted: $out/allreduce.png"
	set terminal png size 900,420
	set output "$out/allreduce.png"
	set datafile separator ","
	set key noenhanced
	set xlabel "seconds (rank 0)"
	set ylabel "ms per allreduce"
	set logscale y
	set title "4 nodes, 256 KiB allreduces: node1's rail 1 cut 2 s in, for 3 s"
	plot "$out/act2-r2cc.csv" using 1:2 with linespoints title "r2cc, 2 rails: every result checked", \
	     "$out/act2-onenic.csv" using 1:2 with linespoints title "1 rail, no r2cc failover: the job fails at the cut"
	PLOT
fi
if grep -q '^coll-result: iters=60 bad=0 error=0 ' "$out/act2-r2cc.0.log"; then
	say "r2cc: all 60 allreduces right through the cut; without it the job died"
else
	say "Something went wrong in act 2 (logs in $out)"
	exit 1
fi
