// SPDX-License-Identifier: GPL-2.0-only
/*
 * A new user's loop of mixed collectives, the reproduction of the failure
 * handling issue's hang: allreduce, reduce-scatter, allgather, broadcast,
 * reduce and barrier of 0 to 1 MiB, one to four in flight, every result
 * checked; every few rounds the ranks compare their progress through the
 * bootstrap's all-gather (a blocking call outside the collectives, as an
 * application blocks in compute, I/O or another library), and each may
 * then sleep up to --idle-ms more before its next call.
 *
 * Every rank draws the same sequence from --seed; rank 0 decides when
 * --seconds are over, and tells the others at a checkpoint.  A collective
 * that does not finish in 120 s is a hang (-ETIMEDOUT).
 *
 * Prints "streaming" after the first round and at the end
 *   mixed-result: colls=N bad=B error=E failovers=F resent=R tcp=T
 *                 view_changes=V seconds=S
 * (one line) and an "ok - " / "not ok - " line; exits 0 when no
 * collective failed and every element was right.
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <r2cc/bootstrap.h>
#include <r2cc/coll.h>

#include "coll_check.h"
#include "xorshift.h"

#define MAX_FLIGHT	4
#define HANG_S		120

static int rank, nranks;

enum kind { ALLREDUCE, REDUCE_SCATTER, ALLGATHER, BROADCAST, REDUCE,
	    BARRIER, NKINDS };
static const char *const kname[] = { "allreduce", "reduce_scatter",
	"allgather", "broadcast", "reduce", "barrier" };

struct op {
	enum kind kind;
	size_t count;		/* elements per rank's block */
	int root;
	uint64_t tag;		/* what the inputs are drawn from */
	int32_t *in, *out;
	struct r2cc_coll *q;
	int done, err;
};

/* Rank @r's input element @i of the collective tagged @tag: small, exact. */
static int32_t val(int r, size_t i, uint64_t tag)
{
	uint64_t x = (uint64_t)(r + 1) * 0x9e3779b97f4a7c15ull ^
		     (i + 1) * 0xbf58476d1ce4e5b9ull ^ tag;

	x ^= x >> 31;
	return (int32_t)(x % 1001) - 500;
}

static int32_t sum_of(size_t i, uint64_t tag)
{
	int32_t s = 0;
	int r;

	for (r = 0; r < nranks; r++)
		s += val(r, i, tag);
	return s;
}

/* 0 elements one time in 16, else log-uniform up to 1 MiB of int32. */
static size_t draw_count(uint64_t *s)
{
	unsigned int shift;

	if (xorshift64(s) % 16 == 0)
		return 0;
	shift = (unsigned int)(xorshift64(s) % 19);	/* 1 .. 256 Ki */
	return ((size_t)1 << shift) + xorshift64(s) % ((size_t)1 << shift) / 2;
}

static int start(struct r2cc_comm *comm, struct op *o)
{
	size_t n = o->count, in_n, out_n, i;

	in_n = o->kind == REDUCE_SCATTER ? n * nranks : n;
	out_n = o->kind == ALLGATHER ? n * nranks : n;
	o->in = malloc((in_n ? in_n : 1) * sizeof(int32_t));
	o->out = malloc((out_n ? out_n : 1) * sizeof(int32_t));
	if (!o->in || !o->out)
		return -ENOMEM;
	for (i = 0; i < in_n; i++)
		o->in[i] = val(rank, i, o->tag);
	memset(o->out, 0x5a, (out_n ? out_n : 1) * sizeof(int32_t));
	o->done = 0;
	o->err = 0;
	switch (o->kind) {
	case ALLREDUCE:
		return r2cc_allreduce(comm, o->in, o->out, n, R2CC_INT32,
				      R2CC_SUM, &o->q);
	case REDUCE_SCATTER:
		return r2cc_reduce_scatter(comm, o->in, o->out, n, R2CC_INT32,
					   R2CC_SUM, &o->q);
	case ALLGATHER:
		return r2cc_allgather(comm, o->in, o->out, n, R2CC_INT32,
				      &o->q);
	case BROADCAST:
		return r2cc_broadcast(comm, o->in, o->out, n, R2CC_INT32,
				      o->root, &o->q);
	case REDUCE:
		return r2cc_reduce(comm, o->in, o->out, n, R2CC_INT32,
				   R2CC_SUM, o->root, &o->q);
	default:
		return r2cc_barrier(comm, &o->q);
	}
}

/* Wrong elements in @o's result. */
static size_t verify(const struct op *o)
{
	size_t n = o->count, i, bad = 0;
	int r;

	switch (o->kind) {
	case ALLREDUCE:
		for (i = 0; i < n; i++)
			bad += o->out[i] != sum_of(i, o->tag);
		break;
	case REDUCE_SCATTER:
		for (i = 0; i < n; i++)
			bad += o->out[i] != sum_of((size_t)rank * n + i, o->tag);
		break;
	case ALLGATHER:
		for (r = 0; r < nranks; r++)
			for (i = 0; i < n; i++)
				bad += o->out[(size_t)r * n + i] !=
				       val(r, i, o->tag);
		break;
	case BROADCAST:
		for (i = 0; i < n; i++)
			bad += o->out[i] != val(o->root, i, o->tag);
		break;
	case REDUCE:
		for (i = 0; rank == o->root && i < n; i++)
			bad += o->out[i] != sum_of(i, o->tag);
		break;
	default:
		break;
	}
	return bad;
}

/* Drive every op of the round to its end; the first error, or 0. */
static int finish(struct op *ops, int nops)
{
	double t0 = now_s();
	int left = nops, i, err = 0;

	while (left) {
		for (i = 0; i < nops; i++) {
			struct op *o = &ops[i];
			int ret;

			if (o->done)
				continue;
			ret = r2cc_coll_test(o->q, &o->done);
			if (ret) {
				o->err = ret;
				o->done = 1;
			}
			if (o->done) {
				left--;
				err = err ?: o->err;
			}
		}
		if (left && now_s() - t0 > HANG_S) {
			fprintf(stderr, "round of %d: not finished in %d s\n",
				nops, HANG_S);
			return -ETIMEDOUT;
		}
	}
	return err;
}

/* What the ranks compare at a checkpoint. */
struct progress {
	uint64_t colls, bad;
	uint32_t stop, pad;
};

int main(int argc, char **argv)
{
	struct r2cc_comm_opts mo = { .size = sizeof(mo) };
	struct r2cc_comm_stats st = { .size = sizeof(st) };
	struct r2cc_comm_view v = { .size = sizeof(v) };
	double seconds = 30, t0;
	uint64_t seed = 1, shared, own, colls = 0, bad = 0, round = 0;
	long idle_ms = 0;
	struct r2cc_boot *boot;
	struct r2cc_ctx *ctx;
	struct r2cc_comm *comm;
	struct progress *all = NULL;
	int c, err = 0, stop = 0, next_check;

	while ((c = getopt(argc, argv, "t:s:i:")) != -1) {
		if (c == 't')
			seconds = atof(optarg);
		else if (c == 's')
			seed = strtoull(optarg, NULL, 0);
		else if (c == 'i')
			idle_ms = atol(optarg);
		else {
			fprintf(stderr, "usage: %s [-t SECONDS] [-s SEED] [-i IDLE_MS]\n",
				argv[0]);
			return 2;
		}
	}
	if (getenv("COLL_MESH"))
		mo.flags = R2CC_COMM_MESH;
	if (coll_setup(&mo, &boot, &ctx, &comm))
		return 1;
	rank = r2cc_comm_rank(comm);
	nranks = r2cc_comm_size(comm);
	all = calloc((size_t)nranks, sizeof(*all));
	if (!all)
		return 1;
	shared = seed * 0x2545f4914f6cdd1dull | 1;
	own = (seed + (uint64_t)rank + 1) * 0x9e3779b97f4a7c15ull | 1;
	next_check = 1 + (int)(xorshift64(&shared) % 8);
	t0 = now_s();
	while (!stop && !err) {
		struct op ops[MAX_FLIGHT];
		int nops = 1 + (int)(xorshift64(&shared) % MAX_FLIGHT), i, k;

		memset(ops, 0, sizeof(ops));
		for (i = 0; i < nops && !err; i++) {
			ops[i].kind = (enum kind)(xorshift64(&shared) % NKINDS);
			ops[i].count = draw_count(&shared);
			ops[i].root = (int)(xorshift64(&shared) % (uint64_t)nranks);
			ops[i].tag = xorshift64(&shared);
			err = start(comm, &ops[i]);
			if (err)
				fprintf(stderr, "%s of %zu: %s\n",
					kname[ops[i].kind], ops[i].count,
					strerror(-err));
		}
		k = err ? i - 1 : nops;
		err = err ?: finish(ops, k);
		for (i = 0; i < nops; i++) {
			if (!err && i < k) {
				size_t b = verify(&ops[i]);

				if (b)
					fprintf(stderr, "collective %llu (%s of %zu): %zu wrong elements\n",
						(unsigned long long)(colls + i),
						kname[ops[i].kind], ops[i].count, b);
				bad += b;
			}
			free(ops[i].in);
			free(ops[i].out);
		}
		if (err)
			break;
		colls += (uint64_t)k;
		if (!round++)
			printf("streaming\n");
		fflush(stdout);
		if (--next_check)
			continue;
		/* The checkpoint: blocking, outside the collectives. */
		next_check = 1 + (int)(xorshift64(&shared) % 8);
		all[rank] = (struct progress){ .colls = colls, .bad = bad,
			.stop = rank == 0 && now_s() - t0 >= seconds };
		err = r2cc_boot_allgather(boot, &all[rank], sizeof(*all), all);
		if (err) {
			fprintf(stderr, "checkpoint: %s\n", strerror(-err));
			break;
		}
		for (i = 0; i < nranks; i++)
			if (all[i].colls != colls)
				fprintf(stderr, "checkpoint: rank %d at %llu collectives, this one at %llu\n",
					i, (unsigned long long)all[i].colls,
					(unsigned long long)colls);
		stop = all[0].stop;
		if (idle_ms > 0) {
			long ms = (long)(xorshift64(&own) % (uint64_t)(idle_ms + 1));
			struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

			nanosleep(&ts, NULL);
		}
	}
	r2cc_comm_stats(comm, &st);
	r2cc_comm_view(comm, &v, NULL, 0);
	printf("mixed-result: colls=%llu bad=%llu error=%d failovers=%llu resent=%llu tcp=%llu view_changes=%llu seconds=%.1f\n",
	       (unsigned long long)colls, (unsigned long long)bad, err,
	       (unsigned long long)st.failovers,
	       (unsigned long long)st.resent_bytes,
	       (unsigned long long)st.tcp_bytes,
	       (unsigned long long)v.changes, now_s() - t0);
	check(!err && !bad,
	      "%llu mixed collectives in %llu rounds, %llu wrong elements, error %d",
	      (unsigned long long)colls, (unsigned long long)round,
	      (unsigned long long)bad, err);
	if (!err) {
		r2cc_comm_destroy(comm);
		r2cc_ctx_destroy(ctx);
	}
	r2cc_boot_destroy(boot);
	free(all);
	return err || bad;
}
