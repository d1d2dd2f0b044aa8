#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The kselftest collection `make install-kselftest` installs, run in a node
# as an operator runs it on a real one: with r2cc.ko loaded every test
# passes but overflow, which skips without a small queue_len and passes
# with one; without r2cc.ko every module test skips, the library's
# loopback over each NIC still passes, and the run passes, but not with a
# NIC's port down; -t picks one, -l lists them, a bad -t is refused.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later
d=$(mktemp -d "$R2CC_BUILD/tests/kselftest.XXXXXX")
trap 'rm -rf "$d"; tb_finish' EXIT
run_ok "make install-kselftest" make -s -C "$R2CC_REPO" install-kselftest \
	DESTDIR="$d" PREFIX=/usr
run=$d/usr/lib/r2cc/kselftest/run_kselftest.sh

is "$(tb_exec node0 "$run" -l | wc -l)" 6 "-l lists six tests"
run_ok "insmod r2cc.ko" kmod_load node0
out=$(tb_exec node0 "$run")
is "$?" 0 "the collection passes with r2cc.ko loaded"
is "$(grep -c '^ok [0-9]* selftests: r2cc: [a-z_]*$' <<<"$out")" 5 \
	"five tests pass"
grep -q '^ok 6 selftests: r2cc: lib_loopback$' <<<"$out"
ok "$([ $? = 0 ] && echo 1)" "lib_loopback: libr2cc to itself over each of the node's NICs"
grep -q '^ok 5 selftests: r2cc: overflow # SKIP' <<<"$out"
ok "$([ $? = 0 ] && echo 1)" "overflow skips with the default queue_len"
grep -q '^1\.\.6$' <<<"$out"
ok "$([ $? = 0 ] && echo 1)" "TAP plan 1..6"
[ $_tap_failed = 0 ] || diag "$out"

run_ok "insmod queue_len=8" kmod_load node0 queue_len=8
out=$(tb_exec node0 "$run" -t r2cc:overflow)
ok "$([ $? = 0 ] && grep -q '^ok 1 selftests: r2cc: overflow$' <<<"$out" && echo 1)" \
	"-t r2cc:overflow passes with queue_len=8"
run_ok "rmmod r2cc" kmod_unload node0

out=$(tb_exec node0 "$run")
is "$?" 0 "without r2cc.ko the run passes"
is "$(grep -c '# SKIP$' <<<"$out")" 5 "and every module test skips"
grep -q '^ok 6 selftests: r2cc: lib_loopback$' <<<"$out"
ok "$([ $? = 0 ] && echo 1)" "but lib_loopback passes: the library needs no r2cc.ko"
# a NIC whose port is down: its bytes would go by TCP, and that fails
tb link node0 1 down
sleep 2
out=$(tb_exec node0 "$run" -t r2cc:lib_loopback 2>&1)
rc=$?
tb link node0 1 up
ok "$([ "$rc" = 1 ] && grep -q '^not ok 1 selftests: r2cc: lib_loopback' <<<"$out" && echo 1)" \
	"lib_loopback fails with NIC 1's port down (exit $rc)"
[ $_tap_failed = 0 ] || diag "$out"
out=$(tb_exec node0 "$run" -t r2cc:nope 2>&1)
ok "$([ $? = 2 ] && grep -q 'no test r2cc:nope' <<<"$out" && echo 1)" \
	"-t with an unknown test: exit 2"
