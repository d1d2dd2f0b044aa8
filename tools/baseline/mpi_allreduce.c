// SPDX-License-Identifier: GPL-2.0-only
/*
 * The baseline for r2cc-perf --coll allreduce: MPI_Allreduce of int32
 * sums, timed and reported as r2cc-perf reports its own (a warm-up call,
 * then ITERS timed calls one after another; a call's time is the median
 * of a rank's times and the slowest rank's counts; algbw = size / time,
 * busbw = algbw x 2(n-1)/n as in nccl-tests), every result checked.
 * Built and run by scripts/bench-mpi.sh with the MPI under test.
 *
 *   mpi_allreduce MIN MAX ITERS: every power-of-two size MIN..MAX bytes
 *   mpi_allreduce loop SIZE SECONDS: back-to-back allreduces for about
 *     SECONDS, rank 0 printing how many completed each second ("tick:"),
 *     to watch what a fault does to them
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One size: 0, or 1 if a result was wrong somewhere. */
static int one(size_t bytes, int iters, int rank, int n, FILE *out)
{
	size_t count = bytes / 4, i;
	int32_t *in = malloc(count * 4), *res = malloc(count * 4);
	double *t = calloc((size_t)iters, sizeof(*t)), med, worst;
	long bad = 0, allbad = 0;
	int k;

	if (!in || !res || !t) {
		fprintf(stderr, "mpi_allreduce: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (k = -1; k < iters; k++) {
		double t0;

		for (i = 0; i < count; i++)
			in[i] = (int32_t)((rank + 1) * ((i + (size_t)k + 1) % 97));
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		MPI_Allreduce(in, res, (int)count, MPI_INT32_T, MPI_SUM,
			      MPI_COMM_WORLD);
		if (k >= 0)
			t[k] = MPI_Wtime() - t0;
		for (i = 0; i < count; i++)
			bad += res[i] != (int32_t)(n * (n + 1) / 2 *
					  (int32_t)((i + (size_t)k + 1) % 97));
	}
	qsort(t, (size_t)iters, sizeof(*t), cmp_double);
	med = iters % 2 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
	MPI_Reduce(&med, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	MPI_Reduce(&bad, &allbad, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (!rank) {
		double algbw = bytes * 8 / worst / 1e6;

		fprintf(out, "mpi-allreduce: size=%zu count=%zu ranks=%d iters=%d us_med=%.1f algbw_mbps=%.2f busbw_mbps=%.2f bad=%ld\n",
			bytes, count, n, iters, worst * 1e6, algbw,
			algbw * 2 * (n - 1) / n, allbad);
		fflush(out);
	}
	free(in);
	free(res);
	free(t);
	return allbad != 0;
}

/* Allreduces of @bytes for @secs seconds (rank 0's clock decides). */
static int loop(size_t bytes, double secs, int rank, int n)
{
	size_t count = bytes / 4, i;
	int32_t *in = malloc(count * 4), *res = malloc(count * 4);
	double t0 = MPI_Wtime(), last = t0;
	long it = 0, bad = 0, done_at_tick = 0;
	int stop = 0;

	if (!in || !res)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (i = 0; i < count; i++)
		in[i] = (int32_t)((rank + 1) * (i % 97));
	while (!stop) {
		MPI_Allreduce(in, res, (int)count, MPI_INT32_T, MPI_SUM,
			      MPI_COMM_WORLD);
		for (i = 0; i < count; i++)
			bad += res[i] != (int32_t)(n * (n + 1) / 2 * (int32_t)(i % 97));
		it++;
		if (!rank && MPI_Wtime() - last >= 1) {
			last = MPI_Wtime();
			printf("tick: t=%.1f allreduces=%ld\n", last - t0,
			       it - done_at_tick);
			fflush(stdout);
			done_at_tick = it;
		}
		/* every rank stops after the same call */
		stop = !rank && MPI_Wtime() - t0 >= secs;
		MPI_Bcast(&stop, 1, MPI_INT, 0, MPI_COMM_WORLD);
	}
	if (!rank)
		printf("mpi-loop: iters=%ld bad=%ld seconds=%.2f\n", it, bad,
		       MPI_Wtime() - t0);
	free(in);
	free(res);
	return bad != 0;
}

int main(int argc, char **argv)
{
	size_t lo, hi, b;
	int rank, n, iters, failed = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &n);
	if (argc == 4 && !strcmp(argv[1], "loop")) {
		failed = loop(strtoull(argv[2], NULL, 0) & ~3ull,
			      atof(argv[3]), rank, n);
		MPI_Finalize();
		return failed;
	}
	if (argc != 4 || (lo = strtoull(argv[1], NULL, 0)) < 4 ||
	    (hi = strtoull(argv[2], NULL, 0)) < lo || hi > (1ull << 30) ||
	    (iters = atoi(argv[3])) < 1) {
		if (!rank)
			fprintf(stderr, "usage: mpi_allreduce MIN MAX ITERS (bytes, 4..1G)\n");
		MPI_Finalize();
		return 2;
	}
	for (b = lo; b <= hi; b *= 2)
		failed |= one(b, iters, rank, n, stdout);
	MPI_Finalize();
	return failed;
}
