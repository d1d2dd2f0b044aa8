#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# RDMA writes (perftest ib_write_bw, RC) succeed between every pair of nodes
# on every rail: both ends complete every write (the rate is reported).
. "$(dirname "$0")/../lib/tap.sh"
tb_require 2
plan_later

# gid_index NODE K: the RoCEv2 IPv4 GID of rxeK (what perftest's -x wants).
gid_index() {
	tb_exec "$1" sh -c "cd /sys/class/infiniband/rxe$2/ports/1/gids &&
		grep -l '^0000:0000:0000:0000:0000:ffff:' * | sort -n | head -n1"
}

# wait_listen NODE: until perftest's TCP port (18515) listens there.
wait_listen() {
	local t
	for ((t = 0; t < 100; t++)); do
		tb_exec "$1" ss -Htln 'sport = :18515' | grep -q . && return 0
		sleep 0.2
	done
	return 1
}

for ((i = 0; i < TB_NODES; i++)); do
	for ((j = i + 1; j < TB_NODES; j++)); do
		for ((k = 0; k < TB_NICS; k++)); do
			what="node$i -> node$j rail $k"
			xs=$(gid_index "node$j" "$k") xc=$(gid_index "node$i" "$k")
			srv=$(mktemp)
			TB_TIMEOUT=90 tb_exec "node$j" ib_write_bw -d "rxe$k" \
				-x "$xs" -s 1048576 -n 40 -F --report_gbits \
				>"$srv" 2>&1 &
			spid=$!
			if ! wait_listen "node$j"; then
				fail "$what: server listens"
				kill "$spid" 2>/dev/null
				wait "$spid"
				diag "$(cat "$srv")"
				rm -f "$srv"
				continue
			fi
			out=$(TB_TIMEOUT=90 tb_exec "node$i" ib_write_bw \
				-d "rxe$k" -x "$xc" -s 1048576 -n 40 -F \
				--report_gbits "198.18.$k.$((j + 1))" 2>&1)
			rc=$?
			wait "$spid"
			src=$?
			bw=$(awk '$1 == 1048576 && NF >= 5 {print $4}' <<<"$out")
			# Both ends exiting 0 means every write completed; the
			# rate is reported, not judged (perftest's cycle-based
			# timing can print 0 under TCG).
			ok "$([ $rc = 0 ] && [ $src = 0 ] && [ -n "$bw" ] && echo 1)" \
				"$what: ib_write_bw ${bw:-?} Gbit/s"
			[ $rc = 0 ] && [ $src = 0 ] && [ -n "$bw" ] ||
				diag "client exit $rc: $out" "server exit $src: $(cat "$srv")"
			rm -f "$srv"
		done
	done
done
tb_finish
