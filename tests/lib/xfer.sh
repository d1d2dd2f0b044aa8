# SPDX-License-Identifier: GPL-2.0-only
# Helpers for tests that stream checked data between node0 (rank 0, the
# sender) and node1 (rank 1, the receiver) with tests/libr2cc/xfer while
# a fault is injected.  Source after tap.sh and tb_require.

XFER=$R2CC_BUILD/tests/libr2cc/xfer

# xfer_start "ENV..." ARGS...: start both ranks in the background, with
# $XF_ENV as more environment for both; the control channel runs on ctl0,
# never on a rail.
xfer_start() {
	local env=$1 port=$((20000 + RANDOM % 20000))
	shift
	XF_DIR=$(mktemp -d)
	# shellcheck disable=SC2086
	TB_TIMEOUT=240 tb_exec node1 env R2CC_ROOT=198.19.1.1:$port \
		WORLD_SIZE=2 RANK=1 R2CC_SOCKET_IFNAME=ctl0 $env ${XF_ENV:-} \
		"$XFER" "$@" \
		>"$XF_DIR/1.log" 2>&1 &
	XF_PID1=$!
	# shellcheck disable=SC2086
	TB_TIMEOUT=240 tb_exec node0 env R2CC_ROOT=198.19.1.1:$port \
		WORLD_SIZE=2 RANK=0 R2CC_SOCKET_IFNAME=ctl0 $env ${XF_ENV:-} \
		"$XFER" "$@" \
		>"$XF_DIR/0.log" 2>&1 &
	XF_PID0=$!
}

# xfer_streaming: wait until both ranks are connected and streaming.
xfer_streaming() {
	local t
	for ((t = 0; t < 600; t++)); do
		grep -q '^streaming' "$XF_DIR/0.log" &&
			grep -q '^streaming' "$XF_DIR/1.log" && return 0
		sleep 0.1
	done
	return 1
}

xfer_wait() {
	wait "$XF_PID0"
	XF_RC0=$?
	wait "$XF_PID1"
	XF_RC1=$?
}

# xfer_field RANK KEY: a value from that rank's xfer-result line.
xfer_field() {
	sed -n "s/^xfer-result: .* $2=\([^ ]*\).*/\1/p" "$XF_DIR/$1.log"
}

# xfer_rail RANK RAIL KEY: a per-rail counter ("rail N: state S bytes B ...").
xfer_rail() {
	awk -v r="rail $2:" -v k="$3" 'index($0, r) == 1 {
		for (i = 3; i < NF; i++) if ($i == k) print $(i + 1) }' \
		"$XF_DIR/$1.log"
}

# xfer_ok WHAT MSGS SIZE: both ranks exited 0 and every byte of every
# message arrived and matched its pattern.
xfer_ok() {
	local want=$(($2 * $3))
	ok "$([ "$XF_RC0" = 0 ] && [ "$XF_RC1" = 0 ] && echo 1)" \
		"$1: both ranks completed (exit $XF_RC0, $XF_RC1)"
	is "$(xfer_field 1 verified)/$(xfer_field 1 bad)" "$want/0" \
		"$1: all $want bytes verified, none bad"
	[ "$XF_RC0" = 0 ] && [ "$XF_RC1" = 0 ] ||
		diag "sender: $(cat "$XF_DIR/0.log")" \
			"receiver: $(cat "$XF_DIR/1.log")"
}

# xfer_located RANK RAIL WHERE: that rank's log located a failure of the
# rail at WHERE ("this end's port", "the peer's port", "the path"),
# at once or on second thoughts (a port found down soon after).
xfer_located() {
	grep -Eq "^.*rail $2 \([^)]*\): fault (re)?located at $3" \
		"$XF_DIR/$1.log"
}

xfer_diag() {
	diag "sender: $(grep -v '^streaming' "$XF_DIR/0.log" | tail -n 25)" \
		"receiver: $(grep -v '^streaming' "$XF_DIR/1.log" | tail -n 25)"
}

xfer_cleanup() {
	rm -rf "$XF_DIR"
}

# xfer_ticks RANK: the progress ticks the rank has printed so far: marks a
# moment (the end of a fault) for xfer_carries_since.
xfer_ticks() {
	grep -c '^tick ' "$XF_DIR/$1.log"
}

# xfer_carries_since RANK RAIL N: after the first N ticks, two ticks in a
# row show the rail up and its bytes growing: it is in service after that
# moment, whether or not a tick ever caught it down (a rail that fails
# and comes back between two ticks, 0.5 s apart, never shows down).
xfer_carries_since() {
	awk -v r="$2" -v n="$3" '$1 == "tick" {
		t++; s = $(3 + 2 * r); b = $(4 + 2 * r)
		if (t > n && s == 1 && up && b > last) ok = 1
		up = t > n && s == 1; last = b }
		END { exit !ok }' "$XF_DIR/$1.log"
}

# xfer_returned RANK RAIL: after the rail was last seen down, a later
# progress tick shows it up and carrying more bytes (--ticks output).
xfer_returned() {
	awk -v r="$2" '$1 == "tick" {
		s = $(3 + 2 * r); b = $(4 + 2 * r)
		if (s != 1) { down = 1; at = b; back = 0 }
		else if (down && b > at) back = 1 }
		END { exit !(down && back) }' "$XF_DIR/$1.log"
}

# xfer_blackhole_stream ENV: 100 messages of 1 MiB under ENV; once both
# ranks stream, node0's rail 1 drops every frame (its carrier up) for 2 s
# from 1.5 s on; then waits for both ranks.
xfer_blackhole_stream() {
	xfer_start "$1" --msgs 100 --size 1048576 --ticks
	run_ok "both ranks streaming" xfer_streaming
	sleep 1.5
	tb blackhole node0 1 on
	sleep 2
	tb blackhole node0 1 off
	xfer_wait
}

# xfer_rail1_bytes: the sender's bytes on rail 1 at its last progress tick
# written whole ("tick T s0 b0 s1 b1 @NOW i0 i1", --ticks of two rails).
xfer_rail1_bytes() {
	awk '$1 == "tick" && $7 ~ /^@/ && NF == 9 { b = $6 }
		END { print b + 0 }' "$XF_DIR/0.log"
}

# xfer_wait_log N SECONDS PATTERN...: until the sender logged any of the
# PATTERNs (fixed strings) N times in all.
xfer_wait_log() {
	local t n=$1 secs=$2 pats=()
	shift 2
	for p in "$@"; do pats+=(-e "$p"); done
	for ((t = 0; t < secs * 10; t++)); do
		[ "$(grep -cF "${pats[@]}" "$XF_DIR/0.log")" -ge "$n" ] && return 0
		sleep 0.1
	done
	return 1
}
