// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: writeback connectors, one per head.
 *
 * A commit that gives a writeback connector a framebuffer (WRITEBACK_FB_ID)
 * sets HS_CTRL WRITEBACK in its head's shadow registers, with the target in
 * HS_WB_*: the latch that applies the commit also writes the frame the head
 * then shows, after the colour pipeline, into the framebuffer, before
 * DONE_SEQ says the commit applied.  So the job completes where the
 * commit's event is sent (pvdc_commit.c), and is refused with the commit.
 *
 * The bit is part of the latched state but writes only at the latch of the
 * doorbell that armed it: a doorbell rung later would write again, and one
 * that amends it before the latch would take the job away.  No commit
 * amends it: the DRM core runs the tail of a CRTC's next commit only after
 * this one's flip_done (drm_atomic_helper_wait_for_dependencies()), which
 * the latch completes, and the next commit's CRTC state has the bit clear
 * again.  Cursor updates in place hold their doorbell until the latch, and
 * the interrupt handler clears the bit in the shadow registers when the
 * latch is reported (pvdc_writeback_retire()), before it rings theirs.
 *
 * The target is a GEM shmem buffer, bound like a plane's (pvdc_gem.c).
 * The active state names it until a later doorbell, which carries the bit
 * cleared, latches: the device counts it as used until then, so the
 * target stays pinned and bound that long, through the head's release
 * list (pvdc_writeback_retire()), not only until the job completes.
 *
 * A job completes once, with its latch: 0 when the device reports the
 * commit applied, -EIO when it refused it, -ENODEV when the device went
 * away first (unbind completes every latch, pvdc_commit_quiesce()).  The
 * suspend commit waits for the last one's flip_done: no job is pending
 * across S3, and resume restores the connector's routing without a job.
 */

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_helper.h>
#include <drm/drm_atomic_state_helper.h>
#include <drm/drm_drv.h>
#include <drm/drm_edid.h>
#include <drm/drm_encoder.h>
#include <drm/drm_fourcc.h>
#include <drm/drm_framebuffer.h>
#include <drm/drm_modeset_helper_vtables.h>
#include <drm/drm_print.h>
#include <drm/drm_probe_helper.h>
#include <drm/drm_writeback.h>

#include "pvdc_drv.h"

static struct pvdc_head *connector_to_head(struct drm_connector *connector)
{
	return wb_to_pvdc_head(drm_connector_to_writeback(connector));
}

/* The new state of @head's writeback connector if it has a job. */
static struct drm_connector_state *
pvdc_writeback_job_state(struct pvdc_head *head, struct drm_atomic_state *state)
{
	struct drm_connector_state *conn_state;

	conn_state = drm_atomic_get_new_connector_state(state, &head->wb.base);
	if (!conn_state || !conn_state->writeback_job ||
	    !conn_state->writeback_job->fb ||
	    conn_state->crtc != &head->crtc)
		return NULL;

	return conn_state;
}

/* ------------------------------------------------------------------------ */
/* Checks                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * The device's target rules.  The DRM core has checked that the connector
 * has a CRTC and that it is active, and drm_gem_fb_create() that the
 * pitch holds a line and the buffer the framebuffer; bound whole
 * (prepare_writeback_job), the target lies in one binding.
 */
static int pvdc_writeback_atomic_check(struct drm_connector *connector,
				       struct drm_atomic_state *state)
{
	struct drm_connector_state *conn_state =
		drm_atomic_get_new_connector_state(state, connector);
	struct pvdc_device *pvdc = to_pvdc(connector->dev);
	const struct drm_display_mode *mode;
	struct drm_crtc_state *crtc_state;
	struct drm_framebuffer *fb;
	int ret;

	if (!conn_state->writeback_job || !conn_state->writeback_job->fb)
		return 0;
	fb = conn_state->writeback_job->fb;

	ret = drm_atomic_helper_check_wb_connector_state(connector, state);
	if (ret)
		return ret;

	crtc_state = drm_atomic_get_new_crtc_state(state, conn_state->crtc);
	if (!crtc_state)
		return -EINVAL;
	mode = &crtc_state->mode;
	if (fb->width != mode->hdisplay || fb->height != mode->vdisplay) {
		drm_dbg_atomic(connector->dev,
			       "[CONNECTOR:%d:%s] framebuffer %ux%u, mode %ux%u\n",
			       connector->base.id, connector->name, fb->width,
			       fb->height, mode->hdisplay, mode->vdisplay);
		return -EINVAL;
	}
	if (fb->pitches[0] % pvdc->pitch_align ||
	    fb->offsets[0] % pvdc->offset_align) {
		drm_dbg_atomic(connector->dev,
			       "[CONNECTOR:%d:%s] pitch %u or offset %u misaligned\n",
			       connector->base.id, connector->name,
			       fb->pitches[0], fb->offsets[0]);
		return -EINVAL;
	}

	return 0;
}

/*
 * The head's writeback registers in the CRTC state, from its connector's
 * job in this commit; HS_WB_OFFSET is known once the buffer is bound
 * (pvdc_writeback_atomic_commit()).  Without a job, the bit is clear: a
 * CRTC state never carries it over to the next commit.
 */
void pvdc_writeback_crtc_regs(struct pvdc_head *head,
			      struct drm_atomic_state *state,
			      struct pvdc_crtc_state *pstate)
{
	struct drm_connector_state *conn_state;
	struct drm_framebuffer *fb;
	u32 *regs = pstate->regs;

	regs[PVDC_REG_INDEX(PVDC_HS_CTRL)] &= ~PVDC_HS_CTRL_WRITEBACK;
	conn_state = pvdc_writeback_job_state(head, state);
	if (!conn_state || !pstate->base.active)
		return;

	fb = conn_state->writeback_job->fb;
	regs[PVDC_REG_INDEX(PVDC_HS_CTRL)] |= PVDC_HS_CTRL_WRITEBACK;
	regs[PVDC_REG_INDEX(PVDC_HS_WB_FORMAT)] = fb->format->format;
	regs[PVDC_REG_INDEX(PVDC_HS_WB_PITCH)] = fb->pitches[0];
}

/* ------------------------------------------------------------------------ */
/* Jobs                                                                     */
/* ------------------------------------------------------------------------ */

/* The device writes into the buffer at its latch: keep it bound. */
static int pvdc_writeback_prepare_job(struct drm_writeback_connector *wb,
				      struct drm_writeback_job *job)
{
	if (!job->fb)
		return 0;

	return pvdc_gem_fb_pin(job->fb);
}

/*
 * After drm_writeback_signal_completion(), which the device's latch (or
 * its refusal, or its absence) triggers, or for a job never queued.
 */
static void pvdc_writeback_cleanup_job(struct drm_writeback_connector *wb,
				       struct drm_writeback_job *job)
{
	if (job->fb)
		pvdc_gem_fb_unpin(job->fb);
}

/*
 * The target's registers, before the doorbell (the head's HS_CTRL is the
 * CRTC's, written by atomic_enable or atomic_flush), and the job handed to
 * the head's latch: it completes when the device reports that doorbell.
 */
static void pvdc_writeback_atomic_commit(struct drm_connector *connector,
					 struct drm_atomic_state *state)
{
	struct drm_connector_state *conn_state =
		drm_atomic_get_new_connector_state(state, connector);
	struct pvdc_head *head = connector_to_head(connector);
	struct pvdc_device *pvdc = head->pvdc;
	struct pvdc_crtc_state *pstate =
		to_pvdc_crtc_state(drm_atomic_get_new_crtc_state(state,
								 &head->crtc));
	struct pvdc_latch *latch =
		&to_pvdc_atomic_state(state)->latches[head->index];
	struct drm_framebuffer *fb = conn_state->writeback_job->fb;
	struct pvdc_release *rel;
	u32 *regs = pstate->regs;
	int idx;

	regs[PVDC_REG_INDEX(PVDC_HS_WB_OFFSET)] = pvdc_gem_fb_address(fb, 0);
	/*
	 * The pin that outlives the job.  Without it (no memory), an unbind
	 * of the target before the next latch would find it busy.
	 */
	rel = kzalloc(sizeof(*rel), GFP_KERNEL);
	if (rel && !pvdc_gem_fb_pin(fb)) {
		drm_framebuffer_get(fb);
		rel->fb = fb;
		spin_lock_irq(&pvdc->irq_lock);
		swap(head->wb_rel, rel);
		spin_unlock_irq(&pvdc->irq_lock);
		/* Only if a latch never came: nothing names it any more. */
		if (rel) {
			pvdc_gem_fb_unpin(rel->fb);
			drm_framebuffer_put(rel->fb);
		}
	}
	kfree(rel);

	if (drm_dev_enter(&pvdc->drm, &idx)) {
		u32 base = PVDC_HEAD_SHADOW(head->index);

		pvdc_write(pvdc, base + PVDC_HS_WB_FORMAT,
			   regs[PVDC_REG_INDEX(PVDC_HS_WB_FORMAT)]);
		pvdc_write(pvdc, base + PVDC_HS_WB_OFFSET,
			   regs[PVDC_REG_INDEX(PVDC_HS_WB_OFFSET)]);
		pvdc_write(pvdc, base + PVDC_HS_WB_PITCH,
			   regs[PVDC_REG_INDEX(PVDC_HS_WB_PITCH)]);
		drm_dev_exit(idx);
	}

	latch->wb = &head->wb;
	latch->wb_ctrl = regs[PVDC_REG_INDEX(PVDC_HS_CTRL)] &
			 ~PVDC_HS_CTRL_WRITEBACK;
	drm_writeback_queue_job(&head->wb, conn_state);
}

/*
 * The latch of @latch is reported, or will never be: complete its job with
 * @status (0: the device wrote the frame).  A latch completes once, and
 * jobs queue in the order of their latches.
 */
void pvdc_writeback_complete(struct pvdc_latch *latch, int status)
{
	if (latch->wb)
		drm_writeback_signal_completion(latch->wb, status);
}

/*
 * The doorbell that armed HS_CTRL WRITEBACK has latched (or was refused):
 * clear the bit in the shadow registers, then ring the cursor update held
 * meanwhile, unless a commit tail holds the head (its doorbell carries
 * it).  Called with irq_lock held, by the interrupt handler.
 */
void pvdc_writeback_retire(struct pvdc_head *head)
{
	struct pvdc_device *pvdc = head->pvdc;

	lockdep_assert_held(&pvdc->irq_lock);

	pvdc_write(pvdc, PVDC_HEAD_SHADOW(head->index) + PVDC_HS_CTRL,
		   head->wb_ctrl);
	head->wb_armed = false;
	/* The next doorbell, whoever rings it, arms the bit cleared. */
	if (head->wb_rel) {
		head->wb_rel->seq = head->seq + 1;
		list_add_tail(&head->wb_rel->link, &head->releases);
		head->wb_rel = NULL;
	}
	if (head->cursor_deferred && !head->hold) {
		pvdc_write(pvdc, PVDC_HEAD_CONTROL(head->index) +
			   PVDC_HEAD_DOORBELL, PVDC_DOORBELL_AMEND);
		head->seq++;
	}
	head->cursor_deferred = false;
}

/* ------------------------------------------------------------------------ */
/* Initialisation                                                           */
/* ------------------------------------------------------------------------ */

static int pvdc_writeback_get_modes(struct drm_connector *connector)
{
	struct pvdc_device *pvdc = to_pvdc(connector->dev);

	return drm_add_modes_noedid(connector, pvdc->max_width,
				    pvdc->max_height);
}

static const struct drm_connector_helper_funcs pvdc_writeback_helper_funcs = {
	.get_modes = pvdc_writeback_get_modes,
	.atomic_check = pvdc_writeback_atomic_check,
	.atomic_commit = pvdc_writeback_atomic_commit,
	.prepare_writeback_job = pvdc_writeback_prepare_job,
	.cleanup_writeback_job = pvdc_writeback_cleanup_job,
};

/*
 * Linux 6.12 has no managed writeback connector: the connector init needs a
 * .destroy, which mode config cleanup (drmm_mode_config_init()) calls.
 */
static const struct drm_connector_funcs pvdc_writeback_connector_funcs = {
	.fill_modes = drm_helper_probe_single_connector_modes,
	.reset = drm_atomic_helper_connector_reset,
	.atomic_duplicate_state = drm_atomic_helper_connector_duplicate_state,
	.atomic_destroy_state = drm_atomic_helper_connector_destroy_state,
	.destroy = drm_connector_cleanup,
};

/* The encoder has nothing to do: the head's latch writes the target. */
static const struct drm_encoder_helper_funcs pvdc_writeback_encoder_funcs = {
};

/*
 * @head's writeback connector, for its CRTC only, with the formats of
 * FORMATS_WRITEBACK the driver knows.  Its encoder is drmm-managed.
 */
int pvdc_writeback_init(struct pvdc_device *pvdc, struct pvdc_head *head)
{
	struct drm_writeback_connector *wb = &head->wb;
	u32 formats[PVDC_MAX_FORMATS];
	unsigned int i, count = 0;
	int ret;

	for (i = 0; i < pvdc->num_formats; i++)
		if (pvdc->wb_format_mask & BIT(i) &&
		    pvdc_format_usable(pvdc->formats[i]) &&
		    drm_format_info(pvdc->formats[i])->num_planes == 1)
			formats[count++] = pvdc->formats[i];
	if (!count) {
		drm_err(&pvdc->drm, "no usable writeback format\n");
		return -ENODEV;
	}

	ret = drmm_encoder_init(&pvdc->drm, &wb->encoder, NULL,
				DRM_MODE_ENCODER_VIRTUAL, NULL);
	if (ret)
		return ret;
	drm_encoder_helper_add(&wb->encoder, &pvdc_writeback_encoder_funcs);
	wb->encoder.possible_crtcs = drm_crtc_mask(&head->crtc);

	ret = drm_writeback_connector_init_with_encoder(&pvdc->drm, wb,
							&wb->encoder,
							&pvdc_writeback_connector_funcs,
							formats, count);
	if (ret)
		return ret;
	drm_connector_helper_add(&wb->base, &pvdc_writeback_helper_funcs);

	/* Its possible_clones: pvdc_output_init_routes(). */
	return 0;
}
