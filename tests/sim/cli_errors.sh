#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Every flag of r2cc-sim with wrong, short, oversized, out-of-range and
# hostile values: exit status 2, a message on stderr naming the flag, no
# crash (no signal, no sanitizer-style abort), nothing half-printed.
. "$(dirname "$0")/../lib/tap.sh"
SIM=${BUILD:-$R2CC_REPO/build}/tools/r2cc-sim
[ -x "$SIM" ] || skip_all "r2cc-sim not built ($SIM)"

printf -v long '%5000s' x
hostile=("" "abc" "-1" "1e999" "99999999999999999999" "%s%n%s;rm -rf /"
	 "$long" "nan" $'1\n2')

# flag | extra bad values specific to it (out of range, short)
flags=(
	"nodes|0 65537 1.5"
	"gpus|0 65"
	"nics|0 65"
	"nic-gbps|0 -5 100001"
	"nic-lat-us|-1 1000001"
	"intra-gbps|0 1e7"
	"fuse|0 65"
	"chunks|-1 4097"
	"workload|Train coll,train"
	"coll|allreduc ALLREDUCE"
	"size|0 1Q -1K 2e15"
	"model|gpt-1b gpt"
	"tp|0 4097"
	"pp|0 4097"
	"batch|0 100000001"
	"seq|0"
	"micro|0 4097"
	"mfu|0 1.5"
	"gpu-tflops|0"
	"overlap|-0.1 1.1"
	"prompt|0"
	"output|0"
	"concurrency|0 1000001"
	"hbm-tbps|0"
	"iters|0 1e10 2.5"
	"strategy|nccl, ,nccl nccl,,r2cc bogus"
	"ib-timeout|-1 32"
	"ib-retry|-1 8"
	"r2ccl-detect-s|-1 1e7"
	"port-detect-us|-1"
	"stall-ms|-1"
	"restart-s|-1"
	"ckpt-interval-s|-1"
	"ckpt-cost-s|-1"
	"fail|1:2 1:2@-1 1:2@5..1 99:0@1 0:99@1 0:0@1..x"
	"degrade|0:0@1 0:0@1=0 0:0@1=1 0:0@1=-0.5"
	"mtbf-h|-1"
	"repair-s|0 -1"
	"flap-prob|-0.1 1.1"
	"flap-count|0 1001"
	"flap-period-s|0"
	"degrade-prob|2"
	"degrade-frac|0 1"
	"silent-prob|1.5"
	"seed|-1 1e20"
	"horizon-s|-1"
	"csv|maybe 2"
	"plot|plot.pdf x .png"
	"config|/nonexistent/file /"
)

plan $(( ${#flags[@]} + 9 ))

# check FLAG VALUE: usage error, message names the flag, no crash
bad_one() {
	local flag=$1 val=$2 out rc
	out=$("$SIM" --iters 1 "--$flag" "$val" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" != 2 ] || [[ "$out" != *"r2cc-sim: "* ]]; then
		diag "--$flag '${val:0:40}': exit $rc: ${out:0:200}"
		return 1
	fi
	return 0
}

for entry in "${flags[@]}"; do
	flag=${entry%%|*}
	read -ra extra <<<"${entry#*|}"
	fails=0
	for v in "${hostile[@]}" "${extra[@]}"; do
		case "$flag" in
		plot) [[ "$v" == *.png || "$v" == *.svg ]] && continue ;;
		esac
		bad_one "$flag" "$v" || fails=$((fails + 1))
	done
	ok "$([ $fails = 0 ] && echo 1)" "--$flag: bad values are usage errors"
done

run_fails "a flag without its value" "needs a value" "$SIM" --nodes
run_fails "an unknown flag" "unknown option" "$SIM" --frobnicate 1
run_fails "a bare argument" "unexpected argument" "$SIM" nodes
out=$("$SIM" --nics 2 --fail 0:0@1 --fail 0:0@2 2>&1); rc=$?
ok "$([ $rc = 2 ] && grep -q "more failures than NICs" <<<"$out" && echo 1)" \
	"failing a NIC that is already down: more failures than NICs"
out=$("$SIM" --nics 2 --fuse 3 2>&1); rc=$?
ok "$([ $rc = 2 ] && grep -q fuse <<<"$out" && echo 1)" "--fuse above --nics"
out=$("$SIM" --flap-prob 0.6 --degrade-prob 0.6 2>&1); rc=$?
ok "$([ $rc = 2 ] && echo 1)" "flap + degrade probabilities above 1"
out=$("$SIM" --workload train --nodes 6 --pp 4 2>&1); rc=$?
ok "$([ $rc = 2 ] && grep -q "must divide" <<<"$out" && echo 1)" \
	"impossible training layout"
out=$("$SIM" --workload serve --tp 48 --nodes 4 2>&1); rc=$?
ok "$([ $rc = 2 ] && grep -q "needs 6 nodes" <<<"$out" && echo 1)" \
	"serving replica larger than the cluster"
out=$("$SIM" --fail 20:0@1 2>&1); rc=$?
ok "$([ $rc = 2 ] && grep -q "16 nodes" <<<"$out" && echo 1)" \
	"event on a node the default cluster does not have"
done_testing
