// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * One stream of NIC state changes from either source:
 *
 * - r2cc.ko: /dev/r2cc records (filtered to port up/down/change, degraded
 *   and recovered, and device removal) plus its state page, so
 *   r2cc_nic_is_active() is one load;
 * - without the module: the async event fd of every device in use, which
 *   only reports changes to processes that opened the device, later than
 *   the module (see Documentation/kmod.rst), and the NICs' own error
 *   counters for early warning (health.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <linux/r2cc.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "platform/platform.h"

static uint8_t nic_state(unsigned int s)
{
	return s >= R2CC_PORT_ACTIVE ? R2CC_NIC_ACTIVE : (uint8_t)s;
}

/* Slot @k of the state page: entries are entry_size apart (they grow). */
static const struct r2cc_state_port *state_slot(const struct r2cc_state_header *h,
						uint32_t k)
{
	return (const void *)((const char *)h->ports + (size_t)k * h->entry_size);
}

/* What the library reads of a state page slot, all of one moment. */
struct slot_view {
	uint32_t dev_index, port;
	uint64_t incarnation;
	uint8_t state, flags;
};

/*
 * A consistent read of slot @k under the page's sequence counter (the
 * protocol of <linux/r2cc.h>): which port it holds as well as its state,
 * or a slot given to another port between two reads would pair one
 * port's incarnation with the other's identity.
 */
static void state_read(const struct r2cc_state_header *h, uint32_t k,
		       struct slot_view *v)
{
	const struct r2cc_state_port *e = state_slot(h, k);
	uint32_t s;

	do {
		s = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
		if (s & 1)
			continue;
		v->dev_index = __atomic_load_n(&e->dev_index,
					       __ATOMIC_RELAXED);
		v->port = __atomic_load_n(&e->port, __ATOMIC_RELAXED);
		v->state = __atomic_load_n(&e->state, __ATOMIC_RELAXED);
		v->flags = __atomic_load_n(&e->flags, __ATOMIC_RELAXED);
		v->incarnation = __atomic_load_n(&e->incarnation,
						 __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((s & 1) || __atomic_load_n(&h->seq, __ATOMIC_RELAXED) != s);
}

/* Map NICs to the module's devices and state page slots. */
static void kmod_bind(struct r2cc_ctx *ctx)
{
	const struct r2cc_state_header *h = ctx->state;
	struct r2cc_port_info info[R2CC_MAX_NICS * 2];
	struct r2cc_snapshot snap = {
		.size = sizeof(snap), .count = R2CC_MAX_NICS * 2,
		.ports = (uintptr_t)info,
	};
	uint32_t i, k, n;
	int j;

	if (ioctl(ctx->kmod_fd, R2CC_IOC_SNAPSHOT, &snap))
		return;
	n = snap.count < R2CC_MAX_NICS * 2 ? snap.count : R2CC_MAX_NICS * 2;
	for (j = 0; j < ctx->nnics; j++) {
		struct r2cc_nic *nic = &ctx->nics[j];

		for (i = 0; i < n; i++)
			if (!strcmp(info[i].dev_name, nic->info.dev_name) &&
			    info[i].port == nic->info.port) {
				nic->kmod_dev = (int32_t)info[i].dev_index;
				__atomic_store_n(&nic->state,
						 nic_state(info[i].state),
						 __ATOMIC_RELAXED);
			}
		nic->slot = -1;
		for (k = 0; h && k < h->nslots; k++) {
			struct slot_view v;

			state_read(h, k, &v);
			if ((v.flags & R2CC_SLOT_VALID) &&
			    v.dev_index == (uint32_t)nic->kmod_dev &&
			    v.port == nic->info.port) {
				nic->slot = (int32_t)k;
				nic->incarnation = v.incarnation;
				nic->degraded = !!(v.flags & R2CC_SLOT_DEGRADED);
			}
		}
	}
}

static int kmod_open(struct r2cc_ctx *ctx)
{
	struct r2cc_filter f = {
		.size = sizeof(f),
		.kinds = 1ULL << R2CC_EV_PORT_DOWN | 1ULL << R2CC_EV_PORT_UP |
			 1ULL << R2CC_EV_PORT_CHANGE |
			 1ULL << R2CC_EV_PORT_DEGRADED |
			 1ULL << R2CC_EV_PORT_RECOVERED |
			 1ULL << R2CC_EV_DEVICE_REMOVE,
	};
	struct r2cc_version ver;
	void *page;

	ctx->kmod_fd = open("/dev/r2cc", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (ctx->kmod_fd < 0)
		return -errno;
	if (ioctl(ctx->kmod_fd, R2CC_IOC_VERSION, &ver) ||
	    ver.abi != R2CC_ABI_VERSION ||
	    ver.event_size != sizeof(struct r2cc_event) ||
	    ioctl(ctx->kmod_fd, R2CC_IOC_SET_FILTER, &f)) {
		log_msg(ctx, R2CC_LOG_WARN,
			"/dev/r2cc speaks another ABI; using verbs events");
		close(ctx->kmod_fd);
		ctx->kmod_fd = -1;
		return -EPROTO;
	}
	page = mmap(NULL, ver.state_size, PROT_READ, MAP_SHARED,
		    ctx->kmod_fd, 0);
	ctx->state = page == MAP_FAILED ? NULL : page;
	/* A page whose entries lack the incarnation cannot be trusted. */
	if (ctx->state &&
	    ctx->state->entry_size < sizeof(struct r2cc_state_port)) {
		munmap(page, ver.state_size);
		ctx->state = NULL;
	}
	ctx->state_size = ver.state_size;
	kmod_bind(ctx);
	ctx->source = R2CC_NOTIFY_KMOD;
	return 0;
}

static int verbs_open(struct r2cc_ctx *ctx)
{
	int i;

	ctx->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (ctx->epoll_fd < 0)
		return -errno;
	for (i = 0; i < ctx->ndevs; i++) {
		struct epoll_event ee = { .events = EPOLLIN, .data.u32 = i };
		int fd = ctx->devs[i]->async_fd;

		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) ||
		    epoll_ctl(ctx->epoll_fd, EPOLL_CTL_ADD, fd, &ee)) {
			int ret = -errno;

			close(ctx->epoll_fd);
			ctx->epoll_fd = -1;
			return ret;
		}
	}
	ctx->source = R2CC_NOTIFY_VERBS;
	health_open(ctx);
	return 0;
}

int notify_open(struct r2cc_ctx *ctx)
{
	if (!(ctx->flags & R2CC_CTX_NO_KMOD) && !kmod_open(ctx)) {
		log_msg(ctx, R2CC_LOG_INFO, "notification: r2cc.ko");
		return 0;
	}
	log_msg(ctx, R2CC_LOG_INFO, "notification: verbs async events");
	return verbs_open(ctx);
}

void notify_close(struct r2cc_ctx *ctx)
{
	if (ctx->state)
		munmap((void *)ctx->state, ctx->state_size);
	ctx->state = NULL;
	if (ctx->kmod_fd >= 0)
		close(ctx->kmod_fd);
	ctx->kmod_fd = -1;
	if (ctx->epoll_fd >= 0) {
		close(ctx->epoll_fd);
		health_close(ctx);
	}
	ctx->epoll_fd = -1;
}

static int nic_by_kmod(const struct r2cc_ctx *ctx, uint32_t dev, uint32_t port)
{
	int i;

	for (i = 0; i < ctx->nnics; i++)
		if (ctx->nics[i].kmod_dev == (int32_t)dev &&
		    ctx->nics[i].info.port == port)
			return i;
	return -1;
}

/* Returns 1 with @ev, 0 if nothing is pending, -errno. */
static int kmod_poll_one(struct r2cc_ctx *ctx, struct r2cc_nic_event *ev)
{
	struct r2cc_event rec;

	for (;;) {
		ssize_t n = read(ctx->kmod_fd, &rec, sizeof(rec));
		int i;

		if (n < 0)
			return errno == EAGAIN ? 0 : -errno;
		if (n != sizeof(rec))
			return -EIO;
		if (rec.kind == R2CC_EV_OVERFLOW) {
			/* Lost records: resynchronise from a snapshot. */
			log_msg(ctx, R2CC_LOG_WARN,
				"r2cc.ko dropped %llu records; resyncing",
				(unsigned long long)rec.lost);
			kmod_bind(ctx);
			continue;
		}
		i = nic_by_kmod(ctx, rec.dev_index, rec.port);
		if (rec.kind == R2CC_EV_DEVICE_REMOVE || i < 0)
			continue;
		memset(ev, 0, sizeof(*ev));
		ev->nic = i;
		ev->old_state = ctx->nics[i].state;
		ev->new_state = nic_state(rec.new_state);
		ev->source = R2CC_NOTIFY_KMOD;
		ev->injected = !!(rec.flags & R2CC_EVF_INJECTED);
		ev->time_ns = rec.time_ns;
		/* The module clears degraded when a port leaves ACTIVE. */
		if (rec.kind == R2CC_EV_PORT_DEGRADED ||
		    rec.kind == R2CC_EV_PORT_RECOVERED) {
			ctx->nics[i].degraded =
				rec.kind == R2CC_EV_PORT_DEGRADED;
			ev->error_rate = rec.error_rate > UINT32_MAX ?
					 UINT32_MAX : (uint32_t)rec.error_rate;
		} else if (ev->new_state != R2CC_NIC_ACTIVE) {
			ctx->nics[i].degraded = 0;
		}
		ev->degraded = ctx->nics[i].degraded;
		__atomic_store_n(&ctx->nics[i].state, ev->new_state,
				 __ATOMIC_RELAXED);
		return 1;
	}
}

static int verbs_poll_one(struct r2cc_ctx *ctx, struct r2cc_nic_event *ev)
{
	int d;

	for (d = 0; d < ctx->ndevs; d++) {
		struct ibv_async_event ae;

		while (!ibv_get_async_event(ctx->devs[d], &ae)) {
			enum ibv_event_type t = ae.event_type;
			uint32_t port = (uint32_t)ae.element.port_num;
			struct ibv_port_attr pa;
			int i;

			ibv_ack_async_event(&ae);
			if (t != IBV_EVENT_PORT_ERR && t != IBV_EVENT_PORT_ACTIVE)
				continue;
			for (i = 0; i < ctx->nnics; i++)
				if (ctx->nics[i].verbs == ctx->devs[d] &&
				    ctx->nics[i].info.port == port)
					break;
			if (i == ctx->nnics)
				continue;
			/* Report the state now, not the event's claim. */
			if (ibv_query_port(ctx->devs[d], (uint8_t)port, &pa))
				pa.state = t == IBV_EVENT_PORT_ACTIVE ?
					   IBV_PORT_ACTIVE : IBV_PORT_DOWN;
			log_msg(ctx, R2CC_LOG_DEBUG,
				"verbs: %s port %u event %d, state now %d",
				ctx->nics[i].info.dev_name, port, t, pa.state);
			if (nic_state(pa.state) == ctx->nics[i].state)
				continue;
			memset(ev, 0, sizeof(*ev));
			ev->nic = i;
			ev->old_state = ctx->nics[i].state;
			ev->new_state = nic_state(pa.state);
			ev->source = R2CC_NOTIFY_VERBS;
			ev->time_ns = clock_now_ns();
			/* a port that left ACTIVE is not degraded, it is down */
			if (ev->new_state != R2CC_NIC_ACTIVE)
				ctx->nics[i].degraded = 0;
			ev->degraded = ctx->nics[i].degraded;
			__atomic_store_n(&ctx->nics[i].state, ev->new_state,
				 __ATOMIC_RELAXED);
			return 1;
		}
	}
	return 0;
}

R2CC_EXPORT int r2cc_event_fd(const struct r2cc_ctx *ctx)
{
	if (!ctx)
		return -EINVAL;
	return ctx->source == R2CC_NOTIFY_KMOD ? ctx->kmod_fd : ctx->epoll_fd;
}

int notify_poll(struct r2cc_ctx *ctx, struct r2cc_nic_event *ev)
{
	int ret;

	if (ctx->source == R2CC_NOTIFY_KMOD)
		ret = kmod_poll_one(ctx, ev);
	else
		ret = verbs_poll_one(ctx, ev) ?: health_poll(ctx, ev);
	ev->size = sizeof(*ev);
	return ret;
}

/*
 * The transport reads the source as it makes progress (conn_progress_all):
 * what it reads is kept for r2cc_next_event() (the oldest is dropped when
 * the application does not read them).
 */
void notify_keep(struct r2cc_ctx *ctx, const struct r2cc_nic_event *ev)
{
	unsigned int n = sizeof(ctx->evq) / sizeof(ctx->evq[0]);

	if (ctx->evq_len == n) {
		ctx->evq_head = (ctx->evq_head + 1) % n;
		ctx->evq_len--;
	}
	ctx->evq[(ctx->evq_head + ctx->evq_len++) % n] = *ev;
}

R2CC_EXPORT int r2cc_nic_is_active(const struct r2cc_ctx *ctx, int i)
{
	const struct r2cc_nic *nic;

	if (!ctx || i < 0 || i >= ctx->nnics)
		return -EINVAL;
	nic = &ctx->nics[i];
	if (ctx->state && nic->slot >= 0) {
		struct slot_view v;

		/* A slot now holding another port means ours is gone. */
		state_read(ctx->state, (uint32_t)nic->slot, &v);
		return (v.flags & R2CC_SLOT_VALID) &&
		       v.incarnation == nic->incarnation &&
		       v.state == R2CC_PORT_ACTIVE;
	}
	return __atomic_load_n(&nic->state, __ATOMIC_RELAXED) ==
	       R2CC_NIC_ACTIVE;
}
