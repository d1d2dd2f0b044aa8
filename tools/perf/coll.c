// SPDX-License-Identifier: GPL-2.0-only
/*
 * --coll: one collective kind on a communicator of every rank, per size:
 * a warm-up call, then --iters timed calls one after another, every result
 * checked against what the ranks' inputs make it.  Sizes count as
 * nccl-tests counts them (the largest buffer: allgather's output,
 * reduce-scatter's input), and so do algbw (size / time) and busbw
 * (algbw x 2(n-1)/n for allreduce, x (n-1)/n for allgather and
 * reduce-scatter, x 1 for broadcast and reduce), so that busbw can be
 * held against a link's bandwidth whatever the rank count.  A call's time
 * is the slowest rank's median.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <r2cc/bootstrap.h>
#include <r2cc/coll.h>

#include "perf.h"

const char *perf_coll_name(enum perf_coll k)
{
	static const char *const names[] = {
		[PERF_ALLREDUCE] = "allreduce",
		[PERF_REDUCE_SCATTER] = "reduce_scatter",
		[PERF_ALLGATHER] = "allgather",
		[PERF_BROADCAST] = "broadcast",
		[PERF_REDUCE] = "reduce",
	};

	return k >= PERF_ALLREDUCE && k <= PERF_REDUCE ? names[k] : "?";
}

/* Rank @r's input element @i in iteration @it: small, so sums are exact. */
static int32_t val(int r, size_t i, uint64_t it)
{
	return (int32_t)(((i * 7 + it) % 97) * (uint64_t)(r + 1));
}

static int32_t sum(int n, size_t i, uint64_t it)
{
	return (int32_t)(((i * 7 + it) % 97) * ((uint64_t)n * (n + 1) / 2));
}

struct coll_run {
	enum perf_coll kind;
	int rank, n;
	size_t count;		/* elements per call, as the API takes it */
	size_t in_n, out_n;	/* elements of this rank's buffers */
	int32_t *in, *out;
};

static void fill(struct coll_run *c, uint64_t it)
{
	size_t i;

	for (i = 0; i < c->in_n; i++)
		c->in[i] = val(c->rank, i, it);
	memset(c->out, 0xa5, c->out_n * sizeof(*c->out));
}

/* Wrong elements of this rank's result. */
static size_t check(const struct coll_run *c, uint64_t it)
{
	size_t i, bad = 0, base = (size_t)c->rank * c->count;

	for (i = 0; i < c->out_n; i++) {
		int32_t want;

		switch (c->kind) {
		case PERF_ALLREDUCE:
			want = sum(c->n, i, it);
			break;
		case PERF_REDUCE_SCATTER:
			want = sum(c->n, base + i, it);
			break;
		case PERF_ALLGATHER:
			want = val((int)(i / c->count), i % c->count, it);
			break;
		case PERF_BROADCAST:
			want = val(0, i, it);
			break;
		default:	/* reduce: only the root has a result */
			if (c->rank)
				return 0;
			want = sum(c->n, i, it);
		}
		bad += c->out[i] != want;
	}
	return bad;
}

static int issue(struct r2cc_comm *comm, struct coll_run *c,
		 struct r2cc_coll **q)
{
	switch (c->kind) {
	case PERF_ALLREDUCE:
		return r2cc_allreduce(comm, c->in, c->out, c->count,
				      R2CC_INT32, R2CC_SUM, q);
	case PERF_REDUCE_SCATTER:
		return r2cc_reduce_scatter(comm, c->in, c->out, c->count,
					   R2CC_INT32, R2CC_SUM, q);
	case PERF_ALLGATHER:
		return r2cc_allgather(comm, c->in, c->out, c->count,
				      R2CC_INT32, q);
	case PERF_BROADCAST:
		return r2cc_broadcast(comm, c->in, c->out, c->count,
				      R2CC_INT32, 0, q);
	default:
		return r2cc_reduce(comm, c->in, c->out, c->count, R2CC_INT32,
				   R2CC_SUM, 0, q);
	}
}

/* One call to completion, bounded by --timeout; its seconds. */
static double one(struct perf *p, struct r2cc_comm *comm, struct coll_run *c)
{
	struct r2cc_coll *q;
	double t0 = perf_now(), t;
	int done = 0, ret;

	ret = issue(comm, c, &q);
	if (ret)
		die_op(perf_coll_name(c->kind), ret, NULL);
	while (!(ret = r2cc_coll_test(q, &done)) && !done)
		if (perf_now() - t0 > p->o.timeout)
			die("%s did not complete in %g s (--timeout)",
			    perf_coll_name(c->kind), p->o.timeout);
	t = perf_now() - t0;
	if (ret)
		die_op("r2cc_coll_test", ret, perf_coll_name(c->kind));
	return t;
}

/* Elements per call and per buffer for @bytes as nccl-tests counts them. */
static void geometry(struct coll_run *c, uint64_t bytes)
{
	size_t elems = bytes / sizeof(int32_t);
	size_t per = elems / (size_t)c->n;

	switch (c->kind) {
	case PERF_REDUCE_SCATTER:
		c->count = per;
		c->in_n = per * (size_t)c->n;
		c->out_n = per;
		break;
	case PERF_ALLGATHER:
		c->count = per;
		c->in_n = per;
		c->out_n = per * (size_t)c->n;
		break;
	default:
		c->count = elems;
		c->in_n = c->out_n = elems;
	}
}

static double bus_factor(const struct coll_run *c)
{
	double n = c->n;

	if (c->kind == PERF_ALLREDUCE)
		return 2 * (n - 1) / n;
	if (c->kind == PERF_REDUCE_SCATTER || c->kind == PERF_ALLGATHER)
		return (n - 1) / n;
	return 1;
}

struct coll_report {
	double med, min;
	uint64_t bad;
};

static void phase(struct perf *p, struct r2cc_comm *comm, struct coll_run *c,
		  uint64_t bytes)
{
	uint64_t it, iters = p->o.iters, bad = 0, i;
	struct r2cc_comm_stats st0 = { .size = sizeof(st0) };
	struct r2cc_comm_stats st = { .size = sizeof(st) };
	struct coll_report mine, *all;
	double *t = calloc(iters, sizeof(*t)), med = 0, min = 0, moved;
	int ret, r;

	all = calloc((size_t)c->n, sizeof(*all));
	if (!t || !all)
		die("out of memory");
	geometry(c, bytes);
	c->in = calloc(c->in_n + 1, sizeof(*c->in));
	c->out = calloc(c->out_n + 1, sizeof(*c->out));
	if (!c->in || !c->out)
		die("cannot allocate %zu + %zu elements", c->in_n, c->out_n);
	r2cc_comm_stats(comm, &st0);
	for (it = 0; it <= iters; it++) {	/* iteration 0 warms up */
		double dt;

		if (p->o.verify || !it)
			fill(c, it);
		dt = one(p, comm, c);
		if (p->o.verify)
			bad += check(c, it);
		if (it)
			t[it - 1] = dt;
	}
	r2cc_comm_stats(comm, &st);
	mine.med = perf_percentile(t, iters, 50);
	mine.min = t[0];
	mine.bad = bad;
	ret = r2cc_boot_allgather(p->boot, &mine, sizeof(mine), all);
	if (ret)
		die_op("r2cc_boot_allgather", ret, "results");
	for (r = 0; r < c->n; r++) {
		med = all[r].med > med ? all[r].med : med;
		min = all[r].min > min ? all[r].min : min;
		p->failed |= all[r].bad != 0;
	}
	for (bad = 0, i = 0; i < (uint64_t)c->n; i++)
		bad += all[i].bad;
	moved = (double)(c->kind == PERF_REDUCE_SCATTER ? c->in_n : c->out_n) *
		sizeof(int32_t);
	if (!c->rank) {
		double alg = med > 0 ? moved * 8 / med / 1e6 : 0;

		printf("%s %.0f B (%zu int32 per rank) on %d ranks x %llu: median %.1f us, min %.1f us, algbw %.1f Mbit/s, busbw %.1f Mbit/s%s\n",
		       perf_coll_name(c->kind), moved, c->count, c->n,
		       (unsigned long long)iters, med * 1e6, min * 1e6, alg,
		       alg * bus_factor(c), bad ? ", WRONG RESULTS" : "");
		printf("r2cc-perf-coll: kind=%s size=%.0f count=%zu ranks=%d iters=%llu us_med=%.1f us_min=%.1f algbw_mbps=%.2f busbw_mbps=%.2f bad=%llu failovers=%llu resent=%llu\n",
		       perf_coll_name(c->kind), moved, c->count, c->n,
		       (unsigned long long)iters, med * 1e6, min * 1e6, alg,
		       alg * bus_factor(c), (unsigned long long)bad,
		       (unsigned long long)(st.failovers - st0.failovers),
		       (unsigned long long)(st.resent_bytes -
					    st0.resent_bytes));
	}
	free(c->in);
	free(c->out);
	free(t);
	free(all);
}

int perf_coll_run(struct perf *p)
{
	struct r2cc_comm_opts co = { .size = sizeof(co) };
	struct coll_run c = { .kind = p->o.coll };
	struct r2cc_comm *comm;
	int ret, i;

	/* connecting waits as long as anything else does */
	co.timeout_ms = p->o.timeout * 1000 > 4e9 ? 4000000000U :
			(uint32_t)(p->o.timeout * 1000);
	if (!co.timeout_ms)
		co.timeout_ms = 1;
	if (p->o.mesh)
		co.flags = R2CC_COMM_MESH;
	ret = r2cc_comm_init(p->ctx, p->boot, &co, &comm);
	if (ret)
		die_op("r2cc_comm_init", ret, NULL);
	c.rank = r2cc_comm_rank(comm);
	c.n = r2cc_comm_size(comm);
	if (!c.rank) {
		struct r2cc_comm_stats st = { .size = sizeof(st) };

		r2cc_comm_stats(comm, &st);
		printf("%s: --coll %s on %d ranks via %s, libr2cc %s, %d NICs",
		       PERF_NAME, perf_coll_name(c.kind), c.n, p->o.root_desc,
		       r2cc_version(), r2cc_nic_count(p->ctx));
		if (p->o.mesh)
			printf(", mesh: allreduce by recursive doubling up to %llu bytes",
			       (unsigned long long)st.rd_max);
		printf("\n");
	}
	for (i = 0; i < p->o.nsizes; i++)
		phase(p, comm, &c, p->o.sizes[i]);
	/* collective: returns once every rank is done with the ring */
	r2cc_comm_destroy(comm);
	if (p->failed && !c.rank)
		fprintf(stderr, PERF_NAME ": FAILED (wrong results)\n");
	return p->failed ? 1 : 0;
}
