// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer: what a hostile peer can say on a connection's control
 * channel (lib/xport/wire.h), read by the transport's real parsers: framing
 * (ctrl_recv), the handshake (conn_handshake, check_hello), dispatch and
 * the engine (on_cts, on_data, on_msg_err, on_rail_ask, on_rail_seen),
 * the rails (rail_on_msg, on_fenced/fenced_ok, on_rail_req, on_rail_ack,
 * receive credits); and RDMA writes with any immediate data (receiver_cq,
 * arrive).
 *
 * The transport runs in the protocol simulator's world (tests/xsim):
 * xs_fuzz_open() brings a sender (node 0) and a receiver (node 1) up over
 * fake rails, optionally with messages under way, then freezes one node;
 * the other, the victim, reads only the bytes this target injects, while
 * its application posts and tests requests, its NIC and clock move.  The
 * world's connections are caught as they are made (the link wraps
 * conn_new) so that messages can be built from the victim's state: the
 * next message id, a rail's epoch, an open message's chunks, the frozen
 * peer's queue pairs.  Whatever the frozen peer had queued is flushed to
 * the victim and read first, so injected messages start on a frame.
 *
 * Handshake mode: a fresh connection on the victim's context, over a
 * socketpair whose other end is the fuzzer: a connector (the sender) that
 * sends its HELLO and reads a HELLO_ACK, or an acceptor (the receiver)
 * that reads a HELLO; then the same messages, and requests of its own
 * that the input posts and tests (zero-length ones without a buffer:
 * regress/fuzz_wire/zero-*).  The world cannot freeze before READY
 * (tests/fuzz/README.rst).
 *
 * Input: flags (F_*); a byte: rails - 1 in bits 0-1, bit 2 receive
 * buffers in "GPU memory", the rest and the next byte seed
 * xs_config_draw(); then, with F_RAW, the rest is one byte stream,
 * injected whole; else operations, each one byte (low 3 bits: which,
 * high 5: its argument) and its arguments:
 *   MSG    a framed message of type 1 + arg % (W_TYPE_MAX - 1) (arg >= 30:
 *          a 16-bit type from the input): a modifier byte (its 0x80: the
 *          header's length off by a signed byte), then per field either
 *          what a peer in step with the victim would send or a value from
 *          the input (see the builders below)
 *   HDR    a header of any type, length and reserved field, then up to
 *          255 bytes as they are
 *   RAW    arg << 8 | next byte bytes as they are
 *   STEPS  (arg + 1) * 32 scheduler steps (once the world has failed, a
 *          progress call per 16)
 *   TICK   the clock (arg + 1) * 25 ms on, then a progress call
 *   LINK   rail arg & 3's cable cut (arg & 4: restored); arg & 8: the
 *          victim's NIC of that rail goes down (up) as well; arg & 16:
 *          WRITE instead, an RDMA write from the frozen sender (below)
 *   APP    handshake mode: arg & 1 tests every open request, else posts
 *          a send (16-bit length, tag) or a receive of 1 + (arg >> 1) % 8
 *          buffers (a 16-bit length and a tag each)
 *   PROG   arg + 1 progress calls of the victim alone
 * At most STEP_BUDGET steps and PROG_BUDGET progress calls in all.
 *
 * Checked besides the sanitizers, no hang and no leak: the victim's
 * connection is READY or FAILED after the input (in handshake mode it may
 * still wait for its HELLO); a failed one has an error; a sender's count
 * of messages with chunks to post matches its messages; counts and queues
 * stay in bounds (rails, announcements, requests, replaced queue pairs,
 * the control channel's buffer); every frame the victim writes is well
 * formed and one its side may send; once the peer's end closes, the
 * victim fails within a bounded number of progress calls.  A rule of the
 * fake NIC's broken (xs_fuzz_close() returns 1) is the hostile peer's
 * doing, not a crash: the world stops its scheduler then, and this target
 * goes on with progress calls alone.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "xport/xport.h"
#include "world.h"

#include "fuzz.h"

#define F_RECV		0x01	/* the victim is the receiver, else the sender */
#define F_HS		0x02	/* handshake mode */
#define F_FALLBACK	0x04	/* TCP fallback on */
#define F_IB		0x08	/* InfiniBand ports */
#define F_TRAFFIC	0x30	/* 0, 1, 4 or 12 messages sent before the freeze */
#define F_RAW		0x40	/* the rest of the input is one raw stream */
#define F_NOEOF		0x80	/* the peer's end stays open at the end */

enum { K_MSG, K_HDR, K_RAW, K_STEPS, K_TICK, K_LINK, K_APP, K_PROG };

#define STEP_BUDGET	6000
#define PROG_BUDGET	2000
#define FINAL_STEPS	400
#define INJECT_MAX	(512u << 10)	/* bytes injected per input */
#define PIECE_MAX	16384u		/* fallback payload per W_DATA built */
#define BODY_MAX	(64u << 10)
#define NONCE		(0x1234567 | 1)	/* the world's (world.c setup()) */
#define SIM_CHUNK	4096u		/* world.c CHUNK */
#define SIM_SERIALS	4096		/* world.c MAX_SERIALS */
#define MAX_REQS	32
#define MAX_WRITES	128		/* the frozen peer's CQ is never polled */
#define APP_BUF		(R2CC_MAX_RECVS * 2 * SIM_CHUNK)

/* ------------------------------------------------------------ state */

static struct {
	struct xs_config cfg;
	int victim;			/* node: 0 sender, 1 receiver */
	struct r2cc_conn *wc[XS_NODES];	/* the world's, from conn_new */
	struct r2cc_conn *vc;		/* the victim's connection */
	struct r2cc_conn *peer;		/* the frozen node's */
	struct r2cc_conn *hc;		/* handshake mode: the fresh one */
	int hfd;			/* handshake mode: the fuzzer's end */
	struct r2cc_mr *mr;		/* handshake mode: the app's buffer */
	struct r2cc_mr *pmr;		/* the frozen peer's, for WRITE */
	int writes;
	struct r2cc_req *reqs[MAX_REQS];
	int nreqs;
	uint32_t next_id;		/* sender victim: next id to announce */
	int steps_left, progs_left;
	size_t injected;
	/* the victim's output, read back: the frame being skipped */
	uint8_t ohdr[sizeof(struct wire_hdr)];
	size_t ohdr_got, oskip;
} Z;

static int trace_on = -1;	/* $FUZZ_TRACE: the world's trace too */
static uint8_t app_buf[APP_BUF];
static uint8_t write_buf[2 * SIM_CHUNK];
static uint8_t body[BODY_MAX + 256] __attribute__((aligned(8)));

static bool world_failed(void)
{
	return xs_why[0] != 0;
}

/* The world's connections, as world.c setup() makes them. */
struct r2cc_conn *__real_conn_new(struct r2cc_ctx *ctx, int fd, bool sender);
struct r2cc_conn *__wrap_conn_new(struct r2cc_ctx *ctx, int fd, bool sender);
struct r2cc_conn *__wrap_conn_new(struct r2cc_ctx *ctx, int fd, bool sender)
{
	struct r2cc_conn *c = __real_conn_new(ctx, fd, sender);

	Z.wc[sender ? 0 : 1] = c;
	return c;
}


/* ------------------------------------------------------------ sim sender */

/* world.c msg_len(), fill(): what the simulated sender sends as message s */
static uint64_t mix(uint64_t x)
{
	struct xs_rng r = { x };

	return xs_next(&r);
}

static size_t sim_msg_len(int s)
{
	uint64_t h = mix(Z.cfg.seed * 31 + (uint64_t)s);
	uint32_t max = Z.cfg.max_chunks * SIM_CHUNK;

	switch (h % 20) {
	case 0:
		return 0;
	case 1:
		return 1 + (h >> 8) % 7;
	case 2: case 3: case 4: case 5:
		return SIM_CHUNK * (1 + (h >> 8) % Z.cfg.max_chunks);
	default:
		return 1 + (h >> 8) % max;
	}
}

static void sim_fill(uint8_t *p, int s, size_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		uint64_t v = ((uint64_t)(s + 1) << 32 | ((off + i) / 8)) ^
			     0xa5a5a5a55a5a5a5aull;

		p[i] = (uint8_t)(v >> (8 * ((off + i) % 8)));
	}
}

/* ------------------------------------------------------------ bytes */

/* The sizes of the messages that have one. */
static const uint32_t fixed_len[W_TYPE_MAX] = {
	[W_RAIL_DOWN] = sizeof(struct wire_rail),
	[W_NIC] = sizeof(struct wire_nic),
	[W_RAIL_REQ] = sizeof(struct wire_rail_req),
	[W_RAIL_ACK] = sizeof(struct wire_rail_ack),
	[W_MSG_ERR] = sizeof(struct wire_msg_err),
	[W_CREDIT] = sizeof(struct wire_credit),
	[W_RAIL_ASK] = sizeof(struct wire_rail_ask),
	[W_RAIL_SEEN] = sizeof(struct wire_rail_seen),
};

/* The victim's output must be framed as wire.h says; it is read and dropped. */
static void out_check(const uint8_t *p, size_t n)
{
	while (n) {
		size_t k;

		if (Z.oskip) {
			k = n < Z.oskip ? n : Z.oskip;
			Z.oskip -= k;
			p += k;
			n -= k;
			continue;
		}
		k = sizeof(Z.ohdr) - Z.ohdr_got;
		if (k > n)
			k = n;
		memcpy(Z.ohdr + Z.ohdr_got, p, k);
		Z.ohdr_got += k;
		p += k;
		n -= k;
		if (Z.ohdr_got == sizeof(Z.ohdr)) {
			struct wire_hdr h;

			memcpy(&h, Z.ohdr, sizeof(h));
			CHECK(h.type && h.type < W_TYPE_MAX && !h.reserved);
			CHECK(h.len <= WIRE_MAX_MSG);
			CHECK(!fixed_len[h.type] || h.len == fixed_len[h.type]);
			if (h.type == W_HELLO || h.type == W_HELLO_ACK)
				CHECK(h.type == (Z.victim ? W_HELLO_ACK : W_HELLO));
			else if (h.type == W_CTS || h.type == W_FENCED ||
				 h.type == W_RAIL_ACK || h.type == W_CREDIT ||
				 h.type == W_RAIL_SEEN)
				CHECK(Z.victim == 1);	/* only receivers */
			else if (h.type == W_DATA || h.type == W_RAIL_REQ ||
				 h.type == W_RAIL_ASK)
				CHECK(Z.victim == 0);	/* only senders */
			Z.oskip = h.len;
			Z.ohdr_got = 0;
		}
	}
}

/* What the victim wrote since the last look. */
static void drain_victim(void)
{
	static uint8_t buf[65536];
	ssize_t n;

	if (Z.hc) {
		while (Z.hfd >= 0 &&
		       (n = recv(Z.hfd, buf, sizeof(buf), MSG_DONTWAIT)) > 0)
			out_check(buf, (size_t)n);
		return;
	}
	{
		struct xs_pipe *q = &xs_pipes[Z.victim];

		/* The frozen peer reads it all, as __wrap_recv would. */
		if (q->len > q->rd)
			out_check(q->buf + q->rd, q->len - q->rd);
		q->rd = q->deliv = q->len = 0;
	}
}

static void progress(void)
{
	ctx_lock(Z.vc->ctx);
	conn_progress(Z.vc);
	ctx_unlock(Z.vc->ctx);
	drain_victim();
}

static void inject(const void *p, size_t len)
{
	const uint8_t *b = p;
	int tries = 0;

	if (len > INJECT_MAX - Z.injected)
		len = INJECT_MAX - Z.injected;
	Z.injected += len;
	if (!Z.hc) {
		xs_fuzz_inject(Z.victim, b, len);
		return;
	}
	while (len && Z.hfd >= 0) {
		ssize_t n = send(Z.hfd, b, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n > 0) {
			b += n;
			len -= (size_t)n;
			continue;
		}
		/* A full socket: the victim reads some, or the rest is lost. */
		if (n < 0 && errno == EAGAIN && ++tries < 64) {
			progress();
			continue;
		}
		break;
	}
}

static void frame(uint16_t type, const void *p, size_t len)
{
	struct wire_hdr h = { .len = (uint32_t)len, .type = type };

	inject(&h, sizeof(h));
	inject(p, len);
}

/* ------------------------------------------------------------ the victim */

static int nrails(void)
{
	return Z.vc->nrails > 0 ? Z.vc->nrails : 1;
}

static uint32_t pick_rail(struct in *in, bool raw)
{
	return raw ? take32(in) : take8(in) % (uint32_t)nrails();
}

static uint32_t rail_epoch(uint32_t rail)
{
	return rail < WIRE_MAX_RAILS ? Z.vc->rails[rail].epoch : 0;
}

/* The victim's @i-th open message (modulo how many), or NULL. */
static struct msg *pick_msg(uint8_t i)
{
	struct msg *open[MAX_MSGS];
	int n = 0, k;

	for (k = 0; k < MAX_MSGS; k++) {
		struct msg *m = &Z.vc->msgs[k];

		if (m->used && !m->done)
			open[n++] = m;
	}
	return n ? open[i % n] : NULL;
}

/* A queue pair address as the peer would give it for rail @rail. */
static void peer_qp(struct wire_qp *qp, uint32_t rail, struct in *in,
		    bool raw)
{
	int node = !Z.victim;
	uint8_t m = raw ? take8(in) : 0;

	memset(qp, 0, sizeof(*qp));
	if (!Z.hc && rail < (uint32_t)Z.peer->nrails &&
	    Z.peer->rails[rail].qp)
		*qp = Z.peer->rails[rail].local;
	else
		qp->qpn = 100 + rail;
	qp->gid[15] = (uint8_t)(node * 16 + (int)(rail & 15) + 1);
	qp->gid[0] = Z.cfg.ib ? 0xfe : 0;
	qp->mtu = IBV_MTU_4096;
	qp->active = 1;
	qp->lid = Z.cfg.ib ? (uint16_t)(node * 16 + (int)(rail & 15) + 1) : 0;
	if (m & 0x01)
		qp->qpn = take32(in);
	if (m & 0x02)
		qp->mtu = take8(in);
	if (m & 0x04)
		qp->active = take8(in);
	if (m & 0x08)
		qp->lid = take16(in);
	if (m & 0x10)
		qp->gid[take8(in) & 15] = take8(in);
	if (m & 0x20)
		qp->qpn = 0;
	if (m & 0x40)
		qp->psn = take32(in);
}

/* ------------------------------------------------------------ messages */

/* Modifier bit 0x80 of every builder: the length in the header is off. */
static void send_built(uint16_t type, size_t len, uint8_t m, struct in *in)
{
	if (m & 0x80) {
		int8_t d = (int8_t)take8(in);

		if (d < 0 && (size_t)-d > len)
			d = (int8_t)-(int)len;
		if (d > 0)
			memset(body + len, take8(in), (size_t)d);
		len = (size_t)((ssize_t)len + d);
	}
	frame(type, body, len);
}

/*
 * HELLO / HELLO_ACK: m & 0x01 magic, 0x02 version, 0x04 nonce, 0x08
 * chunk size, 0x10 rail count from the input; 0x20 each address from a
 * modifier of its own (peer_qp()); 0x40 the count from the input but the
 * victim's number of addresses.
 */
static size_t build_hello(struct in *in, uint8_t m)
{
	struct wire_hello *h = (void *)body;
	uint32_t i, n;

	memset(h, 0, sizeof(*h));
	h->magic = m & 0x01 ? take32(in) : WIRE_MAGIC;
	h->version = m & 0x02 ? take32(in) : WIRE_VERSION;
	h->nonce = m & 0x04 ? take64(in) : NONCE;
	h->chunk_size = m & 0x08 ? take32(in) : SIM_CHUNK;
	n = (uint32_t)Z.vc->ctx->nnics;
	h->nrails = m & 0x10 ? take8(in) : n;
	if (!(m & 0x40))
		n = h->nrails;
	if (n > WIRE_MAX_RAILS + 1)
		n = WIRE_MAX_RAILS + 1;
	for (i = 0; i < n; i++)
		peer_qp(&h->qp[i], i, in, m & 0x20);
	return sizeof(*h) + n * sizeof(h->qp[0]);
}

/*
 * CTS: count 1 + m % 4 (0x04: 32 bits from the input); each entry from
 * an announcement the victim already had (the ring's slot from a byte),
 * with the next id and the tag of a queued send, or, per a modifier byte
 * of its own: 0x01 id, 0x02 tag, 0x04 address, 0x08 length, 0x10 rkeys,
 * 0x20 flags, 0x40 reserved from the input; 0x80 the address moved by a
 * 16-bit offset.
 */
static size_t build_cts(struct in *in, uint8_t m)
{
	struct wire_cts *w = (void *)body;
	struct r2cc_req *q = Z.vc->sq_head;
	uint32_t i, n;

	memset(w, 0, sizeof(*w));
	w->count = m & 0x04 ? take32(in) : 1u + (m & 3u);
	n = w->count < R2CC_MAX_RECVS + 1 ? w->count : R2CC_MAX_RECVS + 1;
	for (i = 0; i < n; i++) {
		struct wire_cts_entry *e = &w->e[i];
		uint8_t em = take8(in), slot = take8(in);
		const struct cts *g = &Z.vc->ctsq[slot % MAX_RECV_REQS];
		int k;

		*e = g->e[(slot >> 5) % R2CC_MAX_RECVS];
		e->msg_id = Z.next_id++;
		e->tag = q ? q->stag : 0;
		if (q)
			q = q->next;
		e->flags = 0;
		e->reserved = 0;
		if (em & 0x01)
			e->msg_id = take32(in);
		if (em & 0x02)
			e->tag = take32(in);
		if (em & 0x04)
			e->addr = take64(in);
		if (em & 0x08)
			e->len = take64(in);
		if (em & 0x10)
			for (k = 0; k < WIRE_MAX_RAILS && k < nrails(); k++)
				e->rkey[k] = take32(in);
		if (em & 0x20)
			e->flags = take32(in);
		if (em & 0x40)
			e->reserved = take32(in);
		if (em & 0x80)
			e->addr += take16(in);
	}
	return sizeof(*w) + n * sizeof(w->e[0]);
}

/* RAIL_DOWN: m & 0x01 rail, 0x02 epoch from the input (else the rail's). */
static size_t build_rail(struct in *in, uint8_t m)
{
	struct wire_rail *w = (void *)body;

	w->rail = pick_rail(in, m & 0x01);
	w->epoch = m & 0x02 ? take32(in) : rail_epoch(w->rail);
	return sizeof(*w);
}

/*
 * CREDIT: m & 0x01 rail, 0x02 epoch from the input (else the rail's),
 * posted the sender's receives used on the rail + RQ_DEPTH less a byte
 * (what a receiver may have posted), 0x04 from the input.
 */
static size_t build_credit(struct in *in, uint8_t m)
{
	struct wire_credit *w = (void *)body;
	const struct rail *r;

	w->rail = pick_rail(in, m & 0x01);
	w->epoch = m & 0x02 ? take32(in) : rail_epoch(w->rail);
	r = &Z.vc->rails[w->rail < WIRE_MAX_RAILS ? w->rail : 0];
	w->posted = m & 0x04 ? take64(in) : r->used + RQ_DEPTH - take8(in);
	return sizeof(*w);
}

/*
 * RAIL_ASK: m & 0x01 rail, 0x02 epoch from the input (else the rail's),
 * 0x04 sequence (else 1), 0x08 reserved (else 0).
 */
static size_t build_rail_ask(struct in *in, uint8_t m)
{
	struct wire_rail_ask *w = (void *)body;

	w->rail = pick_rail(in, m & 0x01);
	w->epoch = m & 0x02 ? take32(in) : rail_epoch(w->rail);
	w->seq = m & 0x04 ? take32(in) : 1;
	w->reserved = m & 0x08 ? take32(in) : 0;
	return sizeof(*w);
}

/*
 * RAIL_SEEN: the answer to the sender's last question on the rail (its
 * epoch and sequence), a write that landed a byte's worth of
 * milliseconds ago; from the input: 0x01 rail, 0x02 epoch, 0x04
 * sequence, 0x08 age (0x10: none landed).
 */
static size_t build_rail_seen(struct in *in, uint8_t m)
{
	struct wire_rail_seen *w = (void *)body;
	const struct rail *r;

	w->rail = pick_rail(in, m & 0x01);
	r = &Z.vc->rails[w->rail < WIRE_MAX_RAILS ? w->rail : 0];
	w->epoch = m & 0x02 ? take32(in) : rail_epoch(w->rail);
	w->seq = m & 0x04 ? take32(in) : r->ask_seq;
	w->age_us = m & 0x08 ? take32(in) : 1000u * take8(in);
	if (m & 0x10)
		w->age_us = WIRE_SEEN_NEVER;
	return sizeof(*w);
}

/* NIC: m & 0x01 rail, 0x02 up from the input (else m & 0x04). */
static size_t build_nic(struct in *in, uint8_t m)
{
	struct wire_nic *w = (void *)body;

	w->rail = pick_rail(in, m & 0x01);
	w->up = m & 0x02 ? take32(in) : !!(m & 0x04);
	return sizeof(*w);
}

/*
 * FENCED: m & 0x01 rail, 0x02 epoch, 0x04 flags, 0x08 entry count from
 * the input; else the rail's epoch, WIRE_FENCED_LAST unless 0x10, and
 * one entry per open message (up to a byte's worth, modulo 9) with its
 * chunks from one the input picks, the bitmap's bytes from the input
 * (0x20: all arrived); 0x40: the entries, and their bitmaps, from the
 * input.
 */
static size_t build_fenced(struct in *in, uint8_t m)
{
	struct wire_fenced *f = (void *)body;
	size_t len = sizeof(*f);
	uint32_t want = 0, i, count;

	memset(f, 0, sizeof(*f));
	f->rail = pick_rail(in, m & 0x01);
	f->epoch = m & 0x02 ? take32(in) : rail_epoch(f->rail);
	f->flags = m & 0x04 ? take32(in) :
		   (m & 0x10 ? 0 : WIRE_FENCED_LAST);
	if (m & 0x08)
		want = take32(in);
	count = take8(in) % 9;
	for (i = 0; i < count; i++) {
		struct wire_fenced_msg fm;
		size_t bytes, b;
		struct msg *mm;

		if (m & 0x40) {
			fm.msg_id = take32(in);
			fm.first = take32(in);
			fm.nbits = take32(in);
			fm.reserved = take32(in);
			bytes = (size_t)take8(in) % 65;	/* maybe misaligned */
		} else {
			mm = pick_msg(take8(in));
			if (!mm || !mm->nchunks)
				break;
			fm.msg_id = mm->id;
			fm.first = take8(in) % mm->nchunks;
			fm.nbits = mm->nchunks - fm.first;
			fm.reserved = 0;
			bytes = ((size_t)fm.nbits + 63) / 64 * 8;
		}
		if (len + sizeof(fm) + bytes > BODY_MAX)
			break;
		memcpy(body + len, &fm, sizeof(fm));
		len += sizeof(fm);
		for (b = 0; b < bytes; b++)
			body[len + b] = m & 0x20 ? 0xff : take8(in);
		len += bytes;
		f->nmsgs++;
	}
	if (m & 0x08)
		f->nmsgs = want;
	return len;
}

/* RAIL_REQ: m & 0x01 rail, 0x02 epoch (else the rail's + 1), 0x04 address. */
static size_t build_rail_req(struct in *in, uint8_t m)
{
	struct wire_rail_req *w = (void *)body;

	w->rail = pick_rail(in, m & 0x01);
	w->epoch = m & 0x02 ? take32(in) : rail_epoch(w->rail) + 1;
	peer_qp(&w->qp, w->rail, in, m & 0x04);
	return sizeof(*w);
}

/*
 * RAIL_ACK: m & 0x01 rail, 0x02 epoch (else the rail's), 0x04 address,
 * 0x08 ok, 0x10 reserved from the input; ok unless 0x20.
 */
static size_t build_rail_ack(struct in *in, uint8_t m)
{
	struct wire_rail_ack *w = (void *)body;

	w->rail = pick_rail(in, m & 0x01);
	w->epoch = m & 0x02 ? take32(in) : rail_epoch(w->rail);
	peer_qp(&w->qp, w->rail, in, m & 0x04);
	w->ok = m & 0x08 ? take32(in) : !(m & 0x20);
	w->reserved = m & 0x10 ? take32(in) : 0;
	return sizeof(*w);
}

/*
 * DATA: a piece of an open message (picked by a byte) and chunk (a
 * byte), its whole chunk with the bytes the simulated sender sends for
 * it (handshake mode: a byte repeated), flags as they should be; 0x01
 * in two pieces; from the input: 0x02 id, 0x04 chunk, 0x08 offset,
 * 0x10 length field, 0x20 flags, 0x40 reserved and payload byte.
 */
static void send_data(struct in *in, uint8_t m)
{
	struct wire_data *d = (void *)body;
	struct msg *mm = pick_msg(take8(in));
	uint32_t cs = Z.vc->chunk_size ? Z.vc->chunk_size : SIM_CHUNK;
	size_t mlen, clen, off, pieces, pc;
	uint32_t nch;
	int serial = -1;

	memset(d, 0, sizeof(*d));
	if (mm) {
		d->msg_id = mm->id;
		mlen = mm->len;
		if (!Z.hc && mm->id < SIM_SERIALS) {
			serial = (int)mm->id;
			mlen = sim_msg_len(serial);
		}
	} else {
		d->msg_id = Z.vc->next_msg_id;
		mlen = SIM_CHUNK;
	}
	nch = (uint32_t)((mlen + cs - 1) / cs);
	nch = nch ? nch : 1;
	d->chunk = take8(in) % nch;
	clen = mlen - (size_t)d->chunk * cs < cs ? mlen - (size_t)d->chunk * cs
						 : cs;
	if (clen > PIECE_MAX)
		clen = PIECE_MAX;
	pieces = m & 0x01 && clen > 1 ? 2 : 1;
	if (m & 0x02)
		d->msg_id = take32(in);
	if (m & 0x04)
		d->chunk = take32(in);
	for (pc = 0, off = 0; pc < pieces; pc++) {
		size_t plen = pieces == 2 && !pc ? clen / 2 : clen - off;
		uint8_t fill = 0;

		d->off = (uint32_t)off;
		d->len = (uint32_t)plen;
		d->flags = pc + 1 < pieces ? 0 : WIRE_DATA_EOC |
			   (d->chunk == nch - 1 ? WIRE_DATA_LAST : 0);
		if (m & 0x08)
			d->off = take32(in);
		if (m & 0x20)
			d->flags = take8(in);
		if (m & 0x40) {
			d->reserved = take32(in);
			fill = take8(in);
		}
		if (serial >= 0 && !(m & 0x40))
			sim_fill((uint8_t *)(d + 1), serial,
				 (size_t)d->chunk * cs + off, plen);
		else
			memset(d + 1, fill, plen);
		if (m & 0x10)
			d->len = take32(in);
		frame(W_DATA, body, sizeof(*d) + plen);
		off += plen;
	}
}

/*
 * MSG_ERR: the id of an open message (picked by a byte; none: the next
 * one), ENETDOWN; from the input: 0x01 id, 0x02 error; 0x04 the id
 * moved back by a byte (settled ones), 0x08 on (never announced).
 */
static size_t build_msg_err(struct in *in, uint8_t m)
{
	struct wire_msg_err *e = (void *)body;
	struct msg *mm = pick_msg(take8(in));

	e->msg_id = mm ? mm->id : Z.vc->next_msg_id;
	e->err = ENETDOWN;
	if (m & 0x01)
		e->msg_id = take32(in);
	if (m & 0x02)
		e->err = (int32_t)take32(in);
	if (m & 0x04)
		e->msg_id -= take8(in);
	if (m & 0x08)
		e->msg_id += take8(in);
	return sizeof(*e);
}

static void op_msg(struct in *in, uint8_t arg)
{
	uint16_t type = arg < 30 ? 1 + arg % (W_TYPE_MAX - 1) : take16(in);
	uint8_t m = take8(in);
	size_t len;

	switch (type) {
	case W_HELLO:
	case W_HELLO_ACK:
		len = build_hello(in, m);
		break;
	case W_CTS:
		len = build_cts(in, m);
		break;
	case W_RAIL_DOWN:
		len = build_rail(in, m);
		break;
	case W_NIC:
		len = build_nic(in, m);
		break;
	case W_FENCED:
		len = build_fenced(in, m);
		break;
	case W_RAIL_REQ:
		len = build_rail_req(in, m);
		break;
	case W_RAIL_ACK:
		len = build_rail_ack(in, m);
		break;
	case W_DATA:
		send_data(in, m);
		return;
	case W_MSG_ERR:
		len = build_msg_err(in, m);
		break;
	case W_CREDIT:
		len = build_credit(in, m);
		break;
	case W_RAIL_ASK:
		len = build_rail_ask(in, m);
		break;
	case W_RAIL_SEEN:
		len = build_rail_seen(in, m);
		break;
	default:
		len = take8(in);
		memset(body, take8(in), len);
		break;
	}
	send_built(type, len, m, in);
}

static void op_hdr(struct in *in, uint8_t arg)
{
	struct wire_hdr h;
	size_t n;

	h.len = arg & 1 ? take32(in) : take16(in);
	h.type = take16(in);
	h.reserved = arg & 2 ? take16(in) : 0;
	inject(&h, sizeof(h));
	n = take8(in);
	n = n < in->n ? n : in->n;
	inject(in->p, n);
	in->p += n;
	in->n -= n;
}

static void op_raw(struct in *in, uint8_t arg)
{
	size_t n = (size_t)arg << 8 | take8(in);

	n = n < in->n ? n : in->n;
	inject(in->p, n);
	in->p += n;
	in->n -= n;
}

/* ------------------------------------------------------------ steps */

static void check_state(void)
{
	struct r2cc_conn *c = Z.vc;
	int i, pend = 0;

	CHECK(c->nrails >= 0 && c->nrails <= WIRE_MAX_RAILS);
	CHECK(c->cts_len >= 0 && c->cts_len <= MAX_RECV_REQS);
	CHECK(c->open_reqs >= 0 && c->open_reqs <= MAX_RECV_REQS);
	CHECK(c->ngrave >= 0 && c->ngrave <= GRAVE_MAX);
	CHECK(c->ctl.out_off <= c->ctl.out_len &&
	      c->ctl.out_len <= c->ctl.out_cap);
	for (i = 0; i < c->nrails; i++)
		CHECK(c->rails[i].state <= RAIL_FENCING);
	if (c->state == CONN_FAILED)
		CHECK(c->err < 0);
	if (!c->sender || c->state != CONN_READY)
		return;
	for (i = 0; i < MAX_MSGS; i++)
		pend += c->msgs[i].used && !c->msgs[i].done &&
			c->msgs[i].chunk_state;
	CHECK(c->pend_msgs == pend);
}

static void steps(int n)
{
	int i;

	if (n > Z.steps_left)
		n = Z.steps_left;
	Z.steps_left -= n;
	while (n > 0) {
		int k = n < 32 ? n : 32;

		if (!world_failed()) {
			/* One at a time: a step may progress the victim often. */
			for (i = 0; i < k; i++)
				xs_fuzz_steps(Z.victim, 1);
			if (Z.hc)
				progress();
		} else {
			/* The world stopped: the victim alone, time moving. */
			for (i = 0; i < k; i += 16) {
				xs_now += 50000;
				progress();
			}
		}
		drain_victim();
		check_state();
		n -= k;
	}
}

static void op_write(struct in *in, uint8_t arg);

static void op_link(struct in *in, uint8_t arg)
{
	int k = arg & 3;
	bool up = arg & 4;
	struct r2cc_ctx *ctx = Z.vc->ctx;

	if (arg & 16) {
		op_write(in, arg);
		return;
	}
	if (k >= Z.cfg.nrails)
		return;
	fv_set_link(k, up);
	if (arg & 8 && k < ctx->nnics) {
		struct r2cc_nic_event ev = {
			.size = sizeof(ev), .nic = k,
			.old_state = ctx->nics[k].state,
			.new_state = up ? R2CC_NIC_ACTIVE : R2CC_NIC_DOWN,
			.source = R2CC_NOTIFY_VERBS, .time_ns = xs_now,
		};

		if (ev.old_state != ev.new_state) {
			ctx->nics[k].state = ev.new_state;
			ctx_lock(ctx);
			engine_nic_event(ctx, &ev);
			ctx_unlock(ctx);
		}
	}
	drain_victim();
}

/*
 * WRITE (LINK with arg & 16): the frozen sender's QP of rail arg & 3
 * writes into the victim receiver, as the NIC would deliver it: a
 * modifier byte, an open message (picked by a byte) and a chunk (a byte):
 * the chunk's bytes as the simulated sender sends them, to its place in
 * the receive buffer, with immediate data naming them (the last chunk's
 * flag on the message's last; m & 0x01 the other way round); from the
 * input: 0x02 the immediate data, 0x04 the length,
 * 0x08 an address offset, 0x10 the rkey; 0x20 a send (a probe) instead,
 * 0x40 other bytes.
 */
/* The frozen sender's NIC delivers and completes what it can on @qp. */
static void peer_nic(struct ibv_qp *qp)
{
	struct fqp *q = (struct fqp *)qp;	/* its first member */
	int i;

	/* fv_deliver() refuses a write the fake NIC's rules forbid */
	for (i = 0; i < 1024 && (fv_deliver(q) || fv_ack(q)); i++)
		;
}

static void op_write(struct in *in, uint8_t arg)
{
	int k = arg & 3;
	uint8_t m = take8(in);
	struct msg *mm = pick_msg(take8(in));
	uint32_t chunk = take8(in), cs = Z.vc->chunk_size;
	struct r2cc_ctx *pctx = Z.peer->ctx;
	struct ibv_sge sge = { 0 };
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_qp *qp;
	size_t len = 0, mlen;
	int serial = -1;
	bool last = false;
	uint32_t nch;

	if (Z.hc || Z.victim != 1 || k >= Z.peer->nrails || k >= Z.vc->nrails ||
	    !(qp = Z.peer->rails[k].qp) || Z.writes >= MAX_WRITES)
		return;
	Z.writes++;
	if (!Z.pmr && r2cc_mr_reg(pctx, write_buf, sizeof(write_buf), 0,
				  &Z.pmr))
		return;
	wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr_id = UINT64_MAX - 1;	/* the frozen peer never polls */
	if (mm) {
		mlen = mm->len;
		if (mm->id < SIM_SERIALS) {
			serial = (int)mm->id;
			mlen = sim_msg_len(serial);
		}
		nch = (uint32_t)((mlen + cs - 1) / cs);
		nch = nch ? nch : 1;
		chunk %= nch;
		last = chunk == nch - 1;
		if ((size_t)chunk * cs < mlen)
			len = mlen - (size_t)chunk * cs < cs ?
			      mlen - (size_t)chunk * cs : cs;
		wr.wr.rdma.remote_addr = (uintptr_t)mm->buf +
					 (size_t)chunk * cs;
		if (mm->mr)
			wr.wr.rdma.rkey = mm->mr->mrs[Z.vc->ctx->nics[
				Z.vc->rails[k].nic].dev]->rkey;
	}
	wr.imm_data = htobe32(imm_make(mm ? mm->id : 0, chunk,
				       last ^ (m & 0x01)));
	if (m & 0x02)
		wr.imm_data = take32(in);
	if (m & 0x04)
		len = take16(in) % (sizeof(write_buf) + 1);
	if (m & 0x08)
		wr.wr.rdma.remote_addr += (uint64_t)(int64_t)(int16_t)take16(in);
	if (m & 0x10)
		wr.wr.rdma.rkey = take32(in);
	if (m & 0x20) {
		wr.opcode = IBV_WR_SEND_WITH_IMM;
		len = 0;
	}
	if (len > sizeof(write_buf))
		len = sizeof(write_buf);
	if (serial >= 0 && !(m & 0x40))
		sim_fill(write_buf, serial, (size_t)chunk * cs, len);
	else
		memset(write_buf, take8(in), len);
	sge.addr = (uintptr_t)write_buf;
	sge.length = (uint32_t)len;
	sge.lkey = Z.pmr->mrs[pctx->nics[Z.peer->rails[k].nic].dev]->lkey;
	wr.sg_list = &sge;
	wr.num_sge = len ? 1 : 0;
	/* What the peer had in flight lands first, leaving room for it. */
	peer_nic(qp);
	if (ibv_post_send(qp, &wr, &bad))
		return;
	peer_nic(qp);
}

/* ------------------------------------------------------------ handshake */

static void app_test(void)
{
	int i, done;
	size_t sizes[R2CC_MAX_RECVS];

	for (i = 0; i < Z.nreqs; i++) {
		int ret = r2cc_test(Z.reqs[i], &done, sizes);

		if (!done)
			continue;
		CHECK(ret <= 0);
		Z.reqs[i--] = Z.reqs[--Z.nreqs];
	}
	drain_victim();
}

static void app_post(struct in *in, uint8_t arg)
{
	struct r2cc_req *q = NULL;
	int ret;

	if (Z.nreqs == MAX_REQS)
		return;
	if (Z.hc->sender) {
		size_t len = take16(in) % (4 * SIM_CHUNK + 1);

		ret = r2cc_isend(Z.hc, len ? Z.mr : NULL, len ? app_buf : NULL,
				 len, take8(in) & 3, &q);
	} else {
		void *bufs[R2CC_MAX_RECVS];
		size_t lens[R2CC_MAX_RECVS];
		uint32_t tags[R2CC_MAX_RECVS];
		struct r2cc_mr *mrs[R2CC_MAX_RECVS];
		int n = 1 + (arg >> 1) % R2CC_MAX_RECVS, i;

		for (i = 0; i < n; i++) {
			lens[i] = take16(in) % (2 * SIM_CHUNK + 1);
			bufs[i] = lens[i] ? app_buf + i * 2 * SIM_CHUNK : NULL;
			mrs[i] = lens[i] ? Z.mr : NULL;
			tags[i] = take8(in) & 3;
		}
		ret = r2cc_irecv(Z.hc, n, bufs, lens, tags, mrs, &q);
	}
	CHECK(ret <= 0);
	if (!ret) {
		CHECK(q);
		Z.reqs[Z.nreqs++] = q;
	}
	drain_victim();
}

static int hs_open(void)
{
	struct r2cc_ctx *ctx = Z.wc[Z.victim]->ctx;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0,
		       sv))
		return -1;
	ctx_lock(ctx);
	Z.hc = __real_conn_new(ctx, sv[0], Z.victim == 0);
	if (Z.hc) {
		Z.hc->nonce = NONCE;
		Z.hc->state = Z.victim == 0 ? CONN_TCP : CONN_HELLO;
	}
	ctx_unlock(ctx);
	if (!Z.hc) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	Z.hfd = sv[1];
	Z.vc = Z.hc;
	CHECK(!r2cc_mr_reg(ctx, app_buf, sizeof(app_buf), 0, &Z.mr));
	return 0;
}

static void hs_close(void)
{
	if (Z.hc) {
		CHECK(!r2cc_conn_close(Z.hc));
		Z.hc = NULL;
	}
	Z.nreqs = 0;		/* freed by the close */
	if (Z.mr) {
		CHECK(!r2cc_mr_dereg(Z.mr));
		Z.mr = NULL;
	}
	if (Z.pmr) {
		CHECK(!r2cc_mr_dereg(Z.pmr));
		Z.pmr = NULL;
	}
	if (Z.hfd >= 0)
		close(Z.hfd);
	Z.hfd = -1;
}

/* ------------------------------------------------------------ a run */

static int open_world(uint8_t flags, struct in *in)
{
	static const int traffic[] = { 0, 1, 4, 12 };
	uint8_t r = take8(in);
	uint64_t seed = (uint64_t)(r >> 3) << 8 | take8(in);
	int t, i;

	xs_config_draw(&Z.cfg, seed + 1);
	Z.cfg.nrails = 1 + (r & 3);
	Z.cfg.ib = flags & F_IB;
	Z.cfg.fallback = flags & F_FALLBACK;
	Z.cfg.rx_device = r & 4;
	Z.cfg.faults = 0;
	Z.cfg.enomem = false;
	if (Z.cfg.fail_rtr_nic >= Z.cfg.nrails)
		Z.cfg.fail_rtr_nic = Z.cfg.nrails - 1;
	Z.cfg.verbose = env_on("FUZZ_TRACE", &trace_on);
	t = traffic[(flags & F_TRAFFIC) >> 4];
	if (t > Z.cfg.nmsgs)
		t = Z.cfg.nmsgs;
	Z.victim = flags & F_RECV ? 1 : 0;
	TRACE("seed %llu, %d rails, %s, fallback %d, victim %s, traffic %d%s\n",
	      (unsigned long long)Z.cfg.seed, Z.cfg.nrails,
	      Z.cfg.ib ? "IB" : "RoCE", Z.cfg.fallback,
	      Z.victim ? "receiver" : "sender", t,
	      flags & F_HS ? ", handshake" : "");
	if (xs_fuzz_open(&Z.cfg, Z.victim, t))
		return -1;
	Z.vc = Z.wc[Z.victim];
	Z.peer = Z.wc[!Z.victim];
	/* What the peer still had queued goes out: nothing cut in two. */
	if (Z.peer->ctl.out_len > Z.peer->ctl.out_off) {
		xs_fuzz_inject(Z.victim, Z.peer->ctl.out + Z.peer->ctl.out_off,
			       Z.peer->ctl.out_len - Z.peer->ctl.out_off);
		Z.peer->ctl.out_off = Z.peer->ctl.out_len;
	}
	/* The frame the peer was reading when it froze: the rest is skipped. */
	if (Z.peer->ctl.in_len) {
		size_t got = Z.peer->ctl.in_len;

		memcpy(Z.ohdr, Z.peer->ctl.in,
		       got < sizeof(Z.ohdr) ? got : sizeof(Z.ohdr));
		if (got < sizeof(Z.ohdr)) {
			Z.ohdr_got = got;
		} else {
			struct wire_hdr h;

			memcpy(&h, Z.ohdr, sizeof(h));
			Z.oskip = h.len - (got - sizeof(h));
		}
	}
	drain_victim();
	for (i = 0; i < 1000 && !world_failed() &&
		    xs_pipes[!Z.victim].deliv > xs_pipes[!Z.victim].rd; i++)
		progress();
	if (flags & F_HS)
		return hs_open();
	Z.next_id = Z.vc->next_msg_id;
	return 0;
}

/* The peer goes away: the victim must fail, and soon. */
static void peer_gone(void)
{
	int i;

	if (Z.hc) {
		close(Z.hfd);
		Z.hfd = -1;
	} else {
		xs_pipes[!Z.victim].dead = true;
	}
	for (i = 0; i < 2000 && Z.vc->state != CONN_FAILED; i++) {
		xs_now += 1000000;
		progress();
	}
	CHECK(Z.vc->state == CONN_FAILED);
	check_state();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct in in = { data, size };
	uint8_t flags = take8(&in), op, arg;
	int bad;

	memset(&Z, 0, sizeof(Z));
	Z.hfd = -1;
	Z.steps_left = STEP_BUDGET;
	Z.progs_left = PROG_BUDGET;
	if (open_world(flags, &in)) {
		hs_close();
		xs_fuzz_close();
		fv_reset();
		xs_pipes_reset();
		return 0;
	}
	if (flags & F_RAW) {
		inject(in.p, in.n);
		in.n = 0;
	}
	while (in.n) {
		op = take8(&in);
		arg = op >> 3;
		switch (op & 7) {
		case K_MSG:
			op_msg(&in, arg);
			break;
		case K_HDR:
			op_hdr(&in, arg);
			break;
		case K_RAW:
			op_raw(&in, arg);
			break;
		case K_STEPS:
			steps((arg + 1) * 32);
			break;
		case K_TICK:
			xs_now += (uint64_t)(arg + 1) * 25000000;
			if (Z.progs_left-- > 0)
				progress();
			break;
		case K_LINK:
			op_link(&in, arg);
			break;
		case K_APP:
			if (!Z.hc)
				break;
			if (arg & 1)
				app_test();
			else
				app_post(&in, arg);
			break;
		default:
			for (op = 0; op <= arg && Z.progs_left > 0; op++) {
				Z.progs_left--;
				progress();
			}
			check_state();
			break;
		}
	}
	steps(FINAL_STEPS);
	if (Z.hc)
		progress();
	while (Z.hc && Z.progs_left-- > 0 &&
	       Z.vc->state != CONN_READY && Z.vc->state != CONN_FAILED)
		progress();
	check_state();
	if (!Z.hc || Z.vc->state == CONN_READY || Z.vc->state == CONN_FAILED)
		CHECK(Z.vc->state == CONN_READY || Z.vc->state == CONN_FAILED);
	else
		CHECK(Z.vc->state == CONN_HELLO);	/* waits for more */
	if (!(flags & F_NOEOF))
		peer_gone();
	TRACE("victim %s, world %s\n",
	      Z.vc->state == CONN_READY ? "ready" : "failed",
	      world_failed() ? xs_why : "fine");
	if (Z.hc)
		app_test();
	hs_close();
	bad = xs_fuzz_close();
	(void)bad;		/* the hostile peer may break the NIC's rules */
	/*
	 * Free now what the next xs_fuzz_open() would: a run that ends with
	 * more mallocs than frees is run again by libFuzzer to look for leaks.
	 */
	fv_reset();
	xs_pipes_reset();
	return 0;
}
