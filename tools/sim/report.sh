#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The runs behind the reproduction report in Documentation/sim.rst, so
# every figure there can be regenerated:  tools/sim/report.sh
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
SIM=${1:-${BUILD:-$here/build}/tools/r2cc-sim}

cols() {
	awk -F, 'NR > 1 {
		printf "  %-15s overhead %9.4f%%  slowdown %.4f  aborts %s",
		       $1, $4, $5, $8
		printf "  ttft_ms %.2f  tpot_ms %.3f\n", $11 * 1e3, $12 * 1e3
	}'
}

echo "== reference: 3 nodes x 3 NICs x 10 Gbit/s, 4 GiB allreduce, 1 NIC lost"
"$SIM" --nodes 3 --gpus 1 --nics 3 --nic-gbps 10 --size 4GiB --iters 1 \
	--fail 1:2@0 --r2ccl-detect-s 0 --ib-timeout 0 --restart-s 0 \
	--fuse 3 --csv | cols
"$SIM" --nodes 3 --gpus 1 --nics 3 --nic-gbps 10 --size 4GiB --iters 1 \
	--fail 1:2@0 --r2ccl-detect-s 0 --ib-timeout 0 --restart-s 0 --fuse 3 \
	--chunks 0 --nic-lat-us 0 --csv | cols

echo "== allreduce 1 GiB, one NIC of 8 lost on one node"
for n in 8 32 128; do
	echo "-- $((n * 8)) GPUs"
	"$SIM" --nodes $n --size 1GiB --iters 1 --fail 0:0@0 --csv \
		--r2ccl-detect-s 0 --ib-timeout 0 --restart-s 0 | cols
done

echo "== training, one NIC lost for the whole run (2000 iterations of GPT-70B)"
for n in 8 32 128; do
	for ov in 0 1; do
		echo "-- $((n * 8)) GPUs, gpt-70b tp 8 pp 4, overlap $ov"
		"$SIM" --workload train --model gpt-70b --nodes $n --pp 4 \
			--batch 1024 --overlap $ov --iters 2000 \
			--fail 1:3@60 --csv | cols
	done
done

echo "== training, multiple failures: 3 nodes lose one NIC, one node loses 2"
for n in 8 32 128; do
	echo "-- $((n * 8)) GPUs"
	"$SIM" --workload train --model gpt-70b --nodes $n --pp 4 \
		--batch 1024 --iters 2000 --fail 0:0@60 --fail 3:5@600 \
		--fail 5:2@1200..20000 --fail 6:0@1800 --fail 6:3@2400 \
		--csv | cols
done

echo "== serving gpt-405b, tp 16 over 2 nodes, one NIC lost"
"$SIM" --workload serve --model gpt-405b --nodes 2 --tp 16 --iters 200 \
	--concurrency 32 --prompt 2048 --output 256 --fail 1:4@30 \
	--restart-s 300 --csv | cols
echo "== serving gpt-70b, tp 16 over 2 nodes, one NIC lost"
"$SIM" --workload serve --model gpt-70b --nodes 2 --tp 16 --iters 200 \
	--concurrency 32 --prompt 2048 --output 256 --fail 1:4@30 \
	--restart-s 300 --csv | cols

echo "== random failures: 1024 GPUs, 10000 iterations, MTBF 1000 h per NIC"
"$SIM" --workload train --model gpt-70b --nodes 128 --pp 4 --batch 1024 \
	--iters 10000 --mtbf-h 1000 --repair-s 7200 --flap-prob 0.1 \
	--degrade-prob 0.2 --silent-prob 0.2 --seed 1 --csv | cols

three=r2ccl-balance,r2cc-allreduce,r2cc-overlap
echo "== beyond the paper: allreduce overhead vs GPUs, one NIC of 8 lost"
for n in 4 8 16 32 64 128; do
	printf "  %4d GPUs:" $((n * 8))
	"$SIM" --nodes $n --size 1GiB --iters 1 --fail 0:0@0 --csv \
		--r2ccl-detect-s 0 --ib-timeout 0 --restart-s 0 --chunks 0 \
		--nic-lat-us 0 --strategy "$three" |
		awk -F, 'NR > 1 { printf " %s %.4f%%", $1, $4 }'
	echo
done
echo "== beyond the paper: the same, degraded node keeps half (4 of 8 lost)"
for n in 4 16 64; do
	printf "  %4d GPUs:" $((n * 8))
	"$SIM" --nodes $n --size 1GiB --iters 1 --fail 0:0@0 --fail 0:1@0 \
		--fail 0:2@0 --fail 0:3@0 --csv --r2ccl-detect-s 0 \
		--ib-timeout 0 --restart-s 0 --chunks 0 --nic-lat-us 0 \
		--strategy "$three" |
		awk -F, 'NR > 1 { printf " %s %.4f%%", $1, $4 }'
	echo
done
