#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The NCCL plugin as NCCL drives it (tests/nccl/api.c, one process on
# node0): every table v8..v12 refuses misuse, reports sane properties and
# a virtual device, and connects to itself on device 0 for messages, a
# grouped receive, 32 receives in flight and a close with some still open.
. "$(dirname "$0")/../lib/tap.sh"
tb_require 1
plan_later
# Five tables, each with its own connection and waits of up to 20 s.
out=$(TB_TIMEOUT=${TB_TIMEOUT:-300} tb_exec node0 \
	env LD_LIBRARY_PATH="$R2CC_BUILD/lib" "$R2CC_BUILD/tests/nccl/api" 2>&1)
rc=$?
ok "$([ $rc = 0 ] && echo 1)" "NCCL plugin API: $(grep -c '^ok' <<<"$out") checks pass"
[ $rc = 0 ] || diag "$out"
tb_finish
