// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The latency-bound algorithms, for small messages on a communicator with
 * the collectives' mesh (R2CC_COMM_MESH): allreduce by recursive
 * doubling, broadcast and reduce by binomial trees (coll_tree_plan).
 *
 * Recursive doubling: with p the largest power of two not above n and
 * r = n - p, ranks 0, 2, .. 2r - 2 first fold their data into the rank
 * above them and sit out; the p ranks left (numbered v = 0..p-1)
 * exchange partial results with the rank whose v differs in bit k, for
 * k = 0..log2(p) - 1, and combine them; then the folded ranks are sent
 * the result.  That is log2(p) steps (two more when n is not a power of
 * two) of the whole message each, against the ring's 2 (n - 1) steps of
 * 1/n of it: fewer message latencies, more bytes (Thakur, Rabenseifner
 * and Gropp, "Optimization of Collective Communication Operations in
 * MPICH", 2005).
 *
 * Every combine is "the lower rank's partial OP the higher rank's", so
 * both ends of an exchange compute the same bits, and every rank ends
 * with the same result (as the ring's are, though the two algorithms
 * may round differently).  One step runs at a time, through the
 * communicator's staging slots: the partial result in local[0], what
 * comes in into recv[0][0]; the queue runs one collective at a time, so
 * they are free.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "coll/coll.h"
#include "base/base.h"

int coll_rd_plan(int rank, int n, struct coll_rd_step *steps)
{
	int p = 1, r, v, k, lg = 0, ns = 0;

	while (p * 2 <= n)
		p *= 2, lg++;
	r = n - p;
	if (rank < 2 * r && !(rank & 1)) {
		steps[ns++] = (struct coll_rd_step){ .peer = (int16_t)(rank + 1),
			.act = RD_SEND, .round = 0 };
		steps[ns++] = (struct coll_rd_step){ .peer = (int16_t)(rank + 1),
			.act = RD_TAKE, .round = (uint8_t)(lg + 1) };
		return ns;
	}
	if (rank < 2 * r)
		steps[ns++] = (struct coll_rd_step){ .peer = (int16_t)(rank - 1),
			.act = RD_REDUCE, .round = 0 };
	v = rank < 2 * r ? rank / 2 : rank - r;
	for (k = 0; k < lg; k++) {
		int w = v ^ (1 << k);

		steps[ns++] = (struct coll_rd_step){
			.peer = (int16_t)(w < r ? 2 * w + 1 : w + r),
			.act = RD_XCHG, .round = (uint8_t)(k + 1),
			.last = k == lg - 1 };
	}
	if (rank < 2 * r)
		steps[ns++] = (struct coll_rd_step){ .peer = (int16_t)(rank - 1),
			.act = RD_RESULT, .round = (uint8_t)(lg + 1) };
	return ns;
}

/*
 * Binomial trees for broadcast and reduce of one slice: ceil(log2 n)
 * steps where the chain takes n - 1.  With v = rank - root (mod n), a
 * broadcast rank receives from v minus its lowest set bit, then sends to
 * v + 2^k for each 2^k below that bit, largest first; a reduce runs the
 * same tree backwards, each rank combining what its children send, its
 * own partial first, before it sends to its parent.  A message between
 * v and v + 2^k is round k at both ends.
 */
int coll_tree_plan(enum coll_kind kind, int rank, int n, int root,
		   struct coll_rd_step *steps)
{
	int v = (rank - root + n) % n, mask = 1, k = 0, ns = 0, top;

	while (mask < n && !(v & mask))
		mask <<= 1, k++;
	top = k;		/* v's lowest set bit; n's width for the root */
	if (kind == COLL_BROADCAST) {
		if (v)
			steps[ns++] = (struct coll_rd_step){
				.peer = (int16_t)((v - mask + root) % n),
				.act = RD_TAKE, .round = (uint8_t)k };
		for (k = top - 1; k >= 0; k--)
			if (v + (1 << k) < n)
				steps[ns++] = (struct coll_rd_step){
					.peer = (int16_t)((v + (1 << k) + root) % n),
					.act = RD_RESULT, .round = (uint8_t)k };
		return ns;
	}
	for (k = 0; k < top; k++)
		if (v + (1 << k) < n)
			steps[ns++] = (struct coll_rd_step){
				.peer = (int16_t)((v + (1 << k) + root) % n),
				.act = RD_REDUCE, .round = (uint8_t)k };
	if (v)
		steps[ns++] = (struct coll_rd_step){
			.peer = (int16_t)((v - mask + root) % n),
			.act = RD_SEND, .round = (uint8_t)top };
	else if (ns)
		steps[ns - 1].last = true;
	return ns;
}

/*
 * Time of each, per the usual alpha-beta model: the ring moves 2 (n - 1)
 * messages of D/n in sequence, recursive doubling s messages of D.  It
 * wins below D = alpha B (2 (n - 1) - s) / (s - 2 (n - 1) / n); at n = 2
 * it moves the same bytes in fewer messages and always wins.
 */
size_t coll_rd_crossover(int n, double alpha_us, double bytes_per_us,
			 size_t cap)
{
	double ring_msgs = 2.0 * (n - 1), ring_bytes = ring_msgs / n, d;
	int p = 1, s = 0;

	if (n < 2 || alpha_us < 0 || bytes_per_us <= 0)
		return 0;
	while (p * 2 <= n)
		p *= 2, s++;
	if (p != n)
		s += 2;
	if (s >= ring_msgs)
		return 0;
	if (s <= ring_bytes)
		return cap;
	d = alpha_us * bytes_per_us * (ring_msgs - s) / (s - ring_bytes);
	return d >= (double)cap ? cap : (size_t)d;
}

static char *acc(const struct r2cc_coll *q)
{
	return q->comm->local[0].buf + sizeof(struct coll_hdr);
}

/* Post the step's send and receive. */
static int rd_post(struct r2cc_coll *q, const struct coll_rd_step *st)
{
	struct r2cc_comm *c = q->comm;
	struct coll_slot *out = &c->local[0], *in = &c->recv[0][0];
	size_t bytes = q->count * q->esize;
	int ret;

	if (st->act != RD_SEND && st->act != RD_RESULT) {
		size_t len = sizeof(struct coll_hdr) + c->slice;
		void *buf = in->buf;
		uint32_t tag = 0;

		ret = r2cc_irecv(c->cfrom[st->peer], 1, &buf, &len, &tag,
				 &c->mr, &in->req);
		if (ret)
			return ret;
		in->state = SLOT_RECV;
	}
	if (st->act == RD_SEND || st->act == RD_XCHG || st->act == RD_RESULT) {
		coll_hdr_fill(q, (struct coll_hdr *)out->buf, st->round, 0, -1);
		ret = r2cc_isend(c->cto[st->peer], c->mr, out->buf,
				 sizeof(struct coll_hdr) + bytes, 0, &out->req);
		if (ret)
			return ret;
		out->state = SLOT_SEND;
	}
	return 0;
}

/* Test one slot's request: 1 done (or none), 0 not yet, -errno. */
static int rd_test(struct coll_slot *s, size_t *got)
{
	int done = 0, ret;

	if (!s->req)
		return 1;
	ret = r2cc_test(s->req, &done, got);
	if (ret || done)
		s->req = NULL;
	if (ret == -EMSGSIZE)
		ret = -EPROTO;
	return ret ? ret : done;
}

/* Both ends of the step are done: take what came in. */
static int rd_apply(struct r2cc_coll *q, const struct coll_rd_step *st,
		    size_t got)
{
	struct r2cc_comm *c = q->comm;
	struct coll_slot *in = &c->recv[0][0];
	const struct coll_hdr *h = (const struct coll_hdr *)in->buf;
	char *data = in->buf + sizeof(struct coll_hdr);
	size_t bytes = q->count * q->esize;
	const char *why;

	c->local[0].state = SLOT_FREE;
	if (in->state != SLOT_RECV)
		return 0;
	in->state = SLOT_FREE;
	why = coll_hdr_why(q, h, got);
	if (!why && (le32toh(h->chunk) != st->round ||
		     got != sizeof(*h) + bytes))
		why = "out of step";
	if (why)
		return coll_hdr_mismatch(q, h, st->peer, why);
	if (st->act == RD_TAKE) {
		memcpy(acc(q), data, bytes);
		return 0;
	}
	/* lower OP higher, at both ends alike */
	if (st->peer < c->rank) {
		coll_reduce(data, acc(q), q->count, q->dtype, q->op);
		memcpy(acc(q), data, bytes);
	} else {
		coll_reduce(acc(q), data, q->count, q->dtype, q->op);
	}
	if (st->last)
		coll_finish(acc(q), q->count, q->dtype, q->op, c->n);
	return 0;
}

static int rd_step(struct r2cc_coll *q)
{
	struct r2cc_comm *c = q->comm;
	int ret;

	while (q->rd_at < q->nsteps) {
		const struct coll_rd_step *st = &q->rd[q->rd_at];

		if (!q->rd_posted) {
			/* a broadcast's input is the root's alone */
			if (!q->rd_at && (q->kind != COLL_BROADCAST ||
					  c->rank == q->root))
				memcpy(acc(q), q->src, q->count * q->esize);
			ret = rd_post(q, st);
			if (ret)
				return ret;
			q->rd_posted = true;
		}
		ret = rd_test(&c->recv[0][0], &q->rd_got);
		if (ret <= 0)
			return ret;
		ret = rd_test(&c->local[0], NULL);
		if (ret <= 0)
			return ret;
		ret = rd_apply(q, st, q->rd_got);
		if (ret)
			return ret;
		q->rd_at++;
		q->rd_posted = false;
	}
	/* a reduce's result is the root's alone */
	if (q->kind != COLL_REDUCE || c->rank == q->root)
		memcpy(q->dst, acc(q), q->count * q->esize);
	return 1;
}

/* Its program is fixed when it is issued (run.c): nothing to do at start. */
static int rd_start(struct r2cc_coll *q)
{
	(void)q;
	return 0;
}

const struct coll_algo_ops coll_rd_ops = {
	.name = "recursive doubling",
	.start = rd_start,
	.step = rd_step,
};
