/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Layer 3, the chunk scheduler and failover (msg.c, engine.c): messages and
 * requests, matching sends to announced receives, striping chunks over
 * the rails in proportion to bandwidth, completions, the stall detector,
 * settling a failed rail's chunks (fence reports, exact re-send), the TCP
 * fallback, and failing a connection (engine_abort).  It drives the rails
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
void engine_nic_event(struct r2cc_ctx *ctx, const struct r2cc_nic_event *ev);
void engine_progress(struct r2cc_conn *c);
/* Split each NIC's in-flight window among its rails; before a pass. */
void engine_nic_shares(struct r2cc_ctx *ctx);
/* Fail the connection: its QPs destroyed first, then every request. */
void engine_abort(struct r2cc_conn *c, int err, const char *why);
/* Queue a control message; one that cannot be queued fails it all. */
int engine_send(struct r2cc_conn *c, uint16_t type, const void *a,
		size_t alen, const void *b, size_t blen);
void engine_sender_resolve(struct r2cc_conn *c, struct rail *r);
extern size_t engine_fence_part_max;
int engine_fence_report(struct r2cc_conn *c, struct rail *r);
/*
 * The protocol simulator's deliberately broken variant: a receiver asked
 * about a stalled rail always says a write just landed (the sender must
 * then never fail a black hole by its stall detector).
 */
extern bool stall_ask_blind;

#endif
