// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The ring engine's schedule (coll/run.c) as a timed graph: what auto
 * asks before it runs an allreduce as the weighted ring.
 *
 * weight.c sizes the weighted ring's chunks with a fluid model, in
 * which every link is busy all the time.  The engine is not fluid: each
 * link sends its messages in one fixed order (batch, step, slice), and a
 * message leaves only once
 *
 *  - its sender has it (it received that slice the step before),
 *  - its receiver has a free slot: receive step k of a batch uses slot
 *    set k % sets, free again once its content was forwarded (or, after
 *    the last step, stored),
 *  - the sender's previous batch has finished (the batch barrier).
 *
 * Each message takes its size over its link's bandwidth, nothing else.
 * The weighted ring gives a degraded rank's chunk most of the data, and
 * that chunk crosses the ring as one chain of 2 (n - 1) hops; with few
 * slot sets or a shallow batch the chain stalls and the weighted ring
 * loses to the ring although the fluid model says it wins.  Measured on
 * the testbed (Documentation/coll.rst), this model is optimistic for the
 * weighted ring by 0.04-0.2 of the ring's time, hence the margin in
 * coll_sched_prefer_weighted(): it has the weighted ring at 0.79 where it
 * was faster (beta 1/2) and at 0.85 where it was not (beta 2/3).
 *
 * scripts/ring-schedule-model.py is the same walk in Python, for trying
 * settings by hand; tests/unit/coll_weight checks this one against the
 * closed forms and figures that tests/unit/ring_model.py checks there.
 */
#include <errno.h>
#include <stdlib.h>

#include "coll/model/model.h"

/* The chunk rank @r sends at step @t of an allreduce (coll/plan.c). */
static int chunk_sent(int n, int r, int t)
{
	int k = t < n - 1 ? r - 1 - t : r - (t - (n - 1));

	return ((k % n) + n) % n;
}

static double dmax(double a, double b)
{
	return a > b ? a : b;
}

/*
 * Step that last used, before step @t, the slot set step @t uses: in this
 * batch (t - sets), else the last step of the previous batch with the
 * same set; -1 when none did.
 */
static int slot_prev(int t, int sets, int steps, bool *prev_batch)
{
	int x;

	*prev_batch = false;
	if (t >= sets)
		return t - sets;
	*prev_batch = true;
	for (x = steps - 1; x >= 0; x--)
		if (x % sets == t % sets)
			return x;
	return -1;
}

double coll_sched_time(int n, const double *link, const double *c,
		       size_t nslices, size_t depth, unsigned int sets)
{
	int steps = 2 * n - 2, t, r, s = (int)sets;
	size_t b, j, bn, per;
	double *base, *cur, *prev, *fin, *tmp, end = 0.0;

	if (n < 2 || !nslices || !depth || sets < 2)
		return n < 2 ? 0.0 : -EINVAL;
	depth = depth < nslices ? depth : nslices;
	/*
	 * A step needs the step before and the one that freed its slot, no
	 * more than sets - 1 steps back, in this batch or the last: keep the
	 * last @sets steps of each, step t at t % sets.
	 */
	per = (size_t)s * depth * (size_t)n;
	base = calloc(2 * per + (size_t)n, sizeof(*base));
	if (!base)
		return -ENOMEM;
	cur = base;
	prev = base + per;
	fin = base + 2 * per;
	/* when (step t, slice j) of a batch was done on link r */
#define AT(a, t, j, r) \
	((a)[((size_t)((t) % s) * depth + (j)) * (size_t)n + (size_t)(r)])
	for (b = 0; b * depth < nslices; b++) {
		double start = end;

		bn = nslices - b * depth < depth ? nslices - b * depth : depth;
		for (t = 0; t < steps; t++) {
			bool pb;
			int pt = slot_prev(t, s, steps, &pb);

			if (pb && !b)
				pt = -1;
			for (j = 0; j < bn; j++) {
				for (r = 0; r < n; r++) {
					double at = dmax(fin[r], start);
					const double *a = pb ? prev : cur;

					if (t > 0)
						at = dmax(at, AT(cur, t - 1, j,
								 (r + n - 1) % n));
					/* the receiver r + 1 frees its slot */
					if (pt >= 0 && pt + 1 < steps)
						at = dmax(at, AT(a, pt + 1, j,
								 (r + 1) % n));
					else if (pt >= 0)
						at = dmax(at, AT(a, pt, j, r));
					at += c[chunk_sent(n, r, t)] /
					      (double)nslices / link[r];
					AT(cur, t, j, r) = at;
					fin[r] = at;
				}
			}
		}
		for (r = 0; r < n; r++)
			end = dmax(end, fin[r]);
		tmp = prev;
		prev = cur;
		cur = tmp;
	}
#undef AT
	free(base);
	return end;
}

/*
 * The slices of the largest of @n chunks, weights @w (NULL: equal, as
 * coll_chunk() cuts them, the largest count / n rounded up).
 */
static size_t slices(size_t count, const uint32_t *w, int n, size_t cap)
{
	size_t most = count / (size_t)n + (count % (size_t)n != 0), off, len;
	int k;

	if (w)
		for (most = 0, k = 0; k < n; k++) {
			coll_chunk_w(count, w, k, &off, &len);
			most = len > most ? len : most;
		}
	return coll_nslices(most, cap);
}

bool coll_sched_reaches(int n)
{
	return n >= 3 &&
	       2 * (size_t)(2 * n - 2) * (size_t)n <= COLL_SCHED_WORK;
}

int coll_sched_prefer_weighted(int n, const uint32_t *mbps, const uint32_t *w,
			       size_t count, size_t esize, size_t slice,
			       size_t depth, unsigned int sets)
{
	size_t cap = slice / esize, nr, nw, work;
	double *bw, *eq, *cw, top = 0.0, tr, tw;
	int k, ret;

	/*
	 * A walk visits every message, 2 (n - 1) n per slice.  Past
	 * COLL_SCHED_WORK, model fewer, larger slices, the same factor for
	 * both (it lengthens both pipelines' fill alike, which favours the
	 * ring); past it at one slice each (from about 180 ranks), keep the
	 * ring unasked: the weighted ring's one long chain already stalls
	 * at 32 ranks in the model, whatever the settings tried.
	 */
	if (!coll_sched_reaches(n) || !cap)
		return 0;
	nr = slices(count, NULL, n, cap);
	nw = slices(count, w, n, cap);
	work = (size_t)(2 * n - 2) * (size_t)n;
	if (work * (nr + nw) > COLL_SCHED_WORK) {
		size_t f = (work * (nr + nw) + COLL_SCHED_WORK - 1) /
			   COLL_SCHED_WORK;

		nr = (nr + f - 1) / f;
		nw = (nw + f - 1) / f;
	}
	bw = calloc(3 * (size_t)n, sizeof(*bw));
	if (!bw)
		return -ENOMEM;
	eq = bw + n;
	cw = eq + n;
	for (k = 0; k < n; k++)
		top = dmax(top, mbps[k]);
	/* as coll_ring_wquant counts a rank: nothing left is 1/64 */
	for (k = 0; k < n; k++)
		bw[k] = top > 0.0 ? dmax(mbps[k], top / 64.0) / top : 1.0;
	/* a link runs at the slower of its ends: eq[] as scratch */
	for (k = 0; k < n; k++)
		eq[k] = bw[k] < bw[(k + 1) % n] ? bw[k] : bw[(k + 1) % n];
	for (k = 0; k < n; k++) {
		bw[k] = eq[k];
		eq[k] = 1.0 / n;
		cw[k] = (double)w[k] / COLL_WEIGHT_ONE;
	}
	tr = coll_sched_time(n, bw, eq, nr, depth, sets);
	tw = coll_sched_time(n, bw, cw, nw, depth, sets);
	ret = tr < 0.0 ? (int)tr : tw < 0.0 ? (int)tw :
	      tw <= tr * COLL_SCHED_MARGIN;
	free(bw);
	return ret;
}
