#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# libr2cc carries its USDT probes (provider r2cc) when <sys/sdt.h> was
# there to build them: one ELF note per probe site.
build=${BUILD:-$(dirname "$0")/../../build}
so=$build/lib/libr2cc.so
. "$(dirname "$0")/../lib/tap.sh"

[ -e "$so" ] || skip_all "libr2cc not built"
command -v readelf >/dev/null || skip_all "readelf not installed"
echo '#include <sys/sdt.h>' | ${CC:-cc} -E - >/dev/null 2>&1 ||
	skip_all "no <sys/sdt.h> (systemtap-sdt-dev): probes not built"

notes=$(readelf -n "$so")
plan 7
for p in rail_fail fence rollback repair failback degraded fallback; do
	n=$(awk -v p="$p" '/Provider: r2cc/ {getline; if ($2 == p) c++} END {print c + 0}' <<<"$notes")
	ok "$([ "$n" -ge 1 ] && echo 1)" "probe r2cc:$p ($n sites)"
done
done_testing
