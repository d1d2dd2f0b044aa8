#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Output: the table and the CSV carry one row per chosen strategy with the
# same numbers; --help and --version exit 0; a training run at 64 GPUs with
# one failure shows r2cc ahead of NCCL's restart.
. "$(dirname "$0")/../lib/tap.sh"
SIM=${BUILD:-$R2CC_REPO/build}/tools/r2cc-sim
[ -x "$SIM" ] || skip_all "r2cc-sim not built ($SIM)"

plan 8
run_ok "--help" "$SIM" --help
is "$("$SIM" --version)" "r2cc-sim 0.1.0" "--version"

csv=$("$SIM" --nodes 8 --iters 50 --fail 2:3@1..30 --csv)
is "$(head -1 <<<"$csv" | tr ',' '\n' | wc -l)" 12 "CSV header: 12 columns"
is "$(tail -n +2 <<<"$csv" | cut -d, -f1 | tr '\n' ' ')" \
	"nccl nccl-failover r2ccl-balance r2cc-allreduce r2cc r2cc-overlap r2cc-lib r2cc-optimal r2cc-lib-mesh r2cc-lib-ar " \
	"CSV: one row per strategy, in order"
bad=$(tail -n +2 <<<"$csv" | awk -F, 'NF != 12 || $2 <= 0 || $3 <= 0' )
is "$bad" "" "CSV: every row complete with positive times"
tab=$("$SIM" --nodes 8 --iters 50 --fail 2:3@1..30 --strategy r2cc)
t1=$(awk '$1 == "r2cc" { print $2 }' <<<"$tab")
t2=$(awk -F, '$1 == "r2cc" { printf "%.6g\n", $2 }' <<<"$csv")
is "$t1" "$t2" "table and CSV agree on r2cc's total"

tr=$("$SIM" --workload train --nodes 8 --model gpt-13b --iters 2000 \
	--fail 3:0@100 --csv)
r2=$(awk -F, '$1 == "r2cc" { print $4 }' <<<"$tr")
nc=$(awk -F, '$1 == "nccl" { print $4 }' <<<"$tr")
ok "$(awk -v a="$r2" -v b="$nc" \
	'BEGIN { print (a < 0.5 && b > 1 && b > 10 * a) }')" \
	"training, 64 GPUs, one NIC lost: r2cc ${r2}% vs nccl ${nc}%"
sv=$("$SIM" --workload serve --nodes 2 --tp 16 --iters 100 --fail 1:1@5 \
	--strategy nccl --csv)
ok "$(awk -F, '$1 == "nccl" && $10 == 32 { print 1 }' <<<"$sv")" \
	"serving: nccl recomputes the 32 in-flight requests"
done_testing
