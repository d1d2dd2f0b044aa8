// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Staged repair (stage.h): the receiver's ring and its slots, at both
 * ends.  Why it is lossless: the sender never writes a re-sent chunk into
 * the application's buffer while the rail that carried the original may
 * still deliver it; it writes into a slot of the ring, which no message
 * owns.  The receiver moves an entry into its message only after fencing
 * the entry's first rail (its QP in error, a receive flushed: nothing lands
 * through it any more), and only into a message still open whose chunk is
 * still missing; an original that landed before the fence makes the entry
 * a no-op.  A slot is written only by its own rail, so once a rail is
 * fenced at the receiver, its slots that hold no entry can be written by
 * nothing and are free; the others are freed as their entries are used.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/platform.h"
#include "xport/ctrl.h"
#include "xport/msg.h"
#include "xport/rail.h"
#include "xport/stage.h"

static uint64_t bit(uint32_t slot)
{
	return 1ull << slot;
}

/* The slots rail @ri writes. */
static uint64_t rail_slots(const struct stage *s, int ri)
{
	uint64_t one = s->per_rail == 64 ? UINT64_MAX : bit(s->per_rail) - 1;

	return one << (ri * s->per_rail);
}

static size_t hdr_off(const struct r2cc_conn *c, uint32_t slot)
{
	return (size_t)c->stage.nslots * c->chunk_size +
	       slot * sizeof(struct wire_stage_hdr);
}

void stage_close(struct r2cc_conn *c)
{
	struct stage *s = &c->stage;
	int d;

	for (d = 0; d < R2CC_MAX_NICS; d++)
		if (s->mr[d])
			ibv_dereg_mr(s->mr[d]);
	free(s->ring);
	memset(s, 0, sizeof(*s));
}

int stage_open(struct r2cc_conn *c)
{
	struct stage *s = &c->stage;
	struct wire_stage w = { 0 };
	long page = sysconf(_SC_PAGESIZE);
	void *ring;
	int i, ret;

	if (c->sender || !c->ctx->tune.staged || !c->nrails)
		return 0;
	s->per_rail = STAGE_PER_RAIL;
	if (s->per_rail * (uint32_t)c->nrails > WIRE_STAGE_SLOTS)
		s->per_rail = WIRE_STAGE_SLOTS / (uint32_t)c->nrails;
	s->nslots = s->per_rail * (uint32_t)c->nrails;
	s->ring_len = hdr_off(c, s->nslots);
	if (posix_memalign(&ring, page > 0 ? (size_t)page : 4096,
			   s->ring_len))
		goto off;
	s->ring = ring;
	memset(s->ring, 0, s->ring_len);
	for (i = 0; i < c->nrails; i++) {
		int d = c->ctx->nics[c->rails[i].nic].dev;

		if (!s->mr[d])
			s->mr[d] = ibv_reg_mr(c->ctx->pds[d], s->ring,
					      s->ring_len,
					      IBV_ACCESS_LOCAL_WRITE |
					      IBV_ACCESS_REMOTE_WRITE);
		if (!s->mr[d])
			goto off;
		w.rkey[i] = s->mr[d]->rkey;
	}
	w.addr = (uintptr_t)s->ring;
	w.per_rail = s->per_rail;
	w.nslots = s->nslots;
	ret = ctrl_send(&c->ctl, W_STAGE, &w, sizeof(w), NULL, 0);
	return ret < 0 ? ret : 0;
off:
	/* An optimisation only: the fence report still repairs. */
	log_msg(c->ctx, R2CC_LOG_WARN,
		"no repair ring (%zu bytes): failed rails repair by fence report",
		s->ring_len);
	stage_close(c);
	return 0;
}

/* ------------------------------------------------------------ sender */

static int free_slot(const struct stage *s, int ri)
{
	uint64_t f = rail_slots(s, ri) & ~s->busy;

	return f ? __builtin_ctzll(f) : -1;
}

bool stage_room(const struct r2cc_conn *c, const struct rail *r)
{
	const struct stage *s = &c->stage;

	/*
	 * A slot is free once its entry was used, which may be before this
	 * end has its work requests' completions: the queue bounds them.
	 */
	return c->ctx->tune.staged && s->addr && r->state == RAIL_UP &&
	       r->qp && rail_has_credit(r) &&
	       r->outstanding + STAGE_WRS <= r->sq_cap &&
	       free_slot(s, (int)(r - c->rails)) >= 0;
}

int stage_post(struct r2cc_conn *c, struct rail *r, struct msg *m,
	       uint32_t k, int origin)
{
	struct stage *s = &c->stage;
	int ri = (int)(r - c->rails), slot = free_slot(s, ri), n = 0;
	size_t len = msg_chunk_len(c, m, k);
	struct wire_stage_hdr h = {
		.msg_id = m->id, .chunk = k, .len = (uint32_t)len,
		.flags = k == m->nchunks - 1 ? WIRE_STAGE_LAST : 0,
		.origin = (uint32_t)origin, .epoch = c->rails[origin].epoch,
	};
	struct ibv_sge ds = {
		.addr = (uintptr_t)m->buf + (size_t)k * c->chunk_size,
		.length = (uint32_t)len,
		.lkey = m->mr ? m->mr->mrs[c->ctx->nics[r->nic].dev]->lkey : 0,
	}, hs = { .addr = (uintptr_t)&h, .length = sizeof(h) };
	struct ibv_send_wr send = {
		.wr_id = (uint64_t)m->id << 32 | k | STAGE_SEND_BIT,
		.opcode = IBV_WR_SEND_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htobe32(IMM_STAGE + (uint32_t)slot),
	}, hdr = {
		.wr_id = STAGE_PART_WRID, .next = &send,
		.sg_list = &hs, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE,
		.wr.rdma = { .remote_addr = s->addr + hdr_off(c, (uint32_t)slot),
			     .rkey = s->rkey[ri] },
	}, data = {
		.wr_id = STAGE_PART_WRID, .next = &hdr,
		.sg_list = &ds, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = s->addr +
					    (uint64_t)slot * c->chunk_size,
			     .rkey = s->rkey[ri] },
	}, *first = len ? &data : &hdr, *bad = NULL, *w;
	int ret;

	if (slot < 0)
		return -EBUSY;
	ret = ibv_post_send(r->qp, first, &bad);
	/* What went to the NIC counts, all or part. */
	for (w = first; w && w != bad; w = w->next)
		n++;
	if (n && !r->outstanding)
		r->last_progress_ns = clock_now_ns();
	rail_out(r, r->outstanding + n);
	s->busy |= bit((uint32_t)slot);
	if (ret)
		return ret > 0 ? -ret : -EIO;
	r->used++;		/* the send takes a receive */
	return 0;
}

/* ------------------------------------------------------------ receiver */

int stage_arrived(struct r2cc_conn *c, struct rail *r, uint32_t slot)
{
	struct stage *s = &c->stage;
	const struct wire_stage_hdr *h;
	int ri = (int)(r - c->rails);

	if (slot >= s->nslots || !(rail_slots(s, ri) & bit(slot)) ||
	    s->held & bit(slot))
		return -EPROTO;
	h = (const void *)(s->ring + hdr_off(c, slot));
	if (h->origin >= (uint32_t)c->nrails || (int)h->origin == ri ||
	    h->len > c->chunk_size || h->chunk > IMM_CHUNK_MASK ||
	    h->flags & ~WIRE_STAGE_LAST ||
	    (int32_t)(h->epoch - c->rails[h->origin].epoch) > 0)
		return -EPROTO;
	s->e[slot] = *h;
	s->held |= bit(slot);
	return 0;
}

bool stage_unfenced;

int stage_next(struct r2cc_conn *c, int *err)
{
	struct stage *s = &c->stage;
	uint64_t left = s->held;

	*err = 0;
	while (left) {
		uint32_t slot = (uint32_t)__builtin_ctzll(left);
		const struct wire_stage_hdr *h = &s->e[slot];
		struct rail *o = &c->rails[h->origin];

		left &= left - 1;
		/* Fenced and reported, or rebuilt since (after its fence). */
		if (o->epoch != h->epoch || o->state == RAIL_DOWN ||
		    stage_unfenced)
			return (int)slot;
		if (o->state == RAIL_UP || o->state == RAIL_PROBING) {
			*err = rail_fail(c, o, "the peer sent its chunks again on another rail");
			if (*err)
				return -1;
		}
	}
	return -1;
}

void stage_release(struct r2cc_conn *c, int slot)
{
	c->stage.held &= ~bit((uint32_t)slot);
	c->stage.done |= bit((uint32_t)slot);
}

bool stage_holds(const struct r2cc_conn *c, uint32_t id, uint32_t k)
{
	uint64_t left = c->stage.held;

	while (left) {
		const struct wire_stage_hdr *h =
			&c->stage.e[__builtin_ctzll(left)];

		if (h->msg_id == id && h->chunk == k)
			return true;
		left &= left - 1;
	}
	return false;
}

void stage_rail_fenced(struct r2cc_conn *c, const struct rail *r)
{
	struct stage *s = &c->stage;

	if (s->nslots)
		s->done |= rail_slots(s, (int)(r - c->rails)) & ~s->held;
}

int stage_flush(struct r2cc_conn *c)
{
	struct wire_stage_free f = { .slots = c->stage.done };
	int ret;

	if (!f.slots)
		return 0;
	c->stage.done = 0;
	ret = ctrl_send(&c->ctl, W_STAGE_FREE, &f, sizeof(f), NULL, 0);
	return ret < 0 ? ret : 0;
}

/* ------------------------------------------------------------ messages */

int stage_on_msg(struct r2cc_conn *c, uint16_t type, const void *p,
		 size_t len, const char **why)
{
	struct stage *s = &c->stage;

	if (type == W_STAGE) {
		const struct wire_stage *w = p;

		if (!c->sender || len != sizeof(*w) || s->nslots ||
		    !w->addr || !w->per_rail ||
		    w->per_rail > WIRE_STAGE_SLOTS / (uint32_t)c->nrails ||
		    w->nslots != w->per_rail * (uint32_t)c->nrails) {
			*why = "bad repair ring";
			return -EPROTO;
		}
		s->per_rail = w->per_rail;
		s->nslots = w->nslots;
		s->addr = w->addr;
		memcpy(s->rkey, w->rkey, sizeof(s->rkey));
		return 0;
	}
	if (type == W_STAGE_FREE) {
		const struct wire_stage_free *f = p;

		if (!c->sender || len != sizeof(*f) || !s->nslots ||
		    (s->nslots < 64 && f->slots >> s->nslots)) {
			*why = "bad repair ring slots";
			return -EPROTO;
		}
		s->busy &= ~f->slots;
		return 0;
	}
	*why = "bad control message";
	return -EPROTO;
}
