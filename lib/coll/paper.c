// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * R2CC-AllReduce (R2CC_ALGO=r2cc-ar), the R2CCL paper's allreduce for a
 * cluster with one degraded node, on the collectives' mesh.
 *
 * With the slowest rank at w and the fastest at B in the agreed view,
 * the ring over every rank reduces the first w / B of the data: in the
 * time the slow rank takes for that share, the others could have done it
 * all.  The rest is reduced without the slow rank's links pacing it: the
 * slow rank sends its part of the rest to the others and receives their
 * result, while they reduce it among themselves.  That is the optimal
 * allreduce (direct.c) with a share of 0 for the slow rank and equal
 * shares for the others: each of the n - 1 others moves (2n - 3) / (n - 1)
 * of the rest each way, the bytes of the paper's ring among the others
 * plus its reduce and broadcast, in two message latencies rather than
 * 2 (n - 2).  The two parts run one after the other, as in the paper's
 * own analysis: for one rank at beta = w / B of n its time is
 *
 *	1 + n (1 - beta) / (2 (n - 1) beta)
 *
 * of the healthy ring's (r2cc-sim's cf_r2cc_ar), between the ring's
 * 1 / beta and the lower bound of the optimal allreduce.  A second
 * degraded rank is one of the others here; the paper's recursion one
 * level down is not done.
 *
 * The split is fixed when the collective starts, from the view every
 * rank has adopted by then, and kept through both parts: the view the
 * ring part gathers is adopted only when the whole collective finishes.
 */
#include <stdlib.h>

#include "coll/coll.h"
#include "base/base.h"

/* Back to the call's count and buffers, for the engine and the caller. */
static void paper_restore(struct r2cc_coll *q)
{
	q->count = q->pa_count;
	q->src = q->pa_src;
	q->dst = q->pa_dst;
}

/* The part without the slow rank: elements [pa_ring, pa_count). */
static int paper_rest(struct r2cc_coll *q)
{
	struct r2cc_comm *c = q->comm;
	int k;

	q->pa_phase = 1;
	q->src = q->pa_src + q->pa_ring * q->esize;
	q->dst = q->pa_dst + q->pa_ring * q->esize;
	q->count = q->pa_count - q->pa_ring;
	/* equal shares for the n - 1 others, none for the slow rank */
	coll_equal_weights(c->n - 1, c->pw);
	for (k = c->n - 1; k > q->pa_slow; k--)
		c->pw[k] = c->pw[k - 1];
	c->pw[q->pa_slow] = 0;
	return coll_direct_geometry(q, c->pw);
}

static int paper_start(struct r2cc_coll *q)
{
	struct r2cc_comm *c = q->comm;
	uint32_t lo = UINT32_MAX, hi = 0;
	int k;

	q->algo = COLL_ALGO_PAPER;
	q->pa_count = q->count;
	q->pa_src = q->src;
	q->pa_dst = q->dst;
	q->pa_ring = q->count;
	q->pa_slow = 0;
	for (k = 0; c->view_valid && k < c->n; k++) {
		if (c->view[k] < lo) {
			lo = c->view[k];
			q->pa_slow = k;
		}
		if (c->view[k] > hi)
			hi = c->view[k];
	}
	/* the same integers on every rank: the same split */
	if (c->view_valid && lo < hi)
		q->pa_ring = (size_t)((unsigned __int128)q->count * lo / hi);
	/* once per view: say what the ranks run from now on */
	if (c->view_valid && (!c->pa_logged || c->pa_seq != c->view_seq)) {
		c->pa_logged = true;
		c->pa_seq = c->view_seq;
		if (lo < hi)
			log_msg(c->ctx, R2CC_LOG_INFO,
				"r2cc-ar: rank %d the slowest, %u of %u Mbit/s: the ring over every rank takes %.3f of the data from collective #%u, the others the rest",
				q->pa_slow, lo, hi, (double)lo / hi, q->seq);
		else
			log_msg(c->ctx, R2CC_LOG_INFO,
				"r2cc-ar: every rank at %u Mbit/s: the ring alone from collective #%u",
				hi, q->seq);
	}
	q->pa_phase = 0;
	q->count = q->pa_ring;
	if (q->pa_ring)
		return coll_ring_ops.start(q);
	return paper_rest(q);
}

static int paper_step(struct r2cc_coll *q)
{
	int ret;

	if (q->pa_phase == 0) {
		ret = coll_ring_ops.step(q);
		if (ret <= 0)
			return ret;
		if (q->pa_ring == q->pa_count) {
			paper_restore(q);
			return 1;
		}
		ret = paper_rest(q);
		if (ret)
			return ret;
	}
	ret = coll_direct_step(q);
	if (ret)
		paper_restore(q);
	return ret;
}

const struct coll_algo_ops coll_paper_ops = {
	.name = "r2cc-ar",
	.start = paper_start,
	.step = paper_step,
};
