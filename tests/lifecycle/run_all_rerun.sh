#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tests/run-all when the testbed breaks under a test file (see
# tests/lib/break_once.sh for how it is broken):
#   - a node's kernel panics with no r2cc.ko frame in the report: the file
#     runs once more on a fresh testbed, and only its re-run counts;
#   - a node vanishes without a report: the file fails, no re-run;
#   - a rail stops carrying frames with no testbed fault set: re-run;
#   - the file leaves a black hole set: it fails, no re-run;
#   - a node's kernel panics again during a re-run: the re-run's
#     failures count, and the testbed comes back for the files left.
# Needs the testbed down when it starts (run-all brings its own).
# R2CC_RERUN_CASES picks the scenarios (default "crash blackhole", a
# re-run and a refusal; scripts/check-full.sh runs all five).
. "$(dirname "$0")/../lib/tap.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root"
tb status >/dev/null 2>&1 && skip_all "a testbed is already up"
plan_later

work=$(mktemp -d /tmp/r2cc-rerun.XXXXXX)
trap 'rm -rf "$work"' EXIT

# run_all HOW [TIMES [FILES]]: run-all over FILES (tests/lib/break_once.sh)
# on 6.1, the first TIMES (1) runs of break_once.sh breaking the testbed
# as HOW says; its output in $out, its exit status in $rc.
run_all() {
	out=$work/$1$2.out
	R2CC_BREAK_ONCE=$work/$1$2.mark R2CC_BREAK_HOW=$1 \
		R2CC_BREAK_TIMES=${2:-1} \
		"$R2CC_REPO/tests/run-all" --testbed-only --kernels 6.1 \
		--tests "${3:-tests/lib/break_once.sh}" >"$out" 2>&1
	rc=$?
}

# has HOW PATTERN NAME: a test point that $out has a line matching PATTERN.
has() {
	grep -q -- "$2" "$out"
	ok "$([ $? = 0 ] && echo 1)" "$1: $3"
}
hasnt() {
	grep -q -- "$2" "$out"
	ok "$([ $? != 0 ] && echo 1)" "$1: $3"
}

cases=" ${R2CC_RERUN_CASES:-crash blackhole} "
want() { [[ $cases == *" $1 "* ]]; }

if want crash; then
run_all crash
is "$rc" 0 "panic outside r2cc.ko: run-all passes on the re-run"
has panic 'sysrq triggered crash' "the kernel's report is printed"
has panic 'r2cc.ko not in the stack' "classified as outside r2cc.ko"
has panic '^RERUN .*break_once.sh re-run after' "the summary names the file"
is "$(grep -c '^testbed up:' "$out")" 2 \
	"panic: the testbed was brought up again for the re-run"
# Each run is 3 test points: its own and two kernel-log checks.
has panic '^3 passed, 0 failed' "only the re-run is counted"
[ $_tap_failed = 0 ] || diag "$(cat "$out")"
fi

if want twice; then
# The file twice: its first run and its re-run each panic node1, and the
# second time through it passes.
run_all crash 2 "tests/lib/break_once.sh tests/lib/break_once.sh"
is "$rc" 1 "a re-run that panics too: run-all fails"
is "$(grep -c '^RERUN' "$out")" 1 "re-run once, not twice"
is "$(grep -c '^testbed up:' "$out")" 3 \
	"twice: the testbed came back for the re-run and for the file after"
# run 2 fails its check that node1 still runs; run 3 passes all three
has twice '^5 passed, 1 failed' "the re-run's failure counts"
[ $_tap_failed = 0 ] || diag "$(cat "$out")"
fi

if want poweroff; then
run_all poweroff
is "$rc" 1 "power-off with no report: run-all fails"
has power-off 'no kernel failure in its console' "no report found"
hasnt power-off '^RERUN' "not re-run"
has power-off 'node1: its kernel is still running' "the file fails"
[ $_tap_failed = 0 ] || diag "$(cat "$out")"
fi

if want rail; then
run_all rail
is "$rc" 0 "a rail that stopped: run-all passes on the re-run"
has rail 'rail1: node0 -> node1 (198.18.1.2): no reply' "the dead rail named"
has rail 'the rail itself stopped carrying frames' "no fault of a test set"
has rail '^RERUN .*re-run after: .*no reply to ping' "re-run, and why"
has rail '^3 passed, 0 failed' "only the re-run is counted"
[ $_tap_failed = 0 ] || diag "$(cat "$out")"
fi

if want blackhole; then
run_all blackhole
is "$rc" 1 "a black hole left set: run-all fails"
has blackhole 'rail1: node1 is black-holed (a test left it on)' "named"
has blackhole 'break_once.sh left the testbed with a fault set' "blamed"
hasnt blackhole '^RERUN' "not re-run"
has blackhole '^3 passed, 1 failed' "counted as one failure more"
is "$(grep -c '^testbed up:' "$out")" 1 \
	"blackhole: no fresh testbed with no file left to run"
[ $_tap_failed = 0 ] || diag "$(cat "$out")"
fi
tb status >/dev/null 2>&1
ok "$([ $? != 0 ] && echo 1)" "no testbed left up"
done_testing
