#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench-nccl.sh [--rate MBIT] [--rounds N] [--iters N]
#
# The NCCL plugin's figures of Documentation/nccl.rst, in one testbed run
# (2 nodes x 2 NICs, every rail shaped to MBIT so the network, not the
# emulator, is the bottleneck):
#   1. the harness's ring (one channel, messages up to 1 MiB) through the
#      plugin (v11) against the same traffic straight on libr2cc (the
#      harness's "direct" table), N rounds alternating: medians and ratio;
#   2. one long plugin run with node0's primary NIC cut for 12 s: the
#      receiving rate while the standby carries everything (per 1 s tick,
#      median) against the standby's own ib_write_bw.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
build=${BUILD:-$here/build}
rate=30 rounds=5 iters=300
while [ $# -gt 0 ]; do
	case "$1" in
	--rate) rate=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--iters) iters=$2; shift ;;
	-h|--help) sed -n '3,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "bench-nccl: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done

trap '"$tb" down >/dev/null 2>&1' EXIT
"$tb" up --nodes 2 --nics 2 | head -n1 || exit 1
kver=$("$tb" exec node0 -- uname -r)
for n in node0 node1; do
	"$tb" exec "$n" -- insmod "$build/kmod/$kver/r2cc.ko" || exit 1
	for k in 0 1; do
		"$tb" shape "$n" "$k" --rate "${rate}mbit" || exit 1
	done
done
out=$(mktemp -d)

# shellcheck source=scripts/bench-common.sh
. "$here/scripts/bench-common.sh"

# harness VERSION ITERS EXTRA...: a ring of the two nodes; rank 0's log
# in $out/0.log.  Prints rank 0's receiving rate in Mbit/s.
harness() {
	local v=$1 n=$2 port=$((20000 + RANDOM % 20000)) i
	shift 2
	for i in 1 0; do
		"$tb" exec --timeout 900 "node$i" -- env R2CC_ROOT=198.19.1.1:$port \
			WORLD_SIZE=2 RANK=$i R2CC_SOCKET_IFNAME=ctl0 \
			LD_LIBRARY_PATH="$build/lib" R2CC_STALL_MS=500 \
			NCCL_DEBUG=INFO "$build/tests/nccl/harness" --versions "$v" \
			--channels 1 --iters "$n" --max-size 1048576 "$@" \
			>"$out/$i.log" 2>&1 &
	done
	wait
	sed -n 's/^harness-result: .* bytes=\([0-9]*\) .* secs=\([^ ]*\) .*/\1 \2/p' \
		"$out/0.log" | awk '{printf "%.3f\n", $1 * 8 / $2 / 1e6}'
	grep -q ' bad=0 errors=0 ' "$out/0.log" ||
		echo "bench-nccl: $v: a run failed: $(tail -n 3 "$out/0.log")" >&2
}


echo "== 1. plugin against libr2cc straight, rails shaped to $rate Mbit/s ($rounds rounds, $iters requests)"
for ((i = 1; i <= rounds; i++)); do
	p=$(harness 11 "$iters")
	d=$(harness direct "$iters")
	echo "round $i: plugin ${p:-?}, direct ${d:-?} Mbit/s"
	echo "$p" >>"$out/plugin"
	echo "$d" >>"$out/direct"
done
p=$(median <"$out/plugin") d=$(median <"$out/direct")
echo "median: plugin $p, direct $d Mbit/s, plugin/direct $(echo "scale=3; $p / $d" | bc)"

echo "== 2. node0's primary cut for 12 s under the plugin"
sb=$(write_bw 1 8)
echo "standby rail 1 alone, ib_write_bw: $sb Mbit/s"
port=$((20000 + RANDOM % 20000))
for i in 1 0; do
	"$tb" exec --timeout 900 "node$i" -- env R2CC_ROOT=198.19.1.1:$port \
		WORLD_SIZE=2 RANK=$i R2CC_SOCKET_IFNAME=ctl0 \
		LD_LIBRARY_PATH="$build/lib" R2CC_STALL_MS=500 NCCL_DEBUG=INFO \
		"$build/tests/nccl/harness" --versions 11 --channels 1 \
		--iters $((iters * 3)) --max-size 1048576 --ticks \
		>"$out/cut$i.log" 2>&1 &
done
for _ in $(seq 300); do
	grep -q '^streaming' "$out/cut1.log" && break
	sleep 0.1
done
sleep 4
"$tb" link node0 0 down
t0=$(grep -c '^tick' "$out/cut1.log")
sleep 12
t1=$(grep -c '^tick' "$out/cut1.log")
"$tb" link node0 0 up
wait
# Rank 1 receives what node0 sends; ticks 2 s into the cut and on, while
# only the standby carries node0's traffic.
one=$(awk -v a=$((t0 + 2)) -v b="$t1" '$1 == "tick:" { n++
	if (n > a && n <= b) printf "%.2f\n", ($7 - last) * 8 / 1e6
	last = $7 }' "$out/cut1.log" | median)
echo "while the primary was down: median ${one:-?} Mbit/s per 1 s tick against the standby's ib_write_bw $sb, ratio $(echo "scale=3; ${one:-0} / $sb" | bc)"
grep -h 'harness-result' "$out/cut0.log" "$out/cut1.log"
grep -h 'closed: rail' "$out/cut0.log" | head -n 4
rm -rf "$out"
