/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Layer 4, connections (conn.c): listen, connect, accept, the handshake
 * that creates and connects one RC QP per rail, progress of a context's
 * connections, stats and close.  Above it, the API (xfer.c: isend, irecv,
 * test).
 */
#ifndef R2CC_LIB_CONN_H
#define R2CC_LIB_CONN_H

#include <stdbool.h>
#include <stdint.h>

#include "xport/types.h"

/* A connection over the control socket @fd (the simulator makes its own). */
struct r2cc_conn *conn_new(struct r2cc_ctx *ctx, int fd, bool sender);
int conn_handshake(struct r2cc_conn *c);
int conn_progress(struct r2cc_conn *c);
/* Progress every connection of @ctx (lock held). */
void conn_progress_all(struct r2cc_ctx *ctx);
/* Close @c (lock held). */
void conn_close_locked(struct r2cc_conn *c);

#endif
