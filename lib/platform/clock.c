// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The library's clock: monotonic nanoseconds.  Every deadline, stall
 * bound and event time is read from it, so the protocol simulator, which
 * replaces this layer, runs the library in its own virtual time.
 */
#include <stdint.h>
#include <time.h>

#include "platform/platform.h"

uint64_t clock_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
