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
coll_start "$TB_NODES" ""
coll_wait
coll_report
coll_cleanup
tb_finish
