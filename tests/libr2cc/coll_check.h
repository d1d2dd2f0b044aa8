/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the collectives' test programs (coll.c, coll_p2p.c) share: the
 * "ok - " / "not ok - " lines tests/lib/coll.sh turns into TAP, a clock,
 * and the library's log on stderr with a time stamp.
 */
#ifndef R2CC_TESTS_COLL_CHECK_H
#define R2CC_TESTS_COLL_CHECK_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <r2cc/coll.h>

#include "crash_report.h"

static int failed;

static void check(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok - ", cond ? "" : "not ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failed += !cond;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void logf_(void *arg, enum r2cc_log_level l, const char *msg)
{
	(void)arg;
	fprintf(stderr, "[%.3f] r2cc %d: %s\n", now_s(), l, msg);
}

/*
 * A rank from the environment (torchrun's variables), a context logging
 * warnings (COLL_LOG=info: and news) to stderr, and a communicator with
 * @mo on them; 0, or 1 with the reason on stderr.
 */
static int coll_setup(const struct r2cc_comm_opts *mo, struct r2cc_boot **boot,
		      struct r2cc_ctx **ctx, struct r2cc_comm **comm)
{
	struct r2cc_boot_opts bo = { .size = sizeof(bo), .rank = -1 };
	struct r2cc_ctx_opts co = { .size = sizeof(co) };
	int ret;

	crash_report_install();
	co.log = logf_;
	co.log_level = getenv("COLL_LOG") && !strcmp(getenv("COLL_LOG"), "info") ?
		       R2CC_LOG_INFO : R2CC_LOG_WARN;
	ret = r2cc_boot_init(&bo, boot);
	if (!ret)
		ret = r2cc_ctx_create(&co, ctx);
	if (!ret)
		ret = r2cc_comm_init(*ctx, *boot, mo, comm);
	if (ret)
		fprintf(stderr, "setup: %s\n", strerror(-ret));
	return !!ret;
}

#endif /* R2CC_TESTS_COLL_CHECK_H */
