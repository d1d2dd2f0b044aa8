#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The newcomer's demo: boot a 2-node x 2-NIC soft-RoCE testbed, show the
# rails, push RDMA traffic over each, cut a link and watch the port event
# arrive, restore it, tear everything down.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
tb=$here/tools/testbed/r2cc-testbed
if [ -t 1 ]; then
	say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
else
	say() { printf '\n== %s\n' "$*"; }
fi

if "$tb" status >/dev/null 2>&1; then
	echo "demo: a testbed is already up; run '$tb down' first" >&2
	exit 1
fi
trap '"$tb" down >/dev/null 2>&1' EXIT INT TERM

say "Booting 2 nodes (Debian 6.1 under QEMU/TCG), 2 soft-RoCE NICs each"
"$tb" up --nodes 2 --nics 2 || exit 1

for k in 0 1; do
	say "RDMA write bandwidth, node0 -> node1 over rail $k (rxe$k)"
	"$tb" exec --timeout 90 node1 -- ib_write_bw -d "rxe$k" -x 1 \
		-s 1048576 -n 40 -F --report_gbits >/dev/null 2>&1 &
	srv=$!
	for _ in $(seq 50); do
		"$tb" exec node1 -- ss -Htln 'sport = :18515' | grep -q . && break
		sleep 0.2
	done
	"$tb" exec --timeout 90 node0 -- ib_write_bw -d "rxe$k" -x 1 \
		-s 1048576 -n 40 -F --report_gbits "198.18.$k.2" |
		sed -n '/#bytes/,/^-/p' | grep -v '^-'
	wait "$srv"
done

say "Listening for async events on node0 rxe0, then cutting its cable"
events=$(mktemp)
"$tb" exec --timeout 30 node0 -- stdbuf -oL ibv_asyncwatch -d rxe0 \
	>"$events" 2>&1 &
watch=$!
sleep 1
"$tb" link node0 0 down
sleep 1
echo "node0 rxe0 port 1: $("$tb" exec node0 -- cat /sys/class/infiniband/rxe0/ports/1/state)"
echo "node1 rxe0 port 1: $("$tb" exec node1 -- cat /sys/class/infiniband/rxe0/ports/1/state)  (the far end's carrier is up)"

say "Restoring the cable"
"$tb" link node0 0 up
sleep 1
echo "node0 rxe0 port 1: $("$tb" exec node0 -- cat /sys/class/infiniband/rxe0/ports/1/state)"
kill "$watch" 2>/dev/null
wait "$watch" 2>/dev/null
say "What the listener on node0 saw"
cat "$events"
rm -f "$events"

say "Tearing down"
trap - EXIT INT TERM
"$tb" down
