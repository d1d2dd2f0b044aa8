// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc-sim's optimal allreduce (AR_DIRECT, strategy r2cc-optimal) is the
 * library's: the shares come from lib/coll/model/weight.c through the view in
 * Mbit/s, as libr2cc computes them.  With one node at beta of the
 * others' bandwidth (alpha = 0) its time is the R2CCL paper's bound
 * T_LB = max(D/(beta B), 2(n-1)D/((n-1+beta)B)) up to the shares'
 * rounding to 1/65536; healthy, the ring's 2(n-1)/n D/B; in random
 * states of several degraded nodes never slower than the ring or the
 * weighted ring.
 */
#include "simtest.h"

int main(void)
{
	static const int ns[] = { 3, 4, 8, 16, 64 };
	static const double betas[] = { 0.1, 0.25, 0.5, 0.6, 2.0 / 3.0, 0.9, 1.0 };
	struct fabric f = fab_make(1, 1, 1, 100);
	const double s = 1e9, b = 50e9;
	uint64_t seed = 7;
	double worst = 0.0, bw[64];
	int i, j, k, slower = 0, states = 0;

	tap_plan(3);
	for (i = 0; i < (int)(sizeof(ns) / sizeof(ns[0])); i++)
		for (j = 0; j < (int)(sizeof(betas) / sizeof(betas[0])); j++) {
			int n = ns[i];
			double be = betas[j], lb, t;

			for (k = 0; k < n; k++)
				bw[k] = b;
			bw[n / 2] = be * b;
			lb = fmax(s / (be * b),
				  2.0 * (n - 1) * s / ((n - 1 + be) * b));
			t = ar_time(bw, n, AR_DIRECT, s, &f);
			worst = fmax(worst, fabs(t - lb) / lb);
		}
	tap_ok(worst < 2e-3, "one node at beta = 0.1 .. 1, 3 to 64 nodes: the optimal allreduce takes T_LB (worst relative gap %.2g, the shares' rounding)",
	       worst);
	for (k = 0; k < 8; k++)
		bw[k] = b;
	tap_ok(close_rel(ar_time(bw, 8, AR_DIRECT, s, &f),
			 ar_time(bw, 8, AR_RING, s, &f), 1e-9),
	       "healthy: the ring's time, 2(n-1)/n D/B");
	for (i = 0; i < 300; i++) {
		int n = 3 + (int)(rng_uniform(&seed) * 30);
		double t;

		for (k = 0; k < n; k++)
			bw[k] = rng_uniform(&seed) < 0.3 ?
				b * (0.05 + 0.9 * rng_uniform(&seed)) : b;
		t = ar_time(bw, n, AR_DIRECT, s, &f);
		slower += t > ar_time(bw, n, AR_RING, s, &f) * (1 + 2e-3) ||
			  t > ar_time(bw, n, AR_WEIGHTED, s, &f) * (1 + 2e-3);
		states++;
	}
	tap_ok(!slower, "%d random states of 3 to 32 nodes: never slower than the ring or the weighted ring (%d are)",
	       states, slower);
	return tap_done();
}
