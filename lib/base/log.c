// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/* Logging through the application's callback. */
#include <stdarg.h>
#include <stdio.h>

#include "base/base.h"

void log_msg(const struct r2cc_ctx *ctx, enum r2cc_log_level level,
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
