#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench-stall.sh [--rate MBIT] [--iters N] [--size BYTES] [--rounds N]
#
# False failovers with no fault at all: 4 nodes x 2 NICs, every rail
# shaped to MBIT (10 by default), back-to-back allreduces of SIZE bytes
# (1 MiB) on a communicator with the mesh, the stall detector at its
# default 100 ms; once with the fixed bound and once with the adaptive one
# (R2CC_STALL_ADAPT=1, lib/base/stall.h), alternating for N rounds.  Prints
# each run's failovers per rank and bytes over the TCP fallback, the
# allreduces' median time, and at the end the medians per setting.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
build=${BUILD:-$here/build}
coll=$build/tests/libr2cc/coll
rate=10 iters=40 size=1048576 rounds=2 nodes=4
while [ $# -gt 0 ]; do
	case "$1" in
	--rate) rate=$2; shift ;;
	--iters) iters=$2; shift ;;
	--size) size=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	*) echo "usage: $0 [--rate MBIT] [--iters N] [--size BYTES] [--rounds N]" >&2; exit 2 ;;
	esac
	shift
done
"$tb" status >/dev/null 2>&1 && { echo "testbed already up" >&2; exit 1; }
trap '"$tb" down >/dev/null 2>&1' EXIT
"$tb" up --nodes "$nodes" --nics 2 | head -n1 || exit 1
kver=$("$tb" exec node0 -- uname -r)
for ((i = 0; i < nodes; i++)); do
	"$tb" exec "node$i" -- insmod "$build/kmod/$kver/r2cc.ko" || exit 1
	for k in 0 1; do
		"$tb" shape "node$i" "$k" --rate "${rate}mbit" || exit 1
	done
done
out=$(mktemp -d)

# shellcheck source=scripts/bench-common.sh
. "$here/scripts/bench-common.sh"

# run ADAPT: one run; prints "failovers F tcp T seconds S drains D"
# summed over the ranks (seconds: rank 0's median allreduce; drains: the
# library's warnings that a rail's port was reported degraded).
run() {
	local port=$((20000 + RANDOM % 20000)) i pids=() f t s d
	for ((i = nodes - 1; i >= 0; i--)); do
		"$tb" exec --timeout 900 "node$i" -- env R2CC_ROOT=198.19.1.1:$port \
			WORLD_SIZE="$nodes" RANK=$i R2CC_SOCKET_IFNAME=ctl0 \
			COLL_MESH=1 COLL_TIMES=1 R2CC_STALL_ADAPT="$1" \
			"$coll" -l "$iters" -s "$size" >"$out/$i.log" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	grep -q '^coll-result: .* bad=0 error=0 ' "$out/0.log" ||
		echo "  run failed: $(grep -h '^coll-result' "$out"/*.log | head -n1)" >&2
	f=$(sed -n 's/^coll-result: .* failovers=\([0-9]*\).*/\1/p' "$out"/*.log |
		awk '{s += $1} END {print s + 0}')
	t=$(sed -n 's/^coll-result: .* tcp=\([0-9]*\).*/\1/p' "$out"/*.log |
		awk '{s += $1} END {print s + 0}')
	s=$(awk '/^iter: / && $2 > 0 {print $3}' "$out/0.log" | median)
	d=$(cat "$out"/[0-9]*.log | grep -c 'port degraded; draining')
	echo "failovers $f tcp $t seconds ${s:-?} drains $d"
}

echo "== $nodes nodes x 2 NICs, every rail at $rate Mbit/s, $iters allreduces of $size bytes on the mesh, no fault"
for ((r = 1; r <= rounds; r++)); do
	for a in 0 1; do
		line=$(run "$a")
		echo "round $r, R2CC_STALL_ADAPT=$a: $line (failovers and TCP bytes summed over the $nodes ranks)"
		echo "$line" >>"$out/adapt$a"
	done
done
for a in 0 1; do
	echo "R2CC_STALL_ADAPT=$a: median failovers $(awk '{print $2}' "$out/adapt$a" | median), TCP bytes $(awk '{print $4}' "$out/adapt$a" | median), allreduce $(awk '{print $6}' "$out/adapt$a" | median) s, drains $(awk '{print $8}' "$out/adapt$a" | median)"
done
echo "(raw logs in $out)"
