// SPDX-License-Identifier: GPL-2.0-only
/*
 * The timeline: every --interval-ms the bytes this rank completed, what
 * each rail carried (deltas of r2cc_conn_stats), rail states, and events:
 * state changes, failovers, repairs, the TCP fallback, --at commands.
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "perf.h"

extern char **environ;

double perf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int perf_stats(struct r2cc_conn *conn, struct r2cc_conn_stats *st,
	       struct r2cc_rail_stats *rails)
{
	int i, n;

	memset(st, 0, sizeof(*st));
	st->size = sizeof(*st);
	memset(rails, 0, sizeof(*rails) * PERF_MAX_RAILS);
	for (i = 0; i < PERF_MAX_RAILS; i++)
		rails[i].size = sizeof(*rails);
	n = r2cc_conn_stats(conn, st, rails, PERF_MAX_RAILS);
	if (n < 0)
		return n;
	return n < PERF_MAX_RAILS ? n : PERF_MAX_RAILS;
}

const char *perf_rail_state(unsigned int state)
{
	switch (state) {
	case R2CC_RAIL_CONNECTING:
		return "CONN";
	case R2CC_RAIL_UP:
		return "UP";
	case R2CC_RAIL_DOWN:
		return "DOWN";
	case R2CC_RAIL_PROBING:
		return "PROBE";
	}
	return "?";
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank. */
double perf_percentile(double *v, size_t n, double p)
{
	size_t k;

	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	k = (size_t)ceil(p / 100.0 * (double)n);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return v[k - 1];
}

void tl_add_event(struct timeline *tl, const char *fmt, ...)
{
	size_t len = strlen(tl->event);
	va_list ap;

	if (len && len + 2 < sizeof(tl->event)) {
		strcpy(tl->event + len, ", ");
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(tl->event + len, sizeof(tl->event) - len, fmt, ap);
	va_end(ap);
}

void tl_init(struct timeline *tl, const struct perf_opts *o,
	     struct r2cc_ctx *ctx, struct r2cc_conn *conn)
{
	memset(tl, 0, sizeof(*tl));
	tl->o = o;
	tl->ctx = ctx;
	tl->conn = conn;
}

static void die_stats(int ret)
{
	fprintf(stderr, PERF_NAME ": r2cc_conn_stats: %s\n", strerror(-ret));
	exit(1);
}

/* Compare with the last sample; record an interval when @emit. */
static void sample(struct timeline *tl, double now, int emit, int partial)
{
	struct r2cc_rail_stats rails[PERF_MAX_RAILS];
	struct r2cc_conn_stats st;
	double dt = now - tl->last, mbps, r;
	struct perf_interval *iv;
	int i, n;

	n = perf_stats(tl->conn, &st, rails);
	if (n < 0)
		die_stats(n);
	for (i = 0; i < n && i < tl->nrails; i++)
		if (rails[i].state != tl->rails[i].state)
			tl_add_event(tl, "rail%d %s", i,
				     perf_rail_state(rails[i].state));
	if (st.failovers > tl->st.failovers)
		tl_add_event(tl, "failover%s",
			     st.failovers - tl->st.failovers > 1 ? "s" : "");
	if (st.repairs > tl->st.repairs)
		tl_add_event(tl, "repaired in %.1f ms (re-send posted %.1f ms after detection)",
			     (double)st.repair_ns_last / 1e6,
			     (double)st.repair_posted_ns_last / 1e6);
	if (st.fallback != tl->st.fallback)
		tl_add_event(tl, "TCP fallback %s", st.fallback ? "on" : "off");

	if (emit && dt > 0) {
		if (tl->niv == tl->cap) {
			tl->cap = tl->cap ? tl->cap * 2 : 256;
			tl->iv = realloc(tl->iv, tl->cap * sizeof(*tl->iv));
			if (!tl->iv) {
				fprintf(stderr, PERF_NAME ": out of memory\n");
				exit(1);
			}
		}
		mbps = (double)(tl->bytes - tl->bytes_last) * 8 / dt / 1e6;
		iv = &tl->iv[tl->niv++];
		iv->t = now - tl->t0;
		iv->dt = dt;
		iv->mbps = mbps;
		iv->partial = partial;
		iv->size = tl->size;
		if (tl->o->timeline) {
			printf("%7.3f s %8.1f Mbit/s", iv->t, mbps);
			for (i = 0; i < n; i++) {
				r = (double)(rails[i].bytes -
					     (i < tl->nrails ?
					      tl->rails[i].bytes : 0)) *
				    8 / dt / 1e6;
				printf("  rail%d %.1f %s", i, r,
				       perf_rail_state(rails[i].state));
			}
			if (tl->event[0])
				printf("  <- %s", tl->event);
			putchar('\n');
		}
		if (tl->csv) {
			fprintf(tl->csv, "%.3f,%.3f", iv->t, mbps);
			for (i = 0; i < n; i++)
				fprintf(tl->csv, ",%.3f",
					(double)(rails[i].bytes -
						 (i < tl->nrails ?
						  tl->rails[i].bytes : 0)) *
					8 / dt / 1e6);
			for (i = 0; i < n; i++)
				fprintf(tl->csv, ",%s",
					perf_rail_state(rails[i].state));
			/* CSV quoting: double any quote inside */
			fputs(",\"", tl->csv);
			for (i = 0; tl->event[i]; i++) {
				if (tl->event[i] == '"')
					fputc('"', tl->csv);
				fputc(tl->event[i], tl->csv);
			}
			fprintf(tl->csv, "\",%llu\n",
				(unsigned long long)tl->size);
			fflush(tl->csv);
		}
		tl->event[0] = '\0';
		tl->last = now;
		tl->bytes_last = tl->bytes;
	}
	tl->st = st;
	memcpy(tl->rails, rails, sizeof(rails));
	tl->nrails = n;
}

void tl_start(struct timeline *tl, double now)
{
	int i;

	tl->t0 = now;
	tl->last = now;
	tl->nrails = perf_stats(tl->conn, &tl->st, tl->rails);
	if (tl->nrails < 0)
		die_stats(tl->nrails);
	if (!tl->csv)
		return;
	fputs("time_s,mbit_s", tl->csv);
	for (i = 0; i < tl->nrails; i++)
		fprintf(tl->csv, ",rail%d_mbit_s", i);
	for (i = 0; i < tl->nrails; i++)
		fprintf(tl->csv, ",rail%d_state", i);
	fputs(",event,msg_size\n", tl->csv);
	fflush(tl->csv);
}

void tl_phase_begin(struct timeline *tl, uint64_t size, double now)
{
	/* Between phases nothing is measured, but events are kept. */
	sample(tl, now, 0, 0);
	tl->size = size;
	tl->phase_first = tl->niv;
	tl->last = now;
	tl->next = now + tl->o->interval_ms / 1000.0;
	tl->bytes_last = tl->bytes;
}

static void at_fire(struct timeline *tl, struct perf_at *at, double now)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)at->cmd, NULL };
	posix_spawnattr_t attr;
	sigset_t dfl;
	int ret;

	/* the command gets SIGPIPE back, which r2cc-perf ignores */
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigdefault(&attr, &dfl);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF);
	/* posix_spawn is vfork-like: no copy-on-write of registered memory */
	ret = posix_spawn(&at->pid, "/bin/sh", NULL, &attr, argv, environ);
	posix_spawnattr_destroy(&attr);
	at->fired = 1;
	if (ret) {
		fprintf(stderr, PERF_NAME ": --at: cannot run /bin/sh: %s\n",
			strerror(ret));
		exit(1);
	}
	printf("%7.3f s   at: %s (pid %d)\n", now - tl->t0, at->cmd,
	       (int)at->pid);
	tl_add_event(tl, "at: %s", at->cmd);
}

static void at_reap(struct timeline *tl, double now, int show)
{
	struct perf_at *at;
	int i, status;

	for (i = 0; i < tl->o->nat; i++) {
		at = (struct perf_at *)&tl->o->at[i];
		if (!at->fired || at->reaped || !at->pid)
			continue;
		if (waitpid(at->pid, &status, WNOHANG) != at->pid)
			continue;
		at->reaped = 1;
		if (WIFEXITED(status) && !WEXITSTATUS(status))
			continue;
		if (show)
			printf("%7.3f s   at: '%s' %s %d\n", now - tl->t0,
			       at->cmd, WIFEXITED(status) ? "exited" :
			       "killed by signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) :
			       WTERMSIG(status));
		tl_add_event(tl, "at command %d failed", i);
	}
}

void tl_poll(struct timeline *tl, double now)
{
	double step = tl->o->interval_ms / 1000.0;
	struct perf_at *at;
	int i;

	for (i = 0; i < tl->o->nat; i++) {
		at = (struct perf_at *)&tl->o->at[i];
		if (!at->fired && now - tl->t0 >= at->t)
			at_fire(tl, at, now);
	}
	if (now < tl->next)
		return;
	at_reap(tl, now, 1);
	sample(tl, now, 1, 0);
	while (tl->next <= now)
		tl->next += step;
}

void tl_phase_end(struct timeline *tl, double now)
{
	double step = tl->o->interval_ms / 1000.0;

	/* a sliver after the last tick is not worth a line */
	if (now - tl->last > step * 0.05)
		sample(tl, now, 1, now - tl->last < step * 0.999);
}

void tl_finish(struct timeline *tl)
{
	double now = perf_now();
	int i;

	at_reap(tl, now, 1);
	for (i = 0; i < tl->o->nat; i++)
		if (!tl->o->at[i].fired)
			fprintf(stderr, PERF_NAME ": --at %g:%s never ran: "
				"the transfer ended at %.3f s\n",
				tl->o->at[i].t, tl->o->at[i].cmd,
				now - tl->t0);
	if (tl->csv && fclose(tl->csv)) {
		fprintf(stderr, PERF_NAME ": --csv: %s\n", strerror(errno));
		exit(1);
	}
	tl->csv = NULL;
}

int tl_phase_rates(const struct timeline *tl, double *med, double *p99,
		   double *min)
{
	size_t i, n = 0, cnt = tl->niv - tl->phase_first;
	int full;
	double *v;

	*med = *p99 = *min = 0;
	if (!cnt)
		return 0;
	v = calloc(cnt, sizeof(*v));
	if (!v)
		return 0;
	for (full = 1; full >= 0 && !n; full--)
		for (i = tl->phase_first; i < tl->niv; i++)
			if (!full || !tl->iv[i].partial)
				v[n++] = tl->iv[i].mbps;
	*p99 = perf_percentile(v, n, 99);
	*med = perf_percentile(v, n, 50);
	*min = v[0];
	free(v);
	return (int)n;
}
