// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The weighted ring: a ring allreduce whose n chunks are sized to the
 * agreed view (coll/view.c), so that a degraded rank moves fewer bytes
 * than the others instead of pacing them.  Only the chunk sizes change;
 * the programs (coll/plan.c), their order and their numerics do not.
 *
 * In the ring, rank r sends every chunk but c_r in the reduce-scatter and
 * every chunk but c_(r+1) in the allgather, and receives every chunk but
 * c_(r-1), then every chunk but c_r.  With the data D = 1 and the chunks
 * pipelined in slices, rank r with bandwidth b_r is busy for
 *
 *	max(2 - c_r - c_(r+1), 2 - c_(r-1) - c_r) / b_r
 *
 * (its links send and receive at once), and the allreduce takes about the
 * largest of these.  The weights minimise it: for a time t, rank r needs
 * both sums of its two adjacent pairs of chunks to reach L_r = 2 - b_r t,
 * so each adjacent pair (k, k + 1) must reach M_k = max(L_k, L_(k+1)),
 * and t is feasible when the smallest total meeting every M_k is at most
 * 1.  With c_0 fixed, the smallest total on the rest of the cycle is
 * greedy (each c_k the least its pair with c_(k-1) needs: moving any
 * excess of c_k to c_(k+1) keeps every pair's sum), and that total is a
 * convex function of c_0 (an LP's value), so c_0 is found by ternary
 * search and t by bisection.
 *
 * Healthy ranks give equal chunks: the ring.  One rank at beta = 1/2 of
 * the others' bandwidth gets its own chunk (c_d) the whole data: the
 * reduce-scatter becomes a pipelined reduce into d along the ring and
 * the allgather a broadcast from d, d sends and receives D once, and the
 * time D / (beta B) is the R2CCL paper's lower bound T_LB (arXiv
 * 2512.25059).  For 1/2 < beta < 1 it is 2 (n - 1) D / ((n - 2 + 2 beta) B)
 * against the bound's 2 (n - 1) D / ((n - 1 + beta) B): 10% above at
 * n = 4, beta = 2/3, because d's neighbours carry the big chunk too.
 *
 * The library and r2cc-sim (tools/sim) both call this code; the weights
 * depend only on the view, so every rank computes the same ones.
 */
#include "coll/model/model.h"

static double dmax(double a, double b)
{
	return a > b ? a : b;
}

/* The smallest sum of c with c_0 = @c0 meeting every pair bound @m. */
static double greedy(int n, const double *m, double c0, double *c)
{
	double sum = c0;
	int k;

	c[0] = c0;
	for (k = 1; k < n; k++) {
		c[k] = dmax(0.0, m[k - 1] - c[k - 1]);
		if (k == n - 1)
			c[k] = dmax(c[k], m[n - 1] - c0);
		sum += c[k];
	}
	return sum;
}

/* The smallest total meeting @m, into @c (n >= 2); the c_0 search. */
static double least(int n, const double *m, double *c)
{
	double lo = 0.0, hi = 0.0;
	int k, it;

	for (k = 0; k < n; k++)
		hi = dmax(hi, m[k]);
	for (it = 0; it < 100; it++) {
		double a = lo + (hi - lo) / 3.0, b = hi - (hi - lo) / 3.0;

		if (greedy(n, m, a, c) <= greedy(n, m, b, c))
			hi = b;
		else
			lo = a;
	}
	return greedy(n, m, (lo + hi) / 2.0, c);
}

/* Each rank's pair bound for time @t: M_k = max(L_k, L_(k+1)). */
static void bounds(int n, const double *bw, double t, double *m)
{
	int k;

	for (k = 0; k < n; k++)
		m[k] = dmax(2.0 - bw[k] * t, 2.0 - bw[(k + 1) % n] * t);
}

double coll_ring_time(int n, const double *bw, const double *c)
{
	double t = 0.0;
	int r;

	for (r = 0; r < n && n > 1; r++) {
		double out = 2.0 - c[r] - c[(r + 1) % n];
		double in = 2.0 - c[(r + n - 1) % n] - c[r];

		if (bw[r] <= 0.0)
			return 1e300;
		t = dmax(t, dmax(out, in) / bw[r]);
	}
	return t;
}

double coll_ring_weights(int n, const double *bw, double *c, double *m)
{
	double lo = 0.0, hi, best;
	int k, it;

	for (k = 0; k < n; k++)
		c[k] = 1.0 / n;
	if (n < 3)
		return coll_ring_time(n, bw, c);
	hi = coll_ring_time(n, bw, c);
	best = hi;
	for (it = 0; it < 80 && hi < 1e299; it++) {
		double t = (lo + hi) / 2.0;

		/*
		 * lo and hi are neighbours: every later step would ask for lo
		 * or hi again and leave hi as it is.
		 */
		if (t <= lo || t >= hi)
			break;
		bounds(n, bw, t, m);
		if (least(n, m, c) <= 1.0)
			hi = t;
		else
			lo = t;
	}
	if (hi < best) {
		double sum;

		bounds(n, bw, hi, m);
		sum = least(n, m, c);
		/* more in a chunk never raises a rank's time: scale up to 1 */
		for (k = 0; k < n; k++)
			c[k] = sum > 0.0 ? c[k] / sum : 1.0 / n;
	} else {
		for (k = 0; k < n; k++)
			c[k] = 1.0 / n;
	}
	return coll_ring_time(n, bw, c);
}

void coll_equal_weights(int n, uint32_t *w)
{
	int k;

	for (k = 0; k < n; k++)
		w[k] = COLL_WEIGHT_ONE / (uint32_t)n +
		       ((uint32_t)k < COLL_WEIGHT_ONE % (uint32_t)n);
}

/*
 * A view as bandwidths relative to the fastest rank (@bw); false, with
 * equal weights in @w (unless NULL), when every rank has the same.
 */
static bool view_bw(int n, const uint32_t *mbps, uint32_t *w, double *bw)
{
	bool uneven = false;
	double top = 0.0;
	int k;

	for (k = 0; k < n; k++) {
		top = dmax(top, mbps[k]);
		uneven |= mbps[k] != mbps[0];
	}
	if (!uneven || top <= 0.0) {
		if (w)
			coll_equal_weights(n, w);
		return false;
	}
	/*
	 * A rank with nothing left still moves its data over the TCP
	 * fallback: count it at 1/64 of the fastest rather than 0.
	 */
	for (k = 0; k < n; k++)
		bw[k] = dmax(mbps[k], top / 64.0) / top;
	return true;
}

/* Fractions @c as integer weights summing to COLL_WEIGHT_ONE. */
static void to_weights(int n, const double *c, uint32_t *w)
{
	uint32_t given = 0;
	int k, big = 0;

	for (k = 0; k < n; k++) {
		w[k] = (uint32_t)(c[k] * COLL_WEIGHT_ONE);
		given += w[k];
	}
	/* rounding's remainder to the largest chunk, the first of equals */
	for (k = 1; k < n; k++)
		if (w[k] > w[big])
			big = k;
	w[big] += COLL_WEIGHT_ONE - given;
}

bool coll_ring_wquant(int n, const uint32_t *mbps, uint32_t *w, double *tmp)
{
	if (!view_bw(n, mbps, w, tmp))
		return false;
	coll_ring_weights(n, tmp, tmp + n, tmp + 2 * n);
	to_weights(n, tmp + n, w);
	return true;
}

void coll_chunk_w(size_t count, const uint32_t *w, int c, size_t *off,
		  size_t *len)
{
	unsigned __int128 a = 0, b;
	int k;

	for (k = 0; k < c; k++)
		a += w[k];
	b = a + w[c];
	*off = (size_t)(a * count / COLL_WEIGHT_ONE);
	*len = (size_t)(b * count / COLL_WEIGHT_ONE) - *off;
}

/*
 * The optimal allreduce (coll/direct.c): a reduce-scatter and an
 * allgather over the mesh, each rank r reducing its own piece, a fraction
 * p_r of the data, and sending the result to every other.  Rank r sends
 * its data of every other piece once (1 - p_r) and its result to n - 1
 * ranks ((n - 1) p_r), and receives as much, so it is busy for
 *
 *	(1 + (n - 2) p_r) / b_r.
 *
 * The largest of these is least when every rank with a share finishes at
 * the same t: p_r = (t b_r - 1) / (n - 2), summing to 1, so t is
 * (n - 2 + k) / (the k sharing ranks' bandwidth); a rank too slow for
 * any share (t b_r < 1) gets none and takes 1 / b_r, which is its own
 * data leaving it once, as it must.  With one rank at beta of the
 * others' B that is max(D / (beta B), 2 (n - 1) D / ((n - 1 + beta) B)),
 * the R2CCL paper's T_LB, for every beta; on two ranks every split moves
 * the same bytes, and the shares are equal.
 */
double coll_direct_time(int n, const double *bw, const double *p)
{
	double t = 0.0;
	int k;

	for (k = 0; k < n; k++)
		t = dmax(t, (1.0 + (n - 2) * p[k]) / bw[k]);
	return t;
}

double coll_direct_weights(int n, const double *bw, double *p)
{
	double t = 0.0, sum;
	int k, left = n, moved = 1;

	for (k = 0; k < n; k++)
		p[k] = 1.0 / n;
	if (n < 3)
		return coll_direct_time(n, bw, p);
	/*
	 * A rank that would get a negative share is out (p[k] < 0), for
	 * good: t only falls as ranks leave, so it stays too slow.
	 */
	while (moved) {
		moved = 0;
		for (k = 0, sum = 0.0; k < n; k++)
			if (p[k] >= 0.0)
				sum += bw[k];
		t = (n - 2 + left) / sum;
		for (k = 0; k < n; k++)
			if (p[k] >= 0.0 && t * bw[k] < 1.0) {
				p[k] = -1.0;
				left--;
				moved = 1;
			}
	}
	for (k = 0; k < n; k++)
		p[k] = p[k] < 0.0 ? 0.0 : (t * bw[k] - 1.0) / (n - 2);
	return coll_direct_time(n, bw, p);
}

bool coll_direct_wquant(int n, const uint32_t *mbps, uint32_t *w, double *tmp)
{
	double *p = tmp + n;
	uint32_t given = 0;
	int k, big;

	if (!view_bw(n, mbps, w, tmp))
		return false;
	coll_direct_weights(n, tmp, p);
	for (k = 0; k < n; k++) {
		w[k] = (uint32_t)(p[k] * COLL_WEIGHT_ONE);
		given += w[k];
	}
	/*
	 * The remainder, a unit each to the ranks rounded down, in rank
	 * order: a rank costs (n - 2) times its share, so the whole
	 * remainder on one rank would cost it up to n^2 / 65536 (3% at 64).
	 */
	for (k = 0; k < n && given < COLL_WEIGHT_ONE; k++)
		if (p[k] * COLL_WEIGHT_ONE > (double)w[k]) {
			w[k]++;
			given++;
		}
	for (k = 1, big = 0; k < n; k++)	/* shares summing below 1 */
		if (w[k] > w[big])
			big = k;
	w[big] += COLL_WEIGHT_ONE - given;
	return true;
}

/*
 * auto on a communicator with the mesh: the optimal allreduce for a view
 * in which its model time, the bound, is at most COLL_DIRECT_MARGIN of
 * the ring's.  Against the ring alone: the weighted ring is never below
 * the bound either, and auto takes it only well under the ring
 * (coll_sched_prefer_weighted).  An even view keeps the ring, which moves
 * the same bytes and is what has been measured at every scale.
 */
bool coll_auto_direct(int n, const uint32_t *mbps, double *tmp)
{
	double *bw = tmp, *p = tmp + n, *eq = tmp + 2 * n, td, tr;
	int k;

	if (n < 3 || n > COLL_AUTO_DIRECT_MAX || !view_bw(n, mbps, NULL, bw))
		return false;
	td = coll_direct_weights(n, bw, p);
	for (k = 0; k < n; k++)
		eq[k] = 1.0 / n;
	tr = coll_ring_time(n, bw, eq);
	return td <= COLL_DIRECT_MARGIN * tr;
}
