/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * A process's start time (field 22 of /proc/PID/stat, in clock ticks
 * since boot): with its PID it names one process, so a stats file whose
 * writer died is told from one whose PID was reused.  Shared by the
 * library (which writes it) and r2ccctl (which checks it).
 */
#ifndef R2CC_PROC_START_H
#define R2CC_PROC_START_H

#include <stdint.h>

/* @pid's start time, @pid 0 for this process; 0 if there is none. */
uint64_t proc_start_of(int pid);

#endif
