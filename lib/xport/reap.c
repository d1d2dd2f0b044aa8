// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Destroying QPs the transport no longer uses, off the progress path.
 *
 * rxe can hold ibv_destroy_qp() for tens of seconds while packets of the
 * QP are still queued somewhere (6.1: __rxe_cleanup waits, then warns; it
 * took 51 s per QP in the chaos test, with the application's progress
 * loop stuck in it).  A QP handed here has been fenced and settled: no
 * buffer depends on when it goes, so one thread per process destroys them
 * in order, each QP before its CQ.  reap_wait() lets a context wait
 * for its own before its protection domains go.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include <infiniband/verbs.h>

#include "xport/reap.h"

struct reap_item {
	struct reap_item *next;
	struct ibv_qp *qp;
	struct ibv_cq *cq;
	const struct r2cc_ctx *ctx;
};

bool reap_inline;		/* the simulator: destroy at once */

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more = PTHREAD_COND_INITIALIZER;
static pthread_cond_t gone = PTHREAD_COND_INITIALIZER;
static struct reap_item *head, *tail, *busy;
static bool running;

static void destroy(struct ibv_qp *qp, struct ibv_cq *cq)
{
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
}

static void *reaper(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&mu);
	for (;;) {
		while (!head)
			pthread_cond_wait(&more, &mu);
		busy = head;
		head = head->next;
		if (!head)
			tail = NULL;
		pthread_mutex_unlock(&mu);
		destroy(busy->qp, busy->cq);
		pthread_mutex_lock(&mu);
		free(busy);
		busy = NULL;
		pthread_cond_broadcast(&gone);
	}
	return NULL;
}

/* Destroy @qp, then @cq, of @ctx soon, in another thread. */
void reap_qp(const struct r2cc_ctx *ctx, struct ibv_qp *qp,
	     struct ibv_cq *cq)
{
	struct reap_item *it;
	pthread_t t;

	if (reap_inline || !(it = calloc(1, sizeof(*it)))) {
		destroy(qp, cq);
		return;
	}
	it->qp = qp;
	it->cq = cq;
	it->ctx = ctx;
	pthread_mutex_lock(&mu);
	if (!running) {
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		running = !pthread_create(&t, &a, reaper, NULL);
		pthread_attr_destroy(&a);
	}
	if (!running) {
		pthread_mutex_unlock(&mu);
		free(it);
		destroy(qp, cq);
		return;
	}
	if (tail)
		tail->next = it;
	else
		head = it;
	tail = it;
	pthread_cond_signal(&more);
	pthread_mutex_unlock(&mu);
}

static bool pending(const struct r2cc_ctx *ctx)
{
	const struct reap_item *it;

	if (busy && busy->ctx == ctx)
		return true;
	for (it = head; it; it = it->next)
		if (it->ctx == ctx)
			return true;
	return false;
}

/* Wait until every QP and CQ of @ctx handed to reap_qp() is gone. */
void reap_wait(const struct r2cc_ctx *ctx)
{
	pthread_mutex_lock(&mu);
	while (pending(ctx))
		pthread_cond_wait(&gone, &mu);
	pthread_mutex_unlock(&mu);
}
