// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: planes.
 *
 * The planes, their types, the heads they can be bound to and their formats
 * are read from the device.  atomic_check applies the device's per-plane
 * rules to the unclipped rectangles (the device clips itself) and derives
 * the shadow register values; atomic_update writes only the registers that
 * differ from the previous state, so a page flip is one FB_OFFSET write.
 */

#include <linux/slab.h>

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_helper.h>
#include <drm/drm_blend.h>
#include <drm/drm_drv.h>
#include <drm/drm_fourcc.h>
#include <drm/drm_framebuffer.h>
#include <drm/drm_gem_vram_helper.h>
#include <drm/drm_print.h>

#include "pvdc_drv.h"

#define PVDC_REG(off)		((off) / 4)

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
};

static bool pvdc_format_known(u32 fourcc)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pvdc_known_formats); i++)
		if (pvdc_known_formats[i] == fourcc)
			return true;

	return false;
}

/* What the device holds for the plane after reset. */
static void pvdc_plane_reset_regs(struct pvdc_plane *plane, u32 *regs)
{
	memset(regs, 0, sizeof(u32) * PVDC_PLANE_STATE_REGS);
	regs[PVDC_REG(PVDC_PS_HEAD)] = plane->home;
	regs[PVDC_REG(PVDC_PS_ALPHA)] = 0xffff;
}

void pvdc_plane_sanitize(struct pvdc_device *pvdc, unsigned int index)
{
	u32 caps = pvdc_read(pvdc, PVDC_REG_PLANE_CAPS(index));
	struct pvdc_plane plane = {
		.home = (caps >> PVDC_PLANE_CAPS_HOME_SHIFT) &
			PVDC_PLANE_CAPS_HOME_MASK,
	};
	u32 regs[PVDC_PLANE_STATE_REGS];
	unsigned int i;

	pvdc_plane_reset_regs(&plane, regs);
	for (i = 0; i < PVDC_PLANE_STATE_REGS; i++)
		pvdc_write(pvdc, PVDC_PLANE_SHADOW(index) + i * 4, regs[i]);
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
	pvdc_plane_reset_regs(to_pvdc_plane(plane), state->regs);
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

	return &state->base;
}

static void pvdc_plane_destroy_state(struct drm_plane *plane,
				     struct drm_plane_state *state)
{
	__drm_atomic_helper_plane_destroy_state(state);
	kfree(to_pvdc_plane_state(state));
}

/* ------------------------------------------------------------------------ */
/* Check                                                                    */
/* ------------------------------------------------------------------------ */

static u32 pvdc_plane_ctrl(const struct pvdc_plane *pplane,
			   const struct drm_plane_state *state)
{
	u32 ctrl = PVDC_PS_CTRL_ENABLE;
	u32 blend;

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
	ctrl |= blend << PVDC_PS_CTRL_BLEND_SHIFT;

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
 * The device's rules for an enabled plane (FORMAT is enforced by the core
 * through the plane's format list, FB_BOUNDS by the framebuffer and the
 * pinning in VRAM), on the rectangles as user space gave them.
 */
static int pvdc_plane_check_rules(struct pvdc_device *pvdc,
				  const struct pvdc_plane *pplane,
				  const struct drm_plane_state *state)
{
	const struct drm_framebuffer *fb = state->fb;
	struct drm_device *drm = &pvdc->drm;
	u32 cpp = fb->format->cpp[0];
	u64 src_w = state->src_w, src_h = state->src_h;
	u64 dst_w = (u64)state->crtc_w << 16, dst_h = (u64)state->crtc_h << 16;

	if (fb->width < 1 || fb->width > pvdc->max_width ||
	    fb->height < 1 || fb->height > pvdc->max_height ||
	    (fb->format->format == PVDC_FMT_YUYV && fb->width % 2)) {
		drm_dbg_atomic(drm, "fb size %ux%u\n", fb->width, fb->height);
		return -EINVAL;
	}
	if (fb->pitches[0] < fb->width * cpp ||
	    fb->pitches[0] % pvdc->pitch_align) {
		drm_dbg_atomic(drm, "pitch %u\n", fb->pitches[0]);
		return -EINVAL;
	}
	if (fb->offsets[0] % pvdc->offset_align) {
		drm_dbg_atomic(drm, "fb offset %u\n", fb->offsets[0]);
		return -EINVAL;
	}
	if (!src_w || !src_h ||
	    (u64)state->src_x + src_w > (u64)fb->width << 16 ||
	    (u64)state->src_y + src_h > (u64)fb->height << 16) {
		drm_dbg_atomic(drm, "source rectangle outside the fb\n");
		return -EINVAL;
	}
	if (state->crtc_w < 1 || state->crtc_w > pvdc->max_width ||
	    state->crtc_h < 1 || state->crtc_h > pvdc->max_height ||
	    state->crtc_x < -(int)pvdc->max_width ||
	    state->crtc_x > (int)pvdc->max_width ||
	    state->crtc_y < -(int)pvdc->max_height ||
	    state->crtc_y > (int)pvdc->max_height) {
		drm_dbg_atomic(drm, "destination rectangle out of range\n");
		return -EINVAL;
	}
	if (pplane->type == PVDC_PLANE_TYPE_CURSOR &&
	    (state->crtc_w > pvdc->cursor_width ||
	     state->crtc_h > pvdc->cursor_height ||
	     src_w != dst_w || src_h != dst_h)) {
		drm_dbg_atomic(drm, "cursor larger than %ux%u or scaled\n",
			       pvdc->cursor_width, pvdc->cursor_height);
		return -EINVAL;
	}
	if (src_w > pvdc->max_downscale * dst_w ||
	    dst_w > pvdc->max_upscale * src_w ||
	    src_h > pvdc->max_downscale * dst_h ||
	    dst_h > pvdc->max_upscale * src_h) {
		drm_dbg_atomic(drm, "scaling beyond 1/%u..%u\n",
			       pvdc->max_downscale, pvdc->max_upscale);
		return -ERANGE;
	}

	return 0;
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
	const struct drm_framebuffer *fb = new_state->fb;
	struct drm_crtc_state *crtc_state = NULL;
	u32 *regs = ps->regs;
	u64 bytes;
	int ret;

	/* A disabled plane: only CTRL changes, it stays on its old head. */
	memcpy(regs, old_ps->regs, sizeof(ps->regs));
	regs[PVDC_REG(PVDC_PS_CTRL)] = 0;
	ps->enabled = false;
	ps->scaled = false;
	ps->bandwidth = 0;

	if (new_state->crtc) {
		crtc_state = drm_atomic_get_crtc_state(state, new_state->crtc);
		if (IS_ERR(crtc_state))
			return PTR_ERR(crtc_state);
	}
	ret = drm_atomic_helper_check_plane_state(new_state, crtc_state,
						  1, INT_MAX, true, true);
	if (ret)
		return ret;
	if (!fb || !new_state->visible || !crtc_state->active)
		return 0;

	if (!(pplane->possible_heads & drm_crtc_mask(new_state->crtc)))
		return -EINVAL;
	/* The device only binds a plane to a head it is not enabled on. */
	if (old_ps->enabled && old_state->crtc != new_state->crtc) {
		drm_dbg_atomic(plane->dev,
			       "[PLANE:%d] must be disabled on its head first\n",
			       plane->base.id);
		return -EINVAL;
	}

	ret = pvdc_plane_check_rules(pvdc, pplane, new_state);
	if (ret)
		return ret;

	ps->enabled = true;
	ps->scaled = new_state->src_w != (u64)new_state->crtc_w << 16 ||
		     new_state->src_h != (u64)new_state->crtc_h << 16;
	bytes = (u64)DIV_ROUND_UP(new_state->src_w, 1 << 16) *
		DIV_ROUND_UP(new_state->src_h, 1 << 16) * fb->format->cpp[0];
	ps->bandwidth = DIV_ROUND_UP_ULL(bytes, 1024);

	regs[PVDC_REG(PVDC_PS_CTRL)] = pvdc_plane_ctrl(pplane, new_state);
	regs[PVDC_REG(PVDC_PS_HEAD)] = drm_crtc_index(new_state->crtc);
	regs[PVDC_REG(PVDC_PS_FORMAT)] = fb->format->format;
	regs[PVDC_REG(PVDC_PS_FB_PITCH)] = fb->pitches[0];
	regs[PVDC_REG(PVDC_PS_FB_SIZE)] = PVDC_XY(fb->width, fb->height);
	regs[PVDC_REG(PVDC_PS_SRC_X)] = new_state->src_x;
	regs[PVDC_REG(PVDC_PS_SRC_Y)] = new_state->src_y;
	regs[PVDC_REG(PVDC_PS_SRC_W)] = new_state->src_w;
	regs[PVDC_REG(PVDC_PS_SRC_H)] = new_state->src_h;
	regs[PVDC_REG(PVDC_PS_DST_POS)] = PVDC_XY(new_state->crtc_x,
						  new_state->crtc_y);
	regs[PVDC_REG(PVDC_PS_DST_SIZE)] = PVDC_XY(new_state->crtc_w,
						   new_state->crtc_h);
	regs[PVDC_REG(PVDC_PS_ZPOS)] = new_state->normalized_zpos;
	regs[PVDC_REG(PVDC_PS_ALPHA)] = new_state->alpha;
	if (pplane->type == PVDC_PLANE_TYPE_CURSOR)
		regs[PVDC_REG(PVDC_PS_HOTSPOT)] =
			PVDC_XY(new_state->hotspot_x, new_state->hotspot_y);

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

static void pvdc_plane_atomic_update(struct drm_plane *plane,
				     struct drm_atomic_state *state)
{
	struct drm_plane_state *new_state =
		drm_atomic_get_new_plane_state(state, plane);
	struct drm_plane_state *old_state =
		drm_atomic_get_old_plane_state(state, plane);
	struct pvdc_plane_state *ps = to_pvdc_plane_state(new_state);
	struct pvdc_device *pvdc = to_pvdc(plane->dev);
	struct pvdc_plane *pplane = to_pvdc_plane(plane);
	u32 base = PVDC_PLANE_SHADOW(pplane->index);
	u32 shadow[PVDC_PLANE_STATE_REGS];
	u32 *regs = ps->regs;
	int i, idx;

	if (ps->enabled) {
		struct drm_gem_vram_object *gbo =
			drm_gem_vram_of_gem(new_state->fb->obj[0]);
		s64 offset = drm_gem_vram_offset(gbo);

		if (offset < 0) {
			drm_err(plane->dev, "[PLANE:%d] fb not in VRAM\n",
				plane->base.id);
			regs[PVDC_REG(PVDC_PS_CTRL)] = 0;
		} else {
			regs[PVDC_REG(PVDC_PS_FB_OFFSET)] =
				offset + new_state->fb->offsets[0];
		}
	}

	/* What the shadow registers hold now; a page flip differs in one. */
	memcpy(shadow, to_pvdc_plane_state(old_state)->regs, sizeof(shadow));
	if (pvdc_plane_head_was_reset(state, old_state))
		shadow[PVDC_REG(PVDC_PS_CTRL)] = 0;

	if (!drm_dev_enter(plane->dev, &idx))
		return;
	for (i = 0; i < PVDC_PLANE_STATE_REGS; i++) {
		if (regs[i] != shadow[i] || pplane->shadow_lost)
			pvdc_write(pvdc, base + i * 4, regs[i]);
	}
	pplane->shadow_lost = false;
	drm_dev_exit(idx);
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

static const struct drm_plane_helper_funcs pvdc_plane_helper_funcs = {
	DRM_GEM_VRAM_PLANE_HELPER_FUNCS,
	.atomic_check = pvdc_plane_atomic_check,
	.atomic_update = pvdc_plane_atomic_update,
	.atomic_disable = pvdc_plane_atomic_update,
};

static int pvdc_plane_create_properties(struct pvdc_device *pvdc,
					struct pvdc_plane *pplane)
{
	unsigned int per_head = pvdc_planes_per_head(pvdc);
	struct drm_plane *plane = &pplane->base;
	unsigned int zpos;
	int ret;

	switch (pplane->type) {
	case PVDC_PLANE_TYPE_PRIMARY:
		zpos = 0;
		break;
	case PVDC_PLANE_TYPE_CURSOR:
		zpos = per_head - 1;
		break;
	default:
		zpos = clamp(pplane->index % per_head, 1u, per_head - 1);
		break;
	}
	ret = drm_plane_create_zpos_property(plane, zpos, 0, per_head - 1);
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
	drm_plane_enable_fb_damage_clips(plane);

	if (pplane->type == PVDC_PLANE_TYPE_CURSOR)
		return 0;

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
	unsigned int type = caps & PVDC_PLANE_CAPS_TYPE_MASK;
	unsigned int home = (caps >> PVDC_PLANE_CAPS_HOME_SHIFT) &
			    PVDC_PLANE_CAPS_HOME_MASK;
	u32 heads = (caps >> PVDC_PLANE_CAPS_HEADS_SHIFT) &
		    PVDC_PLANE_CAPS_HEADS_MASK & GENMASK(pvdc->num_heads - 1, 0);
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
		    pvdc_format_known(pvdc->formats[i]))
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
	drm_plane_helper_add(&pplane->base, &pvdc_plane_helper_funcs);

	ret = pvdc_plane_create_properties(pvdc, pplane);
	if (ret)
		return ERR_PTR(ret);

	return pplane;
}
