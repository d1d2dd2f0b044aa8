// SPDX-License-Identifier: GPL-2.0-only
/*
 * The uapi's layouts, held to what each ABI version promised its readers.
 *
 * A field never moves, shrinks or changes meaning; a structure grows only
 * at its end, and only where its readers are told the size: records by
 * their @size, ioctl arguments by the caller's @size (copy_struct_from_user
 * rules), the state page's entries by the header's @entry_size.  Version 1
 * told readers to index hdr->ports[i], so when the entries grew from 40 to
 * 48 bytes (the incarnation) a version-1 reader passed its version check
 * and read every slot after the first at the wrong place: that growth is
 * version 2, whose readers stride by @entry_size.
 *
 * A change that breaks a rule fails here.  Put the new field at the end of
 * its structure and add its row below; or, if a reader of the current
 * version would misread the new layout, bump R2CC_ABI_VERSION, add the
 * version to versions[] and say why there.
 */
#include <linux/r2cc.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

struct field {
	const char *type, *name;
	size_t off, size, want_off, want_size;
	unsigned int since;		/* ABI version that added it */
};

#define F(s, f, o, n, v) { #s, #f, offsetof(struct s, f), \
			   sizeof(((struct s *)0)->f), o, n, v }

static const struct field fields[] = {
	F(r2cc_event, size, 0, 2, 1),
	F(r2cc_event, version, 2, 2, 1),
	F(r2cc_event, kind, 4, 2, 1),
	F(r2cc_event, flags, 6, 2, 1),
	F(r2cc_event, seq, 8, 8, 1),
	F(r2cc_event, time_ns, 16, 8, 1),
	F(r2cc_event, dev_index, 24, 4, 1),
	F(r2cc_event, port, 28, 4, 1),
	F(r2cc_event, old_state, 32, 1, 1),
	F(r2cc_event, new_state, 33, 1, 1),
	F(r2cc_event, phys_state, 34, 1, 1),
	F(r2cc_event, reason, 35, 1, 1),
	F(r2cc_event, ifindex, 36, 4, 1),
	F(r2cc_event, bandwidth_mbps, 40, 8, 1),
	F(r2cc_event, lost, 48, 8, 1),
	F(r2cc_event, dev_name, 56, 64, 1),
	F(r2cc_event, old_bandwidth_mbps, 120, 8, 1),
	F(r2cc_event, error_rate, 128, 8, 1),
	F(r2cc_version, abi, 0, 4, 1),
	F(r2cc_version, event_size, 4, 4, 1),
	F(r2cc_version, port_info_size, 8, 4, 1),
	F(r2cc_version, state_size, 12, 4, 1),
	F(r2cc_version, queue_len, 16, 4, 1),
	F(r2cc_version, size, 20, 4, 1),
	F(r2cc_version, reserved, 24, 8, 1),
	F(r2cc_port_info, dev_index, 0, 4, 1),
	F(r2cc_port_info, port, 4, 4, 1),
	F(r2cc_port_info, state, 8, 1, 1),
	F(r2cc_port_info, phys_state, 9, 1, 1),
	F(r2cc_port_info, link_layer, 10, 1, 1),
	F(r2cc_port_info, reason, 11, 1, 1),
	F(r2cc_port_info, ifindex, 12, 4, 1),
	F(r2cc_port_info, bandwidth_mbps, 16, 8, 1),
	F(r2cc_port_info, last_change_ns, 24, 8, 1),
	F(r2cc_port_info, dev_name, 32, 64, 1),
	F(r2cc_port_info, reserved, 96, 8, 1),
	F(r2cc_snapshot, size, 0, 4, 1),
	F(r2cc_snapshot, count, 4, 4, 1),
	F(r2cc_snapshot, ports, 8, 8, 1),
	F(r2cc_snapshot, seq, 16, 8, 1),
	F(r2cc_snapshot, reserved, 24, 16, 1),
	F(r2cc_filter, size, 0, 4, 1),
	F(r2cc_filter, ndevs, 4, 4, 1),
	F(r2cc_filter, kinds, 8, 8, 1),
	F(r2cc_filter, devs, 16, 64, 1),
	F(r2cc_filter, reserved, 80, 16, 1),
	F(r2cc_inject, size, 0, 4, 1),
	F(r2cc_inject, dev_index, 4, 4, 1),
	F(r2cc_inject, port, 8, 4, 1),
	F(r2cc_inject, kind, 12, 2, 1),
	F(r2cc_inject, reserved0, 14, 2, 1),
	F(r2cc_inject, reserved, 16, 16, 1),
	F(r2cc_state_port, dev_index, 0, 4, 1),
	F(r2cc_state_port, port, 4, 4, 1),
	F(r2cc_state_port, state, 8, 1, 1),
	F(r2cc_state_port, phys_state, 9, 1, 1),
	F(r2cc_state_port, flags, 10, 1, 1),
	F(r2cc_state_port, reason, 11, 1, 1),
	F(r2cc_state_port, ifindex, 12, 4, 1),
	F(r2cc_state_port, generation, 16, 8, 1),
	F(r2cc_state_port, last_change_ns, 24, 8, 1),
	F(r2cc_state_port, bandwidth_mbps, 32, 8, 1),
	F(r2cc_state_port, incarnation, 40, 8, 2),
	F(r2cc_state_header, version, 0, 4, 1),
	F(r2cc_state_header, seq, 4, 4, 1),
	F(r2cc_state_header, nslots, 8, 4, 1),
	F(r2cc_state_header, entry_size, 12, 4, 1),
	F(r2cc_state_header, generation, 16, 8, 1),
	F(r2cc_state_header, reserved, 24, 40, 1),
};

/* Each structure's size today; a growth adds its field's row above. */
static const struct {
	const char *type;
	size_t size, want;
} sizes[] = {
	{ "r2cc_event", sizeof(struct r2cc_event), 136 },
	{ "r2cc_version", sizeof(struct r2cc_version), 32 },
	{ "r2cc_port_info", sizeof(struct r2cc_port_info), 104 },
	{ "r2cc_snapshot", sizeof(struct r2cc_snapshot), 40 },
	{ "r2cc_filter", sizeof(struct r2cc_filter), 96 },
	{ "r2cc_inject", sizeof(struct r2cc_inject), 32 },
	{ "r2cc_state_port", sizeof(struct r2cc_state_port), 48 },
	{ "r2cc_state_header", sizeof(struct r2cc_state_header), 64 },
};

/* The versions, and what made each. */
static const struct {
	unsigned int version;
	size_t state_entry;	/* what its readers take an entry to be */
	const char *why;
} versions[] = {
	{ 1, 40, "the first" },
	{ 2, 48, "state entries grew (incarnation); readers stride by entry_size" },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

int main(void)
{
	unsigned int newest = versions[N(versions) - 1].version;
	size_t i, j;

	tap_plan(N(sizes) + 4);
	for (i = 0; i < N(sizes); i++) {
		size_t end = 0, nf = 0, bad = 0;

		for (j = 0; j < N(fields); j++) {
			const struct field *f = &fields[j];

			if (strcmp(f->type, sizes[i].type))
				continue;
			nf++;
			if (f->off != f->want_off || f->size != f->want_size) {
				tap_diag("%s.%s: at %zu, %zu bytes; version %u put it at %zu, %zu bytes",
					 f->type, f->name, f->off, f->size,
					 f->since, f->want_off, f->want_size);
				bad++;
			}
			if (f->want_off + f->want_size > end)
				end = f->want_off + f->want_size;
		}
		tap_ok(!bad && nf && sizes[i].size == sizes[i].want &&
		       end <= sizes[i].size,
		       "struct %s: %zu bytes (want %zu), its %zu fields where their versions put them",
		       sizes[i].type, sizes[i].size, sizes[i].want, nf);
	}
	tap_ok(R2CC_ABI_VERSION == newest,
	       "R2CC_ABI_VERSION %u is the newest version listed (%u: %s)",
	       R2CC_ABI_VERSION, newest, versions[N(versions) - 1].why);
	for (i = 0, j = 0; i < N(fields); i++)
		j += fields[i].since > R2CC_ABI_VERSION;
	tap_ok(!j, "no field is newer than R2CC_ABI_VERSION (%zu are)", j);
	/*
	 * The state page's entries are the one structure whose first
	 * readers did not take its size from the kernel: each version must
	 * say what its entries are, and today's must be the newest's.
	 */
	tap_ok(versions[N(versions) - 1].state_entry ==
	       sizeof(struct r2cc_state_port),
	       "version %u's state entries are today's %zu bytes", newest,
	       sizeof(struct r2cc_state_port));
	/* ... so a reader built against version 1, which compares, refuses. */
	{
		struct r2cc_state_header h = { .version = R2CC_ABI_VERSION,
			.entry_size = sizeof(struct r2cc_state_port) };

		tap_ok(h.version != 1 && h.entry_size != versions[0].state_entry,
		       "a version-1 reader's check (version == 1) refuses a page of %u-byte entries, version %u",
		       h.entry_size, h.version);
	}
	return tap_done();
}
