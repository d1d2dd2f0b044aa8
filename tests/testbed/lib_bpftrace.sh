#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# tools/bpftrace/r2cc-failover.bt, given the library, on a real failover:
# one timeline of a cable of the sender's rail 1 cut and restored under a
# checked stream, with r2cc.ko loaded on both nodes: the module's record
# of the port going down, the library failing the rail, locating the
# fault at this end's port, fencing it, the first re-sent chunk done, the
# port's record coming back and the rail back in service, in that order.
# Like lib_usdt.sh, on 6.1 only: rxe on 6.12 kills a guest now and then
# under a stream (Documentation/testbed.rst).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"
. "$(dirname "$0")/../lib/bpftrace.sh"
tb_require 2
[ "$TB_NICS" -ge 2 ] || skip_all "needs 2 NICs"
tb_exec node0 sh -c 'command -v bpftrace' >/dev/null ||
	skip_all "bpftrace not installed"
lib=$(readlink -f "$R2CC_BUILD/lib/libr2cc.so")
tb_exec node0 sh -c "bpftrace -l 'usdt:$lib:*'" | grep -q r2cc:rail_fail ||
	skip_all "libr2cc built without USDT probes"
plan_later

for n in node0 node1; do
	run_ok "$n: insmod r2cc.ko" kmod_load $n
done
bt=$(mktemp)
bt_start node0 '^MS ' "$R2CC_REPO/tools/bpftrace/r2cc-failover.bt" "$lib"
ok "$([ $? = 0 ] && echo 1)" "r2cc-failover.bt attached"
xfer_start "" --msgs 100 --size 1048576
run_ok "both ranks streaming" xfer_streaming
sleep 1.5
tb link node0 1 down
sleep 2
tb link node0 1 up
xfer_wait
xfer_ok "cut under r2cc-failover.bt" 100 1048576
sleep 0.5
bt_stop "$bt"
diag "$(cat "$bt")"
# step STEP PATTERN: the line number of the first such step, or 0.
step() {
	awk -v s="$1" -v p="$2" '$4 == s && $0 ~ p { print NR; f = 1; exit }
		END { if (!f) print 0 }' "$bt"
}
down=$(step port 'rxe1 port 1: state 4->1')
fail=$(step fail 'rail 1:')
loc=$(step located "rail 1: this end's port")
fence=$(step fenced 'rail 1: queue pair drained')
rep=$(step repaired 'first re-sent chunk done')
up=$(step port 'rxe1 port 1: state 1->4')
back=$(step back 'rail 1: back in service')
for s in down fail loc fence rep up back; do
	ok "$([ "${!s}" -gt 0 ] && echo 1)" "r2cc-failover.bt: the $s step is on the timeline (line ${!s})"
done
ok "$([ "$down" -lt "$fail" ] && [ "$fail" -lt "$loc" ] && [ "$up" -lt "$back" ] &&
	[ "$fail" -lt "$back" ] && echo 1)" \
	"in order: the port's record, the rail failed, located; the port back, then the rail"
ok "$(awk '$4 == "back" && / ms after it failed$/ {f = 1} END {exit !f}' "$bt" && echo 1)" \
	"the return says how long the rail was out"
xfer_cleanup

for n in node0 node1; do
	run_ok "$n: rmmod" kmod_unload $n
done
rm -f "$bt"
tb_finish
