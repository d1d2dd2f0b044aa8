// SPDX-License-Identifier: GPL-2.0-only
/*
 * Message payload: 64-bit word w of message seq is splitmix64 of
 * (seq << 32 | w) ^ salt, stored in host byte order; a message whose
 * length is not a multiple of 8 ends with the first bytes of its next
 * word.  Any byte can be recomputed from (seq, offset) alone, so a chunk
 * that lands in the wrong message, at the wrong offset, twice or not at
 * all is caught.  The salt tells the two directions of --lat apart.
 */
#include <string.h>

#include "perf.h"

uint64_t pattern_word(uint64_t seq, uint64_t word, uint64_t salt)
{
	uint64_t z = ((seq << 32) | (word & 0xffffffffULL)) ^ salt;

	/* splitmix64's finaliser: every input bit reaches every output bit */
	z += 0x9e3779b97f4a7c15ULL;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void pattern_fill(void *buf, size_t len, uint64_t seq, uint64_t salt)
{
	unsigned char *p = buf;
	size_t words = len / 8, w;
	uint64_t v;

	for (w = 0; w < words; w++) {
		v = pattern_word(seq, w, salt);
		memcpy(p + w * 8, &v, 8);
	}
	if (len % 8) {
		v = pattern_word(seq, words, salt);
		memcpy(p + words * 8, &v, len % 8);
	}
}

/* Compare @n (<= 8) bytes of one word; count and note differences. */
static size_t check_word(const unsigned char *p, size_t off, size_t n,
			 uint64_t want, size_t bad, struct pattern_bad *first)
{
	unsigned char w[8];
	size_t i;

	memcpy(w, &want, 8);
	for (i = 0; i < n; i++) {
		if (p[i] == w[i])
			continue;
		if (!bad && first) {
			first->offset = off + i;
			first->want = w[i];
			first->got = p[i];
		}
		bad++;
	}
	return bad;
}

size_t pattern_check(const void *buf, size_t len, uint64_t seq,
		     uint64_t salt, struct pattern_bad *first)
{
	const unsigned char *p = buf;
	size_t words = len / 8, w, bad = 0;
	uint64_t want, got;

	for (w = 0; w < words; w++) {
		want = pattern_word(seq, w, salt);
		memcpy(&got, p + w * 8, 8);
		if (got != want)
			bad = check_word(p + w * 8, w * 8, 8, want, bad, first);
	}
	if (len % 8)
		bad = check_word(p + words * 8, words * 8, len % 8,
				 pattern_word(seq, words, salt), bad, first);
	return bad;
}
