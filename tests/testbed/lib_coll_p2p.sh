#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Point to point and all-to-all on a mesh communicator of two nodes
# (tests/libr2cc/coll_p2p.c): every message in order and whole, an
# all-to-all beside an allreduce, a count mismatch caught, bad arguments.
# make check runs the four-node one (tests/multi/lib_coll_p2p.sh).
# ci: full only
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 2
plan_later

COLL=$R2CC_BUILD/tests/libr2cc/coll_p2p
coll_start 2 ""
coll_wait
coll_report
coll_cleanup
tb_finish
