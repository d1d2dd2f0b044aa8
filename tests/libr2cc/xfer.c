// SPDX-License-Identifier: GPL-2.0-only
/*
 * A checked stream between two ranks, for the testbed's failover tests:
 * rank 0 sends --msgs messages of --size bytes, --window at a time, to
 * rank 1, which checks every byte against the pattern of its sequence
 * number.  Faults are injected from outside while it runs.  Prints one
 * "xfer-result:" line (the tests parse it) and exits 0 only when every
 * message arrived intact, or with the error --expect asked for.  With
 * --idle-ms a rank done with its last message sleeps that long before the
 * closing barrier, calling nothing in the library; with --hold-ms both
 * wait that long, connected, before the stream starts.
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <r2cc/bootstrap.h>
#include <r2cc/r2cc.h>

#include "crash_report.h"
#include "xport/rail_reason.h"

#define MAX_WINDOW 32

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static void fill(uint8_t *p, size_t len, uint64_t seq)
{
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t v = mix(seq << 32 | i / 8);

		memcpy(p + i, &v, len - i < 8 ? len - i : 8);
	}
}

/* Bytes that differ from the pattern. */
static size_t check(const uint8_t *p, size_t len, uint64_t seq)
{
	size_t i, j, bad = 0;

	for (i = 0; i < len; i += 8) {
		uint64_t v = mix(seq << 32 | i / 8);
		const uint8_t *e = (const uint8_t *)&v;

		for (j = 0; j < 8 && i + j < len; j++)
			bad += p[i + j] != e[j];
	}
	return bad;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int verbose;

/*
 * The bootstrap barrier in a thread of its own, so that the caller keeps
 * the connection moving until the peer is there: a send that went over
 * the TCP fallback completes once queued, and its bytes leave this
 * process only while it makes progress.
 */
struct barrier_arg {
	struct r2cc_boot *b;
	int done;
};

static void *barrier_thread(void *p)
{
	struct barrier_arg *a = p;

	r2cc_boot_barrier(a->b);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void barrier_progressing(struct r2cc_boot *b, struct r2cc_ctx *ctx)
{
	struct barrier_arg a = { .b = b };
	pthread_t t;

	if (pthread_create(&t, NULL, barrier_thread, &a)) {
		r2cc_boot_barrier(b);
		return;
	}
	while (!__atomic_load_n(&a.done, __ATOMIC_ACQUIRE))
		r2cc_progress(ctx);
	pthread_join(t, NULL);
}

static void logf_(void *arg, enum r2cc_log_level l, const char *msg)
{
	(void)arg;
	fprintf(stderr, "[%.3f] r2cc %d: %s\n", now_s(), l, msg);
}

static void usage(void)
{
	fprintf(stderr, "usage: xfer [--msgs N] [--size BYTES] [--window W] "
		"[--expect ERRNO] [--timeout S] [--no-kmod] [--ticks] "
		"[--hold-ms MS] [--idle-ms MS] [-v]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "msgs", 1, 0, 'n' }, { "size", 1, 0, 's' },
		{ "window", 1, 0, 'w' }, { "expect", 1, 0, 'e' },
		{ "timeout", 1, 0, 't' }, { "no-kmod", 0, 0, 'K' },
		{ "verbose", 0, 0, 'v' }, { "ticks", 0, 0, 'T' },
		{ "idle-ms", 1, 0, 'I' }, { "hold-ms", 1, 0, 'H' },
		{ 0, 0, 0, 0 },
	};
	struct r2cc_ctx_opts co = { .size = sizeof(co) };
	struct r2cc_boot_opts bo = { .size = sizeof(bo), .rank = -1 };
	struct r2cc_handle hs[2], mine = { { 0 } };
	struct r2cc_req *req[MAX_WINDOW] = { 0 };
	uint64_t seq_of[MAX_WINDOW];
	struct r2cc_conn_stats st = { .size = sizeof(st) };
	struct r2cc_rail_stats rs[8];
	long msgs = 200, window = 4, expect = 0, timeout = 120, idle_ms = 0;
	long hold_ms = 0;
	size_t size = 1 << 20, bad = 0, verified = 0;
	struct r2cc_listener *l = NULL;
	struct r2cc_conn *c = NULL;
	struct r2cc_boot *b;
	struct r2cc_ctx *ctx;
	struct r2cc_mr *mr;
	uint64_t posted = 0, done = 0;
	int opt, rank, ret, err = 0, i, ticks = 0;
	double t0, t1, next_tick = 0.5;
	uint8_t *buf;

	crash_report_install();
	while ((opt = getopt_long(argc, argv, "v", lo, NULL)) != -1) {
		switch (opt) {
		case 'n': msgs = atol(optarg); break;
		case 's': size = strtoull(optarg, NULL, 0); break;
		case 'w': window = atol(optarg); break;
		case 'e': expect = atol(optarg); break;
		case 't': timeout = atol(optarg); break;
		case 'K': co.flags |= R2CC_CTX_NO_KMOD; break;
		case 'v': verbose++; break;
		case 'T': ticks = 1; break;
		case 'I': idle_ms = atol(optarg); break;
		case 'H': hold_ms = atol(optarg); break;
		default: usage();
		}
	}
	if (msgs < 1 || window < 1 || window > MAX_WINDOW || timeout < 1 ||
	    idle_ms < 0 || idle_ms > 600000 || hold_ms < 0 || hold_ms > 600000)
		usage();
	co.log = logf_;
	co.log_level = verbose ? R2CC_LOG_DEBUG : R2CC_LOG_WARN;
	ret = r2cc_boot_init(&bo, &b);
	if (ret) {
		fprintf(stderr, "r2cc_boot_init: %s\n", strerror(-ret));
		return 1;
	}
	rank = r2cc_boot_rank(b);
	ret = r2cc_ctx_create(&co, &ctx);
	if (ret) {
		fprintf(stderr, "r2cc_ctx_create: %s\n", strerror(-ret));
		return 1;
	}
	buf = aligned_alloc(4096, (size * window + 4095) / 4096 * 4096);
	if (!buf || r2cc_mr_reg(ctx, buf, size * window, 0, &mr)) {
		fprintf(stderr, "cannot register %zu bytes\n", size * window);
		return 1;
	}
	if (rank == 1 && (ret = r2cc_listen(ctx, &mine, &l))) {
		fprintf(stderr, "r2cc_listen: %s\n", strerror(-ret));
		return 1;
	}
	ret = r2cc_boot_allgather(b, &mine, sizeof(mine), hs);
	if (ret) {
		fprintf(stderr, "allgather: %s\n", strerror(-ret));
		return 1;
	}
	t0 = now_s();
	if (rank == 0)
		ret = r2cc_connect(ctx, &hs[1], &c);
	else
		while ((ret = r2cc_accept(l, &c)) == -EAGAIN &&
		       now_s() - t0 < timeout)
			;
	while (!ret && (ret = r2cc_conn_ready(c)) == 0 && now_s() - t0 < timeout)
		;
	if (ret != 1) {
		fprintf(stderr, "connection: %s\n",
			ret ? strerror(-ret) : "timed out");
		return 1;
	}
	printf("streaming\n");
	fflush(stdout);
	/* --hold-ms: connected, the stream waits (a test sets a fault). */
	for (t0 = now_s(); now_s() - t0 < hold_ms / 1e3;) {
		r2cc_progress(ctx);
		usleep(1000);
	}
	t0 = now_s();
	while (done < (uint64_t)msgs && !err) {
		for (i = 0; i < window && posted < (uint64_t)msgs; i++) {
			uint8_t *p = buf + (size_t)i * size;
			uint32_t tag = 0;

			if (req[i])
				continue;
			seq_of[i] = posted;
			if (rank == 0) {
				fill(p, size, posted);
				ret = r2cc_isend(c, mr, p, size, tag, &req[i]);
			} else {
				void *bp = p;

				ret = r2cc_irecv(c, 1, &bp, &size, &tag, &mr,
						 &req[i]);
			}
			if (ret) {
				err = ret;
				break;
			}
			posted++;
		}
		for (i = 0; i < window && !err; i++) {
			size_t got = 0;
			int fin = 0;

			if (!req[i])
				continue;
			ret = r2cc_test(req[i], &fin, &got);
			if (ret) {
				err = ret;
				req[i] = NULL;
				break;
			}
			if (!fin)
				continue;
			req[i] = NULL;
			done++;
			if (rank == 1) {
				size_t nb = got == size ?
					check(buf + (size_t)i * size, size,
					      seq_of[i]) : size;

				if (nb && !bad)
					fprintf(stderr, "message %llu: %zu bad "
						"bytes (got %zu)\n",
						(unsigned long long)seq_of[i],
						nb, got);
				bad += nb;
				verified += size - (nb < size ? nb : size);
			}
		}
		if (ticks && now_s() - t0 >= next_tick) {
			/* "tick T state bytes ... @NOW inflight ..." for the tests. */
			int nr, j;

			next_tick += 0.5;
			for (j = 0; j < 8; j++)
				rs[j].size = sizeof(rs[j]);
			nr = r2cc_conn_stats(c, &st, rs, 8);
			fprintf(stderr, "tick %.1f", now_s() - t0);
			for (j = 0; j < nr; j++)
				fprintf(stderr, " %u %llu", rs[j].state,
					(unsigned long long)rs[j].bytes);
			/* The log's clock, to line ticks up with it. */
			fprintf(stderr, " @%.3f", now_s());
			for (j = 0; j < nr; j++)
				fprintf(stderr, " %llu",
					(unsigned long long)rs[j].inflight);
			fprintf(stderr, "\n");
		}
		if (now_s() - t0 > timeout) {
			err = -ETIMEDOUT;
			break;
		}
	}
	t1 = now_s();
	/*
	 * --idle-ms: blocked elsewhere, as an application in compute or in
	 * another library's barrier, making no call into this one.
	 */
	if (idle_ms) {
		printf("idle %ld ms\n", idle_ms);
		fflush(stdout);
		usleep((useconds_t)idle_ms * 1000);
	}
	r2cc_conn_stats(c, &st, NULL, 0);
	for (i = 0; i < 8; i++)
		rs[i].size = sizeof(rs[i]);
	ret = r2cc_conn_stats(c, &st, rs, 8);
	{
		unsigned long long rb = 0, fb = 0;

		for (i = 0; i < ret; i++) {
			rb += rs[i].rollbacks;
			fb += rs[i].failbacks;
			fprintf(stderr, "rail %d: state %u bytes %llu chunks %llu "
				"failures %llu rollbacks %llu failbacks %llu "
				"drains %llu degraded %u reason %s "
				"probe_failures %llu confirmed %u cut %u "
				"stalls_spared %llu\n",
				i, rs[i].state,
				(unsigned long long)rs[i].bytes,
				(unsigned long long)rs[i].chunks,
				(unsigned long long)rs[i].failures,
				(unsigned long long)rs[i].rollbacks,
				(unsigned long long)rs[i].failbacks,
				(unsigned long long)rs[i].drains,
				rs[i].degraded, rail_reason_name(rs[i].reason),
				(unsigned long long)rs[i].probe_failures,
				rs[i].confirmed, rs[i].cut,
				(unsigned long long)rs[i].stalls_spared);
		}
		printf("xfer-result: rank=%d msgs=%llu bytes=%llu verified=%zu "
		       "bad=%zu failovers=%llu repairs=%llu rollbacks=%llu "
		       "failbacks=%llu resent=%llu tcp=%llu repair_ms_max=%.3f "
		       "mbps=%.1f err=%d source=%u secs=%.3f staged=%llu\n",
		       rank,
		       (unsigned long long)done,
		       (unsigned long long)st.bytes, verified, bad,
		       (unsigned long long)st.failovers,
		       (unsigned long long)st.repairs, rb, fb,
		       (unsigned long long)st.resent_bytes,
		       (unsigned long long)st.tcp_bytes,
		       st.repair_ns_max / 1e6,
		       st.bytes * 8 / 1e6 / (t1 - t0), -err,
		       st.notify_source, t1 - t0,
		       (unsigned long long)st.staged);
	}
	if (err && -err != expect)
		fprintf(stderr, "failed: %s\n", strerror(-err));
	/* Let the peer finish reading before the connection goes. */
	barrier_progressing(b, ctx);
	for (i = 0; i < window; i++)
		if (req[i]) {
			int fin;

			r2cc_test(req[i], &fin, NULL);
		}
	r2cc_conn_close(c);
	if (l)
		r2cc_listener_close(l);
	r2cc_mr_dereg(mr);
	r2cc_ctx_destroy(ctx);
	r2cc_boot_destroy(b);
	free(buf);
	if (expect)
		return -err == expect ? 0 : 1;
	return err || bad || (rank == 1 && verified != size * (size_t)msgs);
}
