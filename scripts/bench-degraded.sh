#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench-degraded.sh [--kernel 6.1|6.12] [--clean-s N] [--rounds N]
#
# r2cc.ko's early warning, measured: how long a 2% lossy rail under load
# takes to be reported DEGRADED and, once the loss is gone, RECOVERED
# (--rounds times), and whether a clean rail under full load for
# --clean-s seconds (default 300) is ever reported DEGRADED (it must not
# be).  Rails shaped to 30 Mbit/s, ib_write_bw 64 KiB writes, poll_ms 1000,
# default thresholds.  Prints one line per measurement and a summary.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
build=${BUILD:-$here/build}
kernel=6.1 clean=300 rounds=5
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift ;;
	--clean-s) clean=$2; shift ;;
	--rounds) rounds=$2; shift ;;
	*) echo "usage: $0 [--kernel 6.1|6.12] [--clean-s N] [--rounds N]" >&2
	   exit 2 ;;
	esac
	shift
done
"$tb" status >/dev/null 2>&1 && { echo "testbed already up" >&2; exit 1; }
trap '"$tb" down >/dev/null 2>&1' EXIT
"$tb" up --nodes 2 --nics 1 --kernel "$kernel" | head -n1 || exit 1
kver=$("$tb" exec node0 -- uname -r)
for n in node0 node1; do
	"$tb" exec "$n" -- insmod "$build/kmod/$kver/r2cc.ko" || exit 1
done
s=/sys/kernel/r2cc/devices/rxe0/ports/1
rd() { "$tb" exec "$1" -- cat "$s/$2"; }

# bw SECONDS: ib_write_bw node0 -> node1 on rail 0, in the background.
bw() {
	"$tb" exec --timeout $(($1 + 60)) node1 -- ib_write_bw -d rxe0 -x 1 \
		-s 65536 -D "$1" >/dev/null 2>&1 &
	for _ in $(seq 100); do
		"$tb" exec node1 -- ss -Htln 'sport = :18515' | grep -q . && break
		sleep 0.2
	done
	"$tb" exec --timeout $(($1 + 60)) node0 -- ib_write_bw -d rxe0 -x 1 \
		-s 65536 -D "$1" 198.18.0.2 >/dev/null 2>&1 &
}

# wait_for NODE FILE VALUE LIMIT_S: ms until FILE reads VALUE, or -1.
wait_for() {
	local t0 now
	t0=$(date +%s%N)
	while :; do
		[ "$(rd "$1" "$2")" = "$3" ] && break
		now=$(date +%s%N)
		[ $(((now - t0) / 1000000000)) -ge "$4" ] && { echo -1; return; }
		sleep 0.05
	done
	now=$(date +%s%N)
	echo $(((now - t0) / 1000000))
}

"$tb" shape node0 0 --rate 30mbit
echo "== clean rail, full load, ${clean} s"
bw "$clean"
max=0 bad=0
for ((i = 0; i < clean; i++)); do
	r=$(rd node0 error_rate)
	[ "$r" -gt "$max" ] && max=$r
	[ "$(rd node0 degraded)$(rd node1 degraded)" != 00 ] && bad=$((bad + 1))
	sleep 1
done
wait
echo "clean: max error_rate ${max}/s, seconds with a DEGRADED end: $bad"

echo "== 2% loss, $rounds rounds"
for ((k = 1; k <= rounds; k++)); do
	"$tb" shape node0 0 --rate 30mbit --loss 2
	bw 40
	d=$(wait_for node0 degraded 1 30)
	r=$(rd node0 error_rate)
	"$tb" shape node0 0 --rate 30mbit
	u=$(wait_for node0 degraded 0 30)
	wait
	echo "round $k: DEGRADED ${d} ms after the load started (${r} errors/s), RECOVERED ${u} ms after the loss was removed"
	sleep 5
done
