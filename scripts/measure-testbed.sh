#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# measure-testbed.sh [--runs N] [--kernel 6.1|6.12]
#
# The figures quoted in Documentation/testbed.rst: boot-to-ready time of a
# 2-node x 2-NIC testbed, and ib_write_bw (RC, 1 MiB writes) on each rail
# alone and on both rails at once, N runs each, median reported.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
runs=5 kernel=6.1
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	*) echo "usage: $0 [--runs N] [--kernel 6.1|6.12]" >&2; exit 2 ;;
	esac
	shift
done

median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

wait_listen() {
	for _ in $(seq 100); do
		"$tb" exec node1 -- ss -Htln "sport = :$1" | grep -q . && return
		sleep 0.2
	done
}

# bw K PORT: one 1 MiB x 40 ib_write_bw on rail K, prints Gbit/s.
bw() {
	"$tb" exec --timeout 120 node1 -- ib_write_bw -d "rxe$1" -x 1 -p "$2" \
		-s 1048576 -n 40 -F --report_gbits >/dev/null 2>&1 &
	local srv=$!
	wait_listen "$2"
	"$tb" exec --timeout 120 node0 -- ib_write_bw -d "rxe$1" -x 1 -p "$2" \
		-s 1048576 -n 40 -F --report_gbits "198.18.$1.2" 2>/dev/null |
		awk '$1 == 1048576 {print $4}'
	wait "$srv"
}

# both_rails LABEL: rail 0 and rail 1 at once, N runs, medians.
both_rails() {
	local a=() b=() fa p r
	for ((r = 0; r < runs; r++)); do
		fa=$(mktemp)
		bw 0 18515 >"$fa" &
		p=$!
		b+=("$(bw 1 18516)")
		wait "$p"
		a+=("$(cat "$fa")")
		rm -f "$fa"
	done
	echo "$1: rail 0 median $(printf '%s\n' "${a[@]}" | median), rail 1 median $(printf '%s\n' "${b[@]}" | median) Gbit/s"
}

"$tb" status >/dev/null 2>&1 && { echo "testbed already up" >&2; exit 1; }
trap '"$tb" down >/dev/null 2>&1' EXIT
boots=()
for ((r = 0; r < runs; r++)); do
	t=$("$tb" up --kernel "$kernel" | sed -n 's/.*ready in \([0-9.]*\) s/\1/p')
	boots+=("$t")
	[ $r = $((runs - 1)) ] || "$tb" down >/dev/null
done
echo "kernel $kernel, boot to ready (2 nodes x 2 NICs): median $(printf '%s\n' "${boots[@]}" | median) s of ${boots[*]}"
for k in 0 1; do
	v=()
	for ((r = 0; r < runs; r++)); do v+=("$(bw "$k" 18515)"); done
	echo "rail $k alone: median $(printf '%s\n' "${v[@]}" | median) Gbit/s of ${v[*]}"
done
both_rails "both rails at once"
# With each rail shaped well below the CPU ceiling the network is the
# bottleneck, which is what bandwidth-ratio experiments need.
"$tb" shape node0 0 --rate 30mbit >/dev/null
"$tb" shape node0 1 --rate 30mbit >/dev/null
both_rails "both rails at once, each shaped to 30 Mbit/s on node0"
