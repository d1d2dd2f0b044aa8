// SPDX-License-Identifier: GPL-2.0-only
/*
 * Collectives on real ranks (one per testbed node): every collective x
 * datatype x op against a reference computed here, at sizes 0, 1, odd,
 * not divisible by the rank count and large, in place and not; several
 * in flight at once; bad arguments; ranks that disagree.  Values are
 * small integers, so every reduction order gives the same exact result
 * and the reference needs no knowledge of the schedule; whether every
 * rank got the same bits is checked separately on random floats.
 *
 * COLL_FULL=1 in the environment: the large count with every op, and a
 * 16 MiB allreduce instead of 1 MiB (scripts/check-full.sh sets it).
 * COLL_MESH=1: the communicator has the mesh (R2CC_COMM_MESH), so small
 * allreduces go by recursive doubling; with R2CC_COLL_RD_MAX=N, all of
 * at most N bytes, and the test checks that some did.
 * COLL_KINDS=allreduce,reduce,...: the matrix runs only these kinds (the
 * recursive-doubling run leaves out the two that never use it).
 *
 * --loop N: N back-to-back allreduces of --size bytes instead, each
 * checked, for the fault tests; prints "streaming" after the first and
 * a "coll-result:" line at the end.
 *
 * Prints "ok - ..." / "not ok - ..." lines; exit 0 when all are ok.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <r2cc/coll.h>

#include "coll_check.h"

static int rank, nranks;
static struct r2cc_comm *comm;
static struct r2cc_boot *boot;

/* Wait for @q; its error, or -ETIMEDOUT after 120 s. */
static int wait_coll(struct r2cc_coll *q)
{
	double t0 = now_s();
	int done = 0, ret;

	while (!(ret = r2cc_coll_test(q, &done)) && !done)
		if (now_s() - t0 > 120)
			return -ETIMEDOUT;
	return ret;
}

static const char *const dname[] = { "int8", "uint8", "int32", "uint32",
	"int64", "uint64", "float16", "bfloat16", "float32", "float64" };
static const char *const oname[] = { "sum", "prod", "min", "max", "avg" };
static const size_t esize[] = { 1, 1, 4, 4, 8, 8, 2, 2, 4, 8 };

/* Rank @r's input element @i of test @t: a small integer. */
static int val(int r, size_t i, int t, enum r2cc_redop op)
{
	uint64_t x = (uint64_t)r * 0x9e3779b97f4a7c15ull ^ (i * 0xbf58476d1ce4e5b9ull) ^
		     (uint64_t)t * 0x94d049bb133111ebull;

	x ^= x >> 29;
	if (op == R2CC_PROD)	/* products stay exact in every type */
		return (int)(x % 3) - 1 ? (int)(x % 3) : -1;
	return (int)(x % 15) - 7;
}

static void put(void *p, size_t i, enum r2cc_dtype dt, double v)
{
	switch (dt) {
	case R2CC_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
	case R2CC_UINT8: ((uint8_t *)p)[i] = (uint8_t)(int)v; break;
	case R2CC_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
	case R2CC_UINT32: ((uint32_t *)p)[i] = (uint32_t)(int64_t)v; break;
	case R2CC_INT64: ((int64_t *)p)[i] = (int64_t)v; break;
	case R2CC_UINT64: ((uint64_t *)p)[i] = (uint64_t)(int64_t)v; break;
	case R2CC_FLOAT16: { _Float16 h = (_Float16)v; memcpy((char *)p + 2 * i, &h, 2); break; }
	case R2CC_BFLOAT16: { float f = (float)v; uint32_t b; memcpy(&b, &f, 4);
		((uint16_t *)p)[i] = (uint16_t)(b >> 16); break; }	/* exact: small ints */
	case R2CC_FLOAT32: ((float *)p)[i] = (float)v; break;
	case R2CC_FLOAT64: ((double *)p)[i] = v; break;
	}
}

/*
 * The reference of element @i over every rank: integers wrap as their
 * type, avg divides the wrapped sum (C division); floats are exact.
 */
static void ref(void *p, size_t i, enum r2cc_dtype dt, enum r2cc_redop op,
		int t, size_t src_i)
{
	int64_t acc = val(0, src_i, t, op), v;
	double prod = acc;	/* floats: the sign of a zero product counts */
	int r;

	if ((dt == R2CC_UINT8 || dt == R2CC_UINT32 || dt == R2CC_UINT64) &&
	    (op == R2CC_MIN || op == R2CC_MAX)) {
		/* compared as the unsigned type: -1 is its largest value */
		uint64_t mask = dt == R2CC_UINT8 ? 0xff : dt == R2CC_UINT32 ?
				0xffffffffull : ~0ull, a = (uint64_t)acc & mask, u;

		for (r = 1; r < nranks; r++) {
			u = (uint64_t)(int64_t)val(r, src_i, t, op) & mask;
			a = op == R2CC_MIN ? (u < a ? u : a) : (u > a ? u : a);
		}
		if (dt == R2CC_UINT8)
			((uint8_t *)p)[i] = (uint8_t)a;
		else if (dt == R2CC_UINT32)
			((uint32_t *)p)[i] = (uint32_t)a;
		else
			((uint64_t *)p)[i] = a;
		return;
	}

	for (r = 1; r < nranks; r++) {
		v = val(r, src_i, t, op);
		acc = op == R2CC_PROD ? acc * v : op == R2CC_MIN ? (v < acc ? v : acc) :
		      op == R2CC_MAX ? (v > acc ? v : acc) : acc + v;
		prod *= (double)v;
	}
	if (op != R2CC_AVG) {
		put(p, i, dt, op == R2CC_PROD ? prod : (double)acc);
		return;
	}
	switch (dt) {
	case R2CC_INT8: put(p, i, dt, (int8_t)acc / nranks); break;
	case R2CC_UINT8: ((uint8_t *)p)[i] = (uint8_t)((uint8_t)acc / (unsigned)nranks); break;
	case R2CC_INT32: case R2CC_INT64: put(p, i, dt, (double)(acc / nranks)); break;
	case R2CC_UINT32: ((uint32_t *)p)[i] = (uint32_t)acc / (uint32_t)nranks; break;
	case R2CC_UINT64: ((uint64_t *)p)[i] = (uint64_t)acc / (uint64_t)nranks; break;
	case R2CC_FLOAT16: put(p, i, dt, (double)((float)acc / (float)nranks)); break;
	case R2CC_BFLOAT16: {
		float f = (float)acc / (float)nranks;
		uint32_t b;

		memcpy(&b, &f, 4);
		if ((b & 0x7f800000) != 0x7f800000)
			b += 0x7fff + ((b >> 16) & 1);
		((uint16_t *)p)[i] = (uint16_t)(b >> 16);
		break;
	}
	case R2CC_FLOAT32: ((float *)p)[i] = (float)acc / (float)nranks; break;
	case R2CC_FLOAT64: ((double *)p)[i] = (double)acc / nranks; break;
	}
}

enum kind { ALLREDUCE, REDUCE_SCATTER, REDUCE, ALLGATHER, BROADCAST };
static const char *const kname[] = { "allreduce", "reduce_scatter", "reduce",
				     "allgather", "broadcast" };

/* One collective, checked; 0 when right. */
static int one(enum kind k, enum r2cc_dtype dt, enum r2cc_redop op,
	       size_t count, int root, int inplace, int t, char *why, size_t wl)
{
	size_t es = esize[dt], in_n = count, out_n = count, i, bad = 0;
	struct r2cc_coll *q;
	char *in, *out, *want, *sbuf, *rbuf;
	int ret;

	if (k == REDUCE_SCATTER)
		in_n = count * nranks;
	if (k == ALLGATHER)
		out_n = count * nranks;
	in = calloc(in_n + 1, es);
	out = calloc(out_n + 1, es);
	want = calloc(out_n + 1, es);
	memset(out, 0xa5, (out_n + 1) * es);
	for (i = 0; i < in_n; i++)
		put(in, i, dt, val(rank, i, t, op));
	sbuf = in;
	rbuf = out;
	if (inplace) {
		/* the result buffer holds the input where the API says */
		if (k == ALLGATHER) {
			memcpy(out + rank * count * es, in, count * es);
			sbuf = out + rank * count * es;
		} else if (k == REDUCE_SCATTER) {
			rbuf = in + rank * count * es;
		} else {
			memcpy(out, in, in_n * es);
			sbuf = out;
		}
	}
	switch (k) {
	case ALLREDUCE:
		ret = r2cc_allreduce(comm, sbuf, rbuf, count, dt, op, &q);
		break;
	case REDUCE_SCATTER:
		ret = r2cc_reduce_scatter(comm, sbuf, rbuf, count, dt, op, &q);
		break;
	case REDUCE:
		ret = r2cc_reduce(comm, sbuf, rbuf, count, dt, op, root, &q);
		break;
	case ALLGATHER:
		ret = r2cc_allgather(comm, sbuf, rbuf, count, dt, &q);
		break;
	default:
		ret = r2cc_broadcast(comm, sbuf, rbuf, count, dt, root, &q);
	}
	if (!ret)
		ret = wait_coll(q);
	if (ret) {
		snprintf(why, wl, "%s count %zu: %s", kname[k], count, strerror(-ret));
		goto out;
	}
	for (i = 0; i < out_n; i++) {
		switch (k) {
		case ALLREDUCE:
		case REDUCE:
			ref(want, i, dt, op, t, i);
			break;
		case REDUCE_SCATTER:
			ref(want, i, dt, op, t, rank * count + i);
			break;
		case ALLGATHER:
			put(want, i, dt, val((int)(i / count), i % count, t, op));
			break;
		case BROADCAST:
			put(want, i, dt, val(root, i, t, op));
		}
	}
	if (k == REDUCE && rank != root) {
		/* nothing written: the buffer keeps what it had */
		if (inplace)
			memcpy(want, in, out_n * es);
		else
			memset(want, 0xa5, out_n * es);
	}
	if (k == REDUCE_SCATTER && inplace)
		rbuf = in + rank * count * es;
	for (i = 0; i < out_n * es; i++)
		bad += rbuf[i] != want[i];
	/* the byte past the result is never written */
	if (!(k == REDUCE_SCATTER && inplace) && (unsigned char)out[out_n * es] != 0xa5)
		bad++;
	if (bad)
		snprintf(why, wl, "%s %s %s count %zu root %d%s: %zu bytes wrong",
			 kname[k], dname[dt], oname[op], count, root,
			 inplace ? " in place" : "", bad);
out:
	free(in);
	free(out);
	free(want);
	return ret ? ret : bad ? -1 : 0;
}

/* Whether $COLL_KINDS (a comma-separated list; all when unset) names @k. */
static int kind_wanted(enum kind k)
{
	const char *p = getenv("COLL_KINDS");
	size_t n = strlen(kname[k]);

	if (!p)
		return 1;
	for (; *p; p += strcspn(p, ","), p += *p == ',')
		if (!strncmp(p, kname[k], n) && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

static void matrix(void)
{
	size_t counts[] = { 0, 1, 2, 7, (size_t)nranks * 13 + 1, 1001, 65537 };
	int k, dt, op, c, t = 0, full = !!getenv("COLL_FULL");

	for (k = ALLREDUCE; k <= BROADCAST && !kind_wanted(k); k++)
		;
	check(k <= BROADCAST, "COLL_KINDS names a kind of collective");
	for (k = ALLREDUCE; k <= BROADCAST; k++)
		for (dt = R2CC_INT8; dt <= R2CC_FLOAT64 && kind_wanted(k); dt++) {
			int runs = 0, bad = 0, ops = k <= REDUCE ? 5 : 1;
			char why[256] = "", w[200];

			for (op = 0; op < ops; op++)
				for (c = 0; c < 7; c++) {
					int root = (c + op) % nranks;

					/* the large count with one op and no count 2, but with COLL_FULL */
					if (((c == 6 && op) || c == 2) && !full)
						continue;
					runs++;
					if (one((enum kind)k, (enum r2cc_dtype)dt,
						(enum r2cc_redop)op, counts[c], root,
						c & 1, t++, w, sizeof(w)) && !bad++)
						snprintf(why, sizeof(why), "; first: %s", w);
				}
			check(!bad, "%s %s: %d calls (%s7 counts 0..65537, in place and not, roots in turn) right%s",
			      kname[k], dname[dt], runs, ops > 1 ? "5 ops x " : "", why);
		}
}

static void large(void)
{
	size_t count = (size_t)(getenv("COLL_FULL") ? 16 : 1) << 20 >> 2;
	char why[256] = "";
	double t0 = now_s();
	int ret;

	ret = one(ALLREDUCE, R2CC_FLOAT32, R2CC_SUM, count, 0, 0, 7777, why, sizeof(why));
	check(!ret, "allreduce of %zu MiB float32, every element right (%.2f s)%s%s",
	      count >> 18, now_s() - t0, ret ? ": " : "", why);
	ret = one(ALLGATHER, R2CC_UINT8, R2CC_SUM, (size_t)1 << 20, 0, 1, 7778, why, sizeof(why));
	check(!ret, "allgather of 1 MiB per rank in place, every byte right%s%s",
	      ret ? ": " : "", why);
}

/* Random floats: the same bits on every rank, whatever the order. */
static void same_bits(void)
{
	size_t n = 100003, i;
	float *x = malloc(n * sizeof(*x));
	uint64_t h = 1469598103934665603ull, *all;
	struct r2cc_coll *q;
	int ret, r, same = 1;

	srand(rank * 7919 + 1);
	for (i = 0; i < n; i++)
		x[i] = (float)rand() / (float)RAND_MAX * 1e3f - 5e2f;
	ret = r2cc_allreduce(comm, x, x, n, R2CC_FLOAT32, R2CC_SUM, &q);
	if (!ret)
		ret = wait_coll(q);
	for (i = 0; i < n * sizeof(*x); i++)
		h = (h ^ ((unsigned char *)x)[i]) * 1099511628211ull;
	all = calloc(nranks, sizeof(*all));
	if (!ret)
		ret = r2cc_boot_allgather(boot, &h, sizeof(h), all);
	for (r = 0; r < nranks; r++)
		same &= all[r] == h;
	check(!ret && same, "allreduce of 100003 random float32: every rank has the same bits (%s)",
	      ret ? strerror(-ret) : same ? "hashes equal" : "hashes differ");
	free(all);
	free(x);
}

/*
 * The agreed view after a healthy run: every rank's value is the sum of
 * its NICs' bandwidths, it never changed, and every rank holds the same.
 */
static void view(struct r2cc_ctx *ctx)
{
	struct r2cc_comm_view v = { .size = sizeof(v) }, small = { .size = 4 };
	uint32_t mbps[64] = { 0 };
	uint64_t mine = 0, h = 1469598103934665603ull, *all;
	int ret, i, same = 1;

	check(r2cc_comm_view(NULL, &v, mbps, 64) == -EINVAL &&
	      r2cc_comm_view(comm, NULL, mbps, 64) == -EINVAL &&
	      r2cc_comm_view(comm, &v, mbps, -1) == -EINVAL &&
	      r2cc_comm_view(comm, &v, NULL, 1) == -EINVAL &&
	      r2cc_comm_view(comm, &small, mbps, 64) == -EINVAL &&
	      r2cc_comm_view(comm, &v, NULL, 0) == nranks,
	      "comm_view: NULL comm, NULL view, n < 0, NULL array, a short struct: -EINVAL; no array: the rank count");
	for (i = 0; i < r2cc_nic_count(ctx); i++) {
		struct r2cc_nic_info ni = { .size = sizeof(ni) };

		if (!r2cc_nic_info(ctx, i, &ni))
			mine += ni.bandwidth_mbps;
	}
	ret = r2cc_comm_view(comm, &v, mbps, 64);
	check(ret == nranks && v.valid == (nranks > 1) && !v.changes &&
	      (nranks < 2 || mbps[rank] == mine),
	      "comm_view: %d ranks, valid %u, from collective #%u, %llu changes, this rank %u Mbit/s (its NICs: %llu)",
	      ret, v.valid, v.seq, (unsigned long long)v.changes, mbps[rank],
	      (unsigned long long)mine);
	for (i = 0; i < nranks && i < 64; i++)
		h = (h ^ mbps[i] ^ (uint64_t)v.seq << 32) * 1099511628211ull;
	all = calloc(nranks, sizeof(*all));
	ret = r2cc_boot_allgather(boot, &h, sizeof(h), all);
	for (i = 0; i < nranks; i++)
		same &= all[i] == h;
	check(!ret && same, "comm_view: every rank holds the same view, from the same collective");
	free(all);
}

/* Several collectives in flight, tested in reverse order. */
static void concurrent(void)
{
	enum { K = 8, CNT = 3001 };
	struct r2cc_coll *q[K];
	int32_t *b[K];
	int i, j, ret = 0, bad = 0, done;

	for (i = 0; i < K; i++) {
		b[i] = malloc(CNT * sizeof(int32_t));
		for (j = 0; j < CNT; j++)
			b[i][j] = rank + i * j;
		if (!ret)
			ret = r2cc_allreduce(comm, b[i], b[i], CNT, R2CC_INT32, R2CC_SUM, &q[i]);
	}
	for (i = K - 1; i >= 0 && !ret; i--)
		ret = wait_coll(q[i]);
	for (i = 0; i < K; i++) {
		for (j = 0; j < CNT; j++)
			bad += b[i][j] != nranks * (nranks - 1) / 2 + nranks * i * j;
		free(b[i]);
	}
	check(!ret && !bad, "8 allreduces in flight, tested last first: all right (%s, %d wrong)",
	      ret ? strerror(-ret) : "ok", bad);
	ret = r2cc_barrier(comm, &q[0]);
	if (!ret)
		ret = wait_coll(q[0]);
	check(!ret, "barrier");
	ret = r2cc_coll_test(q[0], &done);
	check(ret == -EBADF, "testing a freed request: -EBADF (%d)", ret);
}

static void bad_args(void)
{
	struct r2cc_coll *q = (void *)1;
	char buf[64];
	int done = 7;

	check(r2cc_allreduce(NULL, buf, buf, 1, R2CC_INT8, R2CC_SUM, &q) == -EINVAL && !q,
	      "allreduce on NULL: -EINVAL, *req NULL");
	check(r2cc_allreduce(comm, buf, buf, 1, R2CC_INT8, R2CC_SUM, NULL) == -EINVAL,
	      "NULL req: -EINVAL");
	check(r2cc_allreduce(comm, NULL, buf, 1, R2CC_INT8, R2CC_SUM, &q) == -EINVAL,
	      "NULL sendbuf with a count: -EINVAL");
	check(r2cc_allreduce(comm, buf, NULL, 1, R2CC_INT8, R2CC_SUM, &q) == -EINVAL,
	      "NULL recvbuf with a count: -EINVAL");
	check(r2cc_allreduce(comm, buf, buf, 1, (enum r2cc_dtype)10, R2CC_SUM, &q) == -EINVAL &&
	      r2cc_allreduce(comm, buf, buf, 1, (enum r2cc_dtype)-1, R2CC_SUM, &q) == -EINVAL,
	      "unknown dtype (10, -1): -EINVAL");
	check(r2cc_allreduce(comm, buf, buf, 1, R2CC_INT8, (enum r2cc_redop)5, &q) == -EINVAL &&
	      r2cc_allreduce(comm, buf, buf, 1, R2CC_INT8, (enum r2cc_redop)-1, &q) == -EINVAL,
	      "unknown op (5, -1): -EINVAL");
	check(r2cc_broadcast(comm, buf, buf, 1, R2CC_INT8, nranks, &q) == -EINVAL &&
	      r2cc_reduce(comm, buf, buf, 1, R2CC_INT8, R2CC_SUM, -1, &q) == -EINVAL,
	      "root out of range (size, -1): -EINVAL");
	check(r2cc_allreduce(comm, buf, buf + 1, 8, R2CC_INT8, R2CC_SUM, &q) == -EINVAL,
	      "overlapping buffers, not in place: -EINVAL");
	check(r2cc_allreduce(comm, buf, buf + 32, SIZE_MAX / 4, R2CC_INT32, R2CC_SUM, &q) == -EOVERFLOW,
	      "a count whose bytes overflow: -EOVERFLOW");
	check(r2cc_coll_test(NULL, &done) == -EINVAL && r2cc_coll_test(q, NULL) == -EINVAL,
	      "coll_test with NULL: -EINVAL");
	check(r2cc_coll_test((struct r2cc_coll *)buf, &done) == -EBADF && !done,
	      "coll_test of something not a request: -EBADF, done 0");
	check(r2cc_comm_rank(NULL) == -EINVAL && r2cc_comm_size((void *)buf) == -EINVAL &&
	      r2cc_comm_destroy((void *)buf) == -EBADF,
	      "rank/size/destroy of a non-communicator: -EINVAL / -EBADF");
}

/* The last test: ranks disagree on the count; every rank must see -EPROTO. */
static void mismatch(void)
{
	int32_t b[64] = { 0 };
	struct r2cc_coll *q;
	int ret;

	/*
	 * Ring: rank 0 hears from rank n - 1, which has another count, and
	 * must see it.  Rank 1 hears from rank 0, but rank 0 may close the
	 * ring before its message arrived (CI, 2026-12-02): either error.
	 * Mesh: who sees it depends on the partners.
	 */
	int first, sees = rank == 0 && !getenv("COLL_MESH");

	ret = r2cc_allreduce(comm, b, b, rank ? 40 : 20, R2CC_INT32, R2CC_SUM, &q);
	if (!ret)
		ret = wait_coll(q);
	first = ret;
	if (getenv("COLL_MESH"))
		check(ret == -EPROTO || ret == -ECONNRESET,
		      "rank 0 calls allreduce with 20 elements, the others with 40: -EPROTO, or -ECONNRESET once the others give up (%d)", ret);
	else if (sees)
		check(ret == -EPROTO, "rank 0 calls allreduce with 20 elements, the others with 40: this rank sees it: -EPROTO (%d)", ret);
	else	/* the ranks that saw it drop the ring; this one hears of it */
		check(ret == -EPROTO || ret == -ECONNRESET,
		      "rank 0 calls allreduce with 20 elements, the others with 40: -EPROTO, or -ECONNRESET once the ranks that saw it give up (%d)", ret);
	ret = r2cc_barrier(comm, &q);
	check(ret == first, "after that the communicator refuses work with the same error (%d)", ret);
}

/* A "view:" line when the agreed view differs from the last one printed. */
static void print_view(uint64_t *seen)
{
	struct r2cc_comm_view v = { .size = sizeof(v) };
	uint32_t mbps[64];
	int n = r2cc_comm_view(comm, &v, mbps, 64), i;

	if (n < 0 || !v.valid || *seen == v.changes + 1)
		return;
	*seen = v.changes + 1;
	printf("view: seq=%u changes=%llu mbps=", v.seq,
	       (unsigned long long)v.changes);
	for (i = 0; i < n && i < 64; i++)
		printf("%s%u", i ? "," : "", mbps[i]);
	printf("\n");
}

static int loop(long iters, size_t bytes)
{
	uint64_t seen = 0;
	size_t n = bytes / 4, i, bad = 0;
	float *x = malloc(n * sizeof(*x));
	struct r2cc_comm_stats st = { .size = sizeof(st) };
	struct r2cc_coll *q;
	double t0 = now_s(), last = t0;
	long it;
	int ret = 0;

	for (it = 0; it < iters && !ret; it++) {
		double t1;

		for (i = 0; i < n; i++)
			x[i] = (float)((rank + 1) * ((i + it) % 97));
		t1 = now_s();
		ret = r2cc_allreduce(comm, x, x, n, R2CC_FLOAT32, R2CC_SUM, &q);
		if (!ret)
			ret = wait_coll(q);
		if (getenv("COLL_TIMES"))
			printf("iter: %ld %.4f\n", it, now_s() - t1);
		for (i = 0; i < n && !ret; i++)
			bad += x[i] != (float)(nranks * (nranks + 1) / 2 * ((i + it) % 97));
		if (!ret)
			print_view(&seen);
		if (!it)
			printf("streaming\n");
		if (now_s() - last >= 1) {
			last = now_s();
			printf("tick: %ld allreduces\n", it + 1);
		}
		fflush(stdout);
	}
	r2cc_comm_stats(comm, &st);
	printf("coll-result: iters=%ld bad=%zu error=%d colls=%llu rd=%llu rd_max=%llu weighted=%llu optimal=%llu r2cc_ar=%llu failovers=%llu resent=%llu tcp=%llu seconds=%.2f\n",
	       it, bad, ret, (unsigned long long)st.colls,
	       (unsigned long long)st.colls_rd, (unsigned long long)st.rd_max,
	       (unsigned long long)st.colls_weighted,
	       (unsigned long long)st.colls_optimal,
	       (unsigned long long)st.colls_r2cc_ar,
	       (unsigned long long)st.failovers,
	       (unsigned long long)st.resent_bytes,
	       (unsigned long long)st.tcp_bytes, now_s() - t0);
	free(x);
	return ret || bad;
}

int main(int argc, char **argv)
{
	struct r2cc_comm_stats st = { .size = sizeof(st) };
	struct r2cc_comm_opts mo = { .size = sizeof(mo) };
	const char *rd = getenv("R2CC_COLL_RD_MAX"), *algo;
	struct r2cc_ctx *ctx;
	long iters = 0;
	size_t size = 1 << 20;
	int ret, c;

	while ((c = getopt(argc, argv, "l:s:")) != -1) {
		if (c == 'l')
			iters = atol(optarg);
		else if (c == 's')
			size = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (getenv("COLL_MESH"))
		mo.flags = R2CC_COMM_MESH;
	if (coll_setup(&mo, &boot, &ctx, &comm))
		return 1;
	rank = r2cc_comm_rank(comm);
	nranks = r2cc_comm_size(comm);
	if (iters) {
		ret = loop(iters, size);
		/* collective: returns once every rank is done with the ring */
		r2cc_comm_destroy(comm);
		r2cc_ctx_destroy(ctx);
		r2cc_boot_destroy(boot);
		return ret;
	}
	bad_args();
	matrix();
	large();
	same_bits();
	concurrent();
	view(ctx);
	ret = r2cc_comm_stats(comm, &st);
	check(!ret && st.colls > (getenv("COLL_KINDS") ? 100u : 500u) &&
	      st.bytes_sent > ((size_t)1 << 20) / nranks,
	      "stats: %llu collectives, %llu bytes sent, %llu received",
	      (unsigned long long)st.colls, (unsigned long long)st.bytes_sent,
	      (unsigned long long)st.bytes_received);
	if (!mo.flags || nranks < 2)
		check(!ret && !st.colls_rd,
		      "no mesh: no allreduce by recursive doubling (%llu)",
		      (unsigned long long)st.colls_rd);
	else
		check(!ret && (!rd || st.rd_max == strtoull(rd, NULL, 0)) &&
		      (st.rd_max ? st.colls_rd > (rd ? 100u : 0u) &&
				   st.colls_rd < st.colls : !st.colls_rd),
		      "mesh: %llu of the %llu collectives went by recursive doubling or a binomial tree (up to %llu bytes%s)",
		      (unsigned long long)st.colls_rd, (unsigned long long)st.colls,
		      (unsigned long long)st.rd_max,
		      rd ? ", as R2CC_COLL_RD_MAX says" : ", the cost model's choice");
	algo = getenv("R2CC_ALGO");
	if (nranks > 1 && algo && !strcmp(algo, "optimal"))
		check(!ret && st.colls_optimal > 100 && st.colls_optimal <= st.colls,
		      "R2CC_ALGO=optimal: %llu of the %llu collectives were allreduces by the optimal schedule",
		      (unsigned long long)st.colls_optimal,
		      (unsigned long long)st.colls);
	else
		check(!ret && !st.colls_optimal,
		      "no R2CC_ALGO=optimal: no allreduce by the optimal schedule (%llu)",
		      (unsigned long long)st.colls_optimal);
	if (nranks > 1 && algo && !strcmp(algo, "r2cc-ar"))
		check(!ret && st.colls_r2cc_ar > 100 &&
		      st.colls_r2cc_ar <= st.colls,
		      "R2CC_ALGO=r2cc-ar: %llu of the %llu collectives were allreduces by R2CC-AllReduce",
		      (unsigned long long)st.colls_r2cc_ar,
		      (unsigned long long)st.colls);
	else
		check(!ret && !st.colls_r2cc_ar,
		      "no R2CC_ALGO=r2cc-ar: no allreduce by R2CC-AllReduce (%llu)",
		      (unsigned long long)st.colls_r2cc_ar);
	if (nranks > 1)
		mismatch();
	r2cc_comm_destroy(comm);
	r2cc_ctx_destroy(ctx);
	r2cc_boot_destroy(boot);
	printf("done: %d failed\n", failed);
	return failed != 0;
}
