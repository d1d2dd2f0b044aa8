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
write_bw() {
	: "${tb:?bench-common.sh: set tb to the testbed command first}"
	"$tb" exec --timeout 120 node1 -- ib_write_bw -d "rxe$1" -x 1 \
		-s 65536 -D "$2" -F --report_gbits >/dev/null 2>&1 &
	local srv=$!
	for _ in $(seq 100); do
		"$tb" exec node1 -- ss -Htln 'sport = :18515' | grep -q . && break
		sleep 0.2
	done
	"$tb" exec --timeout 120 node0 -- ib_write_bw -d "rxe$1" -x 1 \
		-s 65536 -D "$2" -F --report_gbits "198.18.$1.2" 2>&1 |
		awk '$1 == 65536 && NF >= 5 {printf "%.1f\n", $4 * 1000}'
	wait "$srv"
}
