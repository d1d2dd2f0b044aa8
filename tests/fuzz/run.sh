#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run.sh BINARY [SECONDS]: one libFuzzer target, as `make check-fuzz` and
# tests/unit/fuzz.sh run it.  Replays every input kept in
# tests/fuzz/regress/<target>/, then fuzzes SECONDS (default 10) over a
# fresh copy of tests/fuzz/corpus/<target>/ in BINARY's directory
# (work/<target>/), with -timeout=5 per input.  Prints what it did, the
# "execs N" count libFuzzer reports, and for a crash the input and how to
# keep it as a regression test.  Exits with libFuzzer's status.
set -u

bin=$1 secs=${2:-10}
name=$(basename "$bin")
here=$(cd "$(dirname "$0")" && pwd)
rel=tests/fuzz
regress=$here/regress/$name
seeds=$here/corpus/$name
work=$(dirname "$bin")/work/$name
log=$work/fuzz.log

[ -x "$bin" ] || { echo "$name: $bin not built (make fuzz)"; exit 1; }
rm -rf "$work"
mkdir -p "$work/corpus" "$work/artifacts" || exit 1
[ -d "$seeds" ] && cp "$seeds"/* "$work/corpus/" 2>/dev/null

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

# Every regression input must run clean.
kept=()
if [ -d "$regress" ]; then
	for f in "$regress"/*; do
		[ -f "$f" ] && [[ $(basename "$f") != README* ]] && kept+=("$f")
	done
fi
if [ ${#kept[@]} -gt 0 ]; then
	if ! "$bin" "${kept[@]}" >"$work/regress.log" 2>&1; then
		echo "$name: a regression input fails again:"
		grep -E '^(Running|==[0-9]+==|SUMMARY|.*check failed)' \
			"$work/regress.log" | tail -n 20
		tail -n 40 "$work/regress.log"
		exit 1
	fi
fi
echo "$name: replayed ${#kept[@]} regression inputs from $rel/regress/$name/"

"$bin" -max_total_time="$secs" -timeout=5 -max_len=8192 \
	-print_final_stats=1 -artifact_prefix="$work/artifacts/" \
	"$work/corpus" >"$log" 2>&1
rc=$?

execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -n1)
echo "$name: execs ${execs:-?} in $secs s, ${cov:-cov: ?}," \
	"corpus $(find "$work/corpus" -type f | wc -l) inputs, exit $rc"
if [ $rc != 0 ]; then
	tail -n 60 "$log"
	for f in "$work/artifacts"/*; do
		[ -f "$f" ] || continue
		echo "$name: crash input $f"
		echo "$name: keep it: cp '$f' $rel/regress/$name/"
	done
fi
exit $rc
