# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# TAP 13 for shell tests, kselftest conventions: exit 0 pass, 1 fail,
# 4 skip.  Testbed tests also get tb/tb_exec helpers, and tb_finish scans
# (and clears) the kernel log of every node for BUG/WARNING/Oops/lockdep
# reports, and programs killed by a fault, after the test, failing it on
# any hit.

R2CC_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
R2CC_BUILD=${BUILD:-$R2CC_REPO/build}
TESTBED=$R2CC_REPO/tools/testbed/r2cc-testbed
KSFT_PASS=0 KSFT_FAIL=1 KSFT_SKIP=4

_tap_n=0 _tap_failed=0 _tap_planned=

plan() {
	_tap_planned=$1
	echo "TAP version 13"
	echo "1..$1"
}

# No plan up front (the number of checks depends on the testbed's size);
# done_testing prints it at the end.
plan_later() {
	echo "TAP version 13"
}

diag() {
	local line
	while IFS= read -r line; do echo "# $line"; done <<<"$*"
}

# ok COND DESCRIPTION: COND is a non-empty string for success.
ok() {
	_tap_n=$((_tap_n + 1))
	if [ -n "$1" ] && [ "$1" != 0 ]; then
		echo "ok $_tap_n - $2"
	else
		echo "not ok $_tap_n - $2"
		_tap_failed=$((_tap_failed + 1))
	fi
}

pass() { ok 1 "$1"; }
# skip REASON: a test point that could not be judged this run, and why.
skip() {
	_tap_n=$((_tap_n + 1))
	echo "ok $_tap_n # SKIP $1"
}
fail() { ok "" "$1"; }

# is GOT WANT DESCRIPTION
is() {
	ok "$([ "$1" = "$2" ] && echo 1)" "$3"
	[ "$1" = "$2" ] || diag "got '$1', want '$2'"
}

# run_ok DESCRIPTION CMD...: passes when CMD exits 0; shows its output if not.
run_ok() {
	local desc=$1 out rc
	shift
	out=$("$@" 2>&1)
	rc=$?
	ok "$([ $rc = 0 ] && echo 1)" "$desc"
	[ $rc = 0 ] || diag "exit $rc: $out"
	return $rc
}

# run_fails DESCRIPTION PATTERN CMD...: passes when CMD exits non-zero and
# its output matches PATTERN (an extended regexp).
run_fails() {
	local desc=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	ok "$([ $rc != 0 ] && grep -Eq -- "$pat" <<<"$out" && echo 1)" "$desc"
	{ [ $rc != 0 ] && grep -Eq -- "$pat" <<<"$out"; } ||
		diag "exit $rc, want non-zero matching /$pat/: $out"
}

skip_all() {
	echo "TAP version 13"
	echo "1..0 # SKIP $*"
	exit $KSFT_SKIP
}

done_testing() {
	[ -z "$_tap_planned" ] && echo "1..$_tap_n"
	if [ -n "$_tap_planned" ] && [ "$_tap_planned" != "$_tap_n" ]; then
		diag "planned $_tap_planned tests but ran $_tap_n"
		exit $KSFT_FAIL
	fi
	[ $_tap_failed = 0 ] && exit $KSFT_PASS
	exit $KSFT_FAIL
}

# ------------------------------------------------------------ testbed

tb() { "$TESTBED" "$@"; }

# tb_exec NODE CMD...: run in a node with a generous timeout.  With
# $R2CC_TEST_REPAIR set (fenced or staged), every command runs with
# R2CC_REPAIR set to it: the whole suite under one repair mode
# (R2CC_TEST_REPAIR=staged tests/run-all --testbed-only).
tb_exec() {
	local node=$1
	shift
	"$TESTBED" exec --timeout "${TB_TIMEOUT:-120}" --cwd / "$node" -- \
		${R2CC_TEST_REPAIR:+env R2CC_REPAIR=$R2CC_TEST_REPAIR} "$@"
}

# Sets TB_NODES, TB_NICS, TB_KVER from the running testbed, or skips.
tb_require() {
	local st
	st=$("$TESTBED" status 2>/dev/null) ||
		skip_all "testbed is not up (tools/testbed/r2cc-testbed up)"
	TB_KVER=$(sed -n '1s/^kernel \([^,]*\),.*/\1/p' <<<"$st")
	TB_NODES=$(sed -n '1s/.*, \([0-9]*\) nodes x.*/\1/p' <<<"$st")
	TB_NICS=$(sed -n '1s/.* nodes x \([0-9]*\) NICs.*/\1/p' <<<"$st")
	[ "${1:-1}" -le "$TB_NODES" ] ||
		skip_all "needs $1 nodes, the testbed has $TB_NODES"
	trap tb_finish EXIT
}

_tb_finished=
# Scan every live node's kernel log, then print the plan and exit.
tb_finish() {
	local rc=$? i log hits
	[ -n "$_tb_finished" ] && return
	_tb_finished=1
	trap - EXIT
	for ((i = 0; i < TB_NODES; i++)); do
		# A node that died (not one killed on purpose) fails the test.
		if "$TESTBED" status 2>/dev/null | grep -q "^node$i: exited"; then
			fail "node$i: its kernel is still running"
			diag "$("$TESTBED" health 2>&1 | head -n 40)"
			continue
		fi
		"$TESTBED" status 2>/dev/null | grep -q "^node$i: running" ||
			continue
		log=$(tb_exec "node$i" dmesg -c 2>&1)
		if [ $? != 0 ]; then
			fail "node$i: kernel log readable"
			diag "$log"
			continue
		fi
		# "segfault at": a program of ours crashed in the node (the
		# kernel reports unhandled signals), which no test expects.
		hits=$(grep -E 'BUG:|WARNING:|Oops|general protection|possible (circular|recursive) locking|lockdep|INFO: task .* blocked|Call Trace|segfault at' <<<"$log")
		ok "$([ -z "$hits" ] && echo 1)" "node$i: kernel log clean"
		[ -z "$hits" ] || diag "$log"
	done
	if [ -z "$_tap_planned" ] && [ $rc != 0 ] && [ $_tap_failed = 0 ]; then
		fail "test script exited $rc"
	fi
	done_testing
}

# kmod_load NODE [PARAM=VALUE...]: insmod this kernel's r2cc.ko (reloading
# it if it is there) and wait for /dev/r2cc.
kmod_load() {
	local node=$1
	shift
	tb_exec "$node" sh -c 'rmmod r2cc 2>/dev/null; true'
	tb_exec "$node" insmod "$R2CC_BUILD/kmod/$TB_KVER/r2cc.ko" "$@" ||
		return 1
	tb_exec "$node" sh -c 'for i in $(seq 50); do
		[ -c /dev/r2cc ] && exit 0; sleep 0.1; done; exit 1'
}

kmod_unload() {
	tb_exec "$1" rmmod r2cc
}

# In-node test programs.
KTEST=$R2CC_BUILD/tests/kmod
