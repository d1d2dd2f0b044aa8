/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Layer 3, the chunk scheduler and failover (msg.c, engine.c): messages and
 * requests, matching sends to announced receives, striping chunks over
 * the rails in proportion to bandwidth, completions, the stall detector,
 * settling a failed rail's chunks (fence reports, exact re-send), the TCP
 * fallback, and failing a connection (xfer_abort).  It drives the rails
 * (layer 2) and the control channel (layer 1); the connection (layer 4)
 * and the API (layer 5) call it.
 */
#ifndef R2CC_LIB_ENGINE_H
#define R2CC_LIB_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "xport/types.h"

/* The transport hears every NIC change. */
void r2cc_xport_nic_event(struct r2cc_ctx *ctx, const struct r2cc_nic_event *ev);
void xfer_progress(struct r2cc_conn *c);
/* Split each NIC's in-flight window among its rails; before a pass. */
void xfer_nic_shares(struct r2cc_ctx *ctx);
/* Fail the connection: its QPs destroyed first, then every request. */
void xfer_abort(struct r2cc_conn *c, int err, const char *why);
/* Queue a control message; one that cannot be queued fails it all. */
int xfer_send(struct r2cc_conn *c, uint16_t type, const void *a,
	      size_t alen, const void *b, size_t blen);
void xfer_sender_resolve(struct r2cc_conn *c, struct rail *r);
extern size_t xfer_fence_part_max;
int xfer_fence_report(struct r2cc_conn *c, struct rail *r);

#endif
