/* SPDX-License-Identifier: GPL-2.0-only */
/* Helpers shared by the r2cc-sim tests. */
#ifndef R2CC_SIMTEST_H
#define R2CC_SIMTEST_H

#include <math.h>
#include <stdlib.h>

#include "sim.h"
#include "tap.h"

static inline int close_rel(double got, double want, double tol)
{
	return fabs(got - want) <= tol * fabs(want);
}

static inline struct fabric fab_make(int nodes, int gpus, int nics,
				     double gbps)
{
	return (struct fabric){
		.nodes = nodes, .gpus = gpus, .nics = nics,
		.nic_bw = gbps * 1e9 / 8.0, .alpha = 0.0,
		.intra_bw = 1e15, .fuse = 2, .chunks = 0,
	};
}

static inline double *frac_up(const struct fabric *f)
{
	size_t n = (size_t)f->nodes * f->nics, i;
	double *v = malloc(sizeof(double) * n);

	if (!v)
		exit(KSFT_FAIL);
	for (i = 0; i < n; i++)
		v[i] = 1.0;
	return v;
}

/* Every node's bandwidth under the balanced share, as the strategies see. */
static inline void node_bws(const struct fabric *f, const double *fr,
			    double *bw)
{
	int i;

	for (i = 0; i < f->nodes; i++)
		bw[i] = node_bw(f, fr + (size_t)i * f->nics, SHARE_BALANCE,
				NULL);
}

/*
 * A random state of the random-state tests: each NIC healthy, or with
 * probability 0.2 at 0.1 to 0.3 of its bandwidth; returns a message size
 * of 100 kB to 100 MB.
 */
static inline double random_state(const struct fabric *f, double *fr,
				  uint64_t *seed)
{
	int k;

	for (k = 0; k < f->nodes * f->nics; k++) {
		double u = rng_uniform(seed);

		fr[k] = u < 0.2 ? 0.1 + u : 1.0;
	}
	return 1e5 * (1 + 1000 * rng_uniform(seed));
}

static inline struct workload wl_coll(enum coll_type t, double bytes)
{
	return (struct workload){ .kind = WL_COLL, .coll = t,
				  .size = bytes };
}

/* Time of one collective over all nodes for strategy @s in state @frac. */
static inline double coll_t(const struct fabric *f, const double *frac,
			    enum strat_id s, enum coll_type t, double bytes)
{
	struct workload w = wl_coll(t, bytes);
	struct state_view v = { .f = f, .frac = frac, .strat = s };
	double *scratch = malloc(sizeof(double) * (f->nodes + 1)), x;

	if (!scratch)
		exit(KSFT_FAIL);
	x = wl_coll_time(&w, &v, t, 0, f->nodes, bytes, scratch, NULL);
	free(scratch);
	return x;
}

/* Plan time of one allreduce schedule with explicit node bandwidths. */
static inline double ar_time(const double *bw, int n, enum ar_algo a,
			     double bytes, const struct fabric *f)
{
	struct plan p;
	double x;

	if (plan_init(&p, n, 2) || coll_plan(&p, COLL_ALLREDUCE, a, bw, n,
					     bytes, f))
		exit(KSFT_FAIL);
	x = plan_time(&p, bw);
	plan_free(&p);
	return x;
}

#endif
