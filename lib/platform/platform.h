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

int fabric_discover(struct r2cc_ctx *ctx, const struct r2cc_nic_sel *sel);
void fabric_close(struct r2cc_ctx *ctx);
int notify_open(struct r2cc_ctx *ctx);
void notify_close(struct r2cc_ctx *ctx);
/*
 * Next NIC change from the source itself: 1 with @ev, 0 none, -errno.  The
 * caller hands it to the transport (engine_nic_event), then keeps it
 * for the application (notify_keep).
 */
int notify_poll(struct r2cc_ctx *ctx, struct r2cc_nic_event *ev);
void notify_keep(struct r2cc_ctx *ctx, const struct r2cc_nic_event *ev);
/*
 * Without r2cc.ko, the NICs' own error counters (health.c): opened with
 * the verbs source; health_poll() is 1 with @ev when a port's verdict
 * (degraded or recovered) changed, else 0.
 */
void health_open(struct r2cc_ctx *ctx);
void health_close(struct r2cc_ctx *ctx);
int health_poll(struct r2cc_ctx *ctx, struct r2cc_nic_event *ev);
uint64_t clock_now_ns(void);

#endif
