/* SPDX-License-Identifier: GPL-2.0-only */
/* r2cc-sim: tables, CSV and the gnuplot timeline. */
#ifndef R2CC_SIM_OUTPUT_H
#define R2CC_SIM_OUTPUT_H

#include "cli.h"

void out_header(const struct sim_config *c, int nevents, double ideal_it);
void out_result(const struct sim_config *c, const struct run_result *r,
		bool first);
int out_plot(const struct sim_config *c, const struct run_result *r, int n);
bool have_gnuplot(void);

#endif
