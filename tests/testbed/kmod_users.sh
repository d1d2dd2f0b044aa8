#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# No unprivileged user can hurt the node through /dev/r2cc: the driver
# creates it 0600; a user granted access (here by chmod, as udev's group
# would) may hold max_user_subscribers open files and gets EMFILE after,
# with no memory taken per record; a privileged reader still gets a real
# port change while thousands of attempts were refused.
# ci: every kernel
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later

run_ok "insmod max_user_subscribers=50" kmod_load node0 max_user_subscribers=50
is "$(tb_exec node0 stat -c %a /dev/r2cc)" 600 "the driver creates /dev/r2cc 0600"
tb_exec node0 chmod 0666 /dev/r2cc

# release PID PATTERN: end a holder of files started in the background
# (its local end PID, its python in the node by PATTERN for pkill -f) and
# wait, up to 10 s, until the module counts no subscriber.
release() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
	tb_exec node0 pkill -f "$2" 2>/dev/null
	for ((t = 0; t < 50; t++)); do
		[ "$(tb_exec node0 cat /sys/kernel/r2cc/subscribers)" = 0 ] && break
		sleep 0.2
	done
}

# As nobody: open up to 2000 files, report how many opened and the error.
opener='
import errno, os, sys, time
os.setgroups([]); os.setgid(65534); os.setuid(65534)
fds, err = [], "none"
for i in range(2000):
    try:
        fds.append(os.open("/dev/r2cc", os.O_RDONLY))
    except OSError as e:
        err = errno.errorcode[e.errno]
        if e.errno != errno.EMFILE:
            break
print(len(fds), err, flush=True)
time.sleep(float(sys.argv[1]))
'
res=$(tb_exec node0 python3 -c "$opener" 0)
is "$res" "50 EMFILE" "nobody: 50 files open, every further open EMFILE"
refused=$(tb_exec node0 cat /sys/kernel/r2cc/subscribers_refused)
ok "$([ "$refused" -ge 1950 ] && echo 1)" "subscribers_refused counts them ($refused)"

# A privileged reader, with nobody holding its 50 files, sees a real cut.
out=$(mktemp) hog=$(mktemp)
tb_exec node0 python3 -c "$opener" 20 >"$hog" 2>&1 &
hpid=$!
for ((t = 0; t < 100; t++)); do [ -s "$hog" ] && break; sleep 0.1; done
is "$(tb_exec node0 cat /sys/kernel/r2cc/subscribers)" 50 "50 subscribers held by nobody"
tb_exec node0 "$KTEST/watch" -n 1 -t 10000 >"$out" 2>&1 &
wpid=$!
for ((t = 0; t < 100; t++)); do grep -q ready "$out" && break; sleep 0.1; done
t0=$(date +%s%N)
tb link node0 0 down
wait "$wpid"
t1=$(date +%s%N)
is "$(awk '$1 ~ /^[0-9]+$/ {print $2}' "$out")" PORT_DOWN \
	"root's reader got the carrier cut ($(((t1 - t0) / 1000000)) ms from the cut)"
tb link node0 0 up
release "$hpid" 'os.setuid'
is "$(tb_exec node0 cat /sys/kernel/r2cc/subscribers)" 0 "every file closed"
res=$(tb_exec node0 python3 -c "$opener" 0)
is "$res" "50 EMFILE" "the limit counts open files, not past opens"

# An administrator's opens are not limited and not counted against its
# user: nobody holding CAP_NET_ADMIN (ambient, so python keeps it) holds
# 60 files while nobody without it still opens its 50.
adm=$(mktemp)
tb_exec node0 setpriv --reuid=65534 --regid=65534 --clear-groups \
	--inh-caps=+net_admin --ambient-caps=+net_admin python3 -c '
import os, sys, time
fds = [os.open("/dev/r2cc", os.O_RDONLY) for i in range(60)]
print(len(fds), flush=True)
time.sleep(20)
' >"$adm" 2>&1 &
apid=$!
for ((t = 0; t < 100; t++)); do [ -s "$adm" ] && break; sleep 0.1; done
is "$(cat "$adm")" 60 "nobody with CAP_NET_ADMIN: 60 files open, past the limit"
is "$(tb_exec node0 python3 -c "$opener" 0)" "50 EMFILE" \
	"nobody without it: still 50 files, the administrator's not counted"
release "$apid" 'range.60'
rm -f "$adm"
run_ok "max_user_subscribers=0 refuses every unprivileged open" \
	tb_exec node0 sh -c 'echo 0 > /sys/module/r2cc/parameters/max_user_subscribers'
is "$(tb_exec node0 python3 -c "$opener" 0)" "0 EMFILE" "nobody: EMFILE at once"
run_ok "root is not limited" tb_exec node0 sh -c 'exec 3</dev/r2cc 4</dev/r2cc'
run_ok "rmmod" kmod_unload node0
rm -f "$out" "$hog"
tb_finish
