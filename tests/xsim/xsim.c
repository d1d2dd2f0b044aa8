// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * r2cc-xsim: runs the transport's protocol simulator over many seeds and
 * prints TAP.  A failing seed is printed with the command that replays it:
 *
 *   xsim [-n SEEDS] [-s FIRST] [-t SECONDS]
 *   R2CC_SIM_SEED=0x1234 xsim          one seed, traced on stderr
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "world.h"

static double wall(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void describe(const struct xs_config *c)
{
	printf("#   rails %d %s, fallback %s, depth %u, %d messages of up to %u chunks, window %d, groups of %d, %d faults%s\n",
	       c->nrails, c->ib ? "IB" : "RoCE", c->fallback ? "tcp" : "none",
	       c->rail_depth, c->nmsgs, c->max_chunks, c->send_window,
	       c->max_group, c->faults, c->enomem ? ", ENOMEM" : "");
}

int main(int argc, char **argv)
{
	const char *one = getenv("R2CC_SIM_SEED");
	uint64_t first = 1, n = 2000, s;
	double limit = 0, t0;
	int opt, bad = 0;

	while ((opt = getopt(argc, argv, "n:s:t:")) != -1) {
		switch (opt) {
		case 'n':
			n = strtoull(optarg, NULL, 0);
			break;
		case 's':
			first = strtoull(optarg, NULL, 0);
			break;
		case 't':
			limit = atof(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-n SEEDS] [-s FIRST] [-t SECONDS]\n",
				argv[0]);
			return 2;
		}
	}
	if (one && *one) {
		struct xs_config c;

		xs_config_draw(&c, strtoull(one, NULL, 0));
		c.verbose = true;
		printf("1..1\n");
		describe(&c);
		if (xs_run(&c)) {
			printf("not ok 1 - seed %s: %s\n", one, xs_why);
			return 1;
		}
		printf("ok 1 - seed %s\n", one);
		return 0;
	}
	printf("1..1\n");
	t0 = wall();
	for (s = first; s < first + n; s++) {
		struct xs_config c;

		if (limit && wall() - t0 > limit)
			break;
		xs_config_draw(&c, s);
		if (xs_run(&c)) {
			printf("# seed %#llx: %s\n", (unsigned long long)s, xs_why);
			describe(&c);
			printf("#   replay: R2CC_SIM_SEED=%#llx %s\n",
			       (unsigned long long)s, argv[0]);
			if (++bad == 10)
				break;
		}
	}
	printf("# %llu seeds in %.1f s (%.0f seeds/s, %.0f steps/s)\n",
	       (unsigned long long)(s - first), wall() - t0,
	       (s - first) / (wall() - t0), xs_steps_total / (wall() - t0));
	printf("%sok 1 - protocol simulator: %llu seeds from %llu, %d failed\n",
	       bad ? "not " : "", (unsigned long long)(s - first),
	       (unsigned long long)first, bad);
	return bad ? 1 : 0;
}
