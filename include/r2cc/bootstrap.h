/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libr2cc bootstrap: a TCP rendezvous that works under any launcher.
 *
 * Rank 0 listens at the root address; every rank connects to it and the
 * root relays what each rank contributes (allgather), which is how ranks
 * swap r2cc_handle values before r2cc_connect().  Same conventions as
 * <r2cc/r2cc.h>: negative errno returns, option struct with a size field
 * (its rules for sizes from an older or newer header apply: a smaller
 * size reads the fields past it as zero, a larger one needs every byte
 * past ours zero, else -E2BIG; under sizeof(size_t): -EINVAL).
 */
#ifndef R2CC_BOOTSTRAP_H
#define R2CC_BOOTSTRAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct r2cc_boot_opts {
	size_t size;		/* sizeof(struct r2cc_boot_opts), see the top */
	/*
	 * "host:port" of rank 0.  NULL: $R2CC_ROOT, else
	 * $MASTER_ADDR:$MASTER_PORT (torchrun).
	 */
	const char *root;
	int32_t rank;		/* -1: $R2CC_RANK, else $RANK */
	int32_t world_size;	/* 0: $R2CC_WORLD_SIZE, else $WORLD_SIZE */
	uint32_t timeout_ms;	/* for every step; 0: $R2CC_BOOT_TIMEOUT_MS, else 60000 */
	uint32_t reserved;	/* must be 0 */
};

struct r2cc_boot;

/*
 * Join the rendezvous; returns once every rank has joined.  Returns 0 and
 * sets *@boot, or -EINVAL (bad or missing options), -E2BIG (@opts from a
 * newer header, with a field this library lacks set), -ETIMEDOUT (a root
 * that never listened, ranks that never came), -EPROTO (a peer that
 * speaks another version of the protocol, another world size, a rank
 * twice), -ECONNRESET (the root went away), -EADDRINUSE (rank 0: the port
 * is taken), -ENOMEM, -EMFILE.  See Documentation/bootstrap.rst.
 */
int r2cc_boot_init(const struct r2cc_boot_opts *opts, struct r2cc_boot **boot);
int r2cc_boot_rank(const struct r2cc_boot *boot);
int r2cc_boot_size(const struct r2cc_boot *boot);

/*
 * Every rank gives @len bytes at @mine (the same @len everywhere, at most
 * 64 KiB); @all receives size x @len bytes, rank r's at r x @len (@mine
 * may be there).  Returns 0, -EINVAL, -EPROTO (another @len somewhere),
 * -ETIMEDOUT, -ECONNRESET or -EPIPE (a rank went away).  An error sticks:
 * every later call returns it.  barrier() is an allgather of 0 bytes.
 */
int r2cc_boot_allgather(struct r2cc_boot *boot, const void *mine, size_t len,
			void *all);
int r2cc_boot_barrier(struct r2cc_boot *boot);
void r2cc_boot_destroy(struct r2cc_boot *boot);

#ifdef __cplusplus
}
#endif

#endif /* R2CC_BOOTSTRAP_H */
