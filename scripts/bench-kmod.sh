#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# bench-kmod.sh [--kernel 6.1|6.12] [--changes N]
#
# The r2cc.ko figures of Documentation/kmod.rst, all in one testbed run:
# inject -> wake-up latency (read, epoll) against an eventfd ping-pong,
# delivery rate to 1/8/64 subscribers, state-page read cost, and real
# carrier changes seen through /dev/r2cc against ibv_get_async_event.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
build=${BUILD:-$here/build}
kernel=6.1 changes=20
while [ $# -gt 0 ]; do
	case "$1" in
	--kernel) kernel=$2; shift ;;
	--changes) changes=$2; shift ;;
	*) echo "usage: $0 [--kernel 6.1|6.12] [--changes N]" >&2; exit 2 ;;
	esac
	shift
done
"$tb" status >/dev/null 2>&1 && { echo "testbed already up" >&2; exit 1; }
trap '"$tb" down >/dev/null 2>&1' EXIT
"$tb" up --nodes 1 --nics 1 --kernel "$kernel" | head -n1 || exit 1
kver=$("$tb" exec node0 -- uname -r)
"$tb" exec node0 -- insmod "$build/kmod/$kver/r2cc.ko" || exit 1
b=$build/tests/kmod/bench

echo "== wake-up latency (1000 injects each)"
"$tb" exec node0 -- "$b" wake 1000
echo "== delivery rate (2000 records)"
"$tb" exec node0 -- "$b" rate 2000
echo "== state page read cost"
"$tb" exec node0 -- "$b" page 10000000

echo "== real carrier changes: /dev/r2cc vs ibv_get_async_event ($changes)"
out=$(mktemp)
"$tb" exec --timeout 300 node0 -- "$b" link "$changes" >"$out" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q ready "$out" && break; sleep 0.1; done
for ((i = 0; i < changes / 2; i++)); do
	"$tb" link node0 0 down; sleep 0.5
	"$tb" link node0 0 up; sleep 0.5
done
wait "$pid"
awk '/^change/ {print $4 - $6}' "$out" | sort -g | awk '
	{ v[NR] = $1; if ($1 < 0) first++ }
	END {
		if (!NR) { print "no changes seen"; exit 1 }
		p = int(NR * 0.99); if (p < 1) p = 1
		printf "r2cc minus verbs arrival: median %.1f us, p99 %.1f us; r2cc first in %d of %d changes\n", v[int((NR + 1) / 2)] / 1e3, v[p] / 1e3, first, NR
	}' || cat "$out"
rm -f "$out"
