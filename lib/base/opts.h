/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Structs that start with a size_t size field, passed by an application
 * that may have been built against an older or a newer header.  The rules
 * are those of libbpf's OPTS_VALID() and the kernel's
 * copy_struct_from_user():
 *
 *  - A size below sizeof(size_t) (0 included), one that is not a multiple
 *    of _Alignof(size_t) (no sizeof() of a struct that starts with a
 *    size_t is; it would cut a pointer in two), or one above
 *    R2CC_OPTS_MAX is -EINVAL (-E2BIG for an input struct over the cap,
 *    as clone3() does).
 *  - In: a smaller size is an older struct and the fields past it read as
 *    zero; a larger one is a newer struct, accepted only if every byte
 *    past ours is zero (else -E2BIG).
 *  - Out: the library writes min(caller's size, its own) bytes, never the
 *    caller's size field and never past it.
 */
#ifndef R2CC_LIB_OPTS_H
#define R2CC_LIB_OPTS_H

#include <errno.h>
#include <stddef.h>
#include <string.h>

/* Larger than any version of any of these structs will be. */
#define R2CC_OPTS_MAX	4096u

/* The leading size field of @p, whatever its alignment. */
static inline size_t r2cc_opts_size(const void *p)
{
	size_t s;

	memcpy(&s, p, sizeof(s));
	return s;
}

static inline int r2cc_opts_size_ok(size_t usize)
{
	return usize >= sizeof(size_t) && usize <= R2CC_OPTS_MAX &&
	       !(usize % _Alignof(size_t));
}

/*
 * Copy the caller's input struct @src into @dst, the library's own
 * (@dst_size = its sizeof): zeroed first, so that fields an older caller
 * does not know read as zero.  Returns 0, -EINVAL or -E2BIG (see above);
 * @dst is all zero on error.  @dst->size is the caller's size.
 */
static inline int r2cc_opts_in(void *dst, size_t dst_size, const void *src)
{
	const unsigned char *u = src;
	size_t usize = r2cc_opts_size(src), i;

	memset(dst, 0, dst_size);
	if (usize > R2CC_OPTS_MAX)
		return -E2BIG;
	if (!r2cc_opts_size_ok(usize))
		return -EINVAL;
	for (i = dst_size; i < usize; i++)
		if (u[i])
			return -E2BIG;
	memcpy(dst, src, usize < dst_size ? usize : dst_size);
	return 0;
}

/*
 * 0 when an output struct whose caller's size is @usize may be written,
 * else -EINVAL.  Check before anything is consumed on the caller's behalf.
 */
static inline int r2cc_opts_out_check(size_t usize)
{
	return r2cc_opts_size_ok(usize) ? 0 : -EINVAL;
}

/*
 * Write the library's @src (@src_size bytes, its own struct) to the
 * caller's @dst of @usize bytes (checked with r2cc_opts_out_check()):
 * bytes sizeof(size_t) .. min(@usize, @src_size).  The caller's size field
 * and anything past what the library knows stay as the caller left them.
 */
static inline void r2cc_opts_out_n(void *dst, size_t usize, const void *src,
				   size_t src_size)
{
	size_t n = usize < src_size ? usize : src_size;

	if (n > sizeof(size_t))
		memcpy((unsigned char *)dst + sizeof(size_t),
		       (const unsigned char *)src + sizeof(size_t),
		       n - sizeof(size_t));
}

/* The same, with @dst's own size field as @usize. */
static inline int r2cc_opts_out(void *dst, const void *src, size_t src_size)
{
	size_t usize = r2cc_opts_size(dst);

	if (r2cc_opts_out_check(usize))
		return -EINVAL;
	r2cc_opts_out_n(dst, usize, src, src_size);
	return 0;
}

#endif /* R2CC_LIB_OPTS_H */
