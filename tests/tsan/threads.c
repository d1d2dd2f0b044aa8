// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The thread model under ThreadSanitizer, the way NCCL drives a net
 * plugin: per process, a service thread that listens, connects, accepts,
 * registers and closes while a progress thread posts and tests requests on
 * connections already up, at the same time.  Here a sender and a receiver
 * context each have a progress thread streaming checked messages over one
 * connection, a service thread opens and closes further connections and
 * registers and deregisters memory on both contexts, and a hardware thread
 * runs the fake NIC (tests/xsim/fake_verbs.c, under its own lock) and cuts
 * a rail now and then; each context's own progress thread (lib/xport/progress.c)
 * runs every millisecond beside them.  Control channels are real TCP over
 * loopback.
 *
 * TAP; built with -fsanitize=thread by `make check-tsan`, where any data
 * race the sanitizer sees fails the run (exit code 66).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xport/xport.h"
#include "world.h"

#define NRAILS	2
#define MSGS	3000
#define WINDOW	4
#define LEN	(3 * 4096 + 100)
#define CYCLES	40

static struct r2cc_ctx *ctx[2];
static struct r2cc_conn *conn[2];
static atomic_bool stop;
static atomic_int bad;
static uint8_t sbuf[WINDOW][LEN], rbuf[WINDOW][LEN];
static int received;

static void fail(const char *what)
{
	printf("# %s\n", what);
	fflush(stdout);
	atomic_fetch_add(&bad, 1);
}

static void on_write(int node, uint64_t addr, uint32_t len)
{
	(void)node;
	(void)addr;
	(void)len;
}

static void violation(const char *what)
{
	fail(what);
}

static uint8_t pat(int m, size_t i)
{
	return (uint8_t)(m * 131 + i * 7 + (i >> 8));
}

static struct r2cc_ctx *mk_ctx(int node)
{
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_ctx *c = calloc(1, sizeof(*c));
	int i;

	pthread_mutex_init(&c->lock, NULL);
	c->nnics = c->ndevs = NRAILS;
	c->kmod_fd = c->epoll_fd = -1;
	c->source = R2CC_NOTIFY_VERBS;
	for (i = 0; i < NRAILS; i++) {
		struct r2cc_nic *n = &c->nics[i];

		n->info.size = sizeof(n->info);
		snprintf(n->info.dev_name, sizeof(n->info.dev_name),
			 "tsan%d_%d", node, i);
		n->info.port = 1;
		n->info.link_layer = R2CC_LINK_ETHERNET;
		n->info.gid[15] = (uint8_t)(node * 16 + i + 1);
		n->info.bandwidth_mbps = 100000;
		n->state = R2CC_NIC_ACTIVE;
		n->dev = i;
		n->kmod_dev = n->slot = -1;
		c->devs[i] = fv_context(node, i);
		c->pds[i] = fv_pd(node, i);
	}
	tune_resolve(c, &o);
	c->tune.chunk_size = 4096;
	c->tune.tcp_fallback = true;
	strcpy(c->tune.ctrl_ifname, "lo");
	c->tune.progress_ms = 1;
	handle_add(c, R2CC_OBJ_CTX);
	if (progress_start(c))
		fail("progress thread not started");
	return c;
}

/* A connection from ctx[0] to ctx[1]: [0] sends, [1] receives. */
static int pair(struct r2cc_conn **tx, struct r2cc_conn **rx)
{
	struct r2cc_listener *l;
	struct r2cc_handle h;
	int a = 0, b = 0, n;

	*rx = NULL;
	if (r2cc_listen(ctx[1], &h, &l) || r2cc_connect(ctx[0], &h, tx))
		return -1;
	for (n = 0; n < 1000000 && !*rx; n++) {
		r2cc_progress(ctx[0]);
		if (r2cc_accept(l, rx) && n % 64 == 63)
			sched_yield();
	}
	r2cc_listener_close(l);
	for (n = 0; *rx && n < 1000000 && (a != 1 || b != 1); n++) {
		a = r2cc_conn_ready(*tx);
		b = r2cc_conn_ready(*rx);
		if (a < 0 || b < 0)
			break;
		if (n % 64 == 63)
			sched_yield();
	}
	return a == 1 && b == 1 ? 0 : -1;
}

static void *hardware(void *arg)
{
	struct xs_rng rng = { 42 };
	unsigned long steps = 0;

	(void)arg;
	while (!atomic_load(&stop)) {
		struct fqp *qs[64];
		int n;

		fv_lock();
		n = fv_qps(qs, 64);
		if (n) {
			struct fqp *q = qs[xs_below(&rng, (uint32_t)n)];

			if (fv_flush_pending(q))
				fv_flush(q);
			else if (!fv_deliver(q))
				fv_ack(q);
		}
		xs_pipe_deliver(0, SIZE_MAX);
		xs_pipe_deliver(1, SIZE_MAX);
		/* A black hole on rail 1 for a while, twice a run. */
		if (++steps % 200000 == 100000)
			fv_set_link(1, false);
		else if (steps % 200000 == 150000)
			fv_set_link(1, true);
		fv_unlock();
		__atomic_fetch_add(&xs_now, 20000, __ATOMIC_RELAXED);
		if (steps % 16 == 0)
			sched_yield();
	}
	return NULL;
}

static void *sender(void *arg)
{
	struct r2cc_req *q[WINDOW] = { 0 };
	struct r2cc_mr *mr;
	int next = 0, done = 0, i, k, fin, ret;

	(void)arg;
	if (r2cc_mr_reg(ctx[0], sbuf, sizeof(sbuf), 0, &mr)) {
		fail("sender: register");
		return NULL;
	}
	while (done < MSGS && !atomic_load(&bad)) {
		for (i = 0; i < WINDOW; i++) {
			if (q[i]) {
				ret = r2cc_test(q[i], &fin, NULL);
				if (ret)
					fail("sender: a send failed");
				if (fin) {
					q[i] = NULL;
					done++;
				}
			}
			if (!q[i] && next < MSGS) {
				for (k = 0; k < LEN; k++)
					sbuf[i][k] = pat(next, (size_t)k);
				if (!r2cc_isend(conn[0], mr, sbuf[i], LEN, 0,
						&q[i]))
					next++;
			}
		}
		sched_yield();
	}
	while (r2cc_mr_dereg(mr) == -EBUSY)
		sched_yield();
	return NULL;
}

static void *receiver(void *arg)
{
	struct r2cc_req *q[WINDOW] = { 0 };
	int want[WINDOW], posted = 0, i, k, fin, ret;
	struct r2cc_mr *mr;
	size_t size;

	(void)arg;
	if (r2cc_mr_reg(ctx[1], rbuf, sizeof(rbuf), 0, &mr)) {
		fail("receiver: register");
		return NULL;
	}
	while (received < MSGS && !atomic_load(&bad)) {
		for (i = 0; i < WINDOW; i++) {
			if (q[i]) {
				ret = r2cc_test(q[i], &fin, &size);
				if (ret)
					fail("receiver: a receive failed");
				if (!fin)
					continue;
				q[i] = NULL;
				for (k = 0; k < LEN; k++)
					if (size != LEN ||
					    rbuf[i][k] != pat(want[i], (size_t)k)) {
						fail("receiver: wrong bytes");
						break;
					}
				received++;
			}
			if (!q[i] && posted < MSGS) {
				void *b = rbuf[i];
				size_t len = LEN;
				uint32_t tag = 0;

				memset(rbuf[i], 0, LEN);
				if (!r2cc_irecv(conn[1], 1, &b, &len, &tag, &mr,
						&q[i]))
					want[i] = posted++;
			}
		}
		sched_yield();
	}
	while (r2cc_mr_dereg(mr) == -EBUSY)
		sched_yield();
	return NULL;
}

/* NCCL's service thread: setup calls beside the data calls. */
static void *service(void *arg)
{
	static uint8_t scratch[2][65536];
	struct r2cc_conn_stats st = { .size = sizeof(st) };
	int i, n;

	(void)arg;
	for (i = 0; i < CYCLES && !atomic_load(&bad); i++) {
		struct r2cc_conn *tx, *rx;
		struct r2cc_mr *m0, *m1;

		if (r2cc_mr_reg(ctx[0], scratch[0], sizeof(scratch[0]), 0, &m0) ||
		    r2cc_mr_reg(ctx[1], scratch[1], sizeof(scratch[1]), 0, &m1)) {
			fail("service: register");
			break;
		}
		if (pair(&tx, &rx))
			fail("service: a second connection did not come up");
		r2cc_conn_stats(conn[0], &st, NULL, 0);
		for (n = 0; n < NRAILS; n++)
			r2cc_nic_is_active(ctx[n % 2], n);
		if (rx)
			r2cc_conn_close(rx);
		r2cc_conn_close(tx);
		r2cc_mr_dereg(m0);
		r2cc_mr_dereg(m1);
	}
	return NULL;
}

int main(void)
{
	static const struct fv_hooks hooks = { on_write, violation };
	pthread_t hw, th[3];
	int i;

	printf("1..2\n");
	fv_threaded = true;
	fv_init(&hooks);
	fv_reset();
	xs_now = 1000000000;
	ctx[0] = mk_ctx(0);
	ctx[1] = mk_ctx(1);
	pthread_create(&hw, NULL, hardware, NULL);
	if (pair(&conn[0], &conn[1])) {
		printf("not ok 1 - connection up\n");
		atomic_store(&stop, true);
		pthread_join(hw, NULL);
		return 1;
	}
	pthread_create(&th[0], NULL, sender, NULL);
	pthread_create(&th[1], NULL, receiver, NULL);
	pthread_create(&th[2], NULL, service, NULL);
	for (i = 0; i < 3; i++)
		pthread_join(th[i], NULL);
	atomic_store(&stop, true);
	pthread_join(hw, NULL);
	printf("%sok 1 - %d of %d messages checked while %d connections came and went\n",
	       received == MSGS && !atomic_load(&bad) ? "" : "not ", received,
	       MSGS, CYCLES);
	r2cc_conn_close(conn[0]);
	r2cc_conn_close(conn[1]);
	for (i = 0; i < 2; i++) {
		progress_stop(ctx[i]);
		reap_wait(ctx[i]);
		handle_del(ctx[i]);
		pthread_mutex_destroy(&ctx[i]->lock);
		free(ctx[i]);
	}
	printf("%sok 2 - no verbs object left (%d)\n",
	       fv_live_count() ? "not " : "", fv_live_count());
	return atomic_load(&bad) || received != MSGS || fv_live_count();
}
