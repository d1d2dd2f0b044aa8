// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * One simulated run: a sender and a receiver process (two contexts), a
 * connection between them over N rails, an application on each side that
 * streams checked messages with buffers reused at once, and a scheduler
 * that interleaves their progress with hardware steps, control-network
 * delivery, time and faults, all drawn from one seed.
 *
 * Invariants, checked as the run goes:
 * - every write lands inside a receive buffer that is posted, carries the
 *   bytes of exactly one message, and that message's own bytes;
 * - a completed receive holds exactly its message (size and every byte)
 *   and nothing past it; no message is received twice, or out of order;
 * - a send the sender completed reached the receiver;
 * - the run ends with nothing pending, once the faults heal, and every
 *   verbs object freed when the connections close;
 * - the control channel's queue and the replaced-QP list stay bounded.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "xport/publish.h"
#include "xport/xport.h"
#include "xport/rail.h"
#include "world.h"

#define CHUNK		4096u
#define MAX_CHUNKS	8u
#define SLOT		(MAX_CHUNKS * CHUNK)
#define RSLOTS		(MAX_RECV_REQS * R2CC_MAX_RECVS)
#define SSLOTS		16
#define MAX_SERIALS	4096
#define MAX_EVENTS	64
#define PHASE1_STEPS	30000
#define HEAL_NS		(60ull * 1000000000)
#define POISON_RX	0xdd
#define POISON_TX	0xee
#define CTRL_BOUND	(8u << 20)
#define SB_GIVE_UP_NS	(10ull * 1000000000)	/* a script step at most */

enum { RS_FREE, RS_POSTED };

/* Where the standby script is (world.h has the phases it reports). */
enum { SB_PRIMARY, SB_ONE_LEFT, SB_STANDBY, SB_BACK, SB_WINDOW, SB_DONE };

struct rreq {
	struct r2cc_req *q;
	int n;
	int slot[R2CC_MAX_RECVS];
	int expect[R2CC_MAX_RECVS];	/* serial, or -1 when not known */
};

struct sreq {
	struct r2cc_req *q;
	int serial;
};

struct nic_ev {
	uint64_t at;
	int node, nic;
	bool up, live;
	int health;			/* -1: a state change; 0/1 degraded */
};

/* Where the degrade script is (world.h has the phases it reports). */
enum { DG_SPREAD, DG_DRAIN, DG_AWAY, DG_RECOVER, DG_BACK, DG_DRAIN2,
	DG_CUT, DG_DONE };
#define DG_RAIL	1

/* Where the locate script is (world.h has the phases it reports). */
enum { LC_SPREAD, LC_WAIT, LC_BACK, LC_DONE };

static struct {
	const struct xs_config *cfg;
	uint64_t next_blip;		/* cfg->blip_ns: rail 0's next blip */
	uint64_t blip_back;		/* ... and its return from a silence */
	uint64_t hole_at;		/* cfg->hole_ns: rail 1 silent since */
	bool hole_done;			/* ... and failed by the sender */
	struct xs_rng rng;
	struct r2cc_ctx *ctx[XS_NODES];
	struct r2cc_conn *conn[XS_NODES];
	struct r2cc_mr *smr, *rmr;
	uint8_t *sbuf, *rbuf;
	/* sender application */
	int next_serial;
	struct sreq sends[SSLOTS];
	/* receiver application */
	struct {
		int state;
		int bound;		/* serial written into it, or -1 */
	} rs[RSLOTS];
	int rfree[RSLOTS], nrfree;
	struct rreq rreqs[MAX_RECV_REQS + 1];
	int nrreqs;
	int posted;			/* receives posted so far */
	int last_rx;			/* highest serial received */
	bool sent_ok[MAX_SERIALS], sent_failed[MAX_SERIALS];
	bool recv_ok[MAX_SERIALS];
	bool recv_in_failed[MAX_SERIALS];	/* arrived, its request failed */
	/* what happened */
	bool exact;			/* no request failed yet */
	bool conn_lost;			/* a connection failed */
	bool enomem_armed, enomem_fired;
	int faults_left;
	uint64_t last_change;
	struct nic_ev ev[MAX_EVENTS];
	bool failed;
	int frozen;			/* fuzzing: this node runs no more */
	uint64_t t0;			/* when the run began */
	bool pause_seen;
	/* the standby script */
	struct {
		int step;		/* SB_* */
		uint64_t cut;		/* primaries cut, not yet restored */
		bool noticed;		/* the sender saw them go */
		uint64_t mark[XS_MAX_RAILS];	/* chunks when it began */
		uint64_t since;		/* when it began */
	} sb;
	/* the degrade script (it shares the standby script's marks) */
	struct {
		int step;		/* DG_* */
		uint64_t rollbacks;	/* the rail's, once drained */
	} dg;
	/* the locate script (it shares them too) */
	struct {
		int step;		/* LC_* */
		int fault;		/* 0, 1: that node's port; 2: the path */
		uint64_t failures[XS_NODES];	/* the rail's, before it */
	} lc;
	bool port_went_down[XS_NODES][XS_MAX_RAILS];
	/* each context's progress thread (lib/xport/progress.c), in virtual time */
	uint64_t prog_seen[XS_NODES], prog_next[XS_NODES];
	uint64_t prog_passes[XS_NODES];	/* the passes it made */
	/* the idle-peer case: a rail cut once the receiver has it all */
	int tail_rail;			/* -1: not cut yet */
	uint64_t tail_at;
} W;

static uint8_t *sbuf, *rbuf;	/* kept across runs */
static uint8_t poison_rx[SLOT];

char xs_why[256];
struct xs_stats xs_stats;
uint64_t xs_steps_total;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	if (W.failed)
		return;
	W.failed = true;
	va_start(ap, fmt);
	vsnprintf(xs_why, sizeof(xs_why), fmt, ap);
	va_end(ap);
}

static void trace(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void trace(const char *fmt, ...)
{
	va_list ap;

	if (!W.cfg->verbose)
		return;
	fprintf(stderr, "%10.6f ", xs_now / 1e9);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ------------------------------------------------------------ messages */

static uint64_t mix(uint64_t x)
{
	struct xs_rng r = { x };

	return xs_next(&r);
}

/* The length of message @s: drawn from the seed, edge cases favoured. */
static size_t msg_len(int s)
{
	uint64_t h = mix(W.cfg->seed * 31 + (uint64_t)s);
	uint32_t max = W.cfg->max_chunks * CHUNK;

	if (W.cfg->first_big)
		return s ? 1 + h % CHUNK : max;
	switch (h % 20) {
	case 0:
		return 0;
	case 1:
		return 1 + (h >> 8) % 7;
	case 2: case 3: case 4: case 5:
		return CHUNK * (1 + (h >> 8) % W.cfg->max_chunks);
	default:
		return 1 + (h >> 8) % max;
	}
}

static uint32_t msg_tag(int s)
{
	return W.cfg->fallback && !W.cfg->enomem ? (uint32_t)s % 5 : 0;
}

static uint8_t pat(int s, size_t i)
{
	uint64_t v = ((uint64_t)(s + 1) << 32 | (i / 8)) ^
		     0xa5a5a5a55a5a5a5aull;

	return (uint8_t)(v >> (8 * (i % 8)));
}

/* The serial whose bytes begin at @p, found at offset @off; -1 if none. */
static int decode(const uint8_t *p, size_t off)
{
	uint64_t v;

	memcpy(&v, p, 8);
	v ^= 0xa5a5a5a55a5a5a5aull;
	if ((uint32_t)v != off / 8 || (v >> 32) == 0 ||
	    (v >> 32) > MAX_SERIALS)
		return -1;
	return (int)(v >> 32) - 1;
}

/* The bytes of message @s at [@off, @off + @len), a word at a time. */
static void fill(uint8_t *p, int s, size_t off, size_t len)
{
	size_t i = 0;

	for (; i < len && (off + i) % 8; i++)
		p[i] = pat(s, off + i);
	for (; i + 8 <= len; i += 8) {
		uint64_t v = ((uint64_t)(s + 1) << 32 | ((off + i) / 8)) ^
			     0xa5a5a5a55a5a5a5aull;

		memcpy(p + i, &v, 8);
	}
	for (; i < len; i++)
		p[i] = pat(s, off + i);
}

static bool same(const uint8_t *p, int s, size_t off, size_t len)
{
	static uint8_t want[SLOT];

	if (len > SLOT)
		return false;
	fill(want, s, off, len);
	return !memcmp(p, want, len);
}

/* ------------------------------------------------------------ the NIC */

static void on_write(int node, uint64_t addr, uint32_t len)
{
	uint64_t base = (uintptr_t)W.rbuf;
	size_t off;
	int slot;

	if (node != 1 || addr < base || addr + len > base + (uint64_t)RSLOTS * SLOT) {
		fail("a write outside every receive buffer (node %d)", node);
		return;
	}
	slot = (int)((addr - base) / SLOT);
	off = addr - base - (uint64_t)slot * SLOT;
	if (off + len > SLOT) {
		fail("a write across two receive buffers");
		return;
	}
	if (W.rs[slot].state != RS_POSTED) {
		fail("a write into receive buffer %d after its request completed",
		     slot);
		return;
	}
}

/* The source bytes of a write, checked once the fake NIC moved them. */
static void check_landed(int slot, size_t off, uint32_t len)
{
	const uint8_t *p = W.rbuf + (size_t)slot * SLOT + off;
	int s;

	if (len >= 8 && !(off % 8)) {
		s = decode(p, off);
		if (s < 0) {
			fail("receive buffer %d got bytes of no message (a send buffer reused too early?)",
			     slot);
			return;
		}
	} else {
		s = W.rs[slot].bound;
		if (s < 0)
			return;
	}
	if (W.rs[slot].bound >= 0 && W.rs[slot].bound != s) {
		fail("receive buffer %d got bytes of messages %d and %d", slot,
		     W.rs[slot].bound, s);
		return;
	}
	W.rs[slot].bound = s;
	if (!same(p, s, off, len))
		fail("receive buffer %d: bytes of message %d are wrong at %zu",
		     slot, s, off);
}

static struct {
	int slot;
	size_t off;
	uint32_t len;
	bool pending;
} landing;

/*
 * A write into the receiver's repair ring (R2CC_REPAIR=staged): no
 * message's buffer; what the library copies from it in is checked as the
 * message completes (recv_check).
 */
static bool in_ring(int node, uint64_t addr, uint32_t len)
{
	const struct stage *s = W.conn[1] ? &W.conn[1]->stage : NULL;
	uint64_t base = s && s->ring ? (uintptr_t)s->ring : 0;

	return node == 1 && base && addr >= base &&
	       addr + len <= base + s->ring_len;
}

static void on_write_hook(int node, uint64_t addr, uint32_t len)
{
	if (in_ring(node, addr, len))
		return;
	on_write(node, addr, len);
	if (W.failed)
		return;
	landing.slot = (int)((addr - (uintptr_t)W.rbuf) / SLOT);
	landing.off = addr - (uintptr_t)W.rbuf - (size_t)landing.slot * SLOT;
	landing.len = len;
	landing.pending = true;
}

static void on_violation(const char *what)
{
	fail("verbs model: %s", what);
}

/*
 * The sender queues a chunk on rail @nic (rail i is NIC i here).  Checked
 * as the scheduler chose it, since a step can both fail a primary and
 * post: a standby may be given a chunk only while no primary is up.  The
 * primaries are the world's (cfg), not the library's idea of them.
 */
static void on_write_posted(int node, int nic, uint32_t imm)
{
	const struct r2cc_conn *c = W.conn[0];
	uint64_t primary = W.cfg->primary;
	int i;

	if (node != 0 || !c || imm == IMM_PROBE)
		return;	/* a chunk, or a staged chunk's send: not a probe */
	xs_stats.sb_chunks[nic]++;
	/*
	 * Drained: nothing while a healthy rail of its kind or better is up.
	 * (R2CC_DRAIN=graded: a degraded rail carries at a lower weight
	 * until its last step drains it.)
	 */
	for (i = 0; conn_rail_drained(c, &c->rails[nic]) && i < c->nrails; i++)
		if (c->rails[i].state == RAIL_UP &&
		    !conn_rail_drained(c, &c->rails[i]) &&
		    (conn_rail_primary(c, i) || !conn_rail_primary(c, nic))) {
			fail("a chunk on degraded rail %d while healthy rail %d is up",
			     nic, i);
			return;
		}
	if (!primary || primary >> nic & 1)
		return;
	for (i = 0; i < c->nrails; i++)
		if (primary >> i & 1 && c->rails[i].state == RAIL_UP) {
			fail("a chunk on standby rail %d while primary rail %d is up",
			     nic, i);
			return;
		}
}

/* ------------------------------------------------------------ contexts */

static void log_fn(void *arg, enum r2cc_log_level level, const char *msg)
{
	static const char *const names[] = { "E", "W", "I", "D" };

	fprintf(stderr, "%10.6f   [%s %s] %s\n", xs_now / 1e9,
		(const char *)arg, names[level], msg);
}

static struct r2cc_ctx *mk_ctx(int node)
{
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_ctx *ctx = calloc(1, sizeof(*ctx));
	int i;

	if (W.cfg->verbose) {
		ctx->log = log_fn;
		ctx->log_arg = (void *)(node ? "rx" : "tx");
		ctx->log_level = R2CC_LOG_DEBUG;
	}
	ctx->nnics = ctx->ndevs = W.cfg->nrails;
	ctx->kmod_fd = ctx->epoll_fd = -1;
	ctx->source = R2CC_NOTIFY_VERBS;
	for (i = 0; i < W.cfg->nrails; i++) {
		struct r2cc_nic *n = &ctx->nics[i];

		n->info.size = sizeof(n->info);
		snprintf(n->info.dev_name, sizeof(n->info.dev_name),
			 "sim%d_%d", node, i);
		n->info.port = 1;
		n->info.link_layer = W.cfg->ib ? R2CC_LINK_INFINIBAND :
						 R2CC_LINK_ETHERNET;
		n->info.gid_index = 0;
		n->info.gid[15] = (uint8_t)(node * 16 + i + 1);
		n->info.gid[0] = W.cfg->ib ? 0xfe : 0;
		n->info.bandwidth_mbps = 100000 >> (i & 1);
		n->state = R2CC_NIC_ACTIVE;
		n->dev = i;
		n->kmod_dev = n->slot = -1;
		ctx->devs[i] = fv_context(node, i);
		ctx->pds[i] = fv_pd(node, i);
		fv_set_port(node, i, W.cfg->ib, (uint16_t)(node * 16 + i + 1));
	}
	tune_resolve(ctx, &o);
	ctx->tune.chunk_size = CHUNK;
	ctx->tune.stall_ms = 100;
	ctx->tune.degrade_hold_ms = 50;
	ctx->tune.rail_depth = W.cfg->rail_depth;
	ctx->tune.stall_adapt = W.cfg->stall_adapt;
	ctx->tune.staged = W.cfg->staged;
	ctx->tune.drain_graded = W.cfg->drain_graded;
	ctx->tune.stall_ask = W.cfg->stall_ask;
	ctx->tune.nic_window = W.cfg->nic_window ? W.cfg->nic_window :
			       W.cfg->rail_depth * CHUNK;
	ctx->tune.tcp_fallback = W.cfg->fallback;
	handle_add(ctx, R2CC_OBJ_CTX);
	return ctx;
}

/* A failed control send, once, when the run allows it. */
int __real_ctrl_send(struct ctrl *c, uint16_t type, const void *a,
		     size_t alen, const void *b, size_t blen);
int __wrap_ctrl_send(struct ctrl *c, uint16_t type, const void *a,
		     size_t alen, const void *b, size_t blen);
int __wrap_ctrl_send(struct ctrl *c, uint16_t type, const void *a,
		     size_t alen, const void *b, size_t blen)
{
	if (W.enomem_armed && type != W_HELLO && type != W_HELLO_ACK &&
	    xs_chance(&W.rng, 1, 4)) {
		W.enomem_armed = false;
		W.enomem_fired = true;
		trace("inject: ctrl_send(type %u) fails with -ENOMEM", type);
		return -ENOMEM;
	}
	if (type == W_FENCED) {
		const struct wire_fenced *f = a;

		xs_stats.fenced_parts++;
		xs_stats.fenced_reports += !!(f->flags & WIRE_FENCED_LAST);
		if (alen > xs_stats.fenced_max)
			xs_stats.fenced_max = alen;
		if (alen > engine_fence_part_max)
			fail("a fence report part of %zu bytes (limit %zu)",
			     alen, engine_fence_part_max);
	}
	if (type == W_DATA) {
		xs_stats.data_msgs++;
		if (W.cfg->rx_device)
			fail("fallback data for GPU memory");
	}
	return __real_ctrl_send(c, type, a, alen, b, blen);
}

/* ------------------------------------------------------------ applications */

static void note_error(const char *who, int err)
{
	bool lost = W.conn_lost || W.conn[0]->state == CONN_FAILED ||
		    W.conn[1]->state == CONN_FAILED;
	bool ok = (err == -ENETDOWN &&
		   (!W.cfg->fallback || W.cfg->rx_device)) ||
		  (W.enomem_fired && err == -ENOMEM) ||
		  (lost && (err == -ECONNRESET || err == -EPIPE ||
			    err == -ENOMEM));

	trace("%s: request failed: %d", who, err);
	xs_stats.enetdown += err == -ENETDOWN;
	if (!ok)
		fail("%s: a request failed with %d (%s)", who, err,
		     strerror(-err));
	W.exact = false;
}

/* The application has nothing open and nothing left to start. */
static bool sender_idle(void)
{
	int i;

	for (i = 0; i < SSLOTS; i++)
		if (W.sends[i].q)
			return false;
	return W.next_serial >= W.cfg->nmsgs || W.conn_lost;
}

static bool receiver_idle(void)
{
	return !W.nrreqs && ((W.posted >= W.cfg->nmsgs && W.exact) ||
			     W.conn_lost);
}

static void sender_step(void)
{
	struct r2cc_conn *c = W.conn[0];
	int i, done, ret;
	size_t size;

	/* Blocked elsewhere: it makes no call into the library at all. */
	if (W.cfg->idle_done && sender_idle())
		return;
	if (!W.conn_lost && r2cc_conn_ready(c) == 0)
		return;
	for (i = 0; i < SSLOTS && !W.failed; i++) {
		struct sreq *s = &W.sends[i];

		if (!s->q)
			continue;
		ret = r2cc_test(s->q, &done, &size);
		if (!done)
			continue;
		s->q = NULL;
		W.last_change = xs_now;
		if (ret) {
			note_error("sender", ret);
			W.sent_failed[s->serial] = true;
		} else {
			if (size != msg_len(s->serial))
				fail("send %d completed with size %zu, not %zu",
				     s->serial, size, msg_len(s->serial));
			W.sent_ok[s->serial] = true;
			trace("app: send %d done", s->serial);
		}
		memset(W.sbuf + (size_t)i * SLOT, POISON_TX, SLOT);
	}
	for (i = 0; i < W.cfg->send_window && !W.failed; i++) {
		struct sreq *s = &W.sends[i];
		uint8_t *buf = W.sbuf + (size_t)i * SLOT;
		size_t len;

		if (s->q || W.next_serial >= W.cfg->nmsgs || W.conn_lost)
			continue;
		len = msg_len(W.next_serial);
		fill(buf, W.next_serial, 0, len);
		ret = r2cc_isend(c, W.smr, buf, len, msg_tag(W.next_serial),
				 &s->q);
		if (ret == -ENETDOWN && !W.cfg->fallback)
			break;
		if (ret) {
			if (!W.conn_lost)
				note_error("sender: isend", ret);
			break;
		}
		s->serial = W.next_serial++;
		trace("app: send %d posted (%zu bytes)", s->serial, len);
	}
}

static void recv_check(struct rreq *r, int i, size_t size)
{
	int slot = r->slot[i];
	const uint8_t *p = W.rbuf + (size_t)slot * SLOT;
	int s = r->expect[i];
	if (size > SLOT) {
		fail("receive of %zu bytes into a %u-byte buffer", size, SLOT);
		return;
	}
	if (s < 0 && size < 8)
		goto tail;	/* too short to tell whose it is */
	if (s < 0) {
		s = decode(p, 0);
		if (s < 0) {
			fail("a completed receive holds no message");
			return;
		}
	}
	if (s >= 0) {
		if (size != msg_len(s)) {
			fail("message %d received with size %zu, sent %zu", s,
			     size, msg_len(s));
			return;
		}
		if (!same(p, s, 0, size)) {
			fail("message %d received with wrong bytes", s);
			return;
		}
		if (W.recv_ok[s]) {
			fail("message %d received twice", s);
			return;
		}
		W.recv_ok[s] = true;
		W.last_rx = s;
	}
tail:
	if (memcmp(p + size, poison_rx, SLOT - size))
		fail("receive buffer %d written past its message", slot);
}

static void slot_free(int slot)
{
	memset(W.rbuf + (size_t)slot * SLOT, POISON_RX, SLOT);
	W.rs[slot].state = RS_FREE;
	W.rs[slot].bound = -1;
	W.rfree[W.nrfree++] = slot;
}

/*
 * The message whose bytes the library copied into receive buffer @slot
 * from its repair ring (stage.h), which no NIC write showed: -1 if none.
 */
static int copied_in(int slot)
{
	const uint8_t *p = W.rbuf + (size_t)slot * SLOT;
	size_t off;
	int s;

	for (off = 0; off < SLOT; off += CHUNK)
		if ((s = decode(p + off, off)) >= 0)
			return s;
	return -1;
}

static void receiver_step(void)
{
	struct r2cc_conn *c = W.conn[1];
	size_t sizes[R2CC_MAX_RECVS];
	int i, j, done, ret;

	if (W.cfg->idle_done && receiver_idle())
		return;
	if (!W.conn_lost && r2cc_conn_ready(c) == 0)
		return;
	for (i = 0; i < W.nrreqs && !W.failed; i++) {
		struct rreq *r = &W.rreqs[i];

		ret = r2cc_test(r->q, &done, sizes);
		if (!done)
			continue;
		W.last_change = xs_now;
		if (ret)
			note_error("receiver", ret);
		for (j = 0; j < r->n && !W.failed; j++) {
			int b = W.rs[r->slot[j]].bound;

			if (!ret)
				recv_check(r, j, sizes[j]);
			else if (b >= 0 || (b = copied_in(r->slot[j])) >= 0)
				W.recv_in_failed[b] = true;
			slot_free(r->slot[j]);
		}
		trace("app: receive of %d done (%d)", r->n, ret);
		W.rreqs[i--] = W.rreqs[--W.nrreqs];
	}
	/* After a failure, receives go on: the sends skipped none. */
	while (!W.failed && !W.conn_lost &&
	       (W.posted < W.cfg->nmsgs || !W.exact) &&
	       W.nrreqs <= MAX_RECV_REQS) {
		void *bufs[R2CC_MAX_RECVS];
		size_t lens[R2CC_MAX_RECVS];
		uint32_t tags[R2CC_MAX_RECVS];
		struct r2cc_mr *mrs[R2CC_MAX_RECVS];
		struct rreq *r = &W.rreqs[W.nrreqs];
		int n = W.cfg->fixed_group ? W.cfg->fixed_group :
			1 + (int)xs_below(&W.rng, (uint32_t)W.cfg->max_group);

		if (W.exact && n > W.cfg->nmsgs - W.posted)
			n = W.cfg->nmsgs - W.posted;
		if (n > W.nrfree)
			break;
		for (j = 0; j < n; j++) {
			/* the buffer freed last is taken first: reuse at once */
			r->slot[j] = W.rfree[W.nrfree - 1 - j];
			bufs[j] = W.rbuf + (size_t)r->slot[j] * SLOT;
			lens[j] = SLOT;
			tags[j] = msg_tag(W.posted + j);
			mrs[j] = W.rmr;
			r->expect[j] = W.exact ? W.posted + j : -1;
		}
		ret = r2cc_irecv(c, n, bufs, lens, tags, mrs, &r->q);
		if (ret == -EAGAIN && W.nrreqs < MAX_RECV_REQS)
			xs_stats.irecv_slot_busy++;
		if (ret == -EAGAIN || (ret == -ENETDOWN && !W.cfg->fallback))
			break;
		/* An announcement that could not be queued: nothing posted. */
		if (ret == -ENOMEM && W.enomem_fired && c->state == CONN_READY)
			break;
		if (ret) {
			if (!W.conn_lost)
				note_error("receiver: irecv", ret);
			break;
		}
		if (W.nrreqs == MAX_RECV_REQS) {
			fail("r2cc_irecv took more than %d open requests",
			     MAX_RECV_REQS);
			break;
		}
		W.nrfree -= n;
		for (j = 0; j < n; j++) {
			W.rs[r->slot[j]].state = RS_POSTED;
			W.rs[r->slot[j]].bound = -1;
		}
		r->n = n;
		W.nrreqs++;
		W.posted += n;
		trace("app: %d receives posted (%d so far)", n, W.posted);
	}
}

/* ------------------------------------------------------------ faults */

static void event_add(uint64_t at, int node, int nic, bool up)
{
	int i;

	for (i = 0; i < MAX_EVENTS; i++)
		if (!W.ev[i].live) {
			W.ev[i] = (struct nic_ev){ at, node, nic, up, true, -1 };
			return;
		}
}

/* r2cc.ko's early warning: @node's port of rail @nic degraded or not. */
static void health_add(uint64_t at, int node, int nic, bool degraded)
{
	int i;

	for (i = 0; i < MAX_EVENTS; i++)
		if (!W.ev[i].live) {
			W.ev[i] = (struct nic_ev){ at, node, nic, true, true,
						   degraded };
			return;
		}
}

static void events_due(void)
{
	int i, next;

	for (;;) {
		next = -1;
		for (i = 0; i < MAX_EVENTS; i++)
			if (W.ev[i].live && W.ev[i].at <= xs_now &&
			    (next < 0 || W.ev[i].at < W.ev[next].at))
				next = i;
		if (next < 0)
			return;
		W.ev[next].live = false;
		{
			struct nic_ev *e = &W.ev[next];
			struct r2cc_ctx *ctx = W.ctx[e->node];
			struct r2cc_nic *nic = &ctx->nics[e->nic];
			struct r2cc_nic_event ev = {
				.size = sizeof(ev), .nic = e->nic,
				.old_state = nic->state,
				.new_state = e->up ? R2CC_NIC_ACTIVE :
						     R2CC_NIC_DOWN,
				.source = R2CC_NOTIFY_KMOD, .time_ns = e->at,
			};

			/* As r2cc.ko: health only while ACTIVE. */
			if (e->health >= 0 &&
			    (nic->state != R2CC_NIC_ACTIVE ||
			     nic->degraded == e->health))
				continue;
			if (e->health < 0 && ev.old_state == ev.new_state)
				continue;
			if (e->health >= 0)
				nic->degraded = (uint8_t)e->health;
			else if (!e->up)
				nic->degraded = 0;
			if (e->health < 0 && !e->up)
				W.port_went_down[e->node][e->nic] = true;
			ev.degraded = nic->degraded;
			nic->state = ev.new_state;
			trace("event: node %d nic %d %s", e->node, e->nic,
			      e->health == 1 ? "degraded" :
			      e->health == 0 ? "recovered" :
			      e->up ? "up" : "down");
			engine_nic_event(ctx, &ev);
		}
	}
}

static void cut(int k, bool quiet)
{
	int n;

	if (!fv_link(k))
		return;
	fv_set_link(k, false);
	trace("fault: rail %d cut%s", k, quiet ? " (black hole)" : "");
	for (n = 0; n < XS_NODES; n++)
		if (!quiet && xs_chance(&W.rng, 4, 5))
			event_add(xs_now + xs_below(&W.rng, 5000000), n, k,
				  false);
}

static void restore(int k)
{
	int n;

	if (fv_link(k))
		return;
	fv_set_link(k, true);
	trace("fault: rail %d restored", k);
	for (n = 0; n < XS_NODES; n++)
		event_add(xs_now + 5000000 + xs_below(&W.rng, 5000000), n, k,
			  true);
}

static void fault(void)
{
	struct fqp *qs[64];
	int k = (int)xs_below(&W.rng, (uint32_t)W.cfg->nrails), n, i;

	W.faults_left--;
	switch (xs_below(&W.rng, 11)) {
	case 0: case 1: case 2:
		cut(k, false);
		break;
	case 3:
		cut(k, true);
		break;
	case 4: case 5:
		restore(k);
		break;
	case 6:
		for (i = 0; i < W.cfg->nrails; i++)
			cut(i, false);
		break;
	case 7:
		n = fv_qps(qs, 64);
		if (n) {
			struct fqp *q = qs[xs_below(&W.rng, (uint32_t)n)];

			trace("fault: NIC fails a QP of node %d rail %d",
			      fv_qp_node(q), fv_qp_nic(q));
			fv_fatal(q, xs_chance(&W.rng, 1, 2));
		}
		break;
	case 8:
		if (W.cfg->enomem && !W.enomem_fired)
			W.enomem_armed = true;
		break;
	case 9:
		/* r2cc.ko's early warning, or its all-clear */
		health_add(xs_now + xs_below(&W.rng, 5000000),
			   (int)xs_below(&W.rng, XS_NODES), k,
			   xs_chance(&W.rng, 2, 3));
		break;
	default:
		cut(k, false);
		restore(k);
		break;
	}
}

static void heal(void)
{
	int k;

	for (k = 0; k < W.cfg->nrails; k++)
		restore(k);
	W.enomem_armed = false;
}

/* ------------------------------------------------------------ standbys */

static uint64_t sb_rails(void)
{
	return (1ull << W.cfg->nrails) - 1;
}

/* Every rail in @mask is up (or, !@up, none is) at the sender. */
static bool sb_state(uint64_t mask, bool up)
{
	const struct r2cc_conn *c = W.conn[0];
	int i;

	for (i = 0; i < c->nrails; i++)
		if (mask >> i & 1 && (c->rails[i].state == RAIL_UP) != up)
			return false;
	return true;
}

/* Chunks posted on the rails in @mask since the script's step began. */
static uint64_t sb_since(uint64_t mask)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < W.cfg->nrails; i++)
		if (mask >> i & 1)
			n += xs_stats.sb_chunks[i] - W.sb.mark[i];
	return n;
}

/* Every rail in @mask carried at least one chunk since the step began. */
static bool sb_each(uint64_t mask)
{
	int i;

	for (i = 0; i < W.cfg->nrails; i++)
		if (mask >> i & 1 && xs_stats.sb_chunks[i] == W.sb.mark[i])
			return false;
	return true;
}

/* A script's step begins: chunks and time count from here. */
static void script_mark(void)
{
	W.sb.noticed = false;
	W.sb.since = xs_now;
	memcpy(W.sb.mark, xs_stats.sb_chunks, sizeof(W.sb.mark));
}

static void sb_goto(int step)
{
	W.sb.step = step;
	script_mark();
}

static void sb_reach(enum xs_sb_phase p)
{
	uint64_t n = 0;
	int i;

	for (i = 0; i < XS_MAX_RAILS; i++)
		n += xs_stats.sb_chunks[i];
	xs_stats.sb_reached |= 1u << p;
	trace("standby: phase %d reached, %llu chunks posted so far", p,
	      (unsigned long long)n);
}

/* Fail the lowest primary still up: its traffic moves on. */
static void sb_cut_next(uint64_t left)
{
	int k = __builtin_ctzll(left);

	cut(k, W.cfg->sb_quiet);
	W.sb.cut |= 1ull << k;
	sb_goto(left & (left - 1) ? SB_ONE_LEFT : SB_STANDBY);
}

static void sb_restore(void)
{
	int k;

	for (k = 0; k < W.cfg->nrails; k++)
		if (W.sb.cut >> k & 1)
			restore(k);
	W.sb.cut = 0;
}

/*
 * The standby script, after every step.  Each phase counts only chunks
 * posted after it began, and one that failed a rail begins again once the
 * sender saw the rail go (until then a black hole still takes chunks).
 */
static void standby_script(void)
{
	const struct r2cc_conn *c = W.conn[0];
	uint64_t all = sb_rails(), prim = W.cfg->primary & all;
	uint64_t standby = all & ~prim, left = prim & ~W.sb.cut;
	uint64_t n = (uint64_t)W.cfg->sb_chunks;
	int i;

	if (W.sb.step == SB_DONE || c->state != CONN_READY)
		return;
	if (xs_now - W.sb.since > SB_GIVE_UP_NS) {
		trace("standby: step %d gave up", W.sb.step);
		sb_restore();
		sb_goto(SB_DONE);
		return;
	}
	if ((W.sb.step == SB_ONE_LEFT || W.sb.step == SB_STANDBY) &&
	    !W.sb.noticed) {
		if (!sb_state(W.sb.cut, false))
			return;
		sb_goto(W.sb.step);
		W.sb.noticed = true;
	}
	switch (W.sb.step) {
	case SB_PRIMARY:
		/* Standbys up all along, yet idle: the library agrees. */
		if (!sb_state(all, true) || !sb_each(prim) ||
		    sb_since(prim & -prim) < n)
			return;
		if (sb_since(standby))
			return;
		for (i = 0; i < c->nrails; i++)
			if (standby >> i & 1 &&
			    (c->rails[i].st.chunks || c->rails[i].st.bytes))
				fail("standby rail %d: chunks done before any failure",
				     i);
		sb_reach(XS_SB_PRIMARY);
		sb_cut_next(left);
		break;
	case SB_ONE_LEFT:
		if (!sb_state(left, true) || sb_since(left) < n ||
		    sb_since(standby))
			return;
		sb_reach(XS_SB_ONE_LEFT);
		sb_cut_next(left);
		break;
	case SB_STANDBY:
		if (sb_since(standby) < n || !sb_each(standby))
			return;
		sb_reach(XS_SB_FAILOVER);
		sb_restore();
		sb_goto(SB_BACK);
		break;
	case SB_BACK:
		if (sb_state(prim, true))
			sb_goto(SB_WINDOW);
		break;
	case SB_WINDOW:
		/* Every primary back for a window: nothing on a standby. */
		if (!sb_state(prim, true) || sb_since(standby)) {
			sb_goto(SB_BACK);
			break;
		}
		if (sb_since(prim) >= 2 * n) {
			sb_reach(XS_SB_FAILBACK);
			sb_goto(SB_DONE);
		}
		break;
	}
}

/* The script keeps rails cut: the world's heal must wait for it. */
static bool sb_holds(void)
{
	return (W.cfg->primary && W.sb.step < SB_BACK) ||
	       (W.cfg->dg_chunks && W.dg.step < DG_DONE) ||
	       (W.cfg->lc_chunks && W.lc.step < LC_DONE);
}

/* ------------------------------------------------------------ degrading */

static void dg_goto(int step)
{
	W.dg.step = step;
	script_mark();
}

static void dg_reach(enum xs_sb_phase p)
{
	xs_stats.sb_reached |= 1u << p;
	trace("degrade: phase %d reached", p);
}

/*
 * The degrade script (world.h), after every step.  on_write_posted checks
 * on every post that a degraded rail is given nothing while a healthy one
 * is up; the script walks the rail through its states and checks what
 * the drain bought: a cut that takes nothing back.
 */
static void degrade_script(void)
{
	const struct r2cc_conn *c = W.conn[0];
	const struct rail *r = &c->rails[DG_RAIL];
	uint64_t all = sb_rails(), me = 1ull << DG_RAIL, others = all & ~me;
	uint64_t n = (uint64_t)W.cfg->dg_chunks;
	int node = W.cfg->dg_node;

	if (W.dg.step == DG_DONE || c->state != CONN_READY)
		return;
	if (xs_now - W.sb.since > SB_GIVE_UP_NS) {
		trace("degrade: step %d gave up", W.dg.step);
		health_add(xs_now, node, DG_RAIL, false);
		restore(DG_RAIL);
		dg_goto(DG_DONE);
		return;
	}
	switch (W.dg.step) {
	case DG_SPREAD:
		if (!sb_state(all, true) || !sb_each(all) ||
		    sb_since(all) < 3 * n)
			return;
		health_add(xs_now, node, DG_RAIL, true);
		dg_goto(DG_DRAIN);
		break;
	case DG_DRAIN:
	case DG_DRAIN2:
		/*
		 * The sender knows, and what the rail had in flight is done
		 * (graded: once its last step drained it).
		 */
		if (!conn_rail_drained(c, r) || r->outstanding)
			return;
		W.dg.rollbacks = r->st.rollbacks;
		dg_goto(W.dg.step == DG_DRAIN ? DG_AWAY : DG_CUT);
		break;
	case DG_AWAY:
		if (!sb_state(others, true) || sb_since(others) < 2 * n)
			return;
		dg_reach(XS_DG_DRAINED);
		health_add(xs_now, node, DG_RAIL, false);
		dg_goto(DG_RECOVER);
		break;
	case DG_RECOVER:
		if (!r->degraded && r->state == RAIL_UP)
			dg_goto(DG_BACK);
		break;
	case DG_BACK:
		if (sb_since(me) < n)
			return;
		/* In the schedule beside the others, not instead of them. */
		if (sb_since(others) < n) {
			fail("recovered rail %d took %llu chunks, the others %llu",
			     DG_RAIL, (unsigned long long)sb_since(me),
			     (unsigned long long)sb_since(others));
			return;
		}
		dg_reach(XS_DG_RECOVERED);
		health_add(xs_now, node, DG_RAIL, true);
		dg_goto(DG_DRAIN2);
		break;
	case DG_CUT:
		if (fv_link(DG_RAIL)) {
			if (!sb_state(others, true) || sb_since(others) < n)
				return;
			/* A loud cut: both ends hear of it. */
			cut(DG_RAIL, true);
			event_add(xs_now + 1000000, 0, DG_RAIL, false);
			event_add(xs_now + 2000000, 1, DG_RAIL, false);
			return;
		}
		if (r->state != RAIL_DOWN)
			return;
		if (r->st.rollbacks != W.dg.rollbacks) {
			fail("rail %d, drained, took back %llu chunks when cut",
			     DG_RAIL, (unsigned long long)(r->st.rollbacks -
							   W.dg.rollbacks));
			return;
		}
		dg_reach(XS_DG_CUT);
		restore(DG_RAIL);
		dg_goto(DG_DONE);
		break;
	}
}

/* ------------------------------------------------------------ locating */

static void lc_goto(int step)
{
	W.lc.step = step;
	script_mark();
}

/* Both ends have located rail DG_RAIL's new failure: where they should? */
static void lc_check(void)
{
	static const uint8_t want[3][XS_NODES] = {
		{ R2CC_RAIL_REASON_LOCAL_PORT, R2CC_RAIL_REASON_PEER_PORT },
		{ R2CC_RAIL_REASON_PEER_PORT, R2CC_RAIL_REASON_LOCAL_PORT },
		{ R2CC_RAIL_REASON_PATH, R2CC_RAIL_REASON_PATH },
	};
	int n;

	for (n = 0; n < XS_NODES; n++) {
		const struct rail *r = &W.conn[n]->rails[DG_RAIL];

		if (r->st.failures == W.lc.failures[n] ||
		    r->st.reason == R2CC_RAIL_REASON_UNKNOWN)
			return;
	}
	for (n = 0; n < XS_NODES; n++) {
		uint8_t got = W.conn[n]->rails[DG_RAIL].st.reason;

		if (got != want[W.lc.fault][n]) {
			fail("fault %d: node %d located it as %u, not %u",
			     W.lc.fault, n, got, want[W.lc.fault][n]);
			return;
		}
	}
	xs_stats.sb_reached |= 1u << (XS_LC_LOCAL + W.lc.fault);
	trace("locate: fault %d located", W.lc.fault);
	restore(DG_RAIL);
	lc_goto(LC_BACK);
}

/* The locate script (world.h), after every step. */
static void locate_script(void)
{
	uint64_t all = sb_rails(), me = 1ull << DG_RAIL;
	uint64_t n = (uint64_t)W.cfg->lc_chunks;
	int k;

	if (W.lc.step == LC_DONE || W.conn[0]->state != CONN_READY)
		return;
	if (xs_now - W.sb.since > SB_GIVE_UP_NS) {
		trace("locate: step %d of fault %d gave up", W.lc.step,
		      W.lc.fault);
		restore(DG_RAIL);
		lc_goto(LC_DONE);
		return;
	}
	switch (W.lc.step) {
	case LC_SPREAD:
		if (!sb_state(all, true) || !sb_each(all) ||
		    sb_since(all) < 3 * n ||
		    W.conn[1]->rails[DG_RAIL].state != RAIL_UP)
			return;
		for (k = 0; k < XS_NODES; k++)
			W.lc.failures[k] = W.conn[k]->rails[DG_RAIL].st.failures;
		/* A dead port drops every frame; only its node hears. */
		cut(DG_RAIL, true);
		if (W.lc.fault < XS_NODES)
			event_add(xs_now + 1000000, W.lc.fault, DG_RAIL, false);
		lc_goto(LC_WAIT);
		break;
	case LC_WAIT:
		lc_check();
		break;
	case LC_BACK:
		if (W.conn[1]->rails[DG_RAIL].state != RAIL_UP ||
		    !sb_state(me, true) || sb_since(me) < n)
			return;
		lc_goto(++W.lc.fault < 3 ? LC_SPREAD : LC_DONE);
		break;
	}
}

/*
 * Every run: a rail that failed says where, one that never did says
 * nothing, a port is blamed only if it went down, and a rail confirmed
 * failed is not in service.  (Not: confirmed only if its link was cut.
 * The simulator's clock jumps by up to 400 ms between two hardware steps,
 * a pause longer than a probe's bound, which a real host can take too.)
 */
static void lc_check_stats(void)
{
	int n, k;

	for (n = 0; n < XS_NODES && !W.failed; n++)
		for (k = 0; k < W.conn[n]->nrails; k++) {
			const struct r2cc_rail_stats *st =
				&W.conn[n]->rails[k].st;
			int port = st->reason == R2CC_RAIL_REASON_LOCAL_PORT ?
				   n : st->reason == R2CC_RAIL_REASON_PEER_PORT ?
				   1 - n : -1;

			if (!st->failures != (st->reason ==
					      R2CC_RAIL_REASON_NONE))
				fail("node %d rail %d: %llu failures, reason %u",
				     n, k, (unsigned long long)st->failures,
				     st->reason);
			else if (port >= 0 && !W.port_went_down[port][k])
				fail("node %d rail %d: blamed on node %d's port, which never went down",
				     n, k, port);
			else if (st->confirmed &&
				 W.conn[n]->rails[k].state == RAIL_UP)
				fail("node %d rail %d: confirmed failed, yet up",
				     n, k);
		}
}

/* What the library reports of its standbys, at the end of a run. */
static void sb_check_stats(void)
{
	struct r2cc_conn_stats cs = { .size = sizeof(cs) };
	struct r2cc_rail_stats rs[XS_MAX_RAILS] = { { .size = sizeof(rs[0]) } };
	int n = r2cc_conn_stats(W.conn[0], &cs, rs, XS_MAX_RAILS), i;

	if (n != W.cfg->nrails) {
		fail("r2cc_conn_stats: %d rails, not %d", n, W.cfg->nrails);
		return;
	}
	for (i = 0; i < n; i++) {
		bool standby = !(W.cfg->primary >> i & 1);

		if (rs[i].standby != standby)
			fail("rail %d reported as %s", i,
			     rs[i].standby ? "a standby" : "a primary");
		if (rs[i].chunks > xs_stats.sb_chunks[i])
			fail("rail %d: %llu chunks done, %llu posted", i,
			     (unsigned long long)rs[i].chunks,
			     (unsigned long long)xs_stats.sb_chunks[i]);
		if (standby && xs_stats.sb_reached >> XS_SB_FAILOVER & 1 &&
		    !rs[i].chunks)
			fail("standby rail %d completed no chunk of the failover",
			     i);
	}
	/* A standby was up throughout: TCP never had to carry anything. */
	if (cs.tcp_bytes)
		fail("%llu bytes over TCP with a standby up",
		     (unsigned long long)cs.tcp_bytes);
}

/* ------------------------------------------------------------ steps */

static void hw_step(void)
{
	struct fqp *qs[64], *q;
	int n = fv_qps(qs, 64);

	if (!n)
		return;
	q = qs[xs_below(&W.rng, (uint32_t)n)];
	if (fv_flush_pending(q) &&
	    xs_chance(&W.rng, 1, W.cfg->slow_flush ? 300 : 3)) {
		fv_flush(q);
		return;
	}
	/* A few: each takes a receive the sender does not know of. */
	if (W.cfg->nic_dup && xs_stats.nic_dups < 8 &&
	    xs_chance(&W.rng, 1, 64) && fv_redeliver(q)) {
		xs_stats.nic_dups++;
		return;
	}
	if (fv_can_deliver(q) && (!fv_can_ack(q) || xs_chance(&W.rng, 1, 2))) {
		landing.pending = false;
		fv_deliver(q);
		if (landing.pending && !W.failed)
			check_landed(landing.slot, landing.off, landing.len);
		return;
	}
	fv_ack(q);
}

static void tick(void)
{
	uint32_t r = xs_below(&W.rng, 1000);

	if (r < 950 || W.cfg->small_ticks)
		xs_now += 1000 + xs_below(&W.rng, 100000);
	else if (r < 995)
		xs_now += 1000000 + xs_below(&W.rng, 50000000);
	else
		xs_now += 100000000 + xs_below(&W.rng, 300000000);
}

/* A slow consumer: the receiver's application makes no calls for a while. */
static bool rx_paused(void)
{
	const struct xs_config *c = W.cfg;
	uint64_t t = xs_now - W.t0;
	int i;

	if (!c->rx_pause_ns || t < c->rx_pause_at)
		return false;
	if (t < c->rx_pause_at + c->rx_pause_ns)
		return true;
	if (!W.pause_seen) {
		W.pause_seen = true;
		for (i = 0; i < SSLOTS; i++)
			xs_stats.sends_open_in_pause += W.sends[i].q != NULL;
	}
	return false;
}

/*
 * Each context's progress thread: every progress_ns it makes a pass if
 * nothing made one since it last looked (lib/xport/progress.c's own test).
 */
static void progress_threads(void)
{
	int n;

	if (!W.cfg->progress_ns)
		return;
	for (n = 0; n < XS_NODES; n++) {
		if (!W.ctx[n] || W.frozen == n || xs_now < W.prog_next[n])
			continue;
		ctx_lock(W.ctx[n]);
		W.prog_passes[n] += progress_idle(W.ctx[n], &W.prog_seen[n]);
		ctx_unlock(W.ctx[n]);
		W.prog_next[n] = xs_now + W.cfg->progress_ns;
	}
}

/*
 * The idle-peer case: once the receiver has every message and called its
 * last, a rail whose writes the sender has not seen complete is cut, so
 * that the sender needs the idle receiver's fence report; it comes back
 * 20 ms later.
 */
static void tail_script(void)
{
	const struct r2cc_conn *c = W.conn[0];
	int k;

	if (W.tail_rail >= 0) {
		if (xs_now - W.tail_at > 20000000)
			restore(W.tail_rail);
		return;
	}
	if (!receiver_idle() || W.conn_lost || c->state != CONN_READY)
		return;
	for (k = 0; k < c->nrails; k++)
		if (c->rails[k].state == RAIL_UP && c->rails[k].outstanding) {
			trace("idle-peer: receiver done, rail %d cut with %d writes open",
			      k, c->rails[k].outstanding);
			cut(k, false);
			W.tail_rail = k;
			W.tail_at = xs_now;
			xs_stats.tail_cut = true;
			return;
		}
}

static void step(bool faults)
{
	uint32_t r = xs_below(&W.rng, 100);

	/*
	 * The staged cases: rail 0 drops and comes back at once, or falls
	 * silent for about the stall detector's bound (a black hole that
	 * lets its writes through once the sender has given up on them).
	 */
	if (faults && W.cfg->blip_ns && W.blip_back &&
	    xs_now >= W.blip_back) {
		restore(0);
		W.blip_back = 0;
	}
	if (faults && W.cfg->blip_ns && !W.blip_back &&
	    xs_now >= W.next_blip) {
		if (W.next_blip && xs_chance(&W.rng, 1, 2)) {
			cut(0, false);
			restore(0);
		} else if (W.next_blip) {
			cut(0, true);
			W.blip_back = xs_now + 90000000 +
				      xs_below(&W.rng, 40000000);
		}
		W.next_blip = xs_now + W.cfg->blip_ns / 2 +
			      xs_below(&W.rng, (uint32_t)W.cfg->blip_ns);
	}
	events_due();
	progress_threads();
	if (r < 20 && W.frozen != 0)
		sender_step();
	else if (r < 40 && W.frozen != 1 && !rx_paused())
		receiver_step();
	else if (r < 40)
		tick();
	else if (r < 50)
		xs_pipe_deliver(0, 1 + xs_below(&W.rng, 8192));
	else if (r < 60)
		xs_pipe_deliver(1, 1 + xs_below(&W.rng, 8192));
	else if (r < 86)
		hw_step();
	else if (r < 98 || !faults || W.faults_left <= 0)
		tick();
	else
		fault();
}

/*
 * A NIC's count of work requests in flight is the sum of its rails', and
 * never above its window: what the scheduler leans on.
 */
static void check_nic_window(int n)
{
	const struct r2cc_ctx *ctx = W.ctx[n];
	const struct r2cc_conn *c;
	int i, sum[R2CC_MAX_NICS] = { 0 }, rails[R2CC_MAX_NICS] = { 0 };
	uint32_t slots = W.cfg->nic_window ? W.cfg->nic_window / CHUNK :
					    W.cfg->rail_depth;

	for (c = ctx->conns; c; c = c->next)
		for (i = 0; i < c->nrails; i++) {
			sum[c->rails[i].nic] += c->rails[i].outstanding;
			rails[c->rails[i].nic]++;
		}
	for (i = 0; i < ctx->nnics; i++) {
		/*
		 * Staged chunks go past the window, up to a full send queue
		 * (which the fake NIC checks itself).
		 */
		int max = (int)(slots ? slots : 1) +
			  (W.cfg->staged ? (int)(W.cfg->rail_depth + 2 +
						 STAGE_WRS * STAGE_PER_RAIL) *
					   rails[i] : 0);

		if (ctx->nics[i].wrs != sum[i])
			fail("node %d NIC %d: %d WRs counted, its rails have %d",
			     n, i, ctx->nics[i].wrs, sum[i]);
		if (ctx->nics[i].wrs < 0 || ctx->nics[i].wrs > max)
			fail("node %d NIC %d: %d WRs in flight, at most %d",
			     n, i, ctx->nics[i].wrs, max);
	}
}

/*
 * The last repair's phases (r2cc_conn_stats) run from detection, which
 * the port event precedes, and none of them after the re-sent chunk
 * completed.
 */
static void check_repair_phases(int n)
{
	const struct r2cc_conn_stats *s = &W.conn[n]->st;
	uint64_t done;

	if (!s->repairs)
		return;
	if (s->repair_notice_ns_last > s->repair_ns_last)
		fail("node %d: repair noticed %llu ns after the event, done in %llu",
		     n, (unsigned long long)s->repair_notice_ns_last,
		     (unsigned long long)s->repair_ns_last);
	done = s->repair_ns_last - s->repair_notice_ns_last;
	if (s->repair_fenced_ns_last > done ||
	    s->repair_settled_ns_last > done ||
	    s->repair_posted_ns_last > done ||
	    s->repair_posted_ns_max < s->repair_posted_ns_last)
		fail("node %d: repair phases fenced %llu settled %llu posted %llu (max %llu) ns, completed %llu ns after detection",
		     n, (unsigned long long)s->repair_fenced_ns_last,
		     (unsigned long long)s->repair_settled_ns_last,
		     (unsigned long long)s->repair_posted_ns_last,
		     (unsigned long long)s->repair_posted_ns_max,
		     (unsigned long long)done);
}

static void check_bounds(void)
{
	int n;

	for (n = 0; n < XS_NODES; n++) {
		const struct r2cc_conn *c = W.conn[n];

		check_nic_window(n);
		check_repair_phases(n);
		if (c->ctl.out_len - c->ctl.out_off > CTRL_BOUND ||
		    c->ctl.out_cap > 2 * CTRL_BOUND)
			fail("node %d: control queue grew to %zu bytes", n,
			     c->ctl.out_cap);
		if (c->ngrave > GRAVE_MAX)
			fail("node %d: %d replaced QPs kept", n, c->ngrave);
	}
	if (W.conn[0]->state == CONN_FAILED || W.conn[1]->state == CONN_FAILED)
		W.conn_lost = true;
}

static bool finished(void)
{
	bool sends_open = false;
	int i;

	for (i = 0; i < SSLOTS; i++)
		sends_open |= W.sends[i].q != NULL;
	if (sends_open)
		return false;
	if (W.conn_lost)
		return !W.nrreqs;
	if (W.next_serial < W.cfg->nmsgs)
		return false;
	if (W.exact)
		return W.posted == W.cfg->nmsgs && !W.nrreqs;
	/* After a failure the receiver may hold receives no send will take. */
	return !W.nrreqs || xs_now - W.last_change > 5000000000ull;
}

/*
 * After a failure the receiver's grouped receives can hold messages of the
 * new stream beside receives no send will take: such a request never
 * completes, yet its messages arrived.  Short ones cannot be told apart.
 */
static bool in_open_recv(int s)
{
	int i, j;

	if (W.exact)
		return false;
	if (msg_len(s) < 8 || W.recv_in_failed[s])
		return true;
	for (i = 0; i < W.nrreqs; i++)
		for (j = 0; j < W.rreqs[i].n; j++) {
			int slot = W.rreqs[i].slot[j];

			if (W.rs[slot].bound == s ||
			    (W.rs[slot].bound < 0 && copied_in(slot) == s))
				return true;
		}
	return false;
}

/* ------------------------------------------------------------ a run */

static int setup(const struct xs_config *cfg)
{
	static struct fv_hooks hooks = { on_write_hook, on_violation };
	static bool once;
	int sv[2], i;

	if (!once) {
		fv_init(&hooks);
		fv_on_write_posted = on_write_posted;
		reap_inline = true;	/* one thread, deterministic */
		once = true;
	}
	memset(&W, 0, sizeof(W));
	W.cfg = cfg;
	W.rng.s = cfg->seed;
	W.exact = true;
	W.last_rx = -1;
	W.frozen = -1;
	W.tail_rail = -1;
	W.faults_left = cfg->faults;
	xs_now = 1000000000;
	xs_why[0] = 0;
	fv_reset();
	xs_pipes_reset();
	xs_net_rng = &W.rng;
	xs_send_eagain = 20;
	if (!sbuf) {
		sbuf = malloc((size_t)SSLOTS * SLOT);
		rbuf = malloc((size_t)RSLOTS * SLOT);
		memset(poison_rx, POISON_RX, sizeof(poison_rx));
	}
	W.sbuf = sbuf;
	W.rbuf = rbuf;
	memset(W.sbuf, POISON_TX, (size_t)SSLOTS * SLOT);
	for (i = RSLOTS - 1; i >= 0; i--)
		slot_free(i);
	memset(&xs_stats, 0, sizeof(xs_stats));
	engine_fence_part_max = cfg->fence_part_max ? cfg->fence_part_max :
						    WIRE_MAX_MSG;
	W.ctx[0] = mk_ctx(0);
	W.ctx[1] = mk_ctx(1);
	if (cfg->fail_rtr_node >= 0 && cfg->fail_rtr_nic < cfg->nrails)
		fv_fail_next_rtr(cfg->fail_rtr_node, cfg->fail_rtr_nic);
	if (r2cc_mr_reg(W.ctx[0], W.sbuf, (size_t)SSLOTS * SLOT, 0, &W.smr) ||
	    r2cc_mr_reg(W.ctx[1], W.rbuf, (size_t)RSLOTS * SLOT, 0, &W.rmr)) {
		fail("cannot register buffers");
		return -1;
	}
	W.rmr->device = cfg->rx_device;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv)) {
		fail("socketpair: %s", strerror(errno));
		return -1;
	}
	xs_fds[0] = sv[0];
	xs_fds[1] = sv[1];
	W.conn[0] = conn_new(W.ctx[0], sv[0], true);
	W.conn[1] = conn_new(W.ctx[1], sv[1], false);
	/* r2cc_connect_opts() sets it there; only the sender schedules. */
	W.conn[0]->primary = cfg->primary;
	W.sb.since = xs_now;
	W.conn[0]->nonce = W.conn[1]->nonce = 0x1234567 | 1;
	W.conn[0]->state = CONN_TCP;
	W.conn[1]->state = CONN_HELLO;
	return 0;
}

static void teardown(void)
{
	int n;

	for (n = 0; n < XS_NODES; n++) {
		if (W.conn[n])
			r2cc_conn_close(W.conn[n]);
		W.conn[n] = NULL;
	}
	if (W.smr && r2cc_mr_dereg(W.smr))
		fail("sender's buffer still in use after close");
	if (W.rmr && r2cc_mr_dereg(W.rmr))
		fail("receiver's buffer still in use after close");
	W.smr = W.rmr = NULL;
	for (n = 0; n < XS_NODES; n++) {
		int i;

		if (!W.ctx[n])
			continue;
		for (i = 0; i < W.ctx[n]->nnics; i++)
			if (!W.failed && W.ctx[n]->nics[i].wrs)
				fail("node %d NIC %d: %d WRs counted after close",
				     n, i, W.ctx[n]->nics[i].wrs);
		handle_del(W.ctx[n]);
		free(W.ctx[n]);
		W.ctx[n] = NULL;
	}
	if (!W.failed && fv_live_count())
		fail("%d verbs objects left after close", fv_live_count());
	xs_fds[0] = xs_fds[1] = -1;
}

/* After the stream: every rail comes back once the faults are gone. */
static void settle_rails(void)
{
	uint64_t t0 = xs_now;

	while (!W.failed && !W.conn_lost) {
		if (rails_up(W.conn[0]) == W.conn[0]->nrails &&
		    rails_up(W.conn[1]) == W.conn[1]->nrails)
			return;
		if (xs_now - t0 > HEAL_NS / 2) {
			fail("rails up %d/%d and %d/%d %.0f s after the stream ended",
			     rails_up(W.conn[0]), W.conn[0]->nrails,
			     rails_up(W.conn[1]), W.conn[1]->nrails,
			     (xs_now - t0) / 1e9);
			return;
		}
		step(false);
		check_bounds();
	}
}

/*
 * The hole (cfg->hole_ns): rail 1 silent, both ports up, so only the
 * sender's stall detector can find it.  Once the sender has failed the
 * rail it comes back; a rail still up with work posted XS_HOLE_LIMIT_NS
 * into the silence is a black hole never found.  True: the run failed.
 */
static bool hole_check(void)
{
	const struct rail *r = &W.conn[0]->rails[1];

	if (r->state != RAIL_UP) {
		W.hole_done = true;
		xs_stats.hole_failed = true;
		restore(1);
		return false;
	}
	if (r->outstanding && xs_now - W.hole_at > XS_HOLE_LIMIT_NS) {
		fail("rail 1 silent for %.1f s with work posted, still up: a black hole never found",
		     (xs_now - W.hole_at) / 1e9);
		return true;
	}
	return false;
}

int xs_run(const struct xs_config *cfg)
{
	uint64_t steps = 0, heal_at = 0, t0 = xs_now;
	bool cut_done = false, restore_done = false;
	int s;

	if (setup(cfg))
		goto out;
	t0 = W.t0 = xs_now;
	while (!W.failed) {
		bool healing = steps >= PHASE1_STEPS || heal_at;

		if (cfg->cut_all_ns && !cut_done && xs_now - t0 >= cfg->cut_all_ns) {
			for (s = 0; s < cfg->nrails; s++)
				cut(s, false);
			cut_done = true;
		}
		if (cfg->restore_all_ns && cut_done && !restore_done &&
		    xs_now - t0 >= cfg->restore_all_ns) {
			for (s = 0; s < cfg->nrails; s++)
				restore(s);
			restore_done = true;
		}

		if (cfg->hole_ns && !W.hole_at && xs_now - t0 >= cfg->hole_ns) {
			cut(1, true);
			W.hole_at = xs_now;
		}
		if (W.hole_at && !W.hole_done && hole_check())
			break;
		if ((steps == PHASE1_STEPS ||
		     (!heal_at && W.next_serial >= cfg->nmsgs &&
		      (!cfg->cut_all_ns || cut_done))) && !sb_holds() &&
		    (!W.hole_at || W.hole_done)) {
			heal();
			heal_at = xs_now;
			trace("heal: every rail restored");
		}
		step(!healing);
		steps++;
		if (!W.failed)
			check_bounds();
		if (!W.failed && cfg->primary)
			standby_script();
		if (!W.failed && cfg->dg_chunks)
			degrade_script();
		if (!W.failed && cfg->lc_chunks)
			locate_script();
		if (!W.failed && cfg->tail_cut)
			tail_script();
		if (W.conn[0]->state == CONN_READY &&
		    W.conn[1]->state == CONN_READY && finished())
			break;
		if (W.conn_lost && finished())
			break;
		if (cfg->cut_all_ns && !cut_done)
			continue;	/* the script's cut comes first */
		if (heal_at && xs_now - heal_at > HEAL_NS) {
			fail("hang: %d sends, %d receive requests still open %.1f s after the faults healed",
			     W.next_serial, W.nrreqs, (xs_now - heal_at) / 1e9);
			break;
		}
	}
	if (!W.failed && !W.conn_lost)
		for (s = 0; s < W.next_serial; s++)
			if (W.sent_ok[s] && !W.recv_ok[s] && !in_open_recv(s)) {
				fail("message %d: the sender completed it, the receiver never got it",
				     s);
				break;
			}
	if (!W.failed && W.exact && !W.conn_lost)
		for (s = 0; s < cfg->nmsgs; s++)
			if (!W.recv_ok[s]) {
				fail("message %d never received", s);
				break;
			}
	if (!W.failed && !W.conn_lost) {
		heal();
		settle_rails();
	}
	if (!W.failed && !W.conn_lost && cfg->primary)
		sb_check_stats();
	if (!W.failed && W.conn[0] && W.conn[1])
		lc_check_stats();
	/*
	 * The fake NIC delivers each write once unless told otherwise: so
	 * must the sender, and a chunk dropped as a duplicate is one of the
	 * NIC's (a duplicate of an open message is dropped uncounted).
	 */
	for (s = 0; s < 2 && !W.failed; s++) {
		uint64_t dups = W.conn[s] ? W.conn[s]->st.dup_chunks : 0;

		xs_stats.dup_chunks += dups;
		if (dups > xs_stats.nic_dups)
			fail("conn %d: %llu chunks arrived twice, the NIC doubled %llu (sent again with no fence)",
			     s, (unsigned long long)dups,
			     (unsigned long long)xs_stats.nic_dups);
	}
	xs_stats.enomem_fired = W.enomem_fired;
	xs_stats.progress_passes = W.prog_passes[0] + W.prog_passes[1];
	xs_stats.conn_lost = W.conn_lost;
	if (W.conn[0] && W.conn[1]) {
		xs_stats.failovers = W.conn[0]->st.failovers +
				     W.conn[1]->st.failovers;
		xs_stats.staged_sent = W.conn[0]->st.staged;
		xs_stats.staged_used = W.conn[1]->st.staged;
		for (s = 0; s < W.conn[0]->nrails; s++) {
			xs_stats.stalls_asked += W.conn[0]->rails[s].ask_seq;
			xs_stats.stalls_spared +=
				W.conn[0]->rails[s].st.stalls_spared;
		}
	}
out:
	xs_steps_total += steps;
	teardown();
	return W.failed;
}

void xs_config_draw(struct xs_config *cfg, uint64_t seed)
{
	struct xs_rng r = { seed ^ 0x5eed5eed5eedull };

	memset(cfg, 0, sizeof(*cfg));
	cfg->seed = seed;
	cfg->nrails = 1 + (int)xs_below(&r, XS_MAX_RAILS);
	cfg->ib = xs_chance(&r, 1, 3);
	cfg->fallback = xs_chance(&r, 1, 2);
	cfg->rail_depth = 1 + xs_below(&r, 8);
	cfg->nmsgs = 10 + (int)xs_below(&r, 90);
	cfg->max_chunks = 1 + xs_below(&r, MAX_CHUNKS);
	cfg->send_window = 1 + (int)xs_below(&r, SSLOTS);
	cfg->max_group = 1 + (int)xs_below(&r, R2CC_MAX_RECVS);
	cfg->faults = (int)xs_below(&r, 8);
	cfg->enomem = xs_chance(&r, 1, 8);
	cfg->fail_rtr_node = xs_chance(&r, 1, 10) ? (int)xs_below(&r, 2) : -1;
	cfg->fail_rtr_nic = (int)xs_below(&r, (uint32_t)cfg->nrails);
	cfg->fence_part_max = xs_chance(&r, 1, 2) ? 48 + xs_below(&r, 2048) : 0;
	/* Drawn last, so that the draws above stay what they were per seed. */
	cfg->nic_dup = xs_chance(&r, 1, 8);
	/* Half the runs: a NIC window below the rail depth, down to one slot. */
	if (xs_chance(&r, 1, 2))
		cfg->nic_window = CHUNK / 2 + xs_below(&r, CHUNK * 8);
	/*
	 * Most runs: the library's progress thread, 1 to 20 ms; a quarter of
	 * those, applications that call nothing once they have nothing open
	 * (without the thread such a run can hang on an idle peer).
	 */
	if (xs_chance(&r, 3, 4)) {
		cfg->progress_ns = 1000000 + xs_below(&r, 19000000);
		cfg->idle_done = xs_chance(&r, 1, 4);
	}
	/* Half the runs: the stall detector's adaptive bound. */
	cfg->stall_adapt = xs_chance(&r, 1, 2);
	/* Half the runs: staged repair (R2CC_REPAIR=staged). */
	cfg->staged = xs_chance(&r, 1, 2);
	/* Half the runs: a degraded rail drained in steps (R2CC_DRAIN). */
	cfg->drain_graded = xs_chance(&r, 1, 2);
	/* Half the runs: ask the receiver before failing a stalled rail. */
	cfg->stall_ask = xs_chance(&r, 1, 2);
}

/* ------------------------------------------------------------ fuzzing */

/*
 * A world for a fuzz target: a connection brought up (and, with
 * @traffic, some messages under way), then one node frozen: from then on
 * the other node reads only what xs_fuzz_inject() writes as that peer.
 * Returns 0, or -1 if the connection did not come up.
 */
int xs_fuzz_open(const struct xs_config *cfg, int victim, int traffic)
{
	int n;

	if (setup(cfg))
		return -1;
	for (n = 0; n < 200000 && !W.failed; n++) {
		if (W.conn[0]->state == CONN_READY &&
		    W.conn[1]->state == CONN_READY &&
		    (!traffic || W.next_serial >= traffic))
			break;
		step(false);
	}
	if (W.conn[0]->state != CONN_READY || W.conn[1]->state != CONN_READY)
		return -1;
	/* The victim keeps what the peer already said; nothing more comes. */
	xs_pipe_deliver(!victim, SIZE_MAX);
	W.frozen = !victim;
	return 0;
}

/* Bytes from the frozen peer, readable by @victim at once. */
void xs_fuzz_inject(int victim, const void *p, size_t len)
{
	xs_pipe_push(!victim, p, len);
	xs_pipe_deliver(!victim, SIZE_MAX);
}

/* Run @n steps; the victim's connection state after them. */
int xs_fuzz_steps(int victim, int n)
{
	while (n-- > 0 && !W.failed)
		step(false);
	return W.conn[victim]->state;
}

/* Tear down; 1 if the library broke a rule of the fake NIC's. */
int xs_fuzz_close(void)
{
	int bad = W.failed;

	teardown();
	return bad;
}

/* ------------------------------------------------------------ cost */

static double real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * What the context lock costs r2cc_test(): ns per call of r2cc_test() on
 * a receive that does not complete (a progress pass over 2 rails), and ns
 * per uncontended lock and unlock of the same mutex, in the same run.
 */
double xs_bench_published_ns, xs_bench_rewrite_ns;

int xs_bench_test(double *test_ns, double *lock_ns)
{
	struct xs_config cfg;
	struct r2cc_req *q;
	void *b;
	size_t len = SLOT;
	uint32_t tag = 0;
	double t;
	int i, done, n = 1000000;

	xs_config_draw(&cfg, 1);
	cfg.nrails = 2;
	cfg.faults = 0;
	cfg.enomem = false;
	cfg.fail_rtr_node = -1;
	if (xs_fuzz_open(&cfg, 1, 0))
		return -1;
	b = W.rbuf;
	if (r2cc_irecv(W.conn[1], 1, &b, &len, &tag, &W.rmr, &q))
		return -1;
	t = real_ns();
	for (i = 0; i < n; i++)
		r2cc_test(q, &done, NULL);
	*test_ns = (real_ns() - t) / n;
	t = real_ns();
	for (i = 0; i < n; i++) {
		ctx_lock(W.ctx[1]);
		ctx_unlock(W.ctx[1]);
	}
	*lock_ns = (real_ns() - t) / n;
	/*
	 * The stats file (publish.c): r2cc_test() with it, and one rewrite
	 * of it, forced due at every call (in the library it is due every
	 * 100 ms of real time, here the clock is the simulator's).
	 */
	if (getenv("R2CC_STATS_DIR") && *getenv("R2CC_STATS_DIR")) {
		publish_open(W.ctx[1]);
		if (!W.ctx[1]->job) {
			xs_fuzz_close();
			return -1;
		}
		t = real_ns();
		for (i = 0; i < n; i++)
			r2cc_test(q, &done, NULL);
		xs_bench_published_ns = (real_ns() - t) / n;
		t = real_ns();
		for (i = 0; i < n / 10; i++) {
			W.ctx[1]->job_next_ns = 0;
			publish_due(W.ctx[1]);
		}
		xs_bench_rewrite_ns = (real_ns() - t) / (n / 10);
		publish_close(W.ctx[1]);
	}
	xs_fuzz_close();
	return 0;
}
