// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
#include <errno.h>

#include <r2cc/r2cc.h>

#include "base/base.h"

#define STR_(x) #x
#define STR(x) STR_(x)

R2CC_EXPORT const char *r2cc_version(void)
{
	return STR(R2CC_VERSION_MAJOR) "." STR(R2CC_VERSION_MINOR) "."
	       STR(R2CC_VERSION_PATCH);
}

R2CC_EXPORT int r2cc_check_version(unsigned int major, unsigned int minor)
{
	if (major != R2CC_VERSION_MAJOR || minor > R2CC_VERSION_MINOR)
		return -EPROTO;
	return 0;
}
