/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The weighted ring's cost model (weight.c), on its own so that
 * r2cc-sim (tools/sim) can link the very code the library runs.
 */
#ifndef R2CC_LIB_COLL_WEIGHT_H
#define R2CC_LIB_COLL_WEIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The weighted ring: chunk sizes from every rank's
 * bandwidth, so that a degraded rank does not pace the others.
 */
#define COLL_WEIGHT_ONE	(1u << 16)	/* the whole, in weight units */

/*
 * The model's time for an allreduce of 1 byte per bandwidth unit over
 * the ring of ranks with bandwidths @bw[0..n), chunk fractions @c.
 */
double coll_ring_time(int n, const double *bw, const double *c);
/*
 * The fractions @c[0..n) (summing to 1) that minimise coll_ring_time();
 * @m is room for n more.  Returns that time.
 */
double coll_ring_weights(int n, const double *bw, double *c, double *m);
/*
 * The same from a view (Mbit/s per rank), as integer weights @w summing
 * to COLL_WEIGHT_ONE; @tmp is room for 3 n doubles.  Returns false, with
 * equal weights, when every rank has the same bandwidth.
 */
bool coll_ring_wquant(int n, const uint32_t *mbps, uint32_t *w, double *tmp);
/* Equal weights for @n ranks in @w, the remainder one unit each to the first. */
void coll_equal_weights(int n, uint32_t *w);
/* Elements [*@off, *@off + *@len) of chunk @c of @count with weights @w. */
void coll_chunk_w(size_t count, const uint32_t *w, int c, size_t *off,
		  size_t *len);

/*
 * The optimal allreduce (coll/direct.c, R2CC_ALGO=optimal): every rank
 * reduces a share of the data and sends it to all; rank r of bandwidth
 * @bw[r] with share @p[r] takes (1 + (n - 2) p[r]) / bw[r].  The model's
 * time for shares @p, the shares (summing to 1) that minimise it, and
 * the same from a view as integer weights summing to COLL_WEIGHT_ONE
 * (@tmp: room for 2 n doubles; false, with equal weights, when every
 * rank has the same bandwidth).
 */
double coll_direct_time(int n, const double *bw, const double *p);
double coll_direct_weights(int n, const double *bw, double *p);
bool coll_direct_wquant(int n, const uint32_t *mbps, uint32_t *w, double *tmp);

/*
 * auto with the mesh runs the optimal allreduce where its model has it at
 * most COLL_DIRECT_MARGIN of the ring's time, for 3 to COLL_AUTO_DIRECT_MAX
 * ranks and an uneven view.  The margin covers what the testbed measured
 * against the model (Documentation/coll.rst): 0.63 to 0.95 of the ring
 * where the model said 0.67 to 0.80.  The rank limit bounds the staging
 * auto registers at init for it (2 n depth slices) and keeps the
 * schedule, whose slices shrink as 1/n, where it was measured.
 */
#define COLL_DIRECT_MARGIN	0.85
#define COLL_AUTO_DIRECT_MAX	16
/* coll_auto_direct: @tmp is room for 3 n doubles; the same on every rank. */
bool coll_auto_direct(int n, const uint32_t *mbps, double *tmp);

/*
 * Slices per chunk when the largest chunk holds @most elements and a
 * slice at most @cap: what the engine cuts (coll/run.c) and the schedule
 * model assumes (sched.c).  At least one, for an empty chunk too.
 */
static inline size_t coll_nslices(size_t most, size_t cap)
{
	size_t k = (most + cap - 1) / cap;

	return k ? k : 1;
}

/*
 * The engine's schedule (sched.c): the finish time of an allreduce
 * whose chunk @c[k] is that fraction of the data, over links @link[r]
 * (rank r to r + 1, bandwidth in data per time unit), cut into @nslices
 * slices per chunk in batches of @depth, with @sets receive slot sets;
 * -EINVAL or -ENOMEM (negative) on failure.
 */
double coll_sched_time(int n, const double *link, const double *c,
		       size_t nslices, size_t depth, unsigned int sets);

/*
 * The communicator's default slicing (r2cc_comm_opts, R2CC_COLL_*), here
 * so that r2cc-sim's r2cc-lib asks the model what the library would.
 */
#define COLL_SLICE_DEFAULT	(256u << 10)
#define COLL_DEPTH_DEFAULT	4u
#define COLL_SETS_DEFAULT	2u

/* The weighted ring must be modelled this much faster to be chosen. */
#define COLL_SCHED_MARGIN	0.82
/* Most messages (slices x steps x ranks) one choice walks: 1-2 ms here */
#define COLL_SCHED_WORK		(1u << 17)

/*
 * auto's choice for an allreduce of @count elements of @esize bytes with
 * weights @w from the view @mbps and the communicator's slicing: 1 when
 * the schedule model has the weighted ring at most COLL_SCHED_MARGIN of
 * the ring's time, 0 when not, -ENOMEM.  The same on every rank for the
 * same view and call.
 */
int coll_sched_prefer_weighted(int n, const uint32_t *mbps, const uint32_t *w,
			       size_t count, size_t esize, size_t slice,
			       size_t depth, unsigned int sets);
/*
 * Whether the schedule model can weigh the two rings at @n ranks: one
 * slice of each within COLL_SCHED_WORK (up to about 180 ranks).  Past
 * that auto keeps the ring unasked, so it needs no weights either (they
 * cost about 0.1 s at 8192 ranks, tools/sim/bench.sh).
 */
bool coll_sched_reaches(int n);

#endif /* R2CC_LIB_COLL_WEIGHT_H */
