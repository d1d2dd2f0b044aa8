/* SPDX-License-Identifier: GPL-2.0-only WITH Linux-syscall-note */
/*
 * r2cc: RDMA port failure notification, the ABI shared by r2cc.ko and
 * userspace.  This is the only copy: the module and libr2cc include it.
 *
 * The event record, ioctls and state page arrive with the kernel-module
 * work; until then this header fixes the names and the ABI version that
 * both sides check.
 */
#ifndef _UAPI_LINUX_R2CC_H
#define _UAPI_LINUX_R2CC_H

#include <linux/types.h>

/* Bumped on any incompatible change; new fields extend records instead. */
#define R2CC_ABI_VERSION	0

/* Character device (misc device name, so /dev/r2cc). */
#define R2CC_DEVICE_NAME	"r2cc"

/* Generic netlink family and multicast group. */
#define R2CC_GENL_NAME		"r2cc"
#define R2CC_GENL_MCGRP_EVENTS	"events"

#endif /* _UAPI_LINUX_R2CC_H */
