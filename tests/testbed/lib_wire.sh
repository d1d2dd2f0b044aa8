#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# A hostile peer on libr2cc's control channel gets -EPROTO, never a crash
# or a hang (tests/libr2cc/wire.c, on node0).
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later
out=$(tb_exec node0 "$R2CC_BUILD/tests/libr2cc/wire" 2>&1)
rc=$?
ok "$([ $rc = 0 ] && echo 1)" "hostile wire messages: $(grep -c '^ok' <<<"$out") checks pass"
[ $rc = 0 ] || diag "$out"
tb_finish
