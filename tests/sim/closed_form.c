// SPDX-License-Identifier: GPL-2.0-only
/*
 * The schedules built by the simulator reproduce the closed forms to
 * 1e-9 (alpha = 0, fluid pipeline): Balance T/T_nf = 1/(1-X); R2CC-
 * AllReduce T/T_nf = 1 + nX/(2(n-1)(1-X)) wherever the degraded node is
 * the bottleneck (the paper's single-node model), and its full-model form
 * where the healthy nodes are; the K-chunk pipeline adds its fill; the
 * overlapped schedule matches its own optimum and overhead O(1/n).
 */
#include "simtest.h"

static const int ns[] = { 2, 3, 4, 8, 16, 64, 128, 1024 };
static const double xs[] = { 0.125, 0.25, 1.0 / 3.0, 0.5, 0.75 };
#define NN (int)(sizeof(ns) / sizeof(ns[0]))
#define NX (int)(sizeof(xs) / sizeof(xs[0]))

static double *bw_one(int n, double x, double b)
{
	double *bw = malloc(sizeof(double) * n);
	int i;

	for (i = 0; i < n; i++)
		bw[i] = b;
	bw[n / 2] = b * (1.0 - x);	/* any position, not just the first */
	return bw;
}

int main(void)
{
	struct fabric f = fab_make(1, 1, 1, 100);
	const double s = 1e9, b = 50e9;
	int i, j, bad_bal = 0, bad_paper = 0, bad_full = 0, bad_fill = 0;
	int bad_ov = 0, paper_cases = 0, full_cases = 0;
	double worst_ov_n = 0.0, best_paper = 1e9;

	tap_plan(8);
	for (i = 0; i < NN; i++)
		for (j = 0; j < NX; j++) {
			int n = ns[i];
			double x = xs[j], *bw = bw_one(n, x, b);
			double up[1024], tnf, r, c, h, want, u;
			int k;

			for (k = 0; k < n; k++)
				up[k] = b;
			f.chunks = 0;
			tnf = ar_time(up, n, AR_RING, s, &f);
			r = ar_time(bw, n, AR_RING, s, &f) / tnf;
			if (!close_rel(r, cf_balance(x), 1e-9)) {
				bad_bal++;
				tap_diag("balance n=%d x=%g: %.12g vs %.12g",
					 n, x, r, cf_balance(x));
			}
			/* R2CC-AllReduce, the full model */
			c = 2.0 * (n - 1) / n;
			h = (2.0 * n - 3) / (n - 1);
			r = ar_time(bw, n, AR_PAPER, s, &f) / tnf;
			if (n == 2 || 1.0 / (1.0 - x) >= h) {
				paper_cases++;
				if (!close_rel(r, cf_r2cc_ar(n, x), 1e-9)) {
					bad_paper++;
					tap_diag("paper n=%d x=%g: %.12g vs "
						 "%.12g", n, x, r,
						 cf_r2cc_ar(n, x));
				}
			} else {
				full_cases++;
				want = 1.0 + x / c * h;
				if (!close_rel(r, want, 1e-9) ||
				    r < cf_r2cc_ar(n, x)) {
					bad_full++;
					tap_diag("full n=%d x=%g: %.12g vs "
						 "%.12g", n, x, r, want);
				}
			}
			/* K chunks: one chunk of fill on the second phase */
			f.chunks = 16;
			r = ar_time(bw, n, AR_PAPER, s, &f) / tnf;
			want = 1.0 + x / c * ((n == 2 ? 1.0 / (1.0 - x) :
					       fmax(1.0 / (1.0 - x), h)) +
					      1.0 / (16 * (1.0 - x)));
			if (!close_rel(r, want, 1e-9)) {
				bad_fill++;
				tap_diag("fill n=%d x=%g: %.12g vs %.12g", n,
					 x, r, want);
			}
			/* overlapped split: balance both sides (n >= 3) */
			f.chunks = 0;
			r = ar_time(bw, n, AR_OVERLAP, s, &f) / tnf;
			if (n >= 3) {
				u = c * x / ((c - 1.0) + (1.0 - x) * (h - c));
				want = u <= 1.0 ? 1.0 + (h - c) * u / c :
				       fmax(1.0 / (1.0 - x), h) / c;
			} else {
				want = cf_balance(x);
			}
			if (!close_rel(r, want, 1e-9)) {
				bad_ov++;
				tap_diag("overlap n=%d x=%g: %.12g vs %.12g",
					 n, x, r, want);
			}
			/* overhead relative to the 2X/(n-1) bound */
			if (n >= 3 && x <= 0.5 &&
			    (r - 1.0) * (n - 1) / (2.0 * x) > worst_ov_n)
				worst_ov_n = (r - 1.0) * (n - 1) / (2.0 * x);
			if (n >= 16 && x == 0.125) {
				double p = ar_time(bw, n, AR_PAPER, s, &f) /
					   tnf - 1.0;
				if (p < best_paper)
					best_paper = p;
			}
			free(bw);
		}
	tap_ok(!bad_bal, "balance: T/T_nf = 1/(1-X) for %d cases", NN * NX);
	tap_ok(!bad_paper && paper_cases > 5,
	       "r2cc-allreduce: 1 + nX/(2(n-1)(1-X)) in %d degraded-bound "
	       "cases", paper_cases);
	tap_ok(!bad_full && full_cases > 5,
	       "r2cc-allreduce: healthy-bound full model in %d cases",
	       full_cases);
	tap_ok(!bad_fill, "r2cc-allreduce: K=16 pipeline adds one chunk");
	tap_ok(!bad_ov, "overlap: matches its optimal split");
	tap_ok(worst_ov_n > 0 && worst_ov_n <= 1.0 + 1e-9,
	       "overlap overhead <= 2X/(n-1) for X <= 1/2 (O(1/n)): "
	       "worst %.4g of the bound", worst_ov_n);
	tap_ok(best_paper >= 0.125 / 2.0,
	       "r2cc-allreduce overhead does not shrink with n: >= %.4g",
	       best_paper);
	tap_ok(close_rel(cf_r2cc_ar(3, 1.0 / 3.0), 1.375, 1e-12) &&
	       close_rel(cf_balance(1.0 / 3.0), 1.5, 1e-12),
	       "closed forms at the reference point: 1.5 and 1.375");
	return tap_done();
}
