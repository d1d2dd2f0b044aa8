// SPDX-License-Identifier: GPL-2.0-only
/*
 * Point to point on a mesh communicator, one rank per testbed node: every
 * rank sends to and receives from every other, three messages per pair
 * and size (0, 1, odd, 1 MiB), which must arrive in order and whole;
 * all-to-all of 0, 1 and 1001 elements; an all-to-all and an allreduce
 * in flight together; a receive whose count is not the send's gets
 * -EPROTO and the pair carries on; bad arguments, and a communicator
 * without the mesh.
 *
 * Prints "ok - ..." / "not ok - ..." lines; exit 0 when all are ok.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <r2cc/coll.h>

#include "coll_check.h"

static int rank, nranks;
static struct r2cc_comm *comm;
static struct r2cc_boot *boot;
static struct r2cc_ctx *ctx;

/* Wait for @n requests; the first error, or -ETIMEDOUT after 120 s. */
static int wait_all(struct r2cc_coll **q, int n)
{
	double t0 = now_s();
	int i, left, done, ret, err = 0;

	do {
		for (i = 0, left = 0; i < n; i++) {
			if (!q[i])
				continue;
			done = 0;
			ret = r2cc_coll_test(q[i], &done);
			if (ret || done)
				q[i] = NULL;
			if (ret && !err)
				err = ret;
			left += !ret && !done;
		}
		if (left && now_s() - t0 > 120)
			return -ETIMEDOUT;
	} while (left);
	return err;
}

/* Word @i of message @k from rank @from to rank @to, @count words long. */
static uint32_t word(int from, int to, int k, size_t count, size_t i)
{
	return (uint32_t)(from * 1000003u + to * 7919u + k * 104729u +
			  count * 31u + i);
}

/*
 * Three messages to and from every other rank, for each size; the
 * largest is 1 MiB, or $COLL_P2P_MAX uint32 (9 MiB in flight per rank
 * over 6 connections on four nodes).
 */
static void pairs(void)
{
	size_t counts[] = { 0, 1, 7, 4097, 262144 };
	const char *max = getenv("COLL_P2P_MAX");
	enum { K = 3 };
	size_t ci, i, bad = 0;
	int ret = 0, p, k, nq;

	if (max && *max)
		counts[4] = strtoul(max, NULL, 0);
	for (ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
		size_t cnt = counts[ci];
		struct r2cc_coll **q = calloc(2 * K * (size_t)nranks, sizeof(*q));
		uint32_t **s = calloc((size_t)nranks * K, sizeof(*s));
		uint32_t **r = calloc((size_t)nranks * K, sizeof(*r));

		nq = 0;
		ret = 0;
		bad = 0;
		for (p = 0; p < nranks; p++)
			for (k = 0; k < K && p != rank; k++) {
				int j = p * K + k;

				s[j] = malloc(cnt * 4 + 4);
				r[j] = malloc(cnt * 4 + 4);
				for (i = 0; i < cnt; i++) {
					s[j][i] = word(rank, p, k, cnt, i);
					r[j][i] = 0xdeadbeef;
				}
				if (!ret)
					ret = r2cc_recv(comm, r[j], cnt, R2CC_UINT32, p, &q[nq++]);
				if (!ret)
					ret = r2cc_send(comm, s[j], cnt, R2CC_UINT32, p, &q[nq++]);
			}
		if (!ret)
			ret = wait_all(q, nq);
		for (p = 0; p < nranks; p++)
			for (k = 0; k < K && p != rank; k++) {
				int j = p * K + k;

				for (i = 0; i < cnt; i++)
					bad += r[j][i] != word(p, rank, k, cnt, i);
				free(s[j]);
				free(r[j]);
			}
		check(!ret && !bad, "send/recv: %d messages of %zu uint32 to and from each of %d peers, in order: %zu wrong words (%s)",
		      K, cnt, nranks - 1, bad, ret ? strerror(-ret) : "ok");
		free(q);
		free(s);
		free(r);
	}
}

static void alltoall(void)
{
	static const size_t counts[] = { 0, 1, 1001 };
	size_t ci, i, bad;
	int ret, j;

	for (ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
		size_t cnt = counts[ci], all = cnt * (size_t)nranks;
		int64_t *s = malloc(all * 8 + 8), *r = malloc(all * 8 + 8);
		struct r2cc_coll *q;

		for (i = 0; i < all; i++) {
			s[i] = (int64_t)rank * 1000000 + (int64_t)i;
			r[i] = -1;
		}
		ret = r2cc_alltoall(comm, s, r, cnt, R2CC_INT64, &q);
		if (!ret)
			ret = wait_all(&q, 1);
		for (j = 0, bad = 0; j < nranks; j++)
			for (i = 0; i < cnt; i++)
				bad += r[(size_t)j * cnt + i] !=
				       (int64_t)j * 1000000 + (int64_t)(rank * cnt + i);
		check(!ret && !bad, "alltoall of %zu int64 per rank: %zu wrong (%s)",
		      cnt, bad, ret ? strerror(-ret) : "ok");
		free(s);
		free(r);
	}
}

/* An allreduce on the ring and an all-to-all on the mesh at once. */
static void beside(void)
{
	enum { N = 65536 };
	int32_t *a = malloc(N * 4), *s = malloc(N * 4 * (size_t)nranks),
		*r = malloc(N * 4 * (size_t)nranks);
	struct r2cc_coll *q[2] = { NULL, NULL };
	size_t i, bad = 0;
	int ret;

	for (i = 0; i < N; i++)
		a[i] = (int32_t)(i % 89) * (rank + 1);
	for (i = 0; i < (size_t)N * nranks; i++)
		s[i] = (int32_t)(rank * 7 + i);
	ret = r2cc_allreduce(comm, a, a, N, R2CC_INT32, R2CC_SUM, &q[0]);
	if (!ret)
		ret = r2cc_alltoall(comm, s, r, N, R2CC_INT32, &q[1]);
	if (!ret)
		ret = wait_all(q, 2);
	for (i = 0; i < N; i++)
		bad += a[i] != (int32_t)(i % 89) * (nranks * (nranks + 1) / 2);
	for (i = 0; i < (size_t)N * nranks; i++)
		bad += r[i] != (int32_t)((i / N) * 7 + rank * N + i % N);
	check(!ret && !bad, "an allreduce and an alltoall in flight together: %zu wrong (%s)",
	      bad, ret ? strerror(-ret) : "ok");
	free(a);
	free(s);
	free(r);
}

/* Rank 0 sends 10 to rank 1, which expects 20: -EPROTO there; then fine. */
static void mismatch(void)
{
	uint32_t buf[20] = { 0 };
	struct r2cc_coll *q = NULL;
	int ret = 0;

	if (rank == 0)
		ret = r2cc_send(comm, buf, 10, R2CC_UINT32, 1, &q);
	else if (rank == 1)
		ret = r2cc_recv(comm, buf, 20, R2CC_UINT32, 0, &q);
	if (!ret && q)
		ret = wait_all(&q, 1);
	if (rank == 0)
		check(!ret, "count mismatch: the sender's 10 elements completed (%d)", ret);
	else if (rank == 1)
		check(ret == -EPROTO, "count mismatch: a receive of 20 met a send of 10: -EPROTO (%d)", ret);
	q = NULL;
	buf[3] = 77;
	if (rank == 0)
		ret = r2cc_send(comm, buf, 20, R2CC_UINT32, 1, &q);
	else if (rank == 1)
		ret = r2cc_recv(comm, buf, 20, R2CC_UINT32, 0, &q);
	if (!ret && q)
		ret = wait_all(&q, 1);
	if (rank <= 1)
		check(!ret && buf[3] == 77, "after it, the pair carries the next message (%d)", ret);
}

static void bad_args(void)
{
	struct r2cc_coll *q = (void *)1;
	char b[64];

	check(r2cc_send(NULL, b, 1, R2CC_INT8, 0, &q) == -EINVAL && !q,
	      "send on NULL: -EINVAL, *req NULL");
	check(r2cc_send(comm, b, 1, R2CC_INT8, (rank + 1) % nranks, NULL) == -EINVAL,
	      "NULL req: -EINVAL");
	check(r2cc_send(comm, b, 1, R2CC_INT8, -1, &q) == -EINVAL &&
	      r2cc_recv(comm, b, 1, R2CC_INT8, nranks, &q) == -EINVAL &&
	      r2cc_send(comm, b, 1, R2CC_INT8, rank, &q) == -EINVAL,
	      "peer -1, peer = size, peer = self: -EINVAL");
	check(r2cc_send(comm, b, 1, (enum r2cc_dtype)10, (rank + 1) % nranks, &q) == -EINVAL,
	      "unknown dtype: -EINVAL");
	check(r2cc_recv(comm, NULL, 1, R2CC_INT8, (rank + 1) % nranks, &q) == -EINVAL,
	      "NULL buffer with a count: -EINVAL");
	check(r2cc_send(comm, b, SIZE_MAX / 2, R2CC_INT32, (rank + 1) % nranks, &q) == -EOVERFLOW &&
	      r2cc_alltoall(comm, b, b + 32, SIZE_MAX / 2 + 1, R2CC_INT8, &q) == -EOVERFLOW,
	      "a count too large: -EOVERFLOW");
	check(r2cc_alltoall(comm, b, b + 1, 2, R2CC_INT8, &q) == -EINVAL &&
	      r2cc_alltoall(comm, b, NULL, 2, R2CC_INT8, &q) == -EINVAL,
	      "alltoall: overlapping buffers, NULL recvbuf: -EINVAL");
}

/* A communicator without the mesh refuses point to point. */
static void no_mesh(void)
{
	struct r2cc_comm_opts o = { .size = sizeof(o), .flags = 1u << 7 };
	struct r2cc_comm *plain = (void *)1;
	struct r2cc_coll *q;
	char b[8];
	int ret;

	check(r2cc_comm_init(ctx, boot, &o, &plain) == -EINVAL && !plain,
	      "comm_init with an unknown flag: -EINVAL");
	ret = r2cc_comm_init(ctx, boot, NULL, &plain);
	check(!ret && r2cc_send(plain, b, 1, R2CC_INT8, (rank + 1) % nranks, &q) == -EOPNOTSUPP &&
	      r2cc_alltoall(plain, b, b + 4, 1, R2CC_INT8, &q) == -EOPNOTSUPP,
	      "no R2CC_COMM_MESH: send and alltoall -EOPNOTSUPP (%d)", ret);
	if (!ret)
		r2cc_comm_destroy(plain);
}

int main(void)
{
	struct r2cc_comm_opts mo = { .size = sizeof(mo), .flags = R2CC_COMM_MESH };

	if (coll_setup(&mo, &boot, &ctx, &comm))
		return 1;
	rank = r2cc_comm_rank(comm);
	nranks = r2cc_comm_size(comm);
	bad_args();
	pairs();
	alltoall();
	beside();
	if (nranks > 1)
		mismatch();
	no_mesh();
	r2cc_comm_destroy(comm);
	r2cc_ctx_destroy(ctx);
	r2cc_boot_destroy(boot);
	printf("done: %d failed\n", failed);
	return failed != 0;
}
