// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: planes.
 *
 * The planes, their types, the heads they can be bound to and their formats
 * are read from the device.  atomic_check applies the device's per-plane
 * rules to the unclipped rectangles (the device clips itself) and derives
 * the shadow register values; atomic_update writes only the registers that
 * differ from the previous state, so a page flip is one FB_OFFSET write (and
 * CHROMA_OFFSET for the Cb:Cr plane of NV12 and P010): the buffers are
 * bound into the device address space once (pvdc_gem.c), not per flip.
 */

#include <linux/slab.h>

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_helper.h>
#include <drm/drm_blend.h>
#include <drm/drm_color_mgmt.h>
#include <drm/drm_drv.h>
#include <drm/drm_fourcc.h>
#include <drm/drm_framebuffer.h>
#include <drm/drm_gem_atomic_helper.h>
#include <drm/drm_panic.h>
#include <drm/drm_print.h>
#include <drm/drm_rect.h>

#include "pvdc_drv.h"

static const unsigned int pvdc_drm_plane_type[] = {
	[PVDC_PLANE_TYPE_PRIMARY] = DRM_PLANE_TYPE_PRIMARY,
	[PVDC_PLANE_TYPE_OVERLAY] = DRM_PLANE_TYPE_OVERLAY,
	[PVDC_PLANE_TYPE_CURSOR] = DRM_PLANE_TYPE_CURSOR,
};

/* The formats this driver knows how to describe to the DRM core. */
static const u32 pvdc_known_formats[] = {
	PVDC_FMT_XRGB8888,
	PVDC_FMT_ARGB8888,
	PVDC_FMT_XBGR8888,
	PVDC_FMT_ABGR8888,
	PVDC_FMT_RGB565,
	PVDC_FMT_XRGB2101010,
	PVDC_FMT_YUYV,
	PVDC_FMT_NV12,
	PVDC_FMT_P010,
};

/* A format of the device's table the driver can offer: one it knows. */
bool pvdc_format_usable(u32 fourcc)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pvdc_known_formats); i++)
		if (pvdc_known_formats[i] == fourcc)
			return true;
	return false;
}

/*
 * Bytes a plane reads per frame: the device counts, for each pixel of the
 * source rectangle rounded out, the bytes of its Y (or only) plane and its
 * share of a subsampled Cb:Cr sample, 1.5 bytes for NV12 and 3 for P010,
 * and rounds the exact sum up.  In units of 1 / (hsub * vsub) byte.
 */
static u64 pvdc_plane_bytes(const struct drm_format_info *info, u32 src_w,
			    u32 src_h)
{
	u32 per_block = info->hsub * info->vsub;
	u32 units = info->cpp[0] * per_block;
	unsigned int i;

	for (i = 1; i < info->num_planes; i++)
		units += info->cpp[i];

	return DIV_ROUND_UP_ULL((u64)DIV_ROUND_UP(src_w, 1 << 16) *
				DIV_ROUND_UP(src_h, 1 << 16) * units,
				per_block);
}

/* What the device holds for a plane whose home is @home after reset. */
void pvdc_plane_reset_regs(u32 *regs, unsigned int home)
{
	memset(regs, 0, sizeof(u32) * PVDC_PLANE_STATE_REGS);
	regs[PVDC_REG_INDEX(PVDC_PS_HEAD)] = home;
	regs[PVDC_REG_INDEX(PVDC_PS_ALPHA)] = 0xffff;
}

/*
 * Write the registers of plane @p that differ from @shadow, PS_HEAD first:
 * when the device's binding is not the one the state knows (rewriting a
 * stale plane after reset), a doorbell of the head it leaves, rung
 * meanwhile, must not arm half of the new state.
 */
static void pvdc_plane_write_regs(struct pvdc_device *pvdc, unsigned int p,
				  const u32 *regs, const u32 *shadow, bool all)
{
	unsigned int head = PVDC_REG_INDEX(PVDC_PS_HEAD), i;
	u32 base = PVDC_PLANE_SHADOW(p);

	if (all || regs[head] != shadow[head])
		pvdc_write(pvdc, base + PVDC_PS_HEAD, regs[head]);
	for (i = 0; i < PVDC_PLANE_STATE_REGS; i++)
		if (i != head && (all || regs[i] != shadow[i]))
			pvdc_write(pvdc, base + i * 4, regs[i]);
}

/*
 * Plane @p, disabled and bound to head @from, is to be shown on another
 * head: every commit of @from carries it, and one already armed would be
 * refused at its latch once the plane is shown elsewhere
 * (PVDC_ERR_PLANE_BUSY).  Bind it to its new head first, so that no
 * doorbell of @from carries it any more, then let the commits armed on
 * @from before latch.  Called with the device entered; false if it went
 * away meanwhile.
 */
static bool pvdc_plane_rebind(struct pvdc_device *pvdc, unsigned int p,
			      unsigned int from, u32 to, int *idx)
{
	pvdc_write(pvdc, PVDC_PLANE_SHADOW(p) + PVDC_PS_HEAD, to);
	drm_dev_exit(*idx);
	if (from < pvdc->num_heads)
		pvdc_head_wait_rung(&pvdc->heads[from]);

	return drm_dev_enter(&pvdc->drm, idx);
}

/* ------------------------------------------------------------------------ */
/* State                                                                    */
/* ------------------------------------------------------------------------ */

static void pvdc_plane_reset(struct drm_plane *plane)
{
	struct pvdc_plane_state *state;

	if (plane->state)
		plane->funcs->atomic_destroy_state(plane, plane->state);

	state = kzalloc(sizeof(*state), GFP_KERNEL);
	if (!state) {
		plane->state = NULL;
		return;
	}
	__drm_atomic_helper_plane_reset(plane, &state->base);
	pvdc_plane_reset_regs(state->regs, to_pvdc_plane(plane)->home);
}

static struct drm_plane_state *
pvdc_plane_duplicate_state(struct drm_plane *plane)
{
	struct pvdc_plane_state *old = to_pvdc_plane_state(plane->state);
	struct pvdc_plane_state *state;

	state = kmemdup(old, sizeof(*state), GFP_KERNEL);
	if (!state)
		return NULL;
	__drm_atomic_helper_plane_duplicate_state(plane, &state->base);
	state->release = NULL;

	return &state->base;
}

/* A cursor update checked for the async path, then not committed. */
static void pvdc_release_drop(struct pvdc_release *rel)
{
	pvdc_gem_fb_unpin(rel->fb);
	drm_framebuffer_put(rel->fb);
	kfree(rel);
}

static void pvdc_plane_destroy_state(struct drm_plane *plane,
				     struct drm_plane_state *state)
{
	struct pvdc_plane_state *ps = to_pvdc_plane_state(state);

	if (ps->release)
		pvdc_release_drop(ps->release);
	__drm_atomic_helper_plane_destroy_state(state);
	kfree(ps);
}

/* ------------------------------------------------------------------------ */
/* Check                                                                    */
/* ------------------------------------------------------------------------ */

static u32 pvdc_plane_ctrl(const struct pvdc_plane *pplane,
			   const struct drm_plane_state *state)
{
	u32 ctrl = PVDC_PS_CTRL_ENABLE;
	u32 blend;

	/*
	 * The values of enum drm_color_encoding and drm_color_range are the
	 * device's.  RGB formats ignore them: leave them out, so that
	 * changing the properties under an RGB framebuffer writes nothing.
	 */
	if (state->fb->format->is_yuv && state->plane->color_encoding_property) {
		ctrl |= FIELD_PREP(PVDC_PS_CTRL_COLOR_ENCODING,
				   state->color_encoding);
		if (state->color_range == DRM_COLOR_YCBCR_FULL_RANGE)
			ctrl |= PVDC_PS_CTRL_COLOR_RANGE_FULL;
	}

	switch (state->pixel_blend_mode) {
	case DRM_MODE_BLEND_PIXEL_NONE:
		blend = PVDC_BLEND_NONE;
		break;
	case DRM_MODE_BLEND_COVERAGE:
		blend = PVDC_BLEND_COVERAGE;
		break;
	default:
		blend = PVDC_BLEND_PREMULTI;
		break;
	}
	ctrl |= FIELD_PREP(PVDC_PS_CTRL_BLEND, blend);

	/* Rotation, reflection and filtering are refused on a cursor. */
	if (pplane->type == PVDC_PLANE_TYPE_CURSOR)
		return ctrl;

	if (state->rotation & DRM_MODE_ROTATE_180)
		ctrl |= PVDC_PS_CTRL_ROTATE_180;
	if (state->rotation & DRM_MODE_REFLECT_X)
		ctrl |= PVDC_PS_CTRL_REFLECT_X;
	if (state->rotation & DRM_MODE_REFLECT_Y)
		ctrl |= PVDC_PS_CTRL_REFLECT_Y;
	if (state->scaling_filter == DRM_SCALING_FILTER_DEFAULT)
		ctrl |= PVDC_PS_CTRL_FILTER_BILINEAR;

	return ctrl;
}

/*
 * The device's limits as drm_atomic_helper_check_plane_state() takes them:
 * src / dst in 16.16, unclipped, as the device compares them.  A cursor
 * never scales.
 */
static void pvdc_plane_scale_limits(const struct pvdc_device *pvdc,
				    const struct pvdc_plane *pplane,
				    int *min_scale, int *max_scale)
{
	if (pplane->type == PVDC_PLANE_TYPE_CURSOR) {
		*min_scale = DRM_PLANE_NO_SCALING;
		*max_scale = DRM_PLANE_NO_SCALING;
		return;
	}
	/* The smallest src / dst in 16.16 there is: no upscaling limit. */
	*min_scale = pvdc->max_upscale ?
		     DIV_ROUND_UP(DRM_PLANE_NO_SCALING, pvdc->max_upscale) : 1;
	*max_scale = pvdc->max_downscale * DRM_PLANE_NO_SCALING;
}

/*
 * The device's rules on the layout of a framebuffer of @info, @width x
 * @height, that the DRM core (format, modifier, a pitch that holds a line,
 * planes inside their objects) does not apply.  Buffer objects are placed
 * at multiples of a page, so the offsets into them decide the alignment.
 */
static int pvdc_fb_layout_check(struct pvdc_device *pvdc,
				const struct drm_format_info *info,
				u32 width, u32 height, const u32 *pitches,
				const u32 *offsets)
{
	struct drm_device *drm = &pvdc->drm;
	unsigned int i;

	/* Every memory plane: Y, and Cb:Cr for NV12 and P010. */
	for (i = 0; i < info->num_planes; i++) {
		u32 lines = drm_format_info_plane_height(info, height, i);

		if (pitches[i] % pvdc->pitch_align ||
		    offsets[i] % pvdc->offset_align) {
			drm_dbg_kms(drm, "plane %u: pitch %u or offset %u misaligned\n",
				    i, pitches[i], offsets[i]);
			return -EINVAL;
		}
		if ((u64)pitches[i] * lines > PVDC_FB_SPAN_MAX) {
			drm_dbg_kms(drm, "plane %u: pitch %u times %u lines\n",
				    i, pitches[i], lines);
			return -EINVAL;
		}
	}
	/* A packed 4:2:2 framebuffer is made of whole macropixels. */
	if (info->num_planes == 1 && width % info->hsub) {
		drm_dbg_kms(drm, "%p4cc framebuffer %u pixels wide\n",
			    &info->format, width);
		return -EINVAL;
	}

	return 0;
}

/*
 * ADDFB2 refuses a framebuffer that no plane of the device could show,
 * rather than every commit that uses it.
 */
int pvdc_framebuffer_check(struct drm_device *dev,
			   const struct drm_mode_fb_cmd2 *mode_cmd)
{
	const struct drm_format_info *info = drm_get_format_info(dev, mode_cmd);
	unsigned int i;

	if (!info)
		return -EINVAL;
	for (i = 0; i < info->num_planes; i++) {
		if ((mode_cmd->flags & DRM_MODE_FB_MODIFIERS) &&
		    mode_cmd->modifier[i] != DRM_FORMAT_MOD_LINEAR) {
			drm_dbg_kms(dev, "plane %u: modifier 0x%llx\n", i,
				    mode_cmd->modifier[i]);
			return -EINVAL;
		}
	}

	return pvdc_fb_layout_check(to_pvdc(dev), info, mode_cmd->width,
				    mode_cmd->height, mode_cmd->pitches,
				    mode_cmd->offsets);
}

/*
 * The device's rules that neither the DRM core (formats, framebuffer
 * size, pitch, source inside the framebuffer, possible CRTCs) nor the
 * plane helper (scaling) apply, on the rectangles as user space gave them:
 * the device clips itself.
 */
static int pvdc_plane_check_rules(struct pvdc_device *pvdc,
				  const struct pvdc_plane *pplane,
				  const struct drm_plane_state *state)
{
	const struct drm_framebuffer *fb = state->fb;
	struct drm_device *drm = &pvdc->drm;
	int ret;

	/*
	 * ADDFB2 checked the layout (pvdc_framebuffer_check()); checked
	 * again, as a framebuffer may come from elsewhere (fbdev).  The
	 * buffer objects are bound at device addresses that are multiples
	 * of a page, so the offsets into them decide the alignment.
	 * drm_gem_fb_create() has checked that each plane, the Cb:Cr
	 * samples of an odd last column and line included, lies in its
	 * object, and prepare_fb binds every object whole: each plane lies
	 * in one binding.
	 */
	ret = pvdc_fb_layout_check(pvdc, fb->format, fb->width, fb->height,
				   fb->pitches, fb->offsets);
	if (ret)
		return ret;
	if (state->crtc_w > pvdc->max_width ||
	    state->crtc_h > pvdc->max_height ||
	    state->crtc_x < -(int)pvdc->max_width ||
	    state->crtc_x > (int)pvdc->max_width ||
	    state->crtc_y < -(int)pvdc->max_height ||
	    state->crtc_y > (int)pvdc->max_height) {
		drm_dbg_atomic(drm, "destination rectangle out of range\n");
		return -EINVAL;
	}
	/* Exactly unscaled: a fractional source would use a scaler. */
	if (pplane->type == PVDC_PLANE_TYPE_CURSOR &&
	    (state->crtc_w > pvdc->cursor_width ||
	     state->crtc_h > pvdc->cursor_height ||
	     state->src_w != state->crtc_w << 16 ||
	     state->src_h != state->crtc_h << 16)) {
		drm_dbg_atomic(drm, "cursor larger than %ux%u or scaled\n",
			       pvdc->cursor_width, pvdc->cursor_height);
		return -EINVAL;
	}

	return 0;
}

static void pvdc_plane_derive_regs(struct pvdc_plane_state *ps,
				   const struct pvdc_plane *pplane)
{
	const struct drm_plane_state *state = &ps->base;
	const struct drm_framebuffer *fb = state->fb;
	u32 *regs = ps->regs;

	ps->enabled = true;
	ps->scaled = state->src_w != (u64)state->crtc_w << 16 ||
		     state->src_h != (u64)state->crtc_h << 16;
	ps->bandwidth = DIV_ROUND_UP_ULL(pvdc_plane_bytes(fb->format,
							  state->src_w,
							  state->src_h),
					 1024);

	regs[PVDC_REG_INDEX(PVDC_PS_CTRL)] = pvdc_plane_ctrl(pplane, state);
	regs[PVDC_REG_INDEX(PVDC_PS_HEAD)] = drm_crtc_index(state->crtc);
	regs[PVDC_REG_INDEX(PVDC_PS_FORMAT)] = fb->format->format;
	regs[PVDC_REG_INDEX(PVDC_PS_FB_PITCH)] = fb->pitches[0];
	/* CHROMA_OFFSET, like FB_OFFSET, once the buffer is pinned. */
	regs[PVDC_REG_INDEX(PVDC_PS_CHROMA_PITCH)] =
		fb->format->num_planes > 1 ? fb->pitches[1] : 0;
	regs[PVDC_REG_INDEX(PVDC_PS_FB_SIZE)] = PVDC_XY(fb->width, fb->height);
	regs[PVDC_REG_INDEX(PVDC_PS_SRC_X)] = state->src_x;
	regs[PVDC_REG_INDEX(PVDC_PS_SRC_Y)] = state->src_y;
	regs[PVDC_REG_INDEX(PVDC_PS_SRC_W)] = state->src_w;
	regs[PVDC_REG_INDEX(PVDC_PS_SRC_H)] = state->src_h;
	regs[PVDC_REG_INDEX(PVDC_PS_DST_POS)] = PVDC_XY(state->crtc_x,
							state->crtc_y);
	regs[PVDC_REG_INDEX(PVDC_PS_DST_SIZE)] = PVDC_XY(state->crtc_w,
							 state->crtc_h);
	regs[PVDC_REG_INDEX(PVDC_PS_ZPOS)] = state->normalized_zpos;
	regs[PVDC_REG_INDEX(PVDC_PS_ALPHA)] = state->alpha;
	if (pplane->type == PVDC_PLANE_TYPE_CURSOR)
		regs[PVDC_REG_INDEX(PVDC_PS_HOTSPOT)] =
			PVDC_XY(state->hotspot_x, state->hotspot_y);
}

static int pvdc_plane_atomic_check(struct drm_plane *plane,
				   struct drm_atomic_state *state)
{
	struct drm_plane_state *new_state =
		drm_atomic_get_new_plane_state(state, plane);
	struct drm_plane_state *old_state =
		drm_atomic_get_old_plane_state(state, plane);
	struct pvdc_plane_state *ps = to_pvdc_plane_state(new_state);
	struct pvdc_plane_state *old_ps = to_pvdc_plane_state(old_state);
	struct pvdc_device *pvdc = to_pvdc(plane->dev);
	struct pvdc_plane *pplane = to_pvdc_plane(plane);
	struct drm_crtc_state *crtc_state = NULL;
	int min_scale, max_scale, ret;

	/* A disabled plane: only CTRL changes, it stays on its old head. */
	memcpy(ps->regs, old_ps->regs, sizeof(ps->regs));
	ps->regs[PVDC_REG_INDEX(PVDC_PS_CTRL)] = 0;
	ps->enabled = false;
	ps->scaled = false;
	ps->bandwidth = 0;

	if (new_state->crtc) {
		crtc_state = drm_atomic_get_crtc_state(state, new_state->crtc);
		if (IS_ERR(crtc_state))
			return PTR_ERR(crtc_state);
	}
	pvdc_plane_scale_limits(pvdc, pplane, &min_scale, &max_scale);
	ret = drm_atomic_helper_check_plane_state(new_state, crtc_state,
						  min_scale, max_scale,
						  true, true);
	if (ret)
		return ret;
	if (!new_state->visible || !crtc_state->active)
		return 0;

	/* The device binds an enabled plane only to the head it is on. */
	if (old_ps->enabled && old_ps->regs[PVDC_REG_INDEX(PVDC_PS_HEAD)] !=
	    drm_crtc_index(new_state->crtc)) {
		drm_dbg_atomic(plane->dev,
			       "[PLANE:%d] must be disabled on its head first\n",
			       plane->base.id);
		return -EINVAL;
	}

	ret = pvdc_plane_check_rules(pvdc, pplane, new_state);
	if (ret)
		return ret;
	pvdc_plane_derive_regs(ps, pplane);

	return 0;
}

/* ------------------------------------------------------------------------ */
/* Update                                                                   */
/* ------------------------------------------------------------------------ */

/* The disable of the plane's head cleared its CTRL behind the state. */
static bool pvdc_plane_head_was_reset(struct drm_atomic_state *state,
				      const struct drm_plane_state *old_state)
{
	struct drm_crtc_state *old_crtc_state, *new_crtc_state;

	if (!old_state->crtc)
		return false;
	old_crtc_state = drm_atomic_get_old_crtc_state(state, old_state->crtc);
	new_crtc_state = drm_atomic_get_new_crtc_state(state, old_state->crtc);

	return old_crtc_state && new_crtc_state && old_crtc_state->active &&
	       drm_atomic_crtc_needs_modeset(new_crtc_state);
}

/*
 * FB_OFFSET, and CHROMA_OFFSET of a two-plane format, now that the
 * framebuffer's objects are bound (prepare_fb binds every plane's).
 */
static void pvdc_plane_fb_offset(struct pvdc_plane_state *ps)
{
	static const unsigned int reg[] = {
		PVDC_REG_INDEX(PVDC_PS_FB_OFFSET),
		PVDC_REG_INDEX(PVDC_PS_CHROMA_OFFSET),
	};
	struct drm_framebuffer *fb = ps->base.fb;
	unsigned int i;

	if (!ps->enabled)
		return;
	ps->regs[reg[1]] = 0;
	for (i = 0; i < fb->format->num_planes && i < ARRAY_SIZE(reg); i++)
		ps->regs[reg[i]] = pvdc_gem_fb_address(fb, i);
}

/*
 * A page flip writes FB_OFFSET here, and CHROMA_OFFSET for NV12/P010.  A
 * plane that keeps its framebuffer reports what was written into it.
 */
static void pvdc_plane_atomic_update(struct drm_plane *plane,
				     struct drm_atomic_state *state)
{
	struct drm_plane_state *new_state =
		drm_atomic_get_new_plane_state(state, plane);
	struct drm_plane_state *old_state =
		drm_atomic_get_old_plane_state(state, plane);
	struct pvdc_plane_state *ps = to_pvdc_plane_state(new_state);
	struct pvdc_plane_state *old_ps = to_pvdc_plane_state(old_state);
	struct pvdc_device *pvdc = to_pvdc(plane->dev);
	unsigned int p = to_pvdc_plane(plane)->index;
	unsigned int head = PVDC_REG_INDEX(PVDC_PS_HEAD);
	u32 shadow[PVDC_PLANE_STATE_REGS];
	int idx;

	pvdc_plane_fb_offset(ps);

	/* What the shadow registers hold now. */
	memcpy(shadow, to_pvdc_plane_state(old_state)->regs, sizeof(shadow));
	if (pvdc_plane_head_was_reset(state, old_state))
		shadow[PVDC_REG_INDEX(PVDC_PS_CTRL)] = 0;

	if (!drm_dev_enter(plane->dev, &idx))
		return;
	if (ps->enabled && ps->regs[head] != shadow[head]) {
		if (!pvdc_plane_rebind(pvdc, p, shadow[head], ps->regs[head],
				       &idx))
			return;
		shadow[head] = ps->regs[head];
	}
	pvdc_plane_write_regs(pvdc, p, ps->regs, shadow,
			      test_and_clear_bit(p, pvdc->stale_planes));
	if (ps->enabled && old_ps->enabled && new_state->fb == old_state->fb)
		pvdc_gem_damage(old_state, new_state);
	drm_dev_exit(idx);
}

/* ------------------------------------------------------------------------ */
/* Panic screen                                                             */
/* ------------------------------------------------------------------------ */

/*
 * drm_panic's buffer: the part of the framebuffer the primary plane shows
 * (its source rectangle, so that the message is centred on the head
 * rather than on a framebuffer larger than the head, such as the fbdev
 * console's on heads of different sizes), mapped since a prepare_fb
 * (pvdc_gem_fb_panic_prepare()).  Called in the panic with the panic
 * lock held, which keeps plane->state and its framebuffer.
 */
static int pvdc_plane_get_scanout_buffer(struct drm_plane *plane,
					 struct drm_scanout_buffer *sb)
{
	struct pvdc_plane_state *ps;
	struct drm_framebuffer *fb;
	struct drm_rect src;

	if (!plane->state || !plane->state->fb)
		return -ENODEV;
	ps = to_pvdc_plane_state(plane->state);
	fb = ps->base.fb;
	if (!ps->enabled || !pvdc_gem_fb_panic_map(fb, &sb->map[0]))
		return -ENODEV;

	drm_rect_fp_to_int(&src, &ps->base.src);
	iosys_map_incr(&sb->map[0], src.y1 * fb->pitches[0] +
		       src.x1 * fb->format->cpp[0]);
	sb->format = fb->format;
	sb->width = drm_rect_width(&src);
	sb->height = drm_rect_height(&src);
	sb->pitch[0] = fb->pitches[0];

	return 0;
}

/*
 * Guest RAM has no dirty log: the device shows what drm_panic drew only
 * once the damage registers report it, the whole framebuffer here.  Two
 * plain writes, no lock: pvdc->damage_lock may be held by a CPU stopped
 * between the two writes of its own pair, or by the one that panicked,
 * and this pair replaces theirs.  The device stays entered: the panic
 * handler is unregistered before the device's registers go away.
 */
static void pvdc_plane_panic_flush(struct drm_plane *plane)
{
	struct pvdc_device *pvdc = to_pvdc(plane->dev);
	struct drm_framebuffer *fb = plane->state->fb;

	pvdc_write(pvdc, PVDC_REG_DAMAGE_ADDR, pvdc_gem_fb_address(fb, 0));
	pvdc_write(pvdc, PVDC_REG_DAMAGE_LEN, fb->pitches[0] * fb->height);
}

/* ------------------------------------------------------------------------ */
/* Cursor updates in place                                                  */
/* ------------------------------------------------------------------------ */

/*
 * Legacy cursor updates (SETCURSOR, MOVECURSOR, and atomic commits that
 * only touch the cursor plane as the legacy helpers issue them) do not
 * wait for a vblank: they amend whatever waits for the next one.  The old
 * framebuffer stays pinned until the device has latched the new one: the
 * update takes a pin and a reference of it when it is prepared, since a
 * check may be of a commit that never happens.
 */
static int pvdc_plane_prepare_fb(struct drm_plane *plane,
				 struct drm_plane_state *new_state)
{
	struct drm_framebuffer *old_fb = plane->state->fb;
	struct pvdc_plane_state *ps = to_pvdc_plane_state(new_state);
	struct pvdc_release *rel;
	int ret;

	if (!new_state->fb)
		return 0;
	ret = pvdc_gem_fb_pin(new_state->fb);
	if (ret)
		return ret;
	ret = drm_gem_plane_helper_prepare_fb(plane, new_state);
	if (ret)
		goto err;
	if (plane->type == DRM_PLANE_TYPE_PRIMARY)
		pvdc_gem_fb_panic_prepare(new_state->fb);
	if (!new_state->state->async_update || !old_fb ||
	    old_fb == new_state->fb)
		return 0;

	rel = kzalloc(sizeof(*rel), GFP_KERNEL);
	if (!rel) {
		ret = -ENOMEM;
		goto err;
	}
	ret = pvdc_gem_fb_pin(old_fb);
	if (ret) {
		kfree(rel);
		goto err;
	}
	drm_framebuffer_get(old_fb);
	rel->fb = old_fb;
	ps->release = rel;

	return 0;

err:
	/* The core cleans up only the planes it prepared. */
	pvdc_gem_fb_unpin(new_state->fb);
	return ret;
}

static void pvdc_plane_cleanup_fb(struct drm_plane *plane,
				  struct drm_plane_state *old_state)
{
	if (old_state->fb)
		pvdc_gem_fb_unpin(old_state->fb);
}

static int pvdc_plane_atomic_async_check(struct drm_plane *plane,
					 struct drm_atomic_state *state)
{
	struct drm_plane_state *new_state =
		drm_atomic_get_new_plane_state(state, plane);
	struct pvdc_plane_state *ps = to_pvdc_plane_state(new_state);
	struct drm_crtc_state *crtc_state;

	if (to_pvdc_plane(plane)->type != PVDC_PLANE_TYPE_CURSOR ||
	    pvdc_global_in_state(state))
		return -EINVAL;
	crtc_state = drm_atomic_get_new_crtc_state(state, new_state->crtc);
	if (!crtc_state || !crtc_state->active)
		return -EINVAL;
	/* Binding it to another head waits for that head (atomic_update). */
	if (ps->enabled && ps->regs[PVDC_REG_INDEX(PVDC_PS_HEAD)] !=
	    to_pvdc_plane_state(plane->state)->regs[PVDC_REG_INDEX(PVDC_PS_HEAD)])
		return -EINVAL;

	return 0;
}

static void pvdc_plane_atomic_async_update(struct drm_plane *plane,
					   struct drm_atomic_state *state)
{
	struct drm_plane_state *new_state =
		drm_atomic_get_new_plane_state(state, plane);
	struct pvdc_plane_state *cur = to_pvdc_plane_state(plane->state);
	struct pvdc_plane_state *ps = to_pvdc_plane_state(new_state);
	struct pvdc_head *head = to_pvdc_head(new_state->crtc);
	struct pvdc_device *pvdc = to_pvdc(plane->dev);
	unsigned int p = to_pvdc_plane(plane)->index;
	struct pvdc_release *rel = ps->release;
	u32 shadow[PVDC_PLANE_STATE_REGS];
	unsigned long flags;
	int idx;

	ps->release = NULL;
	pvdc_plane_fb_offset(ps);

	swap(plane->state->fb, new_state->fb);
	plane->state->crtc_x = new_state->crtc_x;
	plane->state->crtc_y = new_state->crtc_y;
	plane->state->crtc_w = new_state->crtc_w;
	plane->state->crtc_h = new_state->crtc_h;
	plane->state->src_x = new_state->src_x;
	plane->state->src_y = new_state->src_y;
	plane->state->src_w = new_state->src_w;
	plane->state->src_h = new_state->src_h;
	plane->state->hotspot_x = new_state->hotspot_x;
	plane->state->hotspot_y = new_state->hotspot_y;
	plane->state->src = new_state->src;
	plane->state->dst = new_state->dst;
	plane->state->visible = new_state->visible;

	memcpy(shadow, cur->regs, sizeof(shadow));
	memcpy(cur->regs, ps->regs, sizeof(cur->regs));
	cur->enabled = ps->enabled;
	cur->scaled = ps->scaled;
	cur->bandwidth = ps->bandwidth;

	spin_lock_irqsave(&pvdc->irq_lock, flags);
	if (!pvdc->quiesced && drm_dev_enter(plane->dev, &idx)) {
		pvdc_plane_write_regs(pvdc, p, cur->regs, shadow,
				      test_and_clear_bit(p,
							 pvdc->stale_planes));
		pvdc_head_cursor_doorbell(head, rel);
		drm_dev_exit(idx);
		rel = NULL;
	}
	spin_unlock_irqrestore(&pvdc->irq_lock, flags);

	/* No device to latch it: nothing reads the old buffer any more. */
	if (rel)
		pvdc_release_drop(rel);
}

/* ------------------------------------------------------------------------ */
/* Initialisation                                                           */
/* ------------------------------------------------------------------------ */

static const struct drm_plane_funcs pvdc_plane_funcs = {
	.update_plane = drm_atomic_helper_update_plane,
	.disable_plane = drm_atomic_helper_disable_plane,
	.reset = pvdc_plane_reset,
	.atomic_duplicate_state = pvdc_plane_duplicate_state,
	.atomic_destroy_state = pvdc_plane_destroy_state,
};

/* What every plane does; the primary planes add drm_panic's hooks. */
#define PVDC_PLANE_HELPER_FUNCS \
	.prepare_fb = pvdc_plane_prepare_fb, \
	.cleanup_fb = pvdc_plane_cleanup_fb, \
	.atomic_check = pvdc_plane_atomic_check, \
	.atomic_update = pvdc_plane_atomic_update, \
	.atomic_disable = pvdc_plane_atomic_update, \
	.atomic_async_check = pvdc_plane_atomic_async_check, \
	.atomic_async_update = pvdc_plane_atomic_async_update

static const struct drm_plane_helper_funcs pvdc_plane_helper_funcs = {
	PVDC_PLANE_HELPER_FUNCS,
};

/*
 * drm_panic draws on the primary planes only: one panic screen per head,
 * under whatever overlay or cursor the head shows above it.
 */
static const struct drm_plane_helper_funcs pvdc_primary_helper_funcs = {
	PVDC_PLANE_HELPER_FUNCS,
	.get_scanout_buffer = pvdc_plane_get_scanout_buffer,
	.panic_flush = pvdc_plane_panic_flush,
};

/* COLOR_ENCODING and COLOR_RANGE, on a plane that takes a YCbCr format. */
static int pvdc_plane_create_color_properties(struct drm_plane *plane)
{
	unsigned int i;

	for (i = 0; i < plane->format_count; i++)
		if (drm_format_info(plane->format_types[i])->is_yuv)
			break;
	if (i == plane->format_count)
		return 0;

	return drm_plane_create_color_properties(plane,
						 BIT(DRM_COLOR_YCBCR_BT601) |
						 BIT(DRM_COLOR_YCBCR_BT709) |
						 BIT(DRM_COLOR_YCBCR_BT2020),
						 BIT(DRM_COLOR_YCBCR_LIMITED_RANGE) |
						 BIT(DRM_COLOR_YCBCR_FULL_RANGE),
						 DRM_COLOR_YCBCR_BT601,
						 DRM_COLOR_YCBCR_LIMITED_RANGE);
}

/*
 * The cursor sizes the device handles best: the usual ones up to its
 * limit (the device takes any size up to CURSOR_MAX, unscaled).
 */
static int pvdc_cursor_create_size_hints(struct pvdc_device *pvdc,
					 struct drm_plane *plane)
{
	static const u16 sizes[] = { 64, 128, 256 };
	struct drm_plane_size_hint hints[ARRAY_SIZE(sizes) + 1];
	unsigned int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(sizes); i++)
		if (sizes[i] < pvdc->cursor_width &&
		    sizes[i] < pvdc->cursor_height)
			hints[n++] = (struct drm_plane_size_hint) {
				.width = sizes[i], .height = sizes[i] };
	hints[n++] = (struct drm_plane_size_hint) {
		.width = pvdc->cursor_width, .height = pvdc->cursor_height };

	return drm_plane_add_size_hints_property(plane, hints, n);
}

/*
 * A cursor has what a cursor of real hardware has: an ARGB image on top
 * of its head, of a size from SIZE_HINTS.  Blending properties on it
 * would make clients looking for "the topmost plane with alpha" pick a
 * plane that takes 256x256 at most.
 */
static int pvdc_plane_create_properties(struct pvdc_device *pvdc,
					struct pvdc_plane *pplane)
{
	unsigned int per_head = pvdc_planes_per_head(pvdc);
	struct drm_plane *plane = &pplane->base;
	unsigned int zpos;
	int ret;

	drm_plane_enable_fb_damage_clips(plane);
	if (pplane->type == PVDC_PLANE_TYPE_CURSOR) {
		ret = drm_plane_create_zpos_immutable_property(plane,
							       per_head - 1);
		if (ret)
			return ret;
		return pvdc_cursor_create_size_hints(pvdc, plane);
	}

	if (pplane->type == PVDC_PLANE_TYPE_PRIMARY)
		zpos = 0;
	else
		zpos = clamp(pplane->index % per_head, 1u, per_head - 2);
	/* The cursor stays on top: the others stack below it. */
	ret = drm_plane_create_zpos_property(plane, zpos, 0, per_head - 2);
	if (ret)
		return ret;
	ret = drm_plane_create_alpha_property(plane);
	if (ret)
		return ret;
	ret = drm_plane_create_blend_mode_property(plane,
						   BIT(DRM_MODE_BLEND_PIXEL_NONE) |
						   BIT(DRM_MODE_BLEND_PREMULTI) |
						   BIT(DRM_MODE_BLEND_COVERAGE));
	if (ret)
		return ret;
	ret = pvdc_plane_create_color_properties(plane);
	if (ret)
		return ret;
	ret = drm_plane_create_rotation_property(plane, DRM_MODE_ROTATE_0,
						 DRM_MODE_ROTATE_0 |
						 DRM_MODE_ROTATE_180 |
						 DRM_MODE_REFLECT_X |
						 DRM_MODE_REFLECT_Y);
	if (ret)
		return ret;

	return drm_plane_create_scaling_filter_property(plane,
							BIT(DRM_SCALING_FILTER_DEFAULT) |
							BIT(DRM_SCALING_FILTER_NEAREST_NEIGHBOR));
}

struct pvdc_plane *pvdc_plane_init(struct pvdc_device *pvdc,
				   unsigned int index, u32 caps)
{
	unsigned int type = FIELD_GET(PVDC_PLANE_CAPS_TYPE_MASK, caps);
	unsigned int home = FIELD_GET(PVDC_PLANE_CAPS_HOME, caps);
	u32 heads = FIELD_GET(PVDC_PLANE_CAPS_HEADS, caps) &
		    GENMASK(pvdc->num_heads - 1, 0);
	u32 formats[PVDC_MAX_FORMATS];
	unsigned int i, count = 0;
	struct pvdc_plane *pplane;
	int ret;

	if (type >= ARRAY_SIZE(pvdc_drm_plane_type) ||
	    home >= pvdc->num_heads || !(heads & BIT(home))) {
		drm_err(&pvdc->drm, "plane %u: bad capabilities %#x\n",
			index, caps);
		return ERR_PTR(-ENODEV);
	}

	for (i = 0; i < pvdc->num_formats; i++) {
		if (pvdc->format_mask[type] & BIT(i) &&
		    pvdc_format_usable(pvdc->formats[i]))
			formats[count++] = pvdc->formats[i];
	}
	if (!count) {
		drm_err(&pvdc->drm, "plane %u: no usable format\n", index);
		return ERR_PTR(-ENODEV);
	}

	pplane = drmm_universal_plane_alloc(&pvdc->drm, struct pvdc_plane, base,
					    heads, &pvdc_plane_funcs, formats,
					    count, NULL,
					    pvdc_drm_plane_type[type],
					    "plane-%u", index);
	if (IS_ERR(pplane))
		return pplane;
	pplane->index = index;
	pplane->type = type;
	pplane->home = home;
	pplane->possible_heads = heads;
	/*
	 * drm_panic's hooks only where the buffers are mapped for it, which
	 * the kernel the module is built for decides: a module built without
	 * drm_panic, loaded into a kernel of the same release with it, shows
	 * no planes to drm_panic instead of planes it cannot draw on.
	 */
	drm_plane_helper_add(&pplane->base,
			     IS_ENABLED(CONFIG_DRM_PANIC) &&
			     type == PVDC_PLANE_TYPE_PRIMARY ?
			     &pvdc_primary_helper_funcs :
			     &pvdc_plane_helper_funcs);

	ret = pvdc_plane_create_properties(pvdc, pplane);
	if (ret)
		return ERR_PTR(ret);

	return pplane;
}
