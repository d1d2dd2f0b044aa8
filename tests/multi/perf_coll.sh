#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# r2cc-perf --coll on every node: each collective kind runs, every rank
# exits 0, and rank 0's result lines say every element on every rank was
# right, with sizes, counts and busbw as the manual describes them; every
# --dtype, every --op; --timeline and --csv, a line per call.
. "$(dirname "$0")/../lib/tap.sh"
tb_require 3
plan_later

PERF=$R2CC_BUILD/tools/r2cc-perf
n=$TB_NODES
dir=$(mktemp -d)

# perf_coll KIND ARGS...: every rank of the world, rank 0's output in
# $dir/KIND.0; returns how many ranks failed.
perf_coll() {
	local kind=$1 port=$((20000 + RANDOM % 20000)) i pids=() fails=0
	shift
	for ((i = n - 1; i >= 0; i--)); do
		TB_TIMEOUT=300 tb_exec "node$i" env R2CC_SOCKET_IFNAME=ctl0 \
			R2CC_ROOT=198.19.1.1:$port WORLD_SIZE="$n" RANK=$i \
			"$PERF" --coll "$kind" --timeout 120 "$@" \
			>"$dir/$kind.$i" 2>&1 &
		pids[i]=$!
	done
	for ((i = 0; i < n; i++)); do
		wait "${pids[i]}" || fails=$((fails + 1))
	done
	return $fails
}

# field FILE KEY: from every r2cc-perf-coll line, one value a line.
field() { sed -n "s/^r2cc-perf-coll: .*\b$2=\([^ ]*\).*/\1/p" "$1"; }

for kind in allreduce reduce_scatter allgather broadcast reduce; do
	perf_coll $kind --sweep 4K:64K --iters 3
	rc=$?
	f=$dir/$kind.0
	ok "$([ $rc = 0 ] && echo 1)" "$kind on $n ranks: every rank exits 0 ($rc failed)"
	is "$(field "$f" size | tr '\n' ' ')" "4096 8192 16384 32768 65536 " \
		"$kind: one result per size of the sweep"
	is "$(field "$f" bad | sort -u)" 0 "$kind: no wrong element on any rank"
	ok "$(field "$f" busbw_mbps | awk '$1 <= 0 {b = 1} END {exit b || !NR}' && echo 1)" \
		"$kind: a busbw for every size ($(field "$f" busbw_mbps | tr '\n' ' ')Mbit/s)"
	[ "$_tap_failed" = 0 ] || diag "$(cat "$dir/$kind".*)"
done
# the counts: allgather's 64K is the output, each rank sending a 1/n share
is "$(field "$dir/allgather.0" count | tail -1)" $((65536 / 4 / n)) \
	"allgather: 64K is the output, $((65536 / 4 / n)) int32 per rank"
is "$(field "$dir/allreduce.0" count | tail -1)" 16384 "allreduce: 64K is 16384 int32"
ok "$(awk -v n="$n" '/^r2cc-perf-coll: kind=allreduce .* size=65536 / {
	for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
	r = v["busbw_mbps"] / v["algbw_mbps"]; want = 2 * (n - 1) / n
	good = r > want * 0.99 && r < want * 1.01 }
	END { exit !good }' "$dir/allreduce.0" && echo 1)" \
	"allreduce: busbw is algbw x 2(n-1)/n"

# Every element type, each with one of the reductions, and the other
# kinds with the types where their arithmetic is hardest: every result
# element checked on every rank (tools/perf/dtype.c).
ops=(sum prod min max avg)
i=0
for dt in int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32 float64; do
	op=${ops[i % 5]}
	i=$((i + 1))
	perf_coll allreduce --dtype $dt --op $op --sweep 4K:8K --iters 2
	rc=$?
	f=$dir/allreduce.0
	ok "$([ $rc = 0 ] && [ "$(field "$f" bad | sort -u)" = 0 ] &&
		[ "$(field "$f" dtype | sort -u)" = $dt ] &&
		[ "$(field "$f" op | sort -u)" = $op ] && echo 1)" \
		"allreduce of $dt, $op: every rank right, exit 0 ($rc failed)"
	[ "$_tap_failed" = 0 ] || diag "$(cat "$dir"/allreduce.*)"
done
for c in "reduce_scatter float16 avg" "reduce bfloat16 prod" "reduce int8 sum" \
	"allgather int8 -" "broadcast float64 -"; do
	read -r kind dt op <<<"$c"
	args=(--dtype "$dt" --size 8K --iters 2)
	[ "$op" = - ] || args+=(--op "$op")
	perf_coll "$kind" "${args[@]}"
	rc=$?
	ok "$([ $rc = 0 ] && [ "$(field "$dir/$kind.0" bad)" = 0 ] && echo 1)" \
		"$kind of $dt ${op#-}: every rank right, exit 0 ($rc failed)"
done

# --timeline and --csv: a line per timed call, each rank its own CSV.
perf_coll allreduce --sweep 4K:8K --iters 3 --timeline --csv /tmp/r2cc-perf-coll-%r.csv
rc=$?
is "$(grep -c ' s  allreduce ' "$dir/allreduce.0")" 6 \
	"--timeline: rank 0 prints one line per timed call (2 sizes x 3, $rc ranks failed)"
csv=$(tb_exec node1 cat /tmp/r2cc-perf-coll-1.csv)
is "$(head -n 1 <<<"$csv")" "time_s,size,iter,us,algo,failovers,resent_bytes,tcp_bytes,view_changes" \
	"--csv: the header"
ok "$(tail -n +2 <<<"$csv" | awk -F, 'NF != 9 || $4 <= 0 || $5 != "ring" {b = 1}
	{n++; s[$2]++} END {exit b || n != 6 || s[4096] != 3 || s[8192] != 3}' && echo 1)" \
	"--csv: rank 1's six calls, three per size, each with its time and the ring"
rm -rf "$dir"
tb_finish
