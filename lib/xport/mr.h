/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/* Multi-registration: a buffer registered on every device (mr.c). */
#ifndef R2CC_LIB_MR_H
#define R2CC_LIB_MR_H

#include <infiniband/verbs.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

struct r2cc_mr {
	struct r2cc_ctx *ctx;
	uintptr_t addr;
	size_t len;
	int inflight;			/* operations using it */
	bool device;			/* GPU memory */
	bool counted;			/* in ctx->nmrs */
	struct ibv_mr *mrs[R2CC_MAX_NICS];	/* per device */
};

int r2cc_mr_covers(const struct r2cc_mr *mr, const void *buf, size_t len);

#endif
