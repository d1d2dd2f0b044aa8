/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
#ifndef R2CC_LIB_PROGRESS_H
#define R2CC_LIB_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "base/base.h"

/*
 * progress.c: the context's own thread, which makes a pass when nothing
 * else made one for R2CC_PROGRESS_MS.  progress_idle() is its test,
 * under the lock: a pass if none was made since the count @seen, which it
 * updates; true if it made one (the simulator calls it too).
 */
bool progress_idle(struct r2cc_ctx *ctx, uint64_t *seen);
int progress_start(struct r2cc_ctx *ctx);
void progress_stop(struct r2cc_ctx *ctx);

#endif
