// SPDX-License-Identifier: GPL-2.0-only
/*
 * Conservation: whatever the failure state and schedule, every byte sent
 * is received, and the total equals the textbook algorithm's bytes; the
 * per-NIC shares of every policy sum to the node's traffic and put
 * nothing on a dead NIC.
 */
#include "simtest.h"

int main(void)
{
	struct fabric f = fab_make(1, 1, 8, 100);
	uint64_t seed = 42;
	int t, a, trial, bad_sum = 0, bad_alg = 0, bad_share = 0, plans = 0;
	int bad_dead = 0, pol;

	f.alpha = 1e-6;
	f.chunks = 8;
	tap_plan(4);
	for (trial = 0; trial < 300; trial++) {
		int n = 2 + (int)(rng_uniform(&seed) * 40), i;
		double bw[64], bytes = 1 + rng_uniform(&seed) * 1e10;
		struct plan p;

		/* a few degraded nodes at random levels */
		for (i = 0; i < n; i++)
			bw[i] = rng_uniform(&seed) < 0.3 ?
				1e9 * (0.05 + rng_uniform(&seed)) : 1.2e9;
		if (plan_init(&p, n, 2))
			return KSFT_FAIL;
		for (t = 0; t < COLL_NR; t++)
			for (a = 0; a < AR_NR; a++) {
				int m = t == COLL_SENDRECV ? 2 : n;
				double sent, want;

				if (a && t != COLL_ALLREDUCE)
					continue;
				plan_free(&p);
				if (plan_init(&p, m, 2) ||
				    coll_plan(&p, t, a, bw, m, bytes, &f))
					return KSFT_FAIL;
				plans++;
				sent = plan_sent(&p);
				want = coll_algo_bytes(t, m, bytes);
				if (!close_rel(sent, plan_recv(&p), 1e-9))
					bad_sum++;
				if (!close_rel(sent, want, 1e-9)) {
					bad_alg++;
					tap_diag("%s/%s n=%d: %.6g vs %.6g",
						 coll_name(t), ar_algo_name(a),
						 m, sent, want);
				}
			}
		plan_free(&p);
		/* NIC shares */
		for (pol = SHARE_EQUAL; pol <= SHARE_BALANCE; pol++) {
			double fr[8], sh[8], sum = 0.0, nb;
			int k;

			for (k = 0; k < 8; k++) {
				double u = rng_uniform(&seed);

				fr[k] = u < 0.2 ? 0.0 : u < 0.4 ? u : 1.0;
			}
			nb = node_bw(&f, fr, pol, sh);
			if (nb <= 0.0)
				continue;
			for (k = 0; k < 8; k++) {
				sum += sh[k];
				if (fr[k] <= 0.0 && sh[k] != 0.0)
					bad_dead++;
			}
			if (!close_rel(sum, 1.0, 1e-12))
				bad_share++;
		}
	}
	tap_ok(!bad_sum, "bytes sent = bytes received in %d plans", plans);
	tap_ok(!bad_alg, "bytes sent = the algorithm's bytes in %d plans",
	       plans);
	tap_ok(!bad_share, "NIC shares sum to the node's traffic");
	tap_ok(!bad_dead, "no share on a dead NIC when the node can move");
	return tap_done();
}
