#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Config files: every key a flag takes works as KEY = VALUE with the same
# result; comments and blank lines are ignored; a bad file (missing, a
# directory, a long line, a NUL byte, no '=', unknown key, nested config,
# bad value) is a usage error naming the file and line.
. "$(dirname "$0")/../lib/tap.sh"
SIM=${BUILD:-$R2CC_REPO/build}/tools/r2cc-sim
[ -x "$SIM" ] || skip_all "r2cc-sim not built ($SIM)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

plan 12

cat >"$tmp/good.conf" <<'CONF'
# a reference allreduce
nodes = 3
gpus = 1

nics=3
nic-gbps = 10
size = 4GiB
iters = 2
fail = 1:2@0.1..2
strategy = r2ccl-balance,r2cc
csv = yes
CONF
a=$("$SIM" --config "$tmp/good.conf" 2>&1)
b=$("$SIM" --nodes 3 --gpus 1 --nics 3 --nic-gbps 10 --size 4GiB \
	--iters 2 --fail 1:2@0.1..2 --strategy r2ccl-balance,r2cc --csv 2>&1)
is "$a" "$b" "config file and flags give the same output"
is "$(wc -l <<<"$a")" 3 "CSV: header and two strategies"

b=$("$SIM" --config "$tmp/good.conf" --iters 3 2>&1)
ok "$([ "$a" != "$b" ] && echo 1)" "a later flag overrides the file"

printf 'nodes = 4\n' >"$tmp/one.conf"
run_ok "keys with spaces around '='" "$SIM" --config "$tmp/one.conf" --iters 1

run_fails "missing file" "No such file" "$SIM" --config "$tmp/nope.conf"
run_fails "a directory" "read error|Is a directory" "$SIM" --config "$tmp"
printf 'nodes = %05000d\n' 4 >"$tmp/long.conf"
run_fails "a line over 4096 bytes" "long.conf:1: line too long" \
	"$SIM" --config "$tmp/long.conf"
printf 'nodes = 4\nni\0cs = 2\n' >"$tmp/nul.conf"
run_fails "a NUL byte" "nul.conf:2: NUL" "$SIM" --config "$tmp/nul.conf"
printf '# ok\nnodes 4\n' >"$tmp/noeq.conf"
run_fails "a line without '='" "noeq.conf:2: expected KEY = VALUE" \
	"$SIM" --config "$tmp/noeq.conf"
printf 'frobs = 1\n' >"$tmp/key.conf"
run_fails "an unknown key" "key.conf:1: unknown key 'frobs'" \
	"$SIM" --config "$tmp/key.conf"
printf 'config = %s\n' "$tmp/one.conf" >"$tmp/nest.conf"
run_fails "nested config" "do not nest" "$SIM" --config "$tmp/nest.conf"
printf 'nodes = 4\nnics = 0\n' >"$tmp/zero.conf"
run_fails "a bad value names the file and line" \
	"in .*zero.conf:2\)" \
	"$SIM" --config "$tmp/zero.conf"
done_testing
