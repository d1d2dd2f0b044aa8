// SPDX-License-Identifier: GPL-2.0-only
/*
 * Collective schedules under the alpha-beta model, built as explicit
 * per-node byte counts so that timing and byte conservation come from the
 * same numbers.  @bw holds each node's usable bandwidth (see fabric.c);
 * the slowest node of a phase sets its length.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"
#include "coll/model/model.h"

static const char *const coll_names[COLL_NR] = {
	[COLL_ALLREDUCE] = "allreduce",
	[COLL_TREE_ALLREDUCE] = "tree-allreduce",
	[COLL_ALLGATHER] = "allgather",
	[COLL_REDUCE_SCATTER] = "reduce-scatter",
	[COLL_BROADCAST] = "broadcast",
	[COLL_ALLTOALL] = "alltoall",
	[COLL_SENDRECV] = "sendrecv",
};

static const char *const ar_names[AR_NR] = {
	[AR_RING] = "ring", [AR_PAPER] = "r2cc-ar", [AR_OVERLAP] = "overlap",
	[AR_WEIGHTED] = "weighted", [AR_DIRECT] = "optimal",
	[AR_LIB_PAPER] = "r2cc-lib-ar",
};

const char *coll_name(enum coll_type t) { return coll_names[t]; }
const char *ar_algo_name(enum ar_algo a) { return ar_names[a]; }

int coll_parse(const char *s)
{
	int i;

	for (i = 0; i < COLL_NR; i++)
		if (!strcmp(s, coll_names[i]))
			return i;
	return -1;
}

/* T/T_nf of ring allreduce when the slowest node lost fraction x. */
double cf_balance(double x)
{
	return 1.0 / (1.0 - x);
}

/* T/T_nf of R2CC-AllReduce, single degraded node, fluid pipeline. */
double cf_r2cc_ar(int n, double x)
{
	return 1.0 + n * x / (2.0 * (n - 1) * (1.0 - x));
}

/* Bytes every node sends in total, for the textbook algorithm. */
double coll_algo_bytes(enum coll_type type, int n, double bytes)
{
	if (n < 2)
		return 0.0;
	switch (type) {
	case COLL_ALLREDUCE:
	case COLL_TREE_ALLREDUCE:
		return 2.0 * (n - 1) * bytes;
	case COLL_SENDRECV:
		return bytes;
	default:
		return (n - 1) * bytes;
	}
}

/* ------------------------------------------------------------ plans */

int plan_init(struct plan *p, int n, int maxphase)
{
	memset(p, 0, sizeof(*p));
	p->n = n;
	p->maxphase = maxphase < 1 ? 1 : maxphase;
	p->snd = calloc((size_t)n * p->maxphase, sizeof(double));
	p->rcv = calloc((size_t)n * p->maxphase, sizeof(double));
	p->lat = calloc(p->maxphase, sizeof(double));
	p->fill = calloc(p->maxphase, sizeof(double));
	if (!p->snd || !p->rcv || !p->lat || !p->fill) {
		plan_free(p);
		return -1;
	}
	return 0;
}

void plan_free(struct plan *p)
{
	free(p->snd);
	free(p->rcv);
	free(p->lat);
	free(p->fill);
	memset(p, 0, sizeof(*p));
}

void plan_reset(struct plan *p)
{
	memset(p->snd, 0, sizeof(double) * p->n * p->maxphase);
	memset(p->rcv, 0, sizeof(double) * p->n * p->maxphase);
	memset(p->lat, 0, sizeof(double) * p->maxphase);
	memset(p->fill, 0, sizeof(double) * p->maxphase);
	p->nphase = 0;
}

/* Make phase @ph exist; a deep recursion may need more phases. */
static int need_phase(struct plan *p, int ph)
{
	if (ph >= p->maxphase) {
		struct plan q;
		int i;

		if (plan_init(&q, p->n, ph * 2 + 2))
			return -1;
		memcpy(q.snd, p->snd, sizeof(double) * p->n * p->maxphase);
		memcpy(q.rcv, p->rcv, sizeof(double) * p->n * p->maxphase);
		for (i = 0; i < p->maxphase; i++) {
			q.lat[i] = p->lat[i];
			q.fill[i] = p->fill[i];
		}
		q.nphase = p->nphase;
		plan_free(p);
		*p = q;
	}
	if (ph + 1 > p->nphase)
		p->nphase = ph + 1;
	return 0;
}

static void add(struct plan *p, int ph, int node, double s, double r)
{
	p->snd[(size_t)ph * p->n + node] += s;
	p->rcv[(size_t)ph * p->n + node] += r;
}

static void at_least(double *v, double x)
{
	if (x > *v)
		*v = x;
}

double plan_time(const struct plan *p, const double *bw)
{
	double t = 0.0;
	int ph, i;

	for (ph = 0; ph < p->nphase; ph++) {
		double worst = 0.0;

		for (i = 0; i < p->n; i++) {
			double s = p->snd[(size_t)ph * p->n + i];
			double r = p->rcv[(size_t)ph * p->n + i];
			double v = s > r ? s : r;

			if (v <= 0.0)
				continue;
			if (bw[i] <= 0.0)
				return INFINITY;
			at_least(&worst, v / bw[i]);
		}
		t += worst + p->lat[ph] + p->fill[ph];
	}
	return t;
}

static double plan_sum(const struct plan *p, const double *v)
{
	double s = 0.0;
	size_t i;

	for (i = 0; i < (size_t)p->n * p->nphase; i++)
		s += v[i];
	return s;
}

double plan_sent(const struct plan *p) { return plan_sum(p, p->snd); }
double plan_recv(const struct plan *p) { return plan_sum(p, p->rcv); }

/* ------------------------------------------------------------ allreduce */

/*
 * Chunks for pipelining @bytes: --chunks, but none smaller than 64 KiB,
 * below which a chunk's latency costs more than its overlap saves.
 */
static int chunks_for(const struct fabric *f, double bytes)
{
	double most = floor(bytes / 65536.0);

	if (!f->chunks)
		return 0;
	if (most < 1.0)
		return 1;
	return most < f->chunks ? (int)most : f->chunks;
}

static void ring_ar(struct plan *p, int ph, const int *idx, int m, double s,
		    double alpha)
{
	double c = 2.0 * (m - 1) / m;
	int j;

	if (m < 2 || s <= 0.0)
		return;
	for (j = 0; j < m; j++)
		add(p, ph, idx[j], c * s, c * s);
	at_least(&p->lat[ph], 2.0 * (m - 1) * alpha);
}

/*
 * Levels of recursion, one per degraded node peeled off; deeper than this
 * the inner nodes use a ring, which keeps a state with thousands of
 * degraded nodes at O(MAX_DEPTH * n) instead of O(n^2).
 */
#define MAX_DEPTH	32

/*
 * Seconds per byte of the best R2CC-AllReduce recursion (alpha and fill
 * left out), used to decide at each level between the decomposition and
 * a plain ring.  With w the slowest node, v the next, B the fastest and
 * Q the others' own cost plus their share of the reduce + broadcast, the
 * decomposition costs c/B + (1 - w/B) max(1/w, Q): linear in 1/L for any
 * ring level L, so the best L is an extreme, w (a ring) or B.  Taking B
 * (not v) keeps the cost monotone in every node's bandwidth.
 */
static double paper_unit(const double *bw, const int *idx, int m, int depth)
{
	double c = 2.0 * (m - 1) / m, w, v, big, q, ring, dec;

	if (m < 2)
		return 0.0;
	w = bw[idx[0]];
	v = bw[idx[1]];
	big = bw[idx[m - 1]];
	ring = c / w;
	if (w >= big || depth >= MAX_DEPTH)
		return ring;
	q = 1.0 / ((m - 1) * v) + paper_unit(bw, idx + 1, m - 1, depth + 1);
	dec = c / big + (1.0 - w / big) * (1.0 / w > q ? 1.0 / w : q);
	return dec < ring ? dec : ring;
}

static double phase_time(const struct plan *p, int ph, const double *bw)
{
	double worst = 0.0;
	int i;

	for (i = 0; i < p->n; i++) {
		double s = p->snd[(size_t)ph * p->n + i];
		double r = p->rcv[(size_t)ph * p->n + i];

		if ((s > 0.0 || r > 0.0) && (s > r ? s : r) / bw[i] > worst)
			worst = (s > r ? s : r) / bw[i];
	}
	return worst + p->lat[ph] + p->fill[ph];
}

/*
 * R2CC-AllReduce.  @idx is sorted by bandwidth, slowest first.  The ring
 * over all nodes carries the share w/B of the data that the slowest node
 * (w) finishes in the time the fastest (B) needs for all of it; the rest
 * is reduced into and broadcast from the other nodes, which allreduce it
 * among themselves - recursively, so a second degraded node is handled
 * the same way one level down.  The reduce + broadcast runs alongside the
 * inner phases, spread over them by their length.  Returns phases used.
 */
static int paper_ar(struct plan *p, int ph, const double *bw, const int *idx,
		    int m, double s, const struct fabric *f, int depth)
{
	double w, big, a, rest, d[64], total = 0.0;
	int j, k, used, q;

	if (need_phase(p, ph))
		return -1;
	w = bw[idx[0]];
	big = m > 1 ? bw[idx[m - 1]] : w;
	if (m < 2 || w >= big || depth >= MAX_DEPTH) {
		ring_ar(p, ph, idx, m, s, f->alpha);
		return 1;
	}
	a = w / big;
	rest = (1.0 - a) * s;
	k = chunks_for(f, rest);
	ring_ar(p, ph, idx, m, a * s, f->alpha);
	if (need_phase(p, ph + 1))
		return -1;
	if (m > 2 && paper_unit(bw, idx + 1, m - 1, depth + 1) <
		     2.0 * (m - 2) / (m - 1) / bw[idx[1]]) {
		used = paper_ar(p, ph + 1, bw, idx + 1, m - 1, rest, f,
				depth + 1);
	} else {
		ring_ar(p, ph + 1, idx + 1, m - 1, rest, f->alpha);
		used = 1;
	}
	if (used < 0)
		return -1;
	for (q = 0; q < used && q < 64; q++) {
		d[q] = phase_time(p, ph + 1 + q, bw);
		total += d[q];
	}
	for (q = 0; q < used && q < 64; q++) {
		double x = total > 0.0 ? rest * d[q] / total : rest;

		if (total <= 0.0 && q)
			break;
		/* reduce out (send), broadcast back (receive): full duplex */
		add(p, ph + 1 + q, idx[0], x, x);
		for (j = 1; j < m; j++)
			add(p, ph + 1 + q, idx[j], x / (m - 1), x / (m - 1));
	}
	at_least(&p->lat[ph + 1], (k ? k + 1 : 2) * f->alpha);
	if (k)
		at_least(&p->fill[ph + 1], rest / w / k);
	return used + 1;
}

/* The slower of the degraded node and the rest, per byte, at split @u. */
static double ov_cost(double u, double c, const double *bw, const int *idx,
		      int m, const double *g)
{
	double worst = (c * (1.0 - u) + u) / bw[idx[0]];
	int j;

	for (j = 1; j < m; j++)
		at_least(&worst, (c * (1.0 - u) + u / (m - 1) +
				  u * g[idx[j]]) / bw[idx[j]]);
	return worst;
}

/*
 * Beyond the paper: the same decomposition, but the ring share and the
 * reduce + broadcast share run concurrently (chunk-pipelined), and the
 * split u is chosen so the degraded node and the others finish together.
 * Writes per-byte per-direction volumes into @g and returns the top-level
 * u.  The cost is a maximum of linear functions of u, hence convex, so a
 * ternary search finds the optimum.
 */
static double overlap_unit(double *g, const double *bw, const int *idx,
			   int m, int depth)
{
	double c = 2.0 * (m - 1) / m, lo = 0.0, hi = 1.0, u;
	int j, it;

	if (m < 2)
		return 0.0;
	/* with two nodes the split cannot help: both halves cross w */
	if (m < 3 || bw[idx[0]] >= bw[idx[1]] || depth >= MAX_DEPTH) {
		for (j = 0; j < m; j++)
			g[idx[j]] = c;
		return 0.0;
	}
	overlap_unit(g, bw, idx + 1, m - 1, depth + 1);
	for (it = 0; it < 100; it++) {
		double m1 = lo + (hi - lo) / 3.0, m2 = hi - (hi - lo) / 3.0;

		if (ov_cost(m1, c, bw, idx, m, g) <= ov_cost(m2, c, bw, idx,
							      m, g))
			hi = m2;
		else
			lo = m1;
	}
	u = (lo + hi) / 2.0;
	g[idx[0]] = c * (1.0 - u) + u;
	for (j = 1; j < m; j++)
		g[idx[j]] = c * (1.0 - u) + u / (m - 1) + u * g[idx[j]];
	return u;
}

/* The view as the library has it: Mbit/s per node. */
static void view_mbps(const double *bw, int n, uint32_t *mbps)
{
	int r;

	for (r = 0; r < n; r++)
		mbps[r] = bw[r] * 8e-6 > 4e9 ? 4000000000u :
			  (uint32_t)(bw[r] * 8e-6 + 0.5);
}

typedef bool (*wquant_fn)(int n, const uint32_t *mbps, uint32_t *w,
			  double *tmp);

/*
 * The library's weights depend on the view alone, which changes far less
 * often than they are asked for: every failure state asks each strategy,
 * and r2cc-lib asks twice (auto's choice, then the schedule it chose).
 * The last WQ_KEEP answers are kept, the oldest replaced first, and never
 * freed: a few views' worth of memory for the life of the process.
 */
#define WQ_KEEP	8

static struct wq_memo {
	wquant_fn quant;
	int n;
	bool uneven;		/* what quant returned */
	uint32_t *mbps, *w;
} wq_memo[WQ_KEEP];
static unsigned int wq_next;

/*
 * @quant(@n, @mbps, @w, scratch) as the library computes it, or its kept
 * answer for the same view: 1 or 0 as @quant returns, -1 out of memory.
 */
static int wquant(wquant_fn quant, int n, const uint32_t *mbps, uint32_t *w)
{
	size_t bytes = (size_t)n * sizeof(*mbps);
	struct wq_memo *m;
	double *tmp;
	unsigned int i;

	for (i = 0; i < WQ_KEEP; i++) {
		m = &wq_memo[i];
		if (m->quant == quant && m->n == n &&
		    !memcmp(m->mbps, mbps, bytes)) {
			memcpy(w, m->w, bytes);
			return m->uneven;
		}
	}
	tmp = calloc((size_t)n * 3, sizeof(*tmp));
	if (!tmp)
		return -1;
	m = &wq_memo[wq_next];
	wq_next = (wq_next + 1) % WQ_KEEP;
	m->quant = NULL;
	free(m->mbps);
	m->mbps = malloc(bytes * 2);
	m->uneven = quant(n, mbps, w, tmp);
	free(tmp);
	if (m->mbps) {
		m->w = m->mbps + n;
		memcpy(m->mbps, mbps, bytes);
		memcpy(m->w, w, bytes);
		m->n = n;
		m->quant = quant;
	}
	return m->uneven;
}

/*
 * The library's shares for @n ranks at @bw, through its view in Mbit/s
 * and quantised by @quant (coll_ring_wquant or coll_direct_wquant), as
 * fractions of the data; NULL when out of memory.
 */
static double *lib_shares(const double *bw, int n, wquant_fn quant)
{
	uint32_t *mbps = calloc((size_t)n * 2, sizeof(*mbps));
	double *frac = calloc((size_t)n, sizeof(*frac));
	int r;

	if (mbps && frac) {
		view_mbps(bw, n, mbps);
		if (wquant(quant, n, mbps, mbps + n) < 0) {
			free(frac);
			frac = NULL;
		}
		for (r = 0; frac && r < n; r++)
			frac[r] = (double)mbps[n + r] / COLL_WEIGHT_ONE;
	} else {
		free(frac);
		frac = NULL;
	}
	free(mbps);
	return frac;
}

/*
 * The library's weighted ring (lib/coll/model/weight.c, the same code): the
 * ring's programs with chunk c_r, so that rank r sends 2 - c_r - c_(r+1)
 * and receives 2 - c_(r-1) - c_r times the data, pipelined in one phase.
 * The weights come from the bandwidths in Mbit/s, as the view has them.
 */
static int weighted_ar(struct plan *p, const double *bw, int n, double s,
		       double alpha)
{
	double *c;
	int r;

	if (need_phase(p, 0) || !(c = lib_shares(bw, n, coll_ring_wquant)))
		return -1;
	for (r = 0; r < n && n > 1; r++)
		add(p, 0, r, (2.0 - c[r] - c[(r + 1) % n]) * s,
		    (2.0 - c[(r + n - 1) % n] - c[r]) * s);
	if (n > 1)
		at_least(&p->lat[0], 2.0 * (n - 1) * alpha);
	free(c);
	return 0;
}

/*
 * The library's optimal allreduce (lib/coll/direct.c, its shares from
 * lib/coll/model/weight.c): rank r owning p_r of the data sends (1 - p_r) to
 * the owners and (n - 1) p_r of results, and receives as much, in one
 * pipelined phase of two message latencies.
 */
static int direct_ar(struct plan *p, const double *bw, int n, double s,
		     double alpha)
{
	double *c;
	int r;

	if (need_phase(p, 0) || !(c = lib_shares(bw, n, coll_direct_wquant)))
		return -1;
	for (r = 0; r < n && n > 1; r++) {
		double v = (1.0 + (n - 2) * c[r]) * s;

		add(p, 0, r, v, v);
	}
	if (n > 1)
		at_least(&p->lat[0], 2.0 * alpha);
	free(c);
	return 0;
}

/*
 * The library's R2CC-AllReduce (lib/coll/paper.c, R2CC_ALGO=r2cc-ar): from
 * the view (Mbit/s, as the library rounds them), the ring over every node
 * takes the share w/B of the data, w the slowest node's value and B the
 * fastest's; then the rest goes by the optimal schedule with no share for
 * the slowest node and equal shares for the others: it sends its data of
 * the rest once and receives the result once, each other node moves
 * (1 + (n - 2) / (n - 1)) of the rest each way.  The two parts run one
 * after the other.  Unlike the paper's own model (paper_ar) it does not
 * recurse into a second degraded node, nor overlap the parts.
 */
static int lib_paper_ar(struct plan *p, const double *bw, const int *idx,
			int n, double s, double alpha)
{
	uint32_t *mbps = calloc((size_t)n, sizeof(*mbps)), lo = UINT32_MAX;
	uint32_t hi = 0;
	int r, slow = 0;
	double a = 1.0, rest;

	if (!mbps || need_phase(p, 1)) {
		free(mbps);
		return -1;
	}
	view_mbps(bw, n, mbps);
	for (r = 0; r < n; r++) {
		if (mbps[r] < lo) {
			lo = mbps[r];
			slow = r;
		}
		if (mbps[r] > hi)
			hi = mbps[r];
	}
	free(mbps);
	if (lo < hi)
		a = (double)lo / hi;
	ring_ar(p, 0, idx, n, a * s, alpha);
	rest = (1.0 - a) * s;
	if (rest <= 0.0 || n < 2)
		return 0;
	for (r = 0; r < n; r++) {
		double v = r == slow ? rest :
			   (1.0 + (n - 2.0) / (n - 1.0)) * rest;

		add(p, 1, r, v, v);
	}
	at_least(&p->lat[1], 2.0 * alpha);
	return 0;
}

int ar_lib_weighted(const double *bw, int n, double bytes)
{
	uint32_t *mbps = calloc((size_t)n * 2, sizeof(*mbps));
	double count = bytes / 4.0;
	int rc = -1;

	if (mbps && !coll_sched_reaches(n)) {
		rc = 0;		/* as auto: the ring, unasked */
	} else if (mbps) {
		view_mbps(bw, n, mbps);
		rc = wquant(coll_ring_wquant, n, mbps, mbps + n);
		if (rc > 0 && count >= 1.0)
			rc = coll_sched_prefer_weighted(n, mbps, mbps + n,
				count > 1e15 ? (size_t)1e15 : (size_t)count,
				4, COLL_SLICE_DEFAULT, COLL_DEPTH_DEFAULT,
				COLL_SETS_DEFAULT);
		else if (rc > 0)
			rc = 0;
	}
	free(mbps);
	return rc;
}

int ar_lib_auto(const double *bw, int n, double bytes, bool mesh)
{
	uint32_t *mbps = calloc((size_t)n, sizeof(*mbps));
	double *tmp = calloc((size_t)n * 3, sizeof(*tmp));
	int rc = -1;

	if (mbps && tmp) {
		view_mbps(bw, n, mbps);
		rc = mesh && coll_auto_direct(n, mbps, tmp) ? AR_DIRECT : -2;
	}
	free(mbps);
	free(tmp);
	if (rc == -2) {
		rc = ar_lib_weighted(bw, n, bytes);
		rc = rc < 0 ? -1 : rc ? AR_WEIGHTED : AR_RING;
	}
	return rc;
}

static const double *by_bw_v;

static int by_bw(const void *a, const void *b)
{
	double x = by_bw_v[*(const int *)a], y = by_bw_v[*(const int *)b];

	return (x > y) - (x < y);
}

static int allreduce(struct plan *p, enum ar_algo algo, const double *bw,
		     int n, double s, const struct fabric *f)
{
	int *idx = malloc(sizeof(int) * n), i, rc = 0;
	double *g, u;

	if (!idx)
		return -1;
	for (i = 0; i < n; i++)
		idx[i] = i;
	by_bw_v = bw;
	qsort(idx, n, sizeof(int), by_bw);
	switch (algo) {
	case AR_RING:
		if (need_phase(p, 0))
			rc = -1;
		else
			ring_ar(p, 0, idx, n, s, f->alpha);
		break;
	case AR_PAPER:
		rc = paper_ar(p, 0, bw, idx, n, s, f, 0) < 0 ? -1 : 0;
		break;
	case AR_OVERLAP:
		g = calloc(n, sizeof(double));
		if (!g || need_phase(p, 0)) {
			free(g);
			rc = -1;
			break;
		}
		u = overlap_unit(g, bw, idx, n, 0);
		for (i = 0; i < n; i++)
			add(p, 0, i, g[i] * s, g[i] * s);
		at_least(&p->lat[0], 2.0 * (n - 1) * f->alpha);
		if (u > 0.0) {
			int k = chunks_for(f, u * s);

			at_least(&p->lat[0], (k ? k + 1 : 2) * f->alpha);
			if (k)
				p->fill[0] = u * s / bw[idx[0]] / k;
		}
		free(g);
		break;
	case AR_WEIGHTED:
		rc = weighted_ar(p, bw, n, s, f->alpha);
		break;
	case AR_DIRECT:
		rc = direct_ar(p, bw, n, s, f->alpha);
		break;
	case AR_LIB_PAPER:
		rc = lib_paper_ar(p, bw, idx, n, s, f->alpha);
		break;
	case AR_NR:
		rc = -1;
		break;
	}
	free(idx);
	return rc;
}

/*
 * Build the schedule of one collective over @n nodes with @bytes per
 * node (the buffer each node contributes or, for allgather, receives).
 */
int coll_plan(struct plan *p, enum coll_type type, enum ar_algo algo,
	      const double *bw, int n, double bytes, const struct fabric *f)
{
	double part = n > 0 ? bytes * (n - 1) / n : 0.0;
	int i;

	plan_reset(p);
	if (n < 1 || bytes < 0.0 || p->n != n)
		return -1;
	if (type == COLL_ALLREDUCE)
		return allreduce(p, algo, bw, n, bytes, f);
	if (need_phase(p, 0))
		return -1;
	if (n < 2)
		return 0;
	switch (type) {
	case COLL_TREE_ALLREDUCE:
		/* NCCL's double binary tree reaches ring bus bandwidth */
		for (i = 0; i < n; i++)
			add(p, 0, i, 2.0 * part, 2.0 * part);
		p->lat[0] = 2.0 * ceil(log2(n)) * f->alpha;
		break;
	case COLL_ALLGATHER:
	case COLL_REDUCE_SCATTER:
	case COLL_ALLTOALL:
		for (i = 0; i < n; i++)
			add(p, 0, i, part, part);
		p->lat[0] = (n - 1) * f->alpha;
		break;
	case COLL_BROADCAST:
		/* pipelined chain from node 0 */
		for (i = 0; i < n; i++)
			add(p, 0, i, i < n - 1 ? bytes : 0.0,
			    i > 0 ? bytes : 0.0);
		p->lat[0] = (n - 1) * f->alpha;
		break;
	case COLL_SENDRECV:
		add(p, 0, 0, bytes, 0.0);
		add(p, 0, 1, 0.0, bytes);
		p->lat[0] = f->alpha;
		break;
	default:
		return -1;
	}
	return 0;
}
