// SPDX-License-Identifier: GPL-2.0-only
/*
 * --dtype and --op for --coll: the element types and reductions of
 * <r2cc/coll.h>, and an exact check of every result element.
 *
 * Inputs are small non-negative integers, so that every type holds them
 * exactly (the widest, 126, fits int8; float16 and bfloat16 hold every
 * integer up to 2048 and 256).  A result is then known exactly: integer
 * types as the library combines them (in their unsigned type, wrapping),
 * floating types as the exact value rounded once -- which is what the
 * library returns wherever every partial result is exact too.  Where it
 * cannot be (a float16 sum past 2048, a bfloat16 one past 256, many
 * ranks) a difference of one rounding per combination is allowed.
 */
#include <math.h>		/* INFINITY, NAN, isinf: macros, no libm */
#include <string.h>

#include <r2cc/coll.h>

#include "perf.h"

static const struct {
	const char *name;
	enum r2cc_dtype dt;
	size_t size;
	int bits;		/* integer width, or 0 for floating */
	int is_signed;
	int mant;		/* floating: significand bits */
	double max;		/* floating: largest finite */
} types[] = {
	{ "int8", R2CC_INT8, 1, 8, 1, 0, 0 },
	{ "uint8", R2CC_UINT8, 1, 8, 0, 0, 0 },
	{ "int32", R2CC_INT32, 4, 32, 1, 0, 0 },
	{ "uint32", R2CC_UINT32, 4, 32, 0, 0, 0 },
	{ "int64", R2CC_INT64, 8, 64, 1, 0, 0 },
	{ "uint64", R2CC_UINT64, 8, 64, 0, 0, 0 },
	{ "float16", R2CC_FLOAT16, 2, 0, 1, 11, 65504.0 },
	{ "bfloat16", R2CC_BFLOAT16, 2, 0, 1, 8, 3.3895313892515355e38 },
	{ "float32", R2CC_FLOAT32, 4, 0, 1, 24, 3.4028234663852886e38 },
	{ "float64", R2CC_FLOAT64, 8, 0, 1, 53, 1.7976931348623157e308 },
};

#define NTYPES	(int)(sizeof(types) / sizeof(types[0]))

static const char *const ops[] = {
	[R2CC_SUM] = "sum", [R2CC_PROD] = "prod", [R2CC_MIN] = "min",
	[R2CC_MAX] = "max", [R2CC_AVG] = "avg",
};

#define NOPS	(int)(sizeof(ops) / sizeof(ops[0]))

/* 2^@e, exact for the exponents these checks meet. */
static double pow2(int e)
{
	double p = 1.0;

	for (; e > 0; e--)
		p *= 2.0;
	for (; e < 0; e++)
		p /= 2.0;
	return p;
}

static int type_of(enum r2cc_dtype dt)
{
	int i;

	for (i = 0; i < NTYPES; i++)
		if (types[i].dt == dt)
			return i;
	return 2;	/* int32, the default */
}

int perf_dtype_parse(const char *s, enum r2cc_dtype *dt)
{
	int i;

	for (i = 0; i < NTYPES; i++)
		if (!strcmp(s, types[i].name)) {
			*dt = types[i].dt;
			return 0;
		}
	return -1;
}

int perf_op_parse(const char *s, enum r2cc_redop *op)
{
	int i;

	for (i = 0; i < NOPS; i++)
		if (!strcmp(s, ops[i])) {
			*op = (enum r2cc_redop)i;
			return 0;
		}
	return -1;
}

const char *perf_dtype_name(enum r2cc_dtype dt)
{
	return types[type_of(dt)].name;
}

const char *perf_op_name(enum r2cc_redop op)
{
	return (int)op >= 0 && (int)op < NOPS ? ops[op] : "?";
}

size_t perf_dtype_size(enum r2cc_dtype dt)
{
	return types[type_of(dt)].size;
}

/* Small integer @k (at most 2048) as a float16 or bfloat16: exact. */
static uint16_t half_of(uint64_t k, int bf16)
{
	float f = (float)k;
	uint32_t b;

	memcpy(&b, &f, sizeof(b));
	if (bf16)
		return (uint16_t)(b >> 16);
	if (!k)
		return 0;
	return (uint16_t)((((b >> 23) & 0xff) - 112) << 10 |
			  ((b >> 13) & 0x3ff));
}

static double half_value(uint16_t h, int bf16)
{
	uint32_t b;
	float f;
	int e = (h >> 10) & 0x1f;

	if (bf16) {
		b = (uint32_t)h << 16;
		memcpy(&f, &b, sizeof(f));
		return f;
	}
	if (e == 0x1f)
		return (h & 0x3ff) ? NAN : (h & 0x8000 ? -INFINITY : INFINITY);
	f = e ? (float)((1.0 + (double)(h & 0x3ff) / 1024.0) * pow2(e - 15)) :
		(float)((double)(h & 0x3ff) * pow2(-24));
	return h & 0x8000 ? -f : f;
}

void perf_dtype_put(void *buf, size_t i, enum r2cc_dtype dt, uint64_t k)
{
	unsigned char *p = (unsigned char *)buf + i * perf_dtype_size(dt);
	uint16_t h;
	float f;
	double d;

	switch (dt) {
	case R2CC_FLOAT16:
	case R2CC_BFLOAT16:
		h = half_of(k, dt == R2CC_BFLOAT16);
		memcpy(p, &h, 2);
		break;
	case R2CC_FLOAT32:
		f = (float)k;
		memcpy(p, &f, 4);
		break;
	case R2CC_FLOAT64:
		d = (double)k;
		memcpy(p, &d, 8);
		break;
	default:	/* little-endian: the low bytes of k */
		memcpy(p, &k, perf_dtype_size(dt));
	}
}

/* Element @i of @buf as a double (floating types). */
static double get_float(const void *buf, size_t i, enum r2cc_dtype dt)
{
	const unsigned char *p = (const unsigned char *)buf +
				 i * perf_dtype_size(dt);
	uint16_t h;
	float f;
	double d;

	switch (dt) {
	case R2CC_FLOAT16:
	case R2CC_BFLOAT16:
		memcpy(&h, p, 2);
		return half_value(h, dt == R2CC_BFLOAT16);
	case R2CC_FLOAT32:
		memcpy(&f, p, 4);
		return f;
	default:
		memcpy(&d, p, 8);
		return d;
	}
}

/* Element @i of @buf, an integer type, as its low @bits. */
static uint64_t get_int(const void *buf, size_t i, enum r2cc_dtype dt)
{
	uint64_t v = 0;

	memcpy(&v, (const unsigned char *)buf + i * perf_dtype_size(dt),
	       perf_dtype_size(dt));
	return v;
}

/* @v wrapped to @t's width, sign-extended if @t is signed. */
static int64_t wrap(int t, uint64_t v)
{
	int bits = types[t].bits;

	if (bits == 64)
		return (int64_t)v;
	v &= (1ull << bits) - 1;
	if (types[t].is_signed && (v >> (bits - 1)))
		return (int64_t)(v | ~((1ull << bits) - 1));
	return (int64_t)v;
}

int perf_dtype_is(const void *buf, size_t i, enum r2cc_dtype dt, uint64_t k)
{
	int t = type_of(dt);

	if (types[t].bits)
		return wrap(t, get_int(buf, i, dt)) == wrap(t, k);
	return get_float(buf, i, dt) == (double)k;
}

int perf_dtype_check(const void *buf, size_t i, enum r2cc_dtype dt,
		     enum r2cc_redop op, int n, const struct perf_want *w)
{
	int t = type_of(dt);
	double got, want, one = pow2(-types[t].mant), tol = 0;
	/* partial results exact: sums no larger than the significand holds */
	int exact = (op != R2CC_SUM && op != R2CC_AVG) ||
		    (double)w->sum <= pow2(types[t].mant);

	if (types[t].bits) {
		int64_t sum = wrap(t, w->sum);

		if (op == R2CC_AVG)
			return wrap(t, get_int(buf, i, dt)) ==
			       (types[t].is_signed ? sum / n :
				(int64_t)((uint64_t)sum / (uint64_t)n));
		return wrap(t, get_int(buf, i, dt)) ==
		       wrap(t, op == R2CC_SUM ? w->sum :
			    op == R2CC_PROD ? w->prod :
			    op == R2CC_MIN ? w->min : w->max);
	}
	got = get_float(buf, i, dt);
	switch (op) {
	case R2CC_PROD:
		want = pow2((int)w->prod_log2);
		break;
	case R2CC_MIN:
		want = (double)w->min;
		break;
	case R2CC_MAX:
		want = (double)w->max;
		break;
	case R2CC_AVG:
		want = (double)w->sum / n;
		tol = want * one;	/* the division rounds once */
		break;
	default:
		want = (double)w->sum;
	}
	if (want > types[t].max)
		return isinf(got) && got > 0;
	/* a rounding per combination where partial results are inexact */
	if (!exact)
		tol = want * (n + 1) * one;
	return (got > want ? got - want : want - got) <= tol;
}
