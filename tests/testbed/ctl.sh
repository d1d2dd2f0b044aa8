#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# r2ccctl against the real module: status (text and JSON) lists every
# port sysfs has, with the module's parameters; watch prints injected
# records in order and replays from --since what the module's ring
# holds, naming exactly what it does not; inject needs
# CAP_NET_ADMIN and refuses unknown devices, ports and bad forms;
# prometheus passes promtool and writes its file whole; with r2cc.ko
# gone, every verb says so (exit 3).
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later
CTL=$R2CC_BUILD/tools/r2ccctl
[ -x "$CTL" ] || skip_all "r2ccctl is not built"

run_ok "insmod r2cc.ko" kmod_load node0
out=$(tb_exec node0 "$CTL" status)
is "$?" 0 "status exits 0"
diag "$out"
grep -qE '^rxe0 +1 +ACTIVE +Ethernet +eth0 ' <<<"$out"
ok "$([ $? = 0 ] && echo 1)" "status: rxe0 port 1 ACTIVE, Ethernet, eth0"
grep -q "^r2cc.ko version $(cat "$R2CC_REPO/VERSION"), .*parameters:.* damping_ms=" <<<"$out"
ok "$([ $? = 0 ] && echo 1)" "status: the module's version and parameters"

json=$(tb_exec node0 "$CTL" --json status)
sysfs=$(tb_exec node0 sh -c 'ls -d /sys/kernel/r2cc/devices/*/ports/* | wc -l')
n=$(python3 -c 'import json, sys
d = json.loads(sys.stdin.read())
assert all(p["state"] in ("ACTIVE", "DOWN") for p in d["ports"])
assert "damping_ms" in d["module"]["parameters"]
print(len(d["ports"]))' <<<"$json")
is "$n" "$sysfs" "status --json: valid JSON, one object per sysfs port"

# Two drills, watched; the records come in order, flagged injected.
emitted=$(python3 -c 'import json, sys
print(json.loads(sys.stdin.read())["events"]["emitted"])' <<<"$json")
# Each watch writes a file of its own, empty before it starts: the wait
# for "watching" must not see an earlier watch's.
w=$(mktemp)
tb_exec node0 "$CTL" watch --json --count 2 --timeout 30 >"$w" 2>&1 &
wpid=$!
for ((t = 0; t < 100; t++)); do grep -q watching "$w" && break; sleep 0.1; done
run_ok "inject rxe0 1 down" tb_exec node0 "$CTL" inject rxe0 1 down
st=$(tb_exec node0 "$CTL" status)
grep -qE '^rxe0 +1 +DOWN ' <<<"$st"
ok "$([ $? = 0 ] && echo 1)" "status shows the injected DOWN"
run_ok "inject rxe0 1 up" tb_exec node0 "$CTL" inject rxe0 1 up
wait "$wpid"
is "$?" 0 "watch --count 2 exits 0"
diag "$(cat "$w")"
kinds=$(python3 -c 'import json, sys
r = [json.loads(l) for l in sys.stdin if l.startswith("{")]
assert all(x["injected"] and x["device"] == "rxe0" and x["port"] == 1
           for x in r), r
assert r[1]["seq"] == r[0]["seq"] + 1, r
print(r[0]["seq"] - '"$emitted"', " ".join(x["kind"] for x in r))' <"$w")
is "$kinds" "1 port_down port_up" \
	"watch: the next two records, port_down then port_up, injected"

# --since replays what the module's ring still holds: the two drills,
# at once, nothing injected; then replay and live records run on in
# order, none twice.
out=$(tb_exec node0 "$CTL" watch --json --since "$emitted" --count 2 --timeout 5 2>/dev/null)
is "$?" 0 "watch --since: the two drills replayed, exit 0"
kinds=$(python3 -c 'import json, sys
r = [json.loads(l) for l in sys.stdin if l.startswith("{")]
print(" ".join("%d:%s" % (x["seq"] - '"$emitted"', x["kind"]) for x in r))' <<<"$out")
is "$kinds" "1:port_down 2:port_up" "watch --since: records $((emitted + 1)) and $((emitted + 2)), in order"
rm -f "$w"
w=$(mktemp)
tb_exec node0 "$CTL" watch --since "$emitted" --count 3 --timeout 30 \
	>"$w" 2>&1 &
wpid=$!
for ((t = 0; t < 100; t++)); do grep -q watching "$w" && break; sleep 0.1; done
tb_exec node0 "$CTL" inject rxe0 1 down
wait "$wpid"
is "$?" 0 "watch --since, then live: exit 0"
diag "$(cat "$w")"
seqs=$(awk '$1 == "seq" {print $2}' "$w" | tr '\n' ' ')
is "$seqs" "$((emitted + 1)) $((emitted + 2)) $((emitted + 3)) " \
	"watch --since, then live: the two drills replayed, the new down live; none twice, no gap"
out=$(tb_exec node0 "$CTL" watch --since $((emitted + 1000000)) --timeout 1 2>&1)
rc=$?
ok "$([ $rc = 1 ] && grep -q 'was it reloaded' <<<"$out" && echo 1)" \
	"watch --since past the last record: exit $rc, says so ($out)"
tb_exec node0 "$CTL" inject 0 1 up >/dev/null
ok "$([ $? = 0 ] && echo 1)" "inject takes a device index too"

# Refusals.
out=$(tb_exec node0 setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$CTL" inject rxe0 1 down 2>&1)
is "$?" 1 "inject as nobody exits 1"
grep -q 'needs CAP_NET_ADMIN' <<<"$out"
ok "$([ $? = 0 ] && echo 1)" "and says it needs CAP_NET_ADMIN"
for c in "nosuch0 1 down|1|not an RDMA device" "rxe0 9 down|1|not an RDMA port" \
	"rxe0 0 down|2|PORT from 1" "rxe0 1 fatal|2|PORT must be 0" \
	"rxe0 -1 down|2|not a port number" "rxe0 1|2|needs DEV PORT"; do
	IFS='|' read -r args want msg <<<"$c"
	# shellcheck disable=SC2086
	out=$(tb_exec node0 "$CTL" inject $args 2>&1)
	rc=$?
	grep -q -- "$msg" <<<"$out"
	ok "$([ $rc = "$want" ] && [ $? = 0 ] && echo 1)" \
		"inject $args: exit $rc (want $want), '$msg'"
done
st=$(tb_exec node0 "$CTL" status)
grep -qE '^rxe0 +1 +ACTIVE ' <<<"$st"
ok "$([ $? = 0 ] && echo 1)" "the port reads ACTIVE after the drills"

# Prometheus: what promtool (Debian's, from make deps) accepts, counting
# the drills above; written whole to --output.
prom=$(tb_exec node0 "$CTL" prometheus)
is "$?" 0 "prometheus exits 0"
grep -q '^r2cc_port_up{device="rxe0",port="1"} 1$' <<<"$prom"
ok "$([ $? = 0 ] && echo 1)" "prometheus: r2cc_port_up of rxe0 port 1 is 1"
downs=$(sed -n 's/^r2cc_port_transitions_total{device="rxe0",port="1",direction="down"} //p' <<<"$prom")
ok "$([ "${downs:-0}" -ge 2 ] && echo 1)" \
	"prometheus: rxe0 port 1 went down ${downs:-no} times (the drills)"
promtool=$R2CC_BUILD/cache/promtool/promtool
if [ -x "$promtool" ]; then
	lint=$("$promtool" check metrics <<<"$prom" 2>&1)
	ok "$([ $? = 0 ] && [ -z "$lint" ] && echo 1)" \
		"promtool check metrics: no complaint${lint:+: $lint}"
else
	skip "no promtool (make deps puts one in build/cache)"
fi
tb_exec node0 "$CTL" prometheus --output /tmp/r2cc.prom
is "$?" 0 "prometheus --output FILE exits 0"
is "$(tb_exec node0 sh -c 'cat /tmp/r2cc.prom | grep -c "^r2cc_"; ls /tmp/r2cc.prom.tmp 2>/dev/null')" \
	"$(grep -c '^r2cc_' <<<"$prom")" "the file has every metric, no .tmp left"
out=$(tb_exec node0 "$CTL" prometheus --output /proc/r2cc.prom 2>&1)
is "$?" 1 "prometheus --output into /proc: exit 1 ($out)"

# A ring too short for --since: what it no longer holds is named as a
# gap, exactly, and the rest follows in order.
run_ok "rmmod r2cc" kmod_unload node0
run_ok "insmod r2cc.ko queue_len=4" kmod_load node0 queue_len=4
for i in 1 2 3; do
	tb_exec node0 "$CTL" inject rxe0 1 down
	tb_exec node0 "$CTL" inject rxe0 1 up
done >/dev/null
last=$(tb_exec node0 "$CTL" --json status | python3 -c 'import json, sys
print(json.loads(sys.stdin.read())["events"]["emitted"])')
out=$(tb_exec node0 "$CTL" watch --since 0 --count 4 --timeout 5 2>/dev/null)
rc=$?
diag "$out"
ok "$([ $rc = 1 ] && [ "$(head -n 1 <<<"$out")" = "gap: records 1..$((last - 4)) were not seen" ] && echo 1)" \
	"watch --since 0 with a ring of 4 and $last records: exit $rc, the first $((last - 4)) named lost"
is "$(awk '$1 == "seq" {print $2}' <<<"$out" | tr '\n' ' ')" \
	"$((last - 3)) $((last - 2)) $((last - 1)) $last " \
	"and the 4 it holds follow, in order"
run_ok "rmmod r2cc" kmod_unload node0
for v in status "watch --timeout 1" "inject rxe0 1 down" prometheus; do
	# shellcheck disable=SC2086
	out=$(tb_exec node0 "$CTL" $v 2>&1)
	rc=$?
	ok "$([ $rc = 3 ] && grep -q 'not loaded' <<<"$out" && echo 1)" \
		"without r2cc.ko: $v exits 3 and says so"
done
rm -f "$w"
tb_finish
