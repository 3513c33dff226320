/*
 * pvdc: paravirtual display controller - vblank timelines, the timer and
 * interrupts.
 *
 * Vblanks are not events the device generates: they are instants derived
 * from QEMU_CLOCK_VIRTUAL and the active mode of each head, so the
 * counters can be read at any time without a timer.  The single timer is
 * only armed while something has to happen at a given instant: a commit
 * reaching its latch point, or a vblank whose interrupt is enabled.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/msi.h"
#include "pvdc-internal.h"
#include "trace.h"

static bool pvdc_head_on(PVDCHead *head)
{
    return head->active.ctrl & PVDC_HS_CTRL_ENABLE;
}

static uint64_t pvdc_vblanks_since_enable(PVDCHead *head, int64_t now)
{
    if (!pvdc_head_on(head) || !head->period_ns || now <= head->enable_ns) {
        return 0;
    }
    return (now - head->enable_ns) / head->period_ns;
}

uint32_t pvdc_vblank_count(PVDCHead *head, int64_t now)
{
    if (!pvdc_head_on(head)) {
        return head->base_count;
    }
    return head->base_count + pvdc_vblanks_since_enable(head, now);
}

int64_t pvdc_vblank_time(PVDCHead *head, int64_t now)
{
    if (!pvdc_head_on(head)) {
        return head->last_vblank_ns;
    }
    return head->enable_ns +
           pvdc_vblanks_since_enable(head, now) * head->period_ns;
}

int64_t pvdc_next_vblank(PVDCHead *head, int64_t after)
{
    if (after < head->enable_ns) {
        return head->enable_ns + head->period_ns;
    }
    return head->enable_ns +
           (pvdc_vblanks_since_enable(head, after) + 1) * head->period_ns;
}

/* Called once @head->active holds the enabled state. */
void pvdc_timeline_enable(PVDCHead *head, int64_t when)
{
    head->period_ns = pvdc_mode_period_ns(&head->active);
    head->enable_ns = when;
    head->last_vblank_ns = when;
    head->irq_vblank_count = head->base_count;
}

/* Called while @head->active still holds the enabled state. */
void pvdc_timeline_disable(PVDCHead *head, int64_t when)
{
    head->last_vblank_ns = pvdc_vblank_time(head, when);
    head->base_count = pvdc_vblank_count(head, when);
    head->irq_vblank_count = head->base_count;
    head->period_ns = 0;
}

static bool pvdc_vblank_irq_wanted(PVDCState *s, unsigned int h)
{
    return pvdc_head_on(&s->heads[h]) &&
           (s->int_enable & PVDC_INT(h, PVDC_INT_VBLANK));
}

void pvdc_timer_update(PVDCState *s)
{
    int64_t deadline = INT64_MAX;
    bool needed = pvdc_next_latch(s, &deadline);
    unsigned int h;

    for (h = 0; h < s->num_heads; h++) {
        PVDCHead *head = &s->heads[h];
        uint64_t n;

        if (!pvdc_vblank_irq_wanted(s, h) &&
            !(pvdc_head_on(head) && (head->crc_ctrl & PVDC_CRC_CTRL_ENABLE))) {
            continue;
        }
        /* The first vblank not reported yet, even if it is already past. */
        n = (uint32_t)(head->irq_vblank_count - head->base_count) + 1;
        deadline = MIN(deadline, head->enable_ns + n * head->period_ns);
        needed = true;
    }

    if (needed) {
        timer_mod(s->timer, deadline);
    } else {
        timer_del(s->timer);
    }
    trace_pvdc_timer_update(needed, needed ? deadline : 0);
}

void pvdc_timer_cb(void *opaque)
{
    PVDCState *s = opaque;
    MemReentrancyGuard *guard = &DEVICE(s)->mem_reentrancy_guard;
    bool guarded = guard->engaged_in_io;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    unsigned int h;

    s->timer_callbacks++;
    /*
     * An MSI is a DMA write to a guest-chosen address: if it points at
     * BAR0 it must not reach the registers while a latch is half done.
     */
    guard->engaged_in_io = true;

    /*
     * Vblanks first: a commit latched at a vblank starts the frame after
     * it, so a head disabled by it still had that vblank.
     */
    for (h = 0; h < s->num_heads; h++) {
        PVDCHead *head = &s->heads[h];
        uint32_t count = pvdc_vblank_count(head, now);

        if (count == head->irq_vblank_count) {
            continue;
        }
        head->irq_vblank_count = count;
        trace_pvdc_vblank(h, count, pvdc_vblank_time(head, now));
        if (pvdc_vblank_irq_wanted(s, h)) {
            pvdc_irq_raise(s, h, PVDC_INT_VBLANK);
        }
    }

    pvdc_latch_due_commits(s, now);
    /* After the latch: a CRC is of the frame that starts at the vblank. */
    pvdc_crc_capture_due(s, now);
    pvdc_timer_update(s);
    guard->engaged_in_io = guarded;
}

void pvdc_irq_update(PVDCState *s, uint32_t was_pending)
{
    PCIDevice *pci = PCI_DEVICE(s);
    uint32_t pending = s->int_status & s->int_enable;
    bool use_msi = msi_enabled(pci);

    pci_set_irq(pci, !use_msi && pending);
    if (use_msi && (pending & ~was_pending)) {
        msi_notify(pci, 0);
    }
    trace_pvdc_irq(s->int_status, s->int_enable, use_msi);
}

void pvdc_irq_raise(PVDCState *s, unsigned int head, uint32_t bits)
{
    uint32_t was_pending = s->int_status & s->int_enable;

    s->int_status |= PVDC_INT(head, bits);
    pvdc_irq_update(s, was_pending);
}

void pvdc_set_int_enable(PVDCState *s, uint32_t val)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    uint32_t was_pending = s->int_status & s->int_enable;
    unsigned int h;

    for (h = 0; h < s->num_heads; h++) {
        uint32_t bit = PVDC_INT(h, PVDC_INT_VBLANK);

        /* Only vblanks from now on are reported. */
        if ((val & bit) && !(s->int_enable & bit)) {
            s->heads[h].irq_vblank_count = pvdc_vblank_count(&s->heads[h],
                                                             now);
        }
    }
    s->int_enable = val;
    pvdc_irq_update(s, was_pending);
    pvdc_timer_update(s);
}
