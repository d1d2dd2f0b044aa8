#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# r2cc's non-destructive tests as a kselftest collection, for a real node
# with real NICs: run as root with r2cc.ko loaded (each test skips what
# it cannot check).  The layout and output are kselftest's: the tests
# named in kselftest-list.txt ("collection:test"), each a TAP program
# exiting 0 pass, 4 skip, else fail, run with the collection's timeout
# (its "settings" file) and reported on one TAP line each.
#
#   run_kselftest.sh [-t COLLECTION:TEST]... [-d DEV[:PORT]]... [-a] [-l] [-h]
#
#   -t C:T   run only these (repeatable)
#   -d D:P   run them on this device (and port), each named (repeatable)
#   -a       run them on every ACTIVE port r2cc.ko knows
#   -l       list the tests and exit
# Without -d or -a, each test finds the node's first device with an
# ACTIVE port itself; it skips only when the node has no RDMA device.
set -u
here=$(cd "$(dirname "$0")" && pwd)
list=$here/kselftest-list.txt
only=() devs=() all=
usage() { sed -n '10,18p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	-t) [ $# -ge 2 ] || { usage >&2; exit 2; }; only+=("$2"); shift ;;
	-d) [ $# -ge 2 ] || { usage >&2; exit 2; }; devs+=("$2"); shift ;;
	-a) all=1 ;;
	-l) cat "$list"; exit 0 ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run_kselftest.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

tests=()
while IFS= read -r t; do
	[ -n "$t" ] || continue
	if [ ${#only[@]} -gt 0 ]; then
		keep=
		for o in "${only[@]}"; do [ "$o" = "$t" ] && keep=1; done
		[ -n "$keep" ] || continue
	fi
	tests+=("$t")
done <"$list"
for o in "${only[@]+"${only[@]}"}"; do
	grep -qxF -- "$o" "$list" ||
		{ echo "run_kselftest.sh: no test $o (see -l)" >&2; exit 2; }
done

# -a: every ACTIVE port, as DEV:PORT
if [ -n "$all" ]; then
	for st in /sys/kernel/r2cc/devices/*/ports/*/state; do
		[ -r "$st" ] && [ "$(cat "$st")" = ACTIVE ] || continue
		p=${st%/state} p=${p##*/}
		d=${st%/ports/*} d=${d##*/}
		devs+=("$d:$p")
	done
	[ ${#devs[@]} -gt 0 ] ||
		{ echo "run_kselftest.sh: -a: r2cc.ko knows no ACTIVE port" >&2; exit 2; }
fi
[ ${#devs[@]} -gt 0 ] || devs=("")

echo "TAP version 13"
echo "1..$((${#tests[@]} * ${#devs[@]}))"
n=0 failed=0
for dev in "${devs[@]}"; do
for t in "${tests[@]}"; do
	n=$((n + 1))
	coll=${t%%:*} name=${t#*:}
	timeout=45
	[ -r "$here/$coll/settings" ] &&
		timeout=$(sed -n 's/^timeout=\([0-9]*\)$/\1/p' "$here/$coll/settings")
	what="$coll: $name${dev:+ on $dev}"
	echo "# selftests: $what"
	out=$(cd "$here/$coll" && R2CC_TEST_DEV=$dev \
		timeout "${timeout:-45}" "./$name" 2>&1)
	rc=$?
	[ -n "$out" ] && sed 's/^/# /' <<<"$out"
	case $rc in
	0) echo "ok $n selftests: $what" ;;
	4) echo "ok $n selftests: $what # SKIP" ;;
	124) echo "not ok $n selftests: $what # TIMEOUT ${timeout}s"
	     failed=$((failed + 1)) ;;
	*) echo "not ok $n selftests: $what # exit=$rc"
	   failed=$((failed + 1)) ;;
	esac
done
done
[ "$failed" = 0 ]
