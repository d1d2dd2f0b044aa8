#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench-coll.sh [--nodes N] [--rate MBIT] [--size BYTES] [--iters N]
#
# The collectives figures of Documentation/coll.rst, in one testbed run:
# N nodes x 2 NICs, every rail of every node shaped to --rate (egress) so
# that the network, not the emulator, is the bottleneck (default 8 Mbit/s:
# four busy nodes on the 2-core CI machine top out near 10 Mbit/s per
# direction; 30 Mbit/s, bench-lib.sh's rate for two nodes, measured the
# emulator here), then
#   1. ib_write_bw node0 -> node1 on each rail: the per-node bandwidth B;
#   2. --iters allreduces of --size bytes (float32 sum, each checked):
#      time per allreduce, algbw = size / time, busbw = algbw x 2(n-1)/n
#      (nccl-tests' definition), and busbw / B;
#   3. the same with one NIC of node 1 down (beta = 1/2): the ring paces
#      everyone to the degraded node; time against the healthy one and
#      against the lower bound T_LB = max(D/(beta B), 2(n-1)D/((n-1+beta)B))
#      of the R2CCL paper for D = size.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
build=${BUILD:-$here/build}
coll=$build/tests/libr2cc/coll
nodes=4 rate=8 size=4194304 iters=3
# A shaped rail is a deep queue at 30 Mbit/s: 8 chunks of 64 KiB in it
# wait 140 ms, and the ACKs of the ring's other direction queue behind
# them, past RC's ACK timeout (IB_TIMEOUT 14: 67 ms) and the stall
# detector's 100 ms, so the defaults see retransmissions and stalls that
# a real fabric would not.  16 KiB chunks (as bench-lib.sh), a 537 ms
# ACK timeout and a 1 s stall detector keep the emulation honest.
env=${BENCH_ENV:-R2CC_CHUNK_SIZE=16384 R2CC_IB_TIMEOUT=17 R2CC_STALL_MS=1000}
while [ $# -gt 0 ]; do
	case "$1" in
	--nodes) nodes=$2; shift ;;
	--rate) rate=$2; shift ;;
	--size) size=$2; shift ;;
	--iters) iters=$2; shift ;;
	*) echo "usage: $0 [--nodes N] [--rate MBIT] [--size BYTES] [--iters N]" >&2; exit 2 ;;
	esac
	shift
done
"$tb" status >/dev/null 2>&1 && { echo "testbed already up" >&2; exit 1; }
trap '"$tb" down >/dev/null 2>&1' EXIT
"$tb" up --nodes "$nodes" --nics 2 | head -n1 || exit 1
for ((i = 0; i < nodes; i++)); do
	for k in 0 1; do
		"$tb" shape "node$i" "$k" --rate "${rate}mbit" || exit 1
	done
done
out=$(mktemp -d)
# shellcheck source=scripts/bench-common.sh
. "$here/scripts/bench-common.sh"

# allreduces: seconds per allreduce (rank 0's), or nothing on failure.
allreduces() {
	local port=$((20000 + RANDOM % 20000)) i pids=()
	for ((i = nodes - 1; i >= 0; i--)); do
		"$tb" exec --timeout 600 "node$i" -- env R2CC_ROOT=198.19.1.1:$port \
			WORLD_SIZE="$nodes" RANK=$i R2CC_SOCKET_IFNAME=ctl0 $env \
			"$coll" -l "$iters" -s "$size" >"$out/$i.log" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	grep -h '^coll-result' "$out"/*.log | sed 's/^/  /' >&2
	sed -n 's/^coll-result: iters=\([0-9]*\) bad=0 error=0 .*seconds=\([0-9.]*\)$/\2 \1/p' \
		"$out/0.log" | awk '{printf "%.3f\n", $1 / $2}'
}

echo "== 1. ib_write_bw node0 -> node1, each rail shaped to $rate Mbit/s"
a=$(write_bw 0 6) b=$(write_bw 1 6)
B=$(echo "$a + $b" | bc)
echo "rail0 $a, rail1 $b: B = $B Mbit/s per node"

echo "== 2. allreduce, $nodes nodes, $size bytes float32, $iters in a row"
t=$(allreduces)
bus() { echo "scale=1; $size * 8 / $1 / 1000000 * 2 * ($nodes - 1) / $nodes" | bc; }
echo "time ${t:-?} s per allreduce; busbw $(bus "${t:-1}") Mbit/s; busbw / B $(echo "scale=3; $(bus "${t:-1}") / $B" | bc)"

echo "== 3. node1's NIC 1 down (beta = 1/2)"
"$tb" link node1 1 down
sleep 2
td=$(allreduces)
"$tb" link node1 1 up
lb=$(echo "scale=4; d = $size * 8 / ($B * 1000000); n = $nodes; x = d / 0.5; y = 2 * (n - 1) * d / (n - 1 + 0.5); if (x > y) x else y" | bc)
echo "time ${td:-?} s per allreduce; healthy ${t:-?} s (ratio $(echo "scale=3; ${td:-0} / ${t:-1}" | bc)); T_LB $lb s (ring / T_LB $(echo "scale=3; ${td:-0} / $lb" | bc))"
rm -rf "$out"
