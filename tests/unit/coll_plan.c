// SPDX-License-Identifier: GPL-2.0-only
/*
 * The collectives' arithmetic and schedules, on the host: float16 and
 * bfloat16 conversions against the compiler's, every dtype x op against
 * a plain loop, and every rank's program (coll_plan) run over a simulated
 * ring for 1..9 ranks, every kind, root and awkward count: the messages
 * each link carries must be the ones its receiver expects, in order, and
 * every result must equal a reference computed here, bit for bit, on
 * every rank.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../lib/coll/coll.h"
#include "tap.h"
#include "xorshift.h"

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	return xorshift64(&rnd_state);
}

static void test_half(void)
{
	unsigned int bad = 0, badrt = 0, i;
	uint32_t bits;
	float f;

	for (i = 0; i < 65536; i++) {
		_Float16 h;
		uint16_t u = (uint16_t)i, back;

		memcpy(&h, &u, 2);
		if ((u & 0x7c00) == 0x7c00 && (u & 0x3ff))
			continue;	/* NaNs: checked below */
		if (coll_half_to_float(u) != (float)h)
			bad++;
		back = coll_float_to_half(coll_half_to_float(u));
		if (back != u)
			badrt++;
	}
	tap_ok(!bad, "float16 -> float: all 63488 non-NaN values as the compiler converts (%u differ)", bad);
	tap_ok(!badrt, "float16 -> float -> float16 gives every value back (%u differ)", badrt);
	bad = 0;
	for (i = 0; i < 2000000; i++) {
		_Float16 h;
		uint16_t want;

		bits = (uint32_t)rnd();
		/* mostly the half range, with ties and subnormals */
		if (i & 1)
			bits = (bits & 0x8001ffffu) | ((uint32_t)(100 + i % 60) << 23);
		memcpy(&f, &bits, 4);
		if (f != f)
			continue;
		h = (_Float16)f;
		memcpy(&want, &h, 2);
		if (coll_float_to_half(f) != want)
			bad++;
	}
	tap_ok(!bad, "float -> float16 rounds to nearest-even as the compiler does (2 M values, %u differ)", bad);
	tap_ok((coll_float_to_half(NAN) & 0x7c00) == 0x7c00 &&
	       (coll_float_to_half(NAN) & 0x3ff) &&
	       isnan(coll_half_to_float(0x7e00)), "NaN stays NaN both ways");
	tap_ok(coll_float_to_bf16(1.0f) == 0x3f80 &&
	       coll_float_to_bf16(1.00390625f) == 0x3f80 &&	/* tie, even */
	       coll_float_to_bf16(1.01171875f) == 0x3f82 &&	/* tie, up */
	       coll_float_to_bf16(-2.0f) == 0xc000 &&
	       coll_bf16_to_float(0x3f81) == 1.0078125f &&
	       isnan(coll_bf16_to_float(coll_float_to_bf16(NAN))) &&
	       coll_float_to_bf16(INFINITY) == 0x7f80,
	       "bfloat16: ties to even, sign, infinity and NaN");
}

#define N 97

static void test_reduce(void)
{
	static const char *const dn[] = { "int8", "uint8", "int32", "uint32",
		"int64", "uint64", "float16", "bfloat16", "float32", "float64" };
	int dt, op, bad_all = 0;

	for (dt = R2CC_INT8; dt <= R2CC_FLOAT64; dt++) {
		int bad = 0;

		for (op = R2CC_SUM; op <= R2CC_AVG; op++) {
			union { int8_t i8[N]; uint8_t u8[N]; int32_t i32[N];
				uint32_t u32[N]; int64_t i64[N]; uint64_t u64[N];
				uint16_t h[N]; float f[N]; double d[N]; } a, b, c;
			size_t i;

			for (i = 0; i < sizeof(a); i++) {
				((uint8_t *)&a)[i] = (uint8_t)rnd();
				((uint8_t *)&b)[i] = (uint8_t)rnd();
			}
			for (i = 0; i < N; i++) {	/* finite floats */
				a.f[i] = (float)((int)(rnd() % 2001) - 1000) / 8;
				b.f[i] = (float)((int)(rnd() % 2001) - 1000) / 8;
				if (dt == R2CC_FLOAT64) {
					a.d[i] = (double)a.f[i] * 3;
					b.d[i] = (double)b.f[i] * 5;
				}
				if (dt == R2CC_FLOAT16 || dt == R2CC_BFLOAT16) {
					float x = a.f[i], y = b.f[i];

					a.h[i] = dt == R2CC_FLOAT16 ?
						 coll_float_to_half(x) :
						 coll_float_to_bf16(x);
					b.h[i] = dt == R2CC_FLOAT16 ?
						 coll_float_to_half(y) :
						 coll_float_to_bf16(y);
				}
			}
			c = a;
			coll_reduce(&c, &b, N, (enum r2cc_dtype)dt,
				    (enum r2cc_redop)op);
			coll_finish(&c, N, (enum r2cc_dtype)dt,
				    (enum r2cc_redop)op, 3);
			for (i = 0; i < N; i++) {
#define REF(T, U, W, x, y) do {						\
		T r_ = op == R2CC_PROD ? (T)((U)(x) * (U)(y)) :		\
		       op == R2CC_MIN ? ((x) < (y) ? (x) : (y)) :	\
		       op == R2CC_MAX ? ((x) > (y) ? (x) : (y)) :	\
		       (T)((U)(x) + (U)(y));				\
		if (op == R2CC_AVG)					\
			r_ = (T)((W)r_ / (W)3);				\
		if (memcmp(&r_, &c_, sizeof(r_)))			\
			bad++;						\
	} while (0)
				switch (dt) {
				case R2CC_INT8: { int8_t c_ = c.i8[i]; REF(int8_t, uint8_t, int64_t, a.i8[i], b.i8[i]); break; }
				case R2CC_UINT8: { uint8_t c_ = c.u8[i]; REF(uint8_t, uint8_t, uint64_t, a.u8[i], b.u8[i]); break; }
				case R2CC_INT32: { int32_t c_ = c.i32[i]; REF(int32_t, uint32_t, int64_t, a.i32[i], b.i32[i]); break; }
				case R2CC_UINT32: { uint32_t c_ = c.u32[i]; REF(uint32_t, uint32_t, uint64_t, a.u32[i], b.u32[i]); break; }
				case R2CC_INT64: { int64_t c_ = c.i64[i]; REF(int64_t, uint64_t, int64_t, a.i64[i], b.i64[i]); break; }
				case R2CC_UINT64: { uint64_t c_ = c.u64[i]; REF(uint64_t, uint64_t, uint64_t, a.u64[i], b.u64[i]); break; }
				case R2CC_FLOAT32: { float c_ = c.f[i]; REF(float, float, float, a.f[i], b.f[i]); break; }
				case R2CC_FLOAT64: { double c_ = c.d[i]; REF(double, double, double, a.d[i], b.d[i]); break; }
				case R2CC_FLOAT16:
				case R2CC_BFLOAT16: {
					int h = dt == R2CC_FLOAT16;
					float x = h ? coll_half_to_float(a.h[i]) : coll_bf16_to_float(a.h[i]);
					float y = h ? coll_half_to_float(b.h[i]) : coll_bf16_to_float(b.h[i]);
					float r = op == R2CC_PROD ? x * y : op == R2CC_MIN ? (x < y ? x : y) :
						  op == R2CC_MAX ? (x > y ? x : y) : x + y;
					uint16_t w = h ? coll_float_to_half(r) : coll_float_to_bf16(r);

					if (op == R2CC_AVG) {
						r = (h ? coll_half_to_float(w) : coll_bf16_to_float(w)) / 3;
						w = h ? coll_float_to_half(r) : coll_float_to_bf16(r);
					}
					bad += w != c.h[i];
					break;
				}
				}
			}
		}
		tap_ok(!bad, "%s: sum, prod, min, max, avg of %d elements as a plain loop computes them (%d differ)",
		       dn[dt], N, bad);
		bad_all += bad;
	}
	(void)bad_all;
}

/* ---------------------------------------------- the simulated ring */

#define MAXR 9
#define MAXMSG (4 * MAXR)

struct msg {
	int chunk;
	size_t len;
	int64_t *data;
};

struct link {
	struct msg q[MAXMSG];
	int head, tail;
};

/* An allreduce's chunk weights (lib/coll/model/weight.c), or NULL: equal. */
static const uint32_t *sim_w;

/* One collective on @n simulated ranks, element = int64 sum-able. */
static int simulate(enum coll_kind kind, int n, int root, size_t count,
		    char *why, size_t whylen)
{
	struct coll_step steps[MAXR][2 * MAXR];
	int nsteps[MAXR], pc[MAXR], half[MAXR], r, progress, nch = coll_nchunks(kind, n);
	struct link links[MAXR];
	size_t in_n = kind == COLL_REDUCE_SCATTER ? count * n : count;
	size_t out_n = kind == COLL_ALLGATHER || kind == COLL_BARRIER ?
		       count * n : count;
	int64_t *in[MAXR], *out[MAXR], *fwd[MAXR], want;
	int ret = 0;
	size_t i, off, len;

	memset(links, 0, sizeof(links));
	for (r = 0; r < n; r++) {
		nsteps[r] = coll_plan(kind, r, n, root, steps[r]);
		pc[r] = 0;
		half[r] = 0;
		in[r] = calloc(in_n + 1, sizeof(int64_t));
		out[r] = calloc(out_n + 1, sizeof(int64_t));
		fwd[r] = NULL;
		for (i = 0; i < in_n; i++)
			in[r][i] = (int64_t)((r + 1) * 1000003 + i * 7);
		/* the engine's local part (coll_local) */
		if (kind == COLL_ALLGATHER)
			memcpy(out[r] + r * count, in[r], count * 8);
		if (kind == COLL_BROADCAST && r == root)
			memcpy(out[r], in[r], count * 8);
		if (n == 1)
			memcpy(out[r], in[r] + (kind == COLL_REDUCE_SCATTER ? r * count : 0),
			       (kind == COLL_ALLGATHER ? count : out_n) * 8);
	}
#define OWN(r, c) (kind == COLL_ALLGATHER ? in[r] : \
		   kind == COLL_REDUCE_SCATTER ? in[r] + (c) * count : \
		   kind == COLL_ALLREDUCE ? in[r] + off : in[r])
#define DST(r, c) (kind == COLL_ALLGATHER ? out[r] + (c) * count : \
		   kind == COLL_ALLREDUCE ? out[r] + off : out[r])
#define GEOM(c) do { if (kind == COLL_ALLREDUCE && sim_w) coll_chunk_w(count, sim_w, c, &off, &len); \
		else if (kind == COLL_ALLREDUCE) coll_chunk(count, nch, c, &off, &len); \
		else { off = (kind == COLL_REDUCE_SCATTER || kind == COLL_ALLGATHER || \
			      kind == COLL_BARRIER) ? (size_t)(c) * count : 0; len = count; } } while (0)
	do {
		progress = 0;
		for (r = 0; r < n; r++) {
			while (pc[r] < nsteps[r]) {
				const struct coll_step *st = &steps[r][pc[r]];
				struct link *in_l = &links[(r + n - 1) % n];
				struct link *out_l = &links[r];
				struct msg *m;

				/* a step's send needs only the step before */
				if (!half[r] && st->send_chunk >= 0) {
					if (out_l->tail - out_l->head >= MAXMSG) {
						snprintf(why, whylen, "link %d overflows", r);
						return -1;
					}
					GEOM(st->send_chunk);
					m = &out_l->q[out_l->tail++ % MAXMSG];
					m->chunk = st->send_chunk;
					m->len = len;
					m->data = malloc((len + 1) * 8);
					if (st->send_src == SRC_LOCAL) {
						memcpy(m->data, OWN(r, st->send_chunk), len * 8);
					} else if (!fwd[r]) {
						snprintf(why, whylen, "rank %d step %d forwards nothing", r, pc[r]);
						return -1;
					} else {
						memcpy(m->data, fwd[r], len * 8);
					}
				}
				if (!half[r]) {
					free(fwd[r]);
					fwd[r] = NULL;
					half[r] = 1;
					progress = 1;
				}
				if (st->recv_chunk >= 0 && in_l->head == in_l->tail)
					break;
				if (st->recv_chunk >= 0) {
					m = &in_l->q[in_l->head++ % MAXMSG];
					if (m->chunk != st->recv_chunk) {
						snprintf(why, whylen, "rank %d step %d wants chunk %d, got %d",
							 r, pc[r], st->recv_chunk, m->chunk);
						return -1;
					}
					GEOM(st->recv_chunk);
					if (st->recv_act == ACT_REDUCE)
						coll_reduce(m->data, OWN(r, st->recv_chunk), len,
							    R2CC_INT64, R2CC_SUM);
					if (st->store)
						memcpy(DST(r, st->recv_chunk), m->data, len * 8);
					fwd[r] = m->data;
				}
				pc[r]++;
				half[r] = 0;
				progress = 1;
			}
		}
	} while (progress);
	for (r = 0; r < n; r++) {
		if (pc[r] != nsteps[r]) {
			snprintf(why, whylen, "deadlock: rank %d at step %d of %d", r, pc[r], nsteps[r]);
			return -1;
		}
		if (links[r].head != links[r].tail) {
			snprintf(why, whylen, "link %d has %d messages left", r,
				 links[r].tail - links[r].head);
			return -1;
		}
	}
	/* results */
	for (r = 0; r < n && !ret; r++) {
		if (kind == COLL_REDUCE && r != root)
			continue;
		for (i = 0; i < (kind == COLL_BARRIER ? 0 : out_n) && !ret; i++) {
			int k;

			want = 0;
			switch (kind) {
			case COLL_ALLREDUCE:
			case COLL_REDUCE:
				for (k = 0; k < n; k++)
					want += in[k][i];
				break;
			case COLL_REDUCE_SCATTER:
				for (k = 0; k < n; k++)
					want += in[k][r * count + i];
				break;
			case COLL_ALLGATHER:
				want = in[i / count][i % count];
				break;
			case COLL_BROADCAST:
				want = in[root][i];
				break;
			case COLL_BARRIER:
			case COLL_P2P:
				break;
			}
			if (out[r][i] != want) {
				snprintf(why, whylen, "rank %d element %zu: %lld, want %lld", r, i,
					 (long long)out[r][i], (long long)want);
				ret = -1;
			}
		}
	}
	for (r = 0; r < n; r++) {
		free(in[r]);
		free(out[r]);
		free(fwd[r]);
	}
	return ret;
}

static void test_plans(void)
{
	static const char *const kn[] = { "", "allreduce", "reduce_scatter",
		"allgather", "broadcast", "reduce", "barrier" };
	static const size_t counts[] = { 1, 2, 3, 7, 8, 9, 17, 100, 1001 };
	char why[320];
	int kind, n, root, runs, fails;
	size_t ci;

	for (kind = COLL_ALLREDUCE; kind <= COLL_BARRIER; kind++) {
		runs = fails = 0;
		why[0] = 0;
		for (n = 1; n <= MAXR; n++)
			for (root = 0; root < n; root++) {
				if (root && kind != COLL_BROADCAST && kind != COLL_REDUCE)
					break;
				for (ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
					char w[160];

					runs++;
					if (simulate((enum coll_kind)kind, n, root,
						     kind == COLL_BARRIER ? 0 : counts[ci],
						     w, sizeof(w))) {
						if (!fails++)
							snprintf(why, sizeof(why), "n=%d root=%d count=%zu: %s",
								 n, root, counts[ci], w);
					}
				}
			}
		tap_ok(!fails, "%s: every rank's program over a simulated ring of 1..%d ranks, every root, 9 counts: messages match, results right (%d runs, %d wrong%s%s)",
		       kn[kind], MAXR, runs, fails, fails ? "; first: " : "", why);
	}
}

/*
 * The weighted ring runs the same programs with chunks of any size,
 * empty ones included: weights from views with one or two slow ranks
 * and from random ones, over every rank count and awkward count.
 */
static void test_weighted(void)
{
	static const size_t counts[] = { 1, 2, 3, 7, 100, 1001, 65536 };
	uint32_t mbps[MAXR], w[MAXR];
	double tmp[3 * MAXR];
	int n, k, v, runs = 0, fails = 0, uneven = 0;
	char why[320] = "", w1[160];
	size_t ci, off, len, total;

	for (n = 2; n <= MAXR; n++)
		for (v = 0; v < 12; v++) {
			for (k = 0; k < n; k++)
				mbps[k] = v < 4 ? 20000 : (uint32_t)(1 + rnd() % 40000);
			if (v < 4)
				mbps[v % n] = 20000 / (v + 2);
			if (v == 3)
				mbps[(n - 1) % n] = 0;
			uneven += coll_ring_wquant(n, mbps, w, tmp);
			sim_w = w;
			for (ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
				for (k = 0, total = 0; k < n; k++) {
					coll_chunk_w(counts[ci], w, k, &off, &len);
					fails += off != total;
					total += len;
				}
				fails += total != counts[ci];
				runs++;
				if (simulate(COLL_ALLREDUCE, n, 0, counts[ci], w1, sizeof(w1)) &&
				    !fails++)
					snprintf(why, sizeof(why), "n=%d view %d count %zu: %s",
						 n, v, counts[ci], w1);
			}
		}
	sim_w = NULL;
	tap_ok(!fails && uneven > 8 * 12 - 8,
	       "allreduce, chunks weighted by views with slow, dead and random ranks: contiguous, complete, every rank's result right over 2..%d ranks (%d runs, %d uneven views, %d wrong%s%s)",
	       MAXR, runs, uneven, fails, fails ? "; first: " : "", why);
}

static void test_chunks(void)
{
	size_t off, len, next = 0, total = 0, lo = SIZE_MAX, hi = 0;
	int c, ok = 1;

	for (c = 0; c < 7; c++) {
		coll_chunk(100, 7, c, &off, &len);
		ok &= off == next;
		next = off + len;
		total += len;
		lo = len < lo ? len : lo;
		hi = len > hi ? len : hi;
	}
	tap_ok(ok && total == 100 && hi - lo <= 1,
	       "100 elements in 7 chunks: contiguous, complete, sizes differ by at most 1");
	coll_chunk(3, 8, 7, &off, &len);
	tap_ok(off == 3 && len == 0, "more chunks than elements: the last ones are empty");
}

/*
 * The view values (lib/coll/view.c) over every ring kind's programs: each send
 * carries a value its rank already holds, the receiver expects the value
 * the sender sent, a value coming back is the one that left, and at the
 * end every rank holds every rank's value.  Chains carry none.
 */
static void test_view(void)
{
	static const enum coll_kind ring[] = { COLL_ALLREDUCE,
		COLL_REDUCE_SCATTER, COLL_ALLGATHER, COLL_BARRIER };
	struct coll_step steps[MAXR][2 * MAXR];
	int k, n, r, s, i, nsteps[MAXR], bad = 0, chains = 0;
	int have[MAXR][MAXR], val[MAXR][MAXR];
	char why[160] = "";

	for (k = 0; k < 4; k++)
		for (n = 2; n <= MAXR; n++) {
			memset(have, 0, sizeof(have));
			for (r = 0; r < n; r++) {
				nsteps[r] = coll_plan(ring[k], r, n, 0, steps[r]);
				have[r][r] = 1;
				val[r][r] = 1000 + r;
			}
			for (s = 0; s < nsteps[0]; s++)
				for (r = 0; r < n; r++) {
					int to = (r + 1) % n;
					int sv = coll_view_rank(ring[k], r, n, s, true);
					int rv = coll_view_rank(ring[k], to, n, s, false);

					if (nsteps[r] != nsteps[0] || steps[r][s].send_chunk < 0 ||
					    steps[to][s].recv_chunk < 0 || sv < 0 || sv != rv ||
					    !have[r][sv] ||
					    (have[to][rv] && val[to][rv] != val[r][sv])) {
						if (!bad++)
							snprintf(why, sizeof(why), "kind %d n=%d rank %d step %d: sends %d, next expects %d",
								 ring[k], n, r, s, sv, rv);
						continue;
					}
					have[to][rv] = 1;
					val[to][rv] = val[r][sv];
				}
			for (r = 0; r < n; r++)
				for (i = 0; i < n; i++)
					if (!have[r][i] || val[r][i] != 1000 + i) {
						if (!bad++)
							snprintf(why, sizeof(why), "kind %d n=%d: rank %d lacks rank %d's value",
								 ring[k], n, r, i);
					}
		}
	tap_ok(!bad, "view: every ring kind, 2..%d ranks: each step carries a value its sender holds and its receiver expects; all ranks end with all values (%d wrong%s%s)",
	       MAXR, bad, bad ? "; first: " : "", why);
	for (n = 1; n <= MAXR; n++)
		for (r = 0; r < n; r++)
			chains += coll_view_rank(COLL_BROADCAST, r, n, 0, true) != -1 ||
				  coll_view_rank(COLL_REDUCE, r, n, 1, false) != -1 ||
				  coll_view_rank(COLL_ALLREDUCE, 0, 1, 0, true) != -1;
	tap_ok(!chains, "view: broadcast, reduce and a lone rank carry none");
}

/*
 * The latency-bound programs (lib/coll/rd.c), 2..32 ranks, run pairwise: a
 * step completes only when its partner's matching step runs (as a send
 * waits for its receive).  Each partial is the set of ranks in it and a
 * fingerprint of the order they were combined in, lower rank first, as
 * the engine combines.
 */
#define RDMAX 32

struct sim {
	int n, lasts;		/* lasts: combines marked last */
	bool fold_up;		/* every RD_SEND goes to a higher rank */
	int ns[RDMAX], at[RDMAX];
	uint64_t mask[RDMAX], fp[RDMAX];
	struct coll_rd_step st[RDMAX][COLL_RD_MAX_STEPS];
};

static uint64_t comb(uint64_t lo, uint64_t hi)
{
	return (lo * 0x9e3779b97f4a7c15ull) ^ (hi + 0x632be59bd9b4e019ull) ^
	       (lo >> 29);
}

/* @p's partial combined into @r's ("lower OP higher"); 1 if they overlap. */
static int sim_combine(struct sim *s, int r, int p)
{
	if (s->mask[r] & s->mask[p])
		return 1;
	s->mask[r] |= s->mask[p];
	s->fp[r] = r < p ? comb(s->fp[r], s->fp[p]) : comb(s->fp[p], s->fp[r]);
	return 0;
}

/* Run @s's programs as far as they go; 0 if every rank finished. */
static int sim_run(struct sim *s, const char *what, char *why, size_t whylen)
{
	int r, moved;

	do {
		moved = 0;
		for (r = 0; r < s->n; r++) {
			const struct coll_rd_step *a, *b;
			int p;

			if (s->at[r] >= s->ns[r])
				continue;
			a = &s->st[r][s->at[r]];
			p = a->peer;
			if (p < 0 || p >= s->n || p == r || s->at[p] >= s->ns[p])
				continue;
			b = &s->st[p][s->at[p]];
			if (b->peer != r || b->round != a->round)
				continue;
			if (a->act == RD_XCHG && b->act == RD_XCHG) {
				if (sim_combine(s, r, p)) {
					snprintf(why, whylen, "%s: ranks %d and %d combine overlapping partials", what, r, p);
					return 1;
				}
				/* both ends compute the same */
				s->mask[p] = s->mask[r];
				s->fp[p] = s->fp[r];
				if (a->last != b->last) {
					snprintf(why, whylen, "%s: ranks %d and %d disagree on the last step", what, r, p);
					return 1;
				}
			} else if (a->act == RD_SEND && b->act == RD_REDUCE) {
				if ((s->fold_up && p < r) || sim_combine(s, p, r)) {
					snprintf(why, whylen, "%s: the partial %d -> %d", what, r, p);
					return 1;
				}
				s->lasts += b->last;
			} else if (a->act == RD_RESULT && b->act == RD_TAKE) {
				s->mask[p] = s->mask[r];
				s->fp[p] = s->fp[r];
			} else {
				continue;	/* p's step waits for another */
			}
			s->at[r]++;
			s->at[p]++;
			moved = 1;
		}
	} while (moved);
	for (r = 0; r < s->n; r++)
		if (s->at[r] != s->ns[r]) {
			snprintf(why, whylen, "%s: rank %d stuck at step %d of %d",
				 what, r, s->at[r], s->ns[r]);
			return 1;
		}
	return 0;
}

/*
 * Recursive doubling on @n ranks: every rank finishes, with every rank
 * counted once and the same fingerprint as every other rank (the same
 * bits for a non-commutative combine).
 */
static int rd_run(struct sim *s, int n, char *why, size_t whylen)
{
	char what[32];
	int r, lg = 0;

	snprintf(what, sizeof(what), "n=%d", n);
	memset(s, 0, sizeof(*s));
	s->n = n;
	s->fold_up = true;
	while ((1 << (lg + 1)) <= n)
		lg++;
	for (r = 0; r < n; r++) {
		s->ns[r] = coll_rd_plan(r, n, s->st[r]);
		s->mask[r] = 1ull << r;
		s->fp[r] = 1000 + (uint64_t)r;
		if (s->ns[r] < 1 || s->ns[r] > lg + 2) {
			snprintf(why, whylen, "%s rank %d: %d steps", what, r, s->ns[r]);
			return 1;
		}
	}
	if (sim_run(s, what, why, whylen))
		return 1;
	for (r = 0; r < n; r++)
		if (s->mask[r] != (1ull << n) - 1 || s->fp[r] != s->fp[0]) {
			snprintf(why, whylen, "%s: rank %d ends with another result", what, r);
			return 1;
		}
	return 0;
}

/*
 * A binomial tree (coll_tree_plan) for @kind on @n ranks from @root: a
 * broadcast ends with the root's value everywhere, a reduce with every
 * rank counted once at the root, its last combine marked last.
 */
static int tree_run(struct sim *s, enum coll_kind kind, int n, int root,
		    char *why, size_t whylen)
{
	char what[48];
	int r, lg = 0;

	snprintf(what, sizeof(what), "kind %d n=%d root %d", kind, n, root);
	memset(s, 0, sizeof(*s));
	s->n = n;
	while ((1 << lg) < n)
		lg++;
	for (r = 0; r < n; r++) {
		s->ns[r] = coll_tree_plan(kind, r, n, root, s->st[r]);
		s->mask[r] = kind == COLL_BROADCAST ? (r == root) : 1ull << r;
		s->fp[r] = 1000 + (uint64_t)r;
		if (s->ns[r] < 1 || s->ns[r] > lg + 1) {
			snprintf(why, whylen, "%s rank %d: %d steps", what, r, s->ns[r]);
			return 1;
		}
	}
	if (sim_run(s, what, why, whylen))
		return 1;
	for (r = 0; r < n; r++)
		if ((kind == COLL_BROADCAST && s->mask[r] != 1) ||
		    (kind == COLL_REDUCE && r == root &&
		     (s->mask[r] != (1ull << n) - 1 || s->lasts != 1))) {
			snprintf(why, whylen, "%s: rank %d ends wrong", what, r);
			return 1;
		}
	return 0;
}

static void test_rd(void)
{
	static struct sim s;
	char why[160] = "";
	int n, k, root, bad = 0;

	for (n = 2; n <= RDMAX && !bad; n++)
		bad = rd_run(&s, n, why, sizeof(why));
	tap_ok(!bad, "recursive doubling, 2..%d ranks: no rank waits forever, each result counts every rank once, all ranks combine in the same order%s%s",
	       RDMAX, bad ? ": " : "", why);
	for (k = 0; k < 2; k++) {
		enum coll_kind kind = k ? COLL_REDUCE : COLL_BROADCAST;

		bad = 0;
		for (n = 2; n <= RDMAX && !bad; n++)
			for (root = 0; root < n && !bad; root++)
				bad = tree_run(&s, kind, n, root, why, sizeof(why));
		tap_ok(!bad, "binomial %s, 2..%d ranks, every root: at most ceil(log2 n) + 1 steps, no rank waits forever, %s%s%s",
		       k ? "reduce" : "broadcast", RDMAX,
		       k ? "the root counts every rank once" : "every rank ends with the root's data",
		       bad ? ": " : "", why);
	}
	/* alpha 10 us, 12500 bytes/us (100 Gbit/s) */
	tap_ok(coll_rd_crossover(2, 10, 12500, 1 << 18) == 1 << 18 &&
	       coll_rd_crossover(2, 0, 12500, 1 << 18) == 1 << 18,
	       "crossover, 2 ranks: the cap (the same bytes in fewer messages)");
	tap_ok(coll_rd_crossover(4, 10, 12500, 1 << 30) == 1000000 &&
	       coll_rd_crossover(4, 10, 12500, 1 << 18) == 1 << 18 &&
	       coll_rd_crossover(3, 10, 12500, 1 << 30) == 75000 &&
	       coll_rd_crossover(8, 10, 12500, 1 << 30) == 1100000,
	       "crossover, 3, 4 and 8 ranks: alpha B (2(n-1) - s) / (s - 2(n-1)/n), capped");
	tap_ok(coll_rd_crossover(1, 10, 12500, 1 << 18) == 0 &&
	       coll_rd_crossover(4, 0, 12500, 1 << 18) == 0 &&
	       coll_rd_crossover(4, 10, 0, 1 << 18) == 0 &&
	       coll_rd_crossover(4, -1, 12500, 1 << 18) == 0,
	       "crossover: none for 1 rank, no latency, no bandwidth or a negative latency");
}

int main(void)
{
	tap_plan(5 + 10 + 6 + 2 + 1 + 2 + 6);
	test_half();
	test_reduce();
	test_plans();
	test_chunks();
	test_weighted();
	test_view();
	test_rd();
	return tap_done();
}
