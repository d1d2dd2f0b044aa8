#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# r2ccctl's command line on the host: help for every verb, and each wrong,
# missing, out-of-range or hostile argument a usage error (exit 2) that
# names the problem, before any netlink.  With no r2cc.ko on the host,
# the verbs exit 3 and say so (tests/testbed/ctl.sh runs them for real).
. "$(dirname "$0")/../lib/tap.sh"
CTL=$R2CC_BUILD/tools/r2ccctl
[ -x "$CTL" ] || skip_all "r2ccctl is not built"
plan_later

for h in "--help" "-h" "help" "help status" "help watch" "help inject" \
	"help prometheus" "status --help" "watch --help" "inject --help" \
	"inject rxe0 -h" "prometheus --help" "help jobs" "jobs --help"; do
	# shellcheck disable=SC2086
	out=$("$CTL" $h 2>&1)
	ok "$([ $? = 0 ] && grep -q '^usage: r2ccctl' <<<"$out" && echo 1)" \
		"'$h' prints usage, exit 0"
done
out=$("$CTL" --version)
rc=$?
abi=$(sed -n 's/^#define R2CC_ABI_VERSION[[:space:]]*\([0-9]*\).*/\1/p' \
	"$(dirname "$0")/../../include/uapi/linux/r2cc.h")
ok "$([ $rc = 0 ] && grep -q "^r2ccctl [0-9.]* (r2cc ABI $abi," <<<"$out" && echo 1)" \
	"--version: $out (the header's ABI $abi)"

long=$(printf 'x%.0s' $(seq 300))
cases=(
	"no verb||no verb given"
	"unknown verb|frobnicate|unknown verb 'frobnicate'"
	"unknown option|--colour status|unknown option '--colour'"
	"help for no verb|help frobnicate|help: no verb 'frobnicate'"
	"status with an argument|status extra|status: unexpected 'extra'"
	"watch: unknown option|watch --follow|watch: bad option '--follow'"
	"watch: stray argument|watch now|watch: unexpected 'now'"
	"watch --count 0|watch --count 0|--count: '0' is not"
	"watch --count -1|watch --count -1|--count: '-1' is not"
	"watch --count huge|watch --count 1000000001|--count: '1000000001'"
	"watch --count hex|watch --count 0x10|--count: '0x10'"
	"watch --count missing|watch --count|watch: bad option '--count'"
	"watch --since garbage|watch --since abc|--since: 'abc'"
	"watch --since negative|watch --since -5|--since: '-5'"
	"watch --since overflow|watch --since 99999999999999999999|--since:"
	"watch --timeout 0|watch --timeout 0|--timeout: '0' is not"
	"watch --timeout nan|watch --timeout nan|--timeout: 'nan'"
	"watch --timeout inf|watch --timeout inf|--timeout: 'inf'"
	"watch --timeout too long|watch --timeout 86401|--timeout: '86401'"
	"watch --timeout trailing|watch --timeout 5s|--timeout: '5s'"
	"inject: nothing|inject|needs DEV PORT"
	"inject: too many|inject rxe0 1 down now|too many arguments"
	"inject: bad kind|inject rxe0 1 sideways|'sideways' is not down"
	"inject: bad port|inject rxe0 one down|'one' is not a port number"
	"inject: port overflow|inject rxe0 4294967296 down|'4294967296' is not"
	"inject: port 0 down|inject rxe0 0 down|PORT from 1"
	"inject: fatal on a port|inject rxe0 1 fatal|PORT must be 0"
	"inject: hostile port|inject rxe0 $long down|is not a port number"
	"prometheus: --output without FILE|prometheus --output|--output needs a FILE"
	"prometheus: empty FILE|prometheus --output=|bad arguments"
	"prometheus: stray argument|prometheus now|bad arguments"
	"prometheus: FILE too long|prometheus --output /$(printf 'y%.0s' $(seq 4100))|--output: too long"
)
for c in "${cases[@]}"; do
	IFS='|' read -r desc args msg <<<"$c"
	# shellcheck disable=SC2086
	out=$("$CTL" $args 2>&1)
	rc=$?
	grep -qF -- "$msg" <<<"$out"
	ok "$([ $rc = 2 ] && [ $? = 0 ] && echo 1)" "$desc: exit $rc, '$msg'"
done

if [ -e /sys/module/r2cc ]; then
	skip "r2cc.ko is loaded on this host"
else
	for v in status "--json status" "status --json" "watch --count 1" \
		"inject rxe0 1 up" \
		prometheus; do
		# shellcheck disable=SC2086
		out=$("$CTL" $v 2>&1)
		rc=$?
		ok "$([ $rc = 3 ] && grep -q 'r2cc.ko is not loaded' <<<"$out" && echo 1)" \
			"without r2cc.ko: '$v' exits 3 and says so"
	done
fi
done_testing
