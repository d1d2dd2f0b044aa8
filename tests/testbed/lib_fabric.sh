#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# libr2cc discovers every NIC of a node with its GID, netdev, bandwidth and
# state, and honours R2CC_NICS (tests/libr2cc/fabric.c, on node0 and node1).
. "$(dirname "$0")/../lib/tap.sh"
tb_require 2
plan_later
for n in 0 1; do
	out=$(tb_exec "node$n" "$R2CC_BUILD/tests/libr2cc/fabric" "$n" "$TB_NICS" 2>&1)
	rc=$?
	ok "$([ $rc = 0 ] && echo 1)" "node$n: fabric discovery ($(grep -c '^ok' <<<"$out") checks)"
	[ $rc = 0 ] || diag "$out"
done
tb_finish
