// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * What the simulated transport sees of the world outside it: a virtual
 * clock, NIC state without a notification source, and a control network
 * that holds every byte until the scheduler lets it through.  The library's
 * fabric.c and notify.c are replaced by the few calls below; send(),
 * recv() and shutdown() on the simulator's own sockets are wrapped
 * (-Wl,--wrap) so ctrl.c runs unchanged over the fake network.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#include "platform/platform.h"
#include "world.h"

uint64_t xs_now;

uint64_t xs_time(void)
{
	return xs_now;
}

uint64_t clock_now_ns(void)
{
	return __atomic_load_n(&xs_now, __ATOMIC_RELAXED);
}

R2CC_EXPORT int r2cc_nic_is_active(const struct r2cc_ctx *ctx, int i)
{
	if (!ctx || i < 0 || i >= ctx->nnics)
		return -EINVAL;
	return ctx->nics[i].state == R2CC_NIC_ACTIVE;
}

int fabric_discover(struct r2cc_ctx *ctx, const struct r2cc_nic_sel *sel)
{
	(void)ctx;
	(void)sel;
	return -ENODEV;
}

void fabric_close(struct r2cc_ctx *ctx)
{
	(void)ctx;
}

int notify_open(struct r2cc_ctx *ctx)
{
	(void)ctx;
	return -ENODEV;
}

void notify_close(struct r2cc_ctx *ctx)
{
	(void)ctx;
}

int notify_poll(struct r2cc_ctx *ctx, struct r2cc_nic_event *ev)
{
	(void)ctx;
	(void)ev;
	return 0;
}

void notify_keep(struct r2cc_ctx *ctx, const struct r2cc_nic_event *ev)
{
	(void)ctx;
	(void)ev;
}

R2CC_EXPORT int r2cc_event_fd(const struct r2cc_ctx *ctx)
{
	(void)ctx;
	return -1;
}


const char *ibv_get_device_name(struct ibv_device *dev)
{
	(void)dev;
	return "simnic";
}

/* ------------------------------------------------------------ network */

struct xs_pipe xs_pipes[2];
int xs_fds[2] = { -1, -1 };
int xs_send_eagain;		/* per mille of sends refused (EAGAIN) */
struct xs_rng *xs_net_rng;

static int pipe_out(int fd)
{
	return fd == xs_fds[0] ? 0 : fd == xs_fds[1] ? 1 : -1;
}

ssize_t __real_send(int fd, const void *buf, size_t len, int flags);
ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags);
ssize_t __real_recv(int fd, void *buf, size_t len, int flags);
ssize_t __wrap_recv(int fd, void *buf, size_t len, int flags);
int __real_shutdown(int fd, int how);
int __wrap_shutdown(int fd, int how);

static ssize_t sim_send(int d, const void *buf, size_t len);
static ssize_t sim_recv(int d, void *buf, size_t len);

ssize_t __wrap_send(int fd, const void *buf, size_t len, int flags)
{
	int d = pipe_out(fd);
	ssize_t n;

	if (d < 0)
		return __real_send(fd, buf, len, flags);
	fv_lock();
	n = sim_send(d, buf, len);
	fv_unlock();
	return n;
}

ssize_t __wrap_recv(int fd, void *buf, size_t len, int flags)
{
	int d = pipe_out(fd);
	ssize_t n;

	if (d < 0)
		return __real_recv(fd, buf, len, flags);
	fv_lock();
	n = sim_recv(d, buf, len);
	fv_unlock();
	return n;
}

static ssize_t sim_send(int d, const void *buf, size_t len)
{
	struct xs_pipe *p;
	size_t room;

	p = &xs_pipes[d];
	if (p->dead) {
		errno = EPIPE;
		return -1;
	}
	room = XS_PIPE_WINDOW - (p->len - p->deliv);
	if (p->len - p->deliv > XS_PIPE_WINDOW)
		room = 0;
	if (xs_net_rng && xs_send_eagain &&
	    xs_below(xs_net_rng, 1000) < (uint32_t)xs_send_eagain)
		room = 0;
	if (!room) {
		errno = EAGAIN;
		return -1;
	}
	if (len > room)
		len = room;
	xs_pipe_push(d, buf, len);
	return (ssize_t)len;
}

/* Append @len bytes to direction @d, not yet let through. */
void xs_pipe_push(int d, const void *buf, size_t len)
{
	struct xs_pipe *p = &xs_pipes[d];

	if (p->len + len > p->cap) {
		size_t cap = p->cap ? p->cap : 65536;

		while (cap < p->len + len)
			cap *= 2;
		p->buf = realloc(p->buf, cap);
		p->cap = cap;
	}
	memcpy(p->buf + p->len, buf, len);
	p->len += len;
	p->total += len;
}

static ssize_t sim_recv(int d, void *buf, size_t len)
{
	struct xs_pipe *p;
	size_t n;

	p = &xs_pipes[!d];
	n = p->deliv - p->rd;
	if (!n) {
		if (p->dead)
			return 0;
		errno = EAGAIN;
		return -1;
	}
	if (len < n)
		n = len;
	memcpy(buf, p->buf + p->rd, n);
	p->rd += n;
	if (p->rd == p->len) {
		p->rd = p->deliv = p->len = 0;
	} else if (p->rd > (1u << 20)) {
		memmove(p->buf, p->buf + p->rd, p->len - p->rd);
		p->len -= p->rd;
		p->deliv -= p->rd;
		p->rd = 0;
	}
	return (ssize_t)n;
}

/* Whichever side shuts its socket, the other reads end of file. */
int __wrap_shutdown(int fd, int how)
{
	int d = pipe_out(fd);

	if (d < 0)
		return __real_shutdown(fd, how);
	xs_pipes[0].dead = xs_pipes[1].dead = true;
	xs_pipes[0].deliv = xs_pipes[0].len;
	xs_pipes[1].deliv = xs_pipes[1].len;
	return 0;
}

/* Let up to @n bytes of direction @d through. */
size_t xs_pipe_deliver(int d, size_t n)
{
	struct xs_pipe *p = &xs_pipes[d];
	size_t left = p->len - p->deliv;

	if (n > left)
		n = left;
	p->deliv += n;
	return n;
}

void xs_pipes_reset(void)
{
	int d;

	for (d = 0; d < 2; d++) {
		free(xs_pipes[d].buf);
		memset(&xs_pipes[d], 0, sizeof(xs_pipes[d]));
	}
}
