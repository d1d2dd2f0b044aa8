/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Differences between the kernels r2cc.ko supports (Debian's 6.1 and 6.12),
 * kept in this one place.  The R2CC_HAVE_* macros come from feature tests
 * in Kbuild.
 */
#ifndef R2CC_COMPAT_H
#define R2CC_COMPAT_H

#include <linux/mm.h>
#include <rdma/ib_verbs.h>

/* IB_SPEED_XDR joined enum ib_port_speed in 6.7. */
#ifdef R2CC_HAVE_IB_SPEED_XDR
#define R2CC_IB_SPEED_XDR	IB_SPEED_XDR
#else
#define R2CC_IB_SPEED_XDR	256
#endif

/* 6.3 made vm_flags read-only behind helpers. */
static inline void r2cc_vma_clear_flags(struct vm_area_struct *vma,
					unsigned long flags)
{
#ifdef R2CC_HAVE_VM_FLAGS_CLEAR
	vm_flags_clear(vma, flags);
#else
	vma->vm_flags &= ~flags;
#endif
}

/* 6.10 dropped __assign_str()'s source argument (__string() has it). */
#ifdef R2CC_HAVE_ASSIGN_STR_1ARG
#define r2cc_assign_str(dst, src)	__assign_str(dst)
#else
#define r2cc_assign_str(dst, src)	__assign_str(dst, src)
#endif

#endif /* R2CC_COMPAT_H */
