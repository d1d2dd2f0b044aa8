// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Layer 5, the data API: r2cc_isend, r2cc_irecv, r2cc_test.  Arguments
 * are checked here; the work is the scheduler's (engine.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xport/conn.h"
#include "xport/ctrl.h"
#include "xport/engine.h"
#include "xport/mr.h"
#include "xport/msg.h"
#include "xport/rail.h"

/* ------------------------------------------------------------ API */

static int isend(struct r2cc_conn *c, struct r2cc_mr *mr, const void *buf,
		 size_t len, uint32_t tag, struct r2cc_req **out)
{
	struct r2cc_req *q;

	if (out)
		*out = NULL;
	if (!c || !out || (len && (!mr || !buf)))
		return -EINVAL;
	if (!handle_ok(c, R2CC_OBJ_CONN) ||
	    (len && !handle_ok(mr, R2CC_OBJ_MR)))
		return -EBADF;
	if (!c->sender)
		return -EOPNOTSUPP;
	if (len && (mr->ctx != c->ctx || !mr_covers(mr, buf, len)))
		return -EINVAL;
	if (c->state == CONN_FAILED)
		return c->err;
	if (c->state != CONN_READY)
		return -ENOTCONN;
	if ((len + c->chunk_size - 1) / c->chunk_size > IMM_CHUNK_MASK)
		return -EMSGSIZE;
	if (!rails_up(c) && !c->ctx->tune.tcp_fallback)
		return -ENETDOWN;
	q = msg_req_new(c, REQ_SEND, 1);
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
	engine_progress(c);
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
	if (!handle_ok(c, R2CC_OBJ_CONN))
		return -EBADF;
	if (c->sender)
		return -EOPNOTSUPP;
	for (i = 0; i < n; i++) {
		if (!lens[i])
			continue;
		if (!bufs[i] || !mrs[i])
			return -EINVAL;
		if (!handle_ok(mrs[i], R2CC_OBJ_MR))
			return -EBADF;
		if (mrs[i]->ctx != c->ctx ||
		    !mr_covers(mrs[i], bufs[i], lens[i]))
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
	q = msg_req_new(c, REQ_RECV, n);
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
		m->nchunks = msg_nchunks(c, lens[i]);
		m->total = -1;
		m->bitmap = calloc((m->nchunks + 7) / 8, 1);
		m->device = m->mr && m->mr->device;
		q->m[i] = m;
		if (m->mr)
			m->mr->inflight++;
		if (!m->bitmap) {
			msg_req_free(q);
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
		msg_req_free(q);
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
	conn_progress_all(c->ctx);
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
	msg_req_free(q);
	return err;
}

/*
 * The data calls take the context's lock once they know their handle is
 * live (the registry has a lock of its own): a connection's progress may
 * then run from any thread, beside setup calls in another.
 */
/*
 * The context of @c, locked, or NULL when @c is not a live connection (the
 * call then fails on its own checks without touching any state).
 */
static struct r2cc_ctx *lock_conn(struct r2cc_conn *c)
{
	if (!handle_ok(c, R2CC_OBJ_CONN))
		return NULL;
	ctx_lock(c->ctx);
	return c->ctx;
}

static void unlock(struct r2cc_ctx *ctx)
{
	if (ctx)
		ctx_unlock(ctx);
}

R2CC_EXPORT int r2cc_isend(struct r2cc_conn *c, struct r2cc_mr *mr,
			   const void *buf, size_t len, uint32_t tag,
			   struct r2cc_req **out)
{
	struct r2cc_ctx *ctx = lock_conn(c);
	int ret = isend(c, mr, buf, len, tag, out);

	unlock(ctx);
	return ret;
}

R2CC_EXPORT int r2cc_irecv(struct r2cc_conn *c, int n, void *const *bufs,
			   const size_t *lens, const uint32_t *tags,
			   struct r2cc_mr *const *mrs, struct r2cc_req **out)
{
	struct r2cc_ctx *ctx = lock_conn(c);
	int ret = irecv(c, n, bufs, lens, tags, mrs, out);

	unlock(ctx);
	return ret;
}

R2CC_EXPORT int r2cc_test(struct r2cc_req *q, int *done, size_t *sizes)
{
	struct r2cc_ctx *ctx;
	int ret;

	if (!q || !done)
		return -EINVAL;
	if (!handle_ok(q, R2CC_OBJ_REQ))
		return -EBADF;
	ctx = q->conn->ctx;
	ctx_lock(ctx);
	ret = test(q, done, sizes);
	ctx_unlock(ctx);
	return ret;
}
