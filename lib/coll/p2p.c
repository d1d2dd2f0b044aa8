// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Point to point on a communicator: a mesh of connections, one to and one
 * from every other rank (R2CC_COMM_MESH), and sends, receives and
 * all-to-alls on it.  The mesh is apart from the ring, so its messages
 * never interleave with a collective's on the same connection (the
 * transport matches messages in order), and these operations run beside
 * the collectives rather than in their queue.
 *
 * An accepted connection does not say who connected: each rank's first
 * message on every connection it made is its rank (the hello).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll.h"
#include "base/base.h"
#include "platform/platform.h"

/*
 * Test requests @req[0..@n): the first @nsend sends, the rest receives of
 * @want bytes each.  A finished or failed one becomes NULL; the first
 * error goes to *@err (a receive of another size is -EPROTO).  Returns
 * how many are left.
 */
static int p2p_reap(struct r2cc_req **req, int n, int nsend, size_t want,
		    int *err)
{
	int i, left = 0;

	for (i = 0; i < n; i++) {
		size_t got = 0;
		int done = 0, ret;

		if (!req[i])
			continue;
		ret = r2cc_test(req[i], &done, &got);
		if (ret == -EMSGSIZE)
			ret = -EPROTO;
		if (!ret && done && i >= nsend && got != want)
			ret = -EPROTO;
		if (ret || done)
			req[i] = NULL;
		if (ret && !*err)
			*err = ret;
		left += !ret && !done;
	}
	return left;
}

/*
 * Each rank says who it is on the connections it made (@to, by rank),
 * and learns who made the ones it accepted (@in, @n - 1 of them) into
 * @from, by rank.
 */
static int mesh_hello(struct r2cc_comm *c, struct r2cc_conn **to,
		      struct r2cc_conn **from, struct r2cc_conn **in,
		      uint64_t deadline_ns)
{
	struct timespec nap = { 0, 100000 };
	int n = c->n, i, k = 0, ret;
	struct r2cc_req **req = calloc(2 * (size_t)n, sizeof(*req));
	int32_t *who = calloc((size_t)n, sizeof(*who));
	struct r2cc_mr *mr = NULL;

	ret = req && who ? 0 : -ENOMEM;
	if (!ret)
		ret = r2cc_mr_reg(c->ctx, who, (size_t)n * sizeof(*who), 0, &mr);
	if (!ret)
		who[0] = c->rank;
	/* the sends are requests 0..n-2, the receives n-1.. */
	for (i = 0; i < n - 1 && !ret; i++) {
		void *buf = &who[i + 1];
		size_t len = sizeof(*who);
		uint32_t tag = 0;

		ret = r2cc_irecv(in[i], 1, &buf, &len, &tag, &mr,
				 &req[n - 1 + i]);
	}
	for (i = 0; i < n && !ret; i++)
		if (to[i])
			ret = r2cc_isend(to[i], mr, &who[0], sizeof(*who), 0,
					 &req[k++]);
	while (!ret && p2p_reap(req, 2 * (n - 1), n - 1, sizeof(*who), &ret) &&
	       !ret) {
		if (clock_now_ns() > deadline_ns)
			ret = -ETIMEDOUT;
		else
			nanosleep(&nap, NULL);
	}
	for (i = 0; i < n - 1 && !ret; i++) {
		int32_t p = who[i + 1];

		if (p < 0 || p >= n || p == c->rank || from[p])
			ret = -EPROTO;
		else
			from[p] = in[i];
	}
	if (ret) {
		/* closing cancels what is posted into @who */
		memset(from, 0, (size_t)n * sizeof(*from));
		for (i = 0; i < n - 1; i++)
			r2cc_conn_close(in[i]);
		coll_close_all(to, n);
	}
	if (mr)
		r2cc_mr_dereg(mr);
	free(who);
	free(req);
	return ret;
}

/* A mesh into *@to and *@from, each by rank (NULL at this rank's). */
int coll_mesh_connect(struct r2cc_comm *c, struct r2cc_boot *boot,
		      uint64_t primary, uint32_t timeout_ms,
		      struct r2cc_conn ***to, struct r2cc_conn ***from)
{
	uint64_t deadline = clock_now_ns() + timeout_ms * 1000000ull;
	struct r2cc_conn **in = NULL, **out = NULL;
	int *dst = NULL, ret, i, k = 0;

	*to = calloc((size_t)c->n, sizeof(**to));
	*from = calloc((size_t)c->n, sizeof(**from));
	if (!*to || !*from)
		return -ENOMEM;
	if (c->n < 2)
		return 0;
	in = calloc((size_t)c->n, sizeof(*in));
	out = calloc((size_t)c->n, sizeof(*out));
	dst = calloc((size_t)c->n, sizeof(*dst));
	ret = in && out && dst ? 0 : -ENOMEM;
	for (i = 0; i < c->n; i++)
		if (i != c->rank && dst)
			dst[k++] = i;
	if (!ret)
		ret = coll_wire(c, boot, primary, dst, out, k, in, k, deadline);
	for (i = 0; i < k && !ret; i++)
		(*to)[dst[i]] = out[i];
	if (!ret)
		ret = mesh_hello(c, *to, *from, in, deadline);
	free(dst);
	free(out);
	free(in);
	if (ret)
		log_msg(c->ctx, R2CC_LOG_ERROR,
			"communicator rank %d of %d: connecting the mesh: %s",
			c->rank, c->n, strerror(-ret));
	return ret;
}

/* A point-to-point request with room for @nreq transport requests. */
static int p2p_new(struct r2cc_comm *c, int nreq, struct r2cc_coll **out)
{
	struct r2cc_coll *q = calloc(1, sizeof(*q));
	int ret;

	if (!q)
		return -ENOMEM;
	q->p2p = calloc(1, sizeof(*q->p2p) + (size_t)nreq * sizeof(q->p2p->req[0]));
	if (!q->p2p) {
		free(q);
		return -ENOMEM;
	}
	q->comm = c;
	q->kind = COLL_P2P;
	q->anext = c->all;
	c->all = q;
	ret = handle_add(q, R2CC_OBJ_COLL);
	if (ret) {
		coll_free(q);
		return ret;
	}
	*out = q;
	return 0;
}

/*
 * Arguments every point-to-point call shares; the bytes of one block in
 * *@len.  @each: a block for every rank (all-to-all), not one.
 */
static int p2p_check(struct r2cc_comm *c, const void *buf, size_t count,
		     enum r2cc_dtype dtype, bool each, size_t *len,
		     struct r2cc_coll **req)
{
	size_t es = coll_dtype_size(dtype), blocks;

	if (req)
		*req = NULL;
	if (!c || !req)
		return -EINVAL;
	if (!handle_ok(c, R2CC_OBJ_COMM))
		return -EBADF;
	if (!es)
		return -EINVAL;
	if (!c->to)
		return -EOPNOTSUPP;
	blocks = each ? (size_t)c->n : 1;
	if (count > SIZE_MAX / es / blocks)
		return -EOVERFLOW;
	*len = count * es;
	return count && !buf ? -EINVAL : 0;
}

/* Register @len bytes at @buf, or nothing for none. */
static int p2p_reg(struct r2cc_comm *c, const void *buf, size_t len,
		   struct r2cc_mr **mr)
{
	*mr = NULL;
	return len ? r2cc_mr_reg(c->ctx, (void *)buf, len, 0, mr) : 0;
}

/* A receive of @len bytes from @peer into @buf (@mr), as request @i. */
static int p2p_recv(struct r2cc_coll *q, int peer, void *buf, size_t len,
		    struct r2cc_mr *mr, int i)
{
	struct r2cc_comm *c = q->comm;
	uint32_t tag = 0;

	/* a 0-byte receive still takes a buffer inside a registration */
	if (!len) {
		buf = c->stage;
		mr = c->mr;
	}
	return r2cc_irecv(c->from[peer], 1, &buf, &len, &tag, &mr,
			  &q->p2p->req[i]);
}

static int p2p_send(struct r2cc_coll *q, int peer, const void *buf, size_t len,
		    struct r2cc_mr *mr, int i)
{
	struct r2cc_comm *c = q->comm;

	if (!len) {
		buf = c->stage;
		mr = c->mr;
	}
	return r2cc_isend(c->to[peer], mr, buf, len, 0, &q->p2p->req[i]);
}

/* A posting failed: what was posted still runs; coll_p2p_run reaps it. */
static int p2p_posted(struct r2cc_coll *q, int ret, struct r2cc_coll **req)
{
	if (ret && !q->err)
		q->err = ret;
	coll_p2p_run(q);
	*req = q;
	return 0;
}

static int p2p_one(struct r2cc_comm *c, void *buf, size_t count,
		   enum r2cc_dtype dtype, int peer, bool send,
		   struct r2cc_coll **req)
{
	struct r2cc_coll *q;
	struct r2cc_mr *mr;
	size_t len;
	int ret;

	ret = p2p_check(c, buf, count, dtype, false, &len, req);
	if (ret)
		return ret;
	if (peer < 0 || peer >= c->n || peer == c->rank)
		return -EINVAL;
	ret = p2p_reg(c, buf, len, &mr);
	if (!ret)
		ret = p2p_new(c, 1, &q);
	if (ret) {
		if (mr)
			r2cc_mr_dereg(mr);
		return ret;
	}
	q->p2p->mr[0] = mr;
	q->p2p->nreq = 1;
	q->p2p->nsend = send;
	q->p2p->want = len;
	ret = send ? p2p_send(q, peer, buf, len, mr, 0) :
		     p2p_recv(q, peer, buf, len, mr, 0);
	return p2p_posted(q, ret, req);
}

R2CC_EXPORT int r2cc_send(struct r2cc_comm *c, const void *buf, size_t count,
			  enum r2cc_dtype dtype, int peer,
			  struct r2cc_coll **req)
{
	return p2p_one(c, (void *)buf, count, dtype, peer, true, req);
}

R2CC_EXPORT int r2cc_recv(struct r2cc_comm *c, void *buf, size_t count,
			  enum r2cc_dtype dtype, int peer,
			  struct r2cc_coll **req)
{
	return p2p_one(c, buf, count, dtype, peer, false, req);
}

R2CC_EXPORT int r2cc_alltoall(struct r2cc_comm *c, const void *sendbuf,
			      void *recvbuf, size_t count,
			      enum r2cc_dtype dtype, struct r2cc_coll **req)
{
	struct r2cc_mr *mr[2] = { NULL, NULL };
	const char *s = sendbuf;
	char *d = recvbuf;
	struct r2cc_coll *q;
	size_t len, all;
	int ret, j, k = 0;

	ret = p2p_check(c, sendbuf, count, dtype, true, &len, req);
	if (ret)
		return ret;
	all = len * (size_t)c->n;
	if (count && (!recvbuf || (d < s + all && s < d + all)))
		return -EINVAL;
	ret = p2p_reg(c, s, c->n > 1 ? all : 0, &mr[0]);
	if (!ret)
		ret = p2p_reg(c, d, c->n > 1 ? all : 0, &mr[1]);
	if (!ret)
		ret = p2p_new(c, 2 * (c->n - 1), &q);
	if (ret) {
		for (j = 0; j < 2; j++)
			if (mr[j])
				r2cc_mr_dereg(mr[j]);
		return ret;
	}
	memcpy(q->p2p->mr, mr, sizeof(mr));
	q->p2p->nsend = c->n - 1;
	q->p2p->nreq = 2 * (c->n - 1);
	q->p2p->want = len;
	if (len)
		memcpy(d + (size_t)c->rank * len, s + (size_t)c->rank * len,
		       len);
	/* receives first: each rank's sends find them posted */
	for (j = 0; j < c->n && !ret; j++)
		if (j != c->rank)
			ret = p2p_recv(q, j, len ? d + (size_t)j * len : NULL,
				       len, mr[1], c->n - 1 + k++);
	for (j = 0, k = 0; j < c->n && !ret; j++)
		if (j != c->rank)
			ret = p2p_send(q, j, len ? s + (size_t)j * len : NULL,
				       len, mr[0], k++);
	return p2p_posted(q, ret, req);
}

/* Reap what completed; once nothing is left, release the buffers. */
void coll_p2p_run(struct r2cc_coll *q)
{
	struct coll_p2p *p = q->p2p;
	int err = q->err, left, j;

	left = p2p_reap(p->req, p->nreq, p->nsend, p->want, &q->err);
	if (!err && q->err == -EPROTO)
		log_msg(q->comm->ctx, R2CC_LOG_ERROR,
			"point to point: a receive of %zu bytes met a send of another size",
			p->want);
	if (left)
		return;
	for (j = 0; j < 2; j++)
		if (p->mr[j]) {
			r2cc_mr_dereg(p->mr[j]);
			p->mr[j] = NULL;
		}
	q->finished = true;
}

