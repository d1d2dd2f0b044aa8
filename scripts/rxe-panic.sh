#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# rxe-panic.sh [--runs N] [--kernel SERIES] [--grave "MS ..."]
#              [--tests "FILE ..."] [--append PARAMS]
#
# Looks for the rxe guest panics seen in CI on 6.12: runs the tests (by
# default the receiver-side cut of tests/testbed/lib_failover_receiver.sh)
# N times (default 25) on a 2-node x 2-NIC testbed, for each value of
# R2CC_QP_GRAVE_MS (default "0 3000": a failed rail's QP destroyed at once,
# or kept 3 s as the library does; "-" leaves the library's default), and
# counts the runs after which a node had panicked, oopsed or reported slab
# corruption (its console) or died.  --append passes kernel parameters to
# the nodes, e.g. "slub_debug=FZPU" to have SLUB name who freed a
# corrupted object.  A node that died is brought back with the testbed.
# One line per run, then a summary per setting.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
state=${BUILD:-$here/build}/testbed
runs=25 kernel=6.12 graves="0 3000" append=
tests=tests/testbed/lib_failover_receiver.sh
while [ $# -gt 0 ]; do
	case "$1" in
	--runs) runs=$2; shift ;;
	--kernel) kernel=$2; shift ;;
	--grave) graves=$2; shift ;;
	--tests) tests=$2; shift ;;
	--append) append=$2; shift ;;
	-h|--help) sed -n '3,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "rxe-panic: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
if "$tb" status >/dev/null 2>&1; then
	echo "rxe-panic: a testbed is already up" >&2
	exit 1
fi
trap '"$tb" down >/dev/null 2>&1' EXIT
logs=$(mktemp -d /tmp/rxe-panic.XXXXXX)
echo "logs in $logs"

# size N: bytes in node N's console so far.
size() {
	stat -c %s "$state/node$1.console" 2>/dev/null || echo 0
}

# bad_console M0 M1: 0 if a node's console shows a kernel failure past
# byte M0 (node0) or M1 (node1).
bad_console() {
	local i m=("$@")
	for i in 0 1; do
		tail -c +"$((m[i] + 1))" "$state/node$i.console" 2>/dev/null |
			grep -qE 'Kernel panic|BUG:|Oops|slab|general protection|double fault' &&
			return 0
	done
	return 1
}

summary=()
for g in $graves; do
	"$tb" up --kernel "$kernel" --append "$append" >/dev/null ||
		{ echo "testbed did not come up"; exit 1; }
	bad=0 failed=0
	for ((i = 1; i <= runs; i++)); do
		m0=$(size 0) m1=$(size 1)
		log=$logs/grave$g-run$i.tap
		env=()
		[ "$g" = - ] || env=("XF_ENV=R2CC_QP_GRAVE_MS=$g")
		# shellcheck disable=SC2086 # a list of test files
		env "${env[@]}" prove -v $tests >"$log" 2>&1
		rc=$?
		alive=1
		"$tb" health >/dev/null 2>&1 || alive=0
		what=ok
		[ $rc = 0 ] || { what="test failed ($log)"; failed=$((failed + 1)); }
		if [ $alive = 0 ] || bad_console "$m0" "$m1"; then
			what="node failed (panic/oops/slab or gone)"
			bad=$((bad + 1))
			grep -hE 'Kernel panic|BUG:|Oops|slab|RIP:|double fault' "$state"/node*.console | tail -n 5
			for n in 0 1; do
				cp "$state/node$n.console" "$logs/grave$g-run$i.node$n.console"
			done
			"$tb" down >/dev/null 2>&1
			"$tb" up --kernel "$kernel" --append "$append" >/dev/null || exit 1
		fi
		echo "grave ${g} ms, run $i: $what"
	done
	"$tb" down >/dev/null
	summary+=("R2CC_QP_GRAVE_MS=$g on $kernel: $runs runs, $bad with a kernel failure, $failed tests failed")
done
printf '%s\n' "${summary[@]}"
