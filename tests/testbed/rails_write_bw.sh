#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# RDMA writes (perftest ib_write_bw, RC) succeed between every pair of nodes
# on every rail: both ends complete every write (the rate is reported).
# With R2CC_RAILS_ALL unset (make check) the pairs and the rails are taken
# in turn, so that every pair and every rail is covered at least once:
# 6 runs instead of 18 on 4 nodes x 3 NICs, 2 on 2 x 2, of 10 writes of
# 1 MiB each instead of 40 (scripts/check-full sets it).
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

# write_bw I J K: ib_write_bw from node I to node J on rail K.
write_bw() {
	local i=$1 j=$2 k=$3 what="node$1 -> node$2 rail $3"
	local xs xc srv spid out rc src bw n=$((${R2CC_RAILS_ALL:+30} + 10))
	xs=$(gid_index "node$j" "$k") xc=$(gid_index "node$i" "$k")
	srv=$(mktemp)
	TB_TIMEOUT=90 tb_exec "node$j" ib_write_bw -d "rxe$k" \
		-x "$xs" -s 1048576 -n $n -F --report_gbits >"$srv" 2>&1 &
	spid=$!
	if ! wait_listen "node$j"; then
		fail "$what: server listens"
		kill "$spid" 2>/dev/null
		wait "$spid"
		diag "$(cat "$srv")"
		rm -f "$srv"
		return
	fi
	out=$(TB_TIMEOUT=90 tb_exec "node$i" ib_write_bw -d "rxe$k" -x "$xc" \
		-s 1048576 -n $n -F --report_gbits "198.18.$k.$((j + 1))" 2>&1)
	rc=$?
	wait "$spid"
	src=$?
	bw=$(awk '$1 == 1048576 && NF >= 5 {print $4}' <<<"$out")
	# Both ends exiting 0 means every write completed; the rate is
	# reported, not judged (perftest's cycle-based timing can print 0
	# under TCG).
	ok "$([ $rc = 0 ] && [ $src = 0 ] && [ -n "$bw" ] && echo 1)" \
		"$what: ib_write_bw ${bw:-?} Gbit/s"
	[ $rc = 0 ] && [ $src = 0 ] && [ -n "$bw" ] ||
		diag "client exit $rc: $out" "server exit $src: $(cat "$srv")"
	rm -f "$srv"
}

pairs=()
for ((i = 0; i < TB_NODES; i++)); do
	for ((j = i + 1; j < TB_NODES; j++)); do pairs+=("$i $j"); done
done
if [ -n "${R2CC_RAILS_ALL:-}" ]; then
	for p in "${pairs[@]}"; do
		for ((k = 0; k < TB_NICS; k++)); do
			# shellcheck disable=SC2086 # "I J"
			write_bw $p "$k"
		done
	done
else
	runs=$((${#pairs[@]} > TB_NICS ? ${#pairs[@]} : TB_NICS))
	for ((r = 0; r < runs; r++)); do
		# shellcheck disable=SC2086 # "I J"
		write_bw ${pairs[r % ${#pairs[@]}]} $((r % TB_NICS))
	done
fi
tb_finish
