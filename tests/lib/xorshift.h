/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Marsaglia's xorshift64 (shifts 13, 7, 17): the tests' reproducible
 * random numbers, the same sequence for the same seed on every machine
 * (a printed seed replays its run).  @s must not be 0.
 */
#ifndef R2CC_TEST_XORSHIFT_H
#define R2CC_TEST_XORSHIFT_H

#include <stdint.h>

static inline uint64_t xorshift64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif
