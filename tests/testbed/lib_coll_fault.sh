#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-only
# Back-to-back allreduces on two nodes while node0's first rail is cut and
# restored, then black-holed: every result exact, no rank errs, and the
# communicator's counters show the failovers the transport absorbed.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/coll.sh"
tb_require 2
plan_later

fault() {
	local what=$1 f0
	shift
	coll_start 2 "" -l "${COLL_ITERS:-120}" -s 262144
	run_ok "$what: both ranks reducing" coll_streaming
	sleep 1
	"$@"
	coll_wait
	coll_report
	for i in 0 1; do
		ok "$([ "$(coll_field $i bad)" = 0 ] && [ "$(coll_field $i error)" = 0 ] &&
			[ "$(coll_field $i iters)" = "${COLL_ITERS:-120}" ] && echo 1)" \
			"$what: rank $i: $(coll_field $i iters) allreduces, $(coll_field $i bad) wrong elements, error $(coll_field $i error)"
	done
	f0=$(coll_field 0 failovers)
	ok "$([ "${f0:-0}" -ge 1 ] && echo 1)" \
		"$what: rank 0's connections failed over ($f0 failovers, $(coll_field 0 resent) bytes re-sent)"
	coll_cleanup
}

cut() { tb link node0 0 down; sleep 2; tb link node0 0 up; }
hole() { tb blackhole node0 0 on; sleep 2; tb blackhole node0 0 off; }

fault "carrier cut" cut
fault "black hole" hole
tb_finish
