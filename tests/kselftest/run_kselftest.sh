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
#   run_kselftest.sh [-t COLLECTION:TEST]... [-l] [-h]
#
#   -t C:T   run only these (repeatable)
#   -l       list the tests and exit
set -u
here=$(cd "$(dirname "$0")" && pwd)
list=$here/kselftest-list.txt
only=()
usage() { sed -n '10,15p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
	case "$1" in
	-t) [ $# -ge 2 ] || { usage >&2; exit 2; }; only+=("$2"); shift ;;
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

echo "TAP version 13"
echo "1..${#tests[@]}"
n=0 failed=0
for t in "${tests[@]}"; do
	n=$((n + 1))
	coll=${t%%:*} name=${t#*:}
	timeout=45
	[ -r "$here/$coll/settings" ] &&
		timeout=$(sed -n 's/^timeout=\([0-9]*\)$/\1/p' "$here/$coll/settings")
	echo "# selftests: $coll: $name"
	out=$(cd "$here/$coll" && timeout "${timeout:-45}" "./$name" 2>&1)
	rc=$?
	[ -n "$out" ] && sed 's/^/# /' <<<"$out"
	case $rc in
	0) echo "ok $n selftests: $coll: $name" ;;
	4) echo "ok $n selftests: $coll: $name # SKIP" ;;
	124) echo "not ok $n selftests: $coll: $name # TIMEOUT ${timeout}s"
	     failed=$((failed + 1)) ;;
	*) echo "not ok $n selftests: $coll: $name # exit=$rc"
	   failed=$((failed + 1)) ;;
	esac
done
[ "$failed" = 0 ]
