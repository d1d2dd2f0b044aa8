/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The context's stats file for operators (publish.c, <r2cc/job.h>): made
 * with the context, rewritten from its progress path, removed with it.
 * Like the log, a sink every layer may write to; it reads the connections
 * and never changes them.
 */
#ifndef R2CC_LIB_PUBLISH_H
#define R2CC_LIB_PUBLISH_H

#include <stdint.h>

struct r2cc_ctx;
struct r2cc_conn;

void publish_open(struct r2cc_ctx *ctx);
void publish_close(struct r2cc_ctx *ctx);
/* Rewrite the file if it is due. */
void publish_due(struct r2cc_ctx *ctx);
void publish_conn_closed(struct r2cc_ctx *ctx, const struct r2cc_conn *c);

#endif
