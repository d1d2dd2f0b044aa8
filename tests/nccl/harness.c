// SPDX-License-Identifier: GPL-2.0-only
/*
 * An NCCL-shaped driver of the net plugin.  It dlopen()s the plugin by the
 * name NCCL uses, takes each exported version in turn (newest first, as
 * NCCL does) and drives it the way NCCL's proxy does: a service thread
 * listens, connects, accepts and registers memory (handles swapped through
 * a bootstrap, as NCCL's bootstrap does), then keeps registering and
 * deregistering while a progress thread moves the data with isend, irecv
 * and test.  The ranks form a ring over several channels (comms): each
 * rank sends to the next and receives from the previous, messages of
 * 1 B .. --max-size, receives grouped up to 8 with distinct tags sent out
 * of order, up to 32 requests in flight per comm, receive buffers larger
 * than the message, every byte checked.  Faults are injected from outside.
 * Prints one "harness-result:" line per version; exits 0 only when every
 * call succeeded and every byte arrived intact.
 *
 *   harness [--versions 12,11,10,9,8] [--dev D | --vdev D,D...] [--iters N]
 *           [--max-size BYTES] [--channels C] [--ticks]
 *
 * --vdev fuses the listed devices with makeVDevice (v9 and later) and runs
 * on the virtual device it returns.
 *
 * A version "direct" runs the same traffic straight on libr2cc instead of
 * the plugin (direct.h), for the benchmark's side-by-side runs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <r2cc/bootstrap.h>

#include "abi.h"
#include "direct.h"

#define MAX_CHAN	4
#define INFLIGHT	NN_MAX_REQUESTS
#define GROUP		8
#define SLACK		64		/* receive buffers are this much larger */

static int rank, nranks, dev, iters = 200, nchan = 2, ticks;
static int nvdev, vdevs[NN_VDEV_MAX_V12];	/* --vdev: fuse these first */
static size_t max_size = 64ul << 20;
static struct r2cc_boot *boot;

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void logger(enum nn_log_level level, unsigned long flags,
		   const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void logger(enum nn_log_level level, unsigned long flags,
		   const char *file, int line, const char *fmt, ...)
{
	static const char *const name[] = { "NONE", "VERSION", "WARN",
					    "INFO", "ABORT", "TRACE" };
	char buf[1024];
	va_list ap;

	(void)flags;
	(void)file;
	(void)line;
	if (level > NN_LOG_INFO && !getenv("HARNESS_TRACE"))
		return;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "rank%d NCCL %s %s\n", rank,
		level <= 5 ? name[level] : "?", buf);
}

/* ------------------------------------------------ one table, any version */

static int ver;				/* the table's shape */
static bool direct;			/* direct.h, not the plugin */
static const void *tab;
static void *nctx;			/* v11+: init's context */

#define T(v)	((const struct nn_net_v##v *)tab)

static nn_result_t d_init(void)
{
	switch (ver) {
	case 8: return T(8)->init(logger);
	case 9: return T(9)->init(logger);
	case 10: return T(10)->init(logger, NULL);
	case 11: return T(11)->init(&nctx, 42, NULL, logger, NULL);
	default: return T(12)->init(&nctx, 42, NULL, logger, NULL);
	}
}

static nn_result_t d_devices(int *n)
{
	return ver == 8 ? T(8)->devices(n) : ver == 9 ? T(9)->devices(n) :
	       ver == 10 ? T(10)->devices(n) : ver == 11 ? T(11)->devices(n) :
	       T(12)->devices(n);
}

static nn_result_t d_listen(void *h, void **l)
{
	return ver == 8 ? T(8)->listen(dev, h, l) :
	       ver == 9 ? T(9)->listen(dev, h, l) :
	       ver == 10 ? T(10)->listen(dev, h, l) :
	       ver == 11 ? T(11)->listen(nctx, dev, h, l) :
	       T(12)->listen(nctx, dev, h, l);
}

static nn_result_t d_connect(void *h, void **s)
{
	struct nn_comm_config cfg = { .traffic_class = -1 };
	struct nn_dev_handle *dh = NULL;

	return ver == 8 ? T(8)->connect(dev, h, s, &dh) :
	       ver == 9 ? T(9)->connect(dev, h, s, &dh) :
	       ver == 10 ? T(10)->connect(dev, &cfg, h, s, &dh) :
	       ver == 11 ? T(11)->connect(nctx, dev, h, s, &dh) :
	       T(12)->connect(nctx, dev, h, s, &dh);
}

/* The members from accept on sit at the same place in every version. */
#define SAME(m) (ver == 8 ? T(8)->m : ver == 9 ? T(9)->m : \
		 ver == 10 ? T(10)->m : ver == 11 ? T(11)->m : T(12)->m)

static nn_result_t d_isend(void *s, void *data, size_t size, int tag,
			   void *mh, void **req)
{
	switch (ver) {
	case 8: return T(8)->isend(s, data, (int)size, tag, mh, req);
	case 9: return T(9)->isend(s, data, size, tag, mh, req);
	case 10: return T(10)->isend(s, data, size, tag, mh, NULL, req);
	case 11: return T(11)->isend(s, data, size, tag, mh, NULL, req);
	default: return T(12)->isend(s, data, size, tag, mh, NULL, req);
	}
}

static nn_result_t d_irecv(void *r, int n, void **data, size_t *sizes,
			   int *tags, void **mhs, void **req)
{
	void *ph[GROUP] = { NULL };
	int isz[GROUP], i;

	switch (ver) {
	case 8:
		for (i = 0; i < n; i++)
			isz[i] = (int)sizes[i];
		return T(8)->irecv(r, n, data, isz, tags, mhs, req);
	case 9: return T(9)->irecv(r, n, data, sizes, tags, mhs, req);
	case 10: return T(10)->irecv(r, n, data, sizes, tags, mhs, ph, req);
	case 11: return T(11)->irecv(r, n, data, sizes, tags, mhs, ph, req);
	default: return T(12)->irecv(r, n, data, sizes, tags, mhs, ph, req);
	}
}

/* ------------------------------------------------ the traffic */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/*
 * Message @j of request @k on channel @ch: its size.  A group fits the
 * channel's region: messages up to 1 MiB, and now and then, on channel 0,
 * one of --max-size with small ones beside it.
 */
static size_t msg_size(int ch, int k, int j)
{
	static const size_t big[] = { 1, 3, 8, 4096, 65535, 65537, 1u << 20 };
	uint64_t x = mix((uint64_t)ch << 48 | (uint64_t)k << 8 | (unsigned)j);
	size_t s;

	if (k % 50 == 49 && ch == 0)
		s = j == 0 ? max_size : 1 + x % 4096;
	else if (x % 4 == 0)
		s = big[x / 4 % (sizeof(big) / sizeof(big[0]))];
	else
		s = 1 + x / 4 % 32768;
	return s < max_size ? s : max_size;
}

static int group_of(int k)
{
	return 1 + (int)(mix((uint64_t)k * 7 + 1) % GROUP);
}

static void fill(uint8_t *p, size_t len, uint64_t seed)
{
	size_t i;

	for (i = 0; i < len; i += 8) {
		uint64_t v = mix(seed ^ i / 8);

		memcpy(p + i, &v, len - i < 8 ? len - i : 8);
	}
}

static size_t check(const uint8_t *p, size_t len, uint64_t seed)
{
	size_t i, j, bad = 0;

	for (i = 0; i < len; i += 8) {
		uint64_t v = mix(seed ^ i / 8);
		const uint8_t *e = (const uint8_t *)&v;

		for (j = 0; j < 8 && i + j < len; j++)
			bad += p[i + j] != e[j];
	}
	return bad;
}

static uint64_t seed_of(int from, int ch, int k, int j)
{
	return mix((uint64_t)from << 56 | (uint64_t)ch << 48 |
		   (uint64_t)k << 8 | (unsigned)j) << 20;
}

/* A FIFO of buffer space: requests complete (are tested) in order. */
struct fifo {
	uint8_t *base;
	size_t size, head, tail, used;
};

static uint8_t *fifo_take(struct fifo *f, size_t len, size_t *took)
{
	size_t at = f->head, skip = 0;

	len = (len + 63) & ~(size_t)63;
	if (len > f->size)
		return NULL;
	if (at + len > f->size) {
		skip = f->size - at;
		at = 0;
	}
	if (f->used + skip + len > f->size)
		return NULL;
	f->head = at + len;
	f->used += skip + len;
	*took = skip + len;
	return f->base + at;
}

static void fifo_give(struct fifo *f, size_t took)
{
	f->used -= took;
	if (!f->used)
		f->head = 0;
}

struct sreq {
	void *req;
	size_t took;
	size_t size;
};

struct rreq {
	void *req;
	int k, n;
	size_t took;
	uint8_t *buf[GROUP];
	size_t size[GROUP];
	int tag[GROUP];
};

struct chan {
	void *lcomm, *scomm, *rcomm;
	void *smr, *rmr, *xmr;
	struct fifo sf, rf;
	uint8_t *scratch;
	/* progress */
	int sk, sj, rk;			/* next to send (request, message) */
	int sdone, rdone;
	struct sreq sq[INFLIGHT * GROUP];
	int sq_head, sq_len;
	struct rreq rq[INFLIGHT];
	int rq_head, rq_len;
	uint64_t bytes, msgs, bad, nulls;
	int perm[GROUP];
};

static struct chan ch[MAX_CHAN];
static atomic_int stop_service, progress_done;
static int errors;
static uint64_t reg_cycles;

#define FAIL(...)							\
	do {								\
		fprintf(stderr, "rank%d v%d: ", rank, ver);		\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		errors++;						\
	} while (0)

static size_t region_size(int c)
{
	return c == 0 ? max_size + (16u << 20) : 16u << 20;
}

/* Setup, as NCCL's service thread does it: every call non-blocking. */
static int setup(void)
{
	uint8_t (*all)[NN_HANDLE_MAXSIZE * MAX_CHAN];
	uint8_t mine[NN_HANDLE_MAXSIZE * MAX_CHAN];
	uint8_t hs[MAX_CHAN][NN_HANDLE_MAXSIZE];
	double t0;
	int c, r, ndev, next = (rank + 1) % nranks;
	nn_result_t ret;

	ret = d_init();
	if (ret) {
		FAIL("init: %d", ret);
		return -1;
	}
	if (nvdev) {
		struct nn_vprops_v9 v9 = { .ndevs = nvdev };
		struct nn_vprops_v12 v12 = { .ndevs = nvdev };

		memcpy(v9.devs, vdevs, sizeof(v9.devs));
		memcpy(v12.devs, vdevs, sizeof(v12.devs));
		ret = direct ? NN_INVALID_USAGE :
		      ver == 9 ? T(9)->make_vdevice(&dev, &v9) :
		      ver == 10 ? T(10)->make_vdevice(&dev, &v9) :
		      ver == 11 ? T(11)->make_vdevice(&dev, &v9) :
		      ver == 12 ? T(12)->make_vdevice(&dev, &v12) :
		      NN_INVALID_USAGE;
		if (ret) {
			FAIL("makeVDevice: %d", ret);
			return -1;
		}
	}
	if (d_devices(&ndev) || dev >= ndev) {
		FAIL("devices: %d, want device %d", ndev, dev);
		return -1;
	}
	memset(mine, 0, sizeof(mine));
	for (c = 0; c < nchan; c++) {
		ret = d_listen(mine + c * NN_HANDLE_MAXSIZE, &ch[c].lcomm);
		if (ret || !ch[c].lcomm) {
			FAIL("listen: %d", ret);
			return -1;
		}
	}
	all = calloc((size_t)nranks, sizeof(*all));
	if (!all || r2cc_boot_allgather(boot, mine, sizeof(mine), all)) {
		FAIL("bootstrap allgather");
		return -1;
	}
	for (c = 0; c < nchan; c++)
		memcpy(hs[c], all[next] + c * NN_HANDLE_MAXSIZE,
		       NN_HANDLE_MAXSIZE);
	free(all);
	t0 = now_s();
	for (;;) {
		int pending = 0;

		for (c = 0; c < nchan; c++) {
			if (!ch[c].scomm) {
				ret = d_connect(hs[c], &ch[c].scomm);
				if (ret) {
					FAIL("connect: %d", ret);
					return -1;
				}
				pending += !ch[c].scomm;
			}
			if (!ch[c].rcomm) {
				struct nn_dev_handle *dh = NULL;

				ret = SAME(accept)(ch[c].lcomm, &ch[c].rcomm,
						   &dh);
				if (ret) {
					FAIL("accept: %d", ret);
					return -1;
				}
				pending += !ch[c].rcomm;
			}
		}
		if (!pending)
			break;
		if (now_s() - t0 > 60) {
			FAIL("connect/accept not ready after 60 s");
			return -1;
		}
		usleep(1000);
	}
	for (c = 0; c < nchan; c++) {
		struct chan *h = &ch[c];
		size_t sz = region_size(c);

		h->sf.base = aligned_alloc(4096, sz);
		h->rf.base = aligned_alloc(4096, sz);
		h->scratch = aligned_alloc(4096, 1u << 20);
		if (!h->sf.base || !h->rf.base || !h->scratch)
			return -1;
		h->sf.size = h->rf.size = sz;
		memset(h->rf.base, 0xee, sz);
		if ((r = SAME(reg_mr)(h->scomm, h->sf.base, sz, NN_PTR_HOST,
				      &h->smr)) ||
		    (r = SAME(reg_mr)(h->rcomm, h->rf.base, sz, NN_PTR_HOST,
				      &h->rmr))) {
			FAIL("regMr: %d", r);
			return -1;
		}
	}
	return 0;
}

static void post_sends(struct chan *h, int c)
{
	while (h->sk < iters && h->sq_len < INFLIGHT * GROUP) {
		int n = group_of(h->sk), j, t, r;
		struct sreq *s = &h->sq[(h->sq_head + h->sq_len) %
					(INFLIGHT * GROUP)];
		uint8_t *p;

		if (h->sj == 0) {	/* a group's messages, out of order */
			for (j = 0; j < n; j++)
				h->perm[j] = j;
			for (j = n - 1; j > 0; j--) {
				int x = (int)(mix((uint64_t)h->sk << 4 | j) %
					      (uint64_t)(j + 1));

				t = h->perm[j];
				h->perm[j] = h->perm[x];
				h->perm[x] = t;
			}
		}
		j = h->perm[h->sj];
		s->size = msg_size(c, h->sk, j);
		p = fifo_take(&h->sf, s->size, &s->took);
		if (!p)
			return;
		fill(p, s->size, seed_of(rank, c, h->sk, j));
		r = d_isend(h->scomm, p, s->size, 1000 * j + rank, h->smr,
			    &s->req);
		if (r) {
			FAIL("isend ch %d req %d msg %d: nccl result %d", c,
			     h->sk, j, r);
			atomic_store(&progress_done, 1);
			return;
		}
		if (!s->req) {		/* cannot post now: NCCL calls again */
			fifo_give(&h->sf, s->took);
			h->nulls++;
			return;
		}
		h->sq_len++;
		if (++h->sj == n) {
			h->sj = 0;
			h->sk++;
		}
	}
}

static void post_recvs(struct chan *h, int c)
{
	int prev = (rank + nranks - 1) % nranks, r;

	while (h->rk < iters && h->rq_len < INFLIGHT) {
		struct rreq *q = &h->rq[(h->rq_head + h->rq_len) % INFLIGHT];
		size_t total = 0, at = 0, len[GROUP];
		void *data[GROUP], *mhs[GROUP];
		uint8_t *p;
		int j;

		q->k = h->rk;
		q->n = group_of(q->k);
		for (j = 0; j < q->n; j++) {
			len[j] = msg_size(c, q->k, j) + SLACK;
			total += (len[j] + 63) & ~(size_t)63;
		}
		p = fifo_take(&h->rf, total, &q->took);
		if (!p)
			return;
		for (j = 0; j < q->n; j++) {
			q->buf[j] = p + at;
			data[j] = p + at;
			mhs[j] = h->rmr;
			q->tag[j] = 1000 * j + prev;
			at += (len[j] + 63) & ~(size_t)63;
		}
		r = d_irecv(h->rcomm, q->n, data, len, q->tag, mhs, &q->req);
		if (r) {
			FAIL("irecv ch %d req %d: nccl result %d", c, q->k, r);
			atomic_store(&progress_done, 1);
			return;
		}
		if (!q->req) {
			fifo_give(&h->rf, q->took);
			h->nulls++;
			return;
		}
		h->rq_len++;
		h->rk++;
	}
}

static void test_oldest(struct chan *h, int c)
{
	int prev = (rank + nranks - 1) % nranks, done, j, r, sizes[GROUP];

	while (h->sq_len) {
		struct sreq *s = &h->sq[h->sq_head];

		done = 0;
		r = SAME(test)(s->req, &done, sizes);
		if (r) {
			FAIL("test of a send on ch %d: nccl result %d", c, r);
			atomic_store(&progress_done, 1);
			return;
		}
		if (!done)
			break;
		if ((size_t)sizes[0] != s->size)
			FAIL("send size %d, sent %zu", sizes[0], s->size);
		fifo_give(&h->sf, s->took);
		h->sq_head = (h->sq_head + 1) % (INFLIGHT * GROUP);
		h->sq_len--;
	}
	while (h->rq_len) {
		struct rreq *q = &h->rq[h->rq_head];

		done = 0;
		r = SAME(test)(q->req, &done, sizes);
		if (r) {
			FAIL("test of a receive on ch %d req %d: nccl result %d",
			     c, q->k, r);
			atomic_store(&progress_done, 1);
			return;
		}
		if (!done)
			break;
		for (j = 0; j < q->n; j++) {
			size_t want = msg_size(c, q->k, j), bad;

			if ((size_t)sizes[j] != want)
				FAIL("ch %d req %d msg %d: size %d, want %zu",
				     c, q->k, j, sizes[j], want);
			bad = check(q->buf[j], want, seed_of(prev, c, q->k, j));
			if (bad)
				FAIL("ch %d req %d msg %d: %zu bad bytes", c,
				     q->k, j, bad);
			h->bad += bad;
			h->bytes += want;
			h->msgs++;
		}
		fifo_give(&h->rf, q->took);
		h->rq_head = (h->rq_head + 1) % INFLIGHT;
		h->rq_len--;
		h->rdone++;
	}
}

static void *progress(void *arg)
{
	double last = now_s();
	int c, busy;

	(void)arg;
	do {
		busy = 0;
		for (c = 0; c < nchan && !atomic_load(&progress_done); c++) {
			struct chan *h = &ch[c];

			post_recvs(h, c);
			post_sends(h, c);
			test_oldest(h, c);
			busy |= h->rdone < iters || h->sq_len ||
				h->sk < iters;
		}
		if (ticks && now_s() - last >= 1) {
			last = now_s();
			printf("tick: rank %d received %llu msgs %llu bytes\n",
			       rank, (unsigned long long)ch[0].msgs,
			       (unsigned long long)ch[0].bytes);
			fflush(stdout);
		}
	} while (busy && !atomic_load(&progress_done));
	atomic_store(&progress_done, 1);
	return NULL;
}

/* While data flows, the service thread keeps registering, as NCCL's does. */
static void *service(void *arg)
{
	int c;

	(void)arg;
	while (!atomic_load(&stop_service)) {
		for (c = 0; c < nchan; c++) {
			void *mh = NULL;

			if (SAME(reg_mr)(ch[c].scomm, ch[c].scratch, 1u << 20,
					 NN_PTR_HOST, &mh) || !mh ||
			    SAME(dereg_mr)(ch[c].scomm, mh)) {
				FAIL("regMr/deregMr while data moves");
				return NULL;
			}
			reg_cycles++;
		}
		usleep(2000);
	}
	return NULL;
}

static int teardown(void)
{
	int c;

	for (c = 0; c < nchan; c++) {
		struct chan *h = &ch[c];

		if (h->smr && SAME(dereg_mr)(h->scomm, h->smr))
			FAIL("deregMr send");
		if (h->rmr && SAME(dereg_mr)(h->rcomm, h->rmr))
			FAIL("deregMr recv");
		if (h->scomm && SAME(close_send)(h->scomm))
			FAIL("closeSend");
		if (h->rcomm && SAME(close_recv)(h->rcomm))
			FAIL("closeRecv");
		if (h->lcomm && SAME(close_listen)(h->lcomm))
			FAIL("closeListen");
		free(h->sf.base);
		free(h->rf.base);
		free(h->scratch);
	}
	if (direct)
		direct_done();
	if (ver >= 11 && nctx) {
		if ((ver == 11 ? T(11)->finalize(nctx) : T(12)->finalize(nctx)))
			FAIL("finalize");
		nctx = NULL;
	}
	return errors;
}

static int run_version(void *lib, int v)
{
	char sym[32];
	pthread_t pt, st;
	uint64_t bytes = 0, msgs = 0, bad = 0, nulls = 0;
	double t0, t;
	int c;

	direct = !v;
	snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", v);
	tab = direct ? &direct_table : dlsym(lib, sym);
	ver = direct ? 9 : v;
	if (!tab) {
		FAIL("%s not exported", sym);
		return 1;
	}
	if (strcmp(T(8)->name, "r2cc"))	/* name comes first in every table */
		FAIL("%s name \"%s\", want r2cc", sym, T(8)->name);
	memset(ch, 0, sizeof(ch));
	errors = 0;
	reg_cycles = 0;
	atomic_store(&stop_service, 0);
	atomic_store(&progress_done, 0);
	if (setup()) {
		teardown();
		return 1;
	}
	if (r2cc_boot_barrier(boot))
		FAIL("barrier");
	printf("streaming: v%d rank %d\n", v, rank);
	fflush(stdout);
	t0 = now_s();
	pthread_create(&st, NULL, service, NULL);
	pthread_create(&pt, NULL, progress, NULL);
	pthread_join(pt, NULL);
	t = now_s() - t0;
	atomic_store(&stop_service, 1);
	pthread_join(st, NULL);
	for (c = 0; c < nchan; c++) {
		bytes += ch[c].bytes;
		msgs += ch[c].msgs;
		bad += ch[c].bad;
		nulls += ch[c].nulls;
	}
	/* The peers must be done with our comms before we close them. */
	if (r2cc_boot_barrier(boot))
		FAIL("barrier after the stream");
	teardown();
	printf("harness-result: version=%s rank=%d msgs=%llu bytes=%llu bad=%llu errors=%d null_reqs=%llu reg_cycles=%llu secs=%.2f MBps=%.1f\n",
	       direct ? "direct" : sym + strlen("ncclNetPlugin_v"), rank,
	       (unsigned long long)msgs, (unsigned long long)bytes,
	       (unsigned long long)bad, errors, (unsigned long long)nulls,
	       (unsigned long long)reg_cycles, t, bytes / t / 1e6);
	fflush(stdout);
	return errors || bad || msgs == 0;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "versions", required_argument, NULL, 'v' },
		{ "dev", required_argument, NULL, 'd' },
		{ "iters", required_argument, NULL, 'n' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "channels", required_argument, NULL, 'c' },
		{ "ticks", no_argument, NULL, 't' },
		{ "vdev", required_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	struct r2cc_boot_opts bo = { .size = sizeof(bo), .rank = -1 };
	const char *versions = "12,11,10,9,8", *path;
	char *list, *tok, *save;
	void *lib;
	int o, fails = 0;

	while ((o = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (o) {
		case 'v': versions = optarg; break;
		case 'd': dev = atoi(optarg); break;
		case 'n': iters = atoi(optarg); break;
		case 'm': max_size = strtoull(optarg, NULL, 0); break;
		case 'c': nchan = atoi(optarg); break;
		case 't': ticks = 1; break;
		case 'V':
			for (tok = strtok_r(optarg, ",", &save);
			     tok && nvdev < NN_VDEV_MAX_V9;
			     tok = strtok_r(NULL, ",", &save))
				vdevs[nvdev++] = atoi(tok);
			break;
		default:
			fprintf(stderr, "usage: see the top of harness.c\n");
			return 2;
		}
	}
	if (iters < 1 || nchan < 1 || nchan > MAX_CHAN || max_size < 1 ||
	    max_size > (1ul << 30) || dev < 0) {
		fprintf(stderr, "harness: bad --iters, --channels, --max-size or --dev\n");
		return 2;
	}
	if (r2cc_boot_init(&bo, &boot)) {
		fprintf(stderr, "harness: bootstrap failed\n");
		return 1;
	}
	rank = r2cc_boot_rank(boot);
	nranks = r2cc_boot_size(boot);
	path = getenv("R2CC_NCCL_PLUGIN");
	lib = dlopen(path ? path : "libnccl-net-r2cc.so", RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "harness: %s\n", dlerror());
		return 1;
	}
	list = strdup(versions);
	for (tok = strtok_r(list, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		int v = strcmp(tok, "direct") ? atoi(tok) : 0;

		if (v && (v < 8 || v > 12)) {
			fprintf(stderr, "harness: no version %s\n", tok);
			return 2;
		}
		fails += run_version(lib, v);
	}
	free(list);
	r2cc_boot_destroy(boot);
	dlclose(lib);
	return fails ? 1 : 0;
}
