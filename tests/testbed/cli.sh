#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# r2cc-testbed's verbs on a running testbed: exec semantics (exit status,
# streams, stdin, cwd, timeout), shaping, and clear errors for bad input.
. "$(dirname "$0")/../lib/tap.sh"
tb_require 2
plan_later

# exec: exit status, stdout/stderr kept apart, stdin, cwd, the build tree.
tb exec node0 -- true; is $? 0 "exec true exits 0"
tb exec node0 -- false; is $? 1 "exec false exits 1"
tb exec node0 -- sh -c 'exit 42'; is $? 42 "exec propagates exit status 42"
tb exec node0 -- sh -c 'kill -TERM $$'; is $? 143 "a command killed by SIGTERM exits 143"
out=$(tb exec node0 -- sh -c 'echo out; echo err >&2' 2>/dev/null)
is "$out" out "stdout is streamed to stdout"
err=$(tb exec node0 -- sh -c 'echo out; echo err >&2' 2>&1 >/dev/null)
is "$err" err "stderr is streamed to stderr"
is "$(echo hello | tb exec -i node0 -- cat)" hello "exec -i forwards stdin"
is "$(tb exec node0 -- cat </dev/zero | wc -c)" 0 "without -i stdin is empty"
is "$(tb exec node1 -- hostname)" node1 "node1 is node1"
is "$(cd "$R2CC_REPO" && tb exec node0 -- pwd)" "$R2CC_REPO" \
	"exec runs in the caller's directory"
ok "$(tb exec node0 -- test -x "$R2CC_BUILD/tools/r2cc-tb-agent" && echo 1)" \
	"the build tree is visible at the same path"
tb exec node0 -- /nonexistent/cmd 2>/dev/null; is $? 127 "a missing command exits 127"
big=$(tb exec node0 -- head -c 3000000 /dev/zero | wc -c)
is "$big" 3000000 "3 MB of output arrive whole"
start=$(date +%s)
tb exec --timeout 1 node0 -- sleep 30 2>/dev/null; rc=$?
is "$rc" 124 "exec --timeout 1 ends a long command with 124"
ok "$([ $(($(date +%s) - start)) -lt 10 ] && echo 1)" "and does so promptly"
is "$(tb exec node0 -- sh -c 'pgrep -c -x sleep || true')" 0 \
	"the timed-out command is killed in the node"

# shaping with tc netem inside the node
run_ok "shape node0 1 --rate 30mbit --delay 1ms --loss 0.5" \
	tb shape node0 1 --rate 30mbit --delay 1ms --loss 0.5
q=$(tb exec node0 -- tc qdisc show dev eth1)
ok "$(grep -q 'netem.*delay 1ms.*loss 0.5%.*rate 30Mbit' <<<"$q" && echo 1)" \
	"eth1 has the netem qdisc"
diag "$q"
run_ok "shape node0 1 --clear" tb shape node0 1 --clear
ok "$(tb exec node0 -- tc qdisc show dev eth1 | grep -q netem || echo 1)" \
	"netem is gone after --clear"

# bad input: a clear error and a non-zero status, nothing changed
run_fails "a second up is refused" "already up" tb up
run_ok "health: every node running" tb health
run_fails "unknown node" "no node9" tb exec node9 -- true
run_fails "malformed node" "bad node" tb exec nodeX -- true
run_fails "exec without a command" "no command" tb exec node0 --
run_fails "NIC out of range" "no NIC 7" tb link node0 7 down
run_fails "malformed NIC" "bad NIC" tb link node0 -1 down
run_fails "bad link state" "invalid choice" tb link node0 0 sideways
run_fails "blackhole needs on|off" "invalid choice" tb blackhole node0 0 maybe
run_fails "shape without options" "give --rate" tb shape node0 0
run_fails "shape with a bad rate" "bad --rate" tb shape node0 0 --rate fast
run_fails "shape with a bad delay" "bad --delay" tb shape node0 0 --delay 5
run_fails "shape with loss over 100" "0..100" tb shape node0 0 --loss 200
run_fails "shape --clear with options" "no other option" \
	tb shape node0 0 --clear --rate 1mbit
run_fails "unknown verb" "invalid choice" tb frobnicate
run_fails "console of a node that does not exist" "no node5" tb console node5
for verb in up exec link blackhole shape kill status console down; do
	out=$(tb "$verb" --help 2>&1)
	ok "$([ $? = 0 ] && grep -q '^usage: r2cc-testbed' <<<"$out" && echo 1)" \
		"$verb --help"
done
ok "$(tb console node0 --lines 200 | grep -q 'r2cc-node: node0 ready' && echo 1)" \
	"console shows node0's boot log"
is "$(tb status | grep -c ': running')" "$TB_NODES" "status lists every node running"

# tb-rsh: one node runs a command in another through the other's agent.
RSH=$R2CC_REPO/tools/testbed/guest/tb-rsh
is "$(tb_exec node0 "$RSH" -x 198.19.1.2 'echo $(hostname)' 2>&1)" node1 \
	"tb-rsh from node0 runs a shell command in node1 (options ignored)"
tb_exec node0 "$RSH" 198.19.1.2 'exit 7' >/dev/null 2>&1
is "$?" 7 "tb-rsh exits with the remote command's status"
out=$(tb_exec node0 "$RSH" 198.19.1.2 2>&1)
ok "$([ $? = 2 ] && grep -q '^tb-rsh ' <<<"$out" && echo 1)" \
	"tb-rsh without a command: usage, exit 2"
out=$(tb_exec node0 "$RSH" 198.19.1.99 true 2>&1)
ok "$([ $? = 255 ] && grep -q '198.19.1.99' <<<"$out" && echo 1)" \
	"tb-rsh to an address with no agent: a message, exit 255 ($out)"
tb_finish
