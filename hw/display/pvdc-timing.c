/*
 * pvdc: paravirtual display controller - vblank timelines, the timer and
 * interrupts.
 *
 * Vblanks are not events the device generates: they are instants derived
 * from QEMU_CLOCK_VIRTUAL and the active mode of each head, so the
 * counters can be read at any time without a timer.  The single timer is
 * only armed while something has to happen at a given instant: a commit
 * reaching its latch point, or a vblank whose interrupt is enabled and
 * not already pending.  It runs at most once per PVDC_MIN_FRAME_PERIOD_NS
 * for the whole device, whatever the number of heads; what falls due in
 * between is done together at its next run, and by any register access
 * before that (pvdc_catch_up()), so the guest never sees the difference
 * except in when its interrupts arrive.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "hw/pci/msi.h"
#include "pvdc-internal.h"
#include "trace.h"

static uint64_t pvdc_vblanks_since_enable(PVDCHead *head, int64_t now)
{
    if (!pvdc_head_on(head) || !head->period_ns || now <= head->enable_ns) {
        return 0;
    }
    return (uint64_t)(now - head->enable_ns) / head->period_ns;
}

/*
 * Vblank @n of the timeline, or INT64_MAX if it lies beyond the end of
 * QEMU_CLOCK_VIRTUAL: nothing waits for it then.
 */
static int64_t pvdc_vblank_at(PVDCHead *head, uint64_t n)
{
    uint64_t room = INT64_MAX - head->enable_ns;

    if (!head->period_ns || n > room / head->period_ns) {
        return INT64_MAX;
    }
    return head->enable_ns + n * head->period_ns;
}

uint64_t pvdc_vblank_count(PVDCHead *head, int64_t now)
{
    return head->base_count + pvdc_vblanks_since_enable(head, now);
}

int64_t pvdc_vblank_time(PVDCHead *head, int64_t now)
{
    if (!pvdc_head_on(head)) {
        return head->last_vblank_ns;
    }
    return pvdc_vblank_at(head, pvdc_vblanks_since_enable(head, now));
}

int64_t pvdc_next_vblank(PVDCHead *head, int64_t after)
{
    return pvdc_vblank_at(head, pvdc_vblanks_since_enable(head, after) + 1);
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

/* What the arithmetic above relies on, for a state loaded from a stream. */
bool pvdc_timeline_valid(PVDCHead *head)
{
    return head->enable_ns >= 0 && head->last_vblank_ns >= 0 &&
           head->irq_vblank_count >= head->base_count;
}

/*
 * A vblank of head @h would change something the guest sees: its
 * interrupt is enabled and not pending already.
 */
static bool pvdc_vblank_irq_due(PVDCState *s, unsigned int h)
{
    uint32_t bit = PVDC_INT(h, PVDC_INT_VBLANK);

    return pvdc_head_on(&s->heads[h]) && (s->int_enable & bit) &&
           !(s->int_status & bit);
}

/* Report the vblanks up to @now; returns whether there were any. */
static bool pvdc_vblank_irqs(PVDCState *s, int64_t now)
{
    bool any = false;
    unsigned int h;

    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCHead *head = &s->heads[h];
        uint64_t count = pvdc_vblank_count(head, now);

        if (count == head->irq_vblank_count) {
            continue;
        }
        head->irq_vblank_count = count;
        any = true;
        trace_pvdc_vblank(h, count, pvdc_vblank_time(head, now));
        if (pvdc_head_on(head) &&
            (s->int_enable & PVDC_INT(h, PVDC_INT_VBLANK))) {
            s->int_status |= PVDC_INT(h, PVDC_INT_VBLANK);
        }
    }
    return any;
}

/*
 * Returns whether anything happened, for the caller to re-arm the timer.
 * The interrupt bits of everything that fell due are set first and sent
 * together, in one message: a run of the timer or a register access sends
 * at most one, however many heads and latch points it covers.
 */
static bool pvdc_catch_up_to(PVDCState *s, int64_t now)
{
    uint32_t status = s->int_status;
    uint32_t was_pending = status & s->int_enable;
    bool any = false;
    int64_t when = 0;

    /*
     * A commit latched at a vblank starts the frame after it: the vblanks
     * up to each latch point are reported with the state before it.
     */
    while (pvdc_next_latch(s, &when) && when <= now) {
        any |= pvdc_vblank_irqs(s, when);
        pvdc_latch_due_commits(s, when);
        any = true;
    }
    any |= pvdc_vblank_irqs(s, now);
    if (s->int_status != status) {
        pvdc_irq_update(s, was_pending);
    }
    return any;
}

void pvdc_catch_up(PVDCState *s, int64_t now)
{
    if (pvdc_catch_up_to(s, now)) {
        pvdc_timer_update(s);
    }
}

void pvdc_timer_update(PVDCState *s)
{
    int64_t deadline = INT64_MAX;
    int64_t latch = 0;
    unsigned int h;

    /* Once unrealized the timer stays stopped until it is freed. */
    if (!pvdc_alive(s)) {
        return;
    }
    if (pvdc_next_latch(s, &latch)) {
        deadline = latch;
    }
    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCHead *head = &s->heads[h];

        if (pvdc_vblank_irq_due(s, h)) {
            /* The first vblank not reported yet, even if already past. */
            deadline = MIN(deadline,
                           pvdc_vblank_at(head, head->irq_vblank_count -
                                                head->base_count + 1));
        }
    }

    if (deadline != INT64_MAX) {
        /* One device-wide bound on the rate, whatever the heads do. */
        deadline = MAX(deadline,
                       s->timer_last_ns + PVDC_MIN_FRAME_PERIOD_NS);
        timer_mod(s->timer, deadline);
    } else {
        timer_del(s->timer);
    }
    trace_pvdc_timer_update(deadline != INT64_MAX,
                            deadline != INT64_MAX ? deadline : 0);
}

void pvdc_timer_cb(void *opaque)
{
    PVDCState *s = opaque;
    MemReentrancyGuard *guard = &DEVICE(s)->mem_reentrancy_guard;
    bool guarded = guard->engaged_in_io;
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);

    if (!pvdc_alive(s)) {
        return;
    }
    /* An interrupt message may unplug the device: keep it until the end. */
    object_ref(OBJECT(s));
    s->timer_callbacks++;
    s->timer_last_ns = now;
    /*
     * An MSI is a DMA write to a guest-chosen address: if it points at
     * BAR0 it must not reach the registers while a latch is half done.
     */
    guard->engaged_in_io = true;
    pvdc_catch_up_to(s, now);
    pvdc_timer_update(s);
    guard->engaged_in_io = guarded;
    object_unref(OBJECT(s));
}

void pvdc_irq_update(PVDCState *s, uint32_t was_pending)
{
    PCIDevice *pci = PCI_DEVICE(s);
    uint32_t pending = s->int_status & s->int_enable;
    bool use_msi;

    /* The previous message may have unplugged the device: no bus left. */
    if (!pvdc_alive(s)) {
        return;
    }
    use_msi = msi_enabled(pci);

    pci_set_irq(pci, !use_msi && pending);
    if (use_msi && (pending & ~was_pending)) {
        msi_notify(pci, 0);
    }
    trace_pvdc_irq(s->int_status, s->int_enable, use_msi);
}

void pvdc_irq_raise(PVDCState *s, uint32_t bits)
{
    uint32_t was_pending = s->int_status & s->int_enable;

    s->int_status |= bits;
    pvdc_irq_update(s, was_pending);
}

void pvdc_set_int_enable(PVDCState *s, uint32_t val)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    uint32_t was_pending = s->int_status & s->int_enable;
    unsigned int h;

    for (h = 0; h < s->conf.num_heads; h++) {
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
