// SPDX-License-Identifier: GPL-2.0-only
/*
 * A node's usable network bandwidth under a NIC-sharing policy.
 *
 * Every collective in the simulator is synchronous, so a node's time is
 * its traffic divided by the bandwidth it can actually use.  That depends
 * on how traffic is bound to NICs: NCCL binds channels to NICs in equal
 * shares, so one slow NIC throttles the whole node; port failover adds a
 * dead NIC's share to one partner; Balance spreads by live bandwidth.
 */
#include <math.h>
#include <stddef.h>

#include "sim.h"

/* Worst share/bandwidth ratio over the NICs; 0 bandwidth means stuck. */
static double worst_ratio(const struct fabric *f, const double *frac,
			  const double *share)
{
	double worst = 0.0;
	int k;

	for (k = 0; k < f->nics; k++) {
		double r;

		if (share[k] <= 0.0)
			continue;
		if (frac[k] <= 0.0)
			return INFINITY;
		r = share[k] / (frac[k] * f->nic_bw);
		if (r > worst)
			worst = r;
	}
	return worst;
}

/*
 * Returns bytes/s the node moves with @pol, 0 if it cannot move anything
 * (the strategy must abort).  @share, if given, receives the fraction of
 * the node's traffic on each NIC; it sums to 1 whenever the result is > 0.
 */
double node_bw(const struct fabric *f, const double *frac,
	       enum share_policy pol, double *share)
{
	double local[SIM_MAX_NICS], sum = 0.0, moved = 0.0, ratio;
	double *sh = share ? share : local;
	int k, j, g;

	for (k = 0; k < f->nics; k++) {
		sum += frac[k];
		sh[k] = 1.0 / f->nics;
	}
	if (sum <= 0.0)
		return 0.0;

	switch (pol) {
	case SHARE_EQUAL:
		break;
	case SHARE_PARTNER:
		/* One partner per dead NIC, inside its fused group. */
		for (k = 0; k < f->nics; k++) {
			if (frac[k] > 0.0)
				continue;
			g = k - k % f->fuse;
			for (j = g; j < g + f->fuse && j < f->nics; j++)
				if (j != k && frac[j] > 0.0)
					break;
			if (j >= g + f->fuse || j >= f->nics)
				return 0.0;
			sh[j] += sh[k];
			sh[k] = 0.0;
		}
		break;
	case SHARE_BALANCE:
		for (k = 0; k < f->nics; k++) {
			double want = frac[k] / sum;

			/* traffic of a NIC that lost share crosses the node */
			if (want < sh[k])
				moved += sh[k] - want;
			sh[k] = want;
		}
		ratio = 1.0 / (sum * f->nic_bw);
		if (f->intra_bw > 0.0 && moved / f->intra_bw > ratio)
			ratio = moved / f->intra_bw;
		return 1.0 / ratio;
	}
	ratio = worst_ratio(f, frac, sh);
	return isinf(ratio) ? 0.0 : 1.0 / ratio;
}
