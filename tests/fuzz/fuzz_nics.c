// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer: the R2CC_NICS selection parser and matcher (lib/base/nics.c).
 *
 * Input: the selection string up to the first NUL byte (all of it if there
 * is none); after that NUL, a device name up to the next NUL and one port
 * byte to match against the selection.  Besides the sanitizers, checks
 * what every accepted selection must satisfy: 1..R2CC_MAX_NICS entries,
 * each a non-empty name under 64 bytes without ',' or ':' and a port in
 * 0..255; printed back as "[^]dev[:port],..." it parses to the same
 * selection; every entry matches itself (and a device alone every port)
 * unless the selection excludes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/base/base.h"

#include "fuzz.h"

/* The selection as R2CC_NICS would spell it; NULL if it does not fit. */
static char *print_sel(const struct r2cc_nic_sel *sel)
{
	size_t cap = 2 + (size_t)sel->n * (sizeof(sel->item[0].dev) + 5);
	char *s = malloc(cap), *p = s;
	int i;

	if (!s)
		return NULL;
	if (sel->exclude)
		*p++ = '^';
	for (i = 0; i < sel->n; i++) {
		p += sprintf(p, "%s%s", i ? "," : "", sel->item[i].dev);
		if (sel->item[i].port)
			p += sprintf(p, ":%u", sel->item[i].port);
	}
	*p = '\0';
	return s;
}

static bool same_sel(const struct r2cc_nic_sel *a,
		     const struct r2cc_nic_sel *b)
{
	int i;

	if (a->exclude != b->exclude || a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (strcmp(a->item[i].dev, b->item[i].dev) ||
		    a->item[i].port != b->item[i].port)
			return false;
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct r2cc_nic_sel *sel, *again;
	const uint8_t *nul = memchr(data, 0, size);
	size_t slen = nul ? (size_t)(nul - data) : size;
	char *spec, *dev = NULL, *printed;
	uint32_t port = 1;
	int ret, i;

	/* Exactly the string, on the heap, so ASan sees any overread. */
	spec = malloc(slen + 1);
	sel = malloc(sizeof(*sel));
	again = malloc(sizeof(*again));
	CHECK(spec && sel && again);
	memcpy(spec, data, slen);
	spec[slen] = '\0';
	if (nul) {
		const uint8_t *q = nul + 1, *end = data + size;
		const uint8_t *nul2 = memchr(q, 0, end - q);
		size_t dlen = nul2 ? (size_t)(nul2 - q) : (size_t)(end - q);

		dev = malloc(dlen + 1);
		CHECK(dev);
		memcpy(dev, q, dlen);
		dev[dlen] = '\0';
		if (nul2 && nul2 + 1 < end)
			port = nul2[1];
	}

	ret = nics_parse(spec, sel);
	CHECK(ret == 0 || ret == -EINVAL);
	if (ret)
		goto out;
	/* Accepted: an empty string never is, so there is an entry. */
	CHECK(sel->n >= 1 && sel->n <= R2CC_MAX_NICS);
	CHECK(sel->exclude == (spec[0] == '^'));
	for (i = 0; i < sel->n; i++) {
		const char *d = sel->item[i].dev;
		size_t dl = strnlen(d, sizeof(sel->item[i].dev));

		CHECK(dl >= 1 && dl < sizeof(sel->item[i].dev));
		CHECK(!strpbrk(d, ",:"));
		CHECK(sel->item[i].port <= 255);
		CHECK(nics_match(sel, d, sel->item[i].port ?: 1) ==
		      !sel->exclude);
		if (!sel->item[i].port)
			CHECK(nics_match(sel, d, 255) == !sel->exclude);
	}
	printed = print_sel(sel);
	CHECK(printed);
	CHECK(nics_parse(printed, again) == 0);
	CHECK(same_sel(sel, again));
	free(printed);
	if (dev)
		(void)nics_match(sel, dev, port);
out:
	/* No selection matches everything; a failed parse leaves none. */
	CHECK(nics_parse(NULL, again) == 0 && again->n == 0 &&
	      nics_match(again, dev ? dev : "x", port));
	free(dev);
	free(again);
	free(sel);
	free(spec);
	return 0;
}
