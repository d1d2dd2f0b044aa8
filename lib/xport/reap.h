/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The reaper (reap.c): QPs and CQs destroyed in a thread of its own, so
 * that a slow destroy (rxe waits for its tasks) never holds up the
 * caller.  reap_inline: destroy at once (tests).
 */
#ifndef R2CC_LIB_REAP_H
#define R2CC_LIB_REAP_H

#include <stdbool.h>

#include "base/base.h"

struct ibv_qp;
struct ibv_cq;
extern bool reap_inline;
void reap_qp(const struct r2cc_ctx *ctx, struct ibv_qp *qp,
	     struct ibv_cq *cq);
/* Wait until everything handed over so far is destroyed. */
void reap_wait(const struct r2cc_ctx *ctx);

#endif
