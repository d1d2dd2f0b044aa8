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

#include "coll.h"
#include "internal.h"

/* Wait for @n requests; NULL ones are done.  0 or the first error. */
static int wait_all(struct r2cc_req **req, int n, uint64_t deadline_ns)
{
	struct timespec nap = { 0, 100000 };
	int i, left, done, ret, err = 0;

	do {
		for (i = 0, left = 0; i < n; i++) {
			if (!req[i])
				continue;
			done = 0;
			ret = r2cc_test(req[i], &done, NULL);
			if (ret || done)
				req[i] = NULL;
			if (ret && !err)
				err = ret;
			left += !ret && !done;
		}
		if (left && r2cc_now_ns() > deadline_ns)
			return err ? err : -ETIMEDOUT;
		if (left)
			nanosleep(&nap, NULL);
	} while (left);
	return err;
}

/* Connect to every rank and accept every rank, until all are ready. */
static int mesh_wire(struct r2cc_comm *c, struct r2cc_listener *l,
		     const struct r2cc_handle *all, uint64_t primary,
		     struct r2cc_conn **in, uint64_t deadline_ns)
{
	struct r2cc_conn_opts co = { .size = sizeof(co), .primary = primary };
	struct timespec nap = { 0, 100000 };
	int i, ret = 0, nin = 0, ready, want = 2 * (c->n - 1);

	for (i = 0; i < c->n && !ret; i++)
		if (i != c->rank)
			ret = r2cc_connect_opts(c->ctx, &all[i], &co, &c->to[i]);
	while (!ret) {
		if (nin < c->n - 1) {
			ret = r2cc_accept(l, &in[nin]);
			if (!ret)
				nin++;
			else if (ret == -EAGAIN)
				ret = 0;
		}
		for (i = 0, ready = 0; i < c->n && !ret; i++) {
			if (c->to[i])
				ret = r2cc_conn_ready(c->to[i]);
			if (ret > 0)
				ready++, ret = 0;
			if (!ret && i < nin)
				ret = r2cc_conn_ready(in[i]);
			if (ret > 0)
				ready++, ret = 0;
		}
		if (ret || ready == want)
			break;
		if (r2cc_now_ns() > deadline_ns)
			ret = -ETIMEDOUT;
		else
			nanosleep(&nap, NULL);
	}
	return ret;
}

/* Each rank says who it is on the connections it made. */
static int mesh_hello(struct r2cc_comm *c, struct r2cc_conn **in,
		      uint64_t deadline_ns)
{
	int n = c->n, i, k = 0, ret;
	struct r2cc_req **req = calloc(2 * (size_t)n, sizeof(*req));
	int32_t *who = calloc((size_t)n, sizeof(*who));
	struct r2cc_mr *mr = NULL;

	ret = req && who ? 0 : -ENOMEM;
	if (!ret)
		ret = r2cc_mr_reg(c->ctx, who, (size_t)n * sizeof(*who), 0, &mr);
	if (!ret)
		who[0] = c->rank;
	for (i = 0; i < n - 1 && !ret; i++) {
		void *buf = &who[i + 1];
		size_t len = sizeof(*who);
		uint32_t tag = 0;

		ret = r2cc_irecv(in[i], 1, &buf, &len, &tag, &mr, &req[k++]);
	}
	for (i = 0; i < n && !ret; i++)
		if (c->to[i])
			ret = r2cc_isend(c->to[i], mr, &who[0], sizeof(*who),
					 0, &req[k++]);
	if (!ret)
		ret = wait_all(req, k, deadline_ns);
	for (i = 0; i < n - 1 && !ret; i++) {
		int32_t p = who[i + 1];

		if (p < 0 || p >= n || p == c->rank || c->from[p])
			ret = -EPROTO;
		else
			c->from[p] = in[i];
	}
	if (ret) {
		/* closing cancels what is posted into @who */
		memset(c->from, 0, (size_t)n * sizeof(*c->from));
		for (i = 0; i < n - 1; i++)
			if (in[i])
				r2cc_conn_close(in[i]);
		coll_mesh_close(c);
	}
	if (mr)
		r2cc_mr_dereg(mr);
	free(who);
	free(req);
	return ret;
}

int coll_mesh_connect(struct r2cc_comm *c, struct r2cc_boot *boot,
		      uint64_t primary, uint32_t timeout_ms)
{
	uint64_t deadline = r2cc_now_ns() + timeout_ms * 1000000ull;
	struct r2cc_listener *l = NULL;
	struct r2cc_conn **in = NULL;
	struct r2cc_handle mine, *all;
	int ret, i;

	c->to = calloc((size_t)c->n, sizeof(*c->to));
	c->from = calloc((size_t)c->n, sizeof(*c->from));
	if (!c->to || !c->from)
		return -ENOMEM;
	if (c->n < 2)
		return 0;
	all = calloc((size_t)c->n, sizeof(*all));
	in = calloc((size_t)c->n, sizeof(*in));
	ret = all && in ? 0 : -ENOMEM;
	memset(&mine, 0, sizeof(mine));
	if (!ret)
		ret = r2cc_listen(c->ctx, &mine, &l);
	if (!ret)
		ret = r2cc_boot_allgather(boot, &mine, sizeof(mine), all);
	if (!ret)
		ret = mesh_wire(c, l, all, primary, in, deadline);
	if (!ret)
		ret = mesh_hello(c, in, deadline);
	else
		for (i = 0; in && i < c->n; i++)
			if (in[i])
				r2cc_conn_close(in[i]);
	if (l)
		r2cc_listener_close(l);
	free(all);
	free(in);
	if (ret)
		r2cc_log(c->ctx, R2CC_LOG_ERROR,
			 "communicator rank %d of %d: connecting the mesh: %s",
			 c->rank, c->n, strerror(-ret));
	return ret;
}

void coll_mesh_close(struct r2cc_comm *c)
{
	int i;

	for (i = 0; i < c->n && c->to; i++) {
		if (c->to[i])
			r2cc_conn_close(c->to[i]);
		if (c->from && c->from[i])
			r2cc_conn_close(c->from[i]);
		c->to[i] = NULL;
		if (c->from)
			c->from[i] = NULL;
	}
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
	ret = r2cc_obj_add(q, R2CC_OBJ_COLL);
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
	if (!r2cc_obj_ok(c, R2CC_OBJ_COMM))
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
	int i, left = 0, j;

	for (i = 0; i < p->nreq; i++) {
		size_t got = 0;
		int done = 0, ret;

		if (!p->req[i])
			continue;
		ret = r2cc_test(p->req[i], &done, &got);
		if (ret == -EMSGSIZE)
			ret = -EPROTO;
		if (!ret && done && i >= p->nsend && got != p->want)
			ret = -EPROTO;
		if (ret || done)
			p->req[i] = NULL;
		if (ret == -EPROTO && !q->err)
			r2cc_log(q->comm->ctx, R2CC_LOG_ERROR,
				 "point to point: a receive of %zu bytes met a send of another size",
				 p->want);
		if (ret && !q->err)
			q->err = ret;
		left += !ret && !done;
	}
	if (left)
		return;
	for (j = 0; j < 2; j++)
		if (p->mr[j]) {
			r2cc_mr_dereg(p->mr[j]);
			p->mr[j] = NULL;
		}
	q->finished = true;
}

/* After the connections closed (comm_free) or once finished. */
void coll_p2p_free(struct r2cc_coll *q)
{
	int j;

	if (!q->p2p)
		return;
	for (j = 0; j < 2; j++)
		if (q->p2p->mr[j])
			r2cc_mr_dereg(q->p2p->mr[j]);
	free(q->p2p);
	q->p2p = NULL;
}
