// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: heads (CRTCs): their modes, state and checks.
 *
 * The head's shadow registers are derived in atomic_check into a register
 * image in the CRTC state and written, where they differ from what the
 * device holds, when the head is enabled.  The commit tail (pvdc_commit.c)
 * rings the doorbells; vblanks are in pvdc_vblank.c.
 */

#include <linux/math64.h>
#include <linux/overflow.h>

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_helper.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <drm/drm_vblank.h>

#include "pvdc_drv.h"

/*
 * The DRM core waits 10 s for a flip or a vblank before it complains:
 * modes slower than this would make it.
 */
#define PVDC_MAX_FRAME_PERIOD_NS	NSEC_PER_SEC

static struct pvdc_device *crtc_to_pvdc(struct drm_crtc *crtc)
{
	return to_pvdc(crtc->dev);
}

/* ------------------------------------------------------------------------ */
/* Modes                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * Pixels per frame, or 0 when the product would not fit the DRM core's
 * arithmetic (drm_mode_vrefresh() and drm_calc_timestamping_constants()
 * multiply htotal, vtotal and vscan in an int).
 */
static u32 pvdc_mode_frame_pixels(const struct drm_display_mode *mode)
{
	u32 pixels;

	if (check_mul_overflow((u32)mode->htotal, (u32)mode->vtotal, &pixels) ||
	    (mode->vscan > 1 &&
	     check_mul_overflow(pixels, (u32)mode->vscan, &pixels)) ||
	    pixels > INT_MAX)
		return 0;

	return pixels;
}

/* The device's MODE rule, and what the DRM core can time. */
enum drm_mode_status pvdc_mode_check(struct pvdc_device *pvdc,
				     const struct drm_display_mode *mode)
{
	u32 pixels;
	u64 period;

	if (mode->flags & DRM_MODE_FLAG_INTERLACE)
		return MODE_NO_INTERLACE;
	if (mode->flags & DRM_MODE_FLAG_DBLSCAN)
		return MODE_NO_DBLESCAN;
	if (mode->vscan > 1)
		return MODE_NO_VSCAN;
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
	if (mode->clock > PVDC_MAX_PIXEL_CLOCK_KHZ)
		return MODE_CLOCK_HIGH;

	pixels = pvdc_mode_frame_pixels(mode);
	if (!pixels)
		return MODE_BAD;
	/* The device's FRAME_PERIOD, to the nanosecond. */
	period = div_u64((u64)pixels * USEC_PER_SEC, mode->clock);
	if (period < PVDC_MIN_FRAME_PERIOD_NS)
		return MODE_CLOCK_HIGH;
	if (period > PVDC_MAX_FRAME_PERIOD_NS)
		return MODE_CLOCK_LOW;

	return MODE_OK;
}

/* KiB a full-size cursor reads per frame: every head keeps room for it. */
u32 pvdc_crtc_cursor_bandwidth(struct pvdc_device *pvdc)
{
	return DIV_ROUND_UP(pvdc->cursor_width * pvdc->cursor_height * 4,
			    1024);
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
	memset(&state->latch, 0, sizeof(state->latch));
	state->resync = false;

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

static void pvdc_crtc_mode_regs(struct pvdc_crtc_state *pstate)
{
	const struct drm_display_mode *mode = &pstate->base.adjusted_mode;
	u32 *regs = pstate->regs;

	regs[PVDC_REG_INDEX(PVDC_HS_CTRL)] = PVDC_HS_CTRL_ENABLE;
	regs[PVDC_REG_INDEX(PVDC_HS_HTIMING)] =
		PVDC_XY(mode->hdisplay, mode->htotal);
	regs[PVDC_REG_INDEX(PVDC_HS_HSYNC)] =
		PVDC_XY(mode->hsync_start, mode->hsync_end);
	regs[PVDC_REG_INDEX(PVDC_HS_VTIMING)] =
		PVDC_XY(mode->vdisplay, mode->vtotal);
	regs[PVDC_REG_INDEX(PVDC_HS_VSYNC)] =
		PVDC_XY(mode->vsync_start, mode->vsync_end);
	regs[PVDC_REG_INDEX(PVDC_HS_PIXEL_CLOCK)] = mode->clock;
	regs[PVDC_REG_INDEX(PVDC_HS_BACKGROUND)] = 0;
	/* HS_BANDWIDTH is decided with the other heads (pvdc_global.c). */
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
	if (drm_atomic_crtc_needs_modeset(crtc_state)) {
		if (crtc_state->active)
			pvdc_crtc_mode_regs(pstate);
		else
			pstate->regs[PVDC_REG_INDEX(PVDC_HS_CTRL)] = 0;
	}

	pstate->need = 0;
	pstate->scalers = 0;
	drm_atomic_crtc_state_for_each_plane_state(plane, plane_state,
						   crtc_state) {
		const struct pvdc_plane_state *ps =
			to_pvdc_plane_state(plane_state);

		if (!ps->enabled)
			continue;
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

	/*
	 * An enabled head keeps its allocation: a plane update that needs
	 * more is refused, it never turns into a modeset.
	 */
	if (crtc_state->active && !drm_atomic_crtc_needs_modeset(crtc_state) &&
	    pstate->need > pstate->regs[PVDC_REG_INDEX(PVDC_HS_BANDWIDTH)]) {
		drm_dbg_atomic(&pvdc->drm,
			       "[CRTC:%d] planes need %u KiB, the head has %u\n",
			       crtc->base.id, pstate->need,
			       pstate->regs[PVDC_REG_INDEX(PVDC_HS_BANDWIDTH)]);
		return -EINVAL;
	}

	return 0;
}

/* ------------------------------------------------------------------------ */
/* Enable, disable, flush                                                   */
/* ------------------------------------------------------------------------ */

/*
 * The head's registers; the doorbell is rung by the commit tail, with the
 * planes.  Any enabled head this commit modesets was turned off first
 * (pvdc_commit.c), so its shadow HS_CTRL is 0 whatever the old state says.
 */
static void pvdc_crtc_atomic_enable(struct drm_crtc *crtc,
				    struct drm_atomic_state *state)
{
	struct pvdc_crtc_state *new =
		to_pvdc_crtc_state(drm_atomic_get_new_crtc_state(state, crtc));
	struct pvdc_crtc_state *old =
		to_pvdc_crtc_state(drm_atomic_get_old_crtc_state(state, crtc));
	struct pvdc_device *pvdc = crtc_to_pvdc(crtc);
	unsigned int h = drm_crtc_index(crtc);
	u32 shadow[PVDC_HEAD_STATE_REGS];
	int idx;

	memcpy(shadow, old->regs, sizeof(shadow));
	shadow[PVDC_REG_INDEX(PVDC_HS_CTRL)] = 0;

	if (drm_dev_enter(&pvdc->drm, &idx)) {
		pvdc_write_regs(pvdc, PVDC_HEAD_SHADOW(h), new->regs, shadow,
				PVDC_HEAD_STATE_REGS,
				test_and_clear_bit(h, pvdc->stale_heads));
		drm_dev_exit(idx);
	}

	/* Vblanks count from the latch on (pvdc_vblank.c). */
	drm_crtc_vblank_on(crtc);
}

/* The hardware side of the disable is pvdc_commit.c's, for all heads. */
static void pvdc_crtc_atomic_disable(struct drm_crtc *crtc,
				     struct drm_atomic_state *state)
{
	drm_crtc_vblank_off(crtc);
}

/* The event goes with the doorbell; the latch sends it. */
static void pvdc_crtc_atomic_flush(struct drm_crtc *crtc,
				   struct drm_atomic_state *state)
{
	struct drm_crtc_state *crtc_state =
		drm_atomic_get_new_crtc_state(state, crtc);

	to_pvdc_crtc_state(crtc_state)->latch.event = crtc_state->event;
	crtc_state->event = NULL;
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
