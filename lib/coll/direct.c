// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The optimal allreduce (R2CC_ALGO=optimal), on the collectives' mesh:
 * a reduce-scatter and an allgather done directly, every rank owning one
 * share of the data (weighted by the agreed view, coll_direct_wquant).
 * Every rank sends its data of each other share to that share's owner;
 * the owner reduces the n contributions of each slice in rank order and
 * sends the result to every other rank.  A rank with share p_r of D moves
 * (1 + (n - 2) p_r) D each way, so the shares can make every rank finish
 * together and reach the R2CCL paper's lower bound for a degraded node
 * (model/weight.c), where the ring makes the slowest rank pace the others.
 * It takes two message latencies where the ring takes 2 (n - 1), and
 * n - 1 connections each way per rank where the ring takes one: it is
 * meant for tens of ranks, not thousands.
 *
 * Each ordered pair's connection carries, in order, the sender's slices
 * of the receiver's share (its contributions), then the slices of the
 * sender's own share (its results): both ends know the sequence, and the
 * transport matches messages in order.  Every share has at least one
 * slice, empty if need be, so every rank hears from every other and the
 * headers carry every rank's view value (view.c) as the ring's do.
 *
 * Slots: dwin per peer each way.  A contribution stays in its receive
 * slot until its slice is reduced; a result is copied out on arrival.
 * Nothing can wait in a cycle: a slice's reduction waits for the
 * contributions of that slice, which wait only for earlier reductions
 * (their slots), and a result waits for its reduction.  In place, a
 * rank's data of another share is copied into a send slot before that
 * share's owner can have sent back the result that overwrites it.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "base/base.h"

#define HDR	sizeof(struct coll_hdr)

static int mesh_send(struct r2cc_comm *c, int peer, void *buf, size_t len,
		     struct r2cc_req **req)
{
	return r2cc_isend(c->cto[peer], c->dmr, buf, len, 0, req);
}

static int mesh_recv(struct r2cc_comm *c, int peer, void *buf, size_t cap,
		     struct r2cc_req **req)
{
	uint32_t tag = 0;

	return r2cc_irecv(c->cfrom[peer], 1, &buf, &cap, &tag, &c->dmr, req);
}

static int mesh_test(struct r2cc_req *req, int *done, size_t *got)
{
	return r2cc_test(req, done, got);
}

const struct coll_io coll_io_mesh = {
	.send = mesh_send,
	.recv = mesh_recv,
	.test = mesh_test,
};

int coll_direct_stage(struct r2cc_comm *c)
{
	/* every slot's header aligned, whatever the slice size */
	size_t slot = (HDR + c->slice + 63) & ~(size_t)63, nslots, i;

	c->dwin = c->depth;
	nslots = 2 * (size_t)c->n * c->dwin;
	c->dstage_len = nslots * slot;
	if (!c->io)
		c->io = &coll_io_mesh;
	if (posix_memalign((void **)&c->dstage, 4096, c->dstage_len))
		return -ENOMEM;
	memset(c->dstage, 0, c->dstage_len);
	c->dslots = calloc(nslots, sizeof(*c->dslots));
	c->dacc = malloc(c->slice);
	c->dw = calloc((size_t)c->n, sizeof(*c->dw));
	if (!c->dslots || !c->dacc || !c->dw)
		return -ENOMEM;
	for (i = 0; i < nslots; i++)
		c->dslots[i].buf = c->dstage + i * slot;
	return c->ctx ? r2cc_mr_reg(c->ctx, c->dstage, c->dstage_len, 0,
				    &c->dmr) : 0;
}

void coll_direct_unstage(struct r2cc_comm *c)
{
	if (c->dmr)
		r2cc_mr_dereg(c->dmr);
	c->dmr = NULL;
	free(c->dslots);
	free(c->dstage);
	free(c->dacc);
	free(c->dw);
	c->dslots = NULL;
	c->dstage = NULL;
	c->dacc = NULL;
	c->dw = NULL;
}

static struct coll_slot *in_slot(struct r2cc_comm *c, int peer, size_t m)
{
	return &c->dslots[2 * (size_t)peer * c->dwin + m % c->dwin];
}

static struct coll_slot *out_slot(struct r2cc_comm *c, int peer, size_t m)
{
	return &c->dslots[(2 * (size_t)peer + 1) * c->dwin + m % c->dwin];
}

/* Slices of rank @x's share. */
static size_t nsl(const struct r2cc_coll *q, int x)
{
	return coll_nslices(q->doff[x + 1] - q->doff[x], q->dcap);
}

/* Elements [*@off, *@off + *@len) of slice @j of rank @x's share. */
static void dslice(const struct r2cc_coll *q, int x, size_t j, size_t *off,
		   size_t *len)
{
	size_t end = q->doff[x + 1];

	*off = q->doff[x] + j * q->dcap;
	if (*off > end)
		*off = end;
	*len = end - *off < q->dcap ? end - *off : q->dcap;
}

/*
 * Message @m from rank @from to rank @to: a slice of @to's share (a
 * contribution) for the first nsl(@to), then of @from's (a result).
 */
static void msg_of(const struct r2cc_coll *q, int to, int from, size_t m,
		   int *owner, size_t *j)
{
	size_t k = nsl(q, to);

	*owner = m < k ? to : from;
	*j = m < k ? m : m - k;
}

/* The shares of the agreed view, computed once per view; 0 or -ENOMEM. */
static int direct_weights(struct r2cc_comm *c)
{
	double *tmp;

	if (!c->view_valid) {
		coll_equal_weights(c->n, c->dw);
		return 0;
	}
	if (c->dw_valid && c->dw_seq == c->view_seq)
		return 0;
	tmp = calloc(2 * (size_t)c->n, sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	coll_direct_wquant(c->n, c->view, c->dw, tmp);
	free(tmp);
	c->dw_seq = c->view_seq;
	c->dw_valid = true;
	coll_log_weights(c, "the optimal allreduce's shares", c->dw);
	return 0;
}

int coll_direct_start(struct r2cc_coll *q)
{
	int ret;

	if (q->comm->n < 2)
		return -EINVAL;
	q->algo = COLL_ALGO_DIRECT;
	ret = direct_weights(q->comm);
	return ret ? ret : coll_direct_geometry(q, q->comm->dw);
}

int coll_direct_geometry(struct r2cc_coll *q, const uint32_t *w)
{
	struct r2cc_comm *c = q->comm;
	size_t len;
	int k;

	if (c->n < 2)
		return -EINVAL;
	q->doff = calloc((size_t)c->n + 1, sizeof(*q->doff));
	q->dl = calloc((size_t)c->n, sizeof(*q->dl));
	if (!q->doff || !q->dl)
		return -ENOMEM;
	for (k = 0; k < c->n; k++)
		coll_chunk_w(q->count, w, k, &q->doff[k], &len);
	q->doff[c->n] = q->count;
	q->dcap = c->slice / q->esize;
	for (k = 0; k < c->n; k++)
		if (k != c->rank)
			q->dl[k].n = nsl(q, k) + nsl(q, c->rank);
	return 0;
}

/* A received header against this rank's call and the message expected. */
static int hdr_check(struct r2cc_coll *q, const struct coll_hdr *h, int peer,
		     int owner, size_t j, size_t got, size_t want)
{
	const char *why = coll_hdr_why(q, h, got);
	uint32_t v = le32toh(h->vmbps);

	if (!why && (le32toh(h->chunk) != (uint32_t)owner ||
		     le32toh(h->slice) != (uint32_t)j || got != want ||
		     le32toh(h->vrank) != (uint32_t)peer))
		why = "out of step";
	if (!why && q->have[peer] && q->gather[peer] != v)
		why = "another view";
	if (why)
		return q->comm->ctx ? coll_hdr_mismatch(q, h, peer, why) :
				      -EPROTO;
	q->gather[peer] = v;
	q->have[peer] = 1;
	return 0;
}

static int post_out(struct r2cc_coll *q, int p, bool *moved)
{
	struct r2cc_comm *c = q->comm;
	struct coll_dlink *l = &q->dl[p];

	while (l->out_post < l->n) {
		size_t m = l->out_post, j, off, len;
		struct coll_slot *s = out_slot(c, p, m);
		int owner, ret;

		if (m >= c->dwin && l->out_done <= m - c->dwin)
			break;			/* its slot's send is not done */
		msg_of(q, p, c->rank, m, &owner, &j);
		if (owner == c->rank && q->dred <= j)
			break;			/* the result is not there yet */
		dslice(q, owner, j, &off, &len);
		if (len)
			memcpy(s->buf + HDR,
			       (owner == c->rank ? q->dst : q->src) +
			       off * q->esize, len * q->esize);
		coll_hdr_fill(q, (struct coll_hdr *)s->buf, owner, j, c->rank);
		ret = c->io->send(c, p, s->buf, HDR + len * q->esize, &s->req);
		if (ret)
			return ret;
		l->out_post++;
		*moved = true;
	}
	return 0;
}

static int reap_out(struct r2cc_coll *q, int p, bool *moved)
{
	struct r2cc_comm *c = q->comm;
	struct coll_dlink *l = &q->dl[p];

	while (l->out_done < l->out_post) {
		struct coll_slot *s = out_slot(c, p, l->out_done);
		int done = 0, ret = c->io->test(s->req, &done, NULL);

		if (ret || done)
			s->req = NULL;
		if (ret)
			return ret;
		if (!done)
			break;
		l->out_done++;
		*moved = true;
	}
	return 0;
}

/* Whether in-message @m from @l's peer no longer needs its slot. */
static bool released(const struct r2cc_coll *q, const struct coll_dlink *l,
		     size_t m)
{
	return m < nsl(q, q->comm->rank) ? m < q->dred : m < l->in_done;
}

static int post_in(struct r2cc_coll *q, int p, bool *moved)
{
	struct r2cc_comm *c = q->comm;
	struct coll_dlink *l = &q->dl[p];

	while (l->in_post < l->n) {
		size_t m = l->in_post;
		struct coll_slot *s = in_slot(c, p, m);
		int ret;

		if (m >= c->dwin && !released(q, l, m - c->dwin))
			break;
		ret = c->io->recv(c, p, s->buf, HDR + c->slice, &s->req);
		/* the connection's open receives: more once these complete */
		if (ret == -EAGAIN)
			break;
		if (ret)
			return ret;
		l->in_post++;
		*moved = true;
	}
	return 0;
}

static int reap_in(struct r2cc_coll *q, int p, bool *moved)
{
	struct r2cc_comm *c = q->comm;
	struct coll_dlink *l = &q->dl[p];

	while (l->in_done < l->in_post) {
		struct coll_slot *s = in_slot(c, p, l->in_done);
		size_t got = 0, j, off, len;
		int done = 0, owner, ret;

		ret = c->io->test(s->req, &done, &got);
		if (ret || done)
			s->req = NULL;
		if (ret == -EMSGSIZE) {
			if (c->ctx)
				log_msg(c->ctx, R2CC_LOG_ERROR,
					"collective #%u: rank %d sent more than this rank's call expects",
					q->seq, p);
			ret = -EPROTO;
		}
		if (ret)
			return ret;
		if (!done)
			break;
		msg_of(q, c->rank, p, l->in_done, &owner, &j);
		dslice(q, owner, j, &off, &len);
		ret = hdr_check(q, (const struct coll_hdr *)s->buf, p, owner, j,
				got, HDR + len * q->esize);
		if (ret)
			return ret;
		if (owner != c->rank && len)
			memcpy(q->dst + off * q->esize, s->buf + HDR,
			       len * q->esize);
		l->in_done++;
		*moved = true;
	}
	return 0;
}

/*
 * Reduce this rank's slices whose every contribution is in, in rank
 * order (rank 0's data OP rank 1's OP ...): the same bits whoever owns
 * the share.  In place, the own data is read before the result lands.
 */
static void reduce(struct r2cc_coll *q, bool *moved)
{
	struct r2cc_comm *c = q->comm;
	size_t k = nsl(q, c->rank);

	while (q->dred < k) {
		size_t j = q->dred, off, len;
		int p;

		for (p = 0; p < c->n; p++)
			if (p != c->rank && q->dl[p].in_done <= j)
				return;
		dslice(q, c->rank, j, &off, &len);
		for (p = 0; p < c->n && len; p++) {
			const char *in = p == c->rank ?
				q->src + off * q->esize :
				in_slot(c, p, j)->buf + HDR;

			if (!p)
				memcpy(c->dacc, in, len * q->esize);
			else
				coll_reduce(c->dacc, in, len, q->dtype, q->op);
		}
		if (len) {
			coll_finish(c->dacc, len, q->dtype, q->op, c->n);
			memcpy(q->dst + off * q->esize, c->dacc, len * q->esize);
		}
		q->dred++;
		*moved = true;
	}
}

int coll_direct_step(struct r2cc_coll *q)
{
	struct r2cc_comm *c = q->comm;
	bool moved, all;
	int p, ret;

	do {
		moved = false;
		all = q->dred == nsl(q, c->rank);
		for (p = 0; p < c->n; p++) {
			struct coll_dlink *l = &q->dl[p];

			if (p == c->rank)
				continue;
			ret = post_in(q, p, &moved);
			if (!ret)
				ret = post_out(q, p, &moved);
			if (!ret)
				ret = reap_in(q, p, &moved);
			if (!ret)
				ret = reap_out(q, p, &moved);
			if (ret)
				return ret;
			all &= l->in_done == l->n && l->out_done == l->n;
		}
		reduce(q, &moved);
		if (all && !moved)
			return 1;
	} while (moved);
	return 0;
}

const struct coll_algo_ops coll_direct_ops = {
	.name = "optimal",
	.start = coll_direct_start,
	.step = coll_direct_step,
};
