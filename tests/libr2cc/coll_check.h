/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the collectives' test programs (coll.c, coll_p2p.c) share: the
 * "ok - " / "not ok - " lines tests/lib/coll.sh turns into TAP, a clock,
 * and the library's log on stderr with a time stamp.
 */
#ifndef R2CC_TESTS_COLL_CHECK_H
#define R2CC_TESTS_COLL_CHECK_H

#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <r2cc/coll.h>

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
 * A rank that crashes in CI leaves only "exit 139" behind: print the
 * signal and the stack (library frames as libr2cc.so.0(+OFFSET), which
 * addr2line resolves against the same build) to stderr, the rank's log,
 * then die of the signal as before.  Only async-signal-safe calls, but
 * backtrace(), which is preloaded below so it allocates nothing here.
 */
static void crash_report(int sig)
{
	static const char head[] = "crash: fatal signal; stack:\n";
	void *pc[64];
	int n;

	if (write(2, head, sizeof(head) - 1) < 0)
		goto out;
	n = backtrace(pc, 64);
	backtrace_symbols_fd(pc, n, 2);
out:
	signal(sig, SIG_DFL);
	raise(sig);
}

static void crash_report_install(void)
{
	static const int sigs[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	void *pc[1];
	unsigned int i;

	backtrace(pc, 1);	/* loads libgcc now, not in the handler */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], crash_report);
}

/*
 * A rank from the environment (torchrun's variables), a context logging
 * warnings to stderr, and a communicator with @mo on them; 0, or 1 with
 * the reason on stderr.
 */
static int coll_setup(const struct r2cc_comm_opts *mo, struct r2cc_boot **boot,
		      struct r2cc_ctx **ctx, struct r2cc_comm **comm)
{
	struct r2cc_boot_opts bo = { .size = sizeof(bo), .rank = -1 };
	struct r2cc_ctx_opts co = { .size = sizeof(co) };
	int ret;

	crash_report_install();
	co.log = logf_;
	co.log_level = R2CC_LOG_WARN;
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
