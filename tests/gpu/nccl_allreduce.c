// SPDX-License-Identifier: GPL-2.0-only
/*
 * A checked ncclAllReduce (sum, float) on GPU 0, as one of WORLD_SIZE
 * processes: the GPU check (scripts/gpu-check.sh) runs it to see NCCL load
 * libnccl-net-r2cc.so and, with two ranks on one GPU told apart by
 * NCCL_HOSTID, carry the allreduce over it.  Not part of `make all`: CI
 * has no GPU.
 *
 *   RANK=r WORLD_SIZE=n NCCL_ID_FILE=path nccl_allreduce
 *
 * Built by the GPU check, or by hand:
 *   gcc -O2 -Wall -Wextra -Werror -I/usr/local/cuda/include \
 *       -o nccl_allreduce tests/gpu/nccl_allreduce.c \
 *       -L/usr/local/cuda/lib64 -lnccl -lcudart
 *
 * Rank 0 writes the ncclUniqueId to NCCL_ID_FILE (a temporary file
 * renamed into place, so a reader never sees half of it); the others poll
 * for it (NCCL_ID_WAIT_S seconds, default 60).  With WORLD_SIZE=1 no file
 * is needed.  Each rank fills a 64 MiB cudaMalloc buffer with small
 * integers from a per-rank pattern (so that float sums are exact), and
 * for every size from 4 B to MAX_BYTES (default 64 MiB), doubling, runs
 * ITERS (default 5) out-of-place allreduces after one warm-up (waiting
 * for each while watching the communicator's asynchronous error), copies
 * the result back after each and checks every element, and that the 1024
 * elements after the last one were left alone.  Prints "allreduce SIZE
 * ok TIME_US" (the mean time of one allreduce) per size, then
 * "nccl_allreduce: PASS" (exit 0) or "nccl_allreduce: FAIL" (exit 1).
 * TIMEOUT_S (default 600, 0 none) bounds the whole run with alarm(): a
 * hung collective ends the process instead of the machine's time.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nccl.h>

#define BUF_BYTES	(64ul << 20)
#define GUARD		1024		/* elements checked past the end */

static int rank, nranks;

static void say(const char *fmt, ...)
{
	va_list ap;

	printf("[rank %d] ", rank);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

#define CUDA(call)							\
	do {								\
		cudaError_t e_ = (call);				\
		if (e_ != cudaSuccess) {				\
			say("%s: %s (%s)", #call,			\
			    cudaGetErrorString(e_), cudaGetErrorName(e_)); \
			goto fail;					\
		}							\
	} while (0)

#define NCCL(call)							\
	do {								\
		ncclResult_t r_ = (call);				\
		if (r_ != ncclSuccess) {				\
			say("%s: %s (%d): %s", #call,			\
			    ncclGetErrorString(r_), (int)r_,		\
			    ncclGetLastError(NULL));			\
			goto fail;					\
		}							\
	} while (0)

static void on_alarm(int sig)
{
	static const char msg[] =
		"nccl_allreduce: TIMEOUT_S passed\nnccl_allreduce: FAIL\n";
	ssize_t n;

	(void)sig;
	n = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	(void)n;
	_exit(1);
}

static long env_long(const char *name, long dflt, long lo, long hi)
{
	const char *v = getenv(name);
	char *end;
	long x;

	if (!v || !*v)
		return dflt;
	errno = 0;
	x = strtol(v, &end, 0);
	if (errno || *end || x < lo || x > hi) {
		fprintf(stderr, "nccl_allreduce: %s=%s: not a number from %ld to %ld\n",
			name, v, lo, hi);
		exit(2);
	}
	return x;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* Rank @r's element @i: 1..64, so that a sum over many ranks stays exact. */
static unsigned int pattern(int r, size_t i)
{
	return (unsigned int)((i * 7 + (size_t)r * 13 + (i >> 12)) % 64) + 1;
}

static unsigned int expected(size_t i)
{
	unsigned int s = 0;
	int r;

	for (r = 0; r < nranks; r++)
		s += pattern(r, i);
	return s;
}

static int write_id(const char *path, const ncclUniqueId *id)
{
	char tmp[4096];
	int fd, n = snprintf(tmp, sizeof(tmp), "%s.tmp.%d", path, (int)getpid());

	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, id, sizeof(*id)) != (ssize_t)sizeof(*id) || fsync(fd)) {
		n = errno ? -errno : -EIO;
		close(fd);
		unlink(tmp);
		return n;
	}
	close(fd);
	if (rename(tmp, path)) {
		n = -errno;
		unlink(tmp);
		return n;
	}
	return 0;
}

static int read_id(const char *path, ncclUniqueId *id, long wait_s)
{
	double end = now_us() + (double)wait_s * 1e6;
	int fd;

	for (;;) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = read(fd, id, sizeof(*id));

			close(fd);
			if (n == (ssize_t)sizeof(*id))
				return 0;
		} else if (errno != ENOENT) {
			return -errno;
		}
		if (now_us() > end)
			return -ETIMEDOUT;
		usleep(50 * 1000);
	}
}

/*
 * Wait for @stream's work, watching @comm for an asynchronous error (a
 * failed connection is one: the kernel would wait for data forever).
 */
static int wait_stream(ncclComm_t comm, cudaStream_t stream)
{
	ncclResult_t r, ar;
	cudaError_t e;

	for (;;) {
		e = cudaStreamQuery(stream);
		if (e == cudaSuccess)
			return 0;
		if (e != cudaErrorNotReady) {
			say("cudaStreamQuery: %s (%s)", cudaGetErrorString(e),
			    cudaGetErrorName(e));
			return -1;
		}
		r = ncclCommGetAsyncError(comm, &ar);
		if (r != ncclSuccess || ar != ncclSuccess) {
			say("ncclCommGetAsyncError: %s: %s",
			    ncclGetErrorString(r != ncclSuccess ? r : ar),
			    ncclGetLastError(comm));
			return -1;
		}
		usleep(20);
	}
}

int main(void)
{
	size_t nelem = BUF_BYTES / sizeof(float), bytes, count, i;
	float *host = NULL, *dsend = NULL, *drecv = NULL;
	const char *id_file = getenv("NCCL_ID_FILE");
	long iters, max_bytes, wait_s, timeout_s;
	struct cudaDeviceProp prop;
	ncclComm_t comm = NULL;
	cudaStream_t stream = NULL;
	int ndev = 0, ver = 0, ret, it, ok = 1;
	ncclUniqueId id;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rank = (int)env_long("RANK", 0, 0, 1 << 20);
	nranks = (int)env_long("WORLD_SIZE", 1, 1, 1 << 20);
	iters = env_long("ITERS", 5, 1, 1000);
	max_bytes = env_long("MAX_BYTES", (long)BUF_BYTES, 4, (long)BUF_BYTES);
	wait_s = env_long("NCCL_ID_WAIT_S", 60, 1, 3600);
	timeout_s = env_long("TIMEOUT_S", 600, 0, 86400);
	if (rank >= nranks) {
		fprintf(stderr, "nccl_allreduce: RANK %d not below WORLD_SIZE %d\n",
			rank, nranks);
		return 2;
	}
	if (nranks > 1 && (!id_file || !*id_file)) {
		fprintf(stderr, "nccl_allreduce: WORLD_SIZE %d needs NCCL_ID_FILE\n",
			nranks);
		return 2;
	}
	if (timeout_s) {
		signal(SIGALRM, on_alarm);
		alarm((unsigned int)timeout_s);
	}

	NCCL(ncclGetVersion(&ver));
	say("rank %d of %d, NCCL %d.%d.%d (header %d.%d.%d)", rank, nranks,
	    ver / 10000, ver / 100 % 100, ver % 100,
	    NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH);
	CUDA(cudaGetDeviceCount(&ndev));
	CUDA(cudaSetDevice(0));
	CUDA(cudaGetDeviceProperties(&prop, 0));
	say("GPU 0 of %d: %s, %zu MiB, PCI %04x:%02x:%02x", ndev, prop.name,
	    prop.totalGlobalMem >> 20, prop.pciDomainID, prop.pciBusID,
	    prop.pciDeviceID);

	host = malloc(BUF_BYTES);
	if (!host) {
		say("malloc %lu: %s", BUF_BYTES, strerror(errno));
		goto fail;
	}
	CUDA(cudaMalloc((void **)&dsend, BUF_BYTES));
	CUDA(cudaMalloc((void **)&drecv, BUF_BYTES));
	CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	for (i = 0; i < nelem; i++)
		host[i] = (float)pattern(rank, i);
	CUDA(cudaMemcpy(dsend, host, BUF_BYTES, cudaMemcpyHostToDevice));

	if (rank == 0) {
		NCCL(ncclGetUniqueId(&id));
		if (nranks > 1) {
			ret = write_id(id_file, &id);
			if (ret) {
				say("writing %s: %s", id_file, strerror(-ret));
				goto fail;
			}
		}
	} else {
		ret = read_id(id_file, &id, wait_s);
		if (ret) {
			say("reading %s: %s", id_file, strerror(-ret));
			goto fail;
		}
	}
	NCCL(ncclCommInitRank(&comm, nranks, id, rank));
	say("communicator up");

	for (bytes = 4; bytes <= (size_t)max_bytes && ok; bytes *= 2) {
		double t0, total = 0;
		size_t bad = 0, first = 0;
		float got = 0;

		count = bytes / sizeof(float);
		for (it = 0; it <= iters && !bad; it++) {
			/* 0xff bytes are a NaN: no element passes by chance. */
			CUDA(cudaMemsetAsync(drecv, 0xff, BUF_BYTES, stream));
			CUDA(cudaStreamSynchronize(stream));
			t0 = now_us();
			NCCL(ncclAllReduce(dsend, drecv, count, ncclFloat,
					   ncclSum, comm, stream));
			if (wait_stream(comm, stream))
				goto fail;
			if (it)		/* the first is the warm-up */
				total += now_us() - t0;
			CUDA(cudaMemcpy(host, drecv, (count + GUARD <= nelem ?
					count + GUARD : nelem) * sizeof(float),
					cudaMemcpyDeviceToHost));
			for (i = 0; i < count; i++)
				if (host[i] != (float)expected(i) && !bad++) {
					first = i;
					got = host[i];
				}
			for (i = count; i < count + GUARD && i < nelem; i++)
				if (host[i] == host[i] && !bad++) {  /* not NaN */
					first = i;
					got = host[i];
				}
		}
		if (bad && first < count) {
			say("allreduce %zu FAIL: %zu bad elements, first %zu: %g, want %u",
			    bytes, bad, first, (double)got, expected(first));
			ok = 0;
		} else if (bad) {
			say("allreduce %zu FAIL: %zu elements past the end written, first %zu: %g",
			    bytes, bad, first, (double)got);
			ok = 0;
		} else {
			printf("allreduce %zu ok %.1f\n", bytes,
			       total / (double)iters);
		}
	}
	NCCL(ncclCommDestroy(comm));
	comm = NULL;
	cudaStreamDestroy(stream);
	cudaFree(dsend);
	cudaFree(drecv);
	free(host);
	if (!ok)
		goto fail_quiet;
	printf("nccl_allreduce: PASS\n");
	return 0;
fail:
	if (comm)
		ncclCommAbort(comm);
fail_quiet:
	printf("nccl_allreduce: FAIL\n");
	return 1;
}
