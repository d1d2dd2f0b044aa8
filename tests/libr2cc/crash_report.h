/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * For the test programs that run in the testbed's nodes (coll, coll_p2p,
 * xfer): a stack on stderr when one crashes.
 */
#ifndef R2CC_TESTS_CRASH_REPORT_H
#define R2CC_TESTS_CRASH_REPORT_H

#include <execinfo.h>
#include <signal.h>
#include <unistd.h>

/*
 * A test program that crashes in CI leaves only "exit 139" behind: print
 * the stack (library frames as libr2cc.so.0(+OFFSET), which addr2line
 * resolves against the same build) to stderr, which the test keeps, then
 * die of the signal as before.  Only async-signal-safe calls, but
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

#endif /* R2CC_TESTS_CRASH_REPORT_H */
