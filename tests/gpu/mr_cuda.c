// SPDX-License-Identifier: GPL-2.0-only
/*
 * GPU memory through libr2cc: a context with the default options
 * (r2cc_ctx_create(NULL, ...): every NIC, silent) registers cudaMalloc
 * memory with R2CC_MR_CUDA, and for comparison host memory.  Run by
 * scripts/gpu-check.sh on a machine with a GPU; not part of `make all`.
 *
 *   mr_cuda [-v]
 *
 * Built by the GPU check (after `make lib`), or by hand:
 *   gcc -O2 -Wall -Wextra -Werror -I/usr/local/cuda/include -Iinclude \
 *       -o mr_cuda tests/gpu/mr_cuda.c -Lbuild/lib -lr2cc \
 *       -Wl,-rpath,build/lib -L/usr/local/cuda/lib64 -lcudart -ldl
 *
 * -v gives the context a logger on stderr (libr2cc's reasons for a
 * refusal); without it the context is created with NULL options.
 * Prints what the machine offers (GPUDirect RDMA, DMA-BUF, nvidia-peermem)
 * and one line per registration: "mr_reg KIND LEN: 0" or the errno name.
 * Exit 0: the CUDA registrations succeeded; 1: one failed; 3: no
 * context (no RDMA device: ENODEV); 2: CUDA or usage error.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include <r2cc/r2cc.h>

static const char *errname(int err)
{
	static char buf[24];

	switch (err < 0 ? -err : err) {
	case 0: return "0";
	case EPERM: return "EPERM";
	case ENOENT: return "ENOENT";
	case EIO: return "EIO";
	case EBADF: return "EBADF";
	case E2BIG: return "E2BIG";
	case ENOMEM: return "ENOMEM";
	case EACCES: return "EACCES";
	case EFAULT: return "EFAULT";
	case EBUSY: return "EBUSY";
	case ENODEV: return "ENODEV";
	case EINVAL: return "EINVAL";
	case ENOSYS: return "ENOSYS";
	case EPROTO: return "EPROTO";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case ENXIO: return "ENXIO";
	case ERANGE: return "ERANGE";
	default:
		snprintf(buf, sizeof(buf), "errno %d", err < 0 ? -err : err);
		return buf;
	}
}

static void log_stderr(void *arg, enum r2cc_log_level level, const char *msg)
{
	static const char *const names[] = { "ERROR", "WARN", "INFO", "DEBUG" };

	(void)arg;
	fprintf(stderr, "libr2cc %s: %s\n",
		(unsigned int)level < 4 ? names[level] : "?", msg);
}

/* The driver's DMA-BUF attribute, through libcuda.so.1 as libr2cc does. */
static int dmabuf_supported(void)
{
	typedef CUresult (*get_fn)(CUdevice *, int);
	typedef CUresult (*attr_fn)(int *, CUdevice_attribute, CUdevice);
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	get_fn get;
	attr_fn attr;
	CUdevice dev;
	int v = -1;

	if (!lib)
		return -1;
	get = (get_fn)dlsym(lib, "cuDeviceGet");
	attr = (attr_fn)dlsym(lib, "cuDeviceGetAttribute");
	if (get && attr && get(&dev, 0) == CUDA_SUCCESS &&
	    attr(&v, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, dev) != CUDA_SUCCESS)
		v = -1;
	return v;
}

static int reg(struct r2cc_ctx *ctx, const char *kind, void *p, size_t len,
	       uint32_t flags)
{
	struct r2cc_mr *mr = NULL;
	int ret = r2cc_mr_reg(ctx, p, len, flags, &mr);

	printf("mr_reg %s %zu: %s\n", kind, len, errname(ret));
	if (!ret) {
		int d = r2cc_mr_dereg(mr);

		if (d)
			printf("mr_dereg %s: %s\n", kind, errname(d));
	}
	fflush(stdout);
	return ret;
}

int main(int argc, char **argv)
{
	struct r2cc_ctx_opts o = { .size = sizeof(o), .log = log_stderr,
				   .log_level = R2CC_LOG_DEBUG };
	size_t len = 64ul << 20, hlen = 1ul << 20;
	struct r2cc_ctx *ctx = NULL;
	int verbose = 0, ret, gdr = -1, i, n, bad = 0;
	struct cudaDeviceProp prop;
	cudaError_t ce;
	char *dev = NULL;
	void *host;

	if (argc == 2 && !strcmp(argv[1], "-v")) {
		verbose = 1;
	} else if (argc != 1) {
		fprintf(stderr, "usage: %s [-v]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("libr2cc %s\n", r2cc_version());
	ce = cudaSetDevice(0);
	if (ce == cudaSuccess)
		ce = cudaGetDeviceProperties(&prop, 0);
	if (ce == cudaSuccess)
		ce = cudaMalloc((void **)&dev, len);
	if (ce != cudaSuccess) {
		printf("CUDA: %s (%s)\nmr_cuda: FAIL\n", cudaGetErrorString(ce),
		       cudaGetErrorName(ce));
		return 2;
	}
	cudaDeviceGetAttribute(&gdr, cudaDevAttrGPUDirectRDMASupported, 0);
	printf("GPU 0: %s; GPUDirect RDMA %s, DMA-BUF %s, nvidia-peermem %s\n",
	       prop.name, gdr == 1 ? "yes" : gdr == 0 ? "no" : "unknown",
	       (n = dmabuf_supported()) == 1 ? "yes" : n == 0 ? "no" : "unknown",
	       access("/sys/module/nvidia_peermem", F_OK) ? "not loaded" :
							    "loaded");

	ret = r2cc_ctx_create(verbose ? &o : NULL, &ctx);
	printf("r2cc_ctx_create: %s\n", errname(ret));
	if (ret) {
		cudaFree(dev);
		printf("mr_cuda: SKIP (no libr2cc context)\n");
		return 3;
	}
	n = r2cc_nic_count(ctx);
	for (i = 0; i < n; i++) {
		struct r2cc_nic_info in = { .size = sizeof(in) };

		if (!r2cc_nic_info(ctx, i, &in))
			printf("nic %d: %s:%u %s%s\n", i, in.dev_name, in.port,
			       in.netdev[0] ? "netdev " : "InfiniBand",
			       in.netdev);
	}
	host = malloc(hlen);
	if (host) {
		memset(host, 0x5a, hlen);
		reg(ctx, "host", host, hlen, 0);
	}
	bad |= reg(ctx, "cuda", dev, len, R2CC_MR_CUDA) != 0;
	/* Not page-aligned at either end: the library rounds to pages. */
	bad |= reg(ctx, "cuda+100", dev + 100, 1000, R2CC_MR_CUDA) != 0;
	ret = r2cc_ctx_destroy(ctx);
	if (ret)
		printf("r2cc_ctx_destroy: %s\n", errname(ret));
	free(host);
	cudaFree(dev);
	printf("mr_cuda: %s\n", bad ? "FAIL" : "PASS");
	return bad;
}
