#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# r2cc-sim speed: the issue's target (1024 GPUs x 10,000 iterations with a
# random failure trace, all six strategies, under 1 s on one core) and how
# the cost grows with GPUs, iterations and events; then what choosing a
# schedule costs the library itself, per call of its model, up to 8192
# ranks (model-bench).  Pinned to one core with taskset when available;
# prints the median of RUNS runs (default 5).
#
#   tools/sim/bench.sh [path/to/r2cc-sim]
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
SIM=${1:-${BUILD:-$here/build}/tools/r2cc-sim}
RUNS=${RUNS:-5}
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)

# median wall time in seconds of RUNS runs of "$@"
median() {
	local i t0 t1
	for ((i = 0; i < RUNS; i++)); do
		t0=$(date +%s.%N)
		"${pin[@]}" "$@" >/dev/null
		t1=$(date +%s.%N)
		echo "$t1 - $t0" | bc -l
	done | sort -g |
		awk '{ v[NR] = $1 } END { printf "%.4f", v[int((NR + 1) / 2)] }'
}

events() {
	"$SIM" "$@" | sed -n 's/.* \([0-9]*\) events$/\1/p'
}

# random trace: per-NIC MTBF 100 h, 1 h repairs, a mix of flaps, partial
# degradation and silent failures
trace=(--mtbf-h 100 --repair-s 3600 --flap-prob 0.1 --degrade-prob 0.2
       --silent-prob 0.2 --seed 1)

echo "# r2cc-sim benchmark, median of $RUNS runs, ${pin[*]:-unpinned}"
echo "# target: training, 1024 GPUs (128 nodes x 8), 10000 iterations"
args=(--workload train --model gpt-70b --nodes 128 --iters 10000 "${trace[@]}")
printf "target  gpus=1024 iters=10000 events=%s  %s s\n" \
	"$(events "${args[@]}")" "$(median "$SIM" "${args[@]}")"

echo "# scaling with GPUs (10000 iterations)"
for nodes in 8 32 128 512 1024; do
	args=(--workload train --model gpt-70b --nodes "$nodes" --iters 10000
	      "${trace[@]}")
	printf "gpus=%-6d events=%-6s %s s\n" $((nodes * 8)) \
		"$(events "${args[@]}")" "$(median "$SIM" "${args[@]}")"
done

echo "# scaling with iterations (1024 GPUs, same trace rate)"
for iters in 1000 10000 100000 1000000; do
	args=(--workload train --model gpt-70b --nodes 128 --iters "$iters"
	      "${trace[@]}")
	printf "iters=%-8d events=%-6s %s s\n" "$iters" \
		"$(events "${args[@]}")" "$(median "$SIM" "${args[@]}")"
done

# what the library pays to choose a schedule, per view change and per new
# allreduce size (the same model code r2cc-sim links)
bench=$(dirname "$SIM")/sim/model-bench
if [ -x "$bench" ]; then
	echo "# the library's schedule choice, per call (lib/coll/model)"
	"${pin[@]}" "$bench" "$RUNS"
fi
