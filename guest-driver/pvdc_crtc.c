// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: heads (CRTCs): their modes, state and checks.
 *
 * The head's shadow registers are derived in atomic_check into a register
 * image in the CRTC state and written, where they differ from what the
 * device holds, when the head is enabled, or when a commit changes the
 * colour pipeline of an enabled head.  The commit tail (pvdc_commit.c)
 * rings the doorbells; vblanks are in pvdc_vblank.c.
 */

#include <linux/io.h>
#include <linux/math64.h>
#include <linux/overflow.h>
#include <linux/sizes.h>

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_helper.h>
#include <drm/drm_color_mgmt.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <drm/drm_vblank.h>

#include "pvdc_drv.h"

/*
 * The DRM core waits 10 s for a flip or a vblank before it complains:
 * modes slower than this would make it.
 */
#define PVDC_MAX_FRAME_PERIOD_NS	NSEC_PER_SEC

/* Entries of the legacy gamma table (drmModeCrtcSetGamma(), X11). */
#define PVDC_LEGACY_GAMMA_SIZE		256

#define PVDC_HS_CTRL_COLOR \
	(PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM | PVDC_HS_CTRL_GAMMA)

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
	if (state)
		state->connector = -1;
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
	state->resync = false;
	/* A writeback job is for one commit (pvdc_writeback.c). */
	state->regs[PVDC_REG_INDEX(PVDC_HS_CTRL)] &= ~PVDC_HS_CTRL_WRITEBACK;

	return &state->base;
}

static void pvdc_crtc_destroy_state(struct drm_crtc *crtc,
				    struct drm_crtc_state *state)
{
	__drm_atomic_helper_crtc_destroy_state(state);
	kfree(to_pvdc_crtc_state(state));
}

/* ------------------------------------------------------------------------ */
/* Colour management                                                        */
/* ------------------------------------------------------------------------ */

/*
 * Each head has its colour tables in VRAM, at the top (framebuffers are
 * in guest pages, pvdc_gem.c): the degamma LUT, the gamma LUT and the CTM, each with room for
 * its largest size.  One set per head is enough.  The device copies them
 * when a doorbell arms the head (a later VRAM write does not change what
 * it armed), and only a commit tail of the head writes them, after
 * pvdc_heads_hold() and before its own doorbell.  No doorbell of the head
 * is rung in between: the commit tails of a CRTC run one after the other
 * (drm_atomic_helper_wait_for_dependencies() waits for the hw_done of the
 * previous one, signalled after its doorbell), a commit only rings the
 * heads of the CRTCs in its state, and a cursor
 * update in place leaves its doorbell to the tail that holds the head
 * (pvdc_head_cursor_doorbell()).  An AMEND doorbell that arms the head
 * again copies tables that still match the shadow registers it arms.
 */
int pvdc_color_init(struct pvdc_device *pvdc)
{
	u32 degamma = pvdc->degamma_size * PVDC_LUT_ENTRY_SIZE;
	u32 gamma = pvdc->gamma_size * PVDC_LUT_ENTRY_SIZE;
	u32 stride = ALIGN(degamma + gamma + PVDC_CTM_SIZE, PVDC_COLOR_ALIGN);
	u64 size = PAGE_ALIGN((u64)stride * pvdc->num_heads);
	void __iomem *map;
	unsigned int h;
	u64 base;

	/*
	 * The offset registers are 32 bits; VRAM is 16 MiB to 2 GiB, where
	 * the tables of eight heads take a few hundred KiB.
	 */
	if (pvdc->vram_size > SZ_4G || size > pvdc->vram_size / 8) {
		drm_err(&pvdc->drm, "%llu MiB of VRAM: no room for colour tables\n",
			(u64)pvdc->vram_size >> 20);
		return -ENOSPC;
	}

	base = round_down(pvdc->vram_size - size, PAGE_SIZE);
	map = devm_ioremap_wc(pvdc->drm.dev, pvdc->vram_base + base, size);
	if (!map)
		return -ENOMEM;
	pvdc->vram_size = base;

	for (h = 0; h < pvdc->num_heads; h++) {
		struct pvdc_head *head = &pvdc->heads[h];

		head->color = map + h * stride;
		head->degamma_offset = base + h * stride;
		head->gamma_offset = head->degamma_offset + degamma;
		head->ctm_offset = head->gamma_offset + gamma;
	}

	return 0;
}

/*
 * The device takes any entries, decreasing ones included, with different
 * values per channel: no drm_color_lut_check() test applies, only the
 * size.
 */
static int pvdc_crtc_check_lut(struct drm_crtc *crtc,
			       const struct drm_property_blob *lut,
			       u32 max, const char *name)
{
	int size;

	if (!lut)
		return 0;

	size = drm_color_lut_size(lut);
	if (size < PVDC_LUT_MIN_SIZE || size > max) {
		drm_dbg_atomic(crtc->dev,
			       "[CRTC:%d] %s of %d entries, not %u to %u\n",
			       crtc->base.id, name, size, PVDC_LUT_MIN_SIZE,
			       max);
		return -EINVAL;
	}

	return 0;
}

/*
 * The pipeline's registers: a stage is on when its property holds a blob.
 * A stage turned off keeps its size, which the device ignores then, so
 * that a commit writes only the registers of what changes; the offsets
 * never change.
 */
static void pvdc_crtc_color_regs(struct pvdc_head *head,
				 struct pvdc_crtc_state *pstate)
{
	const struct drm_crtc_state *state = &pstate->base;
	u32 *regs = pstate->regs;
	u32 ctrl = regs[PVDC_REG_INDEX(PVDC_HS_CTRL)] & ~PVDC_HS_CTRL_COLOR;
	u32 degamma = PVDC_X(regs[PVDC_REG_INDEX(PVDC_HS_LUT_SIZES)]);
	u32 gamma = PVDC_Y(regs[PVDC_REG_INDEX(PVDC_HS_LUT_SIZES)]);

	if (state->degamma_lut) {
		ctrl |= PVDC_HS_CTRL_DEGAMMA;
		degamma = drm_color_lut_size(state->degamma_lut);
	}
	if (state->ctm)
		ctrl |= PVDC_HS_CTRL_CTM;
	if (state->gamma_lut) {
		ctrl |= PVDC_HS_CTRL_GAMMA;
		gamma = drm_color_lut_size(state->gamma_lut);
	}

	regs[PVDC_REG_INDEX(PVDC_HS_CTRL)] = ctrl;
	regs[PVDC_REG_INDEX(PVDC_HS_LUT_SIZES)] = PVDC_XY(degamma, gamma);
	regs[PVDC_REG_INDEX(PVDC_HS_DEGAMMA_LUT)] = head->degamma_offset;
	regs[PVDC_REG_INDEX(PVDC_HS_CTM)] = head->ctm_offset;
	regs[PVDC_REG_INDEX(PVDC_HS_GAMMA_LUT)] = head->gamma_offset;
}

/* struct drm_color_lut entries, little-endian. */
static void pvdc_write_lut(void __iomem *dst,
			   const struct drm_property_blob *blob)
{
	const struct drm_color_lut *lut = blob->data;
	int i;

	for (i = 0; i < drm_color_lut_size(blob); i++) {
		iowrite32(lut[i].red | (u32)lut[i].green << 16,
			  dst + i * PVDC_LUT_ENTRY_SIZE);
		iowrite32(lut[i].blue, dst + i * PVDC_LUT_ENTRY_SIZE + 4);
	}
}

/* struct drm_color_ctm, little-endian. */
static void pvdc_write_ctm(void __iomem *dst,
			   const struct drm_property_blob *blob)
{
	const struct drm_color_ctm *ctm = blob->data;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ctm->matrix); i++) {
		iowrite32(lower_32_bits(ctm->matrix[i]), dst + i * 8);
		iowrite32(upper_32_bits(ctm->matrix[i]), dst + i * 8 + 4);
	}
}

/*
 * The tables of the stages that are on, where they changed (all of them
 * on a modeset: VRAM may have been lost meanwhile, as across S3).  Before
 * the doorbell, which makes the device copy them.
 */
static void pvdc_crtc_write_color(struct pvdc_head *head,
				  const struct drm_crtc_state *old,
				  const struct drm_crtc_state *new)
{
	bool all = drm_atomic_crtc_needs_modeset(new);
	u32 base = head->degamma_offset;

	if (new->degamma_lut && (all || new->degamma_lut != old->degamma_lut))
		pvdc_write_lut(head->color, new->degamma_lut);
	if (new->gamma_lut && (all || new->gamma_lut != old->gamma_lut))
		pvdc_write_lut(head->color + head->gamma_offset - base,
			       new->gamma_lut);
	if (new->ctm && (all || new->ctm != old->ctm))
		pvdc_write_ctm(head->color + head->ctm_offset - base, new->ctm);
	/* Write-combined: in VRAM before the doorbell's register write. */
	wmb();
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
	/*
	 * A new route is a modeset (connectors_changed), like new timings:
	 * the device takes HS_CONNECTOR only when it enables the head.
	 */
	if (drm_atomic_crtc_needs_modeset(crtc_state)) {
		pstate->connector = -1;
		if (crtc_state->active) {
			pvdc_crtc_mode_regs(pstate);
			pstate->connector =
				pvdc_output_crtc_connector(crtc, state);
		} else {
			pstate->regs[PVDC_REG_INDEX(PVDC_HS_CTRL)] = 0;
		}
		if (pstate->connector >= 0)
			pstate->regs[PVDC_REG_INDEX(PVDC_HS_CONNECTOR)] =
				pstate->connector;
	}

	/*
	 * A new pipeline is latched like a plane update: no modeset, no
	 * change of the head's share of the device (pvdc_global.c).
	 */
	if (pvdc_crtc_check_lut(crtc, crtc_state->degamma_lut,
				pvdc->degamma_size, "DEGAMMA_LUT") ||
	    pvdc_crtc_check_lut(crtc, crtc_state->gamma_lut, pvdc->gamma_size,
				"GAMMA_LUT"))
		return -EINVAL;
	if (crtc_state->active)
		pvdc_crtc_color_regs(to_pvdc_head(crtc), pstate);
	/* Like the pipeline: no modeset, no change of the head's share. */
	pvdc_writeback_crtc_regs(to_pvdc_head(crtc), state, pstate);

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
 * The head's registers, its timings and HS_CONNECTOR among them; the
 * doorbell is rung by the commit tail, with the planes.  Any enabled head
 * this commit modesets was turned off first (pvdc_commit.c), so its shadow
 * HS_CTRL is 0 whatever the old state says, and a connector it gives up
 * is free before any head of the commit takes it.
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

/*
 * The event goes with the doorbell; the latch sends it.  The latch is the
 * commit's, not the CRTC state's: the tail waits for it after hw_done
 * (pvdc_commit.c).
 *
 * The colour tables go to VRAM here, before the doorbell.  A modeset wrote
 * the head's registers in atomic_enable; on an enabled head, a new
 * pipeline or a writeback job (set, or cleared after the last commit's)
 * writes the registers that change, and a commit that changes neither
 * writes none.
 */
static void pvdc_crtc_atomic_flush(struct drm_crtc *crtc,
				   struct drm_atomic_state *state)
{
	struct drm_crtc_state *crtc_state =
		drm_atomic_get_new_crtc_state(state, crtc);
	struct drm_crtc_state *old_state =
		drm_atomic_get_old_crtc_state(state, crtc);
	struct pvdc_device *pvdc = crtc_to_pvdc(crtc);
	struct pvdc_head *head = to_pvdc_head(crtc);
	bool modeset = drm_atomic_crtc_needs_modeset(crtc_state);
	int idx;

	to_pvdc_atomic_state(state)->latches[drm_crtc_index(crtc)].event =
		crtc_state->event;
	crtc_state->event = NULL;

	if (!crtc_state->active || !drm_dev_enter(&pvdc->drm, &idx))
		return;

	if (modeset || crtc_state->color_mgmt_changed)
		pvdc_crtc_write_color(head, old_state, crtc_state);
	if (!modeset) {
		u32 shadow[PVDC_HEAD_STATE_REGS];

		/*
		 * The interrupt handler cleared a writeback of the last commit
		 * at its latch (pvdc_writeback_retire()), which this commit
		 * waited for: a job again is a write again.
		 */
		memcpy(shadow, to_pvdc_crtc_state(old_state)->regs,
		       sizeof(shadow));
		shadow[PVDC_REG_INDEX(PVDC_HS_CTRL)] &= ~PVDC_HS_CTRL_WRITEBACK;
		pvdc_write_regs(pvdc, PVDC_HEAD_SHADOW(head->index),
				to_pvdc_crtc_state(crtc_state)->regs, shadow,
				PVDC_HEAD_STATE_REGS,
				test_and_clear_bit(head->index,
						   pvdc->stale_heads));
	}
	drm_dev_exit(idx);
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

	drm_crtc_enable_color_mgmt(&head->crtc, pvdc->degamma_size, true,
				   pvdc->gamma_size);
	/* The legacy gamma ioctl sets GAMMA_LUT (drm_color_mgmt.c). */
	return drm_mode_crtc_set_gamma_size(&head->crtc,
					    min_t(u32, pvdc->gamma_size,
						  PVDC_LEGACY_GAMMA_SIZE));
}
