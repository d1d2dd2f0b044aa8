#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# libr2cc exports only r2cc_* symbols, each under a version node, and its
# pkg-config file and soname are what an application links against.
build=${BUILD:-$(dirname "$0")/../../build}
so=$build/lib/libr2cc.so
. "$(dirname "$0")/../lib/tap.sh"

[ -e "$so" ] || skip_all "libr2cc not built"
command -v nm >/dev/null || skip_all "nm not installed"

plan 5
syms=$(nm -D --defined-only "$so" | awk '$2 ~ /[TDBR]/ {print $3}')
bad=$(grep -v '^r2cc_' <<<"$syms" | grep -v '^R2CC_' || true)
ok "$([ -n "$syms" ] && [ -z "$bad" ] && echo 1)" \
	"only r2cc_ symbols exported${bad:+ (also: $bad)}"
unver=$(objdump -T "$so" | awk '$NF ~ /^r2cc_/ && $(NF-1) !~ /^\(?R2CC_/ {print $NF}')
ok "$([ -z "$unver" ] && echo 1)" "every export is versioned R2CC_*"
vers=$(objdump -T "$so" | awk '$NF == "r2cc_ctx_destroy" {print $(NF-1)}' | sort | tr '\n' ' ')
ok "$([ "$vers" = "(R2CC_0.1) R2CC_0.2 " ] && echo 1)" \
	"r2cc_ctx_destroy: R2CC_0.2 by default, R2CC_0.1 kept for old binaries ($vers)"
soname=$(objdump -p "$so" | awk '$1 == "SONAME" {print $2}')
ok "$([ "$soname" = libr2cc.so.0 ] && echo 1)" "soname is libr2cc.so.0 ($soname)"
ver=$(PKG_CONFIG_PATH=$build/lib pkg-config --modversion r2cc 2>/dev/null)
ok "$([ -n "$ver" ] && echo 1)" "pkg-config knows r2cc ($ver)"
done_testing
