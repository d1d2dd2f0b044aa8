/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Messages and requests (msg.c): a connection's message slots, the
 * requests that own them, chunk geometry, and ending them all.  Below the
 * scheduler (engine.c), which moves their chunks.
 */
#ifndef R2CC_LIB_MSG_H
#define R2CC_LIB_MSG_H

#include <stddef.h>
#include <stdint.h>

#include "xport/types.h"

struct r2cc_req *msg_req_new(struct r2cc_conn *c, uint8_t kind, int n);
void msg_req_free(struct r2cc_req *q);
void msg_done(struct r2cc_conn *c, struct msg *m, int err);
struct msg *msg_by_id(struct r2cc_conn *c, uint32_t id);
uint32_t msg_nchunks(const struct r2cc_conn *c, size_t len);
size_t msg_chunk_len(const struct r2cc_conn *c, const struct msg *m,
		     uint32_t k);
void msg_fail_all(struct r2cc_conn *c, int err);
void msg_release_all(struct r2cc_conn *c);

#endif
