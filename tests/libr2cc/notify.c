// SPDX-License-Identifier: GPL-2.0-only
/*
 * notify kmod|kmod-v0|verbs COUNT [TIMEOUT]: open a context with that notification
 * source, print "ready SOURCE", then one line per NIC change for COUNT
 * changes: "event NIC OLD NEW SOURCE INJECTED ACTIVE_NOW DEGRADED"
 * (ACTIVE_NOW is r2cc_nic_is_active() right after).  kmod-v0 passes the
 * event's size before @degraded existed, as a program built then would.
 * Exit 3 if TIMEOUT seconds (default 20) pass without one.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <r2cc/r2cc.h>

int main(int argc, char **argv)
{
	struct r2cc_ctx_opts o = { .size = sizeof(o) };
	struct r2cc_nic_event ev = { .size = sizeof(ev) };
	struct r2cc_ctx *ctx;
	int n, i, ret, timeout_ms = 20000;

	if (argc != 3 && argc != 4)
		return 2;
	if (argc == 4)
		timeout_ms = atoi(argv[3]) * 1000;
	if (!strcmp(argv[1], "verbs"))
		o.flags = R2CC_CTX_NO_KMOD;
	if (!strcmp(argv[1], "kmod-v0"))
		ev.size = offsetof(struct r2cc_nic_event, degraded);
	n = atoi(argv[2]);
	ret = r2cc_ctx_create(&o, &ctx);
	if (ret) {
		fprintf(stderr, "notify: r2cc_ctx_create: %d\n", ret);
		return 1;
	}
	printf("ready %s\n", r2cc_notify_source(ctx) == R2CC_NOTIFY_KMOD ?
	       "kmod" : "verbs");
	fflush(stdout);
	for (i = 0; i < n; i++) {
		ret = r2cc_next_event(ctx, &ev, timeout_ms);
		if (ret <= 0) {
			r2cc_ctx_destroy(ctx);
			return ret == 0 ? 3 : 1;
		}
		printf("event %d %u %u %u %u %d %u\n", ev.nic, ev.old_state,
		       ev.new_state, ev.source, ev.injected,
		       r2cc_nic_is_active(ctx, ev.nic), ev.degraded);
		fflush(stdout);
	}
	r2cc_ctx_destroy(ctx);
	return 0;
}
