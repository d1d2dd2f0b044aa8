// SPDX-License-Identifier: GPL-2.0-only
/*
 * The state page: one read-only page, mapped by any subscriber, holding
 * every port's reported state under a sequence counter (protocol in the
 * uapi header), so a data path checks rail health with one load.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitmap.h>
#include <linux/gfp.h>
#include <linux/mm.h>

#include "compat.h"
#include "r2cc.h"

#define R2CC_STATE_SLOTS \
	((PAGE_SIZE - sizeof(struct r2cc_state_header)) / \
	 sizeof(struct r2cc_state_port))

static struct r2cc_state_header *r2cc_state;
static DECLARE_BITMAP(r2cc_slots, R2CC_STATE_SLOTS);	/* under r2cc_lock */
static u64 r2cc_incarnation;				/* under r2cc_lock */

int r2cc_state_init(void)
{
	r2cc_state = (void *)get_zeroed_page(GFP_KERNEL);
	if (!r2cc_state)
		return -ENOMEM;
	r2cc_state->version = R2CC_ABI_VERSION;
	r2cc_state->nslots = R2CC_STATE_SLOTS;
	r2cc_state->entry_size = sizeof(struct r2cc_state_port);
	return 0;
}

void r2cc_state_exit(void)
{
	free_page((unsigned long)r2cc_state);
}

size_t r2cc_state_size(void)
{
	return PAGE_SIZE;
}

/*
 * A free slot, and in *@incarnation a number never used before for any
 * slot: a reader bound to the slot's previous port tells them apart.
 */
int r2cc_state_slot_get(u64 *incarnation)
{
	unsigned long slot;

	lockdep_assert_held(&r2cc_lock);
	*incarnation = 0;
	slot = find_first_zero_bit(r2cc_slots, R2CC_STATE_SLOTS);
	if (slot >= R2CC_STATE_SLOTS)
		return -ENOSPC;
	set_bit(slot, r2cc_slots);
	*incarnation = ++r2cc_incarnation;
	return slot;
}

void r2cc_state_slot_put(int slot)
{
	lockdep_assert_held(&r2cc_lock);
	if (slot >= 0)
		clear_bit(slot, r2cc_slots);
}

/* Publish @port in its slot; @valid false clears the slot. */
void r2cc_state_update(const struct r2cc_port *port, bool valid)
{
	struct r2cc_state_port *e;

	lockdep_assert_held(&r2cc_lock);
	if (port->slot < 0)
		return;
	e = &r2cc_state->ports[port->slot];

	WRITE_ONCE(r2cc_state->seq, r2cc_state->seq + 1);
	smp_wmb();	/* seq odd before any field changes */
	if (valid) {
		e->dev_index = port->dev->index;
		e->port = port->num;
		WRITE_ONCE(e->state, port->state);
		e->reason = port->reason;
		e->phys_state = port->phys_state;
		e->incarnation = port->incarnation;
		e->ifindex = port->ifindex;
		e->generation = port->generation;
		e->last_change_ns = port->last_change_ns;
		e->bandwidth_mbps = port->bandwidth_mbps;
		WRITE_ONCE(e->flags, R2CC_SLOT_VALID |
			   (port->degraded ? R2CC_SLOT_DEGRADED : 0));
	} else {
		WRITE_ONCE(e->flags, 0);
		WRITE_ONCE(e->state, R2CC_PORT_NOP);
		memset(e, 0, sizeof(*e));
	}
	r2cc_state->generation++;
	smp_wmb();	/* every field written before seq turns even */
	WRITE_ONCE(r2cc_state->seq, r2cc_state->seq + 1);
}

/*
 * Read-only, never executable, and a real page reference per mapping
 * (vm_insert_page), so the page outlives the module only as long as a
 * mapping holds it, even under a forced unload.
 */
int r2cc_state_mmap(struct file *file, struct vm_area_struct *vma)
{
	unsigned long len = vma->vm_end - vma->vm_start;

	if (vma->vm_pgoff || len != PAGE_SIZE)
		return -EINVAL;
	if (vma->vm_flags & (VM_WRITE | VM_EXEC))
		return -EPERM;
	r2cc_vma_clear_flags(vma, VM_MAYWRITE | VM_MAYEXEC);
	return vm_insert_page(vma, vma->vm_start, virt_to_page(r2cc_state));
}
