// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: connectors and their encoders, as many as heads.
 *
 * Connector c reports what the device says about the display at the end
 * of its link: connected or not, its EDID, and the preferred size and
 * position a host window (QEMU console c) gives it.  A HOTPLUG interrupt
 * means any of these may have changed.  All of it is the connector's,
 * whatever head drives it.
 *
 * Which head drives it is a route: connector c on any head (HS_CONNECTOR,
 * written with the head's timings when it is enabled), on head c at reset.  The DRM core keeps a
 * connector on one CRTC at most; that a CRTC drives one connector at most
 * is the encoders' possible_clones, which the core checks.
 */

#include <linux/unaligned.h>

#include <drm/drm_atomic_state_helper.h>
#include <drm/drm_drv.h>
#include <drm/drm_edid.h>
#include <drm/drm_mode_config.h>
#include <drm/drm_modes.h>
#include <drm/drm_print.h>
#include <drm/drm_modeset_helper_vtables.h>
#include <drm/drm_probe_helper.h>
#include <drm/drm_property.h>

#include "pvdc_drv.h"

static struct pvdc_head *connector_to_head(struct drm_connector *connector)
{
	return container_of(connector, struct pvdc_head, connector);
}

/*
 * Block @block of the connector's EDID: drm_edid_read_custom() asks for
 * every block the base block's extension count names, the DisplayID one
 * that describes the largest modes included, all within the window.
 */
static int pvdc_edid_read_block(void *data, u8 *buf, unsigned int block,
				size_t len)
{
	struct pvdc_head *head = data;
	size_t start = (size_t)block * EDID_LENGTH;
	u8 word[4];
	size_t i;

	if (start + len > PVDC_EDID_SIZE)
		return -EINVAL;

	for (i = 0; i < len; i += 4) {
		put_unaligned_le32(pvdc_read(head->pvdc, PVDC_EDID(head->index) +
					     start + i), word);
		memcpy(buf + i, word, min_t(size_t, 4, len - i));
	}

	return 0;
}

/* Without an EDID: the standard modes, and the host's size preferred. */
static int pvdc_connector_add_default_modes(struct pvdc_head *head)
{
	struct pvdc_device *pvdc = head->pvdc;
	struct drm_connector *connector = &head->connector;
	struct drm_display_mode *mode;
	u32 preferred;
	int count;

	count = drm_add_modes_noedid(connector, pvdc->max_width,
				     pvdc->max_height);
	preferred = pvdc_read(pvdc, PVDC_HEAD_CONTROL(head->index) +
			      PVDC_HEAD_PREFERRED);
	if (!PVDC_X(preferred) || !PVDC_Y(preferred))
		return count;

	mode = drm_cvt_mode(&pvdc->drm, PVDC_X(preferred), PVDC_Y(preferred),
			    60, false, false, false);
	if (!mode)
		return count;
	mode->type |= DRM_MODE_TYPE_PREFERRED;
	drm_mode_set_name(mode);
	drm_mode_probed_add(connector, mode);

	return count + 1;
}

static int pvdc_connector_get_modes(struct drm_connector *connector)
{
	struct pvdc_head *head = connector_to_head(connector);
	struct pvdc_device *pvdc = head->pvdc;
	struct drm_mode_config *config = &pvdc->drm.mode_config;
	const struct drm_edid *drm_edid = NULL;
	int count = 0, idx;
	u32 pos;

	if (!drm_dev_enter(&pvdc->drm, &idx))
		return 0;

	drm_edid = drm_edid_read_custom(connector, pvdc_edid_read_block, head);
	drm_edid_connector_update(connector, drm_edid);
	if (drm_edid)
		count = drm_edid_connector_add_modes(connector);
	drm_edid_free(drm_edid);
	if (!count)
		count = pvdc_connector_add_default_modes(head);

	pos = pvdc_read(pvdc, PVDC_HEAD_CONTROL(head->index) +
			PVDC_HEAD_SUGGESTED_POS);
	drm_object_property_set_value(&connector->base,
				      config->suggested_x_property,
				      PVDC_X(pos));
	drm_object_property_set_value(&connector->base,
				      config->suggested_y_property,
				      PVDC_Y(pos));

	drm_dev_exit(idx);

	return count;
}

static enum drm_mode_status
pvdc_connector_mode_valid(struct drm_connector *connector,
			  struct drm_display_mode *mode)
{
	struct pvdc_device *pvdc = connector_to_head(connector)->pvdc;
	enum drm_mode_status status = pvdc_mode_check(pvdc, mode);
	u64 primary;

	if (status != MODE_OK)
		return status;

	/* A full-screen XRGB8888 primary must fit in the whole bandwidth. */
	primary = DIV_ROUND_UP_ULL((u64)mode->hdisplay * mode->vdisplay * 4,
				   1024);
	if (primary > pvdc->bandwidth_total)
		return MODE_BAD;

	return MODE_OK;
}

static int pvdc_connector_detect_ctx(struct drm_connector *connector,
				     struct drm_modeset_acquire_ctx *ctx,
				     bool force)
{
	struct pvdc_head *head = connector_to_head(connector);
	struct pvdc_device *pvdc = head->pvdc;
	u32 status;
	int idx;

	if (!drm_dev_enter(&pvdc->drm, &idx))
		return connector_status_disconnected;
	status = pvdc_read(pvdc, PVDC_HEAD_CONTROL(head->index) +
			   PVDC_HEAD_CONNECTOR);
	drm_dev_exit(idx);

	return status & PVDC_CONNECTOR_CONNECTED ? connector_status_connected :
						   connector_status_disconnected;
}

static const struct drm_connector_helper_funcs pvdc_connector_helper_funcs = {
	.get_modes = pvdc_connector_get_modes,
	.mode_valid = pvdc_connector_mode_valid,
	.detect_ctx = pvdc_connector_detect_ctx,
};

static const struct drm_connector_funcs pvdc_connector_funcs = {
	.fill_modes = drm_helper_probe_single_connector_modes,
	.reset = drm_atomic_helper_connector_reset,
	.atomic_duplicate_state = drm_atomic_helper_connector_duplicate_state,
	.atomic_destroy_state = drm_atomic_helper_connector_destroy_state,
};

void pvdc_hotplug_work(struct work_struct *work)
{
	struct pvdc_device *pvdc = container_of(work, struct pvdc_device,
						hotplug_work);
	int idx;

	if (!drm_dev_enter(&pvdc->drm, &idx))
		return;
	drm_kms_helper_hotplug_event(&pvdc->drm);
	drm_dev_exit(idx);
}

int pvdc_output_create_properties(struct pvdc_device *pvdc)
{
	struct drm_device *drm = &pvdc->drm;

	drm_mode_create_suggested_offset_properties(drm);
	if (!drm->mode_config.suggested_x_property ||
	    !drm->mode_config.suggested_y_property)
		return -ENOMEM;

	pvdc->hotplug_mode_update_property =
		drm_property_create_range(drm, DRM_MODE_PROP_IMMUTABLE,
					  "hotplug_mode_update", 0, 1);
	if (!pvdc->hotplug_mode_update_property)
		return -ENOMEM;

	return 0;
}

int pvdc_output_init(struct pvdc_device *pvdc, struct pvdc_head *head)
{
	struct drm_device *drm = &pvdc->drm;
	struct drm_connector *connector = &head->connector;
	struct drm_encoder *encoder = &head->encoder;
	int ret;

	ret = drmm_encoder_init(drm, encoder, NULL, DRM_MODE_ENCODER_VIRTUAL,
				NULL);
	if (ret)
		return ret;
	encoder->possible_crtcs = drm_crtc_mask(&head->crtc);

	ret = drmm_connector_init(drm, connector, &pvdc_connector_funcs,
				  DRM_MODE_CONNECTOR_VIRTUAL, NULL);
	if (ret)
		return ret;
	drm_connector_helper_add(connector, &pvdc_connector_helper_funcs);
	connector->polled = DRM_CONNECTOR_POLL_HPD;
	/* Not attached by default to virtual connectors. */
	drm_connector_attach_edid_property(connector);

	drm_object_attach_property(&connector->base,
				   drm->mode_config.suggested_x_property, 0);
	drm_object_attach_property(&connector->base,
				   drm->mode_config.suggested_y_property, 0);
	/* The preferred mode follows the host window: reprobe on hotplug. */
	drm_object_attach_property(&connector->base,
				   pvdc->hotplug_mode_update_property, 1);

	return drm_connector_attach_encoder(connector, encoder);
}

/*
 * Once every head has its CRTC, its encoder and its writeback connector:
 * every connector's encoder can go on every CRTC.  A CRTC drives one
 * connector at most: those encoders are never clones of each other, so
 * that drm_atomic_helper_check_modeset() refuses two of them on one CRTC,
 * as the device would.  Each is a clone of the writeback encoder of every
 * CRTC, and the other way round.
 */
void pvdc_output_init_routes(struct pvdc_device *pvdc)
{
	struct drm_crtc *crtc;
	u32 crtcs = 0;
	unsigned int c, h;

	drm_for_each_crtc(crtc, &pvdc->drm)
		crtcs |= drm_crtc_mask(crtc);

	for (c = 0; c < pvdc->num_heads; c++) {
		struct drm_encoder *encoder = &pvdc->heads[c].encoder;

		encoder->possible_crtcs = crtcs;
		encoder->possible_clones = drm_encoder_mask(encoder);
	}

	for (h = 0; h < pvdc->num_heads; h++) {
		struct drm_encoder *wb = &pvdc->heads[h].wb.encoder;

		wb->possible_clones = drm_encoder_mask(wb);
		for (c = 0; c < pvdc->num_heads; c++) {
			struct drm_encoder *encoder = &pvdc->heads[c].encoder;

			encoder->possible_clones |= drm_encoder_mask(wb);
			wb->possible_clones |= drm_encoder_mask(encoder);
		}
	}
}

/*
 * The index of the connector @crtc drives in @state, -1 if none (its
 * writeback connector is not one).  On a modeset of @crtc, every connector
 * on it is in @state (drm_atomic_helper_check_modeset()).
 */
int pvdc_output_crtc_connector(struct drm_crtc *crtc,
			       struct drm_atomic_state *state)
{
	struct drm_connector_state *conn_state;
	struct drm_connector *connector;
	int i;

	for_each_new_connector_in_state(state, connector, conn_state, i)
		if (conn_state->crtc == crtc &&
		    connector->connector_type != DRM_MODE_CONNECTOR_WRITEBACK)
			return connector_to_head(connector)->index;

	return -1;
}
