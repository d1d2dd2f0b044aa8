#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Collectives on two nodes: every collective x datatype x op against a
# reference at sizes 0 .. 65537 elements, in place and not, 4 MiB, bit
# identity of float sums across ranks, several in flight, bad arguments,
# and ranks that disagree (-EPROTO on each).  CI runs the same program on
# four nodes (tests/multi/lib_coll.sh); this one in the full matrix.
# ci: full only
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 2
plan_later

coll_start 2 ""
coll_wait
coll_report
coll_cleanup
tb_finish
