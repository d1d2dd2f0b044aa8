/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/* Library-private definitions; never installed. */
#ifndef R2CC_LIB_INTERNAL_H
#define R2CC_LIB_INTERNAL_H

/* Everything is hidden (-fvisibility=hidden) unless marked for export. */
#define R2CC_EXPORT __attribute__((visibility("default")))

#endif
