/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The multi-rail transport's private state.
 *
 * A connection moves messages one way.  Its sender cuts each message into
 * chunks and writes them, striped over the rails that are up, straight
 * into the receive buffer the receiver announced (W_CTS).  The receiver
 * learns each chunk from the immediate data and counts distinct chunks.
 *
 * When a rail fails, whoever sees it first stops using it and tells the
 * other side.  The receiver fences the rail (its QP to error, receive queue
 * drained) and reports exactly which chunks of each open message arrived
 * (W_FENCED).  The sender, once its own QP on that rail is drained, sends
 * again on surviving rails exactly the chunks that did not arrive.  So a
 * chunk lands at most once after the receiver has counted it, and a buffer
 * is handed back only when no rail can still touch it.
 */
#ifndef R2CC_LIB_XPORT_H
#define R2CC_LIB_XPORT_H

/*
 * The transport's layers, each calling only those below it; news goes up
 * as return values and state, never as calls:
 *
 *   5  API            xfer.c    r2cc_isend, r2cc_irecv, r2cc_test
 *   4  connection     conn.c    conn.h
 *   3  scheduler      msg.c, engine.c   engine.h
 *   2  rail           rail.c    rail.h
 *   1  control        ctrl.c    ctrl.h
 *
 * with mr.c (mr.h) beside them.  The simulator (tests/xsim) replaces the
 * verbs calls below layer 2 and the sockets below layer 1.
 */
#include "xport/conn.h"

#endif
