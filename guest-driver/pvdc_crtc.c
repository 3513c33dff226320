// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: heads (CRTCs), their vblanks and the commit tail.
 *
 * A commit writes the shadow registers of the heads and planes it changes
 * and rings one doorbell per head (one MULTI_DOORBELL for a modeset that
 * spans heads).  The device applies the armed state at the head's next
 * vblank and raises COMMIT_DONE, which completes the commit's event.  Timings
 * and the bandwidth allocation of an enabled head cannot change, so a
 * modeset of an enabled head is a commit that disables it, waited for,
 * followed by the commit that enables it with the new state.
 */

#include <linux/math64.h>

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_helper.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <drm/drm_vblank.h>

#include "pvdc_drv.h"

/*
 * How long the device may take to complete a commit beyond three frames:
 * enabling a head waits for its link, whose delay the driver cannot read.
 */
#define PVDC_COMMIT_TIMEOUT_MS	2000

/* Largest step the clock offset estimate may take upwards per vblank. */
#define PVDC_CLOCK_SLEW_NS	50000

static struct pvdc_device *crtc_to_pvdc(struct drm_crtc *crtc)
{
	return to_pvdc(crtc->dev);
}

/* ------------------------------------------------------------------------ */
/* Modes                                                                    */
/* ------------------------------------------------------------------------ */

u32 pvdc_mode_period_ns(const struct drm_display_mode *mode)
{
	u64 pixels = (u64)mode->htotal * mode->vtotal * 1000000;

	if (!mode->clock)
		return 0;

	return min_t(u64, div_u64(pixels, mode->clock), U32_MAX);
}

/* The device's MODE rule, plus what its 16-bit fields can hold. */
enum drm_mode_status pvdc_mode_check(struct pvdc_device *pvdc,
				     const struct drm_display_mode *mode)
{
	if (mode->flags & DRM_MODE_FLAG_INTERLACE)
		return MODE_NO_INTERLACE;
	if (mode->flags & DRM_MODE_FLAG_DBLSCAN)
		return MODE_NO_DBLESCAN;
	if (mode->hdisplay < 1 || mode->hdisplay > pvdc->max_width)
		return MODE_BAD_HVALUE;
	if (mode->vdisplay < 1 || mode->vdisplay > pvdc->max_height)
		return MODE_BAD_VVALUE;
	if (mode->hsync_start < mode->hdisplay ||
	    mode->hsync_end < mode->hsync_start ||
	    mode->htotal < mode->hsync_end || mode->htotal > 0xffff)
		return MODE_H_ILLEGAL;
	if (mode->vsync_start < mode->vdisplay ||
	    mode->vsync_end < mode->vsync_start ||
	    mode->vtotal < mode->vsync_end || mode->vtotal > 0xffff)
		return MODE_V_ILLEGAL;
	if (mode->clock < 1)
		return MODE_CLOCK_LOW;
	if (mode->clock > PVDC_MAX_PIXEL_CLOCK_KHZ ||
	    pvdc_mode_period_ns(mode) < PVDC_MIN_FRAME_PERIOD_NS)
		return MODE_CLOCK_HIGH;

	return MODE_OK;
}

/* ------------------------------------------------------------------------ */
/* State                                                                    */
/* ------------------------------------------------------------------------ */

static void pvdc_crtc_reset(struct drm_crtc *crtc)
{
	struct pvdc_crtc_state *state;

	if (crtc->state)
		crtc->funcs->atomic_destroy_state(crtc, crtc->state);

	state = kzalloc(sizeof(*state), GFP_KERNEL);
	__drm_atomic_helper_crtc_reset(crtc, state ? &state->base : NULL);
}

static struct drm_crtc_state *
pvdc_crtc_duplicate_state(struct drm_crtc *crtc)
{
	struct pvdc_crtc_state *old = to_pvdc_crtc_state(crtc->state);
	struct pvdc_crtc_state *state;

	state = kmemdup(old, sizeof(*state), GFP_KERNEL);
	if (!state)
		return NULL;
	__drm_atomic_helper_crtc_duplicate_state(crtc, &state->base);
	state->event = NULL;

	return &state->base;
}

static void pvdc_crtc_destroy_state(struct drm_crtc *crtc,
				    struct drm_crtc_state *state)
{
	__drm_atomic_helper_crtc_destroy_state(state);
	kfree(to_pvdc_crtc_state(state));
}

/* ------------------------------------------------------------------------ */
/* Checks                                                                   */
/* ------------------------------------------------------------------------ */

static enum drm_mode_status
pvdc_crtc_mode_valid(struct drm_crtc *crtc, const struct drm_display_mode *mode)
{
	return pvdc_mode_check(crtc_to_pvdc(crtc), mode);
}

/*
 * Sums over the planes the head will scan out.  Runs after the planes'
 * atomic_check, which derived each plane's share; planes of this head that
 * are not in the commit keep the values of their last check.
 */
static int pvdc_crtc_atomic_check(struct drm_crtc *crtc,
				  struct drm_atomic_state *state)
{
	struct drm_crtc_state *crtc_state =
		drm_atomic_get_new_crtc_state(state, crtc);
	struct pvdc_crtc_state *pstate = to_pvdc_crtc_state(crtc_state);
	struct pvdc_device *pvdc = crtc_to_pvdc(crtc);
	const struct drm_plane_state *plane_state;
	struct drm_plane *plane;

	if (crtc_state->enable &&
	    pvdc_mode_check(pvdc, &crtc_state->adjusted_mode) != MODE_OK) {
		drm_dbg_atomic(&pvdc->drm, "[CRTC:%d] invalid mode\n",
			       crtc->base.id);
		return -EINVAL;
	}

	pstate->need = 0;
	pstate->scalers = 0;
	pstate->num_enabled = 0;
	drm_atomic_crtc_state_for_each_plane_state(plane, plane_state,
						   crtc_state) {
		const struct pvdc_plane_state *ps =
			to_pvdc_plane_state(plane_state);

		if (!ps->enabled)
			continue;
		pstate->num_enabled++;
		pstate->need += ps->bandwidth;
		if (ps->scaled)
			pstate->scalers++;
		/* The device's zpos range is one head's plane count. */
		if (plane_state->normalized_zpos >=
		    pvdc_planes_per_head(pvdc)) {
			drm_dbg_atomic(&pvdc->drm,
				       "[CRTC:%d] over %u planes enabled\n",
				       crtc->base.id,
				       pvdc_planes_per_head(pvdc));
			return -EINVAL;
		}
	}

	return 0;
}

/*
 * Modeset every enabled head that keeps its allocation, so that all of them
 * are allocated again from what they need.  Only for commits that allow
 * modesets: the core refuses to add CRTCs to the others.
 */
static int pvdc_resplit_bandwidth(struct drm_atomic_state *state,
				  const struct pvdc_global_state *global,
				  bool *rerun)
{
	struct drm_crtc_state *crtc_state;
	struct drm_crtc *crtc;

	drm_for_each_crtc(crtc, state->dev) {
		crtc_state = drm_atomic_get_new_crtc_state(state, crtc);
		if (crtc_state && drm_atomic_crtc_needs_modeset(crtc_state))
			continue;
		if (!global->bandwidth[drm_crtc_index(crtc)])
			continue;

		crtc_state = drm_atomic_get_crtc_state(state, crtc);
		if (IS_ERR(crtc_state))
			return PTR_ERR(crtc_state);
		drm_dbg_atomic(state->dev, "[CRTC:%d] modeset for bandwidth\n",
			       crtc->base.id);
		crtc_state->mode_changed = true;
		*rerun = true;
	}

	return 0;
}

/*
 * The scaler pool and the bandwidth are shared by all heads.  An enabled
 * head keeps its bandwidth allocation (the device refuses to change it); a
 * plane update that needs more becomes a modeset of the head, which the
 * core refuses without DRM_MODE_ATOMIC_ALLOW_MODESET.  A head that is
 * (re)enabled gets what its planes need plus up to a fair share of what is
 * left, so that later plane updates rarely need a new split.
 */
int pvdc_crtc_global_check(struct drm_atomic_state *state, bool *rerun)
{
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct drm_crtc_state *old_state, *new_state;
	struct pvdc_global_state *global;
	unsigned int scalers = 0, h;
	bool need_global = false;
	struct drm_crtc *crtc;
	u32 used = 0, share, slack;
	int i, ret;

	*rerun = false;
	for_each_oldnew_crtc_in_state(state, crtc, old_state, new_state, i) {
		struct pvdc_crtc_state *po = to_pvdc_crtc_state(old_state);
		struct pvdc_crtc_state *pn = to_pvdc_crtc_state(new_state);

		if (!drm_atomic_crtc_needs_modeset(new_state)) {
			if (new_state->active && pn->need > pn->bandwidth) {
				drm_dbg_atomic(&pvdc->drm,
					       "[CRTC:%d] needs %u KiB, has %u: modeset\n",
					       crtc->base.id, pn->need,
					       pn->bandwidth);
				new_state->mode_changed = true;
				*rerun = true;
			}
			if (pn->scalers != po->scalers)
				need_global = true;
		} else {
			need_global = true;
		}
	}
	if (*rerun || !need_global)
		return 0;

	global = pvdc_get_global_state(state);
	if (IS_ERR(global))
		return PTR_ERR(global);

	for_each_new_crtc_in_state(state, crtc, new_state, i) {
		h = drm_crtc_index(crtc);
		global->scalers[h] = to_pvdc_crtc_state(new_state)->scalers;
		if (drm_atomic_crtc_needs_modeset(new_state))
			global->bandwidth[h] = 0;
	}
	for (h = 0; h < pvdc->num_heads; h++) {
		scalers += global->scalers[h];
		used += global->bandwidth[h];
	}
	if (scalers > pvdc->num_scalers) {
		drm_dbg_atomic(&pvdc->drm, "%u scaled planes, %u scalers\n",
			       scalers, pvdc->num_scalers);
		return -EINVAL;
	}

	for_each_new_crtc_in_state(state, crtc, new_state, i) {
		if (drm_atomic_crtc_needs_modeset(new_state) &&
		    new_state->active)
			used += to_pvdc_crtc_state(new_state)->need;
	}
	if (used > pvdc->bandwidth_total) {
		/* The other heads may hold more than they need. */
		if (state->allow_modeset) {
			ret = pvdc_resplit_bandwidth(state, global, rerun);
			if (ret || *rerun)
				return ret;
		}
		drm_dbg_atomic(&pvdc->drm, "needs %u KiB of bandwidth, has %u\n",
			       used, pvdc->bandwidth_total);
		return -EINVAL;
	}

	slack = pvdc->bandwidth_total - used;
	share = pvdc->bandwidth_total / pvdc->num_heads;
	for_each_new_crtc_in_state(state, crtc, new_state, i) {
		struct pvdc_crtc_state *pn = to_pvdc_crtc_state(new_state);
		u32 extra = 0;

		if (!drm_atomic_crtc_needs_modeset(new_state))
			continue;
		if (!new_state->active) {
			pn->bandwidth = 0;
			continue;
		}
		if (share > pn->need)
			extra = min(share - pn->need, slack);
		slack -= extra;
		pn->bandwidth = pn->need + extra;
		global->bandwidth[drm_crtc_index(crtc)] = pn->bandwidth;
	}

	return 0;
}

/* ------------------------------------------------------------------------ */
/* Commit completion                                                        */
/* ------------------------------------------------------------------------ */

/* Called from the interrupt, or by a waiter that gave up on it. */
void pvdc_head_commit_done(struct pvdc_head *head, bool rejected)
{
	struct pvdc_device *pvdc = head->pvdc;
	struct drm_device *drm = &pvdc->drm;
	struct drm_pending_vblank_event *event;
	unsigned long flags;
	bool armed;

	spin_lock_irqsave(&pvdc->irq_lock, flags);
	armed = head->armed;
	head->armed = false;
	event = head->event;
	head->event = NULL;
	spin_unlock_irqrestore(&pvdc->irq_lock, flags);

	if (rejected) {
		u32 result = pvdc_read(pvdc, PVDC_HEAD_CONTROL(head->index) +
				       PVDC_HEAD_RESULT);

		drm_err_ratelimited(drm,
				    "head %u: device refused commit: error %#x, plane %u\n",
				    head->index, result & PVDC_RESULT_CODE_MASK,
				    (result >> PVDC_RESULT_PLANE_SHIFT) &
				    PVDC_RESULT_PLANE_MASK);
	} else if (!armed) {
		drm_dbg_kms(drm, "head %u: completion without commit\n",
			    head->index);
	}

	if (event) {
		spin_lock_irqsave(&drm->event_lock, flags);
		drm_crtc_send_vblank_event(&head->crtc, event);
		spin_unlock_irqrestore(&drm->event_lock, flags);
		drm_crtc_vblank_put(&head->crtc);
	}

	wake_up_all(&pvdc->commit_wq);
}

static long pvdc_head_timeout(const struct drm_display_mode *mode)
{
	u32 period_ms = DIV_ROUND_UP(pvdc_mode_period_ns(mode), NSEC_PER_MSEC);

	return msecs_to_jiffies(PVDC_COMMIT_TIMEOUT_MS + 3 * period_ms);
}

/* A device that never answers must not hang user space. */
static void pvdc_head_give_up(struct pvdc_head *head)
{
	struct pvdc_device *pvdc = head->pvdc;
	int idx;

	if (drm_dev_enter(&pvdc->drm, &idx)) {
		u32 base = PVDC_HEAD_CONTROL(head->index);

		drm_err(&pvdc->drm,
			"head %u: commit %u not completed (armed %u, done %u)\n",
			head->index, head->armed_seq,
			pvdc_read(pvdc, base + PVDC_HEAD_ARMED_SEQ),
			pvdc_read(pvdc, base + PVDC_HEAD_DONE_SEQ));
		drm_dev_exit(idx);
	}
	pvdc_head_commit_done(head, false);
}

static bool pvdc_head_try_claim(struct pvdc_head *head,
				struct drm_pending_vblank_event **event)
{
	struct pvdc_device *pvdc = head->pvdc;
	bool claimed = false;

	spin_lock_irq(&pvdc->irq_lock);
	if (!head->armed) {
		head->armed = true;
		head->armed_seq++;
		head->event = *event;
		*event = NULL;
		claimed = true;
	}
	spin_unlock_irq(&pvdc->irq_lock);

	return claimed;
}

/*
 * Take the head for a doorbell, handing it the event to complete.  The
 * device refuses a doorbell while a commit is armed.  The atomic helpers
 * serialise commits per CRTC, except legacy cursor updates, which do not
 * wait for the previous commit: they wait here.
 */
static void pvdc_head_claim(struct pvdc_head *head,
			    const struct drm_display_mode *mode,
			    struct drm_pending_vblank_event **event)
{
	struct pvdc_device *pvdc = head->pvdc;

	while (!wait_event_timeout(pvdc->commit_wq,
				   pvdc_head_try_claim(head, event),
				   pvdc_head_timeout(mode)))
		pvdc_head_give_up(head);
}

static bool pvdc_head_idle(struct pvdc_head *head)
{
	struct pvdc_device *pvdc = head->pvdc;
	bool armed;

	spin_lock_irq(&pvdc->irq_lock);
	armed = head->armed;
	spin_unlock_irq(&pvdc->irq_lock);

	return !armed;
}

static void pvdc_head_wait(struct pvdc_head *head, long timeout)
{
	struct pvdc_device *pvdc = head->pvdc;

	if (!wait_event_timeout(pvdc->commit_wq, pvdc_head_idle(head),
				timeout))
		pvdc_head_give_up(head);
}

/* ------------------------------------------------------------------------ */
/* Enable, disable, flush                                                   */
/* ------------------------------------------------------------------------ */

static void pvdc_crtc_atomic_enable(struct drm_crtc *crtc,
				    struct drm_atomic_state *state)
{
	struct drm_crtc_state *crtc_state =
		drm_atomic_get_new_crtc_state(state, crtc);
	const struct drm_display_mode *mode = &crtc_state->adjusted_mode;
	struct pvdc_device *pvdc = crtc_to_pvdc(crtc);
	u32 base = PVDC_HEAD_SHADOW(drm_crtc_index(crtc));
	int idx;

	if (drm_dev_enter(&pvdc->drm, &idx)) {
		pvdc_write(pvdc, base + PVDC_HS_HTIMING,
			   PVDC_XY(mode->hdisplay, mode->htotal));
		pvdc_write(pvdc, base + PVDC_HS_HSYNC,
			   PVDC_XY(mode->hsync_start, mode->hsync_end));
		pvdc_write(pvdc, base + PVDC_HS_VTIMING,
			   PVDC_XY(mode->vdisplay, mode->vtotal));
		pvdc_write(pvdc, base + PVDC_HS_VSYNC,
			   PVDC_XY(mode->vsync_start, mode->vsync_end));
		pvdc_write(pvdc, base + PVDC_HS_PIXEL_CLOCK, mode->clock);
		pvdc_write(pvdc, base + PVDC_HS_BANDWIDTH,
			   to_pvdc_crtc_state(crtc_state)->bandwidth);
		pvdc_write(pvdc, base + PVDC_HS_BACKGROUND, 0);
		pvdc_write(pvdc, base + PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
		drm_dev_exit(idx);
	}

	/* The doorbell is rung by the commit tail, with the planes. */
	drm_crtc_vblank_on(crtc);
}

/* The hardware side of the disable is pvdc_disable_heads(), for all heads. */
static void pvdc_crtc_atomic_disable(struct drm_crtc *crtc,
				     struct drm_atomic_state *state)
{
	drm_crtc_vblank_off(crtc);
}

/*
 * The event of a head that stays or becomes active is completed by the
 * COMMIT_DONE interrupt of the doorbell the tail rings next; the vblank
 * reference keeps the counter exact until then.
 */
static void pvdc_crtc_atomic_flush(struct drm_crtc *crtc,
				   struct drm_atomic_state *state)
{
	struct drm_crtc_state *crtc_state =
		drm_atomic_get_new_crtc_state(state, crtc);
	struct drm_pending_vblank_event *event = crtc_state->event;

	if (!event)
		return;
	crtc_state->event = NULL;

	if (crtc_state->active && drm_crtc_vblank_get(crtc) == 0) {
		to_pvdc_crtc_state(crtc_state)->event = event;
		return;
	}

	spin_lock_irq(&crtc->dev->event_lock);
	drm_crtc_send_vblank_event(crtc, event);
	spin_unlock_irq(&crtc->dev->event_lock);
}

/* ------------------------------------------------------------------------ */
/* Commit tail                                                              */
/* ------------------------------------------------------------------------ */

/* Inside drm_dev_enter(), with the heads of @mask claimed. */
static void pvdc_ring(struct pvdc_device *pvdc, u32 mask, bool group)
{
	unsigned int h;

	if (group && hweight32(mask) > 1 &&
	    (pvdc->features & PVDC_FEATURE_MULTI_HEAD_COMMIT)) {
		pvdc_write(pvdc, PVDC_REG_MULTI_DOORBELL, mask);
		return;
	}
	for (h = 0; h < pvdc->num_heads; h++)
		if (mask & BIT(h))
			pvdc_write(pvdc, PVDC_HEAD_CONTROL(h) +
				   PVDC_HEAD_DOORBELL, 1);
}

/*
 * The device refuses new timings or a new bandwidth allocation on an
 * enabled head: turn off every enabled head this commit modesets, as one
 * group, and wait for it before anything is enabled again.
 */
static void pvdc_disable_heads(struct drm_atomic_state *state)
{
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct drm_crtc_state *old_state, *new_state;
	struct drm_pending_vblank_event *no_event;
	struct drm_plane_state *old_plane_state;
	struct drm_plane *plane;
	struct drm_crtc *crtc;
	u32 mask = 0;
	int i, idx;

	for_each_oldnew_crtc_in_state(state, crtc, old_state, new_state, i) {
		if (old_state->active &&
		    drm_atomic_crtc_needs_modeset(new_state))
			mask |= drm_crtc_mask(crtc);
	}
	if (!mask || !drm_dev_enter(&pvdc->drm, &idx))
		return;

	for_each_old_crtc_in_state(state, crtc, old_state, i) {
		struct pvdc_head *head = to_pvdc_head(crtc);

		if (!(mask & drm_crtc_mask(crtc)))
			continue;
		no_event = NULL;
		pvdc_head_claim(head, &old_state->adjusted_mode, &no_event);
		pvdc_write(pvdc, PVDC_HEAD_SHADOW(head->index) + PVDC_HS_CTRL,
			   0);
	}
	/* The device refuses enabled planes on a disabled head. */
	for_each_old_plane_in_state(state, plane, old_plane_state, i) {
		unsigned int p = to_pvdc_plane(plane)->index;

		if (old_plane_state->crtc &&
		    mask & drm_crtc_mask(old_plane_state->crtc))
			pvdc_write(pvdc, PVDC_PLANE_SHADOW(p) + PVDC_PS_CTRL, 0);
	}
	pvdc_ring(pvdc, mask, true);
	drm_dev_exit(idx);

	for_each_old_crtc_in_state(state, crtc, old_state, i) {
		if (mask & drm_crtc_mask(crtc))
			pvdc_head_wait(to_pvdc_head(crtc),
				       pvdc_head_timeout(&old_state->adjusted_mode));
	}
}

static u32 pvdc_ring_doorbells(struct drm_atomic_state *state)
{
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct drm_crtc_state *crtc_state;
	struct drm_crtc *crtc;
	bool modeset = false;
	unsigned int h;
	u32 mask = 0;
	int i, idx;

	/* In CRTC order, so that concurrent tails cannot deadlock. */
	for_each_new_crtc_in_state(state, crtc, crtc_state, i) {
		if (!crtc_state->active)
			continue;
		pvdc_head_claim(to_pvdc_head(crtc), &crtc_state->adjusted_mode,
				&to_pvdc_crtc_state(crtc_state)->event);
		mask |= drm_crtc_mask(crtc);
		modeset |= drm_atomic_crtc_needs_modeset(crtc_state);
	}
	if (!mask)
		return 0;

	if (!drm_dev_enter(&pvdc->drm, &idx)) {
		for (h = 0; h < pvdc->num_heads; h++)
			if (mask & BIT(h))
				pvdc_head_commit_done(&pvdc->heads[h], false);
		return 0;
	}
	/* A modeset spanning heads latches on all of them or on none. */
	pvdc_ring(pvdc, mask, modeset);
	drm_dev_exit(idx);

	return mask;
}

void pvdc_atomic_commit_tail(struct drm_atomic_state *state)
{
	struct drm_device *drm = state->dev;
	struct pvdc_device *pvdc = to_pvdc(drm);
	struct pvdc_global_state *global = pvdc_get_new_global_state(state);
	long timeout[PVDC_MAX_HEADS] = { 0 };
	struct drm_crtc_state *crtc_state;
	struct drm_crtc *crtc;
	unsigned int h;
	u32 rung;
	int i;

	if (global)
		pvdc_global_commit_begin(pvdc, global);

	/*
	 * A doorbell arms whatever the shadow registers hold: the writes of
	 * one commit must not be interleaved with another's doorbell.
	 */
	mutex_lock(&pvdc->hw_lock);
	pvdc_disable_heads(state);
	drm_atomic_helper_commit_modeset_disables(drm, state);
	drm_atomic_helper_commit_modeset_enables(drm, state);
	drm_atomic_helper_commit_planes(drm, state, 0);
	rung = pvdc_ring_doorbells(state);
	mutex_unlock(&pvdc->hw_lock);

	/*
	 * Once hw_done is signalled, the next commit on these CRTCs may swap
	 * in its states and free ours before we wait: nothing below may
	 * read the new CRTC states.
	 */
	for_each_new_crtc_in_state(state, crtc, crtc_state, i)
		timeout[drm_crtc_index(crtc)] =
			pvdc_head_timeout(&crtc_state->adjusted_mode);
	drm_atomic_helper_commit_hw_done(state);

	for (h = 0; h < pvdc->num_heads; h++) {
		if (rung & BIT(h))
			pvdc_head_wait(&pvdc->heads[h], timeout[h]);
	}
	drm_atomic_helper_wait_for_flip_done(drm, state);

	if (global)
		pvdc_global_commit_end(pvdc, global);

	drm_atomic_helper_cleanup_planes(drm, state);
}

/* ------------------------------------------------------------------------ */
/* Vblank                                                                   */
/* ------------------------------------------------------------------------ */

static u64 pvdc_head_vblank_time(struct pvdc_device *pvdc, unsigned int h)
{
	u32 base = PVDC_HEAD_CONTROL(h);
	u32 lo = pvdc_read(pvdc, base + PVDC_HEAD_VBLANK_TIME_LO);

	/* Reading LO latched HI. */
	return (u64)pvdc_read(pvdc, base + PVDC_HEAD_VBLANK_TIME_HI) << 32 | lo;
}

/*
 * The device stamps vblanks with its own clock.  The offset to the guest's
 * clock is the smallest difference seen at a vblank interrupt (latency only
 * adds to it), allowed to creep up slowly to follow drift.
 */
static void pvdc_update_clock_offset(struct pvdc_device *pvdc, u64 devtime)
{
	s64 sample = ktime_get_ns() - devtime;
	unsigned long flags;

	spin_lock_irqsave(&pvdc->clock_lock, flags);
	if (!pvdc->clock_offset_valid)
		pvdc->clock_offset = sample;
	else
		pvdc->clock_offset = min(sample, pvdc->clock_offset +
					 PVDC_CLOCK_SLEW_NS);
	pvdc->clock_offset_valid = true;
	spin_unlock_irqrestore(&pvdc->clock_lock, flags);
}

/* Called from the interrupt handler, inside drm_dev_enter(). */
void pvdc_head_vblank(struct pvdc_head *head)
{
	struct pvdc_device *pvdc = head->pvdc;
	u64 devtime = pvdc_head_vblank_time(pvdc, head->index);

	if (devtime)
		pvdc_update_clock_offset(pvdc, devtime);
	/* get_vblank_timestamp() is called back from here: spare a read. */
	head->irq_vblank_time = devtime;
	drm_crtc_handle_vblank(&head->crtc);
	head->irq_vblank_time = 0;
	if (READ_ONCE(head->crc_enabled))
		pvdc_crc_vblank(head);
}

/* Once the device is gone the counter stays where it was last seen. */
static u32 pvdc_crtc_get_vblank_counter(struct drm_crtc *crtc)
{
	struct pvdc_device *pvdc = crtc_to_pvdc(crtc);
	struct pvdc_head *head = to_pvdc_head(crtc);
	u32 count;
	int idx;

	if (!drm_dev_enter(&pvdc->drm, &idx))
		return READ_ONCE(head->vblank_count);

	count = pvdc_read(pvdc, PVDC_HEAD_CONTROL(head->index) +
			  PVDC_HEAD_VBLANK_COUNT);
	WRITE_ONCE(head->vblank_count, count);
	drm_dev_exit(idx);

	return count;
}

static bool pvdc_crtc_get_vblank_timestamp(struct drm_crtc *crtc,
					   int *max_error, ktime_t *vblank_time,
					   bool in_vblank_irq)
{
	struct pvdc_device *pvdc = crtc_to_pvdc(crtc);
	struct pvdc_head *head = to_pvdc_head(crtc);
	unsigned long flags;
	u64 devtime = 0;
	bool valid;
	s64 offset;
	int idx;

	if (in_vblank_irq && head->irq_vblank_time) {
		devtime = head->irq_vblank_time;
	} else if (drm_dev_enter(&pvdc->drm, &idx)) {
		devtime = pvdc_head_vblank_time(pvdc, head->index);
		drm_dev_exit(idx);
	}
	if (!devtime)
		return false;

	spin_lock_irqsave(&pvdc->clock_lock, flags);
	valid = pvdc->clock_offset_valid;
	offset = pvdc->clock_offset;
	spin_unlock_irqrestore(&pvdc->clock_lock, flags);
	if (!valid)
		return false;

	*vblank_time = ns_to_ktime(devtime + offset);
	*max_error = 0;

	return true;
}

static int pvdc_crtc_enable_vblank(struct drm_crtc *crtc)
{
	u32 vblank = PVDC_INT(drm_crtc_index(crtc), PVDC_INT_VBLANK);

	pvdc_update_int_enable(crtc_to_pvdc(crtc), vblank, 0);

	return 0;
}

static void pvdc_crtc_disable_vblank(struct drm_crtc *crtc)
{
	pvdc_update_int_enable(crtc_to_pvdc(crtc), 0,
			       PVDC_INT(drm_crtc_index(crtc), PVDC_INT_VBLANK));
}

/* ------------------------------------------------------------------------ */
/* Initialisation                                                           */
/* ------------------------------------------------------------------------ */

static const struct drm_crtc_funcs pvdc_crtc_funcs = {
	.reset = pvdc_crtc_reset,
	.set_config = drm_atomic_helper_set_config,
	.page_flip = drm_atomic_helper_page_flip,
	.atomic_duplicate_state = pvdc_crtc_duplicate_state,
	.atomic_destroy_state = pvdc_crtc_destroy_state,
	.get_vblank_counter = pvdc_crtc_get_vblank_counter,
	.enable_vblank = pvdc_crtc_enable_vblank,
	.disable_vblank = pvdc_crtc_disable_vblank,
	.get_vblank_timestamp = pvdc_crtc_get_vblank_timestamp,
	.set_crc_source = pvdc_set_crc_source,
	.verify_crc_source = pvdc_verify_crc_source,
	.get_crc_sources = pvdc_get_crc_sources,
};

static const struct drm_crtc_helper_funcs pvdc_crtc_helper_funcs = {
	.mode_valid = pvdc_crtc_mode_valid,
	.atomic_check = pvdc_crtc_atomic_check,
	.atomic_flush = pvdc_crtc_atomic_flush,
	.atomic_enable = pvdc_crtc_atomic_enable,
	.atomic_disable = pvdc_crtc_atomic_disable,
};

int pvdc_crtc_init(struct pvdc_device *pvdc, struct pvdc_head *head)
{
	struct drm_plane *primary = NULL, *cursor = NULL;
	unsigned int p;
	int ret;

	for (p = 0; p < pvdc->num_planes; p++) {
		struct pvdc_plane *plane = pvdc->planes[p];

		if (!plane || plane->home != head->index)
			continue;
		if (plane->type == PVDC_PLANE_TYPE_PRIMARY && !primary)
			primary = &plane->base;
		else if (plane->type == PVDC_PLANE_TYPE_CURSOR && !cursor)
			cursor = &plane->base;
	}
	if (!primary) {
		drm_err(&pvdc->drm, "head %u has no primary plane\n",
			head->index);
		return -ENODEV;
	}

	ret = drmm_crtc_init_with_planes(&pvdc->drm, &head->crtc, primary,
					 cursor, &pvdc_crtc_funcs, "head-%u",
					 head->index);
	if (ret)
		return ret;
	drm_crtc_helper_add(&head->crtc, &pvdc_crtc_helper_funcs);

	return 0;
}
