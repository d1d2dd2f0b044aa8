// SPDX-License-Identifier: GPL-2.0-only
/* libr2cc reports the version its header promises and rejects mismatches. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <r2cc/r2cc.h>

#include "tap.h"

int main(void)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", R2CC_VERSION_MAJOR,
		 R2CC_VERSION_MINOR, R2CC_VERSION_PATCH);

	tap_plan(6);
	tap_ok(r2cc_version() && !strcmp(r2cc_version(), want),
	       "r2cc_version() is \"%s\"", want);
	tap_ok(r2cc_check_version(R2CC_VERSION_MAJOR, R2CC_VERSION_MINOR) == 0,
	       "the header's own version is accepted");
	tap_ok(r2cc_check_version(R2CC_VERSION_MAJOR, 0) == 0,
	       "an older minor version is accepted");
	tap_ok(r2cc_check_version(R2CC_VERSION_MAJOR,
				  R2CC_VERSION_MINOR + 1) == -EPROTO,
	       "a newer minor version is -EPROTO");
	tap_ok(r2cc_check_version(R2CC_VERSION_MAJOR + 1, 0) == -EPROTO,
	       "another major version is -EPROTO");
	tap_ok(r2cc_check_version(~0u, ~0u) == -EPROTO,
	       "out-of-range versions are -EPROTO");
	return tap_done();
}
