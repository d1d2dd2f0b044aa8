// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The context's stats file (<r2cc/job.h>): what r2ccctl jobs shows of
 * this process.  It is a shared mapping rewritten from the progress path
 * at most every PUBLISH_NS, so the data path pays one read of the coarse
 * clock per progress call and a copy of a few hundred bytes per
 * connection ten times a second.  A file that cannot be made costs nothing more: the
 * context works without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <r2cc/job.h>

#include "xport/publish.h"
#include "xport/types.h"

#define PUBLISH_NS	(100ull * 1000000)
#define CONN_SIZE	(sizeof(struct r2cc_job_conn) + \
			 R2CC_JOB_MAX_RAILS * sizeof(struct r2cc_job_rail))
#define FILE_SIZE	(sizeof(struct r2cc_job_header) + \
			 R2CC_JOB_MAX_CONNS * CONN_SIZE)

static unsigned int serial;	/* contexts made by this process */

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct r2cc_job_conn *conn_entry(struct r2cc_job_header *h, int i)
{
	return (void *)((char *)h + h->header_size + (size_t)i * h->conn_size);
}

static struct r2cc_job_rail *rail_entry(struct r2cc_job_conn *e, int i)
{
	return (void *)((char *)e + sizeof(*e) + (size_t)i * sizeof(struct r2cc_job_rail));
}

static void peer_name(const struct r2cc_conn *c, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char a[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (getpeername(c->ctl.fd, (struct sockaddr *)&ss, &sl)) {
		snprintf(out, len, "-");
		return;
	}
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)&ss;

		inet_ntop(AF_INET, &s->sin_addr, a, sizeof(a));
		port = ntohs(s->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)&ss;

		inet_ntop(AF_INET6, &s->sin6_addr, a, sizeof(a));
		port = ntohs(s->sin6_port);
	}
	snprintf(out, len, "%s:%u", a, port);
}

static void counters(struct r2cc_job_counters *o, const struct r2cc_conn_stats *s)
{
	o->msgs = s->msgs;
	o->bytes = s->bytes;
	o->resent_bytes = s->resent_bytes;
	o->tcp_bytes = s->tcp_bytes;
	o->failovers = s->failovers;
	o->repairs = s->repairs;
	o->repair_ns_last = s->repair_ns_last;
	o->repair_ns_max = s->repair_ns_max;
}

void publish_open(struct r2cc_ctx *ctx)
{
	const char *dir = getenv("R2CC_STATS_DIR");
	struct r2cc_job_header *h;
	char path[sizeof(ctx->job_path)];
	int fd, i, n;

	if (!dir)
		dir = "/run/r2cc";
	if (!*dir)
		return;
	n = snprintf(path, sizeof(path), "%s/%d-%u%s", dir, (int)getpid(),
		     __atomic_fetch_add(&serial, 1, __ATOMIC_RELAXED),
		     R2CC_JOB_SUFFIX);
	if (n < 0 || (size_t)n >= sizeof(path))
		return;
	/* A file of a dead process that had this PID goes first. */
	unlink(path);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_msg(ctx, R2CC_LOG_DEBUG, "no stats file in %s: %s", dir,
			strerror(errno));
		return;
	}
	if (ftruncate(fd, FILE_SIZE)) {
		close(fd);
		unlink(path);
		return;
	}
	h = mmap(NULL, FILE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (h == MAP_FAILED) {
		unlink(path);
		return;
	}
	h->version = R2CC_JOB_VERSION;
	h->header_size = sizeof(*h);
	h->file_size = FILE_SIZE;
	h->conn_size = CONN_SIZE;
	h->rail_size = sizeof(struct r2cc_job_rail);
	h->max_conns = R2CC_JOB_MAX_CONNS;
	h->max_rails = R2CC_JOB_MAX_RAILS;
	h->pid = (int32_t)getpid();
	h->proc_start = proc_start_of(0);
	h->start_time_ns = realtime_ns();
	h->update_time_ns = h->start_time_ns;
	h->notify_source = ctx->source;
	h->nnics = ctx->nnics < R2CC_JOB_MAX_NICS ? (uint32_t)ctx->nnics :
						    R2CC_JOB_MAX_NICS;
	for (i = 0; i < (int)h->nnics; i++) {
		snprintf(h->nics[i].dev_name, sizeof(h->nics[i].dev_name), "%s",
			 ctx->nics[i].info.dev_name);
		h->nics[i].port = ctx->nics[i].info.port;
		h->nics[i].bandwidth_mbps = ctx->nics[i].info.bandwidth_mbps;
	}
	{
		FILE *f = fopen("/proc/self/comm", "re");

		if (f) {
			if (fgets(h->comm, sizeof(h->comm), f))
				h->comm[strcspn(h->comm, "\n")] = 0;
			fclose(f);
		}
	}
	/* Last: a reader trusts a file only with its magic. */
	__atomic_store_n(&h->magic, R2CC_JOB_MAGIC, __ATOMIC_RELEASE);
	ctx->job = h;
	snprintf(ctx->job_path, sizeof(ctx->job_path), "%s", path);
}

void publish_close(struct r2cc_ctx *ctx)
{
	if (!ctx->job)
		return;
	unlink(ctx->job_path);
	munmap(ctx->job, FILE_SIZE);
	ctx->job = NULL;
}

/* A connection goes: its counters join the process's closed ones. */
void publish_conn_closed(struct r2cc_ctx *ctx, const struct r2cc_conn *c)
{
	struct r2cc_job_counters *t;

	if (!ctx->job)
		return;
	t = &ctx->job->closed;
	ctx->job_nclosed++;
	/* Odd first: the acquire half keeps the writes below after it. */
	__atomic_fetch_add(&ctx->job->seq, 1, __ATOMIC_ACQ_REL);
	t->msgs += c->st.msgs;
	t->bytes += c->st.bytes;
	t->resent_bytes += c->st.resent_bytes;
	t->tcp_bytes += c->st.tcp_bytes;
	t->failovers += c->st.failovers;
	t->repairs += c->st.repairs;
	if (c->st.repairs)
		t->repair_ns_last = c->st.repair_ns_last;
	if (c->st.repair_ns_max > t->repair_ns_max)
		t->repair_ns_max = c->st.repair_ns_max;
	__atomic_store_n(&ctx->job->seq, ctx->job->seq + 1, __ATOMIC_RELEASE);
}

void publish_due(struct r2cc_ctx *ctx)
{
	struct r2cc_job_header *h = ctx->job;
	const struct r2cc_conn *c;
	struct timespec ts;
	uint32_t n = 0, seq;
	uint64_t now;
	int i;

	if (!h)
		return;
	/* The coarse clock: 7 ns here against 35 for the precise one. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (now < ctx->job_next_ns)
		return;
	ctx->job_next_ns = now + PUBLISH_NS;
	seq = __atomic_fetch_add(&h->seq, 1, __ATOMIC_ACQ_REL);
	for (i = 0; i < (int)h->nnics; i++) {
		h->nics[i].state = ctx->nics[i].state;
		h->nics[i].degraded = ctx->nics[i].degraded;
	}
	for (c = ctx->conns; c && n < h->max_conns; c = c->next, n++) {
		struct r2cc_job_conn *e = conn_entry(h, (int)n);

		e->sender = c->sender;
		e->ready = c->state == CONN_READY;
		e->failed = c->state == CONN_FAILED;
		e->fallback = c->fallback;
		e->nrails = c->nrails < R2CC_JOB_MAX_RAILS ?
			    (uint32_t)c->nrails : R2CC_JOB_MAX_RAILS;
		peer_name(c, e->peer, sizeof(e->peer));
		counters(&e->c, &c->st);
		for (i = 0; i < (int)e->nrails; i++) {
			const struct rail *r = &c->rails[i];
			struct r2cc_job_rail *o = rail_entry(e, i);

			o->nic = r->nic;
			o->state = r->state == RAIL_FENCING ? R2CC_RAIL_DOWN :
							      r->state;
			o->standby = !conn_rail_primary(c, i);
			o->degraded = r->degraded;
			o->reason = r->st.reason;
			o->bytes = r->st.bytes;
			o->failures = r->st.failures;
			o->rollbacks = r->st.rollbacks;
			o->failbacks = r->st.failbacks;
			o->drains = r->st.drains;
		}
	}
	h->nconns = n;
	h->conns_total = ctx->job_nclosed + n;
	h->update_time_ns = realtime_ns();
	__atomic_store_n(&h->seq, seq + 2, __ATOMIC_RELEASE);
}
