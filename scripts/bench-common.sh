# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0-only
# Helpers the benchmark scripts share; source it after setting $tb (the
# testbed command) with a 2-node testbed up.

# median, p99: of the numbers on standard input, one per line (nothing
# for no input).
median() { sort -g | awk '{a[NR] = $1} END {
	if (NR) print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
p99() { sort -g | awk '{a[NR] = $1} END {
	if (NR) { i = int(NR * 0.99 + 0.999); if (i > NR) i = NR; print a[i] } }'; }

# write_bw RAIL SECONDS: ib_write_bw node0 -> node1, prints Mbit/s.
# perftest's defaults (128 writes of 64 KiB in flight, a 67 ms ACK
# timeout) queue 8 MiB in a shaped rail: at 8 Mbit/s the writes time out
# in the shaper's queue and are sent again, and it measured 2.9 Mbit/s;
# 8 in flight and 537 ms (-u 17, as the benches give libr2cc) measured
# 7.6, and 28.3 against 28.4 at 30 Mbit/s.
WRITE_BW_OPTS="-t 8 -u 17"
write_bw() {
	: "${tb:?bench-common.sh: set tb to the testbed command first}"
	# shellcheck disable=SC2086 # options, split on purpose
	"$tb" exec --timeout 120 node1 -- ib_write_bw -d "rxe$1" -x 1 \
		-s 65536 -D "$2" -F --report_gbits $WRITE_BW_OPTS \
		>/dev/null 2>&1 &
	local srv=$!
	for _ in $(seq 100); do
		"$tb" exec node1 -- ss -Htln 'sport = :18515' | grep -q . && break
		sleep 0.2
	done
	# shellcheck disable=SC2086
	"$tb" exec --timeout 120 node0 -- ib_write_bw -d "rxe$1" -x 1 \
		-s 65536 -D "$2" -F --report_gbits $WRITE_BW_OPTS \
		"198.18.$1.2" 2>&1 |
		awk '$1 == 65536 && NF >= 5 {printf "%.1f\n", $4 * 1000}'
	wait "$srv"
}

# carrier_changes BENCH N: N real carrier changes of node0's rxe0 (down,
# up, down, ...; 0.5 s apart) while BENCH (tests/kmod/bench) waits for
# them through /dev/r2cc and ibv_get_async_event; prints the median and
# p99 of r2cc's arrival minus verbs', and in how many of the downs and of
# the ups r2cc was first.
carrier_changes() {
	: "${tb:?bench-common.sh: set tb to the testbed command first}"
	local out i pid
	out=$(mktemp)
	"$tb" exec --timeout 300 node0 -- "$1" link "$2" >"$out" 2>&1 &
	pid=$!
	for _ in $(seq 100); do grep -q ready "$out" && break; sleep 0.1; done
	for ((i = 0; i < $2 / 2; i++)); do
		"$tb" link node0 0 down; sleep 0.5
		"$tb" link node0 0 up; sleep 0.5
	done
	wait "$pid"
	awk '/^change/ {print $2, $4 - $6}' "$out" | sort -k2 -g | awk '
		{ v[NR] = $2; if ($2 < 0) { first++; if ($1 % 2) down++; else up++ } }
		END {
			if (!NR) { print "no changes seen"; exit 1 }
			p = int(NR * 0.99); if (p < 1) p = 1
			printf "r2cc minus verbs arrival: median %.1f us, p99 %.1f us; r2cc first in %d of %d changes (%d of %d downs, %d of %d ups)\n", v[int((NR + 1) / 2)] / 1e3, v[p] / 1e3, first, NR, down, int((NR + 1) / 2), up, int(NR / 2)
		}' || cat "$out"
	rm -f "$out"
}
