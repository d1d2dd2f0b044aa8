#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Chaos on three rails: a randomised fault schedule (carrier cuts, black
# holes, flaps, netem delay and loss, on the sender's or the receiver's
# side, several rails at once, every rail of one node at once) runs for
# R2CC_CHAOS_SECONDS (default 70) while checked streams from node0 to
# node1 go on, buffers reused as soon as their message completes.  The
# TCP fallback is on (the default), so a rail or the fallback always
# remains: every stream must complete in bounded time, every byte
# verified, no error on either rank, and the kernel logs stay clean.
#
# The schedule is derived from one seed (R2CC_CHAOS_SEED, else random)
# by a small PRNG: the same seed replays the same faults, stream shape
# and notification source (not the same timing: TCG never replays that).
# The seed and the replay command are the first diagnostic line and
# follow every failure; logs of a failed run are kept under
# R2CC_CHAOS_LOGS (default /tmp/r2cc-chaos-SEED; R2CC_CHAOS_KEEP=1 keeps
# them after a pass too).  R2CC_CHAOS_PRINT=1 prints a seed's schedule
# and touches nothing.  scripts/chaos.sh runs this for minutes with new
# seeds on a testbed of its own.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/xfer.sh"

# ------------------------------------------------------------ seed

seed=${R2CC_CHAOS_SEED:-$(((RANDOM << 15 | RANDOM) % 1000000000))}
secs=${R2CC_CHAOS_SECONDS:-70}
if ! [[ $seed =~ ^[0-9]{1,9}$ && $secs =~ ^[0-9]{1,4}$ ]] || [ "$secs" -lt 5 ]; then
	echo "chaos.sh: R2CC_CHAOS_SEED must be 0..999999999 and" \
		"R2CC_CHAOS_SECONDS 5..9999" >&2
	exit "$KSFT_FAIL"
fi
seed=$((10#$seed)) secs=$((10#$secs))
logs=${R2CC_CHAOS_LOGS:-/tmp/r2cc-chaos-$seed}
replay="R2CC_CHAOS_SEED=$seed R2CC_CHAOS_SECONDS=$secs $0"

# Every failed check repeats the seed.
eval "_chaos_tap_ok() $(declare -f ok | sed 1d)"
ok() {
	local f=$_tap_failed
	_chaos_tap_ok "$@"
	[ "$_tap_failed" = "$f" ] ||
		diag "chaos seed $seed failed; replay: $replay; logs: $logs"
}

# A Weyl sequence through murmur3's finaliser: rand N sets R to 0..N-1.
# Never call it in a subshell (the state would not advance).
_rs=$((seed & 0xffffffff))
_mul32() { # A C: Z = A * C mod 2^32, without overflowing 64 bits
	Z=$(((($1 & 0xffff) * $2 + ((($1 >> 16) * ($2 & 0xffff)) << 16)) & 0xffffffff))
}
rand() {
	local z
	_rs=$(((_rs + 0x9e3779b9) & 0xffffffff))
	z=$((_rs ^ (_rs >> 16)))
	_mul32 $z 0x85ebca6b
	z=$((Z ^ (Z >> 13)))
	_mul32 $z 0xc2b2ae35
	z=$((Z ^ (Z >> 16)))
	R=$((z % $1))
}
# pick WORD...: P is one of the words.
pick() {
	local a=("$@")
	rand ${#a[@]}
	P=${a[$R]}
}

now_ms() {
	local t=${EPOCHREALTIME//[.,]/}
	_now=$((10#$t / 1000))
}

# ------------------------------------------------------------ the schedule

NR=3 # rails used (of the testbed's $TB_NICS)

# The stream's shape and the notification source come from the seed too.
pick 262144 1048576 786433
size=$P
pick 1 2 2 4
win=$P
pick kmod kmod verbs
notify=$P

# Actions: cut:N:K, bh:N:K, flap:N:K:PERIOD_MS, netem:N:K:DELAY:LOSS
# (DELAY like 20ms or -, LOSS a percentage or -).
S_ACTS=() S_HOLD=() S_GAP=() S_DESC=()

# one_fault N K [KINDS...]: an action on rail K of node N in A, its
# description in D.
one_fault() {
	local n=$1 k=$2 d l v
	shift 2
	[ $# = 0 ] && set -- cut bh flap netem
	pick "$@"
	case $P in
	cut) A="cut:$n:$k" D="cut node$n rail$k" ;;
	bh) A="bh:$n:$k" D="black hole node$n rail$k" ;;
	flap)
		pick 100 200 300 500
		A="flap:$n:$k:$P" D="flap node$n rail$k every $P ms"
		;;
	netem)
		# Delay, loss, or both.
		rand 3
		v=$R d=- l=-
		[ $v != 1 ] && pick 5ms 20ms 60ms 150ms 400ms && d=$P
		[ $v != 0 ] && pick 1 3 10 30 && l=$P
		A="netem:$n:$k:$d:$l" D="netem node$n rail$k"
		[ $d != - ] && D+=" delay $d"
		[ $l != - ] && D+=" loss $l%"
		;;
	esac
}

gen_schedule() {
	local t=0 i=0 n k m acts desc hold nacts used mode
	while [ $t -lt $((secs * 1000)) ]; do
		acts='' desc=''
		rand 16
		if [ $R -lt 10 ]; then
			# One rail of one node.
			rand 2; n=$R
			rand $NR; k=$R
			one_fault $n $k
			acts=$A desc=$D
			rand 41; hold=$((1000 + R * 100))
		elif [ $R -lt 13 ]; then
			# Two or three rails at once, each its own fault and side.
			rand 2; m=$((2 + R))
			used=
			while [ ${#used} -lt $m ]; do
				rand $NR
				[[ $used == *$R* ]] && continue
				used+=$R
				k=$R
				rand 2; n=$R
				one_fault $n $k
				acts+=" $A" desc+=", $D"
			done
			desc="$m rails at once: ${desc#, }"
			rand 36; hold=$((1500 + R * 100))
		else
			# Every rail of one node: the TCP fallback carries the
			# stream (or what netem leaves of the rails).
			rand 2; n=$R
			pick cut bh mixed
			mode=$P desc=
			for ((k = 0; k < NR; k++)); do
				case $mode in
				mixed) one_fault $n $k cut bh ;;
				*) one_fault $n $k $mode ;;
				esac
				acts+=" $A" desc+=", ${D/ node$n / }"
			done
			case $mode in
			cut) desc="every rail of node$n cut" ;;
			bh) desc="every rail of node$n black-holed" ;;
			*) desc="every rail of node$n: ${desc#, }" ;;
			esac
			rand 41; hold=$((2000 + R * 100))
		fi
		acts=${acts# }
		nacts=$(wc -w <<<"$acts")
		rand 26
		S_ACTS[i]=$acts S_HOLD[i]=$hold S_GAP[i]=$((500 + R * 100))
		S_DESC[i]=$desc
		# What injecting and removing costs, about.
		t=$((t + hold + S_GAP[i] + nacts * 400))
		i=$((i + 1))
	done
}

gen_schedule
NSTEPS=${#S_ACTS[@]}

# R2CC_CHAOS_PRINT=1: print the schedule of this seed, touch nothing.
if [ "${R2CC_CHAOS_PRINT:-0}" != 1 ]; then
	tb_require 2
	if [ "$TB_NICS" -lt 3 ]; then
		trap - EXIT
		skip_all "needs 3 NICs, the testbed has $TB_NICS"
	fi
	plan_later
else
	diag() { local l; while IFS= read -r l; do echo "$l"; done <<<"$*"; }
fi
diag "chaos seed $seed, $secs s (replay: $replay)"
diag "stream: node0 -> node1, messages of $size bytes, $win in flight" \
	"(each buffer reposted as soon as its message completes)," \
	"notification from $([ $notify = kmod ] && echo r2cc.ko ||
		echo verbs events), TCP fallback on"
diag "schedule: $NSTEPS steps over about $secs s"
for ((i = 0; i < NSTEPS; i++)); do
	diag "$(printf '  %2d: %s for %d.%d s, then %d.%d s quiet' $i \
		"${S_DESC[i]}" $((S_HOLD[i] / 1000)) $((S_HOLD[i] / 100 % 10)) \
		$((S_GAP[i] / 1000)) $((S_GAP[i] / 100 % 10)))"
done
[ "${R2CC_CHAOS_PRINT:-0}" = 1 ] && exit 0

# ------------------------------------------------------------ injection

declare -A ACTIVE=()
FLAP_PIDS=() INJ_PIDS=() inject_errors=0 inject_log=
INJ_DIR=$(mktemp -d)

# _inj VERB ARGS...: r2cc-testbed VERB ARGS in the background, so that
# the faults of one step land together; inj_sync waits for them.
_inj() {
	{
		local out
		out=$(tb "$@" 2>&1) ||
			echo "r2cc-testbed $*: $out" >"$INJ_DIR/err.$BASHPID"
	} &
	INJ_PIDS+=($!)
}

inj_sync() {
	local f
	[ ${#INJ_PIDS[@]} = 0 ] || wait "${INJ_PIDS[@]}"
	INJ_PIDS=()
	for f in "$INJ_DIR"/err.*; do
		[ -e "$f" ] || continue
		inject_errors=$((inject_errors + 1))
		inject_log+=$(cat "$f")$'\n'
		rm -f "$f"
	done
}

ms_s() { printf '%d.%03d' $(($1 / 1000)) $(($1 % 1000)); }

# apply ACTION HOLD_MS
apply() {
	local a n k x y
	IFS=: read -r a n k x y <<<"$1"
	case $a in
	cut) _inj link node$n $k down; ACTIVE[$1]=1 ;;
	bh) _inj blackhole node$n $k on; ACTIVE[$1]=1 ;;
	flap)
		tb flap node$n $k --period "$(ms_s $x)" \
			--duration "$(ms_s $2)" >/dev/null 2>&1 &
		FLAP_PIDS+=($!)
		;;
	netem)
		local o=()
		[ "$x" != - ] && o+=(--delay "$x")
		[ "$y" != - ] && o+=(--loss "$y")
		_inj shape node$n $k "${o[@]}"
		ACTIVE[$1]=1
		;;
	esac
}

undo() {
	local a n k
	IFS=: read -r a n k _ <<<"$1"
	case $a in
	cut) _inj link node$n $k up ;;
	bh) _inj blackhole node$n $k off ;;
	netem) _inj shape node$n $k --clear ;;
	esac
	unset "ACTIVE[$1]"
}

wait_flaps() {
	local p
	for p in "${FLAP_PIDS[@]}"; do
		wait "$p" || { inject_errors=$((inject_errors + 1))
			inject_log+="flap (pid $p) failed"$'\n'; }
	done
	FLAP_PIDS=()
}

# Everything back as it was, whatever happened.
restore_all() {
	local a
	inj_sync
	wait_flaps
	for a in "${!ACTIVE[@]}"; do undo "$a"; done
	inj_sync
}

# ------------------------------------------------------------ streams

X_ENV=R2CC_TCP_FALLBACK=1 # the default, said out loud
[ $notify = verbs ] && X_OPT=(--no-kmod) || X_OPT=()
# Which stream a step ran under, and its times from that stream's start.
S_STREAM=() S_AT=() S_END=()
nstream=0 rate=0 hung=0 st_dirs=()

# stream_start MSGS TIMEOUT_S
stream_start() {
	xfer_start "$X_ENV" --msgs "$1" --size $size --window $win \
		--timeout "$2" --ticks -v "${X_OPT[@]}"
	ST_MSGS=$1 ST_TIMEOUT=$2
	st_dirs+=("$XF_DIR")
	# Both logs exist before xfer_streaming greps them.
	for _i in $(seq 100); do
		[ -e "$XF_DIR/0.log" ] && [ -e "$XF_DIR/1.log" ] && break
		sleep 0.05
	done
	if ! xfer_streaming; then
		ST_H0=0
		return 1
	fi
	now_ms
	ST_H0=$_now
	watchdog &
	WD_PID=$!
}

# Both ranks print a tick every 0.5 s while their loop runs, so a log
# that stops growing before the per-rail lines that end the loop means
# a rank blocked inside the library.  Records each rank's longest silence (s) in
# silence.R; after 10 s of it, a snapshot of both nodes (the blocked
# process's kernel stack, links, qdiscs, QPs, the kernel log's tail).
watchdog() {
	local r sz snapped=
	local -a last=(0 0) since=("$SECONDS" "$SECONDS") most=(0 0)
	while kill -0 "$XF_PID0" 2>/dev/null || kill -0 "$XF_PID1" 2>/dev/null; do
		for r in 0 1; do
			# Its loop is over (then it waits for the peer).
			grep -q '^rail [0-9]*: state' "$XF_DIR/$r.log" &&
				since[r]=$SECONDS && continue
			sz=$(stat -c %s "$XF_DIR/$r.log" 2>/dev/null || echo 0)
			[ "$sz" != "${last[r]}" ] && last[r]=$sz since[r]=$SECONDS
			[ $((SECONDS - since[r])) -gt "${most[r]}" ] &&
				most[r]=$((SECONDS - since[r]))
			echo "${most[r]}" >"$XF_DIR/silence.$r"
			if [ $((SECONDS - since[r])) -ge 10 ] && [ -z "$snapped" ]; then
				snapped=1
				snapshot "rank $r silent for 10 s" >"$XF_DIR/snapshot.txt" 2>&1
			fi
		done
		sleep 1
	done
}

snapshot() {
	local i
	echo "$1, $(date)"
	for i in 0 1; do
		echo "=== node$i"
		TB_TIMEOUT=20 tb_exec node$i sh -c 'for p in $(pidof xfer); do
			echo "--- xfer $p, wchan $(cat /proc/$p/wchan)"
			grep State /proc/$p/status; cat /proc/$p/stack; done
			ip -s link; tc -s qdisc; rdma resource show qp
			dmesg | tail -n 40'
	done
}

stream_running() {
	kill -0 "$XF_PID0" 2>/dev/null || kill -0 "$XF_PID1" 2>/dev/null
}

# Wait for both ranks until DEADLINE_MS (host clock); kill them beyond.
stream_wait() {
	local p
	while stream_running; do
		now_ms
		if [ $_now -gt "$1" ]; then
			hung=1
			for p in "$XF_PID0" "$XF_PID1"; do
				pkill -P "$p" 2>/dev/null
			done
			break
		fi
		sleep 0.5
	done
	xfer_wait
}

# Per-step counters from both ranks' logs: the library's warnings (a
# rail failing over, back in service), its repair latencies, and the
# per-rail tick lines (state and bytes every 0.5 s) put on the host's
# time line of the steps.  A log line belongs to the tick before it.
step_report() {
	local s=$1 i
	for ((i = 0; i < NSTEPS; i++)); do
		[ "${S_STREAM[i]}" = "$s" ] || continue
		echo "$i ${S_AT[i]} ${S_AT[i + 1]:-999999999} ${S_STREAM[i + 1]:-x}"
	done | awk -v dir="$XF_DIR" -v nr=$NR -v s=$s '
	function stepof(t,   j) {
		for (j = 0; j < ns; j++)
			if (t >= from[j] && (t < to[j] || j == ns - 1))
				return j
		return -1
	}
	{ ns += 0; id[ns] = $1; from[ns] = $2
	  to[ns] = ($4 == s) ? $3 : 999999999
	  if (ns == 0) from[ns] = -999999999
	  ns++ }
	END {
		if (!ns) exit
		for (rk = 0; rk < 2; rk++) {
			f = dir "/" rk ".log"; t = 0
			while ((getline l < f) > 0) {
				n = split(l, w, " ")
				if (w[1] == "tick") {
					t = w[2] * 1000; j = stepof(t); if (j < 0) continue
					down = 0
					for (r = 0; r < nr && 3 + 2 * r < n; r++) {
						if (w[3 + 2 * r] != 1) { dn[rk, j, r] = 1; down++ }
						b = w[4 + 2 * r]
						if (!((rk, j, r) in b0)) b0[rk, j, r] = last[rk, r] + 0
						b1[rk, j, r] = b; last[rk, r] = b
					}
					if (down == nr) alldown[rk, j]++
					continue
				}
				j = stepof(t); if (j < 0) continue
				if (l ~ /failing over/ && w[3] == "2:") {
					pf[rk, j]++ # a failback probe that failed
				} else if (l ~ /failing over/) {
					fo[rk, j]++
					match(l, /rail [0-9]+ \([^)]*\): [^;]*/)
					x = substr(l, RSTART, RLENGTH); sub(/ \([^)]*\)/, "", x)
					if (!((rk, j, x) in nwhy))
						why[rk, j] = why[rk, j] SUBSEP x
					nwhy[rk, j, x]++
				}
				if (l ~ /back in service|reconnected by peer/) fb[rk, j]++
				if (l ~ /repaired in/) {
					match(l, /repaired in [0-9.]+/)
					ms = substr(l, RSTART + 12, RLENGTH - 12) + 0
					rp[rk, j]++; if (ms > rmax[rk, j]) rmax[rk, j] = ms
					rall = rall (rall ? " " : "") sprintf("%.0f", ms)
				}
			}
			close(f)
		}
		for (j = 0; j < ns; j++) {
			o = sprintf("step %d: sender %d failovers, %d repairs", id[j],
				fo[0, j], rp[0, j])
			if (rp[0, j]) o = o sprintf(" (max %.1f ms)", rmax[0, j])
			o = o sprintf(", %d back, %d probes failed; receiver %d failovers, %d back;",
				fb[0, j], pf[0, j], fo[1, j], fb[1, j])
			o = o " rail MB"
			for (r = 0; r < nr; r++) {
				mb = ((0, j, r) in b1) ? (b1[0, j, r] - b0[0, j, r]) / 1048576 : 0
				o = o sprintf(" %s%.1f", r ? "/" : "", mb)
				if (dn[0, j, r]) o = o "(d)"
			}
			if (alldown[0, j]) o = o sprintf(", no rail up for %.1f s", alldown[0, j] / 2)
			print o
			for (rk = 0; rk < 2; rk++) {
				if (why[rk, j] == "") continue
				m = split(substr(why[rk, j], 2), xs, SUBSEP); o = ""
				for (q = 1; q <= m; q++)
					o = o sprintf("%s%s x%d", q > 1 ? "; " : "", xs[q],
						nwhy[rk, j, xs[q]])
				print "    " (rk ? "receiver" : "sender") " failovers: " o
			}
		}
		if (rall != "") print "repair latencies (ms): " rall
	}'
}

# stream_check: the TAP checks and counters of the stream just ended.
stream_check() {
	local s=$nstream k
	xfer_ok "stream $s" "$ST_MSGS" "$size"
	is "$(xfer_field 0 err)/$(xfer_field 1 err)" "0/0" \
		"stream $s: no error on either rank"
	ok "$([ $hung = 0 ] && echo 1)" "stream $s: ended in bounded time"
	[ -n "${WD_PID:-}" ] && wait "$WD_PID" 2>/dev/null
	WD_PID=
	k="$(cat "$XF_DIR/silence.0" 2>/dev/null || echo 0)/$(cat "$XF_DIR/silence.1" 2>/dev/null || echo 0)"
	ok "$([ "${k%/*}" -lt 30 ] && [ "${k#*/}" -lt 30 ] && echo 1)" \
		"stream $s: neither rank blocked 30 s in the library (longest silence ${k%/*} s, ${k#*/} s)"
	[ -s "$XF_DIR/snapshot.txt" ] &&
		diag "stream $s: a rank went silent; snapshot:" "$(cat "$XF_DIR/snapshot.txt")"
	diag "stream $s: sender $(sed -n 's/^xfer-result: //p' "$XF_DIR/0.log")"
	diag "stream $s: receiver failovers=$(xfer_field 1 failovers)" \
		"failbacks=$(xfer_field 1 failbacks)"
	for k in 0 1 2; do
		diag "stream $s: sender $(grep "^rail $k:" "$XF_DIR/0.log")"
	done
	# The next stream is sized by this one's pace.
	k=$(xfer_field 0 mbps)
	k=$(awk -v m="${k:-0}" 'BEGIN { printf "%d", m * 1e6 / 8 }')
	[ "$k" -gt 0 ] && rate=$k
	k=$(step_report "$s")
	[ -z "$k" ] || diag "$k"
	[ $_tap_failed = 0 ] || xfer_diag
}

# msgs_for SECONDS: messages that last about that long without faults.
msgs_for() {
	M=$((rate * $1 / size))
	[ $M -lt 8 ] && M=8
	[ $M -gt 20000 ] && M=20000
}

# ------------------------------------------------------------ cleanup

save_logs() {
	local d i
	[ $_tap_failed = 0 ] && [ "${R2CC_CHAOS_KEEP:-0}" != 1 ] && return
	mkdir -p "$logs" || return
	{
		echo "seed $seed secs $secs: $replay"
		for ((i = 0; i < NSTEPS; i++)); do
			echo "step $i stream ${S_STREAM[i]:-} at ${S_AT[i]:-} end ${S_END[i]:-} ms: ${S_DESC[i]} [${S_ACTS[i]}] hold ${S_HOLD[i]} gap ${S_GAP[i]}"
		done
		printf '%s' "$inject_log"
	} >"$logs/schedule.txt"
	i=0
	for d in "${st_dirs[@]}"; do
		[ -d "$d" ] && cp "$d/0.log" "$logs/stream$i.sender.log" &&
			cp "$d/1.log" "$logs/stream$i.receiver.log"
		[ -s "$d/snapshot.txt" ] && cp "$d/snapshot.txt" "$logs/stream$i.snapshot.txt"
		i=$((i + 1))
	done
	for i in 0 1; do
		tb_exec node$i dmesg >"$logs/node$i.dmesg" 2>&1
	done
	tb status >"$logs/testbed-status.txt" 2>&1
}

cleanup() {
	local d p
	restore_all
	if [ -n "${XF_PID0:-}" ] && stream_running; then
		for p in "$XF_PID0" "$XF_PID1"; do pkill -P "$p" 2>/dev/null; done
		xfer_wait
	fi
	[ -n "${WD_PID:-}" ] && wait "$WD_PID" 2>/dev/null
	save_logs
	for d in "${st_dirs[@]}"; do rm -rf "$d"; done
	st_dirs=()
	rm -rf "$INJ_DIR"
}
trap '_rc=$?; cleanup; (exit $_rc); tb_finish' EXIT
trap 'exit 130' INT TERM

# ------------------------------------------------------------ the run

if [ $notify = kmod ]; then
	run_ok "insmod r2cc.ko on node0" kmod_load node0
	run_ok "insmod r2cc.ko on node1" kmod_load node1
else
	tb_exec node0 sh -c 'rmmod r2cc 2>/dev/null; true'
	tb_exec node1 sh -c 'rmmod r2cc 2>/dev/null; true'
fi

# A short stream without faults gives the pace to size the others.
stream_start 24 60
now_ms
stream_wait $((_now + 90000))
xfer_ok "baseline, no fault" 24 "$size"
mbps=$(xfer_field 0 mbps)
rate=$(awk -v m="${mbps:-0}" 'BEGIN { printf "%d", m * 1e6 / 8 }')
diag "baseline: $mbps Mbit/s; $(sed -n 's/^xfer-result: //p' "$XF_DIR/0.log")"
[ "$rate" -gt 0 ] || rate=$((4 << 20))
[ $_tap_failed = 0 ] || xfer_diag

now_ms
T_CHAOS=$_now T_PLAN_END=$((_now + secs * 1000))
# stream_next: a stream for the rest of the schedule (at least 10 s).
stream_next() {
	local left
	now_ms
	left=$(((T_PLAN_END - _now) / 1000))
	[ $left -lt 10 ] && left=10
	[ $left -gt 150 ] && left=150
	msgs_for $left
	nstream=$((nstream + 1)) hung=0
	stream_start $M $((left + 60 < 200 ? left + 60 : 200))
	ok "$([ "$ST_H0" != 0 ] && echo 1)" \
		"stream $nstream: $M messages, both ranks streaming"
}
stream_next
for ((i = 0; i < NSTEPS; i++)); do
	[ "$ST_H0" = 0 ] && break # a stream that never started
	if ! stream_running; then
		stream_wait 0
		stream_check
		stream_next
	fi
	now_ms
	S_STREAM[i]=$nstream S_AT[i]=$((_now - ST_H0))
	for a in ${S_ACTS[i]}; do apply "$a" "${S_HOLD[i]}"; done
	inj_sync
	sleep "$(ms_s "${S_HOLD[i]}")"
	restore_all
	now_ms
	S_END[i]=$((_now - ST_H0))
	sleep "$(ms_s "${S_GAP[i]}")"
done
restore_all
now_ms
diag "chaos over after $(((_now - T_CHAOS) / 1000)) s ($NSTEPS steps," \
	"$nstream stream$([ $nstream = 1 ] || echo s)); waiting for stream $nstream"
stream_wait $((ST_H0 + ST_TIMEOUT * 1000 + 30000))
stream_check
is "$inject_errors" 0 "every fault was injected and removed"
[ "$inject_errors" = 0 ] || diag "$inject_log"

# After the chaos, with every fault removed, all three rails work.
nstream=$((nstream + 1)) hung=0
stream_start 24 60
now_ms
stream_wait $((_now + 90000))
xfer_ok "after the chaos" 24 "$size"
for k in 0 1 2; do
	ok "$([ "$(xfer_rail 0 $k bytes)" -gt 0 ] 2>/dev/null && echo 1)" \
		"after the chaos: rail $k carries bytes"
done
[ $_tap_failed = 0 ] || xfer_diag
now_ms
diag "chaos seed $seed: $((_now / 1000 - T_CHAOS / 1000)) s from the first fault to the end"

if [ $notify = kmod ]; then
	run_ok "rmmod r2cc on node0" kmod_unload node0
	run_ok "rmmod r2cc on node1" kmod_unload node1
fi
exit 0
