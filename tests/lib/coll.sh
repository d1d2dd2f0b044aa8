# SPDX-License-Identifier: GPL-2.0-only
# Helpers for tests that run tests/libr2cc/coll (collectives, one rank per
# node) over the testbed.  Source after tap.sh and tb_require.

COLL=$R2CC_BUILD/tests/libr2cc/coll

# coll_start NODES "ENV..." ARGS...: a rank on node0..NODES-1, in the
# background; the bootstrap and control channels on ctl0.
coll_start() {
	local n=$1 env=$2 port=$((20000 + RANDOM % 20000)) i
	shift 2
	CO_DIR=$(mktemp -d)
	CO_N=$n
	CO_PIDS=()
	for ((i = n - 1; i >= 0; i--)); do
		# shellcheck disable=SC2086
		TB_TIMEOUT=${CO_TIMEOUT:-400} tb_exec "node$i" env \
			R2CC_ROOT=198.19.1.1:$port WORLD_SIZE="$n" RANK=$i \
			R2CC_SOCKET_IFNAME=ctl0 R2CC_STALL_MS=500 \
			${COLL_FULL:+COLL_FULL=1} $env \
			"$COLL" "$@" >"$CO_DIR/$i.log" 2>&1 &
		CO_PIDS[i]=$!
	done
}

coll_wait() {
	local i
	CO_RCS=()
	for ((i = 0; i < CO_N; i++)); do
		wait "${CO_PIDS[i]}"
		CO_RCS[i]=$?
	done
}

# coll_streaming: every rank finished its first collective.
coll_streaming() {
	local t i all
	for ((t = 0; t < 900; t++)); do
		all=1
		for ((i = 0; i < CO_N; i++)); do
			grep -q '^streaming' "$CO_DIR/$i.log" || all=
		done
		[ -n "$all" ] && return 0
		sleep 0.1
	done
	return 1
}

# coll_report: each rank's "ok - " / "not ok - " lines as TAP points, then
# its exit status; a rank's log goes to diag when something failed.
coll_report() {
	local i line before
	for ((i = 0; i < CO_N; i++)); do
		before=$_tap_failed
		while IFS= read -r line; do
			case $line in
			"ok - "*) ok 1 "rank $i: ${line#ok - }" ;;
			"not ok - "*) ok "" "rank $i: ${line#not ok - }" ;;
			esac
		done <"$CO_DIR/$i.log"
		ok "$([ "${CO_RCS[i]}" = 0 ] && echo 1)" "rank $i exit ${CO_RCS[i]}"
		[ "$_tap_failed" = "$before" ] ||
			diag "$(grep -v '^ok - ' "$CO_DIR/$i.log" | tail -n 30)"
	done
}

# coll_field RANK KEY: from that rank's coll-result line.
coll_field() {
	sed -n "s/^coll-result: .*\b$2=\([^ ]*\).*/\1/p" "$CO_DIR/$1.log"
}

# coll_node_nics NODE down|up: all of NODE's NICs but the last.
coll_node_nics() {
	local k
	for ((k = 0; k < TB_NICS - 1; k++)); do
		tb link "$1" "$k" "$2"
	done
}

# coll_flap WHAT SECONDS: once the started ranks stream (a test named
# WHAT), node1 loses all but its last NIC for SECONDS and gets them back;
# then waits for the ranks.
coll_flap() {
	run_ok "$1" coll_streaming
	sleep 1
	coll_node_nics node1 down
	sleep "$2"
	coll_node_nics node1 up
	coll_wait
}

# coll_refused ENV WANT WHAT: every rank started with ENV exits 1, its log
# saying WANT and r2cc_comm_init() failing with -EINVAL.
coll_refused() {
	local i
	coll_start 4 "$1" -l 1 -s 4096
	coll_wait
	for i in 0 1 2 3; do
		ok "$([ "${CO_RCS[i]}" = 1 ] && grep -q "$2" "$CO_DIR/$i.log" &&
			grep -q '^setup: Invalid argument' "$CO_DIR/$i.log" && echo 1)" \
			"rank $i, $1: r2cc_comm_init() $3 and fails with -EINVAL (exit ${CO_RCS[i]})"
	done
	coll_cleanup
}

coll_cleanup() {
	rm -rf "$CO_DIR"
}
