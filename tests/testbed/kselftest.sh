#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The kselftest collection `make install-kselftest` installs, run in a node
# as an operator runs it on a real one: with r2cc.ko loaded every test
# passes but overflow, which skips without a small queue_len and passes
# with one; without r2cc.ko every module test skips, the library's
# loopback over each NIC still passes, and the run passes, but not with a
# NIC's port down; -t picks one, -l lists them, a bad -t is refused.  With
# the node's devices named otherwise than rxe*, the tests find them
# themselves; -d names one, -a takes every ACTIVE port, and a device named
# but absent fails the test.
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

# A node whose devices are not named rxe*, as on a real one (mlx5_0 ...):
# node0's two are made again as r2t0 and r2t1.  Every test finds them
# itself and passes (none skips for a name it does not know); -d names
# one, -a runs on every ACTIVE port, and a device that is not there fails
# the test instead of skipping it.
rename() {	# FROM TO: each of node0's NICs' device FROMk becomes TOk
	tb_exec node0 bash -c "for k in \$(seq 0 $((TB_NICS - 1))); do
		rdma link delete $1\$k && rdma link add $2\$k type rxe netdev eth\$k ||
			exit 1
	done"
}
run_ok "node0's devices named r2t0..r2t$((TB_NICS - 1))" rename rxe r2t
run_ok "insmod r2cc.ko" kmod_load node0
out=$(tb_exec node0 "$run")
rc=$?
ok "$([ "$rc" = 0 ] &&
	[ "$(grep -c '^ok [0-9]* selftests: r2cc: [a-z_]*$' <<<"$out")" = 5 ] &&
	grep -q '^# # device r2t0 port 1 ' <<<"$out" && echo 1)" \
	"no rxe0: five tests pass on r2t0 port 1, which they found (exit $rc)"
ok "$([ "$(grep -c '^ok [0-9]* selftests: .* # SKIP$' <<<"$out")" = 1 ] &&
	grep -q '^ok 5 selftests: r2cc: overflow # SKIP' <<<"$out" && echo 1)" \
	"only overflow skips (for its queue_len), none for a device name"
[ $_tap_failed = 0 ] || diag "$out"
out=$(tb_exec node0 "$run" -d r2t1 -t r2cc:inject_events -t r2cc:ioctl_args)
ok "$([ $? = 0 ] && grep -q '^1\.\.2$' <<<"$out" &&
	grep -q '^ok [12] selftests: r2cc: inject_events on r2t1$' <<<"$out" &&
	grep -q '^ok [12] selftests: r2cc: ioctl_args on r2t1$' <<<"$out" &&
	grep -q '^# # device r2t1 port 1 ' <<<"$out" && echo 1)" \
	"-d r2t1: the tests run on the device named"
out=$(tb_exec node0 "$run" -a -t r2cc:genl)
ok "$([ $? = 0 ] && grep -q "^1\.\.$TB_NICS\$" <<<"$out" &&
	[ "$(grep -c '^ok [0-9]* selftests: r2cc: genl on r2t[0-9]*:1$' <<<"$out")" = "$TB_NICS" ] &&
	echo 1)" "-a: genl runs on each of the $TB_NICS ACTIVE ports"
out=$(tb_exec node0 "$run" -d nosuch0 -t r2cc:ioctl_args 2>&1)
ok "$([ $? = 1 ] && grep -q '^not ok 1 selftests: r2cc: ioctl_args on nosuch0' <<<"$out" &&
	grep -q 'R2CC_TEST_DEV=nosuch0: not a device' <<<"$out" && echo 1)" \
	"-d with a device that is not there: the test fails, it does not skip"
[ $_tap_failed = 0 ] || diag "$out"
run_ok "rmmod r2cc" kmod_unload node0
run_ok "node0's devices named rxe0..rxe$((TB_NICS - 1)) again" rename r2t rxe
