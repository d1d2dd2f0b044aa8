// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc-lib: allreduce as libr2cc's auto runs it (lib/coll/model/sched.c at the
 * library's default slicing), not the cheapest schedule the simulator
 * knows.  At the defaults auto keeps the ring where one node of four lost
 * half its bandwidth, so r2cc-lib pays what R2CCL-Balance pays there and
 * r2cc (which takes the weighted ring) less; in random states r2cc-lib
 * runs exactly the schedule auto names (at the defaults, in every state
 * tried, the ring: the count of weighted ones is printed) and is never
 * faster than r2cc.
 */
#include <string.h>

#include "simtest.h"

int main(void)
{
	struct fabric f = fab_make(4, 1, 2, 100);
	double *fr = frac_up(&f), bw[8], lib, bal, r2, sz = 16 << 20;
	uint64_t seed = 11;
	int trial, wrong = 0, faster = 0, weighted = 0;

	tap_plan(4);
	lib = coll_t(&f, fr, ST_R2CC_LIB, COLL_ALLREDUCE, sz);
	bal = coll_t(&f, fr, ST_BALANCE, COLL_ALLREDUCE, sz);
	tap_ok(close_rel(lib, bal, 1e-12),
	       "healthy: r2cc-lib's allreduce is the ring's (%.6g s, %.6g s)",
	       lib, bal);

	fr[1 * 2 + 1] = 0.0;	/* node 1 down to one NIC: beta = 1/2 */
	node_bws(&f, fr, bw);
	lib = coll_t(&f, fr, ST_R2CC_LIB, COLL_ALLREDUCE, sz);
	bal = coll_t(&f, fr, ST_BALANCE, COLL_ALLREDUCE, sz);
	r2 = coll_t(&f, fr, ST_R2CC, COLL_ALLREDUCE, sz);
	tap_ok(ar_lib_weighted(bw, 4, sz) == 0 && close_rel(lib, bal, 1e-12) &&
	       r2 < lib * 0.9,
	       "one node at 1/2: auto keeps the ring, so r2cc-lib pays Balance's %.6g s (%.6g s), r2cc's weighted ring %.6g s",
	       lib, bal, r2);

	/* random states: the schedule auto names, never faster than r2cc */
	f = fab_make(6, 1, 4, 100);
	free(fr);
	fr = frac_up(&f);
	for (trial = 0; trial < 300; trial++) {
		double want, got, best;
		int w;

		sz = random_state(&f, fr, &seed);
		node_bws(&f, fr, bw);
		w = ar_lib_weighted(bw, f.nodes, sz);
		weighted += w == 1;
		want = ar_time(bw, f.nodes, w ? AR_WEIGHTED : AR_RING, sz, &f);
		got = coll_t(&f, fr, ST_R2CC_LIB, COLL_ALLREDUCE, sz);
		best = coll_t(&f, fr, ST_R2CC, COLL_ALLREDUCE, sz);
		wrong += w < 0 || !close_rel(got, want, 1e-12);
		faster += got < best * (1 - 1e-12);
	}
	tap_ok(!wrong, "300 random states of 6 nodes: r2cc-lib runs the schedule auto names (%d wrong; %d weighted)",
	       wrong, weighted);
	tap_ok(!faster, "and is never faster than r2cc, which may pick any (%d faster)",
	       faster);
	free(fr);
	return tap_done();
}
