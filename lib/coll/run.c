// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The collective engine: runs the collectives of a communicator one
 * after another in the order they were issued, each by its algorithm
 * (struct coll_algo_ops: the ring, ring.c; recursive doubling and the
 * trees, rd.c; the optimal allreduce, direct.c; R2CC-AllReduce,
 * paper.c), and issues them: the checks of a call, its program, the
 * part of it that needs no peer.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "coll/coll.h"
#include "base/base.h"
#include "platform/platform.h"

/* Run the queue: finished collectives leave it, the first error fails all. */
void coll_run(struct r2cc_comm *c)
{
	struct r2cc_coll *q;
	int ret;

	while ((q = c->head)) {
		ret = 0;
		if (!c->err && !q->started) {
			q->started = true;
			ret = q->ops->start(q);
		}
		if (ret < 0 || c->err)
			ret = c->err ? c->err : ret;
		else
			ret = q->ops->step(q);
		if (!ret)
			return;
		if (ret < 0 && !c->err) {
			c->err = ret;
			log_msg(c->ctx, R2CC_LOG_ERROR,
				"collective #%u failed: %s; the communicator is unusable",
				q->seq, strerror(-ret));
		}
		q->err = ret < 0 ? ret : 0;
		if (!q->err)
			coll_view_adopt(q);
		q->finished = true;
		c->done += !q->err;
		c->done_rd += !q->err && q->algo == COLL_ALGO_RD;
		c->done_w += !q->err && q->algo == COLL_ALGO_WRING;
		c->done_direct += !q->err && q->algo == COLL_ALGO_DIRECT;
		c->done_paper += !q->err && q->algo == COLL_ALGO_PAPER;
		c->head = q->next;
		if (!c->head)
			c->tail = NULL;
	}
}

/*
 * The communicator's last act (r2cc_comm_destroy): a barrier, so that no
 * rank closes its connections while a neighbour still finishes a
 * collective over them.  Bounded by @timeout_ms; its error is of no use.
 */
void coll_goodbye(struct r2cc_comm *c, uint32_t timeout_ms)
{
	uint64_t t0 = clock_now_ns();
	struct r2cc_coll *q;
	int done = 0;

	if (c->err || c->n < 2 || r2cc_barrier(c, &q))
		return;
	while (!r2cc_coll_test(q, &done) && !done)
		if (clock_now_ns() - t0 > timeout_ms * 1000000ull)
			break;
}

static bool overlap(const void *a, size_t alen, const void *b, size_t blen)
{
	uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;

	return alen && blen && x < y + blen && y < x + alen;
}

/* Ops and slices of @q's program; 0 or -ENOMEM. */
static int coll_prepare(struct r2cc_coll *q)
{
	struct r2cc_comm *c = q->comm;
	int i, par = 0;

	/* the same choice on every rank: it depends on the call and rd_max */
	if ((q->kind == COLL_ALLREDUCE || q->kind == COLL_BROADCAST ||
	     q->kind == COLL_REDUCE) && c->cto && c->n > 1 &&
	    q->count * q->esize <= c->rd_max) {
		q->algo = COLL_ALGO_RD;
		q->ops = &coll_rd_ops;
		q->rd = calloc(COLL_RD_MAX_STEPS, sizeof(*q->rd));
		if (!q->rd)
			return -ENOMEM;
		q->nsteps = q->kind == COLL_ALLREDUCE ?
			coll_rd_plan(c->rank, c->n, q->rd) :
			coll_tree_plan(q->kind, c->rank, c->n, q->root, q->rd);
		return 0;
	}
	/* R2CC-AllReduce runs the ring's program first: it takes it too */
	q->ops = q->kind == COLL_ALLREDUCE && c->paper && c->n > 1 ?
		 &coll_paper_ops : &coll_ring_ops;
	q->steps = calloc(2 * (size_t)c->n, sizeof(*q->steps));
	q->recv_ops = calloc(2 * (size_t)c->n, sizeof(*q->recv_ops));
	q->send_ops = calloc(2 * (size_t)c->n, sizeof(*q->send_ops));
	q->gather = calloc((size_t)c->n, sizeof(*q->gather));
	q->have = calloc((size_t)c->n, sizeof(*q->have));
	if (!q->steps || !q->recv_ops || !q->send_ops || !q->gather ||
	    !q->have)
		return -ENOMEM;
	/* this rank's value as of the call: what it tells the others */
	q->gather[c->rank] = coll_view_local(c);
	q->have[c->rank] = 1;
	q->nsteps = coll_plan(q->kind, c->rank, c->n, q->root, q->steps);
	q->nchunks = coll_nchunks(q->kind, c->n);
	for (i = 0; i < q->nsteps; i++) {
		if (q->steps[i].send_chunk >= 0) {
			q->send_ops[q->nsend].step = (int16_t)i;
			/* a forward: the slot set the step before received into */
			q->send_ops[q->nsend++].set =
				q->nrecv ? q->recv_ops[q->nrecv - 1].set : 0;
		}
		if (q->steps[i].recv_chunk >= 0) {
			q->recv_ops[q->nrecv].step = (int16_t)i;
			q->recv_ops[q->nrecv++].set = (int16_t)par;
			par = (par + 1) % (int)q->comm->sets;
		}
	}
	return 0;
}

/* A rank's part that needs no peer: in-place copies, a lone rank's result. */
static void coll_local(struct r2cc_coll *q)
{
	struct r2cc_comm *c = q->comm;
	size_t bytes = q->count * q->esize, me = (size_t)c->rank * bytes;

	switch (q->kind) {
	case COLL_ALLGATHER:
		if (q->dst + me != q->src)
			memcpy(q->dst + me, q->src, bytes);
		break;
	case COLL_BROADCAST:
		if (c->rank == q->root && q->dst != q->src)
			memcpy(q->dst, q->src, bytes);
		break;
	case COLL_REDUCE_SCATTER:
		if (c->n == 1 && q->dst != q->src + me)
			memcpy(q->dst, q->src + me, bytes);
		break;
	case COLL_ALLREDUCE:
	case COLL_REDUCE:
		if (c->n == 1 && q->dst != q->src)
			memcpy(q->dst, q->src, bytes);
		break;
	case COLL_BARRIER:
	case COLL_P2P:
		break;
	}
}

static int coll_issue(struct r2cc_comm *c, enum coll_kind kind,
		      const void *sendbuf, void *recvbuf, size_t count,
		      enum r2cc_dtype dtype, enum r2cc_redop op, int root,
		      struct r2cc_coll **out)
{
	size_t es = coll_dtype_size(dtype), in, res;
	struct r2cc_coll *q;
	int ret;

	if (out)
		*out = NULL;
	if (!c || !out)
		return -EINVAL;
	if (!handle_ok(c, R2CC_OBJ_COMM))
		return -EBADF;
	if (!es || !coll_op_ok(op) || root < 0 || root >= c->n)
		return -EINVAL;
	if (count > SIZE_MAX / es / (size_t)c->n ||
	    count * es / c->slice > UINT32_MAX)
		return -EOVERFLOW;
	/* bytes read from sendbuf and written to recvbuf at this rank */
	in = count * es;
	res = count * es;
	if (kind == COLL_REDUCE_SCATTER)
		in *= (size_t)c->n;
	if (kind == COLL_ALLGATHER)
		res *= (size_t)c->n;
	if (kind == COLL_BROADCAST && c->rank != root)
		in = 0;
	if (kind == COLL_REDUCE && c->rank != root)
		res = 0;
	if ((in && !sendbuf) || (res && !recvbuf))
		return -EINVAL;
	if (in && res && overlap(sendbuf, in, recvbuf, res) &&
	    !(kind == COLL_ALLGATHER &&
	      (const char *)recvbuf + c->rank * in == sendbuf) &&
	    !(kind == COLL_REDUCE_SCATTER &&
	      (const char *)sendbuf + c->rank * res == recvbuf) &&
	    !(kind != COLL_ALLGATHER && kind != COLL_REDUCE_SCATTER &&
	      sendbuf == recvbuf))
		return -EINVAL;
	if (c->err)
		return c->err;
	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	q->comm = c;
	q->kind = kind;
	q->dtype = dtype;
	q->op = op;
	q->root = root;
	q->src = sendbuf;
	q->dst = recvbuf;
	q->count = count;
	q->esize = es;
	q->seq = c->seq;
	q->anext = c->all;
	c->all = q;
	ret = coll_prepare(q);
	if (!ret)
		ret = handle_add(q, R2CC_OBJ_COLL);
	if (ret) {
		coll_free(q);
		return ret;
	}
	c->seq++;
	coll_local(q);
	/* nothing to move: count 0 (all ranks agree), or a lone rank */
	if (!q->nsteps || (!count && kind != COLL_BARRIER)) {
		q->finished = true;
		c->done++;
	} else {
		if (c->tail)
			c->tail->next = q;
		else
			c->head = q;
		c->tail = q;
		coll_run(c);
	}
	*out = q;
	return 0;
}

R2CC_EXPORT int r2cc_allreduce(struct r2cc_comm *c, const void *sendbuf,
			       void *recvbuf, size_t count,
			       enum r2cc_dtype dtype, enum r2cc_redop op,
			       struct r2cc_coll **req)
{
	return coll_issue(c, COLL_ALLREDUCE, sendbuf, recvbuf, count, dtype, op,
			  0, req);
}

R2CC_EXPORT int r2cc_reduce_scatter(struct r2cc_comm *c, const void *sendbuf,
				    void *recvbuf, size_t count,
				    enum r2cc_dtype dtype, enum r2cc_redop op,
				    struct r2cc_coll **req)
{
	return coll_issue(c, COLL_REDUCE_SCATTER, sendbuf, recvbuf, count,
			  dtype, op, 0, req);
}

R2CC_EXPORT int r2cc_allgather(struct r2cc_comm *c, const void *sendbuf,
			       void *recvbuf, size_t count,
			       enum r2cc_dtype dtype, struct r2cc_coll **req)
{
	return coll_issue(c, COLL_ALLGATHER, sendbuf, recvbuf, count, dtype,
			  R2CC_SUM, 0, req);
}

R2CC_EXPORT int r2cc_broadcast(struct r2cc_comm *c, const void *sendbuf,
			       void *recvbuf, size_t count,
			       enum r2cc_dtype dtype, int root,
			       struct r2cc_coll **req)
{
	return coll_issue(c, COLL_BROADCAST, sendbuf, recvbuf, count, dtype,
			  R2CC_SUM, root, req);
}

R2CC_EXPORT int r2cc_reduce(struct r2cc_comm *c, const void *sendbuf,
			    void *recvbuf, size_t count, enum r2cc_dtype dtype,
			    enum r2cc_redop op, int root, struct r2cc_coll **req)
{
	return coll_issue(c, COLL_REDUCE, sendbuf, recvbuf, count, dtype, op,
			  root, req);
}

R2CC_EXPORT int r2cc_barrier(struct r2cc_comm *c, struct r2cc_coll **req)
{
	return coll_issue(c, COLL_BARRIER, NULL, NULL, 0, R2CC_UINT8, R2CC_SUM,
			  0, req);
}

R2CC_EXPORT int r2cc_coll_test(struct r2cc_coll *q, int *done)
{
	int ret;

	if (done)
		*done = 0;
	if (!q || !done)
		return -EINVAL;
	if (!handle_ok(q, R2CC_OBJ_COLL))
		return -EBADF;
	if (!q->finished && q->kind == COLL_P2P)
		coll_p2p_run(q);
	else if (!q->finished)
		coll_run(q->comm);
	if (!q->finished)
		return 0;
	/* as r2cc_test(): finished, freed, and its error if it failed */
	ret = q->err;
	*done = 1;
	coll_free(q);
	return ret;
}
