// SPDX-License-Identifier: GPL-2.0-only
/*
 * Failure traces: scripted events from the command line and random ones
 * drawn per NIC from exponential times between failures and to repair,
 * with optional flapping, partial degradation and silent black holes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* splitmix64: tiny, seedable, and the same on every libc */
uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* uniform in (0, 1): never 0, so log() below stays finite */
double rng_uniform(uint64_t *s)
{
	return ((rng_next(s) >> 11) + 0.5) * 0x1.0p-53;
}

static double rng_exp(uint64_t *s, double mean)
{
	return -mean * log(rng_uniform(s));
}

int trace_add(struct trace *tr, const struct event *e)
{
	if (tr->n == tr->cap) {
		int cap = tr->cap ? tr->cap * 2 : 64;
		struct event *ev;

		if (cap > SIM_MAX_EVENTS)
			return -1;
		ev = realloc(tr->ev, sizeof(*ev) * cap);
		if (!ev)
			return -1;
		tr->ev = ev;
		tr->cap = cap;
	}
	tr->ev[tr->n] = *e;
	tr->ev[tr->n].seq = tr->n;
	tr->n++;
	return 0;
}

void trace_free(struct trace *tr)
{
	free(tr->ev);
	memset(tr, 0, sizeof(*tr));
}

static int by_time(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->t != y->t)
		return (x->t > y->t) - (x->t < y->t);
	/* same instant: keep the order they were added in */
	return (x->seq > y->seq) - (x->seq < y->seq);
}

void trace_sort(struct trace *tr)
{
	if (tr->n > 1)
		qsort(tr->ev, tr->n, sizeof(*tr->ev), by_time);
}

static int parse_num(const char **p, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(*p, &end);
	if (end == *p || errno || !isfinite(*v))
		return -1;
	/* "10..50": strtod takes "10." and would leave ".50" */
	if (end[0] == '.' && end - *p > 1 && end[-1] == '.')
		end--;
	*p = end;
	return 0;
}

static int parse_int(const char **p, int *v)
{
	char *end;
	long l;

	if (**p < '0' || **p > '9')
		return -1;
	errno = 0;
	l = strtol(*p, &end, 10);
	if (errno || l > SIM_MAX_NODES)
		return -1;
	*v = (int)l;
	*p = end;
	return 0;
}

/*
 * NODE:NIC@T[..T2][=FRAC][/silent]: NIC of NODE fails at T (seconds) and
 * comes back at T2.  With @degrade the NIC keeps FRAC of its bandwidth.
 */
int trace_add_spec(struct trace *tr, const char *spec, bool degrade,
		   const struct fabric *f, char *err, int errlen)
{
	struct event e = { 0 };
	const char *p = spec;
	double t2 = -1.0;

	if (parse_int(&p, &e.node) || *p++ != ':' || parse_int(&p, &e.nic) ||
	    *p++ != '@' || parse_num(&p, &e.t))
		goto syntax;
	if (!strncmp(p, "..", 2)) {
		p += 2;
		if (parse_num(&p, &t2))
			goto syntax;
	}
	if (degrade) {
		if (*p++ != '=' || parse_num(&p, &e.frac))
			goto syntax;
		if (!(e.frac > 0.0 && e.frac < 1.0)) {
			snprintf(err, errlen, "degraded fraction must be in "
				 "(0, 1)");
			return -1;
		}
	}
	if (!strcmp(p, "/silent")) {
		e.silent = true;
		p += 7;
	}
	if (*p)
		goto syntax;
	if (e.node >= f->nodes || e.nic >= f->nics) {
		snprintf(err, errlen, "node %d NIC %d does not exist "
			 "(%d nodes x %d NICs)", e.node, e.nic, f->nodes,
			 f->nics);
		return -1;
	}
	if (e.t < 0.0 || (t2 >= 0.0 && t2 <= e.t) || e.t > 1e12 ||
	    t2 > 1e12 || (t2 < 0.0 && strstr(spec, ".."))) {
		snprintf(err, errlen, "times must be >= 0, at most 1e12 s, "
			 "and a restore after the failure");
		return -1;
	}
	if (trace_add(tr, &e))
		goto full;
	if (t2 >= 0.0) {
		e.t = t2;
		e.frac = 1.0;
		e.silent = false;
		if (trace_add(tr, &e))
			goto full;
	}
	return 0;
syntax:
	snprintf(err, errlen, "expected NODE:NIC@T[..T2]%s[/silent]",
		 degrade ? "=FRAC" : "");
	return -1;
full:
	snprintf(err, errlen, "too many events (at most %d)", SIM_MAX_EVENTS);
	return -1;
}

/*
 * Each NIC alternates up (exponential, mean MTBF) and failed (exponential,
 * mean repair) until @horizon.  A flap is a burst of short down/up cycles
 * before the NIC settles up again.  Returns -1 if the trace is too big.
 */
int trace_random(struct trace *tr, const struct random_trace *r,
		 const struct fabric *f, double horizon)
{
	uint64_t s = r->seed;
	int node, nic, i;

	if (r->mtbf <= 0.0)
		return 0;
	for (node = 0; node < f->nodes; node++)
		for (nic = 0; nic < f->nics; nic++) {
			double t = rng_exp(&s, r->mtbf);

			while (t < horizon) {
				struct event e = {
					.t = t, .node = node, .nic = nic,
				};
				double kind = rng_uniform(&s);
				double ends;

				e.silent = rng_uniform(&s) < r->silent_prob;
				if (kind < r->flap_prob) {
					for (i = 0; i < r->flap_count; i++) {
						e.t = t + 2 * i *
						      r->flap_period;
						e.frac = 0.0;
						if (trace_add(tr, &e))
							return -1;
						e.t += r->flap_period;
						e.frac = 1.0;
						e.silent = false;
						if (trace_add(tr, &e))
							return -1;
					}
					ends = t + 2 * r->flap_count *
					       r->flap_period;
				} else {
					if (kind < r->flap_prob +
						   r->degrade_prob) {
						e.frac = r->degrade_frac;
						e.silent = false;
					}
					if (trace_add(tr, &e))
						return -1;
					ends = t + rng_exp(&s, r->repair);
					e.t = ends;
					e.frac = 1.0;
					e.silent = false;
					if (trace_add(tr, &e))
						return -1;
				}
				t = ends + rng_exp(&s, r->mtbf);
			}
		}
	trace_sort(tr);
	return 0;
}
