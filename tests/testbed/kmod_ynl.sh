#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# r2cc.ko's generic netlink family driven by the kernel's own YNL tool
# (tools/net/ynl/cli.py of Linux 6.12, which make deps puts in the cache)
# from Documentation/netlink/specs/r2cc.yaml alone: the get-port dump
# lists every port sysfs has, with its index and state; get-stats gives
# sysfs's counters; a YNL subscriber of the "events" group receives, fully
# decoded, the record of a drill it injects (kind, flags, device, states);
# get-events replays the ring's last records; inject is refused without CAP_NET_ADMIN (EPERM) and with a kind out of
# range (the policy's extack says so).
# Not in make check for now (CI of 2026-12-03 saw the subscriber, which
# then had a fixed 20 s window, miss a whole pair on 6.12 under load);
# scripts/check-full.sh runs it on both kernels.
# ci: full only
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
CLI=$R2CC_BUILD/cache/ynl/tools/net/ynl/cli.py
[ -f "$CLI" ] || skip_all "no YNL in $R2CC_BUILD/cache/ynl (make deps)"
plan_later
SPEC=$R2CC_REPO/Documentation/netlink/specs/r2cc.yaml

# ynl ARGS...: the YNL CLI on node0, JSON out (the schema is checked on
# the host, tests/unit/genl_spec.py).
ynl() {
	tb_exec node0 python3 "$CLI" --spec "$SPEC" --no-schema --output-json "$@"
}

# py EXPR: a Python expression over the JSON document d on stdin.
py() {
	python3 -c 'import json, sys
d = json.loads(sys.stdin.read())
print(eval(sys.argv[1]))' "$1" 2>&1
}

run_ok "insmod r2cc.ko" kmod_load node0
idx=$(tb_exec node0 cat /sys/kernel/r2cc/devices/rxe0/index)

ports=$(ynl --dump get-port)
is "$?" 0 "--dump get-port"
diag "$ports"
nsys=$(tb_exec node0 sh -c 'ls -d /sys/kernel/r2cc/devices/*/ports/* | wc -l')
is "$(py 'len(d)' <<<"$ports")" "$nsys" "one message per port sysfs has ($nsys)"
is "$(py '[(p["dev-index"], p["port"], p["state"], p["reason"], p["degraded"]) for p in d if p["dev-name"] == "rxe0"]' <<<"$ports")" \
	"[($idx, 1, 'active', 'none', 0)]" \
	"rxe0 port 1: index $idx as sysfs says, active, no override, not degraded"

stats=$(ynl --do get-stats)
is "$?" 0 "--do get-stats"
is "$(py 'd["events-emitted"]' <<<"$stats")" \
	"$(tb_exec node0 cat /sys/kernel/r2cc/events_emitted)" \
	"events-emitted is sysfs's events_emitted"

# inject KIND: a drill on rxe0 port 1 through YNL.
inject() {
	ynl --do inject --json "{\"dev-index\": $idx, \"port\": 1, \"kind\": \"$1\"}"
}

# rxe0_state: rxe0 port 1's state as the get-port dump gives it.
rxe0_state() {
	ynl --dump get-port | py '[p["state"] for p in d if p["dev-name"] == "rxe0"]'
}
# A subscriber listens for 30 s and then prints what came.  It cannot do
# the inject itself: 6.12's YNL fails a request whose first answer is a
# notification ('NoneType' object has no attribute 'attr_set').  It says
# nothing until it ends, so pairs of drills go until it has ended: however
# late it started listening, it heard whole pairs (one takes about 2 x
# the start of YNL in the node plus 2 s).
sub=$(mktemp)
ynl --subscribe events --sleep 30 >"$sub" 2>&1 &
spid=$!
while kill -0 "$spid" 2>/dev/null; do
	inject port-down >/dev/null
	sleep 1
	inject port-up >/dev/null
	sleep 1
done
wait "$spid"
got=$(tail -n 1 "$sub")
diag "$got"
is "$(py '[x for x in zip(*[[(m["name"], m["msg"]["kind"], sorted(m["msg"]["flags"]), m["msg"]["dev-name"], m["msg"]["port"], m["msg"]["old-state"], m["msg"]["state"]) for m in d][i:] for i in (0, 1)]) if x[0][1] == "port-down"][:1]' <<<"$got")" \
	"[(('event', 'port-down', ['injected'], 'rxe0', 1, 'active', 'down'), ('event', 'port-up', ['injected'], 'rxe0', 1, 'down', 'active'))]" \
	"the subscriber gets the drills' records, decoded: port-down then port-up, injected, rxe0 port 1, active to down and back"
rm -f "$sub"
inject port-down >/dev/null
is "$(rxe0_state)" \
	"['down']" "after an injected port-down the dump shows rxe0 port 1 down"
inject port-up >/dev/null
is "$(rxe0_state)" \
	"['active']" "an injected port-up brings it back"
last=$(ynl --do get-stats | py 'd["events-emitted"]')
evs=$(ynl --dump get-events --json "{\"seq\": $((last - 2))}")
diag "$evs"
is "$(py '[(m["seq"] - '"$last"', m["kind"], m["dev-name"], m["state"]) for m in d]' <<<"$evs")" \
	"[(-1, 'port-down', 'rxe0', 'down'), (0, 'port-up', 'rxe0', 'active')]" \
	"--dump get-events after the last two records but two: those two, decoded, in order"

if tb_exec node0 sh -c 'command -v setpriv' >/dev/null; then
	out=$(tb_exec node0 setpriv --reuid=65534 --regid=65534 --clear-groups \
		python3 "$CLI" --spec "$SPEC" --no-schema --do inject \
		--json "{\"dev-index\": $idx, \"port\": 1, \"kind\": \"port-down\"}" 2>&1)
	rc=$?
	ok "$([ "$rc" = 1 ] && grep -q 'Operation not permitted' <<<"$out" && echo 1)" \
		"inject as nobody: refused, EPERM (exit $rc)"
	[ "$rc" = 1 ] || diag "$out"
else
	skip "no setpriv on the node"
fi
out=$(ynl --do inject --json "{\"dev-index\": $idx, \"port\": 1, \"kind\": 99}" 2>&1)
rc=$?
ok "$([ "$rc" = 1 ] && grep -q "integer out of range.*'bad-attr': '.kind'" <<<"$out" && echo 1)" \
	"inject of kind 99: refused by the policy, the extack naming the attribute (exit $rc)"
diag "$out"
is "$(rxe0_state)" \
	"['active']" "and nothing changed"
run_ok "rmmod r2cc" kmod_unload node0
tb_finish
