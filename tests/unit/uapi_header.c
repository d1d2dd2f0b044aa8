// SPDX-License-Identifier: GPL-2.0-only
/*
 * The uapi header stands alone in userspace (only <linux/types.h>) and keeps
 * the names the module and tools rely on.
 */
#include <linux/r2cc.h>
#include <string.h>

#include "tap.h"

int main(void)
{
	tap_plan(2);
	tap_ok(!strcmp(R2CC_DEVICE_NAME, "r2cc"), "device is /dev/r2cc");
	tap_ok(!strcmp(R2CC_GENL_NAME, "r2cc") &&
	       !strcmp(R2CC_GENL_MCGRP_EVENTS, "events"),
	       "generic netlink family r2cc, group events");
	return tap_done();
}
