/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * GPU memory (cuda.c): CUDA loaded at run time, for registering device
 * memory through a dma-buf, or through nvidia-peermem when it is loaded.
 */
#ifndef R2CC_LIB_CUDA_H
#define R2CC_LIB_CUDA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

int cuda_dmabuf(struct r2cc_ctx *ctx, void *addr, size_t len, int *fd,
		uint64_t *offset);
bool cuda_peermem(void);

#endif
