// SPDX-License-Identifier: GPL-2.0-only
/*
 * Context, registered rings and connections; their teardown.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <r2cc/bootstrap.h>

#include "perf.h"

static void log_cb(void *arg, enum r2cc_log_level level, const char *msg)
{
	static const char *const names[] = { "error", "warn", "info", "debug" };

	(void)arg;
	fprintf(stderr, "libr2cc[%d] %s: %s\n", rank_g,
		(unsigned int)level < 4 ? names[level] : "?", msg);
}

static void *alloc_ring(size_t len)
{
	void *m = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED)
		die("cannot map %zu bytes: %s", len, strerror(errno));
	return m;
}

void post_recv(struct perf *p)
{
	unsigned int slot = p->rposted % p->rring;
	void *bufs[1] = { p->rbuf + slot * p->stride };
	size_t lens[1] = { p->stride };
	uint32_t tags[1] = { TAG };
	struct r2cc_mr *mrs[1] = { p->rmr };
	int ret;

	ret = r2cc_irecv(p->in, 1, bufs, lens, tags, mrs, &p->rreq[slot]);
	if (ret)
		die_op("r2cc_irecv", ret, NULL);
	p->rposted++;
}

void setup_ctx(struct perf *p)
{
	struct r2cc_ctx_opts co = { .size = sizeof(co) };
	const struct perf_opts *o = &p->o;
	int ret;

	co.log = log_cb;
	co.log_level = o->verbose >= 2 ? R2CC_LOG_DEBUG :
		       o->verbose == 1 ? R2CC_LOG_INFO : R2CC_LOG_WARN;
	co.nics = o->nics;
	co.flags = o->no_kmod ? R2CC_CTX_NO_KMOD : 0;
	co.chunk_size = o->chunk;
	co.stall_ms = o->stall_ms;
	co.rail_depth = o->rail_depth;
	co.peer_timeout_ms = o->peer_timeout_ms;
	co.fallback = o->tcp_fallback < 0 ? R2CC_FALLBACK_DEFAULT :
		      o->tcp_fallback ? R2CC_FALLBACK_TCP : R2CC_FALLBACK_NONE;
	co.ctrl_ifname = o->ctrl_if;
	ret = r2cc_ctx_create(&co, &p->ctx);
	if (ret)
		die_op("r2cc_ctx_create", ret, NULL);
}

void setup_buffers(struct perf *p)
{
	uint64_t max = p->o.sizes[p->o.nsizes - 1];
	int lat = p->o.mode == PERF_LAT, ret;

	if (max < sizeof(struct marker))
		max = sizeof(struct marker);
	p->stride = (max + 4095) & ~(size_t)4095;
	/* bw: rank 0 only sends, rank 1 only receives; lat: both do both */
	p->sring = lat ? 1 : (p->o.rank == 0 ? p->o.window : 0);
	p->rring = lat ? 2 : (p->o.rank == 1 ? p->o.window : 0);
	if (p->sring) {
		p->sbuf = alloc_ring(p->sring * p->stride);
		ret = r2cc_mr_reg(p->ctx, p->sbuf, p->sring * p->stride, 0,
				  &p->smr);
		if (ret)
			die_op("r2cc_mr_reg", ret, "send ring");
	}
	if (p->rring) {
		p->rbuf = alloc_ring(p->rring * p->stride);
		ret = r2cc_mr_reg(p->ctx, p->rbuf, p->rring * p->stride, 0,
				  &p->rmr);
		if (ret)
			die_op("r2cc_mr_reg", ret, "receive ring");
	}
}

/*
 * --bw: rank 1 listens, rank 0 connects.  --lat: each listens and each
 * connects, one connection per direction.
 */
void setup_conns(struct perf *p)
{
	struct r2cc_handle mine, all[2];
	int lat = p->o.mode == PERF_LAT, rank = p->o.rank, ret;
	int listen = lat || rank == 1, connect = lat || rank == 0;
	int out_ok = !connect, in_ok = !listen;
	double last, now;
	struct timespec nap = { 0, 100000 };

	memset(&mine, 0, sizeof(mine));
	if (listen) {
		ret = r2cc_listen(p->ctx, &mine, &p->lis);
		if (ret)
			die_op("r2cc_listen", ret, NULL);
	}
	ret = r2cc_boot_allgather(p->boot, &mine, sizeof(mine), all);
	if (ret)
		die_op("r2cc_boot_allgather", ret, "listen handles");
	if (connect) {
		ret = r2cc_connect(p->ctx, &all[1 - rank], &p->out);
		if (ret)
			die_op("r2cc_connect", ret, NULL);
	}
	last = perf_now();
	while (!out_ok || !in_ok) {
		if (listen && !p->in) {
			ret = r2cc_accept(p->lis, &p->in);
			if (ret && ret != -EAGAIN)
				die_op("r2cc_accept", ret, NULL);
		}
		if (!out_ok) {
			ret = r2cc_conn_ready(p->out);
			if (ret < 0)
				die_op("r2cc_conn_ready", ret, "outgoing");
			out_ok = ret;
		}
		if (p->in && !in_ok) {
			ret = r2cc_conn_ready(p->in);
			if (ret < 0)
				die_op("r2cc_conn_ready", ret, "incoming");
			in_ok = ret;
		}
		now = perf_now();
		if (now - last > p->o.timeout)
			die("the connection was not ready after %g s "
			    "(%s%s); is the peer running? (--timeout)",
			    p->o.timeout, !in_ok && listen ?
			    (p->in ? "incoming not ready" : "nothing accepted")
			    : "", !out_ok ? (!in_ok && listen ?
			    ", outgoing not ready" : "outgoing not ready") : "");
		nanosleep(&nap, NULL);
	}
	if (p->lis) {
		ret = r2cc_listener_close(p->lis);
		if (ret)
			die_op("r2cc_listener_close", ret, NULL);
		p->lis = NULL;
	}
	/* rank 1 of --bw keeps the whole ring posted; --lat one ahead */
	while (p->rring && p->rposted < (lat ? (rank == 1) : p->rring))
		post_recv(p);
}

void teardown(struct perf *p)
{
	int ret;

	if (p->out)
		r2cc_conn_close(p->out);
	if (p->in)
		r2cc_conn_close(p->in);
	if (p->smr && (ret = r2cc_mr_dereg(p->smr)))
		fprintf(stderr, PERF_NAME ": rank %d: r2cc_mr_dereg: %s\n",
			rank_g, strerror(-ret));
	if (p->rmr && (ret = r2cc_mr_dereg(p->rmr)))
		fprintf(stderr, PERF_NAME ": rank %d: r2cc_mr_dereg: %s\n",
			rank_g, strerror(-ret));
	r2cc_ctx_destroy(p->ctx);
	r2cc_boot_destroy(p->boot);
	if (p->sbuf)
		munmap(p->sbuf, p->sring * p->stride);
	if (p->rbuf)
		munmap(p->rbuf, p->rring * p->stride);
}

/* --csv FILE: "%r" in the name becomes the rank (nodes may share a disk). */
FILE *open_csv(const char *name, int rank)
{
	const char *pct = strstr(name, "%r");
	char path[4096];
	FILE *f;

	if (pct)
		snprintf(path, sizeof(path), "%.*s%d%s", (int)(pct - name),
			 name, rank, pct + 2);
	else
		snprintf(path, sizeof(path), "%s", name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, PERF_NAME ": --csv: cannot write '%s': %s\n",
			path, strerror(errno));
		exit(EXIT_USAGE);
	}
	return f;
}
