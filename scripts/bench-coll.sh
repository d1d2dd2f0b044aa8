#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench-coll.sh [--nodes N] [--nics K] [--rate MBIT] [--size BYTES]
#               [--iters N] [--sections "3 4 5 6"] [--candidate "ENV..."]
#
# The collectives figures of Documentation/coll.rst, in one testbed run:
# N nodes x K NICs (default 2; one of node1's down is beta = (K - 1) / K), every rail of every node shaped to --rate (egress) so
# that the network, not the emulator, is the bottleneck (default 8 Mbit/s:
# four busy nodes on the 2-core CI machine top out near 10 Mbit/s per
# direction; 30 Mbit/s, bench-lib.sh's rate for two nodes, measured the
# emulator here), then
#   1. ib_write_bw node0 -> node1 on each rail: the per-node bandwidth B;
#   2. --iters allreduces of --size bytes (float32 sum, each checked):
#      time per allreduce, algbw = size / time, busbw = algbw x 2(n-1)/n
#      (nccl-tests' definition), and busbw / B;
#   3. the same with one NIC of node 1 down (beta = 1/2 at 2 NICs), by the ring
#      (R2CC_ALGO=ring: the degraded node paces everyone) and by the
#      weighted ring (R2CC_ALGO=weighted: chunks sized to the view), side
#      by side; each against the healthy time, the lower bound
#      T_LB = max(D/(beta B), 2(n-1)D/((n-1+beta)B)) of the R2CCL paper for
#      D = size, and the cost model's prediction (lib/coll/model/weight.c, the
#      code r2cc-sim runs: tests/unit/coll_weight prints it);
#   4. nodes 1 and 2 each down to one NIC, both ways;
#   5. section 3 again with R2CC_COLL_SETS=2 and 4 side by side: how far
#      a rank may receive ahead of its forwards, which the weighted ring's
#      long chain needs (scripts/ring-schedule-model.py predicts it).
#   6. the library's default slicing against CANDIDATE (R2CC_COLL_SLICE,
#      _DEPTH and _SETS settings, --candidate), healthy and with node1's
#      NIC 1 down, ring and weighted: what changing the defaults and
#      making auto the weighted ring would gain or cost.
#   7. the optimal allreduce (R2CC_ALGO=optimal, on the mesh) against the
#      ring, the weighted ring and the paper's R2CC-AllReduce
#      (R2CC_ALGO=r2cc-ar) on the same mesh communicator, healthy,
#      with node1's NIC 1 down, and with nodes 1 and 2 each down to one
#      NIC, against T_LB (the model's time for the optimal shares); and
#      auto (the default) on the same mesh, which picks the optimal
#      allreduce where its model beats the ring by its margin.  Beside
#      each: r2cc-sim's prediction for the same fabric (the shaped rate,
#      NIC by NIC, and the same NICs down; no fitting): the ring as
#      r2ccl-balance, optimal as r2cc-optimal, auto as r2cc-lib-mesh,
#      r2cc-ar as r2cc-lib-ar.
#   --sections "3 5" runs only those of sections 3-7 (1 and 2 always run:
#   B and the healthy time are the references).
# Times are medians of rank 0's per-allreduce times, the first allreduce
# of each run left out (it runs before the ranks agree on the new view).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
build=${BUILD:-$here/build}
coll=$build/tests/libr2cc/coll
nodes=4 nics=2 rate=8 size=4194304 iters=4 sections="3 4 5 7"
candidate="R2CC_COLL_SLICE=65536 R2CC_COLL_DEPTH=16 R2CC_COLL_SETS=4"
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
	--nics) nics=$2; shift ;;
	--rate) rate=$2; shift ;;
	--size) size=$2; shift ;;
	--iters) iters=$2; shift ;;
	--sections) sections=$2; shift ;;
	--candidate) candidate=$2; shift ;;
	*) echo "usage: $0 [--nodes N] [--nics K] [--rate MBIT] [--size BYTES] [--iters N] [--sections \"3 4 5 6\"] [--candidate \"ENV...\"]" >&2; exit 2 ;;
	esac
	shift
done
"$tb" status >/dev/null 2>&1 && { echo "testbed already up" >&2; exit 1; }
trap '"$tb" down >/dev/null 2>&1' EXIT
case $nics in 2|3|4) ;; *) echo "--nics: 2 to 4" >&2; exit 2 ;; esac
"$tb" up --nodes "$nodes" --nics "$nics" | head -n1 || exit 1
for ((i = 0; i < nodes; i++)); do
	for ((k = 0; k < nics; k++)); do
		"$tb" shape "node$i" "$k" --rate "${rate}mbit" || exit 1
	done
done
out=$(mktemp -d)
# shellcheck source=scripts/bench-common.sh
. "$here/scripts/bench-common.sh"

# allreduces [ENV...]: median seconds per allreduce (rank 0's, the first
# left out), or nothing on failure.
allreduces() {
	local port=$((20000 + RANDOM % 20000)) i pids=()
	for ((i = nodes - 1; i >= 0; i--)); do
		"$tb" exec --timeout 900 "node$i" -- env R2CC_ROOT=198.19.1.1:$port \
			WORLD_SIZE="$nodes" RANK=$i R2CC_SOCKET_IFNAME=ctl0 $env \
			COLL_TIMES=1 "$@" "$coll" -l "$iters" -s "$size" \
			>"$out/$i.log" 2>&1 &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i"; done
	grep -h '^coll-result' "$out"/*.log | sed 's/^/  /' >&2
	# the emulator's deep queues make false stalls: say so beside the time
	grep -q '^coll-result: .* failovers=[1-9]' "$out"/*.log &&
		echo "  warning: rails failed over in this run (false stalls at this rate?); its time is not the schedule's alone" >&2
	grep -q '^coll-result: .* bad=0 error=0 ' "$out/0.log" || return
	awk '/^iter: / && $2 > 0 {print $3}' "$out/0.log" | sort -n |
		awk '{v[NR] = $1} END {if (NR) printf "%.3f\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

echo "== 1. ib_write_bw node0 -> node1, each rail shaped to $rate Mbit/s"
B=0 rails=""
for ((k = 0; k < nics; k++)); do
	a=$(write_bw "$k" 6)
	B=$(echo "$B + ${a:-0}" | bc)
	rails="$rails${rails:+, }rail$k ${a:-?}"
done
# node1 with one NIC down
beta=$(echo "scale=4; ($nics - 1) / $nics" | bc)
echo "$rails: B = $B Mbit/s per node"

echo "== 2. allreduce, $nodes nodes, $size bytes float32, $iters in a row"
t=$(allreduces)
bus() { echo "scale=1; $size * 8 / $1 / 1000000 * 2 * ($nodes - 1) / $nodes" | bc; }
echo "time ${t:-?} s per allreduce; busbw $(bus "${t:-1}") Mbit/s; busbw / B $(echo "scale=3; $(bus "${t:-1}") / $B" | bc)"

ratio() { echo "scale=3; ${1:-0} / ${2:-1}" | bc; }
# T_LB for one degraded node at beta, and the weighted ring's model time
# (lib/coll/model/weight.c's optimum: D/(beta B) up to beta = 1/2, then
# 2(n-1)D/((n-2+2 beta)B)), in seconds, for D = size, B = B
lb() { echo "scale=4; d = $size * 8 / ($B * 1000000); n = $nodes; b = $1; x = d / b; y = 2 * (n - 1) * d / (n - 1 + b); if (x > y) x else y" | bc; }
model_w() { echo "scale=4; d = $size * 8 / ($B * 1000000); n = $nodes; b = $1; if (b <= 0.5) d / b else 2 * (n - 1) * d / (n - 2 + 2 * b)" | bc; }
model_r() { echo "scale=4; d = $size * 8 / ($B * 1000000); n = $nodes; 2 * (n - 1) / n * d / $1" | bc; }

section() { case " $sections " in *" $1 "*) return 0 ;; esac; return 1; }

if section 3; then
echo "== 3. node1's NIC 1 down (beta = $beta)"
"$tb" link node1 1 down
sleep 2
tr=$(allreduces R2CC_ALGO=ring)
tw=$(allreduces R2CC_ALGO=weighted)
"$tb" link node1 1 up
l=$(lb "$beta")
echo "ring:     ${tr:-?} s per allreduce; $(ratio "$tr" "$t") x healthy; $(ratio "$tr" "$l") x T_LB; model $(model_r "$beta") s"
echo "weighted: ${tw:-?} s per allreduce; $(ratio "$tw" "$t") x healthy; $(ratio "$tw" "$l") x T_LB; model $(model_w "$beta") s"
echo "weighted / ring $(ratio "$tw" "$tr"); T_LB $l s"
fi

if section 4; then
echo "== 4. nodes 1 and 2 each down to one NIC"
"$tb" link node1 1 down
"$tb" link node2 1 down
sleep 2
tr2=$(allreduces R2CC_ALGO=ring)
tw2=$(allreduces R2CC_ALGO=weighted)
"$tb" link node1 1 up
"$tb" link node2 1 up
echo "ring:     ${tr2:-?} s per allreduce; $(ratio "$tr2" "$t") x healthy"
echo "weighted: ${tw2:-?} s per allreduce; $(ratio "$tw2" "$t") x healthy; weighted / ring $(ratio "$tw2" "$tr2")"
fi

if section 5; then
echo "== 5. node1's NIC 1 down, receive slot sets 2 and 4"
"$tb" link node1 1 down
sleep 2
for k in 2 4; do
	tr=$(allreduces R2CC_ALGO=ring R2CC_COLL_SETS=$k)
	tw=$(allreduces R2CC_ALGO=weighted R2CC_COLL_SETS=$k)
	echo "sets $k: ring ${tr:-?} s, weighted ${tw:-?} s per allreduce; weighted / ring $(ratio "$tw" "$tr")"
done
"$tb" link node1 1 up
fi
if section 6; then
echo "== 6. defaults against the candidate ($candidate)"
# shellcheck disable=SC2086
{
h0=$(allreduces R2CC_ALGO=ring)
h1=$(allreduces R2CC_ALGO=ring $candidate)
"$tb" link node1 1 down
sleep 2
r0=$(allreduces R2CC_ALGO=ring)
w0=$(allreduces R2CC_ALGO=weighted)
a0=$(allreduces R2CC_ALGO=auto)
r1=$(allreduces R2CC_ALGO=ring $candidate)
w1=$(allreduces R2CC_ALGO=weighted $candidate)
a1=$(allreduces R2CC_ALGO=auto $candidate)
"$tb" link node1 1 up
}
echo "healthy ring:      defaults ${h0:-?} s, candidate ${h1:-?} s; candidate / defaults $(ratio "$h1" "$h0")"
echo "beta $beta ring:     defaults ${r0:-?} s, candidate ${r1:-?} s; candidate / defaults $(ratio "$r1" "$r0")"
echo "beta $beta weighted: defaults ${w0:-?} s, candidate ${w1:-?} s; candidate / defaults $(ratio "$w1" "$w0")"
echo "beta $beta auto:     defaults ${a0:-?} s, candidate ${a1:-?} s"
echo "candidate weighted / defaults ring $(ratio "$w1" "$r0"); candidate weighted / candidate ring $(ratio "$w1" "$r1"); T_LB $(lb "$beta") s"
fi
if section 7; then
echo "== 7. the optimal allreduce on the mesh, against the ring and the weighted ring"
mesh="COLL_MESH=1 R2CC_COLL_RD_MAX=0"
# shellcheck disable=SC2086
{
oh=$(allreduces $mesh R2CC_ALGO=optimal)
rh=$(allreduces $mesh R2CC_ALGO=ring)
ah=$(allreduces $mesh R2CC_ALGO=auto)
"$tb" link node1 1 down
sleep 2
o1=$(allreduces $mesh R2CC_ALGO=optimal)
r1=$(allreduces $mesh R2CC_ALGO=ring)
w1=$(allreduces $mesh R2CC_ALGO=weighted)
a1=$(allreduces $mesh R2CC_ALGO=auto)
p1=$(allreduces $mesh R2CC_ALGO=r2cc-ar)
"$tb" link node2 1 down
sleep 2
o2=$(allreduces $mesh R2CC_ALGO=optimal)
r2=$(allreduces $mesh R2CC_ALGO=ring)
w2=$(allreduces $mesh R2CC_ALGO=weighted)
a2=$(allreduces $mesh R2CC_ALGO=auto)
p2=$(allreduces $mesh R2CC_ALGO=r2cc-ar)
"$tb" link node1 1 up
"$tb" link node2 1 up
}
d=$(echo "scale=4; $size * 8 / ($B * 1000000)" | bc)
echo "healthy: optimal ${oh:-?} s, ring ${rh:-?} s; optimal / ring $(ratio "$oh" "$rh"); bound 2(n-1)/n D/B = $(echo "scale=4; 2 * ($nodes - 1) / $nodes * $d" | bc) s"
echo "beta $beta: optimal ${o1:-?} s, ring ${r1:-?} s, weighted ${w1:-?} s, r2cc-ar ${p1:-?} s; optimal / ring $(ratio "$o1" "$r1"); optimal / T_LB $(ratio "$o1" "$(lb "$beta")"); T_LB $(lb "$beta") s"
echo "beta $beta against the healthy ring: ring $(ratio "$r1" "$rh"), r2cc-ar $(ratio "$p1" "$rh"), optimal $(ratio "$o1" "$rh"), T_LB $(ratio "$(lb "$beta")" "$rh") (the R2CCL paper, 3 nodes, one NIC of three lost: Balance ~1.49, R2CC-AllReduce ~1.38)"
echo "two at beta $beta: optimal ${o2:-?} s, ring ${r2:-?} s, weighted ${w2:-?} s, r2cc-ar ${p2:-?} s; optimal / ring $(ratio "$o2" "$r2")"
echo "auto: healthy ${ah:-?} s ($(ratio "$ah" "$rh") of the ring), beta $beta ${a1:-?} s ($(ratio "$a1" "$r1"); / T_LB $(ratio "$a1" "$(lb "$beta")")), two at beta ${a2:-?} s ($(ratio "$a2" "$r2"))"
# sim_t STRATEGY [N:K ...]: r2cc-sim's seconds for one allreduce with
# NIC K of node N down from the start
sim_t() {
	local st=$1 x args=()
	shift
	for x in "$@"; do args+=(--fail "$x@0"); done
	"$build/tools/r2cc-sim" --nodes "$nodes" --gpus 1 --nics "$nics" \
		--nic-gbps "$(echo "scale=6; $rate / 1000" | bc)" --size "$size" \
		--iters 1 --r2ccl-detect-s 0 --port-detect-us 0 --csv \
		--strategy "$st" "${args[@]}" | awk -F, 'NR == 2 {print $2 + 0}'
}
# The last column divides by the healthy ring's measured / predicted:
# the prediction with B fitted to that one case.
echo "r2cc-sim at $rate Mbit/s per NIC: case, measured s, predicted s, measured / predicted, the same over the healthy ring's"
fit=""
# shellcheck disable=SC2086
while read -r what m st f; do
	p=$(sim_t "$st" $f)
	r="?" q="?"
	[ "$m" != "?" ] && [ -n "$p" ] && r=$(ratio "$m" "$p")
	[ -z "$fit" ] && fit=$r
	[ "$r" != "?" ] && [ "$fit" != "?" ] && q=$(ratio "$r" "$fit")
	printf '  %-28s %8s %8s %6s %6s\n' "$what" "$m" "${p:-?}" "$r" "$q"
done <<EOT
healthy,ring ${rh:-?} r2ccl-balance
healthy,optimal ${oh:-?} r2cc-optimal
healthy,auto ${ah:-?} r2cc-lib-mesh
beta-$beta,ring ${r1:-?} r2ccl-balance 1:1
beta-$beta,optimal ${o1:-?} r2cc-optimal 1:1
beta-$beta,auto ${a1:-?} r2cc-lib-mesh 1:1
beta-$beta,r2cc-ar ${p1:-?} r2cc-lib-ar 1:1
two-at-$beta,ring ${r2:-?} r2ccl-balance 1:1 2:1
two-at-$beta,optimal ${o2:-?} r2cc-optimal 1:1 2:1
two-at-$beta,auto ${a2:-?} r2cc-lib-mesh 1:1 2:1
two-at-$beta,r2cc-ar ${p2:-?} r2cc-lib-ar 1:1 2:1
EOT
fi
rm -rf "$out"
