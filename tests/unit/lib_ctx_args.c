// SPDX-License-Identifier: GPL-2.0-only
/*
 * libr2cc's context API rejects bad arguments with -EINVAL and, on a
 * machine without RDMA devices, fails with -ENODEV through the log
 * callback, printing nothing itself.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <r2cc/r2cc.h>

#include "tap.h"

static int logged;
static char last[512];

static void log_cb(void *arg, enum r2cc_log_level level, const char *msg)
{
	(void)arg;
	(void)level;
	logged++;
	snprintf(last, sizeof(last), "%s", msg);
}

int main(void)
{
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_nic_event ev = { .size = sizeof(ev) };
	struct r2cc_ctx *ctx = (struct r2cc_ctx *)&o;
	int ret;

	tap_plan(12);
	tap_ok(r2cc_ctx_create(&o, NULL) == -EINVAL, "NULL result: EINVAL");
	o.size = sizeof(o) - 1;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL && ctx == NULL,
	       "short opts size: EINVAL, *ctx cleared");
	o.size = sizeof(o) * 2;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL, "oversized opts: EINVAL");
	o.size = sizeof(o);
	o.flags = 0x80;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL, "unknown flag: EINVAL");
	o.flags = 0;
	o.reserved = 1;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL, "reserved != 0: EINVAL");
	o.reserved = 0;
	o.log_level = 9;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL, "log level 9: EINVAL");
	o.log_level = -1;
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL, "log level -1: EINVAL");
	o.log_level = R2CC_LOG_DEBUG;
	o.log = log_cb;
	o.nics = "bad,,list";
	tap_ok(r2cc_ctx_create(&o, &ctx) == -EINVAL && logged &&
	       strstr(last, "bad NIC list"), "bad NIC list: EINVAL, logged");
	o.nics = NULL;
	logged = 0;
	ret = r2cc_ctx_create(&o, &ctx);
	if (ret == 0) {
		tap_ok(1, "# SKIP this host has RDMA devices");
		r2cc_ctx_destroy(ctx);
	} else {
		tap_ok(ret == -ENODEV && logged, "no RDMA device: ENODEV (%s)",
		       last);
	}
	tap_ok(r2cc_nic_count(NULL) == -EINVAL, "nic_count(NULL): EINVAL");
	tap_ok(r2cc_next_event(NULL, &ev, 0) == -EINVAL,
	       "next_event(NULL): EINVAL");
	r2cc_ctx_destroy(NULL);
	tap_ok(r2cc_nic_is_active(NULL, 0) == -EINVAL,
	       "nic_is_active(NULL): EINVAL; destroy(NULL) is a no-op");
	return tap_done();
}
