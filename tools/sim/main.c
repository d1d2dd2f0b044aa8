// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc-sim: what does a NIC failure cost a job, strategy by strategy?
 * Exit status: 0 done, 1 runtime failure (memory, gnuplot), 2 usage.
 */
#include <stdio.h>
#include <stdlib.h>

#include "output.h"

int main(int argc, char **argv)
{
	static struct sim_config c;
	struct run_result res[ST_NR];
	struct state_view v;
	double *scratch, ideal_it, horizon;
	int rc, s, n = 0;

	rc = cli_parse(argc, argv, &c);
	if (rc)
		return rc == 1 ? 0 : rc;
	if (c.plot[0] && !have_gnuplot()) {
		fprintf(stderr, "r2cc-sim: --plot needs gnuplot, which is not "
			"in PATH (Debian: apt-get install gnuplot-nox)\n");
		cli_free(&c);
		return 1;
	}

	/* the failure-free iteration sizes the default random horizon */
	scratch = calloc(wl_scratch_len(&c.fab) + 1, sizeof(double));
	if (!scratch)
		goto oom;
	for (s = 0; s < ST_NR && !(c.strat_mask & (1u << s)); s++)
		;
	v = (struct state_view){ .f = &c.fab, .strat = s };
	v.frac = NULL;
	{
		size_t nk = (size_t)c.fab.nodes * c.fab.nics, i;
		double *up = malloc(sizeof(double) * nk);

		if (!up)
			goto oom;
		for (i = 0; i < nk; i++)
			up[i] = 1.0;
		v.frac = up;
		ideal_it = wl_iter_time(&c.wl, &v, scratch);
		free(up);
	}
	free(scratch);
	horizon = c.horizon > 0 ? c.horizon : 2.0 * ideal_it * c.iters;
	if (trace_random(&c.trace, &c.rnd, &c.fab, horizon)) {
		fprintf(stderr, "r2cc-sim: the random trace has more than %d "
			"events; raise --mtbf-h or lower --horizon-s\n",
			SIM_MAX_EVENTS);
		cli_free(&c);
		return 2;
	}
	trace_sort(&c.trace);

	out_header(&c, c.trace.n, ideal_it);
	for (s = 0; s < ST_NR; s++) {
		if (!(c.strat_mask & (1u << s)))
			continue;
		if (sim_run(&c.fab, &c.wl, &c.det, &c.trace, c.iters, s,
			    c.plot[0] != '\0', &res[n]))
			goto oom;
		out_result(&c, &res[n], n == 0);
		n++;
	}
	rc = c.plot[0] ? out_plot(&c, res, n) : 0;
	while (n--)
		run_result_free(&res[n]);
	cli_free(&c);
	return rc;
oom:
	fprintf(stderr, "r2cc-sim: out of memory\n");
	return 1;
}
