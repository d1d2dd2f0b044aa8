/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libr2cc: fault-tolerant multi-rail RDMA transport.  Public API.
 *
 * Conventions (all of the library follows them): every function is prefixed
 * r2cc_, objects are opaque, errors are returned as negative errno values,
 * and nothing is printed unless the application installs a log callback.
 */
#ifndef R2CC_R2CC_H
#define R2CC_R2CC_H

#ifdef __cplusplus
extern "C" {
#endif

#define R2CC_VERSION_MAJOR 0
#define R2CC_VERSION_MINOR 1
#define R2CC_VERSION_PATCH 0

/* The library's version as "MAJOR.MINOR.PATCH"; never NULL. */
const char *r2cc_version(void);

/*
 * Check that the library loaded at run time is compatible with the header
 * the caller was built against.  Returns 0, or -EPROTO if the major version
 * differs or the library is older than the header's minor version.
 */
int r2cc_check_version(unsigned int major, unsigned int minor);

#ifdef __cplusplus
}
#endif

#endif /* R2CC_R2CC_H */
