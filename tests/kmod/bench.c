// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc.ko benchmarks, run inside a testbed node (root, rxe0, r2cc.ko):
 *
 *   bench wake [N]	inject -> wake-up latency of a reader blocked in
 *			read() and in epoll_wait(), against an eventfd
 *			ping-pong between two threads (the floor)
 *   bench rate [M]	records per second delivered to 1, 8 and 64
 *			subscribers
 *   bench page [N]	cost of reading one port's state from the state
 *			page, alone and under the sequence-counter protocol
 *   bench link		wait for real carrier changes on rxe0 and print,
 *			per change, when /dev/r2cc and ibv_get_async_event
 *			each delivered it (the host toggles the link)
 *
 * Medians and p99 are printed; the same run measures both sides of every
 * comparison.  Not a test: prints figures, asserts nothing.
 */
#include <infiniband/verbs.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>

#include "r2cc_test.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *what, uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	printf("%-28s median %8.1f us  p99 %8.1f us  (n=%d)\n", what,
	       v[n / 2] / 1e3, v[(n * 99) / 100] / 1e3, n);
}

static int dev;

/* ------------------------------------------------------------- wake */

struct waker {
	int fd, efd, mode, n;	/* mode 0 read, 1 epoll, 2 eventfd */
	uint64_t *lat;
	volatile uint64_t t0;
	pthread_barrier_t bar;
};

static void *wake_reader(void *arg)
{
	struct waker *w = arg;
	struct epoll_event ee = { .events = EPOLLIN };
	struct r2cc_event ev;
	uint64_t v;
	int ep = -1, i;

	if (w->mode == 1) {
		ep = epoll_create1(0);
		epoll_ctl(ep, EPOLL_CTL_ADD, w->fd, &ee);
	}
	for (i = 0; i < w->n; i++) {
		pthread_barrier_wait(&w->bar);
		if (w->mode == 0) {
			if (read(w->fd, &ev, sizeof(ev)) != sizeof(ev))
				break;
		} else if (w->mode == 1) {
			if (epoll_wait(ep, &ee, 1, -1) != 1 ||
			    read(w->fd, &ev, sizeof(ev)) != sizeof(ev))
				break;
		} else if (read(w->efd, &v, sizeof(v)) != sizeof(v)) {
			break;
		}
		w->lat[i] = now_ns() - w->t0;
		pthread_barrier_wait(&w->bar);
	}
	if (ep >= 0)
		close(ep);
	return NULL;
}

static void wake(int n)
{
	static const char *const names[] = {
		"inject -> read() wake-up", "inject -> epoll wake-up",
		"eventfd ping (floor)",
	};
	uint64_t med[3];
	int mode, i;

	for (mode = 0; mode < 3; mode++) {
		struct waker w = { .mode = mode, .n = n };
		pthread_t th;
		uint64_t one = 1;

		w.fd = r2cc_open_dev(0);
		w.efd = eventfd(0, 0);
		w.lat = calloc((size_t)n, sizeof(*w.lat));
		pthread_barrier_init(&w.bar, NULL, 2);
		pthread_create(&th, NULL, wake_reader, &w);
		for (i = 0; i < n; i++) {
			pthread_barrier_wait(&w.bar);
			usleep(200);	/* let the reader block */
			w.t0 = now_ns();
			if (mode == 2) {
				if (write(w.efd, &one, sizeof(one)) < 0)
					break;
			} else {
				r2cc_inject(w.fd, dev, 1, i % 2 ?
					    R2CC_EV_PORT_UP : R2CC_EV_PORT_DOWN);
			}
			pthread_barrier_wait(&w.bar);
		}
		pthread_join(th, NULL);
		if (mode != 2 && n % 2)
			r2cc_inject(w.fd, dev, 1, R2CC_EV_PORT_UP);
		report(names[mode], w.lat, n);
		med[mode] = w.lat[n / 2];
		free(w.lat);
		close(w.fd);
		close(w.efd);
	}
	printf("ratio read/eventfd %.2f, epoll/eventfd %.2f (medians)\n",
	       (double)med[0] / (double)med[2],
	       (double)med[1] / (double)med[2]);
}

/* ------------------------------------------------------------- rate */

struct sub_thread {
	int fd, m;
	uint64_t done_ns;
};

static void *rate_reader(void *arg)
{
	struct sub_thread *s = arg;
	struct r2cc_event ev[32];
	int got = 0;

	while (got < s->m) {
		ssize_t r = read(s->fd, ev, sizeof(ev));

		if (r <= 0)
			break;
		got += (int)(r / (ssize_t)sizeof(ev[0]));
	}
	s->done_ns = now_ns();
	return NULL;
}

static void rate(int m)
{
	static const int counts[] = { 1, 8, 64 };
	unsigned int c;
	int i, k;

	for (c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		int nsub = counts[c];
		struct sub_thread *s = calloc((size_t)nsub, sizeof(*s));
		pthread_t *th = calloc((size_t)nsub, sizeof(*th));
		int ctl = r2cc_open_dev(0);
		struct r2cc_filter f = { .size = sizeof(f), .ndevs = 1 };
		uint64_t t0, last = 0;

		/* The injecting file is a subscriber too: filter it out. */
		f.devs[0] = 0xfffffff0;
		ioctl(ctl, R2CC_IOC_SET_FILTER, &f);
		for (i = 0; i < nsub; i++) {
			s[i].fd = r2cc_open_dev(0);
			s[i].m = m;
			pthread_create(&th[i], NULL, rate_reader, &s[i]);
		}
		usleep(100000);
		t0 = now_ns();
		for (k = 0; k < m; k++)
			r2cc_inject(ctl, dev, 1, k % 2 ? R2CC_EV_PORT_UP :
						     R2CC_EV_PORT_DOWN);
		for (i = 0; i < nsub; i++) {
			pthread_join(th[i], NULL);
			if (s[i].done_ns > last)
				last = s[i].done_ns;
			close(s[i].fd);
		}
		if (m % 2)
			r2cc_inject(ctl, dev, 1, R2CC_EV_PORT_UP);
		close(ctl);
		printf("%2d subscribers: %d records each in %.3f s: %.0f records/s emitted, %.0f deliveries/s\n",
		       nsub, m, (last - t0) / 1e9, m / ((last - t0) / 1e9),
		       (double)m * nsub / ((last - t0) / 1e9));
		free(s);
		free(th);
	}
}

/* ------------------------------------------------------------- page */

static void page(long n)
{
	int fd = r2cc_open_dev(0);
	const struct r2cc_state_header *h =
		mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	volatile __u8 sink = 0;
	uint64_t t0, t1;
	__u32 s, slot;
	long i;

	if (h == MAP_FAILED) {
		perror("mmap");
		return;
	}
	for (slot = 0; slot < h->nslots; slot++)
		if (h->ports[slot].flags & R2CC_SLOT_VALID &&
		    h->ports[slot].dev_index == (__u32)dev)
			break;
	t0 = now_ns();
	for (i = 0; i < n; i++)
		sink = __atomic_load_n(&h->ports[slot].state,
				       __ATOMIC_RELAXED);
	t1 = now_ns();
	printf("state page, one load:          %.2f ns per read (n=%ld)\n",
	       (double)(t1 - t0) / (double)n, n);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		do {
			s = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
			sink = h->ports[slot].state;
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
		} while ((s & 1) ||
			 __atomic_load_n(&h->seq, __ATOMIC_RELAXED) != s);
	}
	t1 = now_ns();
	printf("state page, seqcount protocol: %.2f ns per read (n=%ld)\n",
	       (double)(t1 - t0) / (double)n, n);
	(void)sink;
	close(fd);
}

/* ------------------------------------------------------------- link */

static void link_watch(int changes)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct epoll_event ee[2];
	int fd = r2cc_open_dev(O_NONBLOCK), ep, i, seen = 0;
	uint64_t t_r2cc = 0, t_verbs = 0;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), "rxe0"))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "bench: cannot open rxe0\n");
		exit(1);
	}
	fcntl(ctx->async_fd, F_SETFL, O_NONBLOCK);
	ep = epoll_create1(0);
	ee[0] = (struct epoll_event){ .events = EPOLLIN, .data.u32 = 0 };
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ee[0]);
	ee[0] = (struct epoll_event){ .events = EPOLLIN, .data.u32 = 1 };
	epoll_ctl(ep, EPOLL_CTL_ADD, ctx->async_fd, &ee[0]);
	r2cc_drain(fd);
	printf("ready\n");
	fflush(stdout);
	/* One line per change: both arrival times, once both have it. */
	while (seen < changes) {
		int n = epoll_wait(ep, ee, 2, 30000);

		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			uint64_t t = now_ns();

			if (ee[i].data.u32 == 0) {
				struct r2cc_event ev;

				while (read(fd, &ev, sizeof(ev)) == sizeof(ev))
					if (ev.kind == R2CC_EV_PORT_DOWN ||
					    ev.kind == R2CC_EV_PORT_UP)
						t_r2cc = t_r2cc ? t_r2cc : t;
			} else {
				struct ibv_async_event ae;

				while (!ibv_get_async_event(ctx, &ae)) {
					if (ae.event_type == IBV_EVENT_PORT_ERR ||
					    ae.event_type == IBV_EVENT_PORT_ACTIVE)
						t_verbs = t_verbs ? t_verbs : t;
					ibv_ack_async_event(&ae);
				}
			}
		}
		if (t_r2cc && t_verbs) {
			printf("change %d r2cc %llu verbs %llu\n", ++seen,
			       (unsigned long long)t_r2cc,
			       (unsigned long long)t_verbs);
			fflush(stdout);
			t_r2cc = t_verbs = 0;
		}
	}
	ibv_close_device(ctx);
	ibv_free_device_list(list);
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;

	if (argc < 2) {
		fprintf(stderr, "usage: bench wake|rate|page|link [N]\n");
		return 2;
	}
	dev = r2cc_dev_index("rxe0");
	if (dev < 0) {
		fprintf(stderr, "bench: r2cc.ko not loaded or no rxe0\n");
		return 1;
	}
	if (!strcmp(argv[1], "wake"))
		wake(n > 0 ? (int)n : 1000);
	else if (!strcmp(argv[1], "rate"))
		rate(n > 0 ? (int)n : 2000);
	else if (!strcmp(argv[1], "page"))
		page(n > 0 ? n : 10000000);
	else if (!strcmp(argv[1], "link"))
		link_watch(n > 0 ? (int)n : 20);
	else
		return 2;
	return 0;
}
