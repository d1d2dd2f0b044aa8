// SPDX-License-Identifier: GPL-2.0-only
/*
 * The weighted ring's cost model (lib/coll/model/weight.c) on the host: equal
 * chunks for a healthy view; the R2CCL paper's lower bound reached for
 * one rank at half bandwidth and the predicted distance from it above
 * half; never worse than equal chunks; as good as a brute-force search
 * over a grid of chunk sizes; the same weights on every call.  And the
 * engine's schedule model (lib/coll/model/sched.c) that auto asks: closed
 * forms, the figures Documentation/coll.rst quotes, the choice it makes,
 * and bad arguments.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../lib/coll/model/model.h"
#include "tap.h"
#include "xorshift.h"

#define MAXN 64

static uint64_t rnd_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	return xorshift64(&rnd_state);
}

/* T_LB / D for n ranks of bandwidth 1 but one at @beta (the paper's). */
static double t_lb(int n, double beta)
{
	double a = 1.0 / beta, b = 2.0 * (n - 1) / (n - 1 + beta);

	return a > b ? a : b;
}

/* The model's time with quantized weights @w. */
static double wtime(int n, const double *bw, const uint32_t *w)
{
	double c[MAXN];
	int k;

	for (k = 0; k < n; k++)
		c[k] = (double)w[k] / COLL_WEIGHT_ONE;
	return coll_ring_time(n, bw, c);
}

static void one_slow(int n, uint32_t slow, double *got, double *lb,
		     double *ring)
{
	uint32_t mbps[MAXN], w[MAXN];
	double tmp[3 * MAXN], bw[MAXN], eq[MAXN];
	int k;

	for (k = 0; k < n; k++) {
		mbps[k] = 30000;
		eq[k] = 1.0 / n;
	}
	mbps[1] = slow;
	coll_ring_wquant(n, mbps, w, tmp);
	/* as the library counts a rank with nothing left */
	for (k = 0; k < n; k++)
		bw[k] = (mbps[k] > 30000 / 64 ? mbps[k] : 30000 / 64.0) / 30000.0;
	*got = wtime(n, bw, w);
	*lb = t_lb(n, bw[1]);
	*ring = coll_ring_time(n, bw, eq);
}

static void test_healthy(void)
{
	uint32_t mbps[MAXN], w[MAXN];
	double tmp[3 * MAXN];
	int n, k, bad = 0;

	for (n = 1; n <= MAXN; n++) {
		uint32_t sum = 0, lo = UINT32_MAX, hi = 0;

		for (k = 0; k < n; k++)
			mbps[k] = 200000;
		bad += coll_ring_wquant(n, mbps, w, tmp);
		for (k = 0; k < n; k++) {
			sum += w[k];
			lo = w[k] < lo ? w[k] : lo;
			hi = w[k] > hi ? w[k] : hi;
		}
		bad += sum != COLL_WEIGHT_ONE || hi - lo > 1;
	}
	tap_ok(!bad, "every rank alike, 1..%d ranks: not uneven, equal weights summing to the whole (%d wrong)",
	       MAXN, bad);
}

static void test_bound(void)
{
	double got, lb, ring, worst = 0.0;
	int n, bad = 0;

	for (n = 3; n <= 16; n++) {
		one_slow(n, 15000, &got, &lb, &ring);
		bad += got > lb * 1.001;
		worst = got / lb > worst ? got / lb : worst;
	}
	tap_ok(!bad, "one rank at beta = 1/2, 3..16 ranks: T_LB reached (worst %.4f x T_LB; the ring's 4 ranks: %.3f x)",
	       worst, (one_slow(4, 15000, &got, &lb, &ring), ring / lb));
	one_slow(4, 20000, &got, &lb, &ring);
	tap_ok(fabs(got - 6.0 / (2.0 + 4.0 / 3.0)) < 0.002 && got < ring,
	       "one rank at beta = 2/3, 4 ranks: 2(n-1)/(n-2+2 beta) = 1.800 as the model says (%.4f; T_LB %.4f, ring %.4f)",
	       got, lb, ring);
	one_slow(4, 0, &got, &lb, &ring);
	tap_ok(got <= lb * 1.001 && got < ring,
	       "a rank with no bandwidth left counts at 1/64: it sends and receives the data once, T_LB (%.2f against the ring's %.2f)",
	       got, ring);
}

/* Random views: never worse than equal chunks, weights sum to the whole. */
static void test_random(void)
{
	uint32_t mbps[MAXN], w[MAXN], w2[MAXN];
	double tmp[3 * MAXN], bw[MAXN], eq[MAXN], top;
	int it, n, k, bad = 0, same = 1;

	for (it = 0; it < 2000; it++) {
		uint32_t sum = 0;

		n = 2 + (int)(rnd() % (MAXN - 1));
		for (k = 0, top = 0; k < n; k++) {
			mbps[k] = rnd() % 4 ? 100000 : (uint32_t)(rnd() % 100001);
			top = mbps[k] > top ? mbps[k] : top;
			eq[k] = 1.0 / n;
		}
		coll_ring_wquant(n, mbps, w, tmp);
		coll_ring_wquant(n, mbps, w2, tmp);
		same &= !memcmp(w, w2, sizeof(*w) * n);
		for (k = 0; k < n; k++) {
			sum += w[k];
			bw[k] = (mbps[k] > top / 64 ? mbps[k] : top / 64) / top;
		}
		if (sum != COLL_WEIGHT_ONE ||
		    wtime(n, bw, w) > coll_ring_time(n, bw, eq) * 1.0001 + 1e-9) {
			if (!bad++)
				tap_diag("seed state %llu, n %d: sum %u, %.5f against equal %.5f",
				     (unsigned long long)rnd_state, n, sum,
				     wtime(n, bw, w), coll_ring_time(n, bw, eq));
		}
	}
	tap_ok(!bad && same, "2000 random views of 2..%d ranks: weights sum to the whole, never slower than equal chunks, the same on every call (%d wrong)",
	       MAXN, bad);
}

/*
 * Against brute force: every split of the whole into 4 chunks on a grid
 * of 1/60, for random 4-rank views; the solver must be as good as the
 * best grid point, to the grid's resolution.
 */
static void test_grid(void)
{
	double bw[4], c[4], m[4], best, got, worst = 0.0;
	int it, a, b, d, bad = 0;
	const int g = 60;

	for (it = 0; it < 40; it++) {
		for (a = 0; a < 4; a++)
			bw[a] = 0.05 + (double)(rnd() % 1000) / 1000.0;
		best = 1e300;
		for (a = 0; a <= g; a++)
			for (b = 0; a + b <= g; b++)
				for (d = 0; a + b + d <= g; d++) {
					double x[4] = { (double)a / g, (double)b / g,
							(double)d / g,
							(double)(g - a - b - d) / g };
					double t = coll_ring_time(4, bw, x);

					best = t < best ? t : best;
				}
		got = coll_ring_weights(4, bw, c, m);
		bad += got > best * 1.0001;
		worst = got / best > worst ? got / best : worst;
	}
	tap_ok(!bad, "40 random 4-rank views: no split on a 1/60 grid is faster than the solver's (worst solver / grid %.4f)",
	       worst);
}

static bool near(double a, double b)
{
	return fabs(a - b) < 1e-9;
}

static void test_sched_closed(void)
{
	double link[MAXN], c[MAXN];
	int n, k, bad = 0;

	/* the equal ring on equal links, one slice a chunk: 2 (n - 1) / n */
	for (n = 2; n < 10; n++) {
		for (k = 0; k < n; k++) {
			link[k] = 1.0;
			c[k] = 1.0 / n;
		}
		bad += !near(coll_sched_time(n, link, c, 1, 1, 2),
			     2.0 * (n - 1) / n);
	}
	tap_ok(!bad, "schedule model: equal ring, equal links, 2(n-1)/n D/B for 2..9 ranks (%d wrong)",
	       bad);
	/*
	 * one chunk with all the data, k = 16 slices, 8 sets so that the
	 * receiver may run ahead: every link carries it twice but two, 2 D/B,
	 * plus the chain's fill, (n - 3) / k
	 */
	bad = 0;
	for (n = 3; n < 9; n++) {
		for (k = 0; k < n; k++)
			c[k] = k == 1;
		bad += !near(coll_sched_time(n, link, c, 16, 16, 8),
			     2.0 + (n - 3) / 16.0);
	}
	tap_ok(!bad, "schedule model: one chunk, equal links, 2 + (n-3)/k D/B for 3..8 ranks (%d wrong)",
	       bad);
}

/* weighted / ring for 4 ranks, rank 1 at beta = 1/2, 4 MiB (coll.rst) */
static double sched_ratio(size_t slice_kib, size_t depth, unsigned int sets)
{
	double link[4] = { 0.5, 0.5, 1.0, 1.0 }, eq[4], w[4] = { 0, 1, 0, 0 };
	int k;

	for (k = 0; k < 4; k++)
		eq[k] = 0.25;
	return coll_sched_time(4, link, w, 4096 / slice_kib, depth, sets) /
	       coll_sched_time(4, link, eq, 1024 / slice_kib, depth, sets);
}

static void test_sched_figures(void)
{
	double a = sched_ratio(256, 4, 2), b = sched_ratio(64, 16, 2);
	double d = sched_ratio(64, 16, 4), prev = 1e300, t;
	double link[4] = { 0.5, 0.5, 1.0, 1.0 }, w[4] = { 0, 1, 0, 0 };
	unsigned int s;
	int worse = 0;

	tap_ok(fabs(a - 1.17) < 0.005 && fabs(b - 1.04) < 0.005 &&
	       fabs(d - 0.79) < 0.005,
	       "schedule model: weighted / ring at 256 KiB x 4, 2 sets %.3f (1.17), 64 KiB x 16, 2 sets %.3f (1.04), 4 sets %.3f (0.79)",
	       a, b, d);
	for (s = 2; s <= 8; s++) {
		t = coll_sched_time(4, link, w, 64, 16, s);
		worse += t > prev + 1e-9;
		prev = t;
	}
	tap_ok(!worse, "schedule model: more slot sets never slower (%d worse)",
	       worse);
}

static void test_sched_choice(void)
{
	uint32_t mbps[MAXN], w[MAXN];
	double tmp[3 * MAXN];
	size_t count = 1u << 20;	/* 4 MiB of float32 */
	static uint32_t many[256], wmany[256];
	static double tmany[3 * 256];
	int k, a, b, h, big, huge, e1, e2;

	for (k = 0; k < 4; k++)
		mbps[k] = 200000;
	coll_ring_wquant(4, mbps, w, tmp);
	h = coll_sched_prefer_weighted(4, mbps, w, count, 4, 65536, 16, 4);
	mbps[1] = 100000;
	coll_ring_wquant(4, mbps, w, tmp);
	a = coll_sched_prefer_weighted(4, mbps, w, count, 4, 256 << 10, 4, 2);
	b = coll_sched_prefer_weighted(4, mbps, w, count, 4, 65536, 16, 4);
	tap_ok(!a && b && !h,
	       "auto's choice, rank 1 at 1/2: the ring at 256 KiB x 4, 2 sets (%d), weighted at 64 KiB x 16, 4 sets (%d); healthy, the ring (%d)",
	       a, b, h);
	/* past the work cap: fewer, larger slices, still an answer */
	for (k = 0; k < MAXN; k++)
		mbps[k] = k == 7 ? 50000 : 200000;
	coll_ring_wquant(MAXN, mbps, w, tmp);
	big = coll_sched_prefer_weighted(MAXN, mbps, w, (size_t)1 << 28, 4,
					 4096, 64, 8);
	/* past the cap at one slice: the ring, unasked */
	for (k = 0; k < 256; k++)
		many[k] = k == 7 ? 50000 : 200000;
	coll_ring_wquant(256, many, wmany, tmany);
	huge = coll_sched_prefer_weighted(256, many, wmany, (size_t)1 << 28,
					  4, 4096, 64, 8);
	e1 = coll_sched_time(4, tmp, tmp, 0, 4, 2) == -EINVAL;
	e2 = coll_sched_time(4, tmp, tmp, 4, 4, 1) == -EINVAL;
	tap_ok((big == 0 || big == 1) && !huge && e1 && e2,
	       "schedule model: 64 ranks x 1 GiB in 4 KiB slices answers (%d), 256 ranks keep the ring (%d); 0 slices, 1 set: -EINVAL (%d, %d)",
	       big, huge, e1, e2);
}

/*
 * Where the schedule model reaches: every n from 3 up to the last whose
 * single slice of each ring fits COLL_SCHED_WORK, and none past it, the
 * same boundary at which coll_sched_prefer_weighted() stops asking.
 */
static void test_sched_reach(void)
{
	uint32_t v[200], w[200];
	static double t[3 * 200];
	int n, last = 2, holes = 0, past = 0, k;

	for (n = -1; n <= 4096; n++) {
		bool in = coll_sched_reaches(n);

		if (in && n == last + 1)
			last = n;		/* 3, 4, ... without a gap */
		else if (in)
			holes++;		/* below 3, or after a gap */
		past += in &&
			2 * (size_t)(2 * n - 2) * (size_t)n > COLL_SCHED_WORK;
	}
	/* one rank at 1/4 at the last n reached, then one past it */
	for (k = 0; k < 200; k++)
		v[k] = k == 1 ? 50000 : 200000;
	coll_ring_wquant(last + 1, v, w, t);
	tap_ok(last >= 150 && last < 200 && !holes && !past &&
	       !coll_sched_reaches(2) && !coll_sched_reaches(last + 1) &&
	       coll_sched_prefer_weighted(last + 1, v, w, (size_t)1 << 28, 4,
					  4096, 64, 8) == 0,
	       "the schedule model reaches 3 to %d ranks, with no gap, and past that auto keeps the ring unasked",
	       last);
}

int main(void)
{
	tap_plan(13);
	test_healthy();
	test_bound();
	test_random();
	test_grid();
	test_sched_closed();
	test_sched_figures();
	test_sched_choice();
	test_sched_reach();
	return tap_done();
}
