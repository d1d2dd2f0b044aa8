/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * What every fuzz target here uses: the libFuzzer entry point, a check
 * that aborts (so libFuzzer keeps the input), the input read as
 * little-endian integers (zeros once it runs out), and $FUZZ_TRACE.
 */
#ifndef R2CC_FUZZ_H
#define R2CC_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)							\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: check failed: %s\n",	\
				__FILE__, __LINE__, #cond);		\
			abort();					\
		}							\
	} while (0)

struct in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t take8(struct in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static inline uint16_t take16(struct in *in)
{
	uint16_t lo = take8(in);

	return lo | (uint16_t)take8(in) << 8;
}

static inline uint32_t take32(struct in *in)
{
	uint32_t lo = take16(in);

	return lo | (uint32_t)take16(in) << 16;
}

static inline uint64_t take64(struct in *in)
{
	uint64_t lo = take32(in);

	return lo | (uint64_t)take32(in) << 32;
}

/* $@name is set (looked up once, into *@cache, which starts at -1). */
static inline bool env_on(const char *name, int *cache)
{
	if (*cache < 0)
		*cache = !!getenv(name);
	return *cache;
}

/* $FUZZ_TRACE: what each step did, to see what a seed reaches. */
#define TRACE(...)							\
	do {								\
		static int on_ = -1;					\
									\
		if (env_on("FUZZ_TRACE", &on_))				\
			fprintf(stderr, "trace: " __VA_ARGS__);		\
	} while (0)

#endif
