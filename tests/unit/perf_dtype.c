// SPDX-License-Identifier: GPL-2.0-only
/*
 * r2cc-perf --coll's element checks (tools/perf/dtype.c): every type
 * stores the small integers exactly; a right reduction passes and a wrong
 * one (off by one, a rank missing, a NaN) fails, in every type and op;
 * integers wrap as the library combines them; a float16 product past its
 * range must be infinity; an inexact bfloat16 sum is allowed its
 * roundings, not more.
 */
#include <string.h>

#include "tap.h"
#include "../../tools/perf/dtype.c"

static const enum r2cc_dtype all[] = {
	R2CC_INT8, R2CC_UINT8, R2CC_INT32, R2CC_UINT32, R2CC_INT64,
	R2CC_UINT64, R2CC_FLOAT16, R2CC_BFLOAT16, R2CC_FLOAT32, R2CC_FLOAT64,
};

#define NALL	(int)(sizeof(all) / sizeof(all[0]))

int main(void)
{
	unsigned char buf[64];
	struct perf_want w = { .sum = 24, .prod = 16, .min = 0, .max = 8,
			       .prod_log2 = 4 };
	enum r2cc_dtype dt;
	enum r2cc_redop op;
	int i, ok;
	uint64_t k;

	tap_plan(14);
	ok = 1;
	for (i = 0; i < NALL; i++)
		for (k = 0; k <= 126; k++) {
			perf_dtype_put(buf, 3, all[i], k);
			ok = ok && perf_dtype_is(buf, 3, all[i], k) &&
			     !perf_dtype_is(buf, 3, all[i], k + 1);
		}
	tap_ok(ok, "every type holds 0..126 exactly, and tells k from k + 1");
	ok = 1;
	for (i = 0; i < NALL; i++) {
		struct { enum r2cc_redop op; uint64_t right; } c[] = {
			{ R2CC_SUM, 24 }, { R2CC_PROD, 16 }, { R2CC_MIN, 0 },
			{ R2CC_MAX, 8 }, { R2CC_AVG, 6 },
		};
		int j;

		for (j = 0; j < 5; j++) {
			perf_dtype_put(buf, 0, all[i], c[j].right);
			ok = ok && perf_dtype_check(buf, 0, all[i], c[j].op, 4,
						    &w);
			perf_dtype_put(buf, 0, all[i], c[j].right + 1);
			ok = ok && !perf_dtype_check(buf, 0, all[i], c[j].op,
						     4, &w);
		}
	}
	tap_ok(ok, "sum, prod, min, max, avg of 4 ranks: the right element passes, one off fails, in all 10 types");
	tap_ok(perf_dtype_parse("bfloat16", &dt) == 0 && dt == R2CC_BFLOAT16 &&
	       perf_dtype_parse("float", &dt) < 0 &&
	       perf_dtype_parse("", &dt) < 0 &&
	       perf_dtype_parse("INT8", &dt) < 0,
	       "--dtype: the ten names, nothing else");
	tap_ok(perf_op_parse("avg", &op) == 0 && op == R2CC_AVG &&
	       perf_op_parse("mean", &op) < 0 && perf_op_parse("Sum", &op) < 0,
	       "--op: sum, prod, min, max, avg, nothing else");
	tap_ok(!strcmp(perf_dtype_name(R2CC_FLOAT16), "float16") &&
	       perf_dtype_size(R2CC_BFLOAT16) == 2 &&
	       perf_dtype_size(R2CC_UINT64) == 8 &&
	       !strcmp(perf_op_name(R2CC_PROD), "prod") &&
	       !strcmp(perf_op_name((enum r2cc_redop)9), "?"),
	       "names and sizes");

	/* int8: a sum of 200 wraps to -56, as the library's does */
	w.sum = 200;
	perf_dtype_put(buf, 0, R2CC_INT8, 200);
	tap_ok(perf_dtype_check(buf, 0, R2CC_INT8, R2CC_SUM, 4, &w) &&
	       perf_dtype_check(buf, 0, R2CC_UINT8, R2CC_SUM, 4, &w),
	       "int8 and uint8: a sum of 200 is its wrapped byte");
	/* avg of a wrapped int8 sum: -56 / 4 = -14, truncated */
	perf_dtype_put(buf, 0, R2CC_INT8, (uint64_t)(uint8_t)-14);
	tap_ok(perf_dtype_check(buf, 0, R2CC_INT8, R2CC_AVG, 4, &w),
	       "int8 avg: the wrapped sum divided, truncated (-14)");
	perf_dtype_put(buf, 0, R2CC_UINT8, 50);
	tap_ok(perf_dtype_check(buf, 0, R2CC_UINT8, R2CC_AVG, 4, &w),
	       "uint8 avg: 200 / 4 = 50");

	/* a product of 2^20: 0 in 8 and 16 bit integers, inf in float16 */
	w.prod_log2 = 20;
	w.prod = 1ull << 20;
	perf_dtype_put(buf, 0, R2CC_INT8, 0);
	tap_ok(perf_dtype_check(buf, 0, R2CC_INT8, R2CC_PROD, 40, &w),
	       "int8: a product of 2^20 wraps to 0");
	{
		uint16_t inf = 0x7c00, big = 0x7bff;	/* inf, 65504 */

		memcpy(buf, &inf, 2);
		ok = perf_dtype_check(buf, 0, R2CC_FLOAT16, R2CC_PROD, 40, &w);
		memcpy(buf, &big, 2);
		tap_ok(ok && !perf_dtype_check(buf, 0, R2CC_FLOAT16,
					       R2CC_PROD, 40, &w),
		       "float16: a product of 2^20 must be +inf, not its largest finite");
	}
	{
		uint16_t nan = 0x7e00;

		memcpy(buf, &nan, 2);
		w.sum = 24;
		tap_ok(!perf_dtype_check(buf, 0, R2CC_FLOAT16, R2CC_SUM, 4, &w),
		       "float16: a NaN never passes");
	}

	/*
	 * bfloat16 holds integers exactly to 256: a sum of 600 over 100
	 * ranks may round at each step (600 lies between 596 and 600 in
	 * steps of 4), so within roundings; 24 off is a rank missing.
	 */
	w.sum = 600;
	perf_dtype_put(buf, 0, R2CC_FLOAT32, 604);
	ok = !perf_dtype_check(buf, 0, R2CC_FLOAT32, R2CC_SUM, 100, &w);
	{
		float f = 604.0f;
		uint32_t b;
		uint16_t h;

		memcpy(&b, &f, 4);
		h = (uint16_t)(b >> 16);	/* 604 is a bfloat16 */
		memcpy(buf, &h, 2);
		ok = ok && perf_dtype_check(buf, 0, R2CC_BFLOAT16, R2CC_SUM,
					    100, &w);
	}
	tap_ok(ok, "an inexact bfloat16 sum (600 over 100 ranks) may be off by its roundings; float32 may not");
	w.sum = 20000;
	{
		float f = 12000.0f;	/* off by far more than 101 roundings */
		uint32_t b;
		uint16_t h;

		memcpy(&b, &f, 4);
		h = (uint16_t)(b >> 16);
		memcpy(buf, &h, 2);
		tap_ok(!perf_dtype_check(buf, 0, R2CC_BFLOAT16, R2CC_SUM, 100,
					 &w),
		       "but not by a large share (12000 for 20000)");
	}
	/* exact region: 24 in bfloat16 must be exact, 25 is a failure */
	w.sum = 24;
	perf_dtype_put(buf, 0, R2CC_BFLOAT16, 25);
	tap_ok(!perf_dtype_check(buf, 0, R2CC_BFLOAT16, R2CC_SUM, 4, &w),
	       "bfloat16 within its exact integers: no tolerance (25 for 24)");
	return tap_done();
}
