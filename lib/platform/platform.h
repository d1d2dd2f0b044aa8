/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The platform layer (lib/platform): what the library learns from the
 * machine.  Fabric discovery (fabric.c: the NICs, through verbs), NIC
 * state changes (notify.c: r2cc.ko's state page and event queue, or
 * verbs' async events) and the clock.  The protocol simulator replaces
 * this layer whole (tests/xsim/env.c).
 */
#ifndef R2CC_LIB_PLATFORM_H
#define R2CC_LIB_PLATFORM_H

#include <stdint.h>

#include "base/base.h"

int r2cc_fabric_discover(struct r2cc_ctx *ctx, const struct r2cc_nic_sel *sel);
void r2cc_fabric_close(struct r2cc_ctx *ctx);
int r2cc_notify_open(struct r2cc_ctx *ctx);
void r2cc_notify_close(struct r2cc_ctx *ctx);
/*
 * Next NIC change from the source itself: 1 with @ev, 0 none, -errno.  The
 * caller hands it to the transport (r2cc_xport_nic_event), then keeps it
 * for the application (r2cc_notify_keep).
 */
int r2cc_notify_poll(struct r2cc_ctx *ctx, struct r2cc_nic_event *ev);
void r2cc_notify_keep(struct r2cc_ctx *ctx, const struct r2cc_nic_event *ev);
uint64_t r2cc_now_ns(void);

#endif
