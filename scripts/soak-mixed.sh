#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# soak-mixed.sh [--runs N] [--seconds S] [--rate MBIT] [--idle MS]
#               [--nics K] [--env "VAR=VALUE ..."]
#
# The failure-handling issue's targets with no fault at all: 4 nodes x K
# NICs (2), r2cc.ko loaded, every rail shaped to MBIT if given; N runs
# (5) of tests/libr2cc/mixed for S seconds (60) each, every rank sleeping
# up to MS (300) after each checkpoint, a new seed per run.  Prints per
# run whether every rank finished (a hang or an error is a failure), the
# collectives, and the failovers, TCP fallback bytes, view changes and
# drains summed over the ranks; at the end the totals.  Leaves the logs.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
build=${BUILD:-$here/build}
mixed=$build/tests/libr2cc/mixed
runs=5 seconds=60 rate='' idle=300 nics=2 nodes=4 env=''
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--rate) rate=$2; shift ;;
	--idle) idle=$2; shift ;;
	--nics) nics=$2; shift ;;
	--env) env=$2; shift ;;
	*) echo "usage: $0 [--runs N] [--seconds S] [--rate MBIT] [--idle MS] [--nics K] [--env \"VAR=VALUE ...\"]" >&2
	   exit 2 ;;
	esac
	shift
done
"$tb" status >/dev/null 2>&1 && { echo "testbed already up" >&2; exit 1; }
trap '"$tb" down >/dev/null 2>&1' EXIT
"$tb" up --nodes "$nodes" --nics "$nics" | head -n1 || exit 1
kver=$("$tb" exec node0 -- uname -r)
for ((i = 0; i < nodes; i++)); do
	"$tb" exec "node$i" -- insmod "$build/kmod/$kver/r2cc.ko" || exit 1
	for ((k = 0; k < nics; k++)); do
		[ -z "$rate" ] || "$tb" shape "node$i" "$k" --rate "${rate}mbit" ||
			exit 1
	done
done
out=$(mktemp -d)

# field LOG KEY: from a rank's mixed-result line.
field() { sed -n "s/^mixed-result: .*\b$2=\([^ ]*\).*/\1/p" "$1"; }

echo "== $nodes nodes x $nics NICs${rate:+, every rail at $rate Mbit/s}, $runs runs of $seconds s of mixed collectives, ranks idle up to $idle ms between checkpoints${env:+, $env}"
failed=0 ftot=0
for ((r = 1; r <= runs; r++)); do
	port=$((20000 + RANDOM % 20000)) seed=$((RANDOM + 1)) pids=()
	for ((i = nodes - 1; i >= 0; i--)); do
		# shellcheck disable=SC2086
		"$tb" exec --timeout $((seconds + 600)) "node$i" -- env \
			R2CC_ROOT=198.19.1.1:$port WORLD_SIZE="$nodes" RANK=$i \
			R2CC_SOCKET_IFNAME=ctl0 $env \
			"$mixed" -t "$seconds" -i "$idle" -s "$seed" \
			>"$out/$r.$i.log" 2>&1 &
		pids+=($!)
	done
	rcs=
	for p in "${pids[@]}"; do wait "$p"; rcs+="$? "; done
	ok=1 f=0 t=0 v=0
	for ((i = 0; i < nodes; i++)); do
		log=$out/$r.$i.log
		[ "$(field "$log" error)" = 0 ] && [ "$(field "$log" bad)" = 0 ] || ok=0
		x=$(field "$log" failovers)
		f=$((f + ${x:-0}))
		x=$(field "$log" tcp)
		t=$((t + ${x:-0}))
		v=$(field "$log" view_changes)
	done
	d=$(cat "$out/$r".*.log | grep -c 'port degraded; draining')
	[ $ok = 1 ] || failed=$((failed + 1))
	ftot=$((ftot + f))
	echo "run $r (seed $seed): $([ $ok = 1 ] && echo ok || echo FAILED) exit $rcs colls $(field "$out/$r.0.log" colls) failovers $f tcp $t view_changes ${v:-?} drains $d"
done
echo "mixed-soak: runs=$runs failed=$failed failovers=$ftot seconds=$seconds rate=${rate:-none}"
echo "(logs in $out)"
