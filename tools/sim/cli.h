/* SPDX-License-Identifier: GPL-2.0-only */
/* r2cc-sim: configuration from flags and config files. */
#ifndef R2CC_SIM_CLI_H
#define R2CC_SIM_CLI_H

#include <stdio.h>

#include "sim.h"

#define CLI_MAX_VALUE	4096	/* longest accepted value or config line */

struct sim_config {
	struct fabric fab;
	struct workload wl;
	struct detect_params det;
	struct random_trace rnd;
	struct trace trace;
	double horizon;		/* random trace length, 0 = auto */
	long iters;
	unsigned strat_mask;
	int csv;
	char plot[CLI_MAX_VALUE + 1];
	/* raw values in CLI units, converted by cli_finish() */
	double nic_gbps, intra_gbps, lat_us, port_us, stall_ms, hbm_tbps;
	double tflops, mtbf_h, seed;
};

/* 0: run; 1: help or version printed, exit 0; 2: usage error printed. */
int cli_parse(int argc, char **argv, struct sim_config *c);
void cli_free(struct sim_config *c);
void cli_usage(FILE *out);

#endif
