// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * GPU memory.  CUDA's driver API is reached through dlopen("libcuda.so.1")
 * so that libr2cc neither links against CUDA nor needs it at run time;
 * the types come from <cuda.h> when the toolkit is installed at build
 * time, and without it R2CC_MR_CUDA is refused with -EOPNOTSUPP.
 *
 * A device range is exported as a DMA-BUF (cuMemGetHandleForAddressRange)
 * and registered with ibv_reg_dmabuf_mr(); where that fails and the
 * nvidia-peermem module is loaded, ibv_reg_mr() on the device pointer is
 * the fallback.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "xport/cuda.h"

#if defined(__has_include)
#if __has_include(<cuda.h>)
#include <cuda.h>
#define R2CC_HAVE_CUDA_H 1
#endif
#endif

#ifdef R2CC_HAVE_CUDA_H
typedef CUresult (*get_handle_fn)(void *handle, CUdeviceptr dptr,
				  size_t size, CUmemRangeHandleType type,
				  unsigned long long flags);

static pthread_once_t once = PTHREAD_ONCE_INIT;
static get_handle_fn get_handle;

static void cuda_load(void)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (lib)
		get_handle = (get_handle_fn)dlsym(lib,
					"cuMemGetHandleForAddressRange");
}

/*
 * Export the pages holding [@addr, @addr + @len) as a DMA-BUF: *@fd, with
 * @addr at *@offset into it.  -ENODEV without a CUDA driver.
 */
int cuda_dmabuf(struct r2cc_ctx *ctx, void *addr, size_t len, int *fd,
		uint64_t *offset)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t base = (uintptr_t)addr & ~(page - 1);
	size_t size = ((uintptr_t)addr + len - base + page - 1) & ~(page - 1);
	CUresult res;

	pthread_once(&once, cuda_load);
	if (!get_handle) {
		log_msg(ctx, R2CC_LOG_ERROR,
			"GPU memory: no CUDA driver (libcuda.so.1)");
		return -ENODEV;
	}
	res = get_handle(fd, (CUdeviceptr)base, size,
			 CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
	if (res != CUDA_SUCCESS) {
		log_msg(ctx, R2CC_LOG_ERROR,
			"GPU memory: cuMemGetHandleForAddressRange: %d",
			(int)res);
		return res == CUDA_ERROR_INVALID_VALUE ? -EINVAL : -EOPNOTSUPP;
	}
	*offset = (uintptr_t)addr - base;
	return 0;
}
#else
int cuda_dmabuf(struct r2cc_ctx *ctx, void *addr, size_t len, int *fd,
		uint64_t *offset)
{
	(void)addr;
	(void)len;
	(void)fd;
	(void)offset;
	log_msg(ctx, R2CC_LOG_ERROR,
		"GPU memory: libr2cc was built without <cuda.h>");
	return -EOPNOTSUPP;
}
#endif

/* Whether nvidia-peermem lets ibv_reg_mr() take device pointers. */
bool cuda_peermem(void)
{
	return !access("/sys/module/nvidia_peermem", F_OK);
}
