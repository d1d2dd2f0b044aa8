#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The newcomer's demo: two soft-RoCE nodes with two rails each stream
# checked data with r2cc-perf; a cable is cut mid-stream and later
# restored.  The timeline shows throughput per 100 ms, the failure, the
# repair latency and the failback, and the summary that every byte
# arrived intact.  With gnuplot, the timeline is also drawn to
# build/demo/timeline.png.
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
mkdir -p "$out"

say "Booting 2 nodes (Debian 6.1 under QEMU/TCG), 2 soft-RoCE NICs each"
"$tb" up --nodes 2 --nics 2 || exit 1
kver=$("$tb" exec node0 -- uname -r)
for n in node0 node1; do
	"$tb" exec "$n" -- insmod "$build/kmod/$kver/r2cc.ko" ||
		echo "demo: r2cc.ko not loaded on $n; verbs events instead"
done

say "Each rail shaped to 50 Mbit/s (tc), so the network, not the emulator's CPU, limits"
for k in 0 1; do
	"$tb" shape node0 "$k" --rate 50mbit || exit 1
done

say "r2cc-perf: node0 -> node1 over both rails for 10 s; rail 1's cable is cut at 3 s and restored at 6.5 s"
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
for _ in $(seq 300); do
	grep -q 's .*Mbit/s' "$out/receiver.log" && break
	sleep 0.1
done
sleep 3
echo "  (cutting node0's rail 1 cable)"
"$tb" link node0 1 down
sleep 3.5
echo "  (restoring it)"
"$tb" link node0 1 up
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
