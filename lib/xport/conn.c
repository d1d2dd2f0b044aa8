// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Connections: listen, connect, accept, the handshake that creates and
 * connects one RC QP per rail, progress, stats and close.  Nothing here
 * blocks; every step is retried from r2cc_conn_ready() / r2cc_test().
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "platform/platform.h"
#include "xport/conn.h"
#include "xport/ctrl.h"
#include "xport/engine.h"
#include "xport/msg.h"
#include "xport/publish.h"
#include "xport/rail.h"
#include "xport/stage.h"

_Static_assert(sizeof(struct handle_data) <= R2CC_HANDLE_SIZE,
	       "handle too small");

static uint64_t nonce_new(void)
{
	uint64_t n = 0;

	if (getrandom(&n, sizeof(n), GRND_NONBLOCK) != sizeof(n))
		n = clock_now_ns() ^ ((uint64_t)getpid() << 32);
	return n | 1;
}

R2CC_EXPORT int r2cc_listen(struct r2cc_ctx *ctx, struct r2cc_handle *handle,
			    struct r2cc_listener **out)
{
	struct handle_data hd = { .magic = HANDLE_MAGIC, .family = AF_INET };
	struct sockaddr_in sa;
	unsigned int salen;
	struct r2cc_listener *l;
	socklen_t len;
	int fd, ret;

	if (out)
		*out = NULL;
	if (!ctx || !handle || !out)
		return -EINVAL;
	if (!handle_ok(ctx, R2CC_OBJ_CTX))
		return -EBADF;
	ret = ctrl_addr(ctx, &sa, &salen);
	if (ret)
		return ret;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	len = sizeof(sa);
	if (bind(fd, (struct sockaddr *)&sa, salen) || listen(fd, 128) ||
	    getsockname(fd, (struct sockaddr *)&sa, &len)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	if (handle_add(l, R2CC_OBJ_LISTENER)) {
		close(fd);
		free(l);
		return -ENOMEM;
	}
	l->ctx = ctx;
	l->fd = fd;
	l->nonce = nonce_new();
	__atomic_fetch_add(&ctx->nlisteners, 1, __ATOMIC_RELAXED);
	hd.port = sa.sin_port;
	hd.addr = sa.sin_addr.s_addr;
	hd.nonce = l->nonce;
	memset(handle, 0, sizeof(*handle));
	memcpy(handle->bytes, &hd, sizeof(hd));
	log_msg(ctx, R2CC_LOG_INFO, "listening on %s:%u",
		inet_ntoa(sa.sin_addr), ntohs(sa.sin_port));
	*out = l;
	return 0;
}

R2CC_EXPORT int r2cc_listener_close(struct r2cc_listener *l)
{
	int ret;

	ret = handle_check(l, R2CC_OBJ_LISTENER);
	if (ret)
		return ret;
	handle_del(l);
	__atomic_fetch_sub(&l->ctx->nlisteners, 1, __ATOMIC_RELAXED);
	close(l->fd);
	free(l);
	return 0;
}

/* A connection over the control socket @fd (the simulator makes its own). */
struct r2cc_conn *conn_new(struct r2cc_ctx *ctx, int fd, bool sender)
{
	struct r2cc_conn *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	if (handle_add(c, R2CC_OBJ_CONN)) {
		free(c);
		return NULL;
	}
	c->ctx = ctx;
	c->sender = sender;
	c->chunk_size = ctx->tune.chunk_size;
	ctrl_init(&c->ctl, fd);
	ctrl_keepalive(fd, ctx->tune.peer_timeout_ms);
	c->st.size = sizeof(c->st);
	c->st.notify_source = (uint8_t)ctx->source;
	c->next = ctx->conns;
	ctx->conns = c;
	return c;
}

R2CC_EXPORT int r2cc_connect_opts(struct r2cc_ctx *ctx,
				  const struct r2cc_handle *handle,
				  const struct r2cc_conn_opts *uopts,
				  struct r2cc_conn **out)
{
	struct r2cc_conn_opts o = { 0 };
	struct handle_data hd;
	struct sockaddr_in sa = { .sin_family = AF_INET };
	struct r2cc_conn *c;
	int fd, ret;

	if (out)
		*out = NULL;
	if (!ctx || !handle || !out)
		return -EINVAL;
	if (!handle_ok(ctx, R2CC_OBJ_CTX))
		return -EBADF;
	if (uopts) {
		ret = r2cc_opts_in(&o, sizeof(o), uopts);
		if (ret)
			return ret;
		if (o.flags || o.reserved ||
		    (ctx->nnics < 64 && o.primary >> ctx->nnics))
			return -EINVAL;
	}
	memcpy(&hd, handle->bytes, sizeof(hd));
	if (hd.magic != HANDLE_MAGIC || hd.family != AF_INET || !hd.port ||
	    hd.reserved || !hd.nonce)
		return -EINVAL;
	sa.sin_port = hd.port;
	sa.sin_addr.s_addr = hd.addr;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    errno != EINPROGRESS) {
		ret = -errno;
		close(fd);
		return ret;
	}
	/* Progress in another thread sees it whole, or not at all. */
	ctx_lock(ctx);
	c = conn_new(ctx, fd, true);
	if (c) {
		c->nonce = hd.nonce;
		c->state = CONN_TCP;
		c->primary = o.primary;
	}
	ctx_unlock(ctx);
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

R2CC_EXPORT int r2cc_connect(struct r2cc_ctx *ctx,
			     const struct r2cc_handle *handle,
			     struct r2cc_conn **out)
{
	return r2cc_connect_opts(ctx, handle, NULL, out);
}

R2CC_EXPORT int r2cc_accept(struct r2cc_listener *l, struct r2cc_conn **out)
{
	struct r2cc_conn *c;
	int fd;

	if (out)
		*out = NULL;
	if (!l || !out)
		return -EINVAL;
	if (!handle_ok(l, R2CC_OBJ_LISTENER))
		return -EBADF;
	fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0)
		return errno == EWOULDBLOCK || errno == EINTR ||
		       errno == ECONNABORTED ? -EAGAIN : -errno;
	ctx_lock(l->ctx);
	c = conn_new(l->ctx, fd, false);
	if (c) {
		c->nonce = l->nonce;
		c->state = CONN_HELLO;
	}
	ctx_unlock(l->ctx);
	if (!c) {
		close(fd);
		return -ENOMEM;
	}
	*out = c;
	return 0;
}

static int send_hello(struct r2cc_conn *c, uint16_t type)
{
	struct wire_hello h = {
		.magic = WIRE_MAGIC, .version = WIRE_VERSION,
		.nonce = c->nonce, .chunk_size = c->chunk_size,
		.nrails = (uint32_t)c->nrails,
	};
	struct wire_qp qp[WIRE_MAX_RAILS];
	int i;

	for (i = 0; i < c->nrails; i++)
		qp[i] = c->rails[i].local;
	return ctrl_send(&c->ctl, type, &h, sizeof(h), qp,
			 sizeof(qp[0]) * (size_t)c->nrails);
}

static int rails_create(struct r2cc_conn *c, int n)
{
	int i, ret;

	c->nrails = n;
	for (i = 0; i < n; i++) {
		c->rails[i].nic = i;
		c->rails[i].nic_wrs = &c->ctx->nics[i].wrs;
		ret = rail_create(c, &c->rails[i]);
		if (ret)
			return ret;
	}
	return 0;
}

/* The peer's rails: connect those whose NICs are up at both ends. */
static int rails_join(struct r2cc_conn *c, const struct wire_hello *h)
{
	int i, ret;

	for (i = c->nrails - 1; i >= (int)h->nrails; i--)
		rail_destroy(&c->rails[i]);
	if ((int)h->nrails < c->nrails)
		c->nrails = (int)h->nrails;
	for (i = 0; i < c->nrails; i++) {
		struct rail *r = &c->rails[i];

		r->remote = h->qp[i];
		r->peer_nic_up = h->qp[i].active;
		/* qpn 0: the peer could not connect its end (QP 0 is no RC QP) */
		if (!r->local.active || !r->remote.active || !r->remote.qpn) {
			rail_start_down(c, r, 0);
			continue;
		}
		ret = rail_connect(c, r);
		if (ret) {
			/* One rail that cannot connect is a rail down. */
			ret = rail_start_down(c, r, ret);
			if (ret)
				return ret;
			if (!c->sender)
				r->local.qpn = 0;
			continue;
		}
		r->state = RAIL_UP;
	}
	c->st.nrails = c->nrails;
	/* No primary among the rails both ends have: stripe over them all. */
	if (!(c->primary & (c->nrails < 64 ? (1ull << c->nrails) - 1 : ~0ull)))
		c->primary = 0;
	return 0;
}

static int check_hello(struct r2cc_conn *c, const struct wire_hdr *hd,
		       const struct wire_hello *h)
{
	uint32_t i;

	if (hd->len < sizeof(*h) || h->magic != WIRE_MAGIC ||
	    h->version < WIRE_VERSION_MIN || h->version > WIRE_VERSION ||
	    h->nonce != c->nonce ||
	    !h->nrails || h->nrails > WIRE_MAX_RAILS ||
	    hd->len != sizeof(*h) + h->nrails * sizeof(h->qp[0]) ||
	    h->chunk_size < R2CC_CHUNK_SIZE_MIN || h->chunk_size > R2CC_CHUNK_SIZE_MAX)
		return -EPROTO;
	/* A malformed address is the peer's bug, not a rail that is down. */
	for (i = 0; i < h->nrails; i++)
		if (h->qp[i].mtu < IBV_MTU_256 || h->qp[i].mtu > IBV_MTU_4096 ||
		    h->qp[i].active > 1)
			return -EPROTO;
	return 0;
}

static int nrails_local(const struct r2cc_conn *c)
{
	return c->ctx->nnics < WIRE_MAX_RAILS ? c->ctx->nnics : WIRE_MAX_RAILS;
}

/*
 * A NIC already degraded when the connection comes up: its rails start
 * drained, and the peer, which drains its own end, is told.
 */
static int tell_degraded(struct r2cc_conn *c)
{
	int i, ret;

	for (i = 0; i < c->nrails; i++) {
		struct rail *r = &c->rails[i];
		struct wire_nic w = {
			.rail = (uint32_t)i,
			.up = WIRE_NIC_UP | WIRE_NIC_DEGRADED,
		};

		if (!c->ctx->nics[r->nic].degraded)
			continue;
		rail_set_degraded(c, r, R2CC_RAIL_DEGRADED_LOCAL, true);
		ret = engine_send(c, W_NIC, &w, sizeof(w), NULL, 0);
		if (ret < 0)
			return ret;
	}
	return 0;
}

/* Advance the handshake.  Returns 0, or -errno (the connection failed). */
int conn_handshake(struct r2cc_conn *c)
{
	const struct wire_hdr *hd;
	const struct wire_hello *h;
	int ret;

	if (c->state == CONN_TCP) {
		struct pollfd p = { .fd = c->ctl.fd, .events = POLLOUT };
		socklen_t len = sizeof(ret);

		if (poll(&p, 1, 0) <= 0)
			return 0;
		if (getsockopt(c->ctl.fd, SOL_SOCKET, SO_ERROR, &ret, &len))
			ret = errno;
		if (ret)
			return -ret;
		ret = rails_create(c, nrails_local(c));
		if (ret)
			return ret;
		ret = send_hello(c, W_HELLO);
		if (ret < 0)
			return ret;
		c->state = CONN_HELLO;
	}
	ret = ctrl_flush(&c->ctl);
	if (ret < 0)
		return ret;
	ret = ctrl_recv(&c->ctl);
	if (ret <= 0)
		return ret;
	hd = (const void *)c->ctl.in;
	h = (const void *)(hd + 1);
	if (hd->type != (c->sender ? W_HELLO_ACK : W_HELLO) ||
	    check_hello(c, hd, h))
		return -EPROTO;
	c->peer_version = h->version;
	if (!c->sender) {
		c->chunk_size = h->chunk_size;
		ret = rails_create(c, h->nrails < (uint32_t)nrails_local(c) ?
				   (int)h->nrails : nrails_local(c));
		if (ret)
			return ret;
	}
	ret = rails_join(c, h);
	ctrl_consumed(&c->ctl);
	if (ret)
		return ret;
	if (!c->sender) {
		ret = send_hello(c, W_HELLO_ACK);
		if (ret < 0)
			return ret;
	}
	c->state = CONN_READY;
	log_msg(c->ctx, R2CC_LOG_INFO, "connected: %d rails, %d up, chunk %u",
		c->nrails, rails_up(c), c->chunk_size);
	ret = stage_open(c);
	return ret ? ret : tell_degraded(c);
}

/* Everything a connection does between calls of the application. */
int conn_progress(struct r2cc_conn *c)
{
	int ret;

	if (c->state == CONN_FAILED)
		return c->err;
	if (c->state != CONN_READY) {
		ret = conn_handshake(c);
		if (ret)
			engine_abort(c, ret, "handshake failed");
		return c->state == CONN_FAILED ? c->err : 0;
	}
	engine_progress(c);
	return c->state == CONN_FAILED ? c->err : 0;
}

void conn_progress_all(struct r2cc_ctx *ctx)
{
	struct r2cc_nic_event ev;
	struct r2cc_conn *c;

	ctx->progress_passes++;
	/* NIC changes first: a failed rail takes no more chunks. */
	while (notify_poll(ctx, &ev) == 1) {
		engine_nic_event(ctx, &ev);
		notify_keep(ctx, &ev);
	}
	engine_nic_shares(ctx);
	for (c = ctx->conns; c; c = c->next)
		conn_progress(c);
	publish_due(ctx);
}

R2CC_EXPORT int r2cc_progress(struct r2cc_ctx *ctx)
{
	int ret;

	ret = handle_check(ctx, R2CC_OBJ_CTX);
	if (ret)
		return ret;
	ctx_lock(ctx);
	conn_progress_all(ctx);
	ctx_unlock(ctx);
	return 0;
}

R2CC_EXPORT int r2cc_conn_ready(struct r2cc_conn *c)
{
	int ret;

	ret = handle_check(c, R2CC_OBJ_CONN);
	if (ret)
		return ret;
	ctx_lock(c->ctx);
	conn_progress_all(c->ctx);
	ret = c->state == CONN_FAILED ? c->err : c->state == CONN_READY;
	ctx_unlock(c->ctx);
	return ret;
}

R2CC_EXPORT int r2cc_conn_close(struct r2cc_conn *c)
{
	struct r2cc_ctx *ctx;
	int ret;

	ret = handle_check(c, R2CC_OBJ_CONN);
	if (ret)
		return ret;
	ctx = c->ctx;
	ctx_lock(ctx);
	conn_close_locked(c);
	ctx_unlock(ctx);
	return 0;
}

void conn_close_locked(struct r2cc_conn *c)
{
	struct r2cc_conn **pp;
	int i;

	handle_del(c);
	publish_conn_closed(c->ctx, c);
	for (pp = &c->ctx->conns; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (c->state != CONN_FAILED) {
		c->state = CONN_FAILED;
		c->err = -ECANCELED;
	}
	for (i = 0; i < c->nrails; i++)
		if (c->rails[i].qp) {
			struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

			ibv_modify_qp(c->rails[i].qp, &a, IBV_QP_STATE);
		}
	msg_release_all(c);
	rails_reap(c, true);
	for (i = 0; i < WIRE_MAX_RAILS; i++) {
		rail_destroy(&c->rails[i]);
		free(c->rails[i].fenced_map);
	}
	stage_close(c);		/* no QP is left to write its ring */
	ctrl_close(&c->ctl);
	free(c);
}

R2CC_EXPORT int r2cc_conn_stats(struct r2cc_conn *c, struct r2cc_conn_stats *st,
				struct r2cc_rail_stats *rails, int nrails)
{
	struct r2cc_conn_stats cs;
	struct r2cc_rail_stats rs;
	size_t stride = 0;
	int i;

	if (!c || !st || r2cc_opts_out_check(r2cc_opts_size(st)) ||
	    nrails < 0 || (nrails && !rails))
		return -EINVAL;
	/* rails[0].size is the size of every element: the array's stride. */
	if (nrails) {
		stride = r2cc_opts_size(rails);
		if (r2cc_opts_out_check(stride))
			return -EINVAL;
	}
	if (!handle_ok(c, R2CC_OBJ_CONN))
		return -EBADF;
	ctx_lock(c->ctx);
	cs = c->st;
	cs.nrails = c->nrails;
	cs.fallback = c->fallback;
	r2cc_opts_out(st, &cs, sizeof(cs));
	for (i = 0; i < nrails && i < c->nrails; i++) {
		const struct rail *r = &c->rails[i];

		rs = r->st;
		rs.nic = r->nic;
		rs.state = r->state == RAIL_FENCING ? R2CC_RAIL_DOWN : r->state;
		rs.standby = !conn_rail_primary(c, i);
		rs.degraded = r->degraded;
		rs.inflight = r->outstanding > 0 ? (uint64_t)r->outstanding : 0;
		rs.weight = c->ctx->nics[r->nic].info.bandwidth_mbps >>
			    conn_rail_shift(c, r);
		rs.cut = c->ctx->tune.drain_graded ? r->cut :
			 r->degraded ? DRAIN_STEPS : 0;
		r2cc_opts_out_n((char *)rails + (size_t)i * stride, stride, &rs,
				sizeof(rs));
	}
	i = c->nrails;
	ctx_unlock(c->ctx);
	return i;
}
