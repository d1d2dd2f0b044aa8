# SPDX-License-Identifier: GPL-2.0-only
# Helpers for tests that run tests/nccl/harness (the NCCL-shaped driver of
# the net plugin) as a ring over testbed nodes while faults are injected.
# Source after tap.sh and tb_require.

HARNESS=$R2CC_BUILD/tests/nccl/harness

# nccl_start NODES "ENV..." ARGS...: the harness on node0..NODES-1, in the
# background; the control channel on ctl0 ($NC_IFENV, default
# R2CC_SOCKET_IFNAME=ctl0, says how).  The stall detector gets 500 ms
# (TCG stalls a lone rail's completions for 100 ms and more), so that a
# healthy primary is not failed over by the emulator's jitter.
nccl_start() {
	local n=$1 env=$2 port=$((20000 + RANDOM % 20000)) i
	shift 2
	NC_DIR=$(mktemp -d)
	NC_N=$n
	NC_PIDS=()
	for ((i = n - 1; i >= 0; i--)); do
		# shellcheck disable=SC2086
		TB_TIMEOUT=${NC_TIMEOUT:-400} tb_exec "node$i" env \
			R2CC_ROOT=198.19.1.1:$port WORLD_SIZE="$n" RANK=$i \
			"${NC_IFENV:-R2CC_SOCKET_IFNAME=ctl0}" \
			LD_LIBRARY_PATH="$R2CC_BUILD/lib" \
			NCCL_DEBUG=INFO R2CC_STALL_MS=500 $env \
			"$HARNESS" "$@" >"$NC_DIR/$i.log" 2>&1 &
		NC_PIDS[i]=$!
	done
}

# nccl_streaming: every rank is connected and moving data.
nccl_streaming() {
	local t i all
	for ((t = 0; t < 900; t++)); do
		all=1
		for ((i = 0; i < NC_N; i++)); do
			grep -q '^streaming' "$NC_DIR/$i.log" || all=
		done
		[ -n "$all" ] && return 0
		sleep 0.1
	done
	return 1
}

nccl_wait() {
	local i
	NC_RCS=()
	for ((i = 0; i < NC_N; i++)); do
		wait "${NC_PIDS[i]}"
		NC_RCS[i]=$?
	done
}

# nccl_field RANK VERSION KEY: from that rank's harness-result line.
nccl_field() {
	sed -n "s/^harness-result: version=$2 .* $3=\([^ ]*\).*/\1/p" \
		"$NC_DIR/$1.log"
}

# nccl_ok WHAT VERSIONS...: every rank exited 0, and for each version
# moved messages with no bad byte and no failed call.
nccl_ok() {
	local what=$1 i v res good m
	shift
	for ((i = 0; i < NC_N; i++)); do
		res= good=1
		[ "${NC_RCS[i]}" = 0 ] || good=
		for v in "$@"; do
			m=$(nccl_field $i "$v" msgs)
			res+="v$v:${m:-none}/$(nccl_field $i "$v" bad)/$(nccl_field $i "$v" errors) "
			[ "${m:-0}" -gt 0 ] &&
				[ "$(nccl_field $i "$v" bad)" = 0 ] &&
				[ "$(nccl_field $i "$v" errors)" = 0 ] || good=
		done
		ok "$good" "$what: rank $i exit ${NC_RCS[i]}, msgs/bad/errors $res"
		[ -n "$good" ] || diag "rank $i: $(tail -n 30 "$NC_DIR/$i.log")"
	done
}

# nccl_rail RANK RAIL KEY: the largest value of KEY (bytes, failures,
# failbacks) over that rank's send comms' closing lines for RAIL.
nccl_rail() {
	awk -v r="$2" -v k="$3" '/send comm .* closed: rail / {
		for (i = 1; i < NF; i++) if ($i == "rail" && $(i + 1) == r)
			for (j = i; j < NF; j++) if ($j == k && $(j + 1) + 0 > m)
				m = $(j + 1) + 0 }
		END { print m + 0 }' "$NC_DIR/$1.log"
}

nccl_cleanup() {
	rm -rf "$NC_DIR"
}
