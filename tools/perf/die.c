// SPDX-License-Identifier: GPL-2.0-only
/*
 * How r2cc-perf gives up: one line on stderr naming this rank (rank_g,
 * set once the bootstrap says), then exit 1.  Every part of the tool
 * calls these; they call nothing of it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

int rank_g = -1;

void die_op(const char *fn, int ret, const char *what)
{
	fprintf(stderr, PERF_NAME ": rank %d: %s%s%s%s: %s\n", rank_g, fn,
		what ? " (" : "", what ? what : "", what ? ")" : "",
		strerror(-ret));
	exit(1);
}

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PERF_NAME ": rank %d: ", rank_g);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}
