#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Collectives on every node of the testbed (4 in CI): the full matrix of
# lib_coll.sh, where rings of more than two ranks exercise every step of
# reduce-scatter and allgather and chains with middle ranks.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 3
plan_later

coll_start "$TB_NODES" ""
coll_wait
coll_report
coll_cleanup
tb_finish
