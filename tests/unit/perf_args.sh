#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# r2cc-perf's command line on the host, no RDMA needed: every bad flag or
# value exits 2 with a message naming it, before any rendezvous; --help
# exits 0 and documents every flag.
. "$(dirname "$0")/../lib/tap.sh"
PERF=${BUILD:-$R2CC_REPO/build}/tools/r2cc-perf
[ -x "$PERF" ] || skip_all "r2cc-perf not built ($PERF)"

# A rendezvous that would be valid, so each case fails on its own flag.
# Nothing listens there: a case that got past parsing would hang for at
# most --timeout, and that shows as exit 1, not 2.
unset R2CC_ROOT R2CC_RANK RANK R2CC_WORLD_SIZE WORLD_SIZE MASTER_ADDR \
	MASTER_PORT
good=(--root 127.0.0.1:9 --rank 0 --timeout 1)

# usage_fails DESCRIPTION PATTERN ARGS...: exit 2, PATTERN on stderr,
# nothing on stdout.
usage_fails() {
	local desc=$1 pat=$2 out err rc
	shift 2
	err=$(timeout 20 "$PERF" "$@" 2>&1 >/dev/null)
	rc=$?
	out=$(timeout 20 "$PERF" "$@" 2>/dev/null)
	ok "$([ $rc = 2 ] && [ -z "$out" ] && grep -Eq -- "$pat" <<<"$err" &&
		echo 1)" "$desc"
	[ $rc = 2 ] && grep -Eq -- "$pat" <<<"$err" ||
		diag "exit $rc, want 2 and /$pat/: $err"
}

cases=(
	"unknown option|unknown option.*--frobnicate|--frobnicate"
	"unknown short option|unknown option.*-Z|-Z"
	"positional argument|unexpected argument|stray"
	"--size 0|--size.*out of range|--size 0"
	"--size garbage|--size.*not a size|--size 12xyz"
	"--size negative|--size.*not a size|--size -5"
	"--size empty|--size.*not a size|--size="
	"--size too big|--size.*out of range|--size 2G"
	"--size overflow|--size|--size 99999999999999999999999"
	"--size without value|--size needs a value|--size"
	"--window 0|--window.*out of range|--window 0"
	"--window 65|--window.*out of range|--window 65"
	"--window garbage|--window.*not a whole number|--window four"
	"--window with --lat|--window applies to --bw|--lat --window 2"
	"--sweep 8:4|--sweep.*MIN.*above MAX|--sweep 8:4"
	"--sweep without colon|--sweep.*MIN:MAX|--sweep 8"
	"--sweep bad MAX|--sweep MAX|--sweep 8:lots"
	"--sweep and --size|exclude each other|--sweep 8:64 --size 8"
	"--iters 0|--iters.*out of range|--iters 0"
	"--iters and --duration|exclude each other|--iters 5 --duration 1"
	"--duration 0|--duration.*out of range|--duration 0"
	"--duration nan|--duration.*not a number|--duration nan"
	"--duration -1|--duration.*not a number|--duration -1"
	"--interval-ms 0|--interval-ms.*out of range|--interval-ms 0"
	"--interval-ms garbage|--interval-ms.*not a whole number|--interval-ms 1.5"
	"--timeout 0|--timeout.*out of range|--timeout 0"
	"--at without colon|--at.*no colon|--at 5"
	"--at empty command|--at.*empty COMMAND|--at 5:"
	"--at bad time|--at.*not a number|--at soon:true"
	"--at negative time|--at.*not a number|--at -1:true"
	"--bw and --lat|--bw, --lat and --coll exclude each other|--bw --lat"
	"--coll unknown kind|--coll.*not allreduce|--coll alltoall"
	"--coll empty|--coll.*not allreduce|--coll="
	"--coll without value|--coll needs a value|--coll"
	"--coll and --lat|exclude each other|--coll allreduce --lat"
	"--coll and --window|--window applies to --bw only|--coll allreduce --window 2"
	"--coll and --duration|--duration applies to --bw and --lat|--coll allgather --duration 2"
	"--coll and --at|--at applies to --bw and --lat|--coll broadcast --at 1:true"
	"--dtype unknown|--dtype: 'float' is not int8|--coll allreduce --dtype float"
	"--dtype empty|--dtype: .* is not int8|--coll allreduce --dtype="
	"--dtype upper case|--dtype: 'INT32' is not|--coll allreduce --dtype INT32"
	"--dtype without value|--dtype needs a value|--coll allreduce --dtype"
	"--dtype without --coll|--dtype and --op apply to --coll only|--bw --dtype int8"
	"--op unknown|--op: 'mean' is not sum|--coll allreduce --op mean"
	"--op a format string|--op: .* is not sum|--coll allreduce --op %s%n%x"
	"--op without --coll|--dtype and --op apply to --coll only|--lat --op max"
	"--op with allgather|--op applies to the reductions|--coll allgather --op max"
	"--op with broadcast|--op applies to the reductions|--op min --coll broadcast"
	"--mesh without --coll|--mesh applies to --coll only|--mesh"
	"--mesh with --lat|--mesh applies to --coll only|--lat --mesh"
	"--mesh with a value|--mesh takes no value|--coll allreduce --mesh=1"
	"--bw takes no value|--bw takes no value|--bw=1"
	"--chunk too small|--chunk.*out of range|--chunk 1K"
	"--chunk too big|--chunk.*out of range|--chunk 128M"
	"--stall-ms 0|--stall-ms.*out of range|--stall-ms 0"
	"--stall-ms above the library's|--stall-ms.*out of range|--stall-ms 60001"
	"--rail-depth 0|--rail-depth.*out of range|--rail-depth 0"
	"--rail-depth above the library's|--rail-depth.*out of range|--rail-depth 129"
	"--peer-timeout-ms garbage|--peer-timeout-ms|--peer-timeout-ms x"
	"--peer-timeout-ms below the library's|--peer-timeout-ms.*out of range|--peer-timeout-ms 99"
	"--peer-timeout-ms above the library's|--peer-timeout-ms.*out of range|--peer-timeout-ms 600001"
	"--ctrl-if too long|--ctrl-if.*1..15 characters|--ctrl-if abcdefghijklmnop"
	"--tcp-fallback maybe|--tcp-fallback.*on or off|--tcp-fallback maybe"
	"--nics empty|--nics.*empty|--nics="
	"--csv empty|--csv.*empty|--csv="
	"ring too large|limit|--window 64 --size 1G"
)

# Rendezvous errors: without $good.
rdv_cases=(
	"missing root|no rendezvous address|--rank 0"
	"--root without port|--root.*HOST:PORT|--root host --rank 0"
	"--root port 0|--root.*HOST:PORT|--root host:0 --rank 0"
	"--root port too big|--root.*HOST:PORT|--root host:70000 --rank 0"
	"missing rank|no rank|--root 127.0.0.1:9"
	"--rank >= world|rank 2.*below the world size|--root 127.0.0.1:9 --rank 2"
	"--rank garbage|--rank.*not a whole number|--root 127.0.0.1:9 --rank one"
	"--world 3|exactly 2 ranks|--root 127.0.0.1:9 --rank 0 --world 3"
	"--world 1|exactly 2 ranks|--root 127.0.0.1:9 --rank 0 --world 1"
	"--coll, --world 4097|out of range for --coll|--root 127.0.0.1:9 --rank 0 --world 4097 --coll allreduce"
	"--coll, --rank >= world|rank 4.*below the world size 4|--root 127.0.0.1:9 --rank 4 --world 4 --coll allreduce"
)

plan $((${#cases[@]} + ${#rdv_cases[@]} + 11))

for c in "${cases[@]}"; do
	IFS='|' read -r desc pat args <<<"$c"
	# shellcheck disable=SC2086
	usage_fails "$desc" "$pat" "${good[@]}" $args
done
for c in "${rdv_cases[@]}"; do
	IFS='|' read -r desc pat args <<<"$c"
	# shellcheck disable=SC2086
	usage_fails "$desc" "$pat" --timeout 1 $args
done

# The environment is checked like the flags.
err=$(R2CC_ROOT=127.0.0.1:9 R2CC_RANK=x timeout 20 "$PERF" 2>&1)
rc=$?
ok "$([ $rc = 2 ] && grep -q 'R2CC_RANK' <<<"$err" && echo 1)" \
	"bad \$R2CC_RANK exits 2 naming it"
err=$(R2CC_ROOT=nocolon R2CC_RANK=0 timeout 20 "$PERF" 2>&1)
rc=$?
ok "$([ $rc = 2 ] && grep -q 'R2CC_ROOT' <<<"$err" && echo 1)" \
	"bad \$R2CC_ROOT exits 2 naming it"
err=$(MASTER_ADDR=127.0.0.1 RANK=0 timeout 20 "$PERF" 2>&1)
rc=$?
ok "$([ $rc = 2 ] && grep -q 'MASTER_PORT' <<<"$err" && echo 1)" \
	"\$MASTER_ADDR without \$MASTER_PORT exits 2"
err=$(R2CC_ROOT=127.0.0.1:9 RANK=0 WORLD_SIZE=4 timeout 20 "$PERF" 2>&1)
rc=$?
ok "$([ $rc = 2 ] && grep -q 'WORLD_SIZE' <<<"$err" && echo 1)" \
	"\$WORLD_SIZE 4 exits 2"

# --help: exit 0, on stdout, every long option documented.
out=$("$PERF" --help 2>/dev/null)
rc=$?
is "$rc" 0 "--help exits 0"
ok "$(grep -q 'Usage: r2cc-perf' <<<"$out" && echo 1)" "--help prints usage"
missing=
for f in bw lat coll size sweep iters duration window no-verify interval-ms \
	timeline csv at timeout verbose root rank world chunk stall-ms \
	rail-depth peer-timeout-ms tcp-fallback nics ctrl-if no-kmod help \
	mesh dtype op; do
	grep -q -- "--$f\b" <<<"$out" || missing="$missing --$f"
done
ok "$([ -z "$missing" ] && echo 1)" "--help documents every flag${missing:+ (missing:$missing)}"
"$PERF" -h >/dev/null 2>&1
is "$?" 0 "-h exits 0"

# Parsing comes first: a valid command line gets as far as the rendezvous
# (nothing listens at port 9), which fails with 1, not 2.
timeout 30 "$PERF" --root 127.0.0.1:9 --rank 1 --timeout 1 --size 4K \
	--iters 10 --at '1:true' >/dev/null 2>&1
rc=$?
ok "$([ $rc = 1 ] && echo 1)" "a valid command line is not a usage error (exit $rc)"
timeout 30 "$PERF" --root 127.0.0.1:9 --rank 2 --world 3 --timeout 1 \
	--coll reduce_scatter --sweep 4K:64K --iters 3 >/dev/null 2>&1
rc=$?
ok "$([ $rc = 1 ] && echo 1)" "--coll on 3 ranks is not a usage error either (exit $rc)"
timeout 30 "$PERF" --root 127.0.0.1:9 --rank 1 --world 2 --timeout 1 \
	--coll reduce --dtype bfloat16 --op max --timeline --csv /dev/null \
	--iters 3 >/dev/null 2>&1
rc=$?
ok "$([ $rc = 1 ] && echo 1)" "--coll with --dtype, --op, --timeline and --csv is not a usage error (exit $rc)"
done_testing
