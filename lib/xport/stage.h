/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Staged repair (stage.c), R2CC_REPAIR=staged: a failed rail's chunks go
 * again at once, on surviving rails, into a ring the receiver registered
 * up front (wire.h, struct wire_stage), instead of waiting for the
 * receiver's fence report.  The receiver uses an entry only once the rail
 * its chunk went on first is fenced at its end, so the original can no
 * longer land; it copies the chunk in only if its message is open and the
 * chunk still missing.  Layer 2, beside the rails: the scheduler
 * (engine.c) says which chunks to stage and takes the entries ready to be
 * copied; nothing here calls up.  Functions returning int give 0 or
 * -errno; the caller fails the connection.
 */
#ifndef R2CC_LIB_STAGE_H
#define R2CC_LIB_STAGE_H

#include <stdbool.h>
#include <stdint.h>

#include "xport/types.h"

/* Receiver, once connected: register the ring, tell the sender. */
int stage_open(struct r2cc_conn *c);
/* Its ring deregistered and freed (no QP may write it any more). */
void stage_close(struct r2cc_conn *c);

/* Sender: rail @r can take a staged chunk now. */
bool stage_room(const struct r2cc_conn *c, const struct rail *r);
/*
 * Sender: post chunk @k of @m on @r, into a free slot of @r's, as a
 * re-send of what went on rail @origin.  0, or -errno: the post failed
 * (the caller fails @r).
 */
int stage_post(struct r2cc_conn *c, struct rail *r, struct msg *m,
	       uint32_t k, int origin);

/* Receiver: the send of slot @slot came in on @r; -EPROTO if it lies. */
int stage_arrived(struct r2cc_conn *c, struct rail *r, uint32_t slot);
/*
 * Receiver: a held entry whose first rail is fenced here, or -1.  A first
 * rail still up here is failed now (the sender has stopped using it).
 * *@err: -errno if that failure could not be told to the peer.
 */
int stage_next(struct r2cc_conn *c, int *err);
/*
 * The protocol simulator's deliberately broken variant: entries are used
 * at once, their first rail not fenced (it must catch the late original).
 */
extern bool stage_unfenced;
/* Receiver: the entry of @slot was copied in or dropped. */
void stage_release(struct r2cc_conn *c, int slot);
/* Receiver: an entry for chunk @k of message @id is held. */
bool stage_holds(const struct r2cc_conn *c, uint32_t id, uint32_t k);
/* Receiver: @r fenced; its slots that hold nothing are free. */
void stage_rail_fenced(struct r2cc_conn *c, const struct rail *r);
/* Receiver: tell the sender which slots are free again. */
int stage_flush(struct r2cc_conn *c);

/* W_STAGE and W_STAGE_FREE; *@why says what was wrong with one. */
int stage_on_msg(struct r2cc_conn *c, uint16_t type, const void *p,
		 size_t len, const char **why);

#endif
