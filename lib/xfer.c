// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Messages: isend/irecv/test, matching sends to announced receives, cutting
 * messages into chunks striped over the rails in proportion to bandwidth,
 * completions, the stall detector, settling a failed rail's chunks, and
 * the TCP fallback when no rail is left.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xport.h"

uint32_t nchunks_of(const struct r2cc_conn *c, size_t len)
{
	size_t n = (len + c->chunk_size - 1) / c->chunk_size;

	return n ? (uint32_t)n : 1;
}

size_t chunk_len(const struct r2cc_conn *c, const struct msg *m,
			uint32_t k)
{
	size_t off = (size_t)k * c->chunk_size;

	return m->len - off < c->chunk_size ? m->len - off : c->chunk_size;
}

/* The open message with sequence number @id, or NULL. */
struct msg *msg_by_id(struct r2cc_conn *c, uint32_t id)
{
	struct msg *m = &c->msgs[id & MSG_ID_MASK];

	return m->used && m->id == id ? m : NULL;
}

static void msg_release(struct msg *m)
{
	if (m->mr)
		m->mr->inflight--;
	free(m->chunk_state);
	free(m->chunk_rail);
	free(m->bitmap);
	memset(m, 0, sizeof(*m));
}

static void req_free(struct r2cc_req *q)
{
	int i;

	r2cc_obj_del(q);
	for (i = 0; i < q->n; i++)
		if (q->m[i])
			msg_release(q->m[i]);
	if (q->kind == REQ_RECV)
		q->conn->open_reqs--;
	free(q);
}

void msg_done(struct r2cc_conn *c, struct msg *m, int err)
{
	struct r2cc_req *q = m->req;

	if (m->done)
		return;
	m->done = true;
	m->err = err;
	if (q->kind == REQ_SEND && m->chunk_state)
		c->pend_msgs--;
	if (err && !q->err)
		q->err = err;
	if (!err) {
		c->st.msgs++;
		c->st.bytes += c->sender ? m->len : m->size;
	}
	q->sizes[m->entry] = c->sender ? m->len : m->size;
	q->ndone++;
}

/* Fail every request still open (the connection failed or closes). */
void xfer_fail_all(struct r2cc_conn *c, int err)
{
	struct r2cc_req *q;
	int i;

	for (i = 0; i < MAX_MSGS; i++)
		if (c->msgs[i].used && !c->msgs[i].done)
			msg_done(c, &c->msgs[i], err);
	for (q = c->sq_head; q; q = q->next)
		if (!q->err)
			q->err = err;
}

/* Free every request of a connection that closes. */
void xfer_release(struct r2cc_conn *c)
{
	struct r2cc_req *q;
	int i, j;

	while ((q = c->sq_head)) {
		c->sq_head = q->next;
		if (q->smr)
			q->smr->inflight--;
		req_free(q);
	}
	c->sq_tail = NULL;
	for (i = 0; i < MAX_MSGS; i++) {
		if (!c->msgs[i].used)
			continue;
		q = c->msgs[i].req;
		/* Detach the request's other messages, then free it once. */
		for (j = 0; j < q->n; j++)
			if (q->m[j] && q->m[j] != &c->msgs[i]) {
				msg_release(q->m[j]);
				q->m[j] = NULL;
			}
		req_free(q);
	}
}

/* ------------------------------------------------------------ API */

static struct r2cc_req *req_new(struct r2cc_conn *c, uint8_t kind, int n)
{
	struct r2cc_req *q = calloc(1, sizeof(*q));

	if (q && r2cc_obj_add(q, R2CC_OBJ_REQ)) {
		free(q);
		q = NULL;
	}
	if (q) {
		q->conn = c;
		q->kind = kind;
		q->n = n;
	}
	return q;
}

static int isend(struct r2cc_conn *c, struct r2cc_mr *mr, const void *buf,
		 size_t len, uint32_t tag, struct r2cc_req **out)
{
	struct r2cc_req *q;

	if (out)
		*out = NULL;
	if (!c || !out || (len && (!mr || !buf)))
		return -EINVAL;
	if (!r2cc_obj_ok(c, R2CC_OBJ_CONN) ||
	    (len && !r2cc_obj_ok(mr, R2CC_OBJ_MR)))
		return -EBADF;
	if (!c->sender)
		return -EOPNOTSUPP;
	if (len && (mr->ctx != c->ctx || !r2cc_mr_covers(mr, buf, len)))
		return -EINVAL;
	if (c->state == CONN_FAILED)
		return c->err;
	if (c->state != CONN_READY)
		return -ENOTCONN;
	if ((len + c->chunk_size - 1) / c->chunk_size > IMM_CHUNK_MASK)
		return -EMSGSIZE;
	if (!rails_up(c) && !c->ctx->tune.tcp_fallback)
		return -ENETDOWN;
	q = req_new(c, REQ_SEND, 1);
	if (!q)
		return -ENOMEM;
	/* Parked in the msg-less fields until a receive is announced. */
	q->sizes[0] = len;
	q->sbuf = (uint8_t *)(uintptr_t)buf;
	q->smr = len ? mr : NULL;
	q->stag = tag;
	if (q->smr)
		q->smr->inflight++;
	if (c->sq_tail)
		c->sq_tail->next = q;
	else
		c->sq_head = q;
	c->sq_tail = q;
	*out = q;
	xfer_progress(c);
	return 0;
}

static int irecv(struct r2cc_conn *c, int n, void *const *bufs,
		 const size_t *lens, const uint32_t *tags,
		 struct r2cc_mr *const *mrs, struct r2cc_req **out)
{
	struct {
		struct wire_cts h;
		struct wire_cts_entry e[R2CC_MAX_RECVS];
	} cts = { .h.count = (uint32_t)n };
	struct r2cc_req *q;
	int i, k, ret;

	if (out)
		*out = NULL;
	if (!c || !out || n < 1 || n > R2CC_MAX_RECVS || !bufs || !lens ||
	    !tags || !mrs)
		return -EINVAL;
	if (!r2cc_obj_ok(c, R2CC_OBJ_CONN))
		return -EBADF;
	if (c->sender)
		return -EOPNOTSUPP;
	for (i = 0; i < n; i++) {
		if (!lens[i])
			continue;
		if (!bufs[i] || !mrs[i])
			return -EINVAL;
		if (!r2cc_obj_ok(mrs[i], R2CC_OBJ_MR))
			return -EBADF;
		if (mrs[i]->ctx != c->ctx ||
		    !r2cc_mr_covers(mrs[i], bufs[i], lens[i]))
			return -EINVAL;
		if ((lens[i] + c->chunk_size - 1) / c->chunk_size >
		    IMM_CHUNK_MASK)
			return -EMSGSIZE;
	}
	if (c->state == CONN_FAILED)
		return c->err;
	if (c->state != CONN_READY)
		return -ENOTCONN;
	if (!rails_up(c) && !c->ctx->tune.tcp_fallback)
		return -ENETDOWN;
	if (c->open_reqs >= MAX_RECV_REQS)
		return -EAGAIN;
	/*
	 * Message N takes slot N % MAX_MSGS: never while an older message
	 * still holds it (a request ahead of it has not been tested yet).
	 */
	for (i = 0; i < n; i++)
		if (c->msgs[(c->next_msg_id + (uint32_t)i) & MSG_ID_MASK].used)
			return -EAGAIN;
	q = req_new(c, REQ_RECV, n);
	if (!q)
		return -ENOMEM;
	c->open_reqs++;
	for (i = 0; i < n; i++) {
		uint32_t id = c->next_msg_id + (uint32_t)i;
		struct msg *m = &c->msgs[id & MSG_ID_MASK];

		m->used = true;
		m->id = id;
		m->req = q;
		m->entry = i;
		m->buf = bufs[i];
		m->len = lens[i];
		m->mr = lens[i] ? mrs[i] : NULL;
		m->tag = tags[i];
		m->nchunks = nchunks_of(c, lens[i]);
		m->total = -1;
		m->bitmap = calloc((m->nchunks + 7) / 8, 1);
		m->device = m->mr && m->mr->device;
		q->m[i] = m;
		if (m->mr)
			m->mr->inflight++;
		if (!m->bitmap) {
			req_free(q);
			return -ENOMEM;
		}
		cts.e[i].msg_id = id;
		cts.e[i].tag = tags[i];
		cts.e[i].addr = (uintptr_t)bufs[i];
		cts.e[i].len = lens[i];
		cts.e[i].flags = m->device ? WIRE_CTS_DEVICE : 0;
		for (k = 0; k < c->nrails && m->mr; k++)
			cts.e[i].rkey[k] =
				m->mr->mrs[c->ctx->nics[c->rails[k].nic].dev]->rkey;
	}
	ret = ctrl_send(&c->ctl, W_CTS, &cts,
			sizeof(cts.h) + (size_t)n * sizeof(cts.e[0]), NULL, 0);
	if (ret < 0) {
		/* Not announced: the ids are free for the next try. */
		req_free(q);
		return ret;
	}
	c->next_msg_id += (uint32_t)n;
	*out = q;
	return 0;
}

static int test(struct r2cc_req *q, int *done, size_t *sizes)
{
	struct r2cc_conn *c = q->conn;
	int err, i;

	*done = 0;
	ctx_progress(c->ctx);
	if (q->ndone < q->n && !(q->err && q->kind == REQ_SEND &&
				 !q->m[0]))
		return 0;
	/* A failed send that never got a message slot ends here too. */
	err = q->err;
	if (!err && q->ndone < q->n)
		return 0;
	for (i = 0; sizes && i < q->n; i++)
		sizes[i] = q->sizes[i];
	if (q->kind == REQ_SEND && !q->m[0]) {
		struct r2cc_req **pp;

		for (pp = &c->sq_head; *pp; pp = &(*pp)->next)
			if (*pp == q) {
				*pp = q->next;
				break;
			}
		c->sq_tail = NULL;
		for (pp = &c->sq_head; *pp; pp = &(*pp)->next)
			c->sq_tail = *pp;
		if (q->smr)
			q->smr->inflight--;
	}
	*done = 1;
	req_free(q);
	return err;
}

/*
 * The data calls take the context's lock once they know their handle is
 * live (the registry has a lock of its own): a connection's progress may
 * then run from any thread, beside setup calls in another.
 */
R2CC_EXPORT int r2cc_isend(struct r2cc_conn *c, struct r2cc_mr *mr,
			   const void *buf, size_t len, uint32_t tag,
			   struct r2cc_req **out)
{
	int ret;

	if (out)
		*out = NULL;
	if (!c || !out)
		return -EINVAL;
	if (!r2cc_obj_ok(c, R2CC_OBJ_CONN))
		return -EBADF;
	ctx_lock(c->ctx);
	ret = isend(c, mr, buf, len, tag, out);
	ctx_unlock(c->ctx);
	return ret;
}

R2CC_EXPORT int r2cc_irecv(struct r2cc_conn *c, int n, void *const *bufs,
			   const size_t *lens, const uint32_t *tags,
			   struct r2cc_mr *const *mrs, struct r2cc_req **out)
{
	int ret;

	if (out)
		*out = NULL;
	if (!c || !out)
		return -EINVAL;
	if (!r2cc_obj_ok(c, R2CC_OBJ_CONN))
		return -EBADF;
	ctx_lock(c->ctx);
	ret = irecv(c, n, bufs, lens, tags, mrs, out);
	ctx_unlock(c->ctx);
	return ret;
}

R2CC_EXPORT int r2cc_test(struct r2cc_req *q, int *done, size_t *sizes)
{
	struct r2cc_ctx *ctx;
	int ret;

	if (!q || !done)
		return -EINVAL;
	if (!r2cc_obj_ok(q, R2CC_OBJ_REQ))
		return -EBADF;
	ctx = q->conn->ctx;
	ctx_lock(ctx);
	ret = test(q, done, sizes);
	ctx_unlock(ctx);
	return ret;
}
