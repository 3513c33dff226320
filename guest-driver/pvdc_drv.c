// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: DRM driver for the QEMU paravirtual display controller.
 *
 * Device probing, the mode config and the interrupt handler.  Buffers are
 * GEM shmem objects scanned out of guest pages (pvdc_gem.c); VRAM keeps
 * only the colour tables, at its top.  The KMS objects live in
 * pvdc_crtc.c, pvdc_plane.c and pvdc_output.c, the shared resources in
 * pvdc_global.c.
 */

#include <linux/error-injection.h>
#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/sched/signal.h>

#include <drm/drm_aperture.h>
#include <drm/drm_atomic_helper.h>
#include <drm/drm_blend.h>
#include <drm/drm_drv.h>
#include <drm/drm_fbdev_shmem.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_modeset_helper.h>
#include <drm/drm_module.h>
#include <drm/drm_probe_helper.h>
#include <drm/drm_vblank.h>

#include "pvdc_drv.h"

void pvdc_update_int_enable(struct pvdc_device *pvdc, u32 set, u32 clear)
{
	unsigned long flags;
	int idx;

	spin_lock_irqsave(&pvdc->irq_lock, flags);
	pvdc->int_enable = (pvdc->int_enable & ~clear) | set;
	if (!pvdc->quiesced && drm_dev_enter(&pvdc->drm, &idx)) {
		pvdc_write(pvdc, PVDC_REG_INT_ENABLE, pvdc->int_enable);
		drm_dev_exit(idx);
	}
	spin_unlock_irqrestore(&pvdc->irq_lock, flags);
}

/*
 * Write the registers of a state window at @base that differ from what the
 * shadow copy holds (@old), or all of them: the one way the driver writes
 * a register image.
 */
void pvdc_write_regs(struct pvdc_device *pvdc, u32 base, const u32 *regs,
		     const u32 *old, unsigned int count, bool all)
{
	unsigned int i;

	for (i = 0; i < count; i++)
		if (all || regs[i] != old[i])
			pvdc_write(pvdc, base + i * 4, regs[i]);
}

/*
 * The BAR stays mapped as long as the interrupt is requested (both are
 * devres, the interrupt released first), and the handler acknowledges
 * whatever the device raised until pvdc_irq_quiesce() masked it: a shared
 * INTx line is never left asserted.
 */
static irqreturn_t pvdc_irq_handler(int irq, void *arg)
{
	struct pvdc_device *pvdc = arg;
	bool hotplug = false;
	unsigned int h;
	u32 status;

	if (READ_ONCE(pvdc->quiesced))
		return IRQ_NONE;

	/* One read acknowledges everything it returns. */
	status = pvdc_read(pvdc, PVDC_REG_INT_ACK);
	if (!status || status == ~0u)
		return IRQ_NONE;

	for (h = 0; h < pvdc->num_heads; h++) {
		struct pvdc_head *head = &pvdc->heads[h];
		u32 bits = (status >> (h * PVDC_INT_BITS_PER_HEAD)) &
			   PVDC_INT_HEAD_MASK;

		/*
		 * Latches first: a handler that runs frames late reports each
		 * event at its latch vblank before it brings the counter up
		 * to now, which it can only move forward.
		 */
		if (bits & (PVDC_INT_COMMIT_DONE | PVDC_INT_COMMIT_REJECTED))
			pvdc_head_latched(head, bits & PVDC_INT_COMMIT_REJECTED);
		if (bits & PVDC_INT_VBLANK)
			pvdc_head_vblank(head);
		if (bits & PVDC_INT_HOTPLUG)
			hotplug = true;
	}

	if (hotplug)
		schedule_work(&pvdc->hotplug_work);

	return IRQ_HANDLED;
}

/*
 * drm_atomic_helper_check(), with the shared resources checked before the
 * legacy cursor path is chosen: a cursor update goes in place only if it
 * changes nothing the heads share.  Then the room the commit's new buffers
 * take in the device address space is reserved, so that TEST_ONLY
 * foresees it.
 */
static int pvdc_atomic_check(struct drm_device *dev,
			     struct drm_atomic_state *state)
{
	int ret;

	ret = drm_atomic_helper_check_modeset(dev, state);
	if (ret)
		return ret;
	ret = drm_atomic_normalize_zpos(dev, state);
	if (ret)
		return ret;
	ret = drm_atomic_helper_check_planes(dev, state);
	if (ret)
		return ret;
	ret = pvdc_global_check(state);
	if (ret)
		return ret;
	if (state->legacy_cursor_update)
		state->async_update = !drm_atomic_helper_async_check(dev, state);

	/* Last: nothing may wait for a lock once it reserved (pvdc_gem.c). */
	return pvdc_gem_reserve(state);
}

static const struct drm_mode_config_funcs pvdc_mode_config_funcs = {
	.fb_create = pvdc_fb_create,
	.mode_valid = pvdc_gem_mode_valid,
	.atomic_check = pvdc_atomic_check,
	.atomic_commit = pvdc_atomic_commit,
	.atomic_state_alloc = pvdc_atomic_state_alloc,
	.atomic_state_clear = pvdc_atomic_state_clear,
	.atomic_state_free = pvdc_atomic_state_free,
};

static const struct drm_mode_config_helper_funcs pvdc_mode_config_helpers = {
	.atomic_commit_tail = pvdc_atomic_commit_tail,
	.atomic_commit_setup = pvdc_global_commit_setup,
};

/*
 * The driver's own version, for DRM_IOCTL_VERSION: it changes with what the
 * driver offers userspace, not with the device's register map, which
 * pvdc_read_caps() checks on its own.
 */
#define DRIVER_MAJOR	1
#define DRIVER_MINOR	0

DEFINE_DRM_GEM_FOPS(pvdc_fops);

static const struct drm_driver pvdc_driver = {
	.driver_features	= DRIVER_GEM | DRIVER_MODESET | DRIVER_ATOMIC |
				  DRIVER_CURSOR_HOTSPOT,
	.fops			= &pvdc_fops,
	.name			= PVDC_DRIVER_NAME,
	.desc			= "QEMU paravirtual display controller",
	.major			= DRIVER_MAJOR,
	.minor			= DRIVER_MINOR,
	.gem_create_object	= pvdc_gem_create_object,
	.gem_prime_import_sg_table = drm_gem_shmem_prime_import_sg_table,
	.dumb_create		= pvdc_gem_dumb_create,
};

static int pvdc_read_caps(struct pvdc_device *pvdc)
{
	struct drm_device *drm = &pvdc->drm;
	u32 id, version, major, minor, size, limits, connectors;
	u64 vram;
	unsigned int i;

	id = pvdc_read(pvdc, PVDC_REG_ID);
	if (id != PVDC_ID) {
		drm_err(drm, "not a pvdc register file (id %#x)\n", id);
		return -ENODEV;
	}
	version = pvdc_read(pvdc, PVDC_REG_VERSION);
	major = FIELD_GET(PVDC_VERSION_MAJOR_FIELD, version);
	minor = FIELD_GET(PVDC_VERSION_MINOR_FIELD, version);
	if (major != PVDC_VERSION_MAJOR) {
		drm_err(drm, "unsupported device version %u.%u\n", major, minor);
		return -ENODEV;
	}

	pvdc->features = pvdc_read(pvdc, PVDC_REG_FEATURES);
	pvdc->num_heads = pvdc_read(pvdc, PVDC_REG_NUM_HEADS);
	pvdc->num_overlays = pvdc_read(pvdc, PVDC_REG_NUM_OVERLAYS);
	pvdc->num_planes = pvdc_read(pvdc, PVDC_REG_NUM_PLANES);
	pvdc->num_scalers = pvdc_read(pvdc, PVDC_REG_NUM_SCALERS);
	/* Connector c is head control window c's: one per head. */
	connectors = pvdc_read(pvdc, PVDC_REG_NUM_CONNECTORS);
	if (pvdc->num_heads < 1 || pvdc->num_heads > PVDC_MAX_HEADS ||
	    pvdc->num_overlays > PVDC_MAX_OVERLAYS ||
	    pvdc->num_planes != pvdc->num_heads * pvdc_planes_per_head(pvdc) ||
	    connectors != pvdc->num_heads) {
		drm_err(drm, "bad topology: %u heads, %u overlays, %u planes, %u connectors\n",
			pvdc->num_heads, pvdc->num_overlays, pvdc->num_planes,
			connectors);
		return -ENODEV;
	}
	pvdc->num_scalers = min_t(unsigned int, pvdc->num_scalers,
				  PVDC_MAX_SCALERS);

	vram = pvdc_read(pvdc, PVDC_REG_VRAM_SIZE_LO) |
	       (u64)pvdc_read(pvdc, PVDC_REG_VRAM_SIZE_HI) << 32;
	if (vram && vram < pvdc->vram_size)
		pvdc->vram_size = vram;

	size = pvdc_read(pvdc, PVDC_REG_MAX_SIZE);
	pvdc->max_width = PVDC_X(size);
	pvdc->max_height = PVDC_Y(size);
	size = pvdc_read(pvdc, PVDC_REG_CURSOR_MAX);
	pvdc->cursor_width = PVDC_X(size);
	pvdc->cursor_height = PVDC_Y(size);
	limits = pvdc_read(pvdc, PVDC_REG_SCALE_LIMITS);
	pvdc->max_downscale = (limits >> PVDC_SCALE_MAX_DOWNSCALE_SHIFT) &
			      PVDC_SCALE_FACTOR_MASK;
	pvdc->max_upscale = (limits >> PVDC_SCALE_MAX_UPSCALE_SHIFT) &
			    PVDC_SCALE_FACTOR_MASK;
	/*
	 * A downscale factor of 0 would refuse every plane; treat it as "no
	 * downscaling".  An upscale factor of 0 means no limit.
	 */
	pvdc->max_downscale = max(pvdc->max_downscale, 1u);
	pvdc->pitch_align = max(pvdc_read(pvdc, PVDC_REG_PITCH_ALIGN), 1u);
	pvdc->offset_align = max(pvdc_read(pvdc, PVDC_REG_OFFSET_ALIGN), 1u);
	pvdc->bandwidth_total = pvdc_read(pvdc, PVDC_REG_BANDWIDTH_TOTAL);
	if (!pvdc->max_width || !pvdc->max_height) {
		drm_err(drm, "device reports no maximum size\n");
		return -ENODEV;
	}
	size = pvdc_read(pvdc, PVDC_REG_LUT_SIZE);
	pvdc->degamma_size = min_t(u32, PVDC_X(size), PVDC_LUT_MAX_SIZE);
	pvdc->gamma_size = min_t(u32, PVDC_Y(size), PVDC_LUT_MAX_SIZE);
	if (pvdc->degamma_size < PVDC_LUT_MIN_SIZE ||
	    pvdc->gamma_size < PVDC_LUT_MIN_SIZE) {
		drm_err(drm, "bad LUT sizes %#x\n", size);
		return -ENODEV;
	}

	for (i = 0; i < PVDC_MAX_FORMATS; i++) {
		u32 fourcc = pvdc_read(pvdc, PVDC_REG_FORMAT_TABLE(i));

		if (!fourcc)
			break;
		pvdc->formats[i] = fourcc;
	}
	pvdc->num_formats = i;
	pvdc->format_mask[PVDC_PLANE_TYPE_PRIMARY] =
		pvdc_read(pvdc, PVDC_REG_FORMATS_PRIMARY);
	pvdc->format_mask[PVDC_PLANE_TYPE_OVERLAY] =
		pvdc_read(pvdc, PVDC_REG_FORMATS_OVERLAY);
	pvdc->format_mask[PVDC_PLANE_TYPE_CURSOR] =
		pvdc_read(pvdc, PVDC_REG_FORMATS_CURSOR);
	pvdc->wb_format_mask = pvdc_read(pvdc, PVDC_REG_FORMATS_WRITEBACK);

	drm_info(drm, "pvdc %u.%u (features %#x): %u heads, %u overlays each, %u scalers, %llu MiB VRAM, %u KiB/frame\n",
		 major, minor, pvdc->features,
		 pvdc->num_heads, pvdc->num_overlays, pvdc->num_scalers,
		 (u64)pvdc->vram_size >> 20, pvdc->bandwidth_total);

	return 0;
}

/*
 * DONE_SEQ of every head has caught up with ARMED_SEQ: what a previous
 * driver left armed, or the sanitizing commit, has latched.  Interrupts are
 * not set up yet: the device is polled, and whoever loads the driver can
 * give up.
 */
static int pvdc_wait_idle(struct pvdc_device *pvdc)
{
	u32 armed;
	int ret;

	ret = read_poll_timeout(ioread32, armed,
				!armed || fatal_signal_pending(current),
				USEC_PER_MSEC,
				PVDC_LATCH_TIMEOUT_MS * USEC_PER_MSEC, false,
				pvdc->mmio + PVDC_REG_MULTI_DOORBELL);
	if (!ret && armed)
		ret = -EINTR;

	return ret;
}

/* The head plane @p is on, or -1 if it is off. */
static int pvdc_plane_active_head(struct pvdc_device *pvdc, unsigned int p)
{
	u32 head = pvdc_read(pvdc, PVDC_PLANE_ACTIVE(p) + PVDC_PS_HEAD);

	if (!(pvdc_read(pvdc, PVDC_PLANE_ACTIVE(p) + PVDC_PS_CTRL) &
	      PVDC_PS_CTRL_ENABLE) || head >= pvdc->num_heads)
		return -1;

	return head;
}

/* Heads that are on, or that have a plane on. */
static u32 pvdc_heads_in_use(struct pvdc_device *pvdc)
{
	unsigned int h, p;
	u32 mask = 0;

	for (h = 0; h < pvdc->num_heads; h++)
		if (pvdc_read(pvdc, PVDC_HEAD_ACTIVE(h) + PVDC_HS_CTRL) &
		    PVDC_HS_CTRL_ENABLE)
			mask |= BIT(h);
	for (p = 0; p < pvdc->num_planes; p++)
		if (pvdc_plane_active_head(pvdc, p) >= 0)
			mask |= BIT(pvdc_plane_active_head(pvdc, p));

	return mask;
}

/* What the sanitizing commit must have left: nothing on. */
static int pvdc_sanitize_verify(struct pvdc_device *pvdc, u32 mask)
{
	unsigned int h;

	for (h = 0; h < pvdc->num_heads; h++) {
		u32 result = pvdc_read(pvdc, PVDC_HEAD_CONTROL(h) +
				       PVDC_HEAD_RESULT);

		if (mask & BIT(h) &&
		    FIELD_GET(PVDC_RESULT_CODE_MASK, result) !=
		    PVDC_RESULT_APPLIED) {
			drm_err(&pvdc->drm, "head %u: turning off refused: %#x\n",
				h, result);
			return -EIO;
		}
	}
	if (pvdc_heads_in_use(pvdc)) {
		drm_err(&pvdc->drm, "heads %#x still on\n",
			pvdc_heads_in_use(pvdc));
		return -EIO;
	}

	return 0;
}

/*
 * Bring the device to the state the driver's initial atomic state
 * describes: every plane disabled on its home head, every head disabled.
 * A previous driver may have left heads on, with planes of other heads on
 * them: one MULTI_DOORBELL over all of those turns them off at once, as
 * the device's head isolation requires.  Interrupts are not set up yet:
 * the device is polled.
 *
 * The steps of probe and resume that have an unwind of their own are
 * marked for fail_function (Documentation/pvdc.rst), and not inlined, so
 * that a test can make each of them fail.
 */
static noinline int pvdc_sanitize(struct pvdc_device *pvdc)
{
	u32 regs[PVDC_PLANE_STATE_REGS];
	unsigned int h, p, i;
	u32 mask;
	int ret;

	pvdc_write(pvdc, PVDC_REG_INT_ENABLE, 0);
	ret = pvdc_wait_idle(pvdc);
	if (ret) {
		drm_err(&pvdc->drm, "a commit left armed never latched\n");
		return ret;
	}

	mask = pvdc_heads_in_use(pvdc);
	/*
	 * A plane is turned off by the commit of the head it is on, which
	 * is in the group whatever the device's head isolation says; the
	 * driver rewrites it whole before it uses it.
	 */
	for (p = 0; p < pvdc->num_planes; p++) {
		int head = pvdc_plane_active_head(pvdc, p);
		u32 home = FIELD_GET(PVDC_PLANE_CAPS_HOME,
				     pvdc_read(pvdc, PVDC_REG_PLANE_CAPS(p)));

		pvdc_plane_reset_regs(regs, head >= 0 ? head : home);
		for (i = 0; i < PVDC_PLANE_STATE_REGS; i++)
			pvdc_write(pvdc, PVDC_PLANE_SHADOW(p) + i * 4, regs[i]);
	}
	/*
	 * HS_CTRL 0 also turns the colour stages off; the other head
	 * registers, the colour tables' included, are rewritten whole at the
	 * head's first enable (stale_heads).
	 */
	for (h = 0; h < pvdc->num_heads; h++)
		pvdc_write(pvdc, PVDC_HEAD_SHADOW(h) + PVDC_HS_CTRL, 0);

	if (mask) {
		pvdc_write(pvdc, PVDC_REG_MULTI_DOORBELL, mask);
		ret = pvdc_wait_idle(pvdc);
		if (!ret)
			ret = pvdc_sanitize_verify(pvdc, mask);
		if (ret)
			return ret;
	}

	pvdc_heads_reset(pvdc);
	pvdc_write(pvdc, PVDC_REG_INT_STATUS, ~0u);

	return 0;
}
ALLOW_ERROR_INJECTION(pvdc_sanitize, ERRNO);

/*
 * DRM plane masks are 32 bits wide.  When the device has more planes, every
 * head keeps its primary and cursor planes and the overlays are shared out
 * evenly; the others stay disabled.
 */
#define PVDC_DRM_MAX_PLANES	32

static int pvdc_planes_init(struct pvdc_device *pvdc)
{
	static const unsigned int order[] = {
		PVDC_PLANE_TYPE_PRIMARY, PVDC_PLANE_TYPE_CURSOR,
		PVDC_PLANE_TYPE_OVERLAY,
	};
	unsigned int budget = PVDC_DRM_MAX_PLANES, hidden = 0, pass, rank, p;
	u32 caps[PVDC_MAX_PLANES];

	for (p = 0; p < pvdc->num_planes; p++)
		caps[p] = pvdc_read(pvdc, PVDC_REG_PLANE_CAPS(p));

	for (pass = 0; pass < ARRAY_SIZE(order); pass++) {
		/* rank: the n-th plane of its type on its home head */
		for (rank = 0; rank < pvdc_planes_per_head(pvdc); rank++) {
			unsigned int seen[PVDC_MAX_HEADS] = { 0 };

			for (p = 0; p < pvdc->num_planes; p++) {
				unsigned int home =
					FIELD_GET(PVDC_PLANE_CAPS_HOME, caps[p]);
				struct pvdc_plane *plane;

				if ((caps[p] & PVDC_PLANE_CAPS_TYPE_MASK) !=
				    order[pass] || home >= pvdc->num_heads ||
				    seen[home]++ != rank)
					continue;
				if (!budget) {
					hidden++;
					continue;
				}
				plane = pvdc_plane_init(pvdc, p, caps[p]);
				if (IS_ERR(plane))
					return PTR_ERR(plane);
				pvdc->planes[p] = plane;
				budget--;
			}
		}
	}
	if (hidden)
		drm_info(&pvdc->drm, "%u overlay planes not exposed\n", hidden);

	return 0;
}

static noinline int pvdc_kms_init(struct pvdc_device *pvdc)
{
	struct drm_device *drm = &pvdc->drm;
	unsigned int h;
	int ret;

	ret = drmm_mode_config_init(drm);
	if (ret)
		return ret;

	drm->mode_config.min_width = 1;
	drm->mode_config.min_height = 1;
	drm->mode_config.max_width = pvdc->max_width;
	drm->mode_config.max_height = pvdc->max_height;
	drm->mode_config.cursor_width = pvdc->cursor_width;
	drm->mode_config.cursor_height = pvdc->cursor_height;
	drm->mode_config.preferred_depth = 24;
	drm->mode_config.prefer_shadow = 0;
	drm->mode_config.normalize_zpos = true;
	drm->mode_config.funcs = &pvdc_mode_config_funcs;
	drm->mode_config.helper_private = &pvdc_mode_config_helpers;

	ret = pvdc_output_create_properties(pvdc);
	if (ret)
		return ret;
	ret = pvdc_global_init(pvdc);
	if (ret)
		return ret;

	/* Planes first: each CRTC is created with its home primary/cursor. */
	ret = pvdc_planes_init(pvdc);
	if (ret)
		return ret;

	for (h = 0; h < pvdc->num_heads; h++) {
		struct pvdc_head *head = &pvdc->heads[h];

		ret = pvdc_crtc_init(pvdc, head);
		if (ret)
			return ret;
		ret = pvdc_output_init(pvdc, head);
		if (ret)
			return ret;
		ret = pvdc_writeback_init(pvdc, head);
		if (ret)
			return ret;
	}
	pvdc_output_init_routes(pvdc);

	/* VBLANK_COUNT is a full 32-bit hardware counter. */
	drm->max_vblank_count = U32_MAX;
	ret = drm_vblank_init(drm, pvdc->num_heads);
	if (ret)
		return ret;
	/*
	 * The counter and timestamps are exact at any time, so vblank
	 * interrupts can stop as soon as nobody waits for one: an idle head
	 * then costs the host no timer at all.
	 */
	drm->vblank_disable_immediate = true;

	drm_mode_config_reset(drm);

	return 0;
}
ALLOW_ERROR_INJECTION(pvdc_kms_init, ERRNO);

/* Interrupt bits @bits (PVDC_INT_*) of every head. */
static u32 pvdc_irq_heads_mask(struct pvdc_device *pvdc, u32 bits)
{
	u32 enable = 0;
	unsigned int h;

	for (h = 0; h < pvdc->num_heads; h++)
		enable |= PVDC_INT(h, bits);
	return enable;
}

/* What the device raises whatever the heads do. */
static u32 pvdc_irq_base_mask(struct pvdc_device *pvdc)
{
	return pvdc_irq_heads_mask(pvdc, PVDC_INT_COMMIT_DONE |
				   PVDC_INT_COMMIT_REJECTED | PVDC_INT_HOTPLUG);
}

/*
 * For good (unbind), or until resume: the device raises nothing more, what
 * it raised is acknowledged while the BAR is still mapped, and whatever it
 * has not reported yet counts as done, so that no waiter, event or pinned
 * buffer is left.
 */
static void pvdc_irq_quiesce(struct pvdc_device *pvdc)
{
	spin_lock_irq(&pvdc->irq_lock);
	WRITE_ONCE(pvdc->quiesced, true);
	pvdc->int_enable = 0;
	pvdc_write(pvdc, PVDC_REG_INT_ENABLE, 0);
	pvdc_write(pvdc, PVDC_REG_INT_STATUS, ~0u);
	spin_unlock_irq(&pvdc->irq_lock);
	synchronize_irq(pvdc->irq);

	pvdc_commit_quiesce(pvdc);
}

/*
 * The works the interrupt handler schedules, once it schedules no more:
 * none runs against a device that is unplugged or asleep.
 */
static void pvdc_works_cancel(struct pvdc_device *pvdc)
{
	cancel_work_sync(&pvdc->hotplug_work);
	cancel_work_sync(&pvdc->resync_work);
	flush_work(&pvdc->release_work);
}

/*
 * Undoes pvdc_irq_init() on every path: a probe that fails after it, and
 * unbind (where pvdc_pci_remove() quiesced already).  Devres runs it
 * before it frees the interrupt, and unmaps the BAR after.
 */
static void pvdc_irq_fini(void *arg)
{
	struct pvdc_device *pvdc = arg;

	if (!READ_ONCE(pvdc->quiesced))
		pvdc_irq_quiesce(pvdc);
	pvdc_works_cancel(pvdc);
}

static noinline int pvdc_irq_init(struct pvdc_device *pvdc,
				  struct pci_dev *pdev)
{
	int ret;

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_INTX);
	if (ret < 0)
		return ret;

	pvdc->irq = pci_irq_vector(pdev, 0);
	ret = devm_request_irq(&pdev->dev, pvdc->irq, pvdc_irq_handler,
			       IRQF_SHARED, PVDC_DRIVER_NAME, pvdc);
	if (ret)
		return ret;
	return devm_add_action_or_reset(&pdev->dev, pvdc_irq_fini, pvdc);
}
ALLOW_ERROR_INJECTION(pvdc_irq_init, ERRNO);

/* The driver's side of each head, before anything touches the device. */
static void pvdc_heads_init(struct pvdc_device *pvdc)
{
	unsigned int h;

	for (h = 0; h < PVDC_MAX_HEADS; h++) {
		struct pvdc_head *head = &pvdc->heads[h];

		head->pvdc = pvdc;
		head->index = h;
		INIT_LIST_HEAD(&head->latches);
		INIT_LIST_HEAD(&head->releases);
		init_waitqueue_head(&head->wq);
		spin_lock_init(&head->tl_lock);
		spin_lock_init(&head->now_lock);
	}
}

/*
 * The firmware's framebuffer (efifb, vesafb, simplefb) is the device's
 * boot display only if the device has one: a ramfb in guest RAM rather
 * than in a BAR, so the PCI variant would not find it, and every firmware
 * framebuffer goes, sysfb's with it, before the driver shows anything.
 * Without one, the firmware's framebuffer is another card's (pvdc beside
 * virtio-vga, say), and stays.
 */
static int pvdc_remove_boot_framebuffers(struct pvdc_device *pvdc)
{
	if (!(pvdc->features & PVDC_FEATURE_BOOT_DISPLAY))
		return 0;
	return drm_aperture_remove_framebuffers(&pvdc_driver);
}

static void pvdc_fini(void *arg)
{
	pvdc_clock_fini(arg);
}

/*
 * The last step of probe, and the only one userspace sees: the interrupts
 * are enabled once nothing can fail any more, so that a probe that fails
 * leaves them as pvdc_sanitize() did, off.
 */
static noinline int pvdc_register(struct pvdc_device *pvdc)
{
	struct drm_device *drm = &pvdc->drm;
	int ret;

	ret = drm_dev_register(drm, 0);
	if (ret)
		return ret;
	/*
	 * Commits, the fbdev client's first, complete by interrupt.  One that
	 * a client armed before this has raised its bit already: enabling it
	 * asserts INTx, or sends the MSI, then.
	 */
	pvdc_update_int_enable(pvdc, pvdc_irq_base_mask(pvdc), 0);

	drm_fbdev_shmem_setup(drm, 32);

	return 0;
}
ALLOW_ERROR_INJECTION(pvdc_register, ERRNO);

static int pvdc_pci_probe(struct pci_dev *pdev, const struct pci_device_id *ent)
{
	struct pvdc_device *pvdc;
	struct drm_device *drm;
	int ret;

	pvdc = devm_drm_dev_alloc(&pdev->dev, &pvdc_driver, struct pvdc_device,
				  drm);
	if (IS_ERR(pvdc))
		return PTR_ERR(pvdc);
	drm = &pvdc->drm;

	spin_lock_init(&pvdc->irq_lock);
	spin_lock_init(&pvdc->reg64_lock);
	INIT_LIST_HEAD(&pvdc->released);
	INIT_WORK(&pvdc->release_work, pvdc_release_work);
	INIT_WORK(&pvdc->resync_work, pvdc_resync_work);
	INIT_WORK(&pvdc->hotplug_work, pvdc_hotplug_work);
	pvdc_heads_init(pvdc);

	ret = pcim_enable_device(pdev);
	if (ret)
		return ret;
	pci_set_master(pdev);

	pvdc->mmio = pcim_iomap_region(pdev, PVDC_MMIO_BAR, PVDC_DRIVER_NAME);
	if (IS_ERR(pvdc->mmio))
		return PTR_ERR(pvdc->mmio);
	ret = pcim_request_region(pdev, PVDC_VRAM_BAR, PVDC_DRIVER_NAME);
	if (ret)
		return ret;
	pvdc->vram_base = pci_resource_start(pdev, PVDC_VRAM_BAR);
	pvdc->vram_size = pci_resource_len(pdev, PVDC_VRAM_BAR);

	ret = pvdc_read_caps(pvdc);
	if (ret)
		return ret;
	ret = pvdc_remove_boot_framebuffers(pvdc);
	if (ret)
		return ret;
	pvdc_clock_init(pvdc);
	/* Before the BAR goes: devres runs in reverse. */
	ret = devm_add_action_or_reset(&pdev->dev, pvdc_fini, pvdc);
	if (ret)
		return ret;
	ret = pvdc_sanitize(pvdc);
	if (ret)
		return ret;

	/* Above all of VRAM, before the colour tables take its top. */
	ret = pvdc_gem_init(pvdc);
	if (ret)
		return ret;
	ret = pvdc_color_init(pvdc);
	if (ret)
		return ret;

	ret = pvdc_kms_init(pvdc);
	if (ret)
		return ret;

	pci_set_drvdata(pdev, drm);

	ret = pvdc_irq_init(pvdc, pdev);
	if (ret)
		return ret;

	return pvdc_register(pvdc);
}

/*
 * The next driver finds no binding: every head is turned off, then every
 * binding dropped.  No one else touches the device any more (unplugged, or
 * asleep); a device that went away holds nothing.
 */
static void pvdc_unbind_all(struct pvdc_device *pvdc)
{
	bool device = pvdc_read(pvdc, PVDC_REG_ID) == PVDC_ID &&
		      !pvdc_sanitize(pvdc);

	pvdc_gem_unbind_all(pvdc, device);
}

/*
 * Quiesced first: nothing schedules a work any more, and a work that runs
 * meanwhile completes in software.  The works are gone before the unplug,
 * so that none commits to an unplugged device.
 */
static void pvdc_pci_remove(struct pci_dev *pdev)
{
	struct drm_device *drm = pci_get_drvdata(pdev);
	struct pvdc_device *pvdc = to_pvdc(drm);

	pvdc_irq_quiesce(pvdc);
	pvdc_works_cancel(pvdc);
	drm_dev_unplug(drm);
	/* The device is not touched any more: this completes in software. */
	drm_atomic_helper_shutdown(drm);
	flush_work(&pvdc->release_work);
	pvdc_unbind_all(pvdc);
	pvdc_clock_fini(pvdc);
}

static void pvdc_pci_shutdown(struct pci_dev *pdev)
{
	drm_atomic_helper_shutdown(pci_get_drvdata(pdev));
}

static int pvdc_pm_suspend(struct device *dev)
{
	struct drm_device *drm = dev_get_drvdata(dev);
	struct pvdc_device *pvdc = to_pvdc(drm);
	u32 hotplug = pvdc_irq_heads_mask(pvdc, PVDC_INT_HOTPLUG);
	int ret;

	/*
	 * No hotplug may commit behind the state suspend saves, nor once the
	 * device sleeps: resume reports what happened meanwhile.
	 */
	pvdc_update_int_enable(pvdc, 0, hotplug);
	synchronize_irq(pvdc->irq);
	cancel_work_sync(&pvdc->hotplug_work);
	ret = drm_mode_config_helper_suspend(drm);
	if (ret) {
		pvdc_update_int_enable(pvdc, hotplug, 0);
		schedule_work(&pvdc->hotplug_work);
		return ret;
	}
	/* Every head is off: nothing is due, no work may run any more. */
	pvdc_irq_quiesce(pvdc);
	pvdc_works_cancel(pvdc);
	/* Whether or not waking resets the device, it holds no binding. */
	pvdc_gem_unbind_all(pvdc, true);
	/* A powered-down device has no clock to read. */
	pvdc_clock_fini(pvdc);

	return 0;
}

/*
 * Waking from S3 resets the device: every head off, sequence numbers back
 * to 0.  Take it from there and commit the state saved at suspend.  A
 * device that does not come back stays quiesced, and the saved state is
 * committed all the same, completing without the device: clients find
 * what they left, the suspend state and its framebuffers are released,
 * and the next suspend saves that state again for a resume that works.
 */
static int pvdc_pm_resume(struct device *dev)
{
	struct drm_device *drm = dev_get_drvdata(dev);
	struct pvdc_device *pvdc = to_pvdc(drm);
	int ret, err;

	pvdc_clock_resume(pvdc);
	err = pvdc_sanitize(pvdc);
	if (err) {
		drm_err(drm, "the device did not resume (%d): it shows nothing until the next resume\n",
			err);
	} else {
		spin_lock_irq(&pvdc->irq_lock);
		WRITE_ONCE(pvdc->quiesced, false);
		spin_unlock_irq(&pvdc->irq_lock);
		pvdc_update_int_enable(pvdc, pvdc_irq_base_mask(pvdc), 0);
	}
	ret = drm_mode_config_helper_resume(drm);
	/* What the connectors show may have changed while asleep. */
	if (!err)
		schedule_work(&pvdc->hotplug_work);

	return err ?: ret;
}

static DEFINE_SIMPLE_DEV_PM_OPS(pvdc_pm_ops, pvdc_pm_suspend, pvdc_pm_resume);

static const struct pci_device_id pvdc_pci_ids[] = {
	{ PCI_DEVICE(PVDC_PCI_VENDOR_ID, PVDC_PCI_DEVICE_ID) },
	{ }
};
MODULE_DEVICE_TABLE(pci, pvdc_pci_ids);

static struct pci_driver pvdc_pci_driver = {
	.name = PVDC_DRIVER_NAME,
	.id_table = pvdc_pci_ids,
	.probe = pvdc_pci_probe,
	.remove = pvdc_pci_remove,
	.shutdown = pvdc_pci_shutdown,
	.driver.pm = pm_sleep_ptr(&pvdc_pm_ops),
};

drm_module_pci_driver(pvdc_pci_driver);

MODULE_DESCRIPTION("DRM driver for the QEMU paravirtual display controller");
MODULE_LICENSE("GPL");
