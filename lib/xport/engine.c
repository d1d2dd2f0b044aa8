// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Layer 3, the scheduler and failover (engine.h): control messages,
 * completions, matching sends to announced receives, striping chunks over
 * the rails, the stall detector, settling a failed rail's chunks, the TCP
 * fallback, and failing a connection.
 */
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "platform/platform.h"
#include "xport/ctrl.h"
#include "xport/engine.h"
#include "xport/msg.h"
#include "xport/rail.h"
#include "xport/stage.h"

#define FALLBACK_QUEUE	(1u << 20)	/* TCP bytes queued at most */
#define CTRL_BURST	64		/* control messages per progress call */

static void abort_at(struct r2cc_conn *c, int err, const char *why,
		     enum r2cc_log_level level)
{
	int i;

	if (c->state == CONN_FAILED)
		return;
	log_msg(c->ctx, level, "connection %s: %s (%d)",
		c->sender ? "to receiver" : "from sender", why, err);
	c->state = CONN_FAILED;
	c->err = err;
	/*
	 * Nothing may touch the buffers once their requests fail: a QP in
	 * error may still move data until it has flushed, a destroyed one
	 * never does.  The peer learns from the closed control channel.
	 */
	for (i = 0; i < c->nrails; i++) {
		rail_destroy(&c->rails[i]);
		c->rails[i].state = RAIL_DOWN;
	}
	rails_reap(c, true);
	if (c->ctl.fd >= 0)
		shutdown(c->ctl.fd, SHUT_RDWR);
	msg_fail_all(c, err);
}

void engine_abort(struct r2cc_conn *c, int err, const char *why)
{
	abort_at(c, err, why, R2CC_LOG_ERROR);
}

/* Nothing posted, nothing in flight: a peer that closes now loses nothing. */
static bool conn_idle(const struct r2cc_conn *c)
{
	int i;

	if (c->sq_head || c->open_reqs)
		return false;
	for (i = 0; i < MAX_MSGS; i++)
		if (c->msgs[i].used && !c->msgs[i].done)
			return false;
	return true;
}

/*
 * Queue a control message.  One that cannot be queued fails the
 * connection: every message on the failover path is awaited by the peer,
 * and a lost one would leave a rail, or a message, waiting for ever.
 */
int engine_send(struct r2cc_conn *c, uint16_t type, const void *a,
		size_t alen, const void *b, size_t blen)
{
	int ret = ctrl_send(&c->ctl, type, a, alen, b, blen);

	if (ret >= 0)
		return 0;
	engine_abort(c, ret, "control message not sent");
	return ret;
}

static int rail_idx(const struct r2cc_conn *c, const struct rail *r)
{
	return (int)(r - c->rails);
}

/* A rail's error (a control message not queued) fails the connection. */
static void rail_check(struct r2cc_conn *c, int err, const char *why)
{
	if (err)
		engine_abort(c, err, why);
}

static void fail_rail(struct r2cc_conn *c, struct rail *r, const char *why);
static void poll_cq(struct r2cc_conn *c, struct rail *r);

/* ------------------------------------------------------------ sender */

/* Drop the announcements at the head whose receives are all taken. */
static void pop_matched(struct r2cc_conn *c)
{
	while (c->cts_len) {
		const struct cts *g = &c->ctsq[c->cts_head];
		int i;

		for (i = 0; i < g->count && g->matched[i]; i++)
			;
		if (i < g->count)
			return;
		c->cts_head = (c->cts_head + 1) % MAX_RECV_REQS;
		c->cts_len--;
	}
}

static void match(struct r2cc_conn *c)
{
	while (c->sq_head && c->cts_len) {
		struct r2cc_req *q = c->sq_head;
		struct cts *g = &c->ctsq[c->cts_head];
		const struct wire_cts_entry *e;
		struct msg *m;
		int i, k;

		if (q->err) {
			/* Failed while queued (-ENETDOWN): never matched. */
			c->sq_head = q->next;
			if (!c->sq_head)
				c->sq_tail = NULL;
			q->next = NULL;
			q->ndone = q->n;
			continue;
		}
		for (i = 0; i < g->count; i++)
			if (!g->matched[i] && g->e[i].tag == q->stag)
				break;
		if (i < g->count &&
		    c->msgs[g->e[i].msg_id & MSG_ID_MASK].used)
			return;	/* the slot's last message still settles */
		c->sq_head = q->next;
		if (!c->sq_head)
			c->sq_tail = NULL;
		q->next = NULL;
		if (i == g->count) {
			/* No receive posted with this tag: the caller's bug. */
			q->err = -ENOMSG;
			q->ndone = q->n;
			continue;
		}
		e = &g->e[i];
		g->matched[i] = true;
		m = &c->msgs[e->msg_id & MSG_ID_MASK];
		m->used = true;
		m->id = e->msg_id;
		m->req = q;
		m->buf = q->sbuf;
		m->len = q->sizes[0];
		m->mr = q->smr;
		q->smr = NULL;
		m->tag = q->stag;
		m->nchunks = msg_nchunks(c, m->len);
		m->raddr = e->addr;
		m->device = (m->mr && m->mr->device) ||
			    (e->flags & WIRE_CTS_DEVICE);
		for (k = 0; k < c->nrails; k++)
			m->rkey[k] = e->rkey[k];
		q->m[0] = m;
		if (m->len > e->len) {
			struct wire_msg_err w = { .msg_id = m->id,
						  .err = EMSGSIZE };

			msg_done(c, m, -EMSGSIZE);
			if (engine_send(c, W_MSG_ERR, &w, sizeof(w), NULL, 0))
				return;
		} else {
			m->chunk_state = calloc(m->nchunks, 1);
			m->chunk_rail = calloc(m->nchunks, 1);
			if (!m->chunk_state || !m->chunk_rail) {
				engine_abort(c, -ENOMEM, "chunk table");
				return;
			}
			c->pend_msgs++;
		}
		pop_matched(c);
	}
}

/*
 * The next chunk to send, oldest message first.  Returns its message.
 * @host_only skips messages in GPU memory (for the TCP fallback).
 */
static struct msg *next_chunk(struct r2cc_conn *c, uint32_t *chunk,
			      bool host_only)
{
	uint32_t base = c->next_msg_id - MAX_MSGS, n;

	/* Message ids are sequential: scan from the oldest possible one. */
	for (n = 0; n < MAX_MSGS; n++) {
		struct msg *m = &c->msgs[(base + n) & MSG_ID_MASK];

		if (!m->used || m->done || !m->chunk_state ||
		    (host_only && m->device))
			continue;
		while (m->cursor < m->nchunks &&
		       m->chunk_state[m->cursor] != CH_PENDING)
			m->cursor++;
		if (m->cursor < m->nchunks) {
			*chunk = m->cursor;
			return m;
		}
	}
	return NULL;
}

/*
 * Chunks in flight on one NIC, every connection of the context together:
 * R2CC_NIC_WINDOW (tune) bounds what queues on the wire in front of a
 * chunk, so a mesh of connections does not build a queue longer than the
 * ACK timeout or the stall detector.
 */
static int nic_slots(const struct r2cc_conn *c)
{
	uint32_t n = c->ctx->tune.nic_window / c->chunk_size;

	return n ? (int)n : 1;
}

/*
 * The window is split evenly among the rails that hold some of it or found
 * it full last time round, so a connection that starts late is not starved
 * by one that keeps its slots refilled.  Once per progress pass.
 */
void engine_nic_shares(struct r2cc_ctx *ctx)
{
	struct r2cc_conn *c;
	int i;

	for (i = 0; i < ctx->nnics; i++)
		ctx->nics[i].active = 0;
	for (c = ctx->conns; c; c = c->next)
		for (i = 0; i < c->nrails; i++) {
			struct rail *r = &c->rails[i];

			if (r->outstanding > 0 || r->nic_wait)
				ctx->nics[r->nic].active++;
			r->nic_wait = false;
		}
}

/* @r may not take another slot of its NIC's window. */
static bool nic_full(const struct r2cc_conn *c, struct rail *r)
{
	const struct r2cc_nic *n = &c->ctx->nics[r->nic];
	int slots = nic_slots(c);

	if (n->wrs < slots &&
	    (n->active < 2 || r->outstanding < (slots + n->active - 1) / n->active))
		return false;
	r->nic_wait = true;
	return true;
}

/*
 * The up rail with room whose share of the bytes is furthest behind, among
 * the up rails of the lowest level (conn_rail_level): a standby only while
 * no primary is up, a degraded rail only while no healthy one is (a full
 * rail of the better level is waited for, not spilled from).
 */
static struct rail *pick_rail(struct r2cc_conn *c)
{
	struct rail *best = NULL;
	int i, level = INT_MAX;

	for (i = 0; i < c->nrails; i++)
		if (c->rails[i].state == RAIL_UP &&
		    conn_rail_level(c, i) < level)
			level = conn_rail_level(c, i);
	for (i = 0; i < c->nrails; i++) {
		struct rail *r = &c->rails[i];

		if (r->state != RAIL_UP ||
		    r->outstanding >= (int)c->ctx->tune.rail_depth ||
		    !rail_has_credit(r) || conn_rail_level(c, i) != level ||
		    nic_full(c, r))
			continue;
		if (!best || r->vtime < best->vtime)
			best = r;
	}
	return best;
}

static uint64_t weight(const struct r2cc_conn *c, const struct rail *r)
{
	uint64_t w = c->ctx->nics[r->nic].info.bandwidth_mbps;

	/* a rail drained in steps (R2CC_DRAIN=graded) at its share */
	w >>= conn_rail_shift(c, r);
	return w ? w : 1;
}

static bool post_chunk(struct r2cc_conn *c, struct rail *r, struct msg *m,
		       uint32_t k)
{
	size_t off = (size_t)k * c->chunk_size, len = msg_chunk_len(c, m, k);
	int ri = rail_idx(c, r);
	struct ibv_sge sge = {
		.addr = (uintptr_t)m->buf + off,
		.length = (uint32_t)len,
		.lkey = m->mr ? m->mr->mrs[c->ctx->nics[r->nic].dev]->lkey : 0,
	};
	struct ibv_send_wr wr = {
		.wr_id = (uint64_t)m->id << 32 | k,
		.sg_list = &sge,
		.num_sge = len ? 1 : 0,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(imm_make(m->id, k, k == m->nchunks - 1)),
		.wr.rdma = { .remote_addr = m->raddr + off,
			     .rkey = m->rkey[ri] },
	}, *bad;

	if (ibv_post_send(r->qp, &wr, &bad)) {
		fail_rail(c, r, "post failed");
		return false;
	}
	if (!r->outstanding) {
		r->last_progress_ns = clock_now_ns();
		/* the NIC's count is its rails': idle too, or busy before */
		if (!c->ctx->nics[r->nic].wrs)
			c->ctx->nics[r->nic].progress_ns = r->last_progress_ns;
	}
	rail_out(r, r->outstanding + 1);
	r->used++;
	if (m->chunk_rail[k] & RESENT) {
		log_msg(c->ctx, R2CC_LOG_DEBUG,
			"message %u chunk %u sent again on rail %d", m->id, k,
			ri);
		if (c->repair_open && !c->rep.posted)
			c->rep.posted = clock_now_ns();
	}
	m->chunk_state[k] = CH_POSTED;
	m->chunk_rail[k] = (uint8_t)(ri | (m->chunk_rail[k] & RESENT));
	r->vtime += (len ? len : 1) * 1000 / weight(c, r);
	return true;
}

static void schedule(struct r2cc_conn *c)
{
	struct rail *r;
	struct msg *m;
	uint32_t k;

	while (c->pend_msgs && (m = next_chunk(c, &k, false)) &&
	       (r = pick_rail(c)))
		if (!post_chunk(c, r, m, k))
			return;
}

/* Nanoseconds from detection to phase time @at; 0 if it was not reached. */
static uint64_t since_seen(const struct r2cc_conn *c, uint64_t at)
{
	return at > c->rep.seen ? at - c->rep.seen : 0;
}

static void repaired(struct r2cc_conn *c)
{
	struct r2cc_conn_stats *s = &c->st;
	uint64_t t;

	if (!c->repair_open)
		return;
	t = clock_now_ns() - c->detect_ns;
	c->repair_open = false;
	R2CC_PROBE(repair, c, t);
	s->repairs++;
	s->repair_ns_last = t;
	if (t > s->repair_ns_max)
		s->repair_ns_max = t;
	s->repair_notice_ns_last = c->rep.seen - c->detect_ns;
	s->repair_fenced_ns_last = since_seen(c, c->rep.fenced);
	s->repair_settled_ns_last = since_seen(c, c->rep.settled);
	s->repair_posted_ns_last = since_seen(c, c->rep.posted);
	if (s->repair_posted_ns_last > s->repair_posted_ns_max)
		s->repair_posted_ns_max = s->repair_posted_ns_last;
	log_msg(c->ctx, R2CC_LOG_INFO,
		"repaired in %.3f ms (detected %.3f ms after the port event; then the peer's fence report %.3f ms, chunks settled %.3f ms, first re-send posted %.3f ms)",
		t / 1e6, s->repair_notice_ns_last / 1e6,
		s->repair_fenced_ns_last / 1e6,
		s->repair_settled_ns_last / 1e6,
		s->repair_posted_ns_last / 1e6);
}

static void chunk_done(struct r2cc_conn *c, struct msg *m, uint32_t k,
		       struct rail *r)
{
	size_t len = msg_chunk_len(c, m, k);

	m->chunk_state[k] = CH_DONE;
	if (r) {
		r->st.bytes += len;
		r->st.chunks++;
	}
	if (m->chunk_rail[k] & RESENT)
		repaired(c);
	/* Not while a failed rail's QP may still read its buffer. */
	if (++m->ndone == m->nchunks && !m->held_by)
		msg_done(c, m, 0);
}

/* Some message has chunks waiting to be sent again. */
static bool msgs_resending(const struct r2cc_conn *c)
{
	uint32_t i, k;

	for (i = 0; i < MAX_MSGS; i++) {
		const struct msg *m = &c->msgs[i];

		if (!m->used || m->done || !m->chunk_state)
			continue;
		for (k = 0; k < m->nchunks; k++)
			if (m->chunk_rail[k] & RESENT &&
			    m->chunk_state[k] != CH_DONE)
				return true;
	}
	return false;
}

/* Some chunk of @m is on a rail that has not settled. */
static bool msg_posted(const struct msg *m)
{
	uint32_t k;

	for (k = 0; k < m->nchunks; k++)
		if (m->chunk_state[k] == CH_POSTED)
			return true;
	return false;
}

/*
 * Messages in GPU memory cannot take the fallback (the CPU cannot copy
 * them onto a socket): they fail with -ENETDOWN at both ends, each once
 * none of its chunks is left on a rail still fencing (a write that may
 * yet land must not find its buffer handed back).
 */
static void fallback_refuse_device(struct r2cc_conn *c)
{
	int i;

	for (i = 0; i < MAX_MSGS && c->state == CONN_READY; i++) {
		struct msg *m = &c->msgs[i];
		struct wire_msg_err w = { .msg_id = m->id, .err = ENETDOWN };

		if (!m->used || m->done || !m->chunk_state || !m->device ||
		    msg_posted(m))
			continue;
		log_msg(c->ctx, R2CC_LOG_ERROR,
			"message %u: GPU memory cannot take the TCP fallback",
			m->id);
		msg_done(c, m, -ENETDOWN);
		engine_send(c, W_MSG_ERR, &w, sizeof(w), NULL, 0);
	}
}

/* With no rail up, chunks go over the control channel. */
static void fallback(struct r2cc_conn *c)
{
	struct msg *m;
	uint32_t k;

	c->fallback = true;
	fallback_refuse_device(c);
	while (c->state == CONN_READY &&
	       c->ctl.out_len - c->ctl.out_off < FALLBACK_QUEUE &&
	       (m = next_chunk(c, &k, true))) {
		size_t len = msg_chunk_len(c, m, k), off = 0;

		do {
			struct wire_data d = {
				.msg_id = m->id, .chunk = k, .off = (uint32_t)off,
				.len = (uint32_t)(len - off < WIRE_DATA_MAX ?
						  len - off : WIRE_DATA_MAX),
			};

			if (off + d.len == len)
				d.flags = WIRE_DATA_EOC |
					  (k == m->nchunks - 1 ? WIRE_DATA_LAST : 0);
			/* A zero-length message may have no buffer at all. */
			if (engine_send(c, W_DATA, &d, sizeof(d), d.len ?
					m->buf + (size_t)k * c->chunk_size +
					off : NULL, d.len))
				return;
			off += d.len;
		} while (off < len);
		c->st.tcp_bytes += len;
		R2CC_PROBE(fallback, c, len);
		chunk_done(c, m, k, NULL);
	}
}

/*
 * How rail @ri's fence report bears on chunk @k: it was on @ri (staged
 * there or not), or staged elsewhere after @ri, its first rail, failed
 * (ON_FIRST: the original may have landed before the fence).
 */
enum { ON_NONE, ON_RAIL, ON_FIRST };

static int chunk_on(const struct msg *m, uint32_t k, int ri)
{
	if (m->chunk_state[k] != CH_POSTED)
		return ON_NONE;
	if ((m->chunk_rail[k] & CHUNK_RAIL) == ri)
		return ON_RAIL;
	if (m->chunk_rail[k] & STAGED && m->chunk_first[k] == ri + 1)
		return ON_FIRST;
	return ON_NONE;
}

/*
 * One message the receiver still had open: its chunks on @r settle.
 * Counts what goes out again in @n and @bytes.
 */
static void resolve_msg(struct r2cc_conn *c, struct rail *r,
			const struct wire_fenced_msg *fm, const uint8_t *bits,
			uint64_t *n, uint64_t *bytes)
{
	struct msg *m = msg_by_id(c, fm->msg_id);
	int ri = rail_idx(c, r);
	uint32_t k, end;

	if (!m || m->done || !m->chunk_state)
		return;	/* settled here already (or never matched) */
	m->listed = true;
	end = fm->first + fm->nbits < m->nchunks ? fm->first + fm->nbits :
						   m->nchunks;
	for (k = fm->first; k < end && !m->done; k++) {
		uint32_t b = k - fm->first;
		int on = chunk_on(m, k, ri);

		if (!on)
			continue;
		if (bits[b / 8] & (1u << (b % 8))) {
			log_msg(c->ctx, R2CC_LOG_DEBUG,
				"rail %d fence: message %u chunk %u arrived",
				ri, m->id, k);
			chunk_done(c, m, k, r);
			continue;
		}
		if (on == ON_FIRST) {
			/* The staged copy will do; @r can no longer land it. */
			m->chunk_first[k] = 0;
			continue;
		}
		if (m->chunk_rail[k] & STAGED && m->chunk_first[k]) {
			/*
			 * Its staged copy is lost, and its first rail is not
			 * settled yet: that rail's report decides.
			 */
			m->chunk_rail[k] = (uint8_t)(m->chunk_first[k] - 1) |
					   RESENT;
			continue;
		}
		log_msg(c->ctx, R2CC_LOG_DEBUG,
			"rail %d fence: message %u chunk %u to send again",
			ri, m->id, k);
		m->chunk_state[k] = CH_PENDING;
		m->chunk_rail[k] = RESENT;
		if (k < m->cursor)
			m->cursor = k;
		r->st.rollbacks++;
		c->st.resent_bytes += msg_chunk_len(c, m, k);
		(*n)++;
		*bytes += msg_chunk_len(c, m, k);
	}
}

/* The chunks @r carried without a completion: arrived, or sent again. */
void engine_sender_resolve(struct r2cc_conn *c, struct rail *r)
{
	const uint8_t *p = r->fenced_map;
	const uint8_t *end = p ? p + r->fenced_len : NULL;
	uint64_t nback = 0, bback = 0;
	int ri = rail_idx(c, r);
	uint32_t i, k;

	if (c->repair_open && !c->rep.settled)
		c->rep.settled = clock_now_ns();
	/* The parts were checked as they came in (rail.c, fenced_ok). */
	while (p < end) {
		const struct wire_fenced *f = (const void *)p;

		p += sizeof(*f);
		for (i = 0; i < f->nmsgs; i++) {
			const struct wire_fenced_msg *fm = (const void *)p;

			resolve_msg(c, r, fm, p + sizeof(*fm), &nback, &bback);
			p += sizeof(*fm) + ((size_t)fm->nbits + 63) / 64 * 8;
		}
	}
	for (i = 0; i < MAX_MSGS; i++) {
		struct msg *m = &c->msgs[i];
		bool listed = m->listed;

		m->listed = false;
		if (!m->used || m->done || !m->chunk_state)
			continue;
		for (k = 0; k < m->nchunks && !m->done; k++) {
			if (!chunk_on(m, k, ri))
				continue;
			if (listed) {
				engine_abort(c, -EPROTO,
					  "fence report misses a chunk");
				goto out;
			}
			/* Not listed: the receiver had the whole message. */
			log_msg(c->ctx, R2CC_LOG_DEBUG,
				"rail %d fence: message %u chunk %u not listed: arrived",
				ri, m->id, k);
			chunk_done(c, m, k, r);
		}
	}
	R2CC_PROBE(rollback, c, ri, nback, bback);
	/* Nothing to send again: this failure needs no repair. */
	if (!nback && !msgs_resending(c))
		c->repair_open = false;
out:
	free(r->fenced_map);
	r->fenced_map = NULL;
	r->fenced_len = 0;
}

static void sender_cq(struct r2cc_conn *c, struct rail *r,
		      const struct ibv_wc *wc)
{
	uint8_t staged;
	struct msg *m;
	uint32_t k;

	rail_out(r, r->outstanding - 1);
	if (wc->status == IBV_WC_SUCCESS) {
		struct r2cc_nic *n = &c->ctx->nics[r->nic];
		uint64_t now = clock_now_ns();

		if (c->ctx->tune.stall_adapt) {
			stall_sample(&r->stall, now - r->last_progress_ns);
			if (n->progress_ns)
				stall_sample(&n->gap, now - n->progress_ns);
		}
		r->last_progress_ns = now;
		r->done_ns = now;
		n->progress_ns = now;
		r->ask_ns = 0;		/* an answer now says nothing new */
	}
	if (wc->wr_id == PROBE_WRID) {
		rail_check(c, rail_probe_done(c, r,
					      wc->status == IBV_WC_SUCCESS),
			   "control message not sent");
		return;
	}
	staged = wc->wr_id & STAGE_SEND_BIT ? STAGED : 0;
	/*
	 * Any error, a flush included: the QP is in error.  A flush on a
	 * rail still up means the NIC put it there (rxe on 6.12 flushes
	 * everything when the retries run out); a rail already failing is
	 * left as it is.  The chunk stays posted until the fence settles.
	 */
	if (wc->status != IBV_WC_SUCCESS) {
		fail_rail(c, r, ibv_wc_status_str(wc->status));
		return;
	}
	if (wc->wr_id == STAGE_PART_WRID)
		return;		/* a staged chunk completes with its send */
	m = msg_by_id(c, (uint32_t)(wc->wr_id >> 32));
	k = (uint32_t)wc->wr_id & ~STAGE_SEND_BIT;
	if (m && !m->done && m->chunk_state && k < m->nchunks &&
	    m->chunk_state[k] == CH_POSTED &&
	    (m->chunk_rail[k] & (CHUNK_RAIL | STAGED)) ==
	    (rail_idx(c, r) | staged))
		chunk_done(c, m, k, r);
}

/* ------------------------------------------------------------ receiver */

/*
 * A chunk that came again: RC completes a write once, but rxe has been
 * seen to complete one write-with-immediate twice, with no fence and no
 * second post (the ring of tests/soak/nccl_ring4.sh, Documentation/lib.rst).
 * The bytes are those already there; the copy took a receive the sender
 * never wrote to, which the receive credit leaves out.  Counted; said
 * when the message had completed (@gone: had been handed back, when the
 * NIC may have written its buffer again).
 */
static void arrive_again(struct r2cc_conn *c, int rail, uint32_t id,
			 uint32_t k, int when)
{
	static const char *const what[] = {
		NULL, "after the message completed",
		"after its receive was handed back (the NIC may have written that buffer again)",
	};

	if (rail >= 0)
		c->rails[rail].rq_extra++;
	/* A few are said; the count says all. */
	if (c->st.dup_chunks++ < 4 && what[when])
		log_msg(c->ctx, when == 2 ? R2CC_LOG_ERROR : R2CC_LOG_WARN,
			"rail %d: chunk %u of message %u arrived again %s; dropped",
			rail, k, id, what[when]);
}

/* The sequence number, not past the last announced, with these low bits. */
static uint32_t imm_full_id(const struct r2cc_conn *c, uint32_t low)
{
	uint32_t last = c->next_msg_id - 1;

	return last - ((last - low) & IMM_ID_MASK);
}

/* @rail: the rail it came on, -1 for the TCP fallback. */
static void arrive(struct r2cc_conn *c, int rail, uint32_t id, uint32_t k,
		   bool last, size_t last_len)
{
	uint32_t slot = id & MSG_ID_MASK;
	struct msg *m = &c->msgs[slot];

	if (!m->used || m->id != id) {
		if (c->gone_id[slot] == id && k < c->gone_nchunks[slot]) {
			arrive_again(c, rail, id, k, 2);
			return;
		}
		m = NULL;
	} else if (m->bitmap && k < m->nchunks &&
		   m->bitmap[k / 8] & (1u << (k % 8))) {
		arrive_again(c, rail, id, k, m->done);
		return;
	}
	if (!m || m->done || !m->bitmap || k >= m->nchunks) {
		/* What the slot holds says which side lost track. */
		m = &c->msgs[slot];
		log_msg(c->ctx, R2CC_LOG_ERROR,
			"rail %d: chunk %u%s (%zu B) of message %u: its slot holds %s message %u, %u of %u chunks in, %d total; next id %u",
			rail, k, last ? " (last)" : "", last_len, id,
			!m->used ? "no" : m->done ? "the done" : "the open",
			m->id, m->ndone, m->nchunks, (int)m->total,
			c->next_msg_id);
		engine_abort(c, -EPROTO, "chunk for no open receive");
		return;
	}
	/*
	 * Every chunk but the last is whole, and none lies past the last:
	 * a peer that says otherwise would complete a message with a hole.
	 */
	if (last_len > c->chunk_size || (!last && last_len != c->chunk_size) ||
	    (m->total >= 0 && (last || k >= (uint32_t)m->total)) ||
	    (last && m->hi > k + 1)) {
		engine_abort(c, -EPROTO, "chunk of the wrong length or place");
		return;
	}
	if (k + 1 > m->hi)
		m->hi = k + 1;
	if (last) {
		size_t size = (size_t)k * c->chunk_size + last_len;

		if (size > m->len) {
			engine_abort(c, -EPROTO, "message overran its buffer");
			return;
		}
		m->total = k + 1;
		m->size = size;
	}
	m->bitmap[k / 8] |= (uint8_t)(1u << (k % 8));
	m->ndone++;
	if (m->total >= 0 && m->ndone >= (uint32_t)m->total)
		msg_done(c, m, 0);
}

static void receiver_cq(struct r2cc_conn *c, struct rail *r,
			const struct ibv_wc *wc)
{
	uint32_t imm;

	r->rq_posted--;
	if (wc->status != IBV_WC_SUCCESS) {
		/*
		 * The receive queue completes in order: once one receive has
		 * flushed, no write can land through this QP any more.
		 */
		if (wc->status == IBV_WC_WR_FLUSH_ERR)
			r->flushed = true;
		fail_rail(c, r, ibv_wc_status_str(wc->status));
		return;
	}
	/*
	 * The rail was fenced and its report sent: this write landed before
	 * the fence, and the report either counted it or had it sent again
	 * (a staged chunk's send too: the report counted its entry, or the
	 * entry was not there and its slot was freed).  Its completion,
	 * polled late, adds nothing.
	 */
	if (r->state == RAIL_DOWN)
		return;
	r->rx_ns = clock_now_ns();
	if (wc->opcode == IBV_WC_RECV) {	/* a probe, or a staged chunk */
		imm = wc->wc_flags & IBV_WC_WITH_IMM ? be32toh(wc->imm_data) :
						       IMM_PROBE;
		if (imm != IMM_PROBE &&
		    (imm < IMM_STAGE || stage_arrived(c, r, imm - IMM_STAGE)))
			engine_abort(c, -EPROTO, "bad staged chunk");
		return;
	}
	if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
	    !(wc->wc_flags & IBV_WC_WITH_IMM)) {
		engine_abort(c, -EPROTO, "unexpected completion");
		return;
	}
	imm = be32toh(wc->imm_data);
	r->st.bytes += wc->byte_len;
	r->st.chunks++;
	arrive(c, rail_idx(c, r), imm_full_id(c, imm >> IMM_MSG_SHIFT),
	       imm & IMM_CHUNK_MASK, imm & IMM_LAST, wc->byte_len);
}

/* Queue one part of a fence report; -errno when it could not be. */
static int fence_part(struct r2cc_conn *c, uint8_t *buf, size_t len,
		      bool last)
{
	struct wire_fenced *f = (void *)buf;

	if (last)
		f->flags |= WIRE_FENCED_LAST;
	return engine_send(c, W_FENCED, buf, len, NULL, 0);
}

/*
 * Tell the sender what arrived of every open receive before @r was
 * fenced: W_FENCED in parts that each fit the control message limit
 * (engine_fence_part_max: the simulator makes it small to split often).
 * Returns 0, or -errno (the connection has failed).
 */
size_t engine_fence_part_max = WIRE_MAX_MSG;

int engine_fence_report(struct r2cc_conn *c, struct rail *r)
{
	size_t max = engine_fence_part_max;
	uint32_t base = c->next_msg_id - MAX_MSGS, n;
	size_t len = sizeof(struct wire_fenced);
	struct wire_fenced *f;
	uint8_t *buf;
	int ret = 0;

	buf = calloc(1, max);
	if (!buf) {
		engine_abort(c, -ENOMEM, "fence report");
		return -ENOMEM;
	}
	f = (void *)buf;
	f->rail = (uint32_t)rail_idx(c, r);
	f->epoch = r->epoch;
	/* Oldest first: the sender resolves in any order, but logs read. */
	for (n = 0; n < MAX_MSGS && !ret; n++) {
		const struct msg *m = &c->msgs[(base + n) & MSG_ID_MASK];
		uint32_t first = 0;

		if (!m->used || m->done || !m->bitmap)
			continue;
		while (first < m->nchunks && !ret) {
			struct wire_fenced_msg *fm;
			size_t bits, bytes;
			uint32_t b;

			if (len + sizeof(*fm) + 8 > max) {
				ret = fence_part(c, buf, len, false);
				memset(buf + sizeof(*f), 0, len - sizeof(*f));
				f->nmsgs = 0;
				len = sizeof(*f);
				continue;
			}
			bits = (max - len - sizeof(*fm)) / 8 * 64;
			if (bits > m->nchunks - first)
				bits = m->nchunks - first;
			bytes = (bits + 63) / 64 * 8;
			fm = (void *)(buf + len);
			log_msg(c->ctx, R2CC_LOG_DEBUG,
				"rail %d fence report: message %u chunks %u..%zu, %u of %u in",
				rail_idx(c, r), m->id, first, first + bits - 1,
				m->ndone, m->nchunks);
			fm->msg_id = m->id;
			fm->first = first;
			fm->nbits = (uint32_t)bits;
			for (b = 0; b < bits; b++) {
				uint32_t k = first + b;

				/* a held ring entry will be copied in */
				if (m->bitmap[k / 8] & (1u << (k % 8)) ||
				    (c->stage.held &&
				     stage_holds(c, m->id, k)))
					((uint8_t *)(fm + 1))[b / 8] |=
						(uint8_t)(1u << (b % 8));
			}
			len += sizeof(*fm) + bytes;
			f->nmsgs++;
			first += (uint32_t)bits;
		}
	}
	if (!ret)
		ret = fence_part(c, buf, len, true);
	free(buf);
	return ret;
}

static void on_data(struct r2cc_conn *c, const struct wire_data *d,
		    size_t len)
{
	struct msg *m = msg_by_id(c, d->msg_id);
	size_t at = (size_t)d->chunk * c->chunk_size + d->off;

	if (c->sender || len != sizeof(*d) + d->len ||
	    !m || m->done || !m->bitmap || d->chunk >= m->nchunks ||
	    d->off > c->chunk_size || d->len > c->chunk_size - d->off ||
	    at > m->len || d->len > m->len - at || d->reserved) {
		engine_abort(c, -EPROTO, "bad fallback data");
		return;
	}
	if (m->device) {
		engine_abort(c, -EPROTO, "fallback data for GPU memory");
		return;
	}
	if (d->len)	/* a zero-length receive may have no buffer */
		memcpy(m->buf + at, d + 1, d->len);
	c->st.tcp_bytes += d->len;
	c->fallback = true;
	if (d->flags & WIRE_DATA_EOC)
		arrive(c, -1, d->msg_id, d->chunk, d->flags & WIRE_DATA_LAST,
		       d->off + d->len);
}

static void on_cts(struct r2cc_conn *c, const struct wire_cts *w, size_t len)
{
	struct cts *g;
	uint32_t i;

	if (!c->sender || !w->count || w->count > R2CC_MAX_RECVS ||
	    len != sizeof(*w) + w->count * sizeof(w->e[0]) ||
	    c->cts_len == MAX_RECV_REQS) {
		engine_abort(c, -EPROTO, "bad receive announcement");
		return;
	}
	g = &c->ctsq[(c->cts_head + c->cts_len) % MAX_RECV_REQS];
	memset(g, 0, sizeof(*g));
	for (i = 0; i < w->count; i++) {
		if (w->e[i].msg_id != c->next_msg_id || w->e[i].reserved ||
		    w->e[i].flags & ~WIRE_CTS_DEVICE) {
			engine_abort(c, -EPROTO, "receive out of sequence");
			return;
		}
		c->next_msg_id++;
		g->e[i] = w->e[i];
	}
	g->count = (int)w->count;
	c->cts_len++;
}

/* The peer failed message @e->msg_id: here too, or its announcement. */
static void on_msg_err(struct r2cc_conn *c, const struct wire_msg_err *e)
{
	struct msg *m = msg_by_id(c, e->msg_id);
	int g, i;

	if (e->err <= 0) {
		engine_abort(c, -EPROTO, "bad message error");
		return;
	}
	if (m) {
		msg_done(c, m, -e->err);
		return;
	}
	for (g = 0; c->sender && g < c->cts_len; g++) {
		struct cts *q = &c->ctsq[(c->cts_head + g) % MAX_RECV_REQS];

		for (i = 0; i < q->count; i++)
			if (q->e[i].msg_id == e->msg_id && !q->matched[i]) {
				q->matched[i] = true;	/* never matched now */
				pop_matched(c);
				return;
			}
	}
	/* Settled here already; one never announced is a lie. */
	if ((int32_t)(e->msg_id - c->next_msg_id) >= 0)
		engine_abort(c, -EPROTO, "error for a message never announced");
}

bool stall_ask_blind;

/*
 * Receiver: the sender asks what landed on a rail (R2CC_STALL_ASK, wire.h).
 * The rail's completions are read first, so that the answer is as fresh
 * as this end can make it.
 */
static void on_rail_ask(struct r2cc_conn *c, const struct wire_rail_ask *a,
			uint32_t len)
{
	struct wire_rail_seen s = { .rail = a->rail, .seq = a->seq,
				    .age_us = WIRE_SEEN_NEVER };
	struct rail *r;

	if (c->sender || len != sizeof(*a) || a->reserved ||
	    a->rail >= (uint32_t)c->nrails) {
		engine_abort(c, -EPROTO, "bad question about a stalled rail");
		return;
	}
	r = &c->rails[a->rail];
	s.epoch = r->epoch;
	if (r->state == RAIL_UP && a->epoch == r->epoch) {
		poll_cq(c, r);
		if (c->state != CONN_READY)
			return;
		if (r->state == RAIL_UP && r->rx_ns) {
			uint64_t age = (clock_now_ns() - r->rx_ns) / 1000;

			s.age_us = age < WIRE_SEEN_NEVER ? (uint32_t)age :
							   WIRE_SEEN_NEVER - 1;
		}
	}
	if (stall_ask_blind)
		s.age_us = 0;
	engine_send(c, W_RAIL_SEEN, &s, sizeof(s), NULL, 0);
}

/* When the rail's stall began: its last completion, or the last spare. */
static uint64_t stall_since(const struct rail *r)
{
	return r->spared_ns > r->last_progress_ns ? r->spared_ns :
						    r->last_progress_ns;
}

/*
 * Sender: the receiver's answer.  A write that landed after the stall
 * began (the earliest the answer allows: its age counted back from when
 * the question went out) means the rail delivers and only its ACKs are
 * late: it is kept, and its stall timed again from now.  The rail holds
 * a bounded window, so one whose ACKs never come back stops landing
 * writes and fails at the next question.
 */
static void on_rail_seen(struct r2cc_conn *c, const struct wire_rail_seen *s,
			 uint32_t len)
{
	uint64_t now = clock_now_ns(), age;
	struct rail *r;

	if (!c->sender || len != sizeof(*s) || s->rail >= (uint32_t)c->nrails) {
		engine_abort(c, -EPROTO, "bad answer about a stalled rail");
		return;
	}
	r = &c->rails[s->rail];
	if (!r->ask_ns || s->seq != r->ask_seq || s->epoch != r->epoch ||
	    r->state != RAIL_UP)
		return;		/* stale: the rail moved on meanwhile */
	age = (uint64_t)s->age_us * 1000;
	if (s->age_us != WIRE_SEEN_NEVER && r->ask_ns > age &&
	    r->ask_ns - age > stall_since(r)) {
		log_msg(c->ctx, R2CC_LOG_INFO,
			"rail %d: stalled, but a write landed at the peer %.1f ms before the question: kept",
			rail_idx(c, r), age / 1e6);
		r->ask_ns = 0;
		r->spared_ns = now;
		r->st.stalls_spared++;
		return;
	}
	r->ask_ns = 0;
	fail_rail(c, r, "stalled: no completion in time, none landed at the peer");
}

/*
 * Sender: whether a rail past its stall bound is spared for now rather
 * than failed.  Without questions, a rail silent with every other rail of
 * its connection (!@alone_long: the peer may be paused) waits STALL_ALONE
 * bounds.  With them (R2CC_STALL_ASK), the receiver is asked at once, so
 * a peer that answers "nothing landed" fails it after one bound even then
 * (a lone primary behind a black hole); no answer within one more bound
 * fails it as the rule without questions would.
 */
static bool stall_ask(struct r2cc_conn *c, struct rail *r, uint64_t now,
		      uint64_t bound, bool alone_long)
{
	struct wire_rail_ask a = { .rail = (uint32_t)rail_idx(c, r),
				   .epoch = r->epoch };

	if (!c->ctx->tune.stall_ask || c->peer_version < WIRE_VERSION_ASK)
		return !alone_long;
	if (r->ask_ns)
		return now < r->ask_ns + bound || !alone_long;
	a.seq = ++r->ask_seq;
	if (engine_send(c, W_RAIL_ASK, &a, sizeof(a), NULL, 0))
		return true;	/* the connection failed */
	r->ask_ns = now;
	return true;
}

static const uint32_t min_len[W_TYPE_MAX] = {
	[W_STAGE] = sizeof(struct wire_stage),
	[W_STAGE_FREE] = sizeof(struct wire_stage_free),
	[W_CTS] = sizeof(struct wire_cts),
	[W_RAIL_DOWN] = sizeof(struct wire_rail),
	[W_FENCED] = sizeof(struct wire_fenced),
	[W_NIC] = sizeof(struct wire_nic),
	[W_RAIL_REQ] = sizeof(struct wire_rail_req),
	[W_RAIL_ACK] = sizeof(struct wire_rail_ack),
	[W_DATA] = sizeof(struct wire_data),
	[W_MSG_ERR] = sizeof(struct wire_msg_err),
	[W_CREDIT] = sizeof(struct wire_credit),
	[W_RAIL_ASK] = sizeof(struct wire_rail_ask),
	[W_RAIL_SEEN] = sizeof(struct wire_rail_seen),
};

static void dispatch(struct r2cc_conn *c)
{
	const struct wire_hdr *h = (const void *)c->ctl.in;
	const void *p = h + 1;
	const struct wire_msg_err *e = p;
	const char *why;

	if (h->type == W_HELLO || h->type == W_HELLO_ACK ||
	    h->len < min_len[h->type]) {
		engine_abort(c, -EPROTO, "bad control message");
		return;
	}
	switch (h->type) {
	case W_CTS:
		on_cts(c, p, h->len);
		break;
	case W_DATA:
		on_data(c, p, h->len);
		break;
	case W_MSG_ERR:
		on_msg_err(c, e);
		break;
	case W_RAIL_ASK:
		on_rail_ask(c, p, h->len);
		break;
	case W_RAIL_SEEN:
		on_rail_seen(c, p, h->len);
		break;
	case W_STAGE:
	case W_STAGE_FREE: {
		int ret = stage_on_msg(c, h->type, p, h->len, &why);

		rail_check(c, ret, why);
		break;
	}
	default: {
		/* Called first: an argument's order of evaluation is open. */
		int ret = rail_on_msg(c, h->type, p, h->len, &why);

		rail_check(c, ret, why);
	}
	}
}

/* ------------------------------------------------------------ progress */

static void poll_cq(struct r2cc_conn *c, struct rail *r)
{
	struct ibv_wc wc[16];
	int n, i;

	while (r->cq && (n = ibv_poll_cq(r->cq, 16, wc)) > 0)
		for (i = 0; i < n && c->state == CONN_READY; i++) {
			if (c->sender)
				sender_cq(c, r, &wc[i]);
			else
				receiver_cq(c, r, &wc[i]);
		}
	if (!c->sender && c->state == CONN_READY)
		rail_check(c, rail_refill(c, r), "control message not sent");
}

/* ------------------------------------------------------------ staged repair */

/*
 * The survivor for a staged chunk: of the up rails of the lowest level
 * (as pick_rail), one with room, the least queued.
 */
static struct rail *stage_rail(struct r2cc_conn *c, int failed)
{
	struct rail *best = NULL;
	int i, level = INT_MAX;

	for (i = 0; i < c->nrails; i++)
		if (i != failed && c->rails[i].state == RAIL_UP &&
		    conn_rail_level(c, i) < level)
			level = conn_rail_level(c, i);
	for (i = 0; i < c->nrails; i++) {
		struct rail *r = &c->rails[i];

		if (i == failed || conn_rail_level(c, i) != level ||
		    !stage_room(c, r))
			continue;
		if (!best || r->outstanding < best->outstanding)
			best = r;
	}
	return best;
}

/*
 * Sender, R2CC_REPAIR=staged: every chunk failed @r carried without a
 * completion goes again at once, into the receiver's ring over a
 * surviving rail (stage.h), rather than after the receiver's fence report.
 * What finds no room waits for the report, as without the ring.  Its
 * message completes only once @r's QP has drained (held_by): the NIC may
 * read the buffer until then.
 */
static void stage_failed(struct r2cc_conn *c, struct rail *r)
{
	uint32_t base = c->next_msg_id - MAX_MSGS, n, k;
	int ri = rail_idx(c, r);

	if (!c->ctx->tune.staged || !c->stage.addr || r->peer_fenced ||
	    r->staged_all)
		return;
	for (n = 0; n < MAX_MSGS; n++) {
		struct msg *m = &c->msgs[(base + n) & MSG_ID_MASK];

		if (!m->used || m->done || !m->chunk_state || m->device)
			continue;
		for (k = 0; k < m->nchunks; k++) {
			struct rail *b;

			if (m->chunk_state[k] != CH_POSTED ||
			    (m->chunk_rail[k] & (CHUNK_RAIL | STAGED)) != ri)
				continue;
			b = stage_rail(c, ri);
			if (!b) {
				log_msg(c->ctx, R2CC_LOG_DEBUG,
					"rail %d: no rail with room to stage on",
					ri);
				return;	/* tried again next pass */
			}
			if (!m->chunk_first)
				m->chunk_first = calloc(m->nchunks, 1);
			if (!m->chunk_first)
				return;	/* the fence report will do */
			if (stage_post(c, b, m, k, ri)) {
				fail_rail(c, b, "post failed");
				return;
			}
			log_msg(c->ctx, R2CC_LOG_DEBUG,
				"message %u chunk %u staged on rail %d", m->id,
				k, rail_idx(c, b));
			m->chunk_rail[k] = (uint8_t)(rail_idx(c, b) | STAGED |
						     RESENT);
			m->chunk_first[k] = (uint8_t)(ri + 1);
			m->held_by |= (uint16_t)(1u << ri);
			c->stage.held_rails |= (uint16_t)(1u << ri);
			r->st.rollbacks++;
			c->st.resent_bytes += msg_chunk_len(c, m, k);
			c->st.staged++;
			if (c->repair_open && !c->rep.posted)
				c->rep.posted = clock_now_ns();
		}
	}
	r->staged_all = true;
}

/*
 * This end finds @r failed.  With staged repair, what it carried goes
 * again as soon as the rail is stopped, before the rest of the failure
 * (the QP's move to error, telling the peer, logging: milliseconds under
 * emulation).
 */
static void fail_rail(struct r2cc_conn *c, struct rail *r, const char *why)
{
	if (c->sender && r->state == RAIL_UP && c->ctx->tune.staged) {
		rail_stop(c, r);
		stage_failed(c, r);
	}
	rail_check(c, rail_fail(c, r, why), "control message not sent");
}

/*
 * Sender: failed rails whose QPs have drained (or are gone) read no
 * buffer any more: the messages they held complete if all arrived.
 */
static void stage_unhold_rails(struct r2cc_conn *c)
{
	uint16_t free = 0;
	int i;

	for (i = 0; i < c->nrails; i++) {
		const struct rail *r = &c->rails[i];

		if (c->stage.held_rails >> i & 1 &&
		    (r->state != RAIL_FENCING || !r->outstanding || !r->qp))
			free |= (uint16_t)(1u << i);
	}
	if (!free)
		return;
	c->stage.held_rails &= (uint16_t)~free;
	for (i = 0; i < MAX_MSGS; i++) {
		struct msg *m = &c->msgs[i];

		if (!m->used || !(m->held_by & free))
			continue;
		m->held_by &= (uint16_t)~free;
		if (!m->done && m->chunk_state && !m->held_by &&
		    m->ndone == m->nchunks)
			msg_done(c, m, 0);
	}
}

/*
 * Receiver: ring entries whose first rail is fenced here go into their
 * messages, if still open and missing the chunk; the sender is told which
 * slots are free.
 */
static void stage_install(struct r2cc_conn *c)
{
	int slot, err = 0;

	while (c->state == CONN_READY && (slot = stage_next(c, &err)) >= 0) {
		struct wire_stage_hdr h = c->stage.e[slot];
		struct msg *m = msg_by_id(c, h.msg_id);
		size_t at = (size_t)h.chunk * c->chunk_size;

		stage_release(c, slot);
		if (!m || m->done || !m->bitmap || h.chunk >= m->nchunks ||
		    m->bitmap[h.chunk / 8] & (1u << (h.chunk % 8)))
			continue;	/* the original came first, or no use */
		if (m->device || at + h.len > m->len) {
			engine_abort(c, -EPROTO, "staged chunk past its buffer");
			return;
		}
		if (h.len)
			memcpy(m->buf + at, c->stage.ring +
			       (size_t)slot * c->chunk_size, h.len);
		c->st.staged++;
		arrive(c, -1, h.msg_id, h.chunk, h.flags & WIRE_STAGE_LAST,
		       h.len);
	}
	if (err)
		engine_abort(c, err, "control message not sent");
	else if (c->state == CONN_READY && stage_flush(c))
		engine_abort(c, -ENOMEM, "control message not sent");
}

/*
 * A failed rail, once drained: the sender settles each chunk it carried
 * (arrived, or to be sent again), the receiver reports what arrived.
 */
static void settle(struct r2cc_conn *c, struct rail *r)
{
	if (!rail_fence_drained(c, r))
		return;
	if (c->sender) {
		engine_sender_resolve(c, r);
	} else if (!engine_fence_report(c, r)) {
		stage_rail_fenced(c, r);
	}
	if (c->state == CONN_READY)
		rail_fence_done(c, r);
}

/*
 * Whether another rail of @c completed work since @r last made progress.
 * A rail that falls silent while another to the same peer completes has a
 * fault on its own path.  One that falls silent with every other rail of
 * the connection is as likely to wait on a pause of the peer, of its NIC
 * or of this host (seen on the testbed: the TCG guests stop for a few
 * hundred milliseconds now and then, and both rails of a connection then
 * stalled together), so it gets STALL_ALONE times its bound.
 */
static bool peer_heard_since(const struct r2cc_conn *c, const struct rail *r)
{
	int i;

	for (i = 0; i < c->nrails; i++)
		if (&c->rails[i] != r && c->rails[i].state == RAIL_UP &&
		    c->rails[i].done_ns > stall_since(r))
			return true;
	return false;
}

static void watch_rail(struct r2cc_conn *c, struct rail *r)
{
	uint64_t now = clock_now_ns();
	uint64_t stall = (uint64_t)c->ctx->tune.stall_ms * 1000000;

	if (r->state != RAIL_FENCING)
		r->staged_all = false;
	switch (r->state) {
	case RAIL_FENCING:
		if (c->sender)
			stage_failed(c, r);
		settle(c, r);
		break;
	case RAIL_DOWN:
		rail_check(c, rail_failback(c, r), "control message not sent");
		break;
	case RAIL_UP:
		/* Nothing completes though work is posted: a black hole. */
		if (c->ctx->tune.stall_adapt) {
			const struct r2cc_nic *n = &c->ctx->nics[r->nic];

			stall = stall_bound_queued(&r->stall, &n->gap, n->wrs,
						   stall);
		}
		if (c->sender && r->outstanding &&
		    now > stall_since(r) + stall) {
			bool alone_long = !c->ctx->tune.stall_adapt ||
					  peer_heard_since(c, r) ||
					  now > stall_since(r) +
						STALL_ALONE * stall;

			if (stall_ask(c, r, now, stall, alone_long))
				break;
			log_msg(c->ctx, R2CC_LOG_INFO,
				"rail %d: no completion for %.1f ms (bound %.1f ms, smoothed gap %.1f ms)",
				(int)(r - c->rails),
				(now - r->last_progress_ns) / 1e6, stall / 1e6,
				r->stall.srtt_ns / 1e6);
			fail_rail(c, r, "stalled: no completion in time");
		} else
			rail_degraded_tick(c, r, now);
		break;
	case RAIL_PROBING:
		if (now > r->probe_ns + (stall * 4 > 500000000 ? stall * 4 :
					 500000000))
			fail_rail(c, r, "probe timed out");
		break;
	}
}

static bool rails_settling(const struct r2cc_conn *c)
{
	int i;

	for (i = 0; i < c->nrails; i++)
		if (c->rails[i].state != RAIL_DOWN)
			return true;
	return false;
}

/*
 * No rail left and no fallback: every open message fails with -ENETDOWN,
 * and the peer is told which (W_MSG_ERR), so both ends hand back the same
 * messages.  The two ends need not both run out of rails (one can rebuild
 * a rail while the other still fences its last), so neither may assume the
 * other failed anything it was not told of: the receiver's announcements
 * stay queued at the sender until it hears that their receives failed.
 * A rail rebuilt after this carries nothing of these messages: the peer
 * reads their W_MSG_ERR before the W_RAIL_ACK that brings the rail back.
 */
static void no_rail_left(struct r2cc_conn *c)
{
	struct r2cc_req *q;
	int i;

	for (i = 0; i < MAX_MSGS && c->state == CONN_READY; i++) {
		struct msg *m = &c->msgs[i];
		struct wire_msg_err w = { .msg_id = m->id, .err = ENETDOWN };

		if (!m->used || m->done)
			continue;
		msg_done(c, m, -ENETDOWN);
		engine_send(c, W_MSG_ERR, &w, sizeof(w), NULL, 0);
	}
	for (q = c->sq_head; q; q = q->next)
		q->err = -ENETDOWN;
}

void engine_progress(struct r2cc_conn *c)
{
	int i, n;

	ctrl_flush(&c->ctl);
	for (n = 0; n < CTRL_BURST && c->state == CONN_READY &&
		    ctrl_recv(&c->ctl) == 1; n++) {
		dispatch(c);
		ctrl_consumed(&c->ctl);
	}
	/*
	 * A peer that closed an idle connection (the end of a communicator,
	 * a program that finished) is no error worth a line at ERROR; the
	 * connection fails all the same, so any later call says so.
	 */
	if (c->state == CONN_READY && c->ctl.err == -ECONNRESET && conn_idle(c))
		abort_at(c, -ECONNRESET, "the peer closed it, nothing in flight",
			 R2CC_LOG_INFO);
	if (c->state == CONN_READY && c->ctl.err)
		engine_abort(c, c->ctl.err,
			     "control channel lost (peer gone?)");
	for (i = 0; i < c->nrails && c->state == CONN_READY; i++) {
		poll_cq(c, &c->rails[i]);
		watch_rail(c, &c->rails[i]);
	}
	if (c->state != CONN_READY)
		return;
	if (c->ngrave)
		rails_reap(c, false);
	if (rails_up(c))
		c->fallback = false;
	if (c->sender && c->stage.held_rails)
		stage_unhold_rails(c);
	if (!c->sender && (c->stage.held || c->stage.done))
		stage_install(c);
	if (c->state != CONN_READY)
		return;
	if (c->sender) {
		match(c);
		schedule(c);
		if (!rails_up(c) && c->pend_msgs && c->ctx->tune.tcp_fallback)
			fallback(c);
	}
	if (!c->ctx->tune.tcp_fallback && !rails_settling(c))
		no_rail_left(c);
	ctrl_flush(&c->ctl);
}

/*
 * A NIC changed state: every rail on it fails, or may come back; or its
 * health: every rail on it is drained, or back in the schedule.  The peer
 * is told either way.
 */
void engine_nic_event(struct r2cc_ctx *ctx, const struct r2cc_nic_event *ev)
{
	struct r2cc_conn *c;
	int i;

	for (c = ctx->conns; c; c = c->next) {
		if (c->state != CONN_READY)
			continue;
		for (i = 0; i < c->nrails && c->state == CONN_READY; i++) {
			struct rail *r = &c->rails[i];
			struct wire_nic w = { .rail = (uint32_t)i };
			bool up = ev->new_state == R2CC_NIC_ACTIVE;

			if (r->nic != ev->nic)
				continue;
			w.up = (up ? WIRE_NIC_UP : 0) |
			       (up && ev->degraded ? WIRE_NIC_DEGRADED : 0);
			c->event_ns = ev->time_ns;
			if (!up) {
				fail_rail(c, r, "port went down");
				rail_blame(c, r, R2CC_RAIL_REASON_LOCAL_PORT);
			} else if (ev->old_state != ev->new_state)
				r->next_try_ns = 0;
			c->event_ns = 0;
			rail_set_degraded(c, r, R2CC_RAIL_DEGRADED_LOCAL,
					  up && ev->degraded);
			/* Lost, the peer would never rebuild the rail. */
			engine_send(c, W_NIC, &w, sizeof(w), NULL, 0);
		}
	}
}
