// SPDX-License-Identifier: GPL-2.0-only
/*
 * --coll: one collective kind on a communicator of every rank, per size:
 * a warm-up call, then --iters timed calls one after another, every result
 * checked against what the ranks' inputs make it, in any --dtype and
 * --op (dtype.c); --timeline and --csv give one line per call.  Sizes count as
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

struct coll_run {
	enum perf_coll kind;
	enum r2cc_dtype dtype;
	enum r2cc_redop op;
	int rank, n;
	size_t esize;		/* bytes per element */
	size_t count;		/* elements per call, as the API takes it */
	size_t in_n, out_n;	/* elements of this rank's buffers */
	void *in, *out;
};

/*
 * Rank @r's input element @i in iteration @it: a small integer that every
 * type holds (dtype.c).  A reduction's inputs are b or 2b (b from 0 to 4,
 * by element; 2b on odd ranks), or for a product 1 or 2, so that the
 * result is known in closed form; a gather's or broadcast's are spread
 * over 0..126 by rank too, so that a block from the wrong rank shows.
 */
static uint64_t val(const struct coll_run *c, int r, size_t i, uint64_t it)
{
	uint64_t b = (i * 7 + it) % 5;

	if (c->kind == PERF_ALLGATHER || c->kind == PERF_BROADCAST)
		return ((i * 7 + it) % 97 + 3 * (uint64_t)r) % 127;
	if (c->op == R2CC_PROD)
		return !b && (r & 1) ? 2 : 1;
	return r & 1 ? 2 * b : b;
}

/* What the reduction of element @i over every rank must be. */
static void want(const struct coll_run *c, size_t i, uint64_t it,
		 struct perf_want *w)
{
	uint64_t b = (i * 7 + it) % 5, odd = (uint64_t)c->n / 2;

	w->sum = b * ((uint64_t)c->n + odd);
	w->min = b;
	w->max = c->n > 1 ? 2 * b : b;
	w->prod_log2 = b ? 0 : (unsigned int)odd;
	w->prod = w->prod_log2 < 64 ? 1ull << w->prod_log2 : 0;
}


static void fill(struct coll_run *c, uint64_t it)
{
	size_t i;

	for (i = 0; i < c->in_n; i++)
		perf_dtype_put(c->in, i, c->dtype, val(c, c->rank, i, it));
	memset(c->out, 0xa5, c->out_n * c->esize);
}

/* Wrong elements of this rank's result. */
static size_t check(const struct coll_run *c, uint64_t it)
{
	size_t i, bad = 0, base = (size_t)c->rank * c->count;
	struct perf_want w;

	if (c->kind == PERF_REDUCE && c->rank)
		return 0;	/* only the root has a result */
	for (i = 0; i < c->out_n; i++) {
		switch (c->kind) {
		case PERF_ALLGATHER:
			bad += !perf_dtype_is(c->out, i, c->dtype,
					      val(c, (int)(i / c->count),
						  i % c->count, it));
			break;
		case PERF_BROADCAST:
			bad += !perf_dtype_is(c->out, i, c->dtype,
					      val(c, 0, i, it));
			break;
		default:	/* the reductions */
			want(c, c->kind == PERF_REDUCE_SCATTER ? base + i : i,
			     it, &w);
			bad += !perf_dtype_check(c->out, i, c->dtype, c->op,
						 c->n, &w);
		}
	}
	return bad;
}

static int issue(struct r2cc_comm *comm, struct coll_run *c,
		 struct r2cc_coll **q)
{
	switch (c->kind) {
	case PERF_ALLREDUCE:
		return r2cc_allreduce(comm, c->in, c->out, c->count, c->dtype,
				      c->op, q);
	case PERF_REDUCE_SCATTER:
		return r2cc_reduce_scatter(comm, c->in, c->out, c->count,
					   c->dtype, c->op, q);
	case PERF_ALLGATHER:
		return r2cc_allgather(comm, c->in, c->out, c->count, c->dtype,
				      q);
	case PERF_BROADCAST:
		return r2cc_broadcast(comm, c->in, c->out, c->count, c->dtype,
				      0, q);
	default:
		return r2cc_reduce(comm, c->in, c->out, c->count, c->dtype,
				   c->op, 0, q);
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
	size_t elems = bytes / c->esize;
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

/* Which algorithm the last call ran, from the counters' moves. */
static const char *algo_of(const struct r2cc_comm_stats *a,
			   const struct r2cc_comm_stats *b)
{
	if (b->colls_optimal > a->colls_optimal)
		return "optimal";
	if (b->colls_r2cc_ar > a->colls_r2cc_ar)
		return "r2cc-ar";
	if (b->colls_weighted > a->colls_weighted)
		return "weighted";
	if (b->colls_rd > a->colls_rd)
		return "rd";
	return "ring";
}

/*
 * --timeline and --csv: one line per timed call, @dt its seconds, with
 * what the communicator's counters say happened since the run began.
 */
static void per_call(struct perf *p, struct r2cc_comm *comm,
		     const struct coll_run *c, double moved, uint64_t it,
		     double dt, struct r2cc_comm_stats *prev)
{
	struct r2cc_comm_stats st = { .size = sizeof(st) };
	struct r2cc_comm_view v = { .size = sizeof(v) };
	const struct r2cc_comm_stats *z = &p->coll_st0;
	double t = perf_now() - p->coll_t0;
	const char *algo;

	if (!p->o.timeline && !p->tl.csv)
		return;
	r2cc_comm_stats(comm, &st);
	r2cc_comm_view(comm, &v, NULL, 0);
	algo = algo_of(prev, &st);
	*prev = st;
	if (p->tl.csv)
		fprintf(p->tl.csv, "%.6f,%.0f,%llu,%.1f,%s,%llu,%llu,%llu,%llu\n",
			t, moved, (unsigned long long)it, dt * 1e6, algo,
			(unsigned long long)(st.failovers - z->failovers),
			(unsigned long long)(st.resent_bytes - z->resent_bytes),
			(unsigned long long)(st.tcp_bytes - z->tcp_bytes),
			(unsigned long long)v.changes);
	if (p->o.timeline && !c->rank)
		printf("%8.3f s  %s %.0f B #%llu  %10.1f us  %-8s  failovers %llu  resent %llu B  tcp %llu B  view changes %llu\n",
		       t, perf_coll_name(c->kind), moved,
		       (unsigned long long)it, dt * 1e6, algo,
		       (unsigned long long)(st.failovers - z->failovers),
		       (unsigned long long)(st.resent_bytes - z->resent_bytes),
		       (unsigned long long)(st.tcp_bytes - z->tcp_bytes),
		       (unsigned long long)v.changes);
}

static void phase(struct perf *p, struct r2cc_comm *comm, struct coll_run *c,
		  uint64_t bytes)
{
	uint64_t it, iters = p->o.iters, bad = 0, i;
	struct r2cc_comm_stats st0 = { .size = sizeof(st0) };
	struct r2cc_comm_stats st = { .size = sizeof(st) };
	struct r2cc_comm_stats prev;
	struct coll_report mine, *all;
	double *t = calloc(iters, sizeof(*t)), med = 0, min = 0, moved;
	int ret, r;

	all = calloc((size_t)c->n, sizeof(*all));
	if (!t || !all)
		die("out of memory");
	geometry(c, bytes);
	c->in = calloc(c->in_n + 1, c->esize);
	c->out = calloc(c->out_n + 1, c->esize);
	if (!c->in || !c->out)
		die("cannot allocate %zu + %zu elements", c->in_n, c->out_n);
	moved = (double)(c->kind == PERF_REDUCE_SCATTER ? c->in_n : c->out_n) *
		(double)c->esize;
	r2cc_comm_stats(comm, &st0);
	prev = st0;
	for (it = 0; it <= iters; it++) {	/* iteration 0 warms up */
		double dt;

		if (p->o.verify || !it)
			fill(c, it);
		dt = one(p, comm, c);
		if (p->o.verify)
			bad += check(c, it);
		if (it) {
			t[it - 1] = dt;
			per_call(p, comm, c, moved, it, dt, &prev);
		} else {
			r2cc_comm_stats(comm, &prev);
		}
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
	if (!c->rank) {
		double alg = med > 0 ? moved * 8 / med / 1e6 : 0;

		printf("%s %s %.0f B (%zu %s per rank) on %d ranks x %llu: median %.1f us, min %.1f us, algbw %.1f Mbit/s, busbw %.1f Mbit/s%s\n",
		       perf_coll_name(c->kind), perf_op_name(c->op), moved,
		       c->count, perf_dtype_name(c->dtype), c->n,
		       (unsigned long long)iters, med * 1e6, min * 1e6, alg,
		       alg * bus_factor(c), bad ? ", WRONG RESULTS" : "");
		printf("r2cc-perf-coll: kind=%s dtype=%s op=%s size=%.0f count=%zu ranks=%d iters=%llu us_med=%.1f us_min=%.1f algbw_mbps=%.2f busbw_mbps=%.2f bad=%llu failovers=%llu resent=%llu\n",
		       perf_coll_name(c->kind), perf_dtype_name(c->dtype),
		       c->kind == PERF_ALLGATHER || c->kind == PERF_BROADCAST ?
		       "-" : perf_op_name(c->op), moved, c->count, c->n,
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
	struct coll_run c = {
		.kind = p->o.coll, .dtype = p->o.dtype, .op = p->o.op,
		.esize = perf_dtype_size(p->o.dtype),
	};
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
		printf("%s: --coll %s of %s on %d ranks via %s, libr2cc %s, %d NICs",
		       PERF_NAME, perf_coll_name(c.kind),
		       perf_dtype_name(c.dtype), c.n, p->o.root_desc,
		       r2cc_version(), r2cc_nic_count(p->ctx));
		if (p->o.mesh)
			printf(", mesh: allreduce by recursive doubling up to %llu bytes",
			       (unsigned long long)st.rd_max);
		printf("\n");
	}
	p->coll_st0.size = sizeof(p->coll_st0);
	r2cc_comm_stats(comm, &p->coll_st0);
	p->coll_t0 = perf_now();
	if (p->tl.csv)
		fputs("time_s,size,iter,us,algo,failovers,resent_bytes,tcp_bytes,view_changes\n",
		      p->tl.csv);
	for (i = 0; i < p->o.nsizes; i++)
		phase(p, comm, &c, p->o.sizes[i]);
	if (p->tl.csv && fclose(p->tl.csv))
		die("--csv: %s", strerror(errno));
	p->tl.csv = NULL;
	/* collective: returns once every rank is done with the ring */
	r2cc_comm_destroy(comm);
	if (p->failed && !c.rank)
		fprintf(stderr, PERF_NAME ": FAILED (wrong results)\n");
	return p->failed ? 1 : 0;
}
