#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A dead or unqueryable device is never shown healthy: a fatal device
# reports every port DOWN (reason fatal), ports whose queries keep failing
# go DOWN (reason query) and come back once queries answer again; a
# device that goes and comes back gets a new state page incarnation.  A
# real fatal (IB_EVENT_DEVICE_FATAL handed to the module's event handler
# through debugfs, as the driver would: rxe never raises one) keeps its
# ports DOWN for reason fatal when their queries then fail, counting no
# flap.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later

s=/sys/kernel/r2cc/devices/rxe0/ports/1
run_ok "insmod" kmod_load node0
dev=$(tb_exec node0 cat /sys/kernel/r2cc/devices/rxe0/index)
out=$(mktemp)

# watch_for SECONDS CMD...: watch records while CMD runs in the node.
watch_for() {
	local t=$1
	shift
	tb_exec node0 "$KTEST/watch" -t $((t * 1000)) >"$out" 2>&1 &
	local w=$!
	for ((i = 0; i < 100; i++)); do grep -q ready "$out" && break; sleep 0.1; done
	tb_exec node0 "$@"
	wait "$w"
}

# Injected fatal: the DEVICE_FATAL record, then every port DOWN.
watch_for 2 "$KTEST/inject" rxe0 0 fatal
diag "$(cat "$out")"
is "$(awk '$1 ~ /^[0-9]+$/ {print $2}' "$out" | tr '\n' ' ')" \
	"DEVICE_FATAL PORT_DOWN " "fatal: DEVICE_FATAL, then the port DOWN"
is "$(awk '$2 == "PORT_DOWN" {print $13}' "$out")" 1 "the DOWN says reason 1 (fatal)"
is "$(tb_exec node0 cat $s/state) $(tb_exec node0 cat $s/reason)" "DOWN 1" \
	"sysfs: DOWN, reason fatal"
run_ok "inject up clears the drill" tb_exec node0 "$KTEST/inject" rxe0 1 up
is "$(tb_exec node0 cat $s/state) $(tb_exec node0 cat $s/reason)" "ACTIVE 0" \
	"sysfs: ACTIVE, reason none"

# Failing queries: 3 in a row make the port DOWN, then it recovers.
tb_exec node0 sh -c 'mountpoint -q /sys/kernel/debug ||
	mount -t debugfs none /sys/kernel/debug'
watch_for 6 sh -c "echo '$dev 1 4' > /sys/kernel/debug/r2cc/fail_query"
diag "$(cat "$out")"
is "$(awk '$1 ~ /^[0-9]+$/ {print $2 "/" $13}' "$out" | tr '\n' ' ')" \
	"PORT_DOWN/2 PORT_UP/0 " \
	"4 failed queries: DOWN (reason query), then UP once one answers"
# fail_write LINE [FILE]: the errno name a write of LINE to fail_query
# (or debugfs FILE) gets.
fail_write() {
	tb_exec node0 python3 -c "
import errno, os, sys
fd = os.open('/sys/kernel/debug/r2cc/${2:-fail_query}', os.O_WRONLY)
try:
    os.write(fd, sys.argv[1].encode()); print('ok')
except OSError as e:
    print(errno.errorcode[e.errno])" "$1"
}
is "$(fail_write "$dev 1")" EINVAL "fail_query: a short line is EINVAL"
is "$(fail_write "$dev 1 1000000")" EINVAL "fail_query: a huge count is EINVAL"
is "$(fail_write "$dev 9 1")" EINVAL "fail_query: a port out of range is EINVAL"
is "$(fail_write "99999 1 1")" ENODEV "fail_query: an unknown device is ENODEV"
is "$(fail_write "$(head -c 100 /dev/zero | tr '\0' 1)")" EINVAL \
	"fail_query: a line longer than the buffer is EINVAL"

# A device that goes and comes back: a new incarnation for its slot.
s1=/sys/kernel/r2cc/devices/rxe1/ports/1
inc0=$(tb_exec node0 cat $s1/incarnation)
watch_for 3 sh -c 'rdma link delete rxe1 && rdma link add rxe1 type rxe netdev eth1'
diag "$(cat "$out")"
is "$(awk '$2 == "PORT_DOWN" && $3 == "rxe1" {print $6 "/" $13}' "$out")" \
	"0/3" "rxe1 removed: its port goes to NOP, reason removed"
inc1=$(tb_exec node0 cat $s1/incarnation)
ok "$([ "$inc1" -gt "$inc0" ] && echo 1)" \
	"the new rxe1's incarnation $inc1 is not the old one's ($inc0)"
run_ok "state page: every valid slot has its own incarnation" \
	tb_exec node0 "$KTEST/state_page"

# The real fatal path, last: rxe0 stays fatal until the module goes.
flaps0=$(tb_exec node0 cat $s/flaps)
watch_for 2 sh -c "echo $dev > /sys/kernel/debug/r2cc/fatal"
diag "$(cat "$out")"
is "$(awk '$1 ~ /^[0-9]+$/ && $3 == "rxe0" {print $2 "/" $8 "/" $13}' "$out" | tr '\n' ' ')" \
	"DEVICE_FATAL/0/0 PORT_DOWN/0/1 " \
	"real fatal: DEVICE_FATAL (not flagged injected), the port DOWN for reason fatal"
is "$(tb_exec node0 cat $s/state) $(tb_exec node0 cat $s/reason)" "DOWN 1" \
	"sysfs: DOWN, reason fatal"
ok "$(tb_exec node0 "$KTEST/inject" rxe0 1 up >/dev/null 2>&1 || echo 1)" \
	"an injected up is refused: a dead device's port is never shown up"
# Its queries fail from now on, as a dead device's do: past the three
# failures (100 ms apart) that make a live port DOWN for reason query.
gen0=$(tb_exec node0 cat $s/generation)
watch_for 2 sh -c "echo '$dev 1 1000' > /sys/kernel/debug/r2cc/fail_query"
diag "$(cat "$out")"
is "$(awk '$1 ~ /^[0-9]+$/ && $3 == "rxe0" {print $2}' "$out" | wc -l)" 0 \
	"queries of the fatal device's port failing: no record"
is "$(tb_exec node0 cat $s/state) $(tb_exec node0 cat $s/reason)" "DOWN 1" \
	"sysfs: still DOWN for reason fatal, not query"
is "$(tb_exec node0 cat $s/generation)" "$gen0" "the port's generation did not move"
is "$(tb_exec node0 cat $s/flaps)" "$flaps0" "no flap counted ($flaps0 before)"
tb_exec node0 sh -c "echo '$dev 1 0' > /sys/kernel/debug/r2cc/fail_query"
is "$(fail_write x fatal)" EINVAL "debugfs fatal: a line that is no number is EINVAL"
is "$(fail_write -1 fatal)" EINVAL "debugfs fatal: a negative index is EINVAL"
is "$(fail_write 99999 fatal)" ENODEV "debugfs fatal: an unknown device is ENODEV"
run_ok "rmmod" kmod_unload node0
rm -f "$out"
tb_finish
