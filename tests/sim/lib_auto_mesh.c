// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc-lib-mesh: allreduce as libr2cc's auto runs it on a communicator
 * with the mesh (lib/coll/model/weight.c's coll_auto_direct, then
 * lib/coll/model/sched.c, the library's code linked in).  Healthy it is the
 * ring; with one node of four at 1/2 or 2/3 it is the optimal allreduce,
 * at the R2CCL paper's bound and under r2cc-lib's ring; a node at 0.9
 * keeps the ring (the bound is within the margin of it), as do 17 nodes
 * (past the staging limit); in random states it runs exactly the schedule
 * auto names and is never slower than r2cc-lib.
 */
#include <math.h>

#include "coll/model/model.h"
#include "simtest.h"

/* One node of @f->nodes at @frac of each of its NICs. */
static double one_degraded(struct fabric *f, double *fr, double frac,
			   double sz, double *lib)
{
	int k;

	for (k = 0; k < f->nodes * f->nics; k++)
		fr[k] = 1.0;
	for (k = 0; k < f->nics; k++)
		fr[1 * f->nics + k] = frac;
	*lib = coll_t(f, fr, ST_R2CC_LIB, COLL_ALLREDUCE, sz);
	return coll_t(f, fr, ST_R2CC_LIB_MESH, COLL_ALLREDUCE, sz);
}

int main(void)
{
	struct fabric f = fab_make(4, 1, 2, 100);
	double *fr = frac_up(&f), bw[32], mesh, lib, opt, ring, sz = 16 << 20;
	uint64_t seed = 5;
	int trial, wrong = 0, slower = 0, direct = 0;

	tap_plan(6);
	mesh = coll_t(&f, fr, ST_R2CC_LIB_MESH, COLL_ALLREDUCE, sz);
	ring = coll_t(&f, fr, ST_BALANCE, COLL_ALLREDUCE, sz);
	tap_ok(close_rel(mesh, ring, 1e-12),
	       "healthy: the ring (%.6g s, %.6g s)", mesh, ring);

	mesh = one_degraded(&f, fr, 0.5, sz, &lib);
	opt = coll_t(&f, fr, ST_R2CC_OPT, COLL_ALLREDUCE, sz);
	node_bws(&f, fr, bw);
	tap_ok(ar_lib_auto(bw, 4, sz, true) == AR_DIRECT &&
	       close_rel(mesh, opt, 1e-12) && mesh < lib * 0.8,
	       "one node of four at 1/2: the optimal allreduce, %.6g s (r2cc-optimal %.6g s, r2cc-lib %.6g s)",
	       mesh, opt, lib);

	mesh = one_degraded(&f, fr, 2.0 / 3.0, sz, &lib);
	opt = coll_t(&f, fr, ST_R2CC_OPT, COLL_ALLREDUCE, sz);
	tap_ok(close_rel(mesh, opt, 1e-12) && mesh < lib * 0.85,
	       "one node of four at 2/3: the optimal allreduce, %.6g s (r2cc-lib %.6g s)",
	       mesh, lib);

	mesh = one_degraded(&f, fr, 0.9, sz, &lib);
	node_bws(&f, fr, bw);
	tap_ok(ar_lib_auto(bw, 4, sz, true) != AR_DIRECT &&
	       close_rel(mesh, lib, 1e-12),
	       "one node of four at 0.9: not the optimal allreduce (%.6g s, r2cc-lib %.6g s)",
	       mesh, lib);

	free(fr);
	f = fab_make(COLL_AUTO_DIRECT_MAX + 1, 1, 2, 100);
	fr = frac_up(&f);
	mesh = one_degraded(&f, fr, 0.5, sz, &lib);
	tap_ok(close_rel(mesh, lib, 1e-12),
	       "%d nodes, one at 1/2: not the optimal allreduce (%.6g s, r2cc-lib %.6g s)",
	       COLL_AUTO_DIRECT_MAX + 1, mesh, lib);

	free(fr);
	f = fab_make(6, 1, 4, 100);
	fr = frac_up(&f);
	for (trial = 0; trial < 300; trial++) {
		double want, got;
		int a;

		sz = random_state(&f, fr, &seed);
		node_bws(&f, fr, bw);
		a = ar_lib_auto(bw, f.nodes, sz, true);
		direct += a == AR_DIRECT;
		want = a < 0 ? NAN : ar_time(bw, f.nodes, (enum ar_algo)a, sz, &f);
		got = coll_t(&f, fr, ST_R2CC_LIB_MESH, COLL_ALLREDUCE, sz);
		lib = coll_t(&f, fr, ST_R2CC_LIB, COLL_ALLREDUCE, sz);
		wrong += a < 0 || !close_rel(got, want, 1e-12);
		slower += got > lib * (1 + 1e-12);
	}
	tap_ok(!wrong && !slower,
	       "300 random states of 6 nodes: the schedule auto names (%d wrong, %d optimal), never slower than r2cc-lib (%d slower)",
	       wrong, direct, slower);
	free(fr);
	return tap_done();
}
