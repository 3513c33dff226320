// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: DRM driver for the QEMU paravirtual display controller.
 *
 * Device probing, memory management (GEM VRAM helpers on BAR2), the mode
 * config and the interrupt handler.  The KMS objects live in pvdc_crtc.c,
 * pvdc_plane.c and pvdc_output.c, the shared resources in pvdc_global.c.
 */

#include <linux/interrupt.h>
#include <linux/iopoll.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/pci.h>

#include <drm/drm_atomic_helper.h>
#include <drm/drm_blend.h>
#include <drm/drm_drv.h>
#include <drm/drm_fbdev_ttm.h>
#include <drm/drm_file.h>
#include <drm/drm_gem_framebuffer_helper.h>
#include <drm/drm_gem_ttm_helper.h>
#include <drm/drm_gem_vram_helper.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_managed.h>
#include <drm/drm_modeset_helper.h>
#include <drm/drm_module.h>
#include <drm/drm_probe_helper.h>
#include <drm/drm_vblank.h>

#include "pvdc_drv.h"

/* Longest a disable of a head left enabled by a previous driver may take. */
#define PVDC_SANITIZE_TIMEOUT_US	(2 * USEC_PER_SEC)

void pvdc_update_int_enable(struct pvdc_device *pvdc, u32 set, u32 clear)
{
	unsigned long flags;
	int idx;

	spin_lock_irqsave(&pvdc->irq_lock, flags);
	pvdc->int_enable = (pvdc->int_enable & ~clear) | set;
	if (drm_dev_enter(&pvdc->drm, &idx)) {
		pvdc_write(pvdc, PVDC_REG_INT_ENABLE, pvdc->int_enable);
		drm_dev_exit(idx);
	}
	spin_unlock_irqrestore(&pvdc->irq_lock, flags);
}

static irqreturn_t pvdc_irq_handler(int irq, void *arg)
{
	struct pvdc_device *pvdc = arg;
	bool hotplug = false;
	unsigned int h;
	u32 status;
	int idx;

	if (!drm_dev_enter(&pvdc->drm, &idx))
		return IRQ_NONE;

	/* One read acknowledges everything it returns. */
	status = pvdc_read(pvdc, PVDC_REG_INT_ACK);
	if (!status || status == ~0u) {
		drm_dev_exit(idx);
		return IRQ_NONE;
	}

	for (h = 0; h < pvdc->num_heads; h++) {
		struct pvdc_head *head = &pvdc->heads[h];
		u32 bits = (status >> (h * PVDC_INT_BITS_PER_HEAD)) &
			   PVDC_INT_HEAD_MASK;

		/* A commit latches at a vblank: count the vblank first. */
		if (bits & PVDC_INT_VBLANK)
			pvdc_head_vblank(head);
		if (bits & (PVDC_INT_COMMIT_DONE | PVDC_INT_COMMIT_REJECTED))
			pvdc_head_commit_done(head,
					      bits & PVDC_INT_COMMIT_REJECTED);
		if (bits & PVDC_INT_HOTPLUG)
			hotplug = true;
	}
	drm_dev_exit(idx);

	if (hotplug)
		schedule_work(&pvdc->hotplug_work);

	return IRQ_HANDLED;
}

static int pvdc_dumb_create(struct drm_file *file, struct drm_device *dev,
			    struct drm_mode_create_dumb *args)
{
	struct pvdc_device *pvdc = to_pvdc(dev);
	unsigned long pitch_align = 0;

	if (is_power_of_2(pvdc->pitch_align))
		pitch_align = pvdc->pitch_align;

	return drm_gem_vram_fill_create_dumb(file, dev, 0, pitch_align, args);
}

static int pvdc_atomic_check(struct drm_device *dev,
			     struct drm_atomic_state *state)
{
	bool rerun = false;
	int pass, ret;

	/*
	 * A plane update that needs a new bandwidth split turns into a
	 * modeset of its head, and that split may need the other heads to
	 * be modeset too; the modeset checks then run again.
	 */
	for (pass = 0; pass < 3; pass++) {
		ret = drm_atomic_helper_check_modeset(dev, state);
		if (ret)
			return ret;
		ret = drm_atomic_normalize_zpos(dev, state);
		if (ret)
			return ret;
		ret = drm_atomic_helper_check_planes(dev, state);
		if (ret)
			return ret;
		ret = pvdc_crtc_global_check(state, &rerun);
		if (ret || !rerun)
			return ret;
	}

	return -EINVAL;
}

static const struct drm_mode_config_funcs pvdc_mode_config_funcs = {
	.fb_create = drm_gem_fb_create,
	.mode_valid = drm_vram_helper_mode_valid,
	.atomic_check = pvdc_atomic_check,
	.atomic_commit = drm_atomic_helper_commit,
};

static const struct drm_mode_config_helper_funcs pvdc_mode_config_helpers = {
	.atomic_commit_tail = pvdc_atomic_commit_tail,
};

DEFINE_DRM_GEM_FOPS(pvdc_fops);

static const struct drm_driver pvdc_driver = {
	.driver_features	= DRIVER_GEM | DRIVER_MODESET | DRIVER_ATOMIC |
				  DRIVER_CURSOR_HOTSPOT,
	.fops			= &pvdc_fops,
	.name			= PVDC_DRIVER_NAME,
	.desc			= "QEMU paravirtual display controller",
	.date			= "20261203",
	.major			= PVDC_VERSION_MAJOR,
	.minor			= PVDC_VERSION_MINOR,
	.debugfs_init		= drm_vram_mm_debugfs_init,
	.dumb_create		= pvdc_dumb_create,
	.dumb_map_offset	= drm_gem_ttm_dumb_map_offset,
	DRM_FBDEV_TTM_DRIVER_OPS,
};

static int pvdc_read_caps(struct pvdc_device *pvdc)
{
	struct drm_device *drm = &pvdc->drm;
	u32 id, version, size, limits;
	u64 vram;
	unsigned int i;

	id = pvdc_read(pvdc, PVDC_REG_ID);
	if (id != PVDC_ID) {
		drm_err(drm, "not a pvdc register file (id %#x)\n", id);
		return -ENODEV;
	}
	version = pvdc_read(pvdc, PVDC_REG_VERSION);
	if (version >> 16 != PVDC_VERSION_MAJOR) {
		drm_err(drm, "unsupported device version %u.%u\n",
			version >> 16, version & 0xffff);
		return -ENODEV;
	}

	pvdc->features = pvdc_read(pvdc, PVDC_REG_FEATURES);
	pvdc->num_heads = pvdc_read(pvdc, PVDC_REG_NUM_HEADS);
	pvdc->num_overlays = pvdc_read(pvdc, PVDC_REG_NUM_OVERLAYS);
	pvdc->num_planes = pvdc_read(pvdc, PVDC_REG_NUM_PLANES);
	pvdc->num_scalers = pvdc_read(pvdc, PVDC_REG_NUM_SCALERS);
	if (pvdc->num_heads < 1 || pvdc->num_heads > PVDC_MAX_HEADS ||
	    pvdc->num_overlays > PVDC_MAX_OVERLAYS ||
	    pvdc->num_planes != pvdc->num_heads * pvdc_planes_per_head(pvdc)) {
		drm_err(drm, "bad topology: %u heads, %u overlays, %u planes\n",
			pvdc->num_heads, pvdc->num_overlays, pvdc->num_planes);
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
	/* A factor of 0 would refuse every plane; treat it as "no scaling". */
	pvdc->max_downscale = max(pvdc->max_downscale, 1u);
	pvdc->max_upscale = max(pvdc->max_upscale, 1u);
	pvdc->pitch_align = max(pvdc_read(pvdc, PVDC_REG_PITCH_ALIGN), 1u);
	pvdc->offset_align = max(pvdc_read(pvdc, PVDC_REG_OFFSET_ALIGN), 1u);
	pvdc->bandwidth_total = pvdc_read(pvdc, PVDC_REG_BANDWIDTH_TOTAL);
	if (!pvdc->max_width || !pvdc->max_height) {
		drm_err(drm, "device reports no maximum size\n");
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

	drm_info(drm, "pvdc %u.%u (features %#x): %u heads, %u overlays each, %u scalers, %llu MiB VRAM, %u KiB/frame\n",
		 version >> 16, version & 0xffff, pvdc->features,
		 pvdc->num_heads, pvdc->num_overlays, pvdc->num_scalers,
		 (u64)pvdc->vram_size >> 20, pvdc->bandwidth_total);

	return 0;
}

/*
 * Bring the device to the state the driver's initial atomic state
 * describes: every plane disabled on its home head, every head disabled.
 * A head a previous driver instance left enabled is disabled with a
 * doorbell, polled since interrupts are not set up yet.
 */
static void pvdc_sanitize(struct pvdc_device *pvdc)
{
	unsigned int h, p;
	u32 armed = 0, val;
	int ret;

	pvdc_write(pvdc, PVDC_REG_INT_ENABLE, 0);
	for (p = 0; p < pvdc->num_planes; p++)
		pvdc_plane_sanitize(pvdc, p);

	for (h = 0; h < pvdc->num_heads; h++) {
		pvdc_write(pvdc, PVDC_HEAD_SHADOW(h) + PVDC_HS_CTRL, 0);
		if (pvdc_read(pvdc, PVDC_HEAD_ACTIVE(h) + PVDC_HS_CTRL) &
		    PVDC_HS_CTRL_ENABLE)
			armed |= BIT(h);
	}
	for (h = 0; h < pvdc->num_heads; h++) {
		if (!(armed & BIT(h)))
			continue;
		ret = readl_poll_timeout(pvdc->mmio + PVDC_HEAD_CONTROL(h) +
					 PVDC_HEAD_DOORBELL, val, !val, 1000,
					 PVDC_SANITIZE_TIMEOUT_US);
		if (!ret) {
			pvdc_write(pvdc, PVDC_HEAD_CONTROL(h) +
				   PVDC_HEAD_DOORBELL, 1);
			ret = readl_poll_timeout(pvdc->mmio +
						 PVDC_HEAD_CONTROL(h) +
						 PVDC_HEAD_DOORBELL, val, !val,
						 1000, PVDC_SANITIZE_TIMEOUT_US);
		}
		if (ret)
			drm_warn(&pvdc->drm, "head %u did not turn off\n", h);
	}

	for (h = 0; h < pvdc->num_heads; h++)
		pvdc->heads[h].armed_seq = pvdc_read(pvdc, PVDC_HEAD_CONTROL(h) +
						     PVDC_HEAD_ARMED_SEQ);
	pvdc_write(pvdc, PVDC_REG_INT_STATUS, ~0u);
}

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
				unsigned int home = (caps[p] >>
						     PVDC_PLANE_CAPS_HOME_SHIFT) &
						    PVDC_PLANE_CAPS_HOME_MASK;
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

static int pvdc_kms_init(struct pvdc_device *pvdc)
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

		head->pvdc = pvdc;
		head->index = h;
		ret = pvdc_crtc_init(pvdc, head);
		if (ret)
			return ret;
		ret = pvdc_output_init(pvdc, head);
		if (ret)
			return ret;
	}

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

static int pvdc_irq_init(struct pvdc_device *pvdc, struct pci_dev *pdev)
{
	u32 enable = 0;
	unsigned int h;
	int ret;

	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSI | PCI_IRQ_INTX);
	if (ret < 0)
		return ret;

	ret = devm_request_irq(&pdev->dev, pci_irq_vector(pdev, 0),
			       pvdc_irq_handler, IRQF_SHARED,
			       PVDC_DRIVER_NAME, pvdc);
	if (ret)
		return ret;

	for (h = 0; h < pvdc->num_heads; h++)
		enable |= PVDC_INT(h, PVDC_INT_COMMIT_DONE |
				   PVDC_INT_COMMIT_REJECTED |
				   PVDC_INT_HOTPLUG);
	pvdc_update_int_enable(pvdc, enable, 0);

	return 0;
}

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

	ret = drmm_mutex_init(drm, &pvdc->hw_lock);
	if (ret)
		return ret;
	spin_lock_init(&pvdc->irq_lock);
	spin_lock_init(&pvdc->clock_lock);
	init_waitqueue_head(&pvdc->commit_wq);
	init_waitqueue_head(&pvdc->global_wq);
	INIT_WORK(&pvdc->hotplug_work, pvdc_hotplug_work);

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
	pvdc_sanitize(pvdc);

	ret = drmm_vram_helper_init(drm, pvdc->vram_base, pvdc->vram_size);
	if (ret)
		return ret;

	ret = pvdc_kms_init(pvdc);
	if (ret)
		return ret;

	pci_set_drvdata(pdev, drm);

	ret = pvdc_irq_init(pvdc, pdev);
	if (ret)
		return ret;

	ret = drm_dev_register(drm, 0);
	if (ret)
		return ret;

	drm_fbdev_ttm_setup(drm, 32);

	return 0;
}

static void pvdc_pci_remove(struct pci_dev *pdev)
{
	struct drm_device *drm = pci_get_drvdata(pdev);
	struct pvdc_device *pvdc = to_pvdc(drm);

	drm_dev_unplug(drm);
	drm_atomic_helper_shutdown(drm);
	cancel_work_sync(&pvdc->hotplug_work);
	/* The BAR is still mapped until the devres release after this. */
	pvdc_write(pvdc, PVDC_REG_INT_ENABLE, 0);
}

static void pvdc_pci_shutdown(struct pci_dev *pdev)
{
	drm_atomic_helper_shutdown(pci_get_drvdata(pdev));
}

static int pvdc_pm_suspend(struct device *dev)
{
	return drm_mode_config_helper_suspend(dev_get_drvdata(dev));
}

/* The device may have been reset: rewrite what the driver keeps of it. */
static int pvdc_pm_resume(struct device *dev)
{
	struct drm_device *drm = dev_get_drvdata(dev);
	struct pvdc_device *pvdc = to_pvdc(drm);
	unsigned int p;

	pvdc_sanitize(pvdc);
	pvdc_update_int_enable(pvdc, 0, 0);
	/* Our clock may have moved relative to the device's meanwhile. */
	spin_lock_irq(&pvdc->clock_lock);
	pvdc->clock_offset_valid = false;
	spin_unlock_irq(&pvdc->clock_lock);
	for (p = 0; p < pvdc->num_planes; p++)
		if (pvdc->planes[p])
			pvdc->planes[p]->shadow_lost = true;

	return drm_mode_config_helper_resume(drm);
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
