// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* Context: options, logging, and the lifetime of fabric and notification. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void r2cc_log(const struct r2cc_ctx *ctx, enum r2cc_log_level level,
	      const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!ctx->log || (int)level > ctx->log_level)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ctx->log(ctx->log_arg, level, msg);
}

/* @o is the library's own copy (r2cc_opts_in()): its size is not checked. */
static int r2cc_opts_check(const struct r2cc_ctx_opts *o)
{
	if (o->log_level < R2CC_LOG_ERROR || o->log_level > R2CC_LOG_DEBUG)
		return -EINVAL;
	if (o->flags & ~R2CC_CTX_NO_KMOD || o->reserved || o->reserved2)
		return -EINVAL;
	if (o->chunk_size &&
	    (o->chunk_size < R2CC_CHUNK_MIN || o->chunk_size > R2CC_CHUNK_MAX))
		return -EINVAL;
	if (o->stall_ms > 60000 || o->rail_depth > R2CC_RAIL_DEPTH_MAX ||
	    o->peer_timeout_ms > 600000 || o->fallback > R2CC_FALLBACK_NONE)
		return -EINVAL;
	if (o->ctrl_ifname && (!*o->ctrl_ifname || strlen(o->ctrl_ifname) >= 16))
		return -EINVAL;
	return 0;
}

/* @val, else $@env, else @def; the result must lie in [@lo, @hi]. */
static int tune_one(struct r2cc_ctx *ctx, uint32_t val, const char *env,
		    uint32_t def, uint32_t lo, uint32_t hi, uint32_t *out)
{
	const char *s = getenv(env);
	unsigned long long v;
	char *end;

	if (val) {
		*out = val;
		return 0;
	}
	if (!s || !*s) {
		*out = def;
		return 0;
	}
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v < lo || v > hi || *s == '-') {
		r2cc_log(ctx, R2CC_LOG_ERROR, "%s=%s: want %u..%u", env, s,
			 lo, hi);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

int r2cc_tune_resolve(struct r2cc_ctx *ctx, const struct r2cc_ctx_opts *o)
{
	struct r2cc_tune *t = &ctx->tune;
	const char *ifn;
	uint32_t fb, gid;
	int ret;

	ret = tune_one(ctx, o->chunk_size, "R2CC_CHUNK_SIZE", 65536,
		       R2CC_CHUNK_MIN, R2CC_CHUNK_MAX, &t->chunk_size);
	ret = ret ?: tune_one(ctx, o->stall_ms, "R2CC_STALL_MS", 100, 1, 60000,
			      &t->stall_ms);
	ret = ret ?: tune_one(ctx, o->rail_depth, "R2CC_RAIL_DEPTH", 8, 1,
			      R2CC_RAIL_DEPTH_MAX, &t->rail_depth);
	ret = ret ?: tune_one(ctx, o->peer_timeout_ms, "R2CC_PEER_TIMEOUT_MS",
			      5000, 100, 600000, &t->peer_timeout_ms);
	/*
	 * 4.096 us x 2^14 = 67 ms before the NIC retransmits.  Shorter would
	 * retry lost packets well inside the stall detector, but rxe (6.1,
	 * under load) then fails writes with "remote invalid request".
	 * Environment only: few users should touch it.
	 */
	ret = ret ?: tune_one(ctx, 0, "R2CC_IB_TIMEOUT", 14, 1, 31,
			      &t->ib_timeout);
	/* Addressing, as NCCL's NCCL_IB_SL, NCCL_IB_TC, NCCL_IB_GID_INDEX. */
	ret = ret ?: tune_one(ctx, 0, "R2CC_IB_SL", 0, 0, 15, &t->ib_sl);
	ret = ret ?: tune_one(ctx, 0, "R2CC_IB_TC", 0, 0, 255, &t->ib_tc);
	ret = ret ?: tune_one(ctx, 0, "R2CC_IB_GID_INDEX", UINT32_MAX, 0, 255,
			      &gid);
	if (ret)
		return ret;
	t->ib_gid_index = gid == UINT32_MAX ? -1 : (int32_t)gid;
	if (o->fallback) {
		t->tcp_fallback = o->fallback == R2CC_FALLBACK_TCP;
	} else {
		ret = tune_one(ctx, 0, "R2CC_TCP_FALLBACK", 1, 0, 1, &fb);
		if (ret)
			return ret;
		t->tcp_fallback = fb;
	}
	ifn = o->ctrl_ifname ? o->ctrl_ifname : getenv("R2CC_SOCKET_IFNAME");
	if (ifn && strlen(ifn) >= sizeof(t->ctrl_ifname)) {
		r2cc_log(ctx, R2CC_LOG_ERROR, "interface name '%s' too long",
			 ifn);
		return -EINVAL;
	}
	if (ifn)
		strcpy(t->ctrl_ifname, ifn);
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

	ret = r2cc_tune_resolve(ctx, opts);
	if (ret)
		goto err;
	nics = opts->nics ? opts->nics : getenv("R2CC_NICS");
	ret = r2cc_nics_parse(nics, &sel);
	if (ret) {
		r2cc_log(ctx, R2CC_LOG_ERROR, "bad NIC list '%s'", nics);
		goto err;
	}
	ret = r2cc_fabric_discover(ctx, &sel);
	if (ret)
		goto err_fabric;
	ret = r2cc_notify_open(ctx);
	if (ret)
		goto err_fabric;
	ret = r2cc_obj_add(ctx, R2CC_OBJ_CTX);
	if (ret)
		goto err_notify;
	*out = ctx;
	return 0;

err_notify:
	r2cc_notify_close(ctx);
err_fabric:
	r2cc_fabric_close(ctx);
err:
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	return ret;
}

R2CC_EXPORT void r2cc_ctx_destroy(struct r2cc_ctx *ctx)
{
	if (!r2cc_obj_ok(ctx, R2CC_OBJ_CTX))
		return;
	r2cc_obj_del(ctx);
	/* Connections left open go with it; their requests are freed. */
	ctx_lock(ctx);
	while (ctx->conns)
		conn_close_locked(ctx->conns);
	ctx_unlock(ctx);
	r2cc_notify_close(ctx);
	r2cc_fabric_close(ctx);
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
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
	return ctx->source;
}
