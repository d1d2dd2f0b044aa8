// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The context's own progress thread.
 *
 * The transport moves only when something calls into it, and a request
 * that has completed can still leave its peer waiting on this end: the
 * fence report of a rail that failed under it, the answer to a failback,
 * receive credits.  An application that blocks outside the library after
 * its last request completed (in compute, in I/O, in another library's
 * barrier) would hold its peer's requests until it comes back, or until
 * the peer gives up on it.  So every R2CC_PROGRESS_MS (10 by default; 0:
 * no thread) this thread looks whether anything made progress on the
 * context since it last looked, and makes one pass itself if nothing did.
 * An application that calls into the library more often than that never
 * meets it; one that is blocked answers its peers within the period.  The
 * thread only tries the context's lock: a caller holding it is making
 * progress already.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "xport/conn.h"
#include "xport/progress.h"

bool progress_idle(struct r2cc_ctx *ctx, uint64_t *seen)
{
	bool idle = ctx->progress_passes == *seen && ctx->conns;

	if (idle)
		conn_progress_all(ctx);
	*seen = ctx->progress_passes;
	return idle;
}

static void *progress_main(void *arg)
{
	struct r2cc_ctx *ctx = arg;
	uint64_t period = (uint64_t)ctx->tune.progress_ms * 1000000, seen = 0;
	struct timespec at;

	pthread_mutex_lock(&ctx->prog_mu);
	while (!ctx->prog_stop) {
		clock_gettime(CLOCK_MONOTONIC, &at);
		at.tv_sec += (time_t)(period / 1000000000);
		at.tv_nsec += (long)(period % 1000000000);
		if (at.tv_nsec >= 1000000000) {
			at.tv_sec++;
			at.tv_nsec -= 1000000000;
		}
		while (!ctx->prog_stop &&
		       pthread_cond_timedwait(&ctx->prog_cv, &ctx->prog_mu,
					      &at) != ETIMEDOUT)
			;
		if (ctx->prog_stop)
			break;
		pthread_mutex_unlock(&ctx->prog_mu);
		if (!pthread_mutex_trylock(&ctx->lock)) {
			progress_idle(ctx, &seen);
			ctx_unlock(ctx);
		}
		pthread_mutex_lock(&ctx->prog_mu);
	}
	pthread_mutex_unlock(&ctx->prog_mu);
	return NULL;
}

int progress_start(struct r2cc_ctx *ctx)
{
	pthread_condattr_t ca;
	sigset_t all, old;
	int ret;

	if (!ctx->tune.progress_ms)
		return 0;
	pthread_mutex_init(&ctx->prog_mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&ctx->prog_cv, &ca);
	pthread_condattr_destroy(&ca);
	/* The application's signals go to the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = -pthread_create(&ctx->prog_thread, NULL, progress_main, ctx);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		pthread_cond_destroy(&ctx->prog_cv);
		pthread_mutex_destroy(&ctx->prog_mu);
		log_msg(ctx, R2CC_LOG_ERROR, "progress thread: %d", ret);
		return ret;
	}
	pthread_setname_np(ctx->prog_thread, "r2cc-progress");
	ctx->prog_running = true;
	return 0;
}

void progress_stop(struct r2cc_ctx *ctx)
{
	if (!ctx->prog_running)
		return;
	pthread_mutex_lock(&ctx->prog_mu);
	ctx->prog_stop = true;
	pthread_cond_signal(&ctx->prog_cv);
	pthread_mutex_unlock(&ctx->prog_mu);
	pthread_join(ctx->prog_thread, NULL);
	pthread_cond_destroy(&ctx->prog_cv);
	pthread_mutex_destroy(&ctx->prog_mu);
	ctx->prog_running = false;
}
