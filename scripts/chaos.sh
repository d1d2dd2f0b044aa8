#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The long chaos run: brings up a testbed with three rails, then runs
# tests/chaos/chaos.sh round after round, each with a new seed (a new
# randomised fault schedule over a checked stream), for --minutes, and
# stops at the first failed round with the command that replays it.
#
#   scripts/chaos.sh [--minutes M] [--rounds N] [--seconds S] [--seed S]
#                    [--nodes N] [--kernel 6.1|6.12] [--running]
#
#   --minutes M   start rounds until M minutes have passed (default 5)
#   --rounds N    run exactly N rounds instead
#   --seconds S   chaos per round, in seconds (default 60)
#   --seed S      the first round's seed (then random ones); with
#                 --rounds 1 it replays a failed round
#   --nodes N     testbed nodes (default 2; the test uses node0, node1)
#   --kernel K    Debian kernel series (default 6.1)
#   --running     use the testbed that is up (3 NICs or more) instead of
#                 bringing one up and down
#
# Every round's TAP output is kept in $R2CC_CHAOS_OUT (default
# /tmp/r2cc-chaos-run-DATE); a failed round also leaves its stream logs,
# schedule and kernel logs in /tmp/r2cc-chaos-SEED.
set -u

here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
minutes=5 rounds= seconds=60 seed= nodes=2 kernel=6.1 running=

while [ $# -gt 0 ]; do
	case "$1" in
	--minutes) minutes=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	--seconds) seconds=$2; shift ;;
	--seed) seed=$2; shift ;;
	--nodes) nodes=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	--running) running=1 ;;
	-h|--help) sed -n '4,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "chaos.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	esac
	shift
done
for v in minutes seconds nodes ${rounds:+rounds} ${seed:+seed}; do
	[[ ${!v} =~ ^[0-9]+$ ]] || {
		echo "chaos.sh: --$v wants a number" >&2
		exit 2
	}
done

build=${BUILD:-$here/build}
[ -x "$build/tests/libr2cc/xfer" ] || {
	echo "chaos.sh: $build/tests/libr2cc/xfer is missing: run make all kmod-testbed" >&2
	exit 2
}

out=${R2CC_CHAOS_OUT:-/tmp/r2cc-chaos-run-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$out" || exit 1

if [ -n "$running" ]; then
	"$tb" status >/dev/null 2>&1 || {
		echo "chaos.sh: --running, but no testbed is up" >&2
		exit 2
	}
	nodes=$("$tb" status | sed -n '1s/.*, \([0-9]*\) nodes x.*/\1/p')
else
	if "$tb" status >/dev/null 2>&1; then
		echo "chaos.sh: a testbed is already up; bring it down first" \
			"(or use --running)" >&2
		exit 1
	fi
	trap '"$tb" down >/dev/null 2>&1' EXIT
	trap 'exit 130' INT TERM
	echo "chaos.sh: bringing up $nodes nodes x 3 NICs, kernel $kernel"
	"$tb" up --nodes "$nodes" --nics 3 --kernel "$kernel" || exit 1
fi

t0=$SECONDS n=0 seeds=()
sum_fo=0 sum_rp=0 sum_rb=0 sum_fb=0 sum_tcp=0 sum_bytes=0 rmax=0
while :; do
	if [ -n "$rounds" ]; then
		[ $n -lt "$rounds" ] || break
	else
		[ $((SECONDS - t0)) -lt $((minutes * 60)) ] || break
	fi
	s=${seed:-$(((RANDOM << 15 | RANDOM) % 1000000000))}
	seed=
	n=$((n + 1)) seeds+=("$s")
	r0=$SECONDS
	echo "=== round $n: seed $s, $seconds s of chaos"
	R2CC_CHAOS_SEED=$s R2CC_CHAOS_SECONDS=$seconds \
		"$here/tests/chaos/chaos.sh" >"$out/round$n-seed$s.tap" 2>&1
	rc=$?
	f=$out/round$n-seed$s.tap
	# Sums over the chaos streams (not the baseline and the final one).
	eval "$(sed -n 's/^# stream [0-9]*: sender rank=0 //p' "$f" | awk '
		{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] += kv[2]
		  if (kv[1] == "repair_ms_max" && kv[2] > mx) mx = kv[2] } }
		END { printf "fo=%d rp=%d rb=%d fb=%d tcp=%d by=%d mx=%s\n",
			v["failovers"], v["repairs"], v["rollbacks"], v["failbacks"],
			v["tcp"], v["bytes"], mx + 0 }')"
	steps=$(sed -n 's/^# schedule: \([0-9]*\) steps.*/\1/p' "$f")
	echo "    $((SECONDS - r0)) s, ${steps:-?} faults: $((by >> 20)) MiB," \
		"$fo failovers, $rp repairs (max $mx ms), $rb rollbacks," \
		"$fb failbacks, $((tcp >> 20)) MiB over TCP;" \
		"$(grep -c '^ok' "$f") ok, $(grep -c '^not ok' "$f") not ok"
	sum_fo=$((sum_fo + fo)) sum_rp=$((sum_rp + rp)) sum_rb=$((sum_rb + rb))
	sum_fb=$((sum_fb + fb)) sum_tcp=$((sum_tcp + tcp))
	sum_bytes=$((sum_bytes + by))
	rmax=$(awk -v a="$rmax" -v b="$mx" 'BEGIN { print (b > a ? b : a) }')
	if [ $rc != 0 ]; then
		grep -E '^not ok|^# chaos seed' "$f" | sort -u | head -20
		echo "chaos.sh: round $n FAILED (exit $rc), seed $s"
		echo "  TAP output: $f"
		echo "  logs:       /tmp/r2cc-chaos-$s"
		echo "  replay:     scripts/chaos.sh --rounds 1 --seed $s" \
			"--seconds $seconds --nodes $nodes --kernel $kernel"
		echo "  or, on a testbed that is up: R2CC_CHAOS_SEED=$s" \
			"R2CC_CHAOS_SECONDS=$seconds tests/chaos/chaos.sh"
		exit 1
	fi
done
echo "chaos.sh: $n round$([ $n = 1 ] || echo s) passed in $((SECONDS - t0)) s, seeds ${seeds[*]}"
echo "  $((sum_bytes >> 20)) MiB checked, $sum_fo failovers, $sum_rp repairs" \
	"(max $rmax ms), $sum_rb rollbacks, $sum_fb failbacks," \
	"$((sum_tcp >> 20)) MiB over the TCP fallback; output in $out"
