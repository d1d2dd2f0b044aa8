#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The transport API refuses misuse with clear errors (tests/libr2cc/api.c,
# one process connected to itself over every rail of node0).
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later
out=$(tb_exec node0 "$R2CC_BUILD/tests/libr2cc/api" 2>&1)
rc=$?
ok "$([ $rc = 0 ] && echo 1)" "API misuse: $(grep -c '^ok' <<<"$out") checks pass"
[ $rc = 0 ] || diag "$out"
tb_finish
