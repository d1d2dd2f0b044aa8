// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * Element arithmetic of the collectives.  Integers are combined as their
 * unsigned type (wrapping, no undefined behaviour) and compared as their
 * own type; float16 and bfloat16 go through float and are rounded to
 * nearest-even after every combination, so a result depends only on the
 * order of the combinations, which the schedule fixes.
 */
#include <string.h>

#include "coll/coll.h"

size_t coll_dtype_size(enum r2cc_dtype dt)
{
	switch (dt) {
	case R2CC_INT8:
	case R2CC_UINT8:
		return 1;
	case R2CC_FLOAT16:
	case R2CC_BFLOAT16:
		return 2;
	case R2CC_INT32:
	case R2CC_UINT32:
	case R2CC_FLOAT32:
		return 4;
	case R2CC_INT64:
	case R2CC_UINT64:
	case R2CC_FLOAT64:
		return 8;
	}
	return 0;
}

bool coll_op_ok(enum r2cc_redop op)
{
	return op == R2CC_SUM || op == R2CC_PROD || op == R2CC_MIN ||
	       op == R2CC_MAX || op == R2CC_AVG;
}

/* IEEE 754 binary16 <-> binary32, round to nearest-even, NaN stays NaN. */
float coll_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff, bits;
	float f;

	if (exp == 0x1f) {
		bits = sign | 0x7f800000 | (man << 13);
	} else if (exp) {
		bits = sign | ((exp + 112) << 23) | (man << 13);
	} else {
		/* zero or subnormal: man x 2^-24, exact in float */
		f = (float)man * (1.0f / 16777216.0f);
		return sign ? -f : f;
	}
	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t coll_float_to_half(float f)
{
	uint32_t bits, sign, man, lost, half_ulp;
	int exp;

	memcpy(&bits, &f, sizeof(bits));
	sign = (bits >> 16) & 0x8000;
	exp = (int)((bits >> 23) & 0xff) - 127 + 15;
	man = bits & 0x7fffff;
	if (((bits >> 23) & 0xff) == 0xff)	/* inf, or NaN kept quiet */
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
	if (exp >= 0x1f)
		return (uint16_t)(sign | 0x7c00);
	if (exp <= 0) {
		/* subnormal half (or zero): shift the implicit bit in */
		int shift = 14 - exp;

		if (shift > 24)
			return (uint16_t)sign;
		man |= 0x800000;
		lost = man & ((1u << shift) - 1);
		half_ulp = 1u << (shift - 1);
		man >>= shift;
		if (lost > half_ulp || (lost == half_ulp && (man & 1)))
			man++;
		return (uint16_t)(sign | man);
	}
	lost = man & 0x1fff;
	man >>= 13;
	if (lost > 0x1000 || (lost == 0x1000 && (man & 1))) {
		man++;
		if (man == 0x400) {	/* carried into the exponent */
			man = 0;
			if (++exp >= 0x1f)
				return (uint16_t)(sign | 0x7c00);
		}
	}
	return (uint16_t)(sign | ((uint32_t)exp << 10) | man);
}

float coll_bf16_to_float(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

uint16_t coll_float_to_bf16(float f)
{
	uint32_t bits;

	memcpy(&bits, &f, sizeof(bits));
	if ((bits & 0x7f800000) == 0x7f800000 && (bits & 0x7fffff))
		return (uint16_t)((bits >> 16) | 0x40);	/* quiet NaN */
	bits += 0x7fff + ((bits >> 16) & 1);
	return (uint16_t)(bits >> 16);
}

#define INT_LOOP(T, U)							\
	do {								\
		T *a = acc;						\
		const T *b = in;					\
		for (i = 0; i < n; i++) {				\
			switch (op) {					\
			case R2CC_SUM:					\
			case R2CC_AVG:					\
				a[i] = (T)((U)a[i] + (U)b[i]);		\
				break;					\
			case R2CC_PROD:					\
				a[i] = (T)((U)a[i] * (U)b[i]);		\
				break;					\
			case R2CC_MIN:					\
				a[i] = b[i] < a[i] ? b[i] : a[i];	\
				break;					\
			case R2CC_MAX:					\
				a[i] = b[i] > a[i] ? b[i] : a[i];	\
				break;					\
			}						\
		}							\
	} while (0)

/* MIN and MAX of floats: a NaN anywhere is a NaN in the result. */
#define FLOAT_OP(x, y)							\
	(op == R2CC_PROD ? (x) * (y) :					\
	 op == R2CC_MIN ? ((y) < (x) || (y) != (y) ? (y) : (x)) :	\
	 op == R2CC_MAX ? ((y) > (x) || (y) != (y) ? (y) : (x)) :	\
	 (x) + (y))

#define FLOAT_LOOP(T)							\
	do {								\
		T *a = acc;						\
		const T *b = in;					\
		for (i = 0; i < n; i++)					\
			a[i] = FLOAT_OP(a[i], b[i]);			\
	} while (0)

#define HALF_LOOP(TO, FROM)						\
	do {								\
		uint16_t *a = acc;					\
		const uint16_t *b = in;					\
		for (i = 0; i < n; i++) {				\
			float x = FROM(a[i]), y = FROM(b[i]);		\
			a[i] = TO(FLOAT_OP(x, y));			\
		}							\
	} while (0)

void coll_reduce(void *acc, const void *in, size_t n, enum r2cc_dtype dt,
		 enum r2cc_redop op)
{
	size_t i;

	switch (dt) {
	case R2CC_INT8:
		INT_LOOP(int8_t, uint8_t);
		break;
	case R2CC_UINT8:
		INT_LOOP(uint8_t, uint8_t);
		break;
	case R2CC_INT32:
		INT_LOOP(int32_t, uint32_t);
		break;
	case R2CC_UINT32:
		INT_LOOP(uint32_t, uint32_t);
		break;
	case R2CC_INT64:
		INT_LOOP(int64_t, uint64_t);
		break;
	case R2CC_UINT64:
		INT_LOOP(uint64_t, uint64_t);
		break;
	case R2CC_FLOAT16:
		HALF_LOOP(coll_float_to_half, coll_half_to_float);
		break;
	case R2CC_BFLOAT16:
		HALF_LOOP(coll_float_to_bf16, coll_bf16_to_float);
		break;
	case R2CC_FLOAT32:
		FLOAT_LOOP(float);
		break;
	case R2CC_FLOAT64:
		FLOAT_LOOP(double);
		break;
	}
}

#define DIV_LOOP(T, W)							\
	do {								\
		T *a = acc;						\
		for (i = 0; i < n; i++)					\
			a[i] = (T)((W)a[i] / (W)nranks);		\
	} while (0)

void coll_finish(void *acc, size_t n, enum r2cc_dtype dt, enum r2cc_redop op,
		 int nranks)
{
	uint16_t *h = acc;
	size_t i;

	if (op != R2CC_AVG || nranks <= 1)
		return;
	switch (dt) {
	case R2CC_INT8:
		DIV_LOOP(int8_t, int64_t);
		break;
	case R2CC_UINT8:
		DIV_LOOP(uint8_t, uint64_t);
		break;
	case R2CC_INT32:
		DIV_LOOP(int32_t, int64_t);
		break;
	case R2CC_UINT32:
		DIV_LOOP(uint32_t, uint64_t);
		break;
	case R2CC_INT64:
		DIV_LOOP(int64_t, int64_t);
		break;
	case R2CC_UINT64:
		DIV_LOOP(uint64_t, uint64_t);
		break;
	case R2CC_FLOAT16:
		for (i = 0; i < n; i++)
			h[i] = coll_float_to_half(coll_half_to_float(h[i]) /
						  (float)nranks);
		break;
	case R2CC_BFLOAT16:
		for (i = 0; i < n; i++)
			h[i] = coll_float_to_bf16(coll_bf16_to_float(h[i]) /
						  (float)nranks);
		break;
	case R2CC_FLOAT32:
		DIV_LOOP(float, float);
		break;
	case R2CC_FLOAT64:
		DIV_LOOP(double, double);
		break;
	}
}
