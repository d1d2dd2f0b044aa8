// SPDX-License-Identifier: GPL-2.0-only
/*
 * The weighted ring's cost model (lib/coll_weight.c) on the host: equal
 * chunks for a healthy view; the R2CCL paper's lower bound reached for
 * one rank at half bandwidth and the predicted distance from it above
 * half; never worse than equal chunks; as good as a brute-force search
 * over a grid of chunk sizes; the same weights on every call.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "../../lib/coll_weight.h"
#include "tap.h"

#define MAXN 64

static uint64_t rnd_state = 0x2545f4914f6cdd1dull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
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

int main(void)
{
	tap_plan(6);
	test_healthy();
	test_bound();
	test_random();
	test_grid();
	return tap_done();
}
