// SPDX-License-Identifier: GPL-2.0-only
/*
 * What choosing a schedule costs the library (lib/coll/model, the very
 * code): for a communicator of n ranks, the time of each model call a
 * rank makes when the agreed view changes (the weighted ring's and the
 * optimal allreduce's weights, auto's mesh rule) and when an allreduce
 * of a new size starts under that view (auto's engine schedule model).
 * The library makes these once per view and size (lib/coll/ring.c keeps
 * them), never per collective; a view change pays them all.
 *
 *   model-bench [RUNS]
 *
 * prints one line per n and view: the median of RUNS (default 5) calls,
 * in microseconds.  Past the schedule model's reach (coll_sched_reaches)
 * the pick returns at once, and auto computes no weights.  Views: one rank at half the others' bandwidth, and
 * one rank in 64 at a random fraction of it (seed fixed).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "coll/model/model.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

enum call { RING_W, DIRECT_W, AUTO_DIRECT, SCHED_PICK, NCALLS };

static const char *const call_names[NCALLS] = {
	"ring_weights", "direct_weights", "auto_direct", "sched_pick",
};

/*
 * One call of @what; its answer, so the work is not optimised away.  @wr:
 * the view's ring weights, which auto's pick is given.
 */
static double call(enum call what, int n, const uint32_t *mbps, uint32_t *w,
		   const uint32_t *wr, double *tmp)
{
	switch (what) {
	case RING_W:
		return coll_ring_wquant(n, mbps, w, tmp);
	case DIRECT_W:
		return coll_direct_wquant(n, mbps, w, tmp);
	case AUTO_DIRECT:
		return coll_auto_direct(n, mbps, tmp);
	default:
		/* a 256 MiB allreduce of floats at the library's defaults */
		return coll_sched_prefer_weighted(n, mbps, wr, 64u << 20, 4,
						  COLL_SLICE_DEFAULT,
						  COLL_DEPTH_DEFAULT,
						  COLL_SETS_DEFAULT);
	}
}

int main(int argc, char **argv)
{
	static const int sizes[] = { 8, 64, 512, 1024, 2048, 4096, 8192 };
	int runs = argc > 1 ? atoi(argv[1]) : 5;
	unsigned int seed = 1;
	size_t s;
	int v, c, r, k;

	if (runs < 1 || runs > 1000) {
		fprintf(stderr, "usage: model-bench [RUNS 1..1000]\n");
		return 2;
	}
	printf("# median of %d calls, microseconds\n", runs);
	printf("%-6s %-10s", "ranks", "view");
	for (c = 0; c < NCALLS; c++)
		printf(" %14s", call_names[c]);
	printf("\n");
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s];
		uint32_t *mbps = malloc(3 * (size_t)n * sizeof(*mbps));
		double *tmp = malloc(3 * (size_t)n * sizeof(*tmp));
		double *t = malloc((size_t)runs * sizeof(*t));

		if (!mbps || !tmp || !t)
			return 1;
		for (v = 0; v < 2; v++) {
			for (k = 0; k < n; k++)
				mbps[k] = 400000;
			if (v == 0)
				mbps[n / 2] = 200000;
			else
				for (k = 0; k < n; k += 64)
					mbps[(k + (int)(rand_r(&seed) % 64)) % n] =
						rand_r(&seed) % 400000;
			coll_ring_wquant(n, mbps, mbps + 2 * n, tmp);
			printf("%-6d %-10s", n, v ? "1/64 rand" : "one 1/2");
			for (c = 0; c < NCALLS; c++) {
				volatile double sink = 0.0;

				for (r = 0; r < runs; r++) {
					double t0 = now_us();

					sink += call(c, n, mbps, mbps + n,
						     mbps + 2 * n, tmp);
					t[r] = now_us() - t0;
				}
				(void)sink;
				qsort(t, (size_t)runs, sizeof(*t), by_value);
				printf(" %14.1f", t[(runs - 1) / 2]);
			}
			printf("\n");
			fflush(stdout);
		}
		free(mbps);
		free(tmp);
		free(t);
	}
	return 0;
}
