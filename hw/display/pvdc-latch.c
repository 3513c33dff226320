/*
 * pvdc: paravirtual display controller - the latch of atomic commits.
 *
 * A doorbell snapshots the shadow state of a head (and of the planes bound
 * to it) into its armed state and fixes the instant it latches.  At that
 * instant the armed state of the whole group is checked against the rules
 * (pvdc-rules.c) and becomes active all at once, or not at all.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "pvdc-internal.h"
#include "trace.h"

static void pvdc_apply_commit(PVDCCommitView *v, int64_t when)
{
    PVDCState *s = v->s;
    unsigned int h, p;

    /* Planes only move between heads of the group (pvdc_plane_busy). */
    for (p = 0; p < s->num_planes; p++) {
        if (v->owner[p] >= 0) {
            s->planes[p].active = *v->plane[p];
        }
    }
    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCHead *head = &s->heads[h];
        bool was_on = pvdc_head_on(head);
        uint32_t old_connector = head->active.regs[R_HS_CONNECTOR];
        bool on = FIELD_EX32(head->armed.regs[R_HS_CTRL], HS_CTRL, ENABLE);

        if (!(v->group & BIT(h))) {
            continue;
        }
        if (was_on && !on) {
            pvdc_timeline_disable(head, when);
        }
        if (was_on != on) {
            /* A route changes only here (PVDC_ERR_MODESET_REQUIRED). */
            trace_pvdc_route(h, on ? head->armed.regs[R_HS_CONNECTOR]
                                   : old_connector, on);
        }
        head->active = head->armed;
        /* pvdc series: color */
        pvdc_color_latch(head);
        /* pvdc series: end color */
        if (!was_on && on) {
            pvdc_timeline_enable(head, when);
            /* pvdc series: boot */
            pvdc_boot_end(s);
            /* pvdc series: end boot */
        }
        /* pvdc series: console */
        pvdc_console_head_latched(head, was_on, old_connector);
        /* pvdc series: end console */
        /* pvdc series: capture */
        pvdc_crc_invalidate(head);
        /* pvdc series: end capture */
    }
}

/* pvdc series: capture */
/*
 * The first latch point of @head after @when and not before @target:
 * a vblank of an enabled head, a frame of the armed mode after @when
 * for a head the commit enables (its timeline would start at the
 * latch), @target for a head that stays disabled.  INT64_MAX if beyond
 * the end of QEMU_CLOCK_VIRTUAL.
 */
static int64_t pvdc_latch_point_from(PVDCHead *head, int64_t when,
                                     int64_t target)
{
    uint64_t period, frames;

    if (pvdc_head_on(head)) {
        return pvdc_next_vblank(head, MAX(target - 1, when));
    }
    if (!FIELD_EX32(head->armed.regs[R_HS_CTRL], HS_CTRL, ENABLE)) {
        return target;
    }
    /* A validated mode: at least PVDC_MIN_FRAME_PERIOD_NS. */
    period = pvdc_mode_period_ns(&head->armed);
    if (!period) {
        return INT64_MAX;
    }
    frames = MAX(DIV_ROUND_UP((uint64_t)(target - when), period), 1);
    if (frames > (uint64_t)(INT64_MAX - when) / period) {
        return INT64_MAX;
    }
    return when + frames * period;
}

/*
 * A commit that writes back while compositions have overdrawn their
 * budget stays armed, all or nothing, until the latest of its members'
 * first latch points at which the budget is paid back: only time refills
 * it, so waiting frame by frame would reach the same one, one timer run
 * per frame later.  The guest cannot make the host compose faster, and
 * no frame is dropped.  Returns whether the group was deferred.
 */
static bool pvdc_writeback_defer(PVDCState *s, uint32_t group, int64_t when)
{
    int64_t wait, latch = when;
    bool writes = false;
    unsigned int h;

    for (h = 0; h < s->conf.num_heads; h++) {
        writes |= (group & BIT(h)) &&
                  FIELD_EX32(s->heads[h].armed.regs[R_HS_CTRL], HS_CTRL,
                             WRITEBACK);
    }
    wait = writes ? pvdc_budget_wait(s, when) : 0;
    if (!wait) {
        return false;
    }
    for (h = 0; h < s->conf.num_heads; h++) {
        if (group & BIT(h)) {
            latch = MAX(latch, pvdc_latch_point_from(&s->heads[h], when,
                                                     when + wait));
        }
    }
    /* Nothing would ever latch it: write it now rather than never. */
    if (latch == INT64_MAX) {
        return false;
    }
    for (h = 0; h < s->conf.num_heads; h++) {
        if (group & BIT(h)) {
            s->heads[h].latch_ns = latch;
        }
    }
    trace_pvdc_writeback_deferred(group, when, latch);
    return true;
}

/* pvdc series: end capture */
static void pvdc_latch_group(PVDCState *s, uint32_t group, int64_t when)
{
    PVDCCommitView view;
    unsigned int failed = 0;
    uint32_t err;
    unsigned int h;

    pvdc_commit_view_init(&view, s, group);
    err = pvdc_check_commit(&view, &failed);
    /* pvdc series: capture */
    if (!err && pvdc_writeback_defer(s, group, when)) {
        return;
    }
    /* pvdc series: end capture */
    if (!err) {
        pvdc_apply_commit(&view, when);
        /* pvdc series: capture */
        /* The frame is in VRAM before DONE_SEQ says the commit applied. */
        for (h = 0; h < s->conf.num_heads; h++) {
            if ((group & BIT(h)) &&
                FIELD_EX32(s->heads[h].active.regs[R_HS_CTRL], HS_CTRL,
                           WRITEBACK)) {
                pvdc_writeback(&s->heads[h], when);
            }
        }
        /* pvdc series: end capture */
    } else {
        char where[32];

        pvdc_error_where(err, where, sizeof(where));
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: head %u: commit %u refused: "
                      "%s%s\n", failed, s->heads[failed].armed_seq,
                      pvdc_error_name(err), where);
    }

    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCHead *head = &s->heads[h];

        if (!(group & BIT(h))) {
            continue;
        }
        head->is_armed = false;
        /* pvdc series: color */
        /* Moved to the active state if applied: freed if refused. */
        pvdc_color_clear(&head->armed_color);
        /* pvdc series: end color */
        head->done_seq = head->armed_seq;
        /*
         * After the commit applied: an enable counts from the count it
         * starts at, a disable froze the count at @when.
         */
        head->done_frame = pvdc_vblank_count(head, when);
        if (!err) {
            head->result = PVDC_RESULT_APPLIED;
            s->commits_applied++;
        } else if (h == failed) {
            head->result = err;
        } else {
            head->result = pvdc_head_error(PVDC_ERR_GROUP);
        }
        if (err) {
            s->commits_rejected++;
        }
        /* Sent once the catch-up is done (pvdc_catch_up()). */
        s->int_status |= PVDC_INT(h, err ? PVDC_INT_COMMIT_REJECTED
                                         : PVDC_INT_COMMIT_DONE);
        trace_pvdc_commit_latched(h, head->done_seq, head->result, when);
    }
}

void pvdc_latch_due_commits(PVDCState *s, int64_t now)
{
    int64_t when = 0;

    /*
     * Each round disarms at least one head or defers a group to a later
     * latch point, by at least the time the budget needs to be paid
     * back: this ends.
     */
    while (pvdc_next_latch(s, &when) && when <= now) {
        unsigned int h;

        for (h = 0; h < s->conf.num_heads; h++) {
            if (s->heads[h].is_armed && s->heads[h].latch_ns == when) {
                pvdc_latch_group(s, s->heads[h].group, when);
                break;
            }
        }
    }
}

bool pvdc_next_latch(PVDCState *s, int64_t *when)
{
    bool found = false;
    unsigned int h;

    /* x-stall: armed commits wait, their latch point stays where it was. */
    if (s->stalled) {
        return false;
    }
    for (h = 0; h < s->conf.num_heads; h++) {
        if (s->heads[h].is_armed &&
            (!found || s->heads[h].latch_ns < *when)) {
            *when = s->heads[h].latch_ns;
            found = true;
        }
    }
    return found;
}

uint32_t pvdc_armed_mask(PVDCState *s)
{
    uint32_t mask = 0;
    unsigned int h;

    for (h = 0; h < s->conf.num_heads; h++) {
        if (s->heads[h].is_armed) {
            mask |= BIT(h);
        }
    }
    return mask;
}

/*
 * Take the shadow state of head @h and of the planes bound to it.  A
 * group's commit carries each plane once: an amend takes such a plane
 * from the other members of its group, as the guest rebound it last.
 */
static void pvdc_snapshot_head(PVDCState *s, unsigned int h)
{
    PVDCHead *head = &s->heads[h];
    unsigned int k, p;

    head->armed = head->shadow;
    /* pvdc series: color */
    pvdc_color_arm(s, head);
    /* pvdc series: end color */
    for (p = 0; p < s->num_planes; p++) {
        head->plane_armed[p] = s->planes[p].shadow.regs[R_PS_HEAD] == h;
        if (!head->plane_armed[p]) {
            continue;
        }
        head->armed_planes[p] = s->planes[p].shadow;
        for (k = 0; head->is_armed && k < s->conf.num_heads; k++) {
            if (k != h && (head->group & BIT(k)) &&
                s->heads[k].plane_armed[p]) {
                s->heads[k].plane_armed[p] = false;
                trace_pvdc_plane_moved_in_group(p, k, h);
            }
        }
    }
    head->armed_seq++;
}

/*
 * An enable latches when the head's pipe has run a frame of its new mode
 * and its link is up: no sooner than real hardware shows a modeset, which
 * is what a guest paces on.  A mode the rules refuse has no frame to wait
 * for: only the link.
 */
static int64_t pvdc_enable_latch(PVDCState *s, PVDCHead *head, int64_t now)
{
    uint64_t wait = (uint64_t)s->link_up_delay_ms * SCALE_MS;

    if (pvdc_mode_valid(s, &head->armed)) {
        wait = MAX(wait, pvdc_mode_period_ns(&head->armed));
    }
    /* INT64_MAX: beyond the end of QEMU_CLOCK_VIRTUAL, nothing latches. */
    return wait > (uint64_t)(INT64_MAX - now) ? INT64_MAX : now + wait;
}

static int64_t pvdc_arm_head(PVDCState *s, unsigned int h, int64_t now)
{
    PVDCHead *head = &s->heads[h];

    pvdc_snapshot_head(s, h);
    head->is_armed = true;
    trace_pvdc_commit_armed(h, head->armed_seq);

    if (pvdc_head_on(head)) {
        return pvdc_next_vblank(head, now);
    }
    if (FIELD_EX32(head->armed.regs[R_HS_CTRL], HS_CTRL, ENABLE)) {
        return pvdc_enable_latch(s, head, now);
    }
    return now;
}

/*
 * The register access that rang has caught up with every latch point
 * passed (pvdc_catch_up()): what is written after a latch point never
 * joins the commit that latched there.
 */
void pvdc_doorbell(PVDCState *s, uint32_t mask)
{
    int64_t now = qemu_clock_get_ns(QEMU_CLOCK_VIRTUAL);
    uint32_t busy = mask & pvdc_armed_mask(s);
    int64_t latch = now;
    unsigned int h;

    if (busy) {
        for (h = 0; h < s->conf.num_heads; h++) {
            if (busy & BIT(h)) {
                s->heads[h].status |= PVDC_HEAD_STATUS_DOORBELL_OVERRUN;
            }
        }
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: doorbell for heads 0x%x "
                      "ignored: heads 0x%x already have a commit armed\n",
                      mask, busy);
        trace_pvdc_doorbell_overrun(mask, busy);
        return;
    }

    for (h = 0; h < s->conf.num_heads; h++) {
        if (mask & BIT(h)) {
            latch = MAX(latch, pvdc_arm_head(s, h, now));
        }
    }
    for (h = 0; h < s->conf.num_heads; h++) {
        if (mask & BIT(h)) {
            s->heads[h].group = mask;
            s->heads[h].latch_ns = latch;
        }
    }
    trace_pvdc_doorbell(mask, latch);
    pvdc_timer_update(s);
}

/*
 * The armed commit of @h takes the shadow state again, keeping its latch
 * point and group: updates made while a commit waits for its vblank join
 * it instead of waiting for the next one.
 */
void pvdc_doorbell_amend(PVDCState *s, unsigned int h)
{
    PVDCHead *head = &s->heads[h];

    if (!head->is_armed) {
        pvdc_doorbell(s, BIT(h));
        return;
    }
    pvdc_snapshot_head(s, h);
    trace_pvdc_commit_amended(h, head->armed_seq, head->latch_ns);
    pvdc_timer_update(s);
}
