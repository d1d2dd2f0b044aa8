// SPDX-License-Identifier: GPL-2.0-only
/* R2CC_NICS parsing, matching and order (lib/base/nics.c), with hostile input. */
#include <errno.h>
#include <string.h>

#include "../../lib/base/base.h"
#include "tap.h"

static int parse(const char *s)
{
	struct r2cc_nic_sel sel;

	return nics_parse(s, &sel);
}

int main(void)
{
	struct r2cc_nic_sel sel;
	char big[400];
	char many[64 * 4 + 16];
	int i;

	tap_plan(24);
	tap_ok(nics_parse(NULL, &sel) == 0 && sel.n == 0 &&
	       nics_match(&sel, "any", 1), "no list: every NIC");
	tap_ok(nics_parse("mlx5_0,mlx5_1:2", &sel) == 0 && sel.n == 2 &&
	       !sel.exclude, "two entries");
	tap_ok(nics_match(&sel, "mlx5_0", 1) &&
	       nics_match(&sel, "mlx5_0", 2), "a device alone: all ports");
	tap_ok(nics_match(&sel, "mlx5_1", 2) &&
	       !nics_match(&sel, "mlx5_1", 1), "dev:port: that port only");
	tap_ok(!nics_match(&sel, "mlx5_2", 1), "others are left out");
	tap_ok(!nics_match(&sel, "mlx5", 1) &&
	       !nics_match(&sel, "mlx5_00", 1), "names match whole");
	tap_ok(nics_parse("^rxe0", &sel) == 0 && sel.exclude &&
	       !nics_match(&sel, "rxe0", 1) &&
	       nics_match(&sel, "rxe1", 1), "^ excludes");
	tap_ok(parse("") == -EINVAL, "empty string: EINVAL");
	tap_ok(parse("^") == -EINVAL, "lone ^: EINVAL");
	tap_ok(parse(",") == -EINVAL && parse("a,,b") == -EINVAL &&
	       parse("a,") == -EINVAL, "empty entries: EINVAL");
	tap_ok(parse("a:") == -EINVAL && parse("a:x") == -EINVAL &&
	       parse(":1") == -EINVAL, "bad port syntax: EINVAL");
	tap_ok(parse("a:0") == -EINVAL, "port 0: EINVAL");
	tap_ok(parse("a:256") == -EINVAL && parse("a:99999999999999999999") ==
	       -EINVAL, "port out of range: EINVAL");
	tap_ok(parse("a:1x") == -EINVAL && parse("a:1:2") == -EINVAL,
	       "trailing junk: EINVAL");
	tap_ok(parse("a:-1") == -EINVAL && parse("a: 1") == -EINVAL,
	       "negative or spaced port: EINVAL");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	tap_ok(parse(big) == -EINVAL, "a 399-character name: EINVAL");
	big[63] = '\0';
	tap_ok(parse(big) == 0, "a 63-character name is fine");
	for (i = 0, many[0] = '\0'; i < 65; i++)
		strcat(many, i ? ",n" : "n");
	tap_ok(parse(many) == -EINVAL, "65 entries: EINVAL");
	many[strlen(many) - 2] = '\0';
	tap_ok(parse(many) == 0, "64 entries are fine");
	tap_ok(parse("rxe0:1,rxe1:255") == 0, "port 255 is fine");
	tap_ok(parse("a\nb") == 0, "control characters are just names");
	/* A list to keep is also the order of use (rail i = i-th listed). */
	tap_ok(nics_parse("rxe1,rxe0:1", &sel) == 0 &&
	       nics_rank(&sel, "rxe1", 1) == 0 &&
	       nics_rank(&sel, "rxe1", 2) == 0 &&
	       nics_rank(&sel, "rxe0", 1) == 1, "list order is rank order");
	tap_ok(nics_parse("rxe0,rxe0:2", &sel) == 0 &&
	       nics_rank(&sel, "rxe0", 2) == 0, "the first entry naming it");
	tap_ok(nics_parse("^rxe1", &sel) == 0 &&
	       nics_rank(&sel, "rxe0", 1) == 0 &&
	       nics_rank(&sel, "rxe2", 1) == 0 &&
	       nics_parse(NULL, &sel) == 0 &&
	       nics_rank(&sel, "rxe2", 1) == 0,
	       "^ or no list: the system's order (all rank 0)");
	return tap_done();
}
