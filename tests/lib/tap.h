/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A small TAP 13 harness in the style of the kernel's kselftest.h:
 * tap_plan(), tap_ok(), tap_skip(), tap_done().  Exit status follows
 * kselftest: 0 all passed, 1 something failed, 4 skipped.
 */
#ifndef R2CC_TESTS_TAP_H
#define R2CC_TESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#define KSFT_PASS 0
#define KSFT_FAIL 1
#define KSFT_SKIP 4

static unsigned int tap_planned, tap_run, tap_failed;

static inline void tap_plan(unsigned int n)
{
	tap_planned = n;
	printf("TAP version 13\n1..%u\n", n);
}

static inline void __attribute__((format(printf, 2, 3)))
tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_run++;
	if (!cond)
		tap_failed++;
	printf("%sok %u - ", cond ? "" : "not ", tap_run);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline void __attribute__((format(printf, 1, 2)))
tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline void __attribute__((noreturn, format(printf, 1, 2)))
tap_skip_all(const char *fmt, ...)
{
	va_list ap;

	printf("TAP version 13\n1..0 # SKIP ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	exit(KSFT_SKIP);
}

static inline int tap_done(void)
{
	if (tap_run != tap_planned) {
		tap_diag("planned %u tests but ran %u", tap_planned, tap_run);
		return KSFT_FAIL;
	}
	return tap_failed ? KSFT_FAIL : KSFT_PASS;
}

#endif
