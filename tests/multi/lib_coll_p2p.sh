#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Point to point and all-to-all on a mesh communicator of every node of
# the testbed (4 in CI): each rank with three peers, every pair's messages
# in order, all-to-all over every pair (tests/libr2cc/coll_p2p.c).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 3
plan_later

COLL=$R2CC_BUILD/tests/libr2cc/coll_p2p
# The largest messages: 256 KiB (2.25 MiB in flight per rank over six
# connections), 1 MiB under check-full (COLL_FULL).  At 1 MiB (9 MiB in
# flight) the emulated nodes fall behind the 500 ms stall window
# tests/lib/coll.sh sets: a storm of false stalls, a control channel lost
# to TCP's timeout, and ranks left waiting (Documentation/coll.rst).
max=65536
[ -n "${COLL_FULL:-}" ] && max=262144
coll_start "$TB_NODES" "COLL_P2P_MAX=$max"
coll_wait
coll_report
coll_cleanup
tb_finish
