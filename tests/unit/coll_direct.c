// SPDX-License-Identifier: GPL-2.0-only
/*
 * The optimal allreduce (lib/coll/direct.c) on the host.
 *
 * Its shares: with one rank at beta of the others' bandwidth the model's
 * time is the R2CCL paper's T_LB = max(1 / beta, 2 (n - 1) / (n - 1 +
 * beta)) for every beta and n; on random views it is never slower than
 * the ring or the weighted ring, and no split on a grid beats it; auto
 * on the mesh takes it exactly where the model has it under the margin.
 *
 * Its engine: every rank's real coll_direct_step() runs against a
 * simulated network (each ordered pair's messages matched in order, as
 * the transport does; deliveries and completions in a random order
 * chosen by a seed) for 2 to 7 ranks, random views, datatypes, ops,
 * counts, slice sizes and windows, in place or not.  Every run must end
 * (no wait in a cycle), every rank's result must be the reference's bits
 * (rank 0's data OP rank 1's OP ..., as the engine promises), nothing may
 * be left posted, a send's slot may not change before it is delivered,
 * and no receive may be posted over a buffer still in use.  A failing
 * seed is printed; COLL_DIRECT_SEED=N runs that one alone.  Half the
 * runs refuse receives beyond 1 to 3 open per connection (-EAGAIN, as
 * the transport does beyond its limit), which the engine posts later.  Then hostile
 * peers: a rank with another count, or slices larger than its receiver's,
 * must fail with -EPROTO, not hang or overrun.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/coll/coll.h"
#include "tap.h"
#include "xorshift.h"

#define MAXN	8

static uint64_t rs;

static uint64_t rnd(void)
{
	return xorshift64(&rs);
}

/* ------------------------------------------------------------ shares */

static double dmax(double a, double b)
{
	return a > b ? a : b;
}

static double dmin(double a, double b)
{
	return a < b ? a : b;
}

static double dabs(double a)
{
	return a < 0 ? -a : a;
}

static void test_bound(void)
{
	double bw[64], p[64], worst = 0.0;
	int n, b, bad = 0;

	for (n = 3; n <= 64; n++)
		for (b = 1; b <= 100; b++) {
			double beta = b / 100.0, lb, t;
			int k;

			for (k = 0; k < n; k++)
				bw[k] = 1.0;
			bw[n / 2] = beta;
			t = coll_direct_weights(n, bw, p);
			lb = dmax(1.0 / beta, 2.0 * (n - 1) / (n - 1 + beta));
			worst = dmax(worst, t / lb);
			bad += dabs(t - lb) > 1e-9 * lb;
		}
	tap_ok(!bad, "one rank at beta = 0.01 .. 1 of the others, 3 to 64 ranks: the shares' time is T_LB = max(1/beta, 2(n-1)/(n-1+beta)) (%d of 6200 differ; worst ratio %.12f)",
	       bad, worst);
}

static void test_random_views(void)
{
	double bw[64], p[64], c[64], m[64], sum;
	int i, bad = 0, badsum = 0, badw = 0;

	for (i = 0; i < 2000; i++) {
		int n = 2 + (int)(rnd() % 63), k;
		double t, ring, lo = 1.0;

		for (k = 0; k < n; k++) {
			bw[k] = rnd() % 3 ? 1.0 : (1 + rnd() % 64) / 64.0;
			lo = dmin(lo, bw[k]);
		}
		t = coll_direct_weights(n, bw, p);
		for (k = 0, sum = 0.0; k < n; k++) {
			sum += p[k];
			badsum += p[k] < 0.0;
		}
		badsum += dabs(sum - 1.0) > 1e-9;
		ring = 2.0 * (n - 1) / n / lo;
		bad += t > ring * (1 + 1e-9);
		badw += t > coll_ring_weights(n, bw, c, m) * (1 + 1e-9);
	}
	tap_ok(!badsum, "2000 random views of 2 to 64 ranks: the shares are >= 0 and sum to 1 (%d bad)", badsum);
	tap_ok(!bad, "... and the time is never above the ring's 2(n-1)/n / (slowest rank) (%d above)", bad);
	tap_ok(!badw, "... nor above the weighted ring's (%d above)", badw);
}

/* No split of 1 over 4 ranks on a grid of 1/40 beats the shares. */
static void test_grid(void)
{
	double bw[4], p[4], x[4];
	int i, bad = 0;

	for (i = 0; i < 200; i++) {
		int a, b, c, k;
		double t, best = 1e30;

		for (k = 0; k < 4; k++)
			bw[k] = (1 + rnd() % 16) / 16.0;
		t = coll_direct_weights(4, bw, p);
		for (a = 0; a <= 40; a++)
			for (b = 0; a + b <= 40; b++)
				for (c = 0; a + b + c <= 40; c++) {
					x[0] = a / 40.0;
					x[1] = b / 40.0;
					x[2] = c / 40.0;
					x[3] = (40 - a - b - c) / 40.0;
					best = dmin(best, coll_direct_time(4, bw, x));
				}
		bad += t > best * (1 + 1e-9);
	}
	tap_ok(!bad, "200 random 4-rank views: no split on a 1/40 grid is faster than the shares (%d are)", bad);
}

static void test_quant(void)
{
	uint32_t mbps[MAXN], w[MAXN], sum;
	double tmp[2 * MAXN];
	bool uneven;
	int k;

	for (k = 0; k < 4; k++)
		mbps[k] = 200;
	uneven = coll_direct_wquant(4, mbps, w, tmp);
	tap_ok(!uneven && w[0] == COLL_WEIGHT_ONE / 4 && w[3] == COLL_WEIGHT_ONE / 4,
	       "a healthy view: equal shares, and says so");
	mbps[1] = 100;
	uneven = coll_direct_wquant(4, mbps, w, tmp);
	for (k = 0, sum = 0; k < 4; k++)
		sum += w[k];
	tap_ok(uneven && w[1] == 0 && sum == COLL_WEIGHT_ONE,
	       "one rank of four at 1/2: it reduces nothing (%u), the shares sum to the whole (%u)",
	       w[1], sum);
	mbps[1] = 0;
	mbps[2] = 0;
	uneven = coll_direct_wquant(4, mbps, w, tmp);
	for (k = 0, sum = 0; k < 4; k++)
		sum += w[k];
	tap_ok(uneven && !w[1] && !w[2] && sum == COLL_WEIGHT_ONE,
	       "two ranks with no NIC left: shares 0 and 0, the rest to the others (%u %u %u %u)",
	       w[0], w[1], w[2], w[3]);
}

/*
 * auto on the mesh (coll_auto_direct): the optimal allreduce exactly where
 * the model has it at most COLL_DIRECT_MARGIN of the ring's time, for 3 to
 * COLL_AUTO_DIRECT_MAX ranks and an uneven view.
 */
static void test_auto(void)
{
	uint32_t mbps[COLL_AUTO_DIRECT_MAX + 1];
	double tmp[3 * (COLL_AUTO_DIRECT_MAX + 1)], bw[MAXN], p[MAXN], eq[MAXN];
	int k, n, i, wrong = 0, picked = 0;
	bool fixed;

	for (k = 0; k <= COLL_AUTO_DIRECT_MAX; k++)
		mbps[k] = 200;
	fixed = !coll_auto_direct(4, mbps, tmp);
	mbps[1] = 100;
	fixed = fixed && coll_auto_direct(4, mbps, tmp) &&
		!coll_auto_direct(2, mbps, tmp) &&
		!coll_auto_direct(COLL_AUTO_DIRECT_MAX + 1, mbps, tmp) &&
		coll_auto_direct(COLL_AUTO_DIRECT_MAX, mbps, tmp);
	mbps[1] = 180;
	fixed = fixed && !coll_auto_direct(4, mbps, tmp);
	mbps[1] = 0;
	fixed = fixed && coll_auto_direct(4, mbps, tmp);
	tap_ok(fixed, "auto on the mesh: the ring when healthy, at 2 ranks, past %d ranks and at 0.9; the optimal allreduce at 1/2 and with no NIC left",
	       COLL_AUTO_DIRECT_MAX);
	for (i = 0; i < 2000; i++) {
		double top = 0.0, td, tr;
		bool even = true;

		n = 3 + (int)(rnd() % (MAXN - 2));
		for (k = 0; k < n; k++) {
			mbps[k] = rnd() % 3 ? 400 : (uint32_t)(rnd() % 401);
			top = dmax(top, mbps[k]);
			even &= mbps[k] == mbps[0];
		}
		for (k = 0; k < n && top > 0; k++)
			bw[k] = dmax(mbps[k], top / 64.0) / top;
		for (k = 0; k < n; k++)
			eq[k] = 1.0 / n;
		td = coll_direct_weights(n, bw, p);
		tr = coll_ring_time(n, bw, eq);
		fixed = !even && top > 0 && td <= COLL_DIRECT_MARGIN * tr;
		picked += fixed;
		wrong += coll_auto_direct(n, mbps, tmp) != fixed;
	}
	tap_ok(!wrong && picked > 100 && picked < 1900,
	       "2000 random views of 3 to %d ranks: the optimal allreduce exactly where its model is at most %.2f of the ring's (%d picked, %d wrong)",
	       MAXN, COLL_DIRECT_MARGIN, picked, wrong);
}

/* ------------------------------------------------------- the network */

struct freq {
	bool send, done, seen;
	int from, to, delay, err;
	char *buf;
	size_t len, got;
	char *copy;			/* a send's bytes when posted */
	struct freq *next;
};

static struct freq *sq[MAXN][MAXN], *rq[MAXN][MAXN];	/* [from][to] */
static struct freq *live[4096];
static int nlive, hazards;
static char hazard_why[160];

static void hazard(const char *why)
{
	if (!hazards++)
		snprintf(hazard_why, sizeof(hazard_why), "%s", why);
}

static void push(struct freq **head, struct freq *f)
{
	while (*head)
		head = &(*head)->next;
	*head = f;
}

/* A new request on a buffer no request still open uses. */
static struct freq *fnew(bool send, int from, int to, void *buf, size_t len)
{
	struct freq *f = calloc(1, sizeof(*f));
	int i;

	for (i = 0; i < nlive; i++) {
		struct freq *o = live[i];

		if ((char *)buf < o->buf + o->len && o->buf < (char *)buf + len &&
		    (!send || !o->send))
			hazard("a buffer posted while a request on it is open");
	}
	f->send = send;
	f->from = from;
	f->to = to;
	f->buf = buf;
	f->len = len;
	f->delay = (int)(rnd() % 4);
	if (send) {
		f->copy = malloc(len ? len : 1);
		memcpy(f->copy, buf, len);
	}
	if (nlive < 4096)
		live[nlive++] = f;
	return f;
}

static int fake_send(struct r2cc_comm *c, int peer, void *buf, size_t len,
		     struct r2cc_req **req)
{
	struct freq *f = fnew(true, c->rank, peer, buf, len);

	push(&sq[c->rank][peer], f);
	*req = (struct r2cc_req *)f;
	return 0;
}

/*
 * The transport takes a bounded number of open receives per connection
 * (-EAGAIN beyond): so does this one, at a limit each run draws.
 */
static int recv_limit;
static long eagains;

static int fake_recv(struct r2cc_comm *c, int peer, void *buf, size_t cap,
		     struct r2cc_req **req)
{
	struct freq *f, *o;
	int k = 0;

	for (o = rq[peer][c->rank]; o; o = o->next)
		k++;
	if (recv_limit && k >= recv_limit) {
		eagains++;
		return -EAGAIN;
	}
	f = fnew(false, peer, c->rank, buf, cap);

	push(&rq[peer][c->rank], f);
	*req = (struct r2cc_req *)f;
	return 0;
}

static void fdrop(struct freq *f)
{
	int i;

	for (i = 0; i < nlive; i++)
		if (live[i] == f) {
			live[i] = live[--nlive];
			break;
		}
	free(f->copy);
	free(f);
}

static int fake_test(struct r2cc_req *req, int *done, size_t *got)
{
	struct freq *f = (struct freq *)req;
	int err;

	*done = 0;
	if (!f->done || f->delay-- > 0)
		return 0;
	*done = 1;
	if (got)
		*got = f->got;
	err = f->err;
	fdrop(f);
	return err;
}

static const struct coll_io fake_io = {
	.send = fake_send,
	.recv = fake_recv,
	.test = fake_test,
};

/* Deliver the oldest message of one random pair that has one; 0: none. */
static int deliver(int n)
{
	int pairs[MAXN * MAXN], np = 0, k;
	struct freq *s, *r;

	for (k = 0; k < n * n; k++)
		if (sq[k / n][k % n] && rq[k / n][k % n])
			pairs[np++] = k;
	if (!np)
		return 0;
	k = pairs[rnd() % (unsigned int)np];
	s = sq[k / n][k % n];
	r = rq[k / n][k % n];
	sq[k / n][k % n] = s->next;
	rq[k / n][k % n] = r->next;
	if (memcmp(s->copy, s->buf, s->len))
		hazard("a send's slot changed before it was delivered");
	if (s->len > r->len) {
		r->err = -EMSGSIZE;
	} else {
		memcpy(r->buf, s->buf, s->len);
		r->got = s->len;
	}
	s->done = r->done = true;
	return 1;
}

/* ------------------------------------------------------------ a run */

struct run {
	int n, dtype, op, inplace;
	size_t count, slice;
	uint32_t depth;
	uint32_t view[MAXN];
	size_t bad_count_rank;		/* hostile: this rank's count + 1 */
	int big_slice_rank;		/* hostile: this rank's slices larger */
};

static const enum r2cc_dtype dtypes[] = { R2CC_INT8, R2CC_UINT8, R2CC_INT32,
	R2CC_UINT32, R2CC_INT64, R2CC_UINT64, R2CC_FLOAT16, R2CC_BFLOAT16,
	R2CC_FLOAT32, R2CC_FLOAT64 };

/* Random bytes that are no NaN in any float type (their bits may differ). */
static void fill(char *p, size_t count, size_t es, int dt)
{
	size_t i;

	for (i = 0; i < count * es; i++)
		p[i] = (char)(rnd() & 0x3f);
	(void)dt;
}

/*
 * Run @r; 0 when every rank finished with the reference's bits, else a
 * line in @why.  @errs gets each rank's error (hostile runs).
 */
static int run_one(const struct run *r, char *why, size_t wlen, int *errs)
{
	struct r2cc_comm c[MAXN];
	struct r2cc_coll q[MAXN];
	char *src[MAXN], *dst[MAXN], *ref;
	size_t es = coll_dtype_size(dtypes[r->dtype]), bytes = r->count * es;
	int k, fin = 0, idle = 0, ret = 0, st[MAXN] = { 0 };
	long steps = 0;

	memset(c, 0, sizeof(c));
	memset(q, 0, sizeof(q));
	hazards = 0;
	ref = malloc(bytes + 1);
	for (k = 0; k < r->n; k++) {
		size_t cnt = r->count + (r->bad_count_rank == (size_t)k + 1);

		src[k] = malloc(cnt * es + 1);
		fill(src[k], cnt, es, r->dtype);
		dst[k] = r->inplace ? src[k] : malloc(cnt * es + 1);
		c[k].rank = k;
		c[k].n = r->n;
		c[k].slice = (uint32_t)(r->slice + (r->big_slice_rank == k + 1) * es);
		c[k].depth = r->depth;
		c[k].io = &fake_io;
		c[k].view = (uint32_t *)r->view;
		c[k].view_valid = true;
		c[k].view_seq = 7;
		if (coll_direct_stage(&c[k]))
			return snprintf(why, wlen, "staging failed"), -1;
		q[k].comm = &c[k];
		q[k].kind = COLL_ALLREDUCE;
		q[k].dtype = dtypes[r->dtype];
		q[k].op = (enum r2cc_redop)r->op;
		q[k].src = src[k];
		q[k].dst = dst[k];
		q[k].count = cnt;
		q[k].esize = es;
		q[k].seq = 9;
		q[k].gather = calloc((size_t)r->n, sizeof(uint32_t));
		q[k].have = calloc((size_t)r->n, 1);
		q[k].gather[k] = r->view[k];
		q[k].have[k] = 1;
	}
	/* the reference, before any in-place run overwrites the inputs */
	memcpy(ref, src[0], bytes);
	for (k = 1; k < r->n; k++)
		coll_reduce(ref, src[k], r->count, dtypes[r->dtype],
			    (enum r2cc_redop)r->op);
	coll_finish(ref, r->count, dtypes[r->dtype], (enum r2cc_redop)r->op,
		    r->n);
	for (k = 0; k < r->n; k++)
		if (coll_direct_start(&q[k]))
			return snprintf(why, wlen, "start failed"), -1;
	while (fin < r->n && idle < 2000 && steps < 50000000) {
		bool any = false;

		if (rnd() % 3) {
			any = deliver(r->n);
		} else {
			k = (int)(rnd() % (unsigned int)r->n);
			if (!st[k]) {
				int rr = coll_direct_step(&q[k]);

				if (rr) {
					st[k] = rr;
					errs[k] = rr < 0 ? rr : 0;
					fin++;
					any = true;
				}
			}
		}
		idle = any ? 0 : idle + 1;
		steps++;
		/* a failed rank stops its peers' progress: enough seen */
		for (k = 0; k < r->n; k++)
			if (st[k] < 0)
				goto out;
	}
out:
	if (fin < r->n && !(r->bad_count_rank || r->big_slice_rank)) {
		snprintf(why, wlen, "%d of %d ranks never finished", r->n - fin, r->n);
		ret = -1;
	}
	for (k = 0; k < r->n && !ret && !r->bad_count_rank &&
		    !r->big_slice_rank; k++) {
		if (st[k] != 1) {
			snprintf(why, wlen, "rank %d: %d", k, st[k]);
			ret = -1;
		} else if (memcmp(dst[k], ref, bytes)) {
			snprintf(why, wlen, "rank %d's result is not the reference's bits", k);
			ret = -1;
		} else if (q[k].dred != coll_nslices(q[k].doff[k + 1] - q[k].doff[k],
						     q[k].dcap)) {
			snprintf(why, wlen, "rank %d reduced %zu slices", k, q[k].dred);
			ret = -1;
		}
		if (!ret && memcmp(q[k].gather, r->view, (size_t)r->n * 4)) {
			snprintf(why, wlen, "rank %d did not gather every view value", k);
			ret = -1;
		}
	}
	if (!ret && hazards) {
		snprintf(why, wlen, "%s", hazard_why);
		ret = -1;
	}
	if (!ret && nlive && !(r->bad_count_rank || r->big_slice_rank)) {
		snprintf(why, wlen, "%d requests left open", nlive);
		ret = -1;
	}
	/* tear the network down */
	for (k = 0; k < MAXN * MAXN; k++) {
		sq[k / MAXN][k % MAXN] = NULL;
		rq[k / MAXN][k % MAXN] = NULL;
	}
	while (nlive)
		fdrop(live[0]);
	for (k = 0; k < r->n; k++) {
		coll_direct_unstage(&c[k]);
		free(q[k].dl);
		free(q[k].doff);
		free(q[k].gather);
		free(q[k].have);
		if (!r->inplace)
			free(dst[k]);
		free(src[k]);
	}
	free(ref);
	return ret;
}

static void random_run(struct run *r, uint64_t seed)
{
	int k, kind;

	rs = seed * 0x9e3779b97f4a7c15ull + 1;
	rnd();
	memset(r, 0, sizeof(*r));
	r->n = 2 + (int)(rnd() % 6);
	r->dtype = (int)(rnd() % 10);
	r->op = (int)(rnd() % 5);
	r->inplace = (int)(rnd() % 2);
	r->count = rnd() % 4 ? 1 + rnd() % 3000 : 1 + rnd() % 5;
	r->slice = (1 + rnd() % 32) * 8;
	r->depth = 1 + (uint32_t)(rnd() % 4);
	recv_limit = rnd() % 2 ? 1 + (int)(rnd() % 3) : 0;
	kind = (int)(rnd() % 4);
	for (k = 0; k < r->n; k++)
		r->view[k] = 400;
	if (kind == 1)
		r->view[rnd() % (unsigned int)r->n] = 100 + 100 * (uint32_t)(rnd() % 3);
	for (k = 0; kind >= 2 && k < r->n; k++)
		if (rnd() % 2)
			r->view[k] = kind == 3 && rnd() % 2 ? 0 :
				     (uint32_t)(rnd() % 400);
}

static void test_engine(void)
{
	const char *one = getenv("COLL_DIRECT_SEED");
	uint64_t seed, first = one ? strtoull(one, NULL, 0) : 1;
	uint64_t last = one ? first : 3000;
	int failed = 0, errs[MAXN];
	char why[512] = "";
	struct run r;

	for (seed = first; seed <= last; seed++) {
		char w[200];

		random_run(&r, seed);
		if (run_one(&r, w, sizeof(w), errs)) {
			if (!failed++)
				snprintf(why, sizeof(why),
					 "seed %llu (n %d, dtype %d, op %d, count %zu, slice %zu, depth %u, in place %d): %s",
					 (unsigned long long)seed, r.n, r.dtype,
					 r.op, r.count, r.slice, r.depth,
					 r.inplace, w);
		}
	}
	tap_ok(!failed && (one || eagains > 0),
	       "seeds %llu..%llu over a simulated network: every rank finishes with the reference's bits, nothing left open, no slot reused early, receives refused with -EAGAIN posted again (%ld times) (%d failed%s%s)",
	       (unsigned long long)first, (unsigned long long)last, eagains,
	       failed, failed ? "; first: " : "", why);
}

/* Hostile peers: caught, not hung, not overrun. */
static void test_hostile(void)
{
	int errs[MAXN], k, seen = 0, other = 0;
	char w[200];
	struct run r;

	memset(&r, 0, sizeof(r));
	recv_limit = 0;
	r.n = 4;
	r.dtype = 2;
	r.count = 1000;
	r.slice = 64;
	r.depth = 2;
	for (k = 0; k < 4; k++)
		r.view[k] = 400;
	r.bad_count_rank = 3;		/* rank 2 calls with 1001 */
	memset(errs, 0, sizeof(errs));
	run_one(&r, w, sizeof(w), errs);
	for (k = 0; k < 4; k++) {
		seen += errs[k] == -EPROTO;
		other += errs[k] && errs[k] != -EPROTO;
	}
	tap_ok(seen >= 1 && !other, "a rank that calls with another count: -EPROTO where it is seen (%d ranks), no other error (%d)",
	       seen, other);
	r.bad_count_rank = 0;
	r.big_slice_rank = 2;		/* rank 1 cuts larger slices */
	memset(errs, 0, sizeof(errs));
	run_one(&r, w, sizeof(w), errs);
	for (k = 0, seen = other = 0; k < 4; k++) {
		seen += errs[k] == -EPROTO;
		other += errs[k] && errs[k] != -EPROTO;
	}
	tap_ok(seen >= 1 && !other && !hazards, "a rank whose slices are larger than its receivers' slots: -EPROTO (%d ranks), nothing written past a slot",
	       seen);
}

int main(void)
{
	tap_plan(13);
	rs = 88172645463325252ull;
	test_bound();
	test_random_views();
	test_grid();
	test_quant();
	test_auto();
	test_engine();
	test_hostile();
	return tap_done();
}
