// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: CRCs of the composed frames, through the DRM debugfs CRC interface.
 *
 * The device computes a CRC32 of every frame a head scans out while capture
 * is enabled; the vblank interrupt hands it to the DRM core.
 */

#include <linux/string.h>

#include <drm/drm_debugfs_crc.h>
#include <drm/drm_drv.h>
#include <drm/drm_vblank.h>

#include "pvdc_drv.h"

static const char *const pvdc_crc_sources[] = { "auto" };

static bool pvdc_crc_source_enables(const char *source)
{
	return source && !strcmp(source, "auto");
}

int pvdc_verify_crc_source(struct drm_crtc *crtc, const char *source,
			   size_t *values_cnt)
{
	if (source && !pvdc_crc_source_enables(source))
		return -EINVAL;

	*values_cnt = 1;

	return 0;
}

const char *const *pvdc_get_crc_sources(struct drm_crtc *crtc, size_t *count)
{
	*count = ARRAY_SIZE(pvdc_crc_sources);

	return pvdc_crc_sources;
}

int pvdc_set_crc_source(struct drm_crtc *crtc, const char *source)
{
	struct pvdc_device *pvdc = to_pvdc(crtc->dev);
	struct pvdc_head *head = to_pvdc_head(crtc);
	bool enable = pvdc_crc_source_enables(source);
	int idx, ret;

	if (enable == head->crc_enabled)
		return 0;

	/* CRCs arrive with vblank interrupts. */
	if (enable) {
		ret = drm_crtc_vblank_get(crtc);
		if (ret)
			return ret;
	}

	WRITE_ONCE(head->crc_sent, false);
	if (drm_dev_enter(crtc->dev, &idx)) {
		pvdc_write(pvdc, PVDC_HEAD_CONTROL(head->index) +
			   PVDC_HEAD_CRC_CTRL,
			   enable ? PVDC_CRC_CTRL_ENABLE : 0);
		drm_dev_exit(idx);
	}
	WRITE_ONCE(head->crc_enabled, enable);

	if (!enable)
		drm_crtc_vblank_put(crtc);

	return 0;
}

/*
 * Called from the interrupt handler, which needs no drm_dev_enter(): the
 * BAR stays mapped as long as the interrupt is requested (pvdc_drv.c).
 */
void pvdc_crc_vblank(struct pvdc_head *head)
{
	struct pvdc_device *pvdc = head->pvdc;
	u32 base = PVDC_HEAD_CONTROL(head->index);
	u32 crc = pvdc_read(pvdc, base + PVDC_HEAD_CRC_VALUE);
	u32 frame = pvdc_read(pvdc, base + PVDC_HEAD_CRC_FRAME);

	/*
	 * A vCPU held up after INT_ACK until the next vblank reads that
	 * frame's CRC, then takes the next vblank's interrupt inside the same
	 * frame; a capture over the device's budget returns the last CRC
	 * again.  Either way the frame was reported already.
	 */
	if (READ_ONCE(head->crc_sent) && frame == head->crc_frame)
		return;
	WRITE_ONCE(head->crc_sent, true);
	head->crc_frame = frame;

	drm_crtc_add_crc_entry(&head->crtc, true,
			       pvdc_head_frame_count(head, frame), &crc);
}
