// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Messages and requests (layer 3): a request holds one send or up to
 * R2CC_MAX_RECVS receives; each is a message in slot id % MAX_MSGS, cut
 * into chunks.  Completing and failing them, and freeing what a closing
 * connection leaves.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "xport/msg.h"

struct r2cc_req *msg_req_new(struct r2cc_conn *c, uint8_t kind, int n)
{
	struct r2cc_req *q = calloc(1, sizeof(*q));

	if (q && handle_add(q, R2CC_OBJ_REQ)) {
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

uint32_t msg_nchunks(const struct r2cc_conn *c, size_t len)
{
	size_t n = (len + c->chunk_size - 1) / c->chunk_size;

	return n ? (uint32_t)n : 1;
}

size_t msg_chunk_len(const struct r2cc_conn *c, const struct msg *m,
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
	free(m->chunk_first);
	free(m->bitmap);
	memset(m, 0, sizeof(*m));
}

void msg_req_free(struct r2cc_req *q)
{
	int i;

	handle_del(q);
	for (i = 0; i < q->n; i++) {
		if (!q->m[i])
			continue;
		if (q->kind == REQ_RECV) {
			uint32_t slot = q->m[i]->id & MSG_ID_MASK;

			q->conn->gone_id[slot] = q->m[i]->id;
			q->conn->gone_nchunks[slot] = q->m[i]->nchunks;
		}
		msg_release(q->m[i]);
	}
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
void msg_fail_all(struct r2cc_conn *c, int err)
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
void msg_release_all(struct r2cc_conn *c)
{
	struct r2cc_req *q;
	int i, j;

	while ((q = c->sq_head)) {
		c->sq_head = q->next;
		if (q->smr)
			q->smr->inflight--;
		msg_req_free(q);
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
		msg_req_free(q);
	}
}
