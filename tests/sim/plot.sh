#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
#
# --plot: without gnuplot in PATH it fails with a clear message and exit
# status 1 before writing anything; with gnuplot installed it writes a PNG
# and an SVG (those two checks are skipped when gnuplot is absent).
. "$(dirname "$0")/../lib/tap.sh"
SIM=${BUILD:-$R2CC_REPO/build}/tools/r2cc-sim
[ -x "$SIM" ] || skip_all "r2cc-sim not built ($SIM)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

plan 4
args=(--nodes 8 --iters 200 --fail 1:1@10..100 --fail 2:0@50)
out=$(PATH=/nonexistent "$SIM" "${args[@]}" --plot "$tmp/t.png" 2>&1)
rc=$?
ok "$([ $rc = 1 ] && grep -q "needs gnuplot" <<<"$out" && echo 1)" \
	"no gnuplot in PATH: clear error, exit 1"
ok "$([ ! -e "$tmp/t.png" ] && [ -z "$(grep -v needs <<<"$out")" ] && echo 1)" \
	"no gnuplot in PATH: nothing written, no table"
if command -v gnuplot >/dev/null; then
	"$SIM" "${args[@]}" --plot "$tmp/t.png" >/dev/null 2>&1
	ok "$(head -c 4 "$tmp/t.png" 2>/dev/null | grep -q PNG && echo 1)" \
		"PNG written"
	"$SIM" "${args[@]}" --plot "$tmp/it's.svg" >/dev/null 2>&1
	ok "$(grep -q '<svg' "$tmp/it's.svg" 2>/dev/null && echo 1)" \
		"SVG written, a quote in the file name"
else
	echo "ok 3 - PNG written # SKIP gnuplot not installed"
	echo "ok 4 - SVG written # SKIP gnuplot not installed"
	_tap_n=4
fi
done_testing
