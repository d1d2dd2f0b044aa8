#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tests/run-all after a node's kernel dies during a test file: with a
# kernel failure report that names no r2cc.ko frame (a sysrq panic) the
# file runs once more on a fresh testbed and its re-run counts; a node
# that vanished without a report (sysrq power-off) fails the file, no
# re-run.  Needs the testbed down when it starts (run-all brings its own).
. "$(dirname "$0")/../lib/tap.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root"
tb status >/dev/null 2>&1 && skip_all "a testbed is already up"
plan_later

work=$(mktemp -d /tmp/r2cc-rerun.XXXXXX)
trap 'rm -rf "$work"' EXIT

# run_all HOW: run-all over tests/lib/panic_once.sh on 6.1; its output in
# $work/HOW.out, its exit status in $rc.
run_all() {
	R2CC_PANIC_ONCE=$work/$1.mark R2CC_PANIC_HOW=$1 \
		"$R2CC_REPO/tests/run-all" --testbed-only --kernels 6.1 \
		--tests tests/lib/panic_once.sh >"$work/$1.out" 2>&1
	rc=$?
}

run_all crash
out=$work/crash.out
is "$rc" 0 "panic outside r2cc.ko: run-all passes on the re-run"
grep -q 'sysrq triggered crash' "$out"
ok "$([ $? = 0 ] && echo 1)" "panic: the kernel's report is printed"
grep -q 'r2cc.ko not in the stack' "$out"
ok "$([ $? = 0 ] && echo 1)" "panic: classified as outside r2cc.ko"
grep -q '^RERUN .*panic_once.sh re-run after' "$out"
ok "$([ $? = 0 ] && echo 1)" "panic: the summary names the re-run file"
is "$(grep -c '^testbed up:' "$out")" 2 \
	"panic: the testbed was brought up again for the re-run"
# Each run is 3 test points: its own and two kernel-log checks.
grep -q '^3 passed, 0 failed' "$out"
ok "$([ $? = 0 ] && echo 1)" "panic: only the re-run is counted"
[ $_tap_failed = 0 ] || diag "$(cat "$out")"

run_all poweroff
out=$work/poweroff.out
is "$rc" 1 "power-off with no report: run-all fails"
grep -q 'no kernel failure in its console' "$out"
ok "$([ $? = 0 ] && echo 1)" "power-off: no report found"
grep -q '^RERUN' "$out"
ok "$([ $? != 0 ] && echo 1)" "power-off: not re-run"
grep -q 'node1: its kernel is still running' "$out"
ok "$([ $? = 0 ] && echo 1)" "power-off: the file fails on the dead node"
tb status >/dev/null 2>&1
ok "$([ $? != 0 ] && echo 1)" "no testbed left up"
[ $_tap_failed = 0 ] || diag "$(cat "$out")"
done_testing
