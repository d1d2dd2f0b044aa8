// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Multi-registration: a buffer is registered once per device in use (one
 * MR per protection domain), before any failure, so a failover never has
 * to register memory or exchange keys.
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "xport/cuda.h"
#include "xport/mr.h"

/* Chunks are RDMA writes: nothing ever reads a peer's memory. */
#define MR_ACCESS (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE)

static int mr_new(struct r2cc_ctx *ctx, void *addr, size_t len,
		  uint32_t flags, struct r2cc_mr **out)
{
	struct r2cc_mr *mr;

	if (!out)
		return -EINVAL;
	*out = NULL;
	if (!ctx || !addr || !len || flags & ~R2CC_MR_CUDA)
		return -EINVAL;
	if (!handle_ok(ctx, R2CC_OBJ_CTX))
		return -EBADF;
	if ((uintptr_t)addr + len < (uintptr_t)addr)
		return -EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	mr->ctx = ctx;
	mr->addr = (uintptr_t)addr;
	mr->len = len;
	*out = mr;
	return 0;
}

static void mr_release(struct r2cc_mr *mr)
{
	int d;

	handle_del(mr);
	if (mr->counted)
		__atomic_fetch_sub(&mr->ctx->nmrs, 1, __ATOMIC_RELAXED);
	for (d = 0; d < mr->ctx->ndevs; d++)
		if (mr->mrs[d])
			ibv_dereg_mr(mr->mrs[d]);
	free(mr);
}

/*
 * One MR per device: from the DMA-BUF @fd at @off when @fd >= 0, else
 * plain memory; with @fallback, plain memory also where the DMA-BUF is
 * refused (nvidia-peermem).  Returns 0, or the first refusal as -errno.
 */
static int mr_reg_each(struct r2cc_ctx *ctx, struct r2cc_mr *mr, void *addr,
		       size_t len, int fd, uint64_t off, bool fallback)
{
	int d, ret = 0;

	for (d = 0; d < ctx->ndevs; d++) {
		if (fd >= 0) {
			errno = 0;
			mr->mrs[d] = ibv_reg_dmabuf_mr(ctx->pds[d], off, len,
						       (uintptr_t)addr, fd,
						       MR_ACCESS);
			/* rxe and older drivers have no DMA-BUF support. */
			ret = errno && errno != ENOSYS &&
			      errno != EPROTONOSUPPORT ? -errno : -EOPNOTSUPP;
		}
		if (!mr->mrs[d] && (fd < 0 || fallback)) {
			mr->mrs[d] = ibv_reg_mr(ctx->pds[d], addr, len,
						MR_ACCESS);
			ret = errno ? -errno : fallback ? -EOPNOTSUPP : -ENOMEM;
		}
		if (!mr->mrs[d]) {
			log_msg(ctx, R2CC_LOG_ERROR,
				"%s: cannot register %zu bytes%s: %d",
				ibv_get_device_name(ctx->devs[d]->device), len,
				fd >= 0 ? " (DMA-BUF)" : "", ret);
			return ret;
		}
	}
	return 0;
}

/* Make @ret the outcome: the region is recorded, or released. */
static int mr_finish(struct r2cc_mr **out, int ret)
{
	if (!ret)
		ret = handle_add(*out, R2CC_OBJ_MR);
	if (!ret) {
		/* The context stays while a region of it does. */
		(*out)->counted = true;
		__atomic_fetch_add(&(*out)->ctx->nmrs, 1, __ATOMIC_RELAXED);
	}
	if (ret) {
		mr_release(*out);
		*out = NULL;
	}
	return ret;
}

/* GPU memory on every device: DMA-BUF first, nvidia-peermem second. */
static int mr_reg_cuda(struct r2cc_ctx *ctx, struct r2cc_mr *mr, void *addr,
		       size_t len)
{
	bool peermem = cuda_peermem();
	uint64_t off = 0;
	int fd = -1, ret;

	ret = cuda_dmabuf(ctx, addr, len, &fd, &off);
	if (ret && !peermem)
		return ret;
	ret = mr_reg_each(ctx, mr, addr, len, fd, off, peermem);
	if (fd >= 0)
		close(fd);	/* the MRs hold their own references */
	return ret;
}

R2CC_EXPORT int r2cc_mr_reg(struct r2cc_ctx *ctx, void *addr, size_t len,
			    uint32_t flags, struct r2cc_mr **out)
{
	int ret;

	ret = mr_new(ctx, addr, len, flags, out);
	if (ret)
		return ret;
	if (flags & R2CC_MR_CUDA) {
		(*out)->device = true;
		return mr_finish(out, mr_reg_cuda(ctx, *out, addr, len));
	}
	return mr_finish(out, mr_reg_each(ctx, *out, addr, len, -1, 0, false));
}

R2CC_EXPORT int r2cc_mr_reg_dmabuf(struct r2cc_ctx *ctx, void *addr,
				   size_t len, uint64_t offset, int fd,
				   uint32_t flags, struct r2cc_mr **out)
{
	int ret;

	if (fd < 0 || flags) {
		if (out)
			*out = NULL;
		return -EINVAL;
	}
	ret = mr_new(ctx, addr, len, flags, out);
	if (ret)
		return ret;
	(*out)->device = true;	/* a DMA-BUF: device memory, as a rule */
	return mr_finish(out, mr_reg_each(ctx, *out, addr, len, fd, offset,
					  false));
}

R2CC_EXPORT int r2cc_mr_dereg(struct r2cc_mr *mr)
{
	struct r2cc_ctx *ctx;
	int busy;

	if (!mr)
		return -EINVAL;
	if (!handle_ok(mr, R2CC_OBJ_MR))
		return -EBADF;
	ctx = mr->ctx;
	ctx_lock(ctx);
	busy = mr->inflight;
	if (!busy)
		handle_del(mr);	/* no request can take it from here on */
	ctx_unlock(ctx);
	if (busy)
		return -EBUSY;
	mr_release(mr);
	return 0;
}

/* 1 if [@buf, @buf + @len) lies inside @mr. */
int mr_covers(const struct r2cc_mr *mr, const void *buf, size_t len)
{
	uintptr_t b = (uintptr_t)buf;

	return b >= mr->addr && b - mr->addr <= mr->len &&
	       len <= mr->len - (b - mr->addr);
}
