// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The ring: each rank's program (plan.c) over the ring, as the engine
 * (run.c) runs it, and the choice at a collective's start between the
 * ring, the weighted ring and (auto on the mesh) the optimal allreduce.
 *
 * Every chunk is cut into the same number of slices, so every step moves
 * the same number of messages.  Slices go in batches of comm->depth; in
 * a batch, messages go step by step, slice by slice, and both ends of a
 * connection post them in that same order (the transport matches sends
 * to receives in order).  A received slice is reduced in its slot and
 * forwarded from it; consecutive receive steps use comm->sets sets of
 * slots in turn, so a slot is reused that many steps later, once its
 * forward has been sent.  That order cannot deadlock: step s of a rank
 * waits only for step s - 1 of its neighbours and for its own earlier
 * steps.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll/coll.h"
#include "base/base.h"
#include "platform/platform.h"

static void coll_geometry(const struct r2cc_coll *q, int c, size_t *off,
			  size_t *len)
{
	int n = q->comm->n;

	switch (q->kind) {
	case COLL_ALLREDUCE:
		if (q->coff) {
			*off = q->coff[c];
			*len = q->coff[c + 1] - q->coff[c];
		} else {
			coll_chunk(q->count, n, c, off, len);
		}
		break;
	case COLL_REDUCE_SCATTER:
	case COLL_ALLGATHER:
	case COLL_BARRIER:
		*off = (size_t)c * q->count;
		*len = q->count;
		break;
	default:
		*off = 0;
		*len = q->count;
	}
}

/* Elements of slice @j of chunk @c: [*off, *off + *len) of the whole. */
static void coll_slice(const struct r2cc_coll *q, int c, size_t j, size_t *off,
		       size_t *len)
{
	size_t coff, clen, soff;

	coll_geometry(q, c, &coff, &clen);
	coll_chunk(clen, (int)q->nslices, (int)j, &soff, len);
	*off = coff + soff;
}

/* This rank's own data of element @off (its input). */
static const char *own(const struct r2cc_coll *q, size_t off)
{
	size_t me = 0;

	/* reduce_scatter and allreduce read the whole input */
	if (q->kind == COLL_ALLGATHER)
		me = (size_t)q->comm->rank * q->count;
	return q->src + (off - me) * q->esize;
}

/* Where result element @off goes. */
static char *dst(const struct r2cc_coll *q, size_t off)
{
	size_t me = 0;

	if (q->kind == COLL_REDUCE_SCATTER)
		me = (size_t)q->comm->rank * q->count;
	return q->dst + (off - me) * q->esize;
}

static void hdr_fill(const struct r2cc_coll *q, struct coll_hdr *h, int step,
		     int chunk, size_t j)
{
	/* a forward's value arrived with the slice it forwards */
	coll_hdr_fill(q, h, chunk, j,
		      coll_view_rank(q->kind, q->comm->rank, q->comm->n, step,
				     true));
}

/*
 * The view value a received slice carries: the one expected, and the same
 * in every slice that carries it.
 */
static const char *view_check(struct r2cc_coll *q, const struct coll_hdr *h,
			      int step)
{
	int vr = coll_view_rank(q->kind, q->comm->rank, q->comm->n, step,
				false);
	uint32_t v = le32toh(h->vmbps);

	if (le32toh(h->vrank) != (vr < 0 ? UINT32_MAX : (uint32_t)vr))
		return "out of step";
	if (vr < 0)
		return NULL;
	if (q->have[vr] && q->gather[vr] != v)
		return "another view";
	q->gather[vr] = v;
	q->have[vr] = 1;
	return NULL;
}

/* A received slice's header against this rank's own call. */
static int hdr_check(struct r2cc_coll *q, const struct coll_hdr *h, int step,
		     int chunk, size_t j, size_t got, size_t want)
{
	struct r2cc_comm *c = q->comm;
	const char *why = coll_hdr_why(q, h, got);

	if (!why && (le32toh(h->chunk) != (uint32_t)chunk ||
		     le32toh(h->slice) != (uint32_t)j || got != want))
		why = "out of step";
	if (!why)
		why = view_check(q, h, step);
	if (!why)
		return 0;
	return coll_hdr_mismatch(q, h, (c->rank + c->n - 1) % c->n, why);
}

static struct coll_slot *recv_slot(struct r2cc_comm *c, const struct coll_op *o,
				   size_t jb)
{
	return &c->recv[o->set][jb];
}

static size_t slot_bytes(const struct r2cc_coll *q, int chunk, size_t j)
{
	size_t off, len;

	coll_slice(q, chunk, j, &off, &len);
	return sizeof(struct coll_hdr) + len * q->esize;
}

/* What a received slice becomes: reduced, stored, held for its forward. */
static void recv_apply(struct r2cc_coll *q, const struct coll_op *o,
		       struct coll_slot *s, size_t j)
{
	const struct coll_step *st = &q->steps[o->step];
	char *data = s->buf + sizeof(struct coll_hdr);
	size_t off, len;

	coll_slice(q, st->recv_chunk, j, &off, &len);
	if (st->recv_act == ACT_REDUCE) {
		coll_reduce(data, own(q, off), len, q->dtype, q->op);
		if (st->store)
			coll_finish(data, len, q->dtype, q->op, q->comm->n);
	}
	if (st->store && len)
		memcpy(dst(q, off), data, len * q->esize);
	s->state = o->step + 1 < q->nsteps &&
		   q->steps[o->step + 1].send_src == SRC_FWD ?
		   SLOT_HELD : SLOT_FREE;
}

static int post_recvs(struct r2cc_coll *q, bool *moved)
{
	struct r2cc_comm *c = q->comm;

	while (q->recv_post < (size_t)q->nrecv * q->bn) {
		const struct coll_op *o = &q->recv_ops[q->recv_post / q->bn];
		size_t jb = q->recv_post % q->bn;
		struct coll_slot *s = recv_slot(c, o, jb);
		size_t len = sizeof(struct coll_hdr) + c->slice;
		void *buf = s->buf;
		uint32_t tag = 0;
		int ret;

		if (s->state != SLOT_FREE)
			break;
		ret = r2cc_irecv(c->prev, 1, &buf, &len, &tag, &c->mr, &s->req);
		/*
		 * The connection takes MAX_RECV_REQS open receives; sets x
		 * depth may want more.  They complete in order, so the rest
		 * are posted as the first are reaped.
		 */
		if (ret == -EAGAIN)
			break;
		if (ret)
			return ret;
		s->state = SLOT_RECV;
		q->recv_post++;
		*moved = true;
	}
	return 0;
}

static int reap_recvs(struct r2cc_coll *q, bool *moved)
{
	struct r2cc_comm *c = q->comm;

	while (q->recv_done < q->recv_post) {
		const struct coll_op *o = &q->recv_ops[q->recv_done / q->bn];
		size_t jb = q->recv_done % q->bn, j = q->b0 + jb, got = 0;
		int chunk = q->steps[o->step].recv_chunk, done = 0, ret;
		struct coll_slot *s = recv_slot(c, o, jb);

		ret = r2cc_test(s->req, &done, &got);
		if (ret) {
			s->req = NULL;
			if (ret == -EMSGSIZE) {
				log_msg(c->ctx, R2CC_LOG_ERROR,
					"collective #%u: rank %d sent more than this rank's call expects",
					q->seq, (c->rank + c->n - 1) % c->n);
				ret = -EPROTO;
			}
			return ret;
		}
		if (!done)
			break;
		s->req = NULL;
		ret = hdr_check(q, (const struct coll_hdr *)s->buf, o->step,
				chunk, j, got, slot_bytes(q, chunk, j));
		if (ret)
			return ret;
		recv_apply(q, o, s, j);
		q->recv_done++;
		*moved = true;
	}
	return 0;
}

static int post_sends(struct r2cc_coll *q, bool *moved)
{
	struct r2cc_comm *c = q->comm;

	while (q->send_post < (size_t)q->nsend * q->bn) {
		const struct coll_op *o = &q->send_ops[q->send_post / q->bn];
		const struct coll_step *st = &q->steps[o->step];
		size_t jb = q->send_post % q->bn, j = q->b0 + jb, off, len;
		struct coll_slot *s;
		int ret;

		coll_slice(q, st->send_chunk, j, &off, &len);
		if (st->send_src == SRC_LOCAL) {
			s = &c->local[jb];
			if (s->state != SLOT_FREE)
				break;
			if (len)
				memcpy(s->buf + sizeof(struct coll_hdr),
				       own(q, off), len * q->esize);
		} else {
			s = &c->recv[o->set][jb];
			if (s->state != SLOT_HELD)
				break;
		}
		hdr_fill(q, (struct coll_hdr *)s->buf, o->step, st->send_chunk,
			 j);
		ret = r2cc_isend(c->next, c->mr, s->buf,
				 sizeof(struct coll_hdr) + len * q->esize, 0,
				 &s->req);
		if (ret)
			return ret;
		s->state = SLOT_SEND;
		q->send_post++;
		*moved = true;
	}
	return 0;
}

static int reap_sends(struct r2cc_coll *q, bool *moved)
{
	struct r2cc_comm *c = q->comm;

	while (q->send_done < q->send_post) {
		const struct coll_op *o = &q->send_ops[q->send_done / q->bn];
		size_t jb = q->send_done % q->bn;
		struct coll_slot *s = q->steps[o->step].send_src == SRC_LOCAL ?
				      &c->local[jb] : &c->recv[o->set][jb];
		int done = 0, ret;

		ret = r2cc_test(s->req, &done, NULL);
		if (ret) {
			s->req = NULL;
			return ret;
		}
		if (!done)
			break;
		s->req = NULL;
		s->state = SLOT_FREE;
		q->send_done++;
		*moved = true;
	}
	return 0;
}

static void batch_start(struct r2cc_coll *q, size_t b0)
{
	size_t left = q->nslices - b0;

	q->b0 = b0;
	q->bn = left < q->comm->depth ? left : q->comm->depth;
	q->recv_post = q->recv_done = q->send_post = q->send_done = 0;
}

/* Run @q as far as it goes without waiting: 1 finished, 0 not yet, -errno. */
static int coll_step(struct r2cc_coll *q)
{
	bool moved;
	int ret;

	do {
		moved = false;
		ret = post_recvs(q, &moved);
		if (!ret)
			ret = post_sends(q, &moved);
		if (!ret)
			ret = reap_recvs(q, &moved);
		if (!ret)
			ret = reap_sends(q, &moved);
		if (ret)
			return ret;
		if (q->recv_done == (size_t)q->nrecv * q->bn &&
		    q->send_done == (size_t)q->nsend * q->bn) {
			if (q->b0 + q->bn >= q->nslices)
				return 1;
			batch_start(q, q->b0 + q->bn);
			moved = true;
		}
	} while (moved);
	return 0;
}

/*
 * The weights of the agreed view (coll/model/weight.c), once per view:
 * 1 when they differ (use them), 0 when the ring's equal chunks are as
 * good, -ENOMEM.
 */
static int coll_weights(struct r2cc_comm *c)
{
	double *tmp;

	if ((!c->weighted && !c->w_auto) || !c->view_valid)
		return 0;
	/* auto past the schedule model's reach keeps the ring: no weights */
	if (!c->weighted && !coll_sched_reaches(c->n))
		return 0;
	if (c->w_valid && c->w_seq == c->view_seq)
		return c->w_uneven;
	tmp = calloc(3 * (size_t)c->n, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	c->w_uneven = coll_ring_wquant(c->n, c->view, c->w, tmp);
	free(tmp);
	c->w_seq = c->view_seq;
	c->w_valid = true;
	/* once per view: say what the ranks run from now on */
	coll_log_weights(c, "the weighted ring's chunks", c->w);
	return c->w_uneven;
}

/*
 * Whether allreduce @q runs weighted: forced, or auto's schedule model,
 * asked once per view and size (COLL_PICKS of them kept: a training loop
 * repeats its bucket sizes).  Every rank asks with the same view, call
 * and settings: the same answer.
 */
static int coll_pick(struct r2cc_coll *q)
{
	struct r2cc_comm *c = q->comm;
	struct coll_auto_pick *p;
	unsigned int i;
	int ret = coll_weights(c);

	if (ret <= 0 || c->weighted)
		return ret;
	if (c->pick_seq != c->w_seq)
		c->npicks = c->pick_next = 0;
	c->pick_seq = c->w_seq;
	for (i = 0; i < c->npicks; i++)
		if (c->picks[i].count == q->count &&
		    c->picks[i].esize == q->esize)
			return c->picks[i].weighted;
	ret = coll_sched_prefer_weighted(c->n, c->view, c->w, q->count,
					 q->esize, c->slice, c->depth, c->sets);
	if (ret < 0)
		return ret;
	log_msg(c->ctx, R2CC_LOG_INFO,
		"auto: allreduces of %zu elements run as the %s from collective #%u (engine schedule model)",
		q->count, ret ? "weighted ring" : "ring", q->seq);
	p = &c->picks[c->pick_next];
	c->pick_next = (c->pick_next + 1) % COLL_PICKS;
	if (c->npicks < COLL_PICKS)
		c->npicks++;
	p->count = q->count;
	p->esize = q->esize;
	p->weighted = ret;
	return ret;
}

/*
 * auto on the mesh: whether allreduces of the agreed view run as the
 * optimal allreduce (coll_auto_direct), asked once per view; 1, 0 or
 * -ENOMEM.  The view and the rule are the same on every rank.
 */
static int coll_pick_direct(struct r2cc_comm *c, uint32_t seq)
{
	double *tmp;
	bool pick;

	if (!c->d_auto || !c->view_valid)
		return 0;
	if (c->d_valid && c->d_seq == c->view_seq)
		return c->d_pick;
	tmp = calloc(3 * (size_t)c->n, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	pick = coll_auto_direct(c->n, c->view, tmp);
	free(tmp);
	if (pick != (c->d_valid && c->d_pick))
		log_msg(c->ctx, R2CC_LOG_INFO,
			"auto: allreduces run as %s from collective #%u (the optimal allreduce's model %s %.2f of the ring's)",
			pick ? "the optimal allreduce" : "a ring", seq,
			pick ? "at most" : "above", COLL_DIRECT_MARGIN);
	c->d_seq = c->view_seq;
	c->d_valid = true;
	c->d_pick = pick;
	return pick;
}

/*
 * Fix a ring collective's geometry when it starts, not when it is issued:
 * every rank has adopted the same view when the same collective starts
 * (view.c), but at issue an earlier one may still be running here
 * and have finished there.  An allreduce takes the view's weights.
 */
static int ring_start(struct r2cc_coll *q)
{
	struct r2cc_comm *c = q->comm;
	size_t off, len, most = 0, cap;
	int k, ret;

	ret = q->kind == COLL_ALLREDUCE && !c->optimal ?
	      coll_pick_direct(c, q->seq) : 0;
	if (ret < 0)
		return ret;
	if (q->kind == COLL_ALLREDUCE && (c->optimal || ret)) {
		q->ops = &coll_direct_ops;
		return q->ops->start(q);
	}
	ret = q->kind == COLL_ALLREDUCE ? coll_pick(q) : 0;
	if (ret < 0)
		return ret;
	if (ret) {
		q->coff = calloc((size_t)c->n + 1, sizeof(*q->coff));
		if (!q->coff)
			return -ENOMEM;
		for (k = 0; k < c->n; k++)
			coll_chunk_w(q->count, c->w, k, &q->coff[k], &len);
		q->coff[c->n] = q->count;
		q->algo = COLL_ALGO_WRING;
	}
	/*
	 * The largest chunk decides the slice count of every chunk; a slice
	 * holds whole elements and never more than c->slice bytes.
	 */
	for (k = 0; k < q->nchunks; k++) {
		coll_geometry(q, k, &off, &len);
		most = len > most ? len : most;
	}
	cap = c->slice / q->esize;
	q->nslices = coll_nslices(most, cap);
	batch_start(q, 0);
	return 0;
}

/*
 * The ring, and the weighted ring, which is the ring with its chunks cut
 * by the view: the engine's own algorithm, and every collective's until
 * issue (recursive doubling) or start (the optimal allreduce) picks
 * another.
 */
const struct coll_algo_ops coll_ring_ops = {
	.name = "ring",
	.start = ring_start,
	.step = coll_step,
};
