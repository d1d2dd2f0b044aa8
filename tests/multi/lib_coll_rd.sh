#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# The collectives' matrix (tests/libr2cc/coll.c) on a mesh communicator
# of every node of the testbed (4 in CI), where allreduces of up to
# 256 KiB go by recursive doubling and reduces and broadcasts by a tree:
# for those three kinds (the other two run the ring, as in lib_coll.sh)
# every dtype x op x count right on every rank, the same bits
# everywhere, ranks that disagree; then the cost model's own choice
# (R2CC_COLL_ALPHA_US) on twenty small ones.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 3
plan_later

coll_start "$TB_NODES" "COLL_MESH=1 R2CC_COLL_RD_MAX=262144 COLL_KINDS=allreduce,reduce,broadcast"
coll_wait
coll_report
coll_cleanup

# Twenty 4 KiB allreduces: by the ring when the model has no latency
# (R2CC_COLL_ALPHA_US=0), by recursive doubling at the default latency
# (10 us: its crossover for the testbed's NICs is far above 4 KiB).
for alpha in 0 ""; do
	coll_start "$TB_NODES" "COLL_MESH=1 ${alpha:+R2CC_COLL_ALPHA_US=$alpha}" -l 20 -s 4096
	coll_wait
	want=20 what="the default latency: all by recursive doubling"
	[ "$alpha" = 0 ] && want=0 what="alpha 0: all by the ring"
	for ((i = 0; i < CO_N; i++)); do
		ok "$([ "${CO_RCS[i]}" = 0 ] &&
			[ "$(coll_field "$i" rd)" = "$want" ] && echo 1)" \
			"$what: rank $i: 20 right, $(coll_field "$i" rd) by recursive doubling (up to $(coll_field "$i" rd_max) bytes), $(coll_field "$i" seconds) s (exit ${CO_RCS[i]})"
	done
	[ "$_tap_failed" = 0 ] || coll_diag 2>/dev/null || true
	coll_cleanup
done
tb_finish
