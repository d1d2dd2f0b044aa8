// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The context API: options, the lifetime of fabric, notification and
 * connections, NIC information and events for the application.
 */
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "platform/platform.h"
#include "xport/xport.h"

static int r2cc_opts_check(const struct r2cc_ctx_opts *o)
{
	if (o->log_level < R2CC_LOG_ERROR || o->log_level > R2CC_LOG_DEBUG)
		return -EINVAL;
	if (o->flags & ~R2CC_CTX_NO_KMOD || o->reserved)
		return -EINVAL;
	if (o->chunk_size &&
	    (o->chunk_size < R2CC_CHUNK_SIZE_MIN || o->chunk_size > R2CC_CHUNK_SIZE_MAX))
		return -EINVAL;
	if (o->stall_ms > R2CC_STALL_MS_MAX ||
	    o->rail_depth > R2CC_RAIL_DEPTH_MAX ||
	    o->peer_timeout_ms > R2CC_PEER_TIMEOUT_MS_MAX ||
	    o->fallback > R2CC_FALLBACK_NONE ||
	    (o->nic_window && o->nic_window < R2CC_CHUNK_SIZE_MIN))
		return -EINVAL;
	if (o->ctrl_ifname && (!*o->ctrl_ifname ||
			       strlen(o->ctrl_ifname) >= R2CC_IFNAME_MAX))
		return -EINVAL;
	return 0;
}

R2CC_EXPORT int r2cc_ctx_create(const struct r2cc_ctx_opts *opts,
				struct r2cc_ctx **out)
{
	struct r2cc_ctx_opts def = { .size = sizeof(def) }, o;
	struct r2cc_nic_sel sel;
	struct r2cc_ctx *ctx;
	const char *nics;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	ret = r2cc_opts_in(&o, sizeof(o), opts ? opts : &def);
	ret = ret ?: r2cc_opts_check(&o);
	if (ret)
		return ret;
	opts = &o;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->log = opts->log;
	ctx->log_arg = opts->log_arg;
	ctx->log_level = opts->log_level;
	ctx->flags = opts->flags;
	ctx->kmod_fd = -1;
	ctx->epoll_fd = -1;
	pthread_mutex_init(&ctx->lock, NULL);

	ret = tune_resolve(ctx, opts);
	if (ret)
		goto err;
	nics = opts->nics ? opts->nics : getenv("R2CC_NICS");
	ret = nics_parse(nics, &sel);
	if (ret) {
		log_msg(ctx, R2CC_LOG_ERROR, "bad NIC list '%s'", nics);
		goto err;
	}
	ret = fabric_discover(ctx, &sel);
	if (ret)
		goto err_fabric;
	ret = notify_open(ctx);
	if (ret)
		goto err_fabric;
	ret = handle_add(ctx, R2CC_OBJ_CTX);
	if (ret)
		goto err_notify;
	ret = progress_start(ctx);
	if (ret)
		goto err_obj;
	publish_open(ctx);
	*out = ctx;
	return 0;

err_obj:
	handle_del(ctx);
err_notify:
	notify_close(ctx);
err_fabric:
	fabric_close(ctx);
err:
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	return ret;
}

static int ctx_destroy(struct r2cc_ctx *ctx)
{
	int ret;

	ret = handle_check(ctx, R2CC_OBJ_CTX);
	if (ret)
		return ret;
	ctx_lock(ctx);
	if (__atomic_load_n(&ctx->nmrs, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&ctx->nlisteners, __ATOMIC_RELAXED)) {
		log_msg(ctx, R2CC_LOG_ERROR,
			"context kept: %d memory regions and %d listeners still refer to it",
			ctx->nmrs, ctx->nlisteners);
		ctx_unlock(ctx);
		return -EBUSY;
	}
	handle_del(ctx);
	/* Connections left open go with it; their requests are freed. */
	while (ctx->conns)
		conn_close_locked(ctx->conns);
	ctx_unlock(ctx);
	progress_stop(ctx);
	reap_wait(ctx);	/* its QPs go before its PDs */
	publish_close(ctx);
	notify_close(ctx);
	fabric_close(ctx);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	return 0;
}

/* The R2CC_0.2 symbol, and the R2CC_0.1 one that returned nothing. */
R2CC_EXPORT int r2cc_ctx_destroy_0_2(struct r2cc_ctx *ctx);
R2CC_EXPORT void r2cc_ctx_destroy_0_1(struct r2cc_ctx *ctx);
__asm__(".symver r2cc_ctx_destroy_0_2, r2cc_ctx_destroy@@R2CC_0.2");
__asm__(".symver r2cc_ctx_destroy_0_1, r2cc_ctx_destroy@R2CC_0.1");

R2CC_EXPORT int r2cc_ctx_destroy_0_2(struct r2cc_ctx *ctx)
{
	return ctx_destroy(ctx);
}

R2CC_EXPORT void r2cc_ctx_destroy_0_1(struct r2cc_ctx *ctx)
{
	ctx_destroy(ctx);
}

R2CC_EXPORT int r2cc_nic_count(const struct r2cc_ctx *ctx)
{
	return ctx ? ctx->nnics : -EINVAL;
}

R2CC_EXPORT int r2cc_nic_info(const struct r2cc_ctx *ctx, int i,
			      struct r2cc_nic_info *info)
{
	if (!ctx || !info || i < 0 || i >= ctx->nnics)
		return -EINVAL;
	return r2cc_opts_out(info, &ctx->nics[i].info, sizeof(*info));
}

R2CC_EXPORT enum r2cc_notify_source
r2cc_notify_source(const struct r2cc_ctx *ctx)
{
	return handle_ok(ctx, R2CC_OBJ_CTX) ? ctx->source :
						(enum r2cc_notify_source)0;
}

/* A caller built before @degraded existed is not given health changes. */
static bool event_wanted(const struct r2cc_nic_event *e, size_t usize)
{
	return e->old_state != e->new_state ||
	       usize > offsetof(struct r2cc_nic_event, degraded);
}

R2CC_EXPORT int r2cc_next_event(struct r2cc_ctx *ctx,
				struct r2cc_nic_event *ev, int timeout_ms)
{
	struct r2cc_nic_event e;
	uint64_t deadline = 0;
	int ret;

	/* Checked before an event is taken off the queue for the caller. */
	if (!ctx || !ev || r2cc_opts_out_check(r2cc_opts_size(ev)) ||
	    timeout_ms < -1)
		return -EINVAL;
	if (timeout_ms > 0)
		deadline = clock_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	for (;;) {
		struct pollfd p = { .fd = r2cc_event_fd(ctx), .events = POLLIN };
		int wait = timeout_ms;

		/* Never hold the lock while waiting below. */
		ctx_lock(ctx);
		while (ctx->evq_len) {
			e = ctx->evq[ctx->evq_head];
			ctx->evq_head = (ctx->evq_head + 1) %
					(sizeof(ctx->evq) / sizeof(ctx->evq[0]));
			ctx->evq_len--;
			if (event_wanted(&e, r2cc_opts_size(ev))) {
				ctx_unlock(ctx);
				r2cc_opts_out(ev, &e, sizeof(e));
				return 1;
			}
		}
		ret = notify_poll(ctx, &e);
		if (ret == 1)
			engine_nic_event(ctx, &e);
		ctx_unlock(ctx);
		if (ret == 1 && !event_wanted(&e, r2cc_opts_size(ev)))
			continue;
		if (ret == 1)
			r2cc_opts_out(ev, &e, sizeof(e));
		if (ret)
			return ret;
		if (timeout_ms == 0)
			return 0;
		if (timeout_ms > 0) {
			uint64_t t = clock_now_ns();

			if (t >= deadline)
				return 0;
			wait = (int)((deadline - t + 999999) / 1000000);
		}
		ret = poll(&p, 1, wait);
		if (ret < 0 && errno != EINTR)
			return -errno;
	}
}
