/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Layer 1, the control channel (ctrl.c): framed messages over a
 * non-blocking TCP socket, buffered both ways.  It knows nothing above.
 */
#ifndef R2CC_LIB_CTRL_H
#define R2CC_LIB_CTRL_H

#include <stddef.h>
#include <stdint.h>

#include "xport/types.h"

void ctrl_init(struct ctrl *c, int fd);
void ctrl_close(struct ctrl *c);
/* Queue one message of @a then @b.  Returns bytes still queued, -errno. */
int ctrl_send(struct ctrl *c, uint16_t type, const void *a, size_t alen,
	      const void *b, size_t blen);
int ctrl_flush(struct ctrl *c);
/* 1 with a whole message in c->in (header first), 0 not yet, -errno. */
int ctrl_recv(struct ctrl *c);
void ctrl_consumed(struct ctrl *c);
int ctrl_addr(struct r2cc_ctx *ctx, void *sa, unsigned int *salen);
void ctrl_keepalive(int fd, uint32_t timeout_ms);

#endif
