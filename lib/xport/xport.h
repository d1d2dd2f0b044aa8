/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * The transport layer (lib/xport): all that the layers above it (the
 * context, the collectives) may use besides the public API.  Inside, the
 * transport's own layers, each calling only those below it; news goes up
 * as return values and state, never as calls:
 *
 *   5  API            xfer.c             r2cc_isend, r2cc_irecv, r2cc_test
 *   4  connection     conn.c             conn.h
 *   3  scheduler      engine.c, msg.c    engine.h, msg.h
 *   2  rail           rail.c             rail.h
 *   1  control        ctrl.c             ctrl.h
 *
 * over their state (types.h), with beside them registration (mr.c),
 * GPU memory (cuda.c), the reaper (reap.c), the progress thread
 * (progress.c) and the stats file (publish.c).  The protocol simulator
 * (tests/xsim) runs this layer over fake verbs and sockets.
 */
#ifndef R2CC_LIB_XPORT_H
#define R2CC_LIB_XPORT_H

#include "xport/conn.h"		/* conn_progress_all(), conn_close_locked */
#include "xport/engine.h"	/* engine_nic_event() */
#include "xport/progress.h"	/* the context's progress thread */
#include "xport/publish.h"	/* the context's stats file */
#include "xport/reap.h"		/* reap_wait() */

#endif
