// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: the commit tail, doorbells and their completion.
 *
 * A commit writes the shadow registers of the heads and planes it changes
 * and rings the doorbell of each head it leaves on.  The device latches the
 * armed state at the head's next vblank and raises COMMIT_DONE; the commit
 * is complete when the head's DONE_SEQ has reached the ARMED_SEQ of its
 * doorbell, and only then are its event sent and its old framebuffers
 * unpinned.  Nothing here completes on a clock: only whoever waits for a
 * blocking commit gives up after a bound (pvdc_atomic_commit()), and every
 * tail runs in a worker, so that no process waits on the device in it.
 *
 * Heads are independent: each has its own sequence numbers and wait queue.
 * The locks they share (irq_lock, reg64_lock and damage_lock around
 * register accesses, bind_lock around BIND commands the device completes
 * at once) are never held across a wait for a latch.
 * What must be ordered between heads is ordered by the device: a commit
 * that moves a plane or a shared resource from one head to another rings
 * one MULTI_DOORBELL over both, and one that takes what an earlier commit
 * releases waits for that commit to latch first (pvdc_global.c).  A
 * connector moves with a modeset of both heads: the one that gives it up
 * is turned off, and that latched, before any head is enabled.
 *
 * Doorbells are rung with PVDC_DOORBELL_AMEND: an update that comes while
 * a commit waits for its vblank joins it.  That is what lets a cursor move
 * without delaying a page flip, and a page flip follow cursor moves
 * without missing its vblank.
 */

#include <linux/slab.h>

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_helper.h>
#include <drm/drm_drv.h>
#include <drm/drm_framebuffer.h>
#include <drm/drm_modeset_lock.h>
#include <drm/drm_print.h>
#include <drm/drm_vblank.h>

#include "pvdc_drv.h"
#include "pvdc_trace.h"

/* ------------------------------------------------------------------------ */
/* Commit state                                                             */
/* ------------------------------------------------------------------------ */

/*
 * The latches live in the commit, not in its new CRTC states: the tail
 * waits for them after drm_atomic_helper_commit_hw_done(), when those
 * states may already be freed by the next commit (struct pvdc_atomic_state).
 */
struct drm_atomic_state *pvdc_atomic_state_alloc(struct drm_device *drm)
{
	struct pvdc_atomic_state *state;

	state = kzalloc(sizeof(*state), GFP_KERNEL);
	if (!state)
		return NULL;
	if (drm_atomic_state_init(drm, &state->base)) {
		kfree(state);
		return NULL;
	}

	return &state->base;
}

/*
 * Before a retry after a deadlock, and before the state is freed: never
 * while a latch is on a head's list, since the tail waits for all of them.
 */
void pvdc_atomic_state_clear(struct drm_atomic_state *state)
{
	struct pvdc_atomic_state *pstate = to_pvdc_atomic_state(state);

	pvdc_gem_unreserve(state);
	drm_atomic_state_default_clear(state);
	memset(pstate->latches, 0, sizeof(pstate->latches));
	pstate->takes = false;
}

void pvdc_atomic_state_free(struct drm_atomic_state *state)
{
	drm_atomic_state_default_release(state);
	kfree(to_pvdc_atomic_state(state));
}

/* ------------------------------------------------------------------------ */
/* Blocking commits                                                         */
/* ------------------------------------------------------------------------ */

/*
 * Steps of a bounded wait: jiffies fall behind ktime on a kernel whose
 * periodic tick loses interrupts (the debug kernel under TCG, a loaded
 * host), and a single wait of the bound's jiffies lasted two or three
 * times the bound there.  Each step ends on a tick, and ktime says
 * whether the bound has passed.
 */
#define PVDC_WAIT_STEP_MS	100

/*
 * A wait on the device for whoever committed: killable, and bounded by
 * PVDC_LATCH_TIMEOUT_MS of ktime unless @bounded is false.  Giving up
 * completes nothing: the commit still completes when the device latches
 * it.
 */
static int pvdc_wait_commit(struct drm_device *drm, struct completion *done,
			    bool bounded)
{
	ktime_t deadline = ktime_add_ms(ktime_get(), PVDC_LATCH_TIMEOUT_MS);
	long ret;
	s64 left;

	if (!bounded)
		return wait_for_completion_killable(done);

	do {
		left = ktime_to_ns(ktime_sub(deadline, ktime_get()));
		if (left <= 0) {
			drm_err_ratelimited(drm, "the device latched no commit for %ld ms\n",
					    PVDC_LATCH_TIMEOUT_MS);
			return -ETIMEDOUT;
		}
		left = min_t(s64, DIV_ROUND_UP_ULL(left, NSEC_PER_MSEC),
			     PVDC_WAIT_STEP_MS);
		ret = wait_for_completion_killable_timeout(done,
							   msecs_to_jiffies(left));
	} while (!ret);

	return ret < 0 ? ret : 0;
}

/*
 * The commits a new one depends on (drm_atomic_helper_wait_for_dependencies()):
 * the last on each of its CRTCs, and those that last changed its planes and
 * connectors.  Their modeset locks are ours: none is added meanwhile.
 */
static int pvdc_wait_dependencies(struct drm_atomic_state *state)
{
	struct drm_connector_state *conn_state;
	struct drm_connector *connector;
	struct drm_plane_state *plane_state;
	struct drm_crtc_state *crtc_state;
	struct drm_device *drm = state->dev;
	struct drm_crtc_commit *commit;
	/* Only the iterator's: the old state holds the commit. */
	struct drm_plane *plane __maybe_unused;
	struct drm_crtc *crtc;
	int i, ret;

	for_each_new_crtc_in_state(state, crtc, crtc_state, i) {
		spin_lock(&crtc->commit_lock);
		commit = list_first_entry_or_null(&crtc->commit_list,
						  struct drm_crtc_commit,
						  commit_entry);
		if (commit)
			drm_crtc_commit_get(commit);
		spin_unlock(&crtc->commit_lock);
		if (!commit)
			continue;
		ret = pvdc_wait_commit(drm, &commit->flip_done, true);
		drm_crtc_commit_put(commit);
		if (ret)
			return ret;
	}
	for_each_old_plane_in_state(state, plane, plane_state, i) {
		if (!plane_state->commit)
			continue;
		ret = pvdc_wait_commit(drm, &plane_state->commit->flip_done,
				       true);
		if (ret)
			return ret;
	}
	for_each_old_connector_in_state(state, connector, conn_state, i) {
		if (!conn_state->commit)
			continue;
		ret = pvdc_wait_commit(drm, &conn_state->commit->flip_done,
				       true);
		if (ret)
			return ret;
	}

	return 0;
}

/*
 * An event or out-fence of the caller's in @state: the atomic ioctl frees
 * those it still finds in the state when the commit fails.
 */
static bool pvdc_commit_signals(struct drm_atomic_state *state)
{
	struct drm_crtc_state *crtc_state;
	struct drm_crtc *crtc;
	int i;

	for_each_new_crtc_in_state(state, crtc, crtc_state, i)
		if (crtc_state->event && (crtc_state->event->base.fence ||
					  crtc_state->event->base.file_priv))
			return true;

	return false;
}

/*
 * Every tail runs in a worker, and a blocking commit waits for it here:
 * the tail waits for the device without a timeout (a commit completes
 * when the device latches it), its caller only as long as a latch can
 * take.  A blocking commit waits first for the commits it depends on,
 * then goes the nonblocking way, where the core refuses what would have
 * to wait: the core's own ten-second wait for dependencies, shorter than
 * the device's link-up delay may be, never waits.  A caller that gives
 * up gets an error; its commit is applied when the device latches it.
 * Once the commit is queued, a caller with an event or out-fence gives up
 * only when killed, and is told of no error: the atomic ioctl would free
 * them under the tail that signals them.  The commit confirms its check's
 * reservation before it waits for anything, and the reservation ends when
 * drm_atomic_helper_commit() returned: its buffers are bound by then, or
 * will not be (pvdc_gem.c).
 */
int pvdc_atomic_commit(struct drm_device *drm, struct drm_atomic_state *state,
		       bool nonblock)
{
	bool bounded;
	unsigned int i;
	int ret;

	pvdc_gem_reserve_confirm(state);
	if (nonblock || state->async_update) {
		ret = drm_atomic_helper_commit(drm, state, nonblock);
		pvdc_gem_unreserve(state);
		return ret;
	}

	ret = pvdc_wait_dependencies(state);
	if (ret)
		return ret;
	bounded = !pvdc_commit_signals(state);
	ret = drm_atomic_helper_commit(drm, state, true);
	pvdc_gem_unreserve(state);
	if (ret)
		return ret;

	/* Our reference keeps the commits the state holds. */
	for (i = 0; i < drm->mode_config.num_crtc && !ret; i++) {
		struct drm_crtc_commit *commit = state->crtcs[i].commit;

		if (commit)
			ret = pvdc_wait_commit(drm, &commit->cleanup_done,
					       bounded);
	}
	if (!ret && state->fake_commit)
		ret = pvdc_wait_commit(drm, &state->fake_commit->cleanup_done,
				       bounded);

	return bounded ? ret : 0;
}

/* ------------------------------------------------------------------------ */
/* Doorbells                                                                */
/* ------------------------------------------------------------------------ */

static bool pvdc_heads_idle(struct pvdc_device *pvdc, u32 mask)
{
	unsigned int h;

	lockdep_assert_held(&pvdc->irq_lock);

	for (h = 0; h < pvdc->num_heads; h++)
		if (mask & BIT(h) && pvdc->heads[h].seq != pvdc->heads[h].done)
			return false;

	return true;
}

static bool pvdc_heads_idle_locked(struct pvdc_device *pvdc, u32 mask)
{
	bool idle;

	spin_lock_irq(&pvdc->irq_lock);
	idle = pvdc_heads_idle(pvdc, mask) || pvdc->quiesced;
	spin_unlock_irq(&pvdc->irq_lock);

	return idle;
}

static void pvdc_heads_hold(struct pvdc_device *pvdc, u32 mask)
{
	unsigned int h;

	spin_lock_irq(&pvdc->irq_lock);
	for (h = 0; h < pvdc->num_heads; h++)
		if (mask & BIT(h))
			pvdc->heads[h].hold++;
	spin_unlock_irq(&pvdc->irq_lock);
}

static void pvdc_heads_unhold(struct pvdc_device *pvdc, u32 mask)
{
	unsigned int h;

	lockdep_assert_held(&pvdc->irq_lock);

	for (h = 0; h < pvdc->num_heads; h++)
		if (mask & BIT(h) && !WARN_ON(!pvdc->heads[h].hold))
			pvdc->heads[h].hold--;
}

static void pvdc_heads_unhold_locked(struct pvdc_device *pvdc, u32 mask)
{
	spin_lock_irq(&pvdc->irq_lock);
	pvdc_heads_unhold(pvdc, mask);
	spin_unlock_irq(&pvdc->irq_lock);
}

/*
 * Complete @latch without the device: it is gone, or the commit needed no
 * doorbell.  Process context.
 */
static void pvdc_latch_complete_now(struct pvdc_head *head,
				    struct pvdc_latch *latch)
{
	/* The device wrote nothing, or nobody can tell. */
	pvdc_writeback_complete(latch, -ENODEV);
	if (latch->event)
		pvdc_head_send_event(head, latch->event, 0);
	latch->event = NULL;
	/* Pairs with pvdc_wait_latches(): the latch may be freed after. */
	smp_store_release(&latch->completed, true);
}

/*
 * When what was rung after device time @before latches: at each head's
 * next vblank, a group at the latest of its members'.  An enabled head's
 * event then carries that frame however late the interrupt is handled.
 * Only if a vblank may have passed between @before and now (the clock
 * mapping's margin included: a vCPU stopped in between, or a doorbell
 * rung right at a vblank) is the prediction in doubt, and the interrupt
 * handler asks the device (DONE_FRAME): a flip costs that read only then.
 * A commit with a writeback job may latch whole frames late (the device's
 * writeback budget): the handler always asks, or for a group stamps the
 * frame it is at.
 */
static void pvdc_latch_times(struct pvdc_device *pvdc, u32 mask, bool group,
			     struct pvdc_latch **latches, u64 before)
{
	u64 margin = pvdc_clock_margin(pvdc), last = 0;
	u64 now = pvdc_clock_device_now(pvdc) + margin;
	u64 when[PVDC_MAX_HEADS];
	bool known = true, sure[PVDC_MAX_HEADS];
	unsigned int h;

	before -= min(before, margin);
	for (h = 0; h < pvdc->num_heads; h++) {
		if (!(mask & BIT(h)))
			continue;
		when[h] = pvdc_head_next_vblank(&pvdc->heads[h], now);
		sure[h] = when[h] == pvdc_head_next_vblank(&pvdc->heads[h],
							   before);
		known &= when[h] != 0;
		last = max(last, when[h]);
	}
	for (h = 0; h < pvdc->num_heads; h++) {
		if (!(mask & BIT(h)))
			continue;
		latches[h]->when = !group ? when[h] : known ? last : 0;
		latches[h]->group = group;
		latches[h]->ask = !sure[h];
		if (latches[h]->wb) {
			latches[h]->ask = true;
			if (group)
				latches[h]->when = 0;
		}
	}
}

/*
 * Ring the doorbells of @mask, the latch of head h being @latches[h], and
 * release @unhold in the same breath: a cursor update that comes after
 * rings its own.  A group must find every member idle, since the device
 * refuses a MULTI_DOORBELL over an armed head: the held heads cannot be
 * armed again meanwhile.
 */
static void pvdc_ring(struct pvdc_device *pvdc, u32 mask, bool group,
		      struct pvdc_latch **latches, u32 unhold)
{
	bool gone = false;
	unsigned int h;
	u64 before;
	int idx;

	group &= hweight32(mask) > 1;
	for (;;) {
		if (group)
			for (h = 0; h < pvdc->num_heads; h++)
				if (mask & BIT(h))
					wait_event(pvdc->heads[h].wq,
						   pvdc_heads_idle_locked(pvdc,
									  BIT(h)));

		spin_lock_irq(&pvdc->irq_lock);
		if (pvdc->quiesced || !drm_dev_enter(&pvdc->drm, &idx)) {
			gone = true;
			break;
		}
		before = pvdc_clock_device_now(pvdc);
		if (!group) {
			for (h = 0; h < pvdc->num_heads; h++)
				if (mask & BIT(h))
					pvdc_write(pvdc, PVDC_HEAD_CONTROL(h) +
						   PVDC_HEAD_DOORBELL,
						   PVDC_DOORBELL_AMEND);
			drm_dev_exit(idx);
			break;
		}
		if (pvdc_heads_idle(pvdc, mask)) {
			pvdc_write(pvdc, PVDC_REG_MULTI_DOORBELL, mask);
			drm_dev_exit(idx);
			break;
		}
		drm_dev_exit(idx);
		spin_unlock_irq(&pvdc->irq_lock);
	}

	if (!gone)
		pvdc_latch_times(pvdc, mask, group, latches, before);
	for (h = 0; h < pvdc->num_heads && !gone; h++) {
		struct pvdc_head *head = &pvdc->heads[h];

		if (!(mask & BIT(h)))
			continue;
		latches[h]->seq = ++head->seq;
		list_add_tail(&latches[h]->link, &head->latches);
		trace_pvdc_doorbell(h, head->seq, latches[h]->when,
				    latches[h]->ask);
		if (latches[h]->wb) {
			head->wb_armed = true;
			head->wb_seq = head->seq;
			head->wb_ctrl = latches[h]->wb_ctrl;
		}
	}
	pvdc_heads_unhold(pvdc, unhold);
	spin_unlock_irq(&pvdc->irq_lock);

	for (h = 0; h < pvdc->num_heads && gone; h++)
		if (mask & BIT(h))
			pvdc_latch_complete_now(&pvdc->heads[h], latches[h]);
}

static bool pvdc_latch_completed(struct pvdc_latch *latch)
{
	/* Pairs with the release: the latch is free to go after this. */
	return smp_load_acquire(&latch->completed);
}

static void pvdc_wait_latches(struct pvdc_device *pvdc, u32 mask,
			      struct pvdc_latch **latches)
{
	unsigned int h;

	for (h = 0; h < pvdc->num_heads; h++) {
		if (!(mask & BIT(h)))
			continue;
		wait_event(pvdc->heads[h].wq, pvdc_latch_completed(latches[h]));
	}
}

static bool pvdc_head_reached(struct pvdc_head *head, u32 seq)
{
	struct pvdc_device *pvdc = head->pvdc;
	bool reached;

	spin_lock_irq(&pvdc->irq_lock);
	reached = pvdc_seq_reached(head->done, seq) || pvdc->quiesced;
	spin_unlock_irq(&pvdc->irq_lock);

	return reached;
}

/*
 * Wait until everything rung on @head so far has latched.  No timeout:
 * each of those latches at an instant fixed when it was rung.
 */
void pvdc_head_wait_rung(struct pvdc_head *head)
{
	struct pvdc_device *pvdc = head->pvdc;
	u32 seq;

	spin_lock_irq(&pvdc->irq_lock);
	seq = head->seq;
	spin_unlock_irq(&pvdc->irq_lock);
	wait_event(head->wq, pvdc_head_reached(head, seq));
}

/*
 * A cursor update in place (pvdc_plane.c) has written the cursor's shadow
 * registers: arm them, unless a commit tail is writing this head, whose
 * doorbell will carry them, or a writeback is armed on it: a doorbell
 * after its latch would write the target again, and the interrupt handler
 * rings this one once the latch cleared the bit (pvdc_writeback_retire()).
 * @rel, if any, is released once the device latched them.  Called with
 * irq_lock held.
 */
void pvdc_head_cursor_doorbell(struct pvdc_head *head,
			       struct pvdc_release *rel)
{
	struct pvdc_device *pvdc = head->pvdc;
	bool later = head->hold || head->wb_armed;

	lockdep_assert_held(&pvdc->irq_lock);

	if (head->wb_armed)
		head->cursor_deferred = true;
	if (!later) {
		pvdc_write(pvdc, PVDC_HEAD_CONTROL(head->index) +
			   PVDC_HEAD_DOORBELL, PVDC_DOORBELL_AMEND);
		head->seq++;
		trace_pvdc_doorbell(head->index, head->seq, 0, false);
	}
	if (rel) {
		rel->seq = later ? head->seq + 1 : head->seq;
		list_add_tail(&rel->link, &head->releases);
	}
}

/* ------------------------------------------------------------------------ */
/* Completion                                                               */
/* ------------------------------------------------------------------------ */

/*
 * The head's timeline follows what the device shows: after a latch that
 * enables or disables it, or one the device refused.
 */
static void pvdc_head_follow_device(struct pvdc_head *head)
{
	struct pvdc_device *pvdc = head->pvdc;
	bool on = pvdc_read(pvdc, PVDC_HEAD_ACTIVE(head->index) +
			    PVDC_HS_CTRL) & PVDC_HS_CTRL_ENABLE;

	if (on != pvdc_timeline_on(head)) {
		if (on)
			pvdc_timeline_start(head);
		else
			pvdc_timeline_stop(head);
	}
}

static void pvdc_head_refused(struct pvdc_head *head, u32 seq, bool resync)
{
	struct pvdc_device *pvdc = head->pvdc;
	struct drm_device *drm = &pvdc->drm;
	u32 result = pvdc_read(pvdc, PVDC_HEAD_CONTROL(head->index) +
			       PVDC_HEAD_RESULT);
	u32 code = FIELD_GET(PVDC_RESULT_CODE_MASK, result);
	u32 plane = FIELD_GET(PVDC_RESULT_PLANE, result);

	/* A member of a group refused because of another head: no news. */
	if (code == PVDC_ERR_GROUP)
		return;

	drm_WARN_ONCE(drm, true,
		      "head %u: device refused commit %u that passed the checks (error %#x, plane %u)\n",
		      head->index, seq, code, plane);
	drm_err_ratelimited(drm,
			    "head %u: device refused commit %u (error %#x, plane %u)%s\n",
			    head->index, seq, code, plane,
			    resync ? "" : ", resynchronizing");
	if (resync)
		return;

	spin_lock(&pvdc->irq_lock);
	pvdc->resync_heads |= BIT(head->index);
	spin_unlock(&pvdc->irq_lock);
	schedule_work(&pvdc->resync_work);
}

/*
 * How far the device got on @head.  With one doorbell outstanding, the
 * interrupt is its latch.  With several (amends, or latches one interrupt
 * reports together) DONE_SEQ says; and then the interrupt of a latch that
 * read already accounted for may still be on its way.  Until it is known
 * to be gone, DONE_SEQ is read again: once nothing is armed, no latch can
 * raise another, and what is pending is cleared.  Its outcome is RESULT's
 * then, which nothing can change any more: a refusal whose interrupt is
 * cleared here is still seen.
 */
static u32 pvdc_head_done_seq(struct pvdc_head *head, bool *rejected,
			      bool early)
{
	struct pvdc_device *pvdc = head->pvdc;
	u32 base = PVDC_HEAD_CONTROL(head->index);
	u32 done;

	lockdep_assert_held(&pvdc->irq_lock);

	if (!early && !*rejected && !head->resolve &&
	    head->seq - head->done == 1)
		return head->seq;

	done = pvdc_read(pvdc, base + PVDC_HEAD_DONE_SEQ);
	if (!pvdc_seq_reached(done, head->done))
		done = head->done;
	head->resolve = done != head->seq;
	if (!head->resolve) {
		pvdc_write(pvdc, PVDC_REG_INT_STATUS,
			   PVDC_INT(head->index, PVDC_INT_COMMIT_DONE |
				    PVDC_INT_COMMIT_REJECTED));
		if (FIELD_GET(PVDC_RESULT_CODE_MASK,
			      pvdc_read(pvdc, base + PVDC_HEAD_RESULT)) !=
		    PVDC_RESULT_APPLIED)
			*rejected = true;
	}

	return done;
}

/*
 * Report what the device latched on @head: on COMMIT_DONE or
 * COMMIT_REJECTED, or @early, before that interrupt, which reading
 * DONE_SEQ and RESULT clears (pvdc_head_latch_unreported()).
 */
static void __pvdc_head_latched(struct pvdc_head *head, bool rejected,
				bool early)
{
	struct pvdc_device *pvdc = head->pvdc;
	struct pvdc_latch *latch, *tmp;
	struct pvdc_release *rel, *rtmp;
	LIST_HEAD(latches);
	bool follow = rejected, resync = false, released = false;
	bool framed = false;
	u32 done, frame = 0;

	spin_lock(&pvdc->irq_lock);
	if (head->seq == head->done) {
		spin_unlock(&pvdc->irq_lock);
		return;
	}
	done = pvdc_head_done_seq(head, &rejected, early);
	/* Early only if the device latched something since the last report. */
	early &= done != head->done;
	head->done = done;
	follow |= rejected;
	if (head->wb_armed && pvdc_seq_reached(done, head->wb_seq))
		pvdc_writeback_retire(head);

	list_for_each_entry_safe(latch, tmp, &head->latches, link) {
		if (!pvdc_seq_reached(done, latch->seq))
			break;
		list_move_tail(&latch->link, &latches);
	}
	/*
	 * The frame the last of them latched at, from the device if the
	 * prediction is in doubt: stable while nothing is armed.  Only for
	 * the event of a flip (the time of an enable is the timeline's start;
	 * a group member's latch point may lie inside one of its frames).
	 */
	latch = list_empty(&latches) ? NULL :
		list_last_entry(&latches, struct pvdc_latch, link);
	if (latch && latch->seq == done && !head->resolve && !rejected &&
	    latch->event && latch->ask && !latch->group && !latch->enables &&
	    !latch->disables) {
		frame = pvdc_read(pvdc, PVDC_HEAD_CONTROL(head->index) +
				  PVDC_HEAD_DONE_FRAME);
		framed = true;
	}
	trace_pvdc_latch(head->index, done, rejected, early, framed, frame);
	list_for_each_entry_safe(rel, rtmp, &head->releases, link) {
		if (!pvdc_seq_reached(done, rel->seq))
			break;
		list_move_tail(&rel->link, &pvdc->released);
		released = true;
	}
	spin_unlock(&pvdc->irq_lock);

	if (released)
		schedule_work(&pvdc->release_work);

	list_for_each_entry(latch, &latches, link) {
		follow |= latch->enables || latch->disables;
		resync |= latch->resync;
	}
	if (follow)
		pvdc_head_follow_device(head);
	if (rejected)
		pvdc_head_refused(head, done, resync);

	/*
	 * Sending the event completes the commit's flip_done, after which
	 * the next commit on the CRTC may run and free this commit's CRTC
	 * states; the latch is in the commit's own state, which its tail
	 * keeps until it sees @completed.  So @completed is the last thing
	 * written to a latch, and _safe saved the next one before.  A
	 * writeback job completes first: its frame is written when the
	 * commit's event tells it is shown.
	 */
	list_for_each_entry_safe(latch, tmp, &latches, link) {
		u64 when = latch->when;

		if (latch->enables)
			when = pvdc_timeline_t0(head);
		else if (framed && latch->seq == done)
			when = pvdc_head_frame_time(head, frame);
		pvdc_writeback_complete(latch, rejected ? -EIO : 0);
		if (latch->event) {
			when = rejected ? 0 : pvdc_head_latch_time(head, when);
			head->stamped = pvdc_head_send_event(head, latch->event,
							     when);
		}
		latch->event = NULL;
		/* The tail may free the latch as soon as it sees this. */
		smp_store_release(&latch->completed, true);
	}
	wake_up_all(&head->wq);
}

/* Called from the interrupt handler on COMMIT_DONE or COMMIT_REJECTED. */
void pvdc_head_latched(struct pvdc_head *head, bool rejected)
{
	__pvdc_head_latched(head, rejected, false);
}

/*
 * Whether the device latched the one commit rung on @head that was not
 * reported yet.  A handler that stopped after its read of INT_ACK (a host
 * that deschedules the vCPU) may stand frames past a latch the device made
 * since, whose interrupt is still to come.  Only for a single commit, whose
 * outcome RESULT tells: with several, the interrupt says whether one was
 * refused.  Called from the interrupt handler.
 */
bool pvdc_head_latch_unreported(struct pvdc_head *head)
{
	struct pvdc_device *pvdc = head->pvdc;
	bool unreported = false;

	spin_lock(&pvdc->irq_lock);
	if (head->seq - head->done == 1)
		unreported = pvdc_read(pvdc, PVDC_HEAD_CONTROL(head->index) +
				       PVDC_HEAD_DONE_SEQ) == head->seq;
	spin_unlock(&pvdc->irq_lock);

	return unreported;
}

/*
 * Report the latches pvdc_head_latch_unreported() found, before the
 * vblanks after them: each event carries its latch frame.
 */
void pvdc_head_latched_early(struct pvdc_head *head)
{
	__pvdc_head_latched(head, false, true);
}

/*
 * Interrupts are masked for good (unbind): the device will not tell about
 * the commits it latches.  Everything it has not reported counts as done,
 * so that no waiter, event or pinned buffer is left behind.
 */
void pvdc_commit_quiesce(struct pvdc_device *pvdc)
{
	struct pvdc_latch *latch, *tmp;
	unsigned int h;

	for (h = 0; h < pvdc->num_heads; h++) {
		struct pvdc_head *head = &pvdc->heads[h];
		LIST_HEAD(latches);

		spin_lock_irq(&pvdc->irq_lock);
		head->done = head->seq;
		head->wb_armed = false;
		head->cursor_deferred = false;
		if (head->wb_rel)
			list_add_tail(&head->wb_rel->link, &pvdc->released);
		head->wb_rel = NULL;
		list_splice_tail_init(&head->latches, &latches);
		list_splice_tail_init(&head->releases, &pvdc->released);
		spin_unlock_irq(&pvdc->irq_lock);

		list_for_each_entry_safe(latch, tmp, &latches, link)
			pvdc_latch_complete_now(head, latch);
		wake_up_all(&head->wq);
	}
	schedule_work(&pvdc->release_work);
}

/* Framebuffers the device no longer reads: unpin, and let go. */
void pvdc_release_work(struct work_struct *work)
{
	struct pvdc_device *pvdc = container_of(work, struct pvdc_device,
						release_work);
	struct pvdc_release *rel, *tmp;
	LIST_HEAD(list);

	spin_lock_irq(&pvdc->irq_lock);
	list_splice_init(&pvdc->released, &list);
	spin_unlock_irq(&pvdc->irq_lock);

	list_for_each_entry_safe(rel, tmp, &list, link) {
		pvdc_gem_fb_unpin(rel->fb);
		drm_framebuffer_put(rel->fb);
		kfree(rel);
	}
}

/* The software state of the heads after probe or resume: nothing armed. */
void pvdc_heads_reset(struct pvdc_device *pvdc)
{
	unsigned int h;

	for (h = 0; h < pvdc->num_heads; h++) {
		struct pvdc_head *head = &pvdc->heads[h];
		u32 seq = pvdc_read(pvdc, PVDC_HEAD_CONTROL(h) +
				    PVDC_HEAD_ARMED_SEQ);

		spin_lock_irq(&pvdc->irq_lock);
		head->seq = seq;
		head->done = seq;
		head->resolve = false;
		head->wb_armed = false;
		head->cursor_deferred = false;
		head->stamped = 0;
		spin_unlock_irq(&pvdc->irq_lock);
		pvdc_timeline_reset(head);
	}
	bitmap_fill(pvdc->stale_heads, PVDC_MAX_HEADS);
	bitmap_fill(pvdc->stale_planes, PVDC_MAX_PLANES);
}

/* ------------------------------------------------------------------------ */
/* Resynchronisation after a refused commit                                 */
/* ------------------------------------------------------------------------ */

/*
 * The device refused a commit the checks passed: the driver's idea of the
 * hardware is wrong.  Rewrite every register of the heads concerned with
 * the state the driver has, through a full modeset of them.
 */
static int pvdc_resync_heads(struct pvdc_device *pvdc, u32 heads,
			     struct drm_modeset_acquire_ctx *ctx)
{
	struct drm_atomic_state *state;
	struct drm_crtc_state *crtc_state;
	struct drm_crtc *crtc;
	int ret = 0;

	state = drm_atomic_state_alloc(&pvdc->drm);
	if (!state)
		return -ENOMEM;
	state->acquire_ctx = ctx;
	state->allow_modeset = true;

	drm_for_each_crtc(crtc, &pvdc->drm) {
		if (!(heads & drm_crtc_mask(crtc)))
			continue;
		crtc_state = drm_atomic_get_crtc_state(state, crtc);
		if (IS_ERR(crtc_state)) {
			ret = PTR_ERR(crtc_state);
			goto out;
		}
		crtc_state->mode_changed = true;
		to_pvdc_crtc_state(crtc_state)->resync = true;
	}
	ret = drm_atomic_commit(state);
out:
	drm_atomic_state_put(state);
	return ret;
}

void pvdc_resync_work(struct work_struct *work)
{
	struct pvdc_device *pvdc = container_of(work, struct pvdc_device,
						resync_work);
	struct drm_device *drm = &pvdc->drm;
	struct drm_modeset_acquire_ctx ctx;
	unsigned int h;
	u32 heads;
	int ret, idx;

	spin_lock_irq(&pvdc->irq_lock);
	heads = pvdc->resync_heads;
	pvdc->resync_heads = 0;
	for (h = 0; h < pvdc->num_heads; h++)
		if (heads & BIT(h))
			set_bit(h, pvdc->stale_heads);
	bitmap_fill(pvdc->stale_planes, PVDC_MAX_PLANES);
	spin_unlock_irq(&pvdc->irq_lock);
	if (!heads || !drm_dev_enter(drm, &idx))
		return;

	DRM_MODESET_LOCK_ALL_BEGIN(drm, ctx, 0, ret);
	ret = pvdc_resync_heads(pvdc, heads, &ctx);
	DRM_MODESET_LOCK_ALL_END(drm, ctx, ret);
	if (ret)
		drm_err(drm, "resynchronizing heads %#x failed: %d\n",
			heads, ret);
	drm_dev_exit(idx);
}

/* ------------------------------------------------------------------------ */
/* Commit tail                                                              */
/* ------------------------------------------------------------------------ */

/* Heads the tail writes: every head of the commit that is or was on. */
static u32 pvdc_commit_heads(struct drm_atomic_state *state)
{
	struct drm_crtc_state *old_state, *new_state;
	struct drm_crtc *crtc;
	u32 mask = 0;
	int i;

	for_each_oldnew_crtc_in_state(state, crtc, old_state, new_state, i)
		if (old_state->active || new_state->active)
			mask |= drm_crtc_mask(crtc);

	return mask;
}

/* Heads that are on and that this commit modesets. */
static u32 pvdc_commit_disabled_heads(struct drm_atomic_state *state)
{
	struct drm_crtc_state *old_state, *new_state;
	struct drm_crtc *crtc;
	u32 mask = 0;
	int i;

	for_each_oldnew_crtc_in_state(state, crtc, old_state, new_state, i)
		if (old_state->active && drm_atomic_crtc_needs_modeset(new_state))
			mask |= drm_crtc_mask(crtc);

	return mask;
}

/*
 * The device refuses new timings, a new route or a new bandwidth
 * allocation on an enabled head, and a connector that two enabled heads
 * drive: turn off every enabled head this commit modesets, with the planes
 * on them, and wait for that to latch before anything is enabled again.
 * A connector this commit moves is then free when its new head takes it.
 */
static void pvdc_commit_disables(struct drm_atomic_state *state, u32 mask)
{
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct pvdc_latch latch[PVDC_MAX_HEADS] = { };
	struct pvdc_latch *latches[PVDC_MAX_HEADS];
	struct drm_plane_state *old_plane_state;
	struct drm_plane *plane;
	unsigned int h;
	int i, idx;

	if (!mask)
		return;

	for (h = 0; h < pvdc->num_heads; h++) {
		latch[h].disables = true;
		latches[h] = &latch[h];
	}
	if (drm_dev_enter(&pvdc->drm, &idx)) {
		for (h = 0; h < pvdc->num_heads; h++)
			if (mask & BIT(h))
				pvdc_write(pvdc, PVDC_HEAD_SHADOW(h) +
					   PVDC_HS_CTRL, 0);
		/* The device refuses enabled planes on a disabled head. */
		for_each_old_plane_in_state(state, plane, old_plane_state, i) {
			const struct pvdc_plane_state *ps =
				to_pvdc_plane_state(old_plane_state);
			u32 p = to_pvdc_plane(plane)->index;

			if (ps->enabled &&
			    mask & BIT(ps->regs[PVDC_REG_INDEX(PVDC_PS_HEAD)]))
				pvdc_write(pvdc, PVDC_PLANE_SHADOW(p) +
					   PVDC_PS_CTRL, 0);
		}
		drm_dev_exit(idx);
	}

	pvdc_ring(pvdc, mask, true, latches, 0);
	pvdc_wait_latches(pvdc, mask, latches);
}

/*
 * Heads that must latch together: a commit spanning heads that modesets,
 * moves a plane from one to another or changes their shares of the
 * device rings them as one group.  Other multi-head commits (page flips of
 * several heads) latch at each head's own vblank.
 */
static bool pvdc_commit_is_group(struct drm_atomic_state *state)
{
	struct drm_plane_state *old_plane_state, *new_plane_state;
	struct drm_crtc_state *crtc_state;
	struct drm_plane *plane;
	struct drm_crtc *crtc;
	int i;

	if (pvdc_global_in_state(state))
		return true;
	for_each_new_crtc_in_state(state, crtc, crtc_state, i)
		if (drm_atomic_crtc_needs_modeset(crtc_state))
			return true;
	for_each_oldnew_plane_in_state(state, plane, old_plane_state,
				       new_plane_state, i) {
		const struct pvdc_plane_state *o =
			to_pvdc_plane_state(old_plane_state);
		const struct pvdc_plane_state *n =
			to_pvdc_plane_state(new_plane_state);

		if (o->regs[PVDC_REG_INDEX(PVDC_PS_HEAD)] !=
		    n->regs[PVDC_REG_INDEX(PVDC_PS_HEAD)])
			return true;
	}

	return false;
}

/*
 * Ring every head the commit leaves on; complete at once the events of the
 * heads it turned off, whose disable latched already.
 */
static u32 pvdc_commit_ring(struct drm_atomic_state *state, u32 held,
			    struct pvdc_latch **latches)
{
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct drm_crtc_state *old_state, *new_state;
	struct drm_crtc *crtc;
	u32 mask = 0;
	int i;

	for_each_oldnew_crtc_in_state(state, crtc, old_state, new_state, i) {
		struct pvdc_crtc_state *pstate = to_pvdc_crtc_state(new_state);
		struct pvdc_latch *latch =
			&to_pvdc_atomic_state(state)->latches[drm_crtc_index(crtc)];

		latch->resync = pstate->resync;
		if (!new_state->active) {
			if (old_state->active)
				pvdc_latch_complete_now(to_pvdc_head(crtc),
							latch);
			continue;
		}
		latch->enables = drm_atomic_crtc_needs_modeset(new_state);
		latches[drm_crtc_index(crtc)] = latch;
		mask |= drm_crtc_mask(crtc);
	}

	if (mask)
		pvdc_ring(pvdc, mask, pvdc_commit_is_group(state), latches,
			  held);
	else
		pvdc_heads_unhold_locked(pvdc, held);

	return mask;
}

void pvdc_atomic_commit_tail(struct drm_atomic_state *state)
{
	struct pvdc_latch *latches[PVDC_MAX_HEADS] = { };
	struct drm_device *drm = state->dev;
	struct pvdc_device *pvdc = to_pvdc(drm);
	u32 held, rung;

	/* Before writing anything: the cursor stays free meanwhile. */
	pvdc_global_serialize(state);

	held = pvdc_commit_heads(state);
	pvdc_heads_hold(pvdc, held);
	pvdc_commit_disables(state, pvdc_commit_disabled_heads(state));
	drm_atomic_helper_commit_modeset_disables(drm, state);
	drm_atomic_helper_commit_modeset_enables(drm, state);
	drm_atomic_helper_commit_planes(drm, state, 0);
	rung = pvdc_commit_ring(state, held, latches);

	/*
	 * From here on, the next commit on these CRTCs may free their new
	 * states (as it may the new global state since the swap): what
	 * follows reads only the latches, which are this commit's, and the
	 * old states, which this commit frees.
	 */
	drm_atomic_helper_commit_hw_done(state);

	/* The old framebuffers are scanned out until the latch. */
	pvdc_wait_latches(pvdc, rung, latches);

	drm_atomic_helper_cleanup_planes(drm, state);
}
