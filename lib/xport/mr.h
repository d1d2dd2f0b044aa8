/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/* Multi-registration: a buffer registered on every device (mr.c). */
#ifndef R2CC_LIB_MR_H
#define R2CC_LIB_MR_H

#include <stddef.h>

#include "xport/types.h"

int mr_covers(const struct r2cc_mr *mr, const void *buf, size_t len);

#endif
