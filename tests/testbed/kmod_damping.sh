#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Flap damping (damping_ms): a down is reported at once, an up only after
# the port stayed up for damping_ms; a flap inside the window is counted,
# not reported.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later

# Changes 1.2 s apart: linkwatch reports a carrier change at most about
# once a second, so a faster bounce may never reach the module at all.
run_ok "insmod damping_ms=4000" kmod_load node0 damping_ms=4000
out=$(mktemp)
tb_exec node0 "$KTEST/watch" -t 12000 >"$out" 2>&1 &
wpid=$!
for ((t = 0; t < 100; t++)); do grep -q ready "$out" && break; sleep 0.1; done
t0=$(date +%s%N)
tb link node0 0 down
sleep 1.2
tb link node0 0 up        # comes back ...
sleep 1.2
tb link node0 0 down      # ... and flaps down within the window
sleep 1.2
tb link node0 0 up        # then stays up
wait "$wpid"
diag "$(cat "$out")"
kinds=$(awk '$1 ~ /^[0-9]+$/ {print $2}' "$out" | tr '\n' ' ')
is "$kinds" "PORT_DOWN PORT_UP " "one DOWN, then one UP"
flags=$(awk '$2 == "PORT_UP" {print $8}' "$out")
is "$flags" 2 "the UP is flagged damped"
s=/sys/kernel/r2cc/devices/rxe0/ports/1
ok "$([ "$(tb_exec node0 cat $s/flaps)" -ge 1 ] && echo 1)" \
	"sysfs flaps counts the suppressed up ($(tb_exec node0 cat $s/flaps))"
is "$(tb_exec node0 cat $s/state)" ACTIVE "port reported ACTIVE at the end"

# damping_ms set to 0 during a hold releases the held up at once.
tb_exec node0 sh -c 'echo 60000 > /sys/module/r2cc/parameters/damping_ms'
tb_exec node0 "$KTEST/watch" -n 2 -t 8000 >"$out" 2>&1 &
wpid=$!
for ((t = 0; t < 100; t++)); do grep -q ready "$out" && break; sleep 0.1; done
tb link node0 0 down
sleep 1.2
tb link node0 0 up
sleep 1.5
is "$(tb_exec node0 cat $s/state)" DOWN "an up is held (damping_ms=60000)"
tb_exec node0 sh -c 'echo 0 > /sys/module/r2cc/parameters/damping_ms'
for ((t = 0; t < 30; t++)); do
	[ "$(tb_exec node0 cat $s/state)" = ACTIVE ] && break; sleep 0.1
done
is "$(tb_exec node0 cat $s/state)" ACTIVE "damping_ms=0 releases it at once"
wait "$wpid"
diag "$(cat "$out")"
is "$(awk '$2 == "PORT_UP" {print $8}' "$out")" 2 "the released UP is flagged damped"
run_fails "damping_ms above 600000 is refused" "error" \
	tb_exec node0 sh -c 'echo 600001 > /sys/module/r2cc/parameters/damping_ms'

# Damping off: every down/up cycle still counts as a flap.
f0=$(tb_exec node0 cat $s/flaps)
tb link node0 0 down
sleep 1.2
tb link node0 0 up
for ((t = 0; t < 30; t++)); do
	[ "$(tb_exec node0 cat $s/state)" = ACTIVE ] && break; sleep 0.1
done
is "$(($(tb_exec node0 cat $s/flaps) - f0))" 1 "with damping off a down/up cycle is a flap"
run_ok "rmmod" kmod_unload node0
rm -f "$out"
tb_finish
