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

static int r2cc_opts_check(const struct r2cc_ctx_opts *o)
{
	if (o->size != sizeof(*o))
		return -EINVAL;
	if (o->log_level < R2CC_LOG_ERROR || o->log_level > R2CC_LOG_DEBUG)
		return -EINVAL;
	if (o->flags & ~R2CC_CTX_NO_KMOD || o->reserved)
		return -EINVAL;
	return 0;
}

R2CC_EXPORT int r2cc_ctx_create(const struct r2cc_ctx_opts *opts,
				struct r2cc_ctx **out)
{
	struct r2cc_ctx_opts def = { .size = sizeof(def) };
	struct r2cc_nic_sel sel;
	struct r2cc_ctx *ctx;
	const char *nics;
	int ret;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!opts)
		opts = &def;
	ret = r2cc_opts_check(opts);
	if (ret)
		return ret;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->log = opts->log;
	ctx->log_arg = opts->log_arg;
	ctx->log_level = opts->log_level;
	ctx->flags = opts->flags;
	ctx->kmod_fd = -1;
	ctx->epoll_fd = -1;

	nics = opts->nics ? opts->nics : getenv("R2CC_NICS");
	ret = r2cc_nics_parse(nics, &sel);
	if (ret) {
		r2cc_log(ctx, R2CC_LOG_ERROR, "bad NIC list '%s'", nics);
		goto err;
	}
	ret = r2cc_fabric_discover(ctx, &sel);
	if (ret)
		goto err;
	ret = r2cc_notify_open(ctx);
	if (ret)
		goto err_fabric;
	*out = ctx;
	return 0;

err_fabric:
	r2cc_fabric_close(ctx);
err:
	free(ctx);
	return ret;
}

R2CC_EXPORT void r2cc_ctx_destroy(struct r2cc_ctx *ctx)
{
	if (!ctx)
		return;
	r2cc_notify_close(ctx);
	r2cc_fabric_close(ctx);
	free(ctx);
}

R2CC_EXPORT int r2cc_nic_count(const struct r2cc_ctx *ctx)
{
	return ctx ? ctx->nnics : -EINVAL;
}

R2CC_EXPORT int r2cc_nic_info(const struct r2cc_ctx *ctx, int i,
			      struct r2cc_nic_info *info)
{
	if (!ctx || !info || i < 0 || i >= ctx->nnics ||
	    info->size != sizeof(*info))
		return -EINVAL;
	*info = ctx->nics[i].info;
	return 0;
}

R2CC_EXPORT enum r2cc_notify_source
r2cc_notify_source(const struct r2cc_ctx *ctx)
{
	return ctx->source;
}
