// SPDX-License-Identifier: GPL-2.0-only
/*
 * Output: a human table (default) or CSV (--csv) on stdout, one row per
 * strategy; --plot hands the speed timeline of every strategy to gnuplot.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "output.h"

static const char *const wl_label[] = { "coll", "train", "serve" };

void out_header(const struct sim_config *c, int nevents, double ideal_it)
{
	const struct fabric *f = &c->fab;

	if (c->csv)
		return;
	printf("# %d nodes x %d GPUs x %d NICs at %g Gbit/s, alpha %g us; "
	       "workload %s", f->nodes, f->gpus, f->nics, c->nic_gbps,
	       c->lat_us, wl_label[c->wl.kind]);
	if (c->wl.kind == WL_COLL)
		printf(" %s %.0f bytes", coll_name(c->wl.coll), c->wl.size);
	else
		printf(" %s tp %d pp %d", models[c->wl.model].name, c->wl.tp,
		       c->wl.pp);
	printf("; %ld iterations of %.6g s failure-free; %d events\n",
	       c->iters, ideal_it, nevents);
}

void out_result(const struct sim_config *c, const struct run_result *r,
		bool first)
{
	double over = r->ideal > 0 ? (r->total / r->ideal - 1.0) * 100.0 : 0;
	double slow = r->worst_iter / (r->ideal / c->iters);
	const char *name = strategies[r->strat].name;

	if (c->csv) {
		if (first)
			printf("strategy,total_s,ideal_s,overhead_pct,"
			       "worst_slowdown,stall_s,restart_s,aborts,"
			       "lost_iters,recomputed,ttft_worst_s,"
			       "tpot_worst_s\n");
		printf("%s,%.9g,%.9g,%.6f,%.9g,%.9g,%.9g,%ld,%ld,%ld,%.9g,"
		       "%.9g\n", name, r->total, r->ideal, over, slow,
		       r->stall, r->down, r->aborts, r->lost_iters,
		       r->recomputed, r->ttft_worst, r->tpot_worst);
		return;
	}
	if (first) {
		printf("%-15s %14s %10s %9s %10s %10s %6s %8s",
		       "strategy", "total_s", "overhead%", "slowdown",
		       "stall_s", "restart_s", "aborts", "lost_it");
		if (c->wl.kind == WL_SERVE)
			printf(" %10s %10s %6s", "ttft_ms", "tpot_ms", "redo");
		printf("\n");
	}
	printf("%-15s %14.6g %10.4f %9.6f %10.6g %10.6g %6ld %8ld", name,
	       r->total, over, slow, r->stall, r->down, r->aborts,
	       r->lost_iters);
	if (c->wl.kind == WL_SERVE)
		printf(" %10.3f %10.3f %6ld", r->ttft_worst * 1e3,
		       r->tpot_worst * 1e3, r->recomputed);
	printf("\n");
}

bool have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	while (path && *path) {
		size_t len = strcspn(path, ":");

		if (len && len < sizeof(buf) - 9) {
			memcpy(buf, path, len);
			strcpy(buf + len, "/gnuplot");
			if (!access(buf, X_OK))
				return true;
		}
		path += len + (path[len] == ':');
	}
	return false;
}

/* The data goes through a temporary file; the script goes to a pipe. */
int out_plot(const struct sim_config *c, const struct run_result *r, int n)
{
	char data[] = "/tmp/r2cc-sim-XXXXXX";
	const char *file = c->plot;
	size_t len = strlen(file);
	bool svg = !strcmp(file + len - 4, ".svg");
	FILE *d, *g;
	int fd, i, j, rc;

	if (!have_gnuplot()) {
		fprintf(stderr, "r2cc-sim: --plot needs gnuplot, which is not "
			"in PATH (Debian: apt-get install gnuplot-nox)\n");
		return 1;
	}
	fd = mkstemp(data);
	if (fd < 0 || !(d = fdopen(fd, "w"))) {
		fprintf(stderr, "r2cc-sim: --plot: temporary file: %s\n",
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	for (i = 0; i < n; i++) {
		fprintf(d, "# %s\n", strategies[r[i].strat].name);
		for (j = 0; j < r[i].ntl; j++)
			fprintf(d, "%.9g %.9g\n", r[i].tl[j].t / 3600.0,
				r[i].tl[j].speed);
		fprintf(d, "%.9g %.9g\n\n\n", r[i].total / 3600.0,
			r[i].ntl ? r[i].tl[r[i].ntl - 1].speed : 1.0);
	}
	fclose(d);
	g = popen("gnuplot", "w");
	if (!g) {
		fprintf(stderr, "r2cc-sim: --plot: cannot run gnuplot\n");
		unlink(data);
		return 1;
	}
	fprintf(g, "set terminal %s size 1000,500\n",
		svg ? "svg" : "png");
	fputs("set output '", g);
	for (i = 0; file[i]; i++)	/* gnuplot single quotes: '' */
		fputs(file[i] == '\'' ? "''" : (char[]){ file[i], 0 }, g);
	fputs("'\n", g);
	fprintf(g, "set xlabel 'time (h)'\nset ylabel 'speed vs "
		"failure-free'\nset yrange [-0.05:1.1]\nset key outside\n"
		"set title 'r2cc-sim: %d nodes x %d NICs'\nplot ",
		c->fab.nodes, c->fab.nics);
	for (i = 0; i < n; i++)
		fprintf(g, "%s'%s' index %d with steps title '%s'",
			i ? ", " : "", data, i, strategies[r[i].strat].name);
	fputs("\n", g);
	rc = pclose(g);
	unlink(data);
	if (rc) {
		fprintf(stderr, "r2cc-sim: --plot: gnuplot failed (status "
			"%d)\n", rc);
		return 1;
	}
	return 0;
}
