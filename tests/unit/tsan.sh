#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The library's thread model under ThreadSanitizer (tests/tsan/threads.c,
# `make check-tsan`): setup calls in one thread beside data calls in two
# others, over the fake NIC.  TSAN_RUNS runs (default 2; check-full.sh
# 3); a data race fails the run.
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$here/build}
runs=${TSAN_RUNS:-2}
echo "1..$runs"
if ! out=$(make -s -C "$here" BUILD="$build" tsan 2>&1); then
	echo "# $out" | head -n 20
	for ((i = 1; i <= runs; i++)); do echo "not ok $i - build the ThreadSanitizer harness"; done
	exit 1
fi
rc=0
for ((i = 1; i <= runs; i++)); do
	out=$(TSAN_OPTIONS="halt_on_error=1 exitcode=66" \
		timeout 300 "$build/tests/tsan/threads" 2>&1)
	r=$?
	if [ $r = 0 ]; then
		echo "ok $i - run $i: $(sed -n 's/^ok 1 - //p' <<<"$out"), no data race"
	else
		echo "not ok $i - run $i: exit $r"
		sed 's/^/# /' <<<"$out" | head -n 60
		rc=1
	fi
done
exit $rc
