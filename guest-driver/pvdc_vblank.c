// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: vblank counters and timestamps.
 *
 * The device's vblanks are instants of its clock: once a commit enables a
 * head at t0, vblank n is at t0 + n * FRAME_PERIOD.  The driver reads t0
 * and the period once, when the enable latches, and from then on computes
 * the counter and the timestamps itself: a page flip costs no register
 * access for vblank bookkeeping, and process context never reads a 64-bit
 * register pair that the interrupt handler also reads.
 *
 * Timestamps are in ktime, which runs from another source than the device
 * clock (kvmclock or the TSC under KVM, the host's clock at TCG's pace
 * without it), drifts from it by up to hundreds of ppm and steps when the
 * machine is stopped.  So the driver keeps one mapping from the device
 * clock (CLOCK_LO/HI) to ktime: anchored on a reading of the device clock
 * bracketed by two readings of ktime, and corrected from time to time by a
 * change of slope, never by a step, so that the intervals between
 * timestamps stay those of the device.
 *
 * Why not ktime read in the interrupt handler, as drivers of real hardware
 * stamp their vblanks: a virtual machine's interrupt arrives late by
 * whatever the host is doing, milliseconds on a loaded host, and every
 * timestamp would carry that delay; compositors that pace their frames by
 * the timestamps then miss frames.  A late handler could not give a missed
 * vblank its own time either, nor a page flip's event its latch frame.
 * Why not a device that stamps its vblanks in a clock the guest reads
 * directly: no such clock is common to KVM and TCG guests.
 */

#include <linux/math64.h>

#include <drm/drm_drv.h>
#include <drm/drm_print.h>
#include <drm/drm_vblank.h>

#include "pvdc_drv.h"
#include "pvdc_trace.h"

/* Best of up to this many readings of the device clock per sync. */
#define PVDC_CLOCK_SAMPLES	8
/*
 * A reading is only used if ktime moved less than twice this across it:
 * on a loaded host the vCPU may stop for milliseconds in the middle.
 */
#define PVDC_CLOCK_MAX_HALF_NS	(25 * NSEC_PER_USEC)
/* Beyond this error the mapping is re-anchored at once (a resume). */
#define PVDC_CLOCK_STEP_NS	(2 * NSEC_PER_MSEC)
/* Largest rate difference followed, in units of 2^-32 (1000 ppm). */
#define PVDC_CLOCK_MAX_SKEW	(BIT_ULL(32) / 1000)
#define PVDC_CLOCK_MAX_INTERVAL	64	/* seconds between syncs */
/* How far ahead of its estimate the interrupt handler places itself. */
#define PVDC_CLOCK_IRQ_MARGIN_NS	(10 * NSEC_PER_USEC)
#define PVDC_CLOCK_IRQ_MARGIN_MAX_NS	(200 * NSEC_PER_USEC)

struct pvdc_clock_sample {
	u64 dev;		/* device clock, ns */
	s64 kt;			/* ktime at the same instant, ns */
	u64 half;		/* ... give or take this much */
};

/* ------------------------------------------------------------------------ */
/* Device clock <-> ktime                                                   */
/* ------------------------------------------------------------------------ */

/* @delta scaled by 1 + skew / 2^32, or by its inverse. */
static s64 pvdc_clock_scale(s64 delta, s64 skew, bool inverse)
{
	u64 mag = abs(delta), corr;
	bool neg = (delta < 0) != (skew < 0);

	if (!inverse)
		corr = mul_u64_u32_shr(mag, abs(skew), 32);
	else
		corr = mul_u64_u64_div_u64(mag, abs(skew), BIT_ULL(32) + skew);
	if (inverse)
		neg = !neg;

	return delta + (neg ? -(s64)corr : (s64)corr);
}

/* The mapping as one consistent triple: interrupt handlers read it too. */
static void pvdc_clock_get(struct pvdc_clock *clock, u64 *dev0, s64 *kt0,
			   s64 *skew)
{
	unsigned int seq;

	do {
		seq = read_seqcount_begin(&clock->seq);
		*dev0 = clock->dev0;
		*kt0 = clock->kt0;
		*skew = clock->skew;
	} while (read_seqcount_retry(&clock->seq, seq));
}

static s64 pvdc_clock_to_ktime(struct pvdc_clock *clock, u64 dev)
{
	s64 kt0, skew;
	u64 dev0;

	pvdc_clock_get(clock, &dev0, &kt0, &skew);
	return kt0 + pvdc_clock_scale(dev - dev0, skew, false);
}

static u64 pvdc_clock_from_ktime(struct pvdc_clock *clock, s64 kt)
{
	s64 kt0, skew;
	u64 dev0;

	pvdc_clock_get(clock, &dev0, &kt0, &skew);
	return dev0 + pvdc_clock_scale(kt - kt0, skew, true);
}

static u64 pvdc_clock_now(struct pvdc_device *pvdc)
{
	return pvdc_clock_from_ktime(&pvdc->clock, ktime_get_ns());
}

/*
 * One reading of the device clock between two of ktime, interrupts off so
 * that only the host can stretch the bracket.  Without @full, the high
 * half is the one the mapping predicts: it is off by far less than 2^31 ns.
 */
static void pvdc_clock_sample(struct pvdc_device *pvdc, bool full,
			      struct pvdc_clock_sample *s)
{
	u32 hi = 0, hi2 = 0, lo;
	unsigned long flags;
	s64 k1, k2;

	local_irq_save(flags);
	if (full)
		hi = pvdc_read(pvdc, PVDC_REG_CLOCK_HI);
	k1 = ktime_get_ns();
	lo = pvdc_read(pvdc, PVDC_REG_CLOCK_LO);
	k2 = ktime_get_ns();
	if (full)
		hi2 = pvdc_read(pvdc, PVDC_REG_CLOCK_HI);
	local_irq_restore(flags);

	s->kt = k1 + (k2 - k1) / 2;
	s->half = (k2 - k1) / 2 + 1;
	if (full) {
		/* HI moved on between the reads: LO tells on which side. */
		if (hi != hi2 && lo < BIT(31))
			hi = hi2;
		s->dev = (u64)hi << 32 | lo;
	} else {
		u64 guess = pvdc_clock_from_ktime(&pvdc->clock, s->kt);

		s->dev = guess + (s32)(lo - (u32)guess);
	}
}

/*
 * The tightest of a few readings (many for an anchor, which has nothing
 * to correct it); false if none was tight enough.
 */
static bool pvdc_clock_best_sample(struct pvdc_device *pvdc, bool full,
				   struct pvdc_clock_sample *best)
{
	unsigned int i, tries = full ? 16 * PVDC_CLOCK_SAMPLES :
				PVDC_CLOCK_SAMPLES;
	struct pvdc_clock_sample s;

	for (i = 0; i < tries; i++) {
		pvdc_clock_sample(pvdc, full, &s);
		if (!i || s.half < best->half)
			*best = s;
		if (best->half <= PVDC_CLOCK_MAX_HALF_NS / 4)
			break;
	}

	return best->half <= PVDC_CLOCK_MAX_HALF_NS;
}

static void pvdc_clock_set(struct pvdc_clock *clock, u64 dev0, s64 kt0,
			   s64 skew)
{
	unsigned long flags;

	spin_lock_irqsave(&clock->lock, flags);
	write_seqcount_begin(&clock->seq);
	clock->dev0 = dev0;
	clock->kt0 = kt0;
	clock->skew = clamp_t(s64, skew, -(s64)PVDC_CLOCK_MAX_SKEW,
			      (s64)PVDC_CLOCK_MAX_SKEW);
	write_seqcount_end(&clock->seq);
	spin_unlock_irqrestore(&clock->lock, flags);
}

/* @rate, a skew in units of 2^-32, in parts per billion. */
static s64 pvdc_clock_ppb(s64 rate)
{
	return div64_s64(rate * NSEC_PER_SEC, BIT_ULL(32));
}

/* Anchor the mapping on @s, at the rate it follows; @err: why. */
static void pvdc_clock_anchor(struct pvdc_clock *clock,
			      const struct pvdc_clock_sample *s, s64 err)
{
	pvdc_clock_set(clock, s->dev, s->kt, clock->rate);
	WRITE_ONCE(clock->error, s->half);
	clock->interval = 1;
	trace_pvdc_clock_sync(s->dev, s->half, err, pvdc_clock_ppb(clock->rate),
			      clock->interval, true);
}

/*
 * Compare the mapping with a new sample.  A small error is absorbed by a
 * change of slope over the next interval, so that the mapping stays
 * continuous; the interval between syncs doubles while the errors stay
 * within what the samples can tell.
 */
static void pvdc_clock_sync(struct pvdc_device *pvdc, bool hard)
{
	struct pvdc_clock *clock = &pvdc->clock;
	struct pvdc_clock_sample s;
	s64 err, elapsed, skew;
	u64 next;

	/* A loose reading would only move the mapping away: try later. */
	if (!pvdc_clock_best_sample(pvdc, hard, &s) && !hard) {
		clock->interval = 1;
		return;
	}
	if (hard) {
		pvdc_clock_anchor(clock, &s, 0);
		return;
	}

	elapsed = s.dev - clock->dev0;
	err = s.kt - pvdc_clock_to_ktime(clock, s.dev);
	if (abs(err) > PVDC_CLOCK_STEP_NS || elapsed <= 0) {
		drm_warn(&pvdc->drm, "device clock mapping off by %lld ns: anchored again\n",
			 err);
		pvdc_clock_anchor(clock, &s, err);
		return;
	}

	if (abs(err) <= 4 * s.half + 10 * NSEC_PER_USEC)
		clock->interval = min(clock->interval * 2,
				      PVDC_CLOCK_MAX_INTERVAL);
	else
		clock->interval = 1;
	next = (u64)clock->interval * NSEC_PER_SEC;

	/*
	 * The error built up over @elapsed is a rate error: follow half of
	 * it.  Absorb the error itself over the next interval.
	 */
	clock->rate = clamp_t(s64, clock->rate +
			      div64_s64(err * (s64)BIT_ULL(32), 2 * elapsed),
			      -(s64)PVDC_CLOCK_MAX_SKEW,
			      (s64)PVDC_CLOCK_MAX_SKEW);
	skew = clock->rate + div64_s64(err * (s64)BIT_ULL(32), next);
	pvdc_clock_set(clock, s.dev, s.kt - err, skew);
	WRITE_ONCE(clock->error, s.half + abs(err));
	trace_pvdc_clock_sync(s.dev, s.half, err, pvdc_clock_ppb(clock->rate),
			      clock->interval, false);
}

static void pvdc_clock_sync_work(struct work_struct *work)
{
	struct pvdc_device *pvdc = container_of(to_delayed_work(work),
						struct pvdc_device,
						clock.sync_work);
	int idx;

	if (!drm_dev_enter(&pvdc->drm, &idx))
		return;
	pvdc_clock_sync(pvdc, false);
	drm_dev_exit(idx);

	schedule_delayed_work(&pvdc->clock.sync_work,
			      pvdc->clock.interval * HZ);
}

void pvdc_clock_init(struct pvdc_device *pvdc)
{
	struct pvdc_clock *clock = &pvdc->clock;

	spin_lock_init(&clock->lock);
	seqcount_spinlock_init(&clock->seq, &clock->lock);
	INIT_DELAYED_WORK(&clock->sync_work, pvdc_clock_sync_work);
	pvdc_clock_sync(pvdc, true);
	schedule_delayed_work(&clock->sync_work, clock->interval * HZ);
}

/* Our clock stood still while the machine slept; the device's did not. */
void pvdc_clock_resume(struct pvdc_device *pvdc)
{
	pvdc_clock_sync(pvdc, true);
	schedule_delayed_work(&pvdc->clock.sync_work,
			      pvdc->clock.interval * HZ);
}

void pvdc_clock_fini(struct pvdc_device *pvdc)
{
	cancel_delayed_work_sync(&pvdc->clock.sync_work);
}

/* ------------------------------------------------------------------------ */
/* Timelines                                                                */
/* ------------------------------------------------------------------------ */

/* VBLANK_COUNT and VBLANK_TIME of one instant. */
static void pvdc_head_read_vblank(struct pvdc_head *head, u32 *count,
				  u64 *time)
{
	struct pvdc_device *pvdc = head->pvdc;
	u32 base = PVDC_HEAD_CONTROL(head->index);
	unsigned int rereads = 0;
	unsigned long flags;
	u32 lo, hi, again;

	spin_lock_irqsave(&pvdc->reg64_lock, flags);
	*count = pvdc_read(pvdc, base + PVDC_HEAD_VBLANK_COUNT);
	for (;;) {
		/* Reading LO latches HI. */
		lo = pvdc_read(pvdc, base + PVDC_HEAD_VBLANK_TIME_LO);
		hi = pvdc_read(pvdc, base + PVDC_HEAD_VBLANK_TIME_HI);
		again = *count;
		*count = pvdc_read(pvdc, base + PVDC_HEAD_VBLANK_COUNT);
		if (*count == again)
			break;
		/* A vblank in between: LO and HI may be of two vblanks. */
		rereads++;
	}
	spin_unlock_irqrestore(&pvdc->reg64_lock, flags);

	*time = (u64)hi << 32 | lo;
	trace_pvdc_vblank_read(head->index, *count, *time, rereads);
}

bool pvdc_timeline_on(struct pvdc_head *head)
{
	unsigned long flags;
	bool on;

	spin_lock_irqsave(&head->tl_lock, flags);
	on = head->tl.on;
	spin_unlock_irqrestore(&head->tl_lock, flags);

	return on;
}

/*
 * The head is off: take the device's frozen counter.  After a disable the
 * driver's counter follows it; on @reset (probe, resume) it carries on
 * from where it was, whatever the device's counter says.
 */
static void pvdc_timeline_off(struct pvdc_head *head, bool reset)
{
	struct pvdc_timeline *tl = &head->tl;
	unsigned long flags;
	u32 count;
	u64 time;

	pvdc_head_read_vblank(head, &count, &time);

	spin_lock_irqsave(&head->tl_lock, flags);
	tl->on = false;
	if (reset)
		tl->offset = tl->off_count - count;
	else
		tl->off_count = count + tl->offset;
	tl->dev_count = count;
	tl->off_time = time;
	spin_unlock_irqrestore(&head->tl_lock, flags);
}

void pvdc_timeline_reset(struct pvdc_head *head)
{
	pvdc_timeline_off(head, true);
}

/*
 * An enable latched: vblank n of the new timeline is at t0 + n * period.
 * The driver's counter counts the enable as a frame start of its own, so
 * that the event of the enabling commit carries the latch time.
 */
void pvdc_timeline_start(struct pvdc_head *head)
{
	struct pvdc_device *pvdc = head->pvdc;
	struct pvdc_timeline *tl = &head->tl;
	unsigned long flags;
	u32 count, period;
	u64 time;

	period = pvdc_read(pvdc, PVDC_HEAD_CONTROL(head->index) +
			   PVDC_HEAD_FRAME_PERIOD);
	pvdc_head_read_vblank(head, &count, &time);
	/* Off again already: the disable that follows reads it. */
	if (!period)
		return;

	spin_lock_irqsave(&head->tl_lock, flags);
	tl->offset++;
	tl->period = period;
	/* The handler may run after the first vblanks of the timeline. */
	tl->t0 = time - (u64)(count - tl->dev_count) * period;
	tl->count0 = tl->dev_count + tl->offset;
	tl->on = true;
	spin_unlock_irqrestore(&head->tl_lock, flags);
	drm_dbg_vbl(head->crtc.dev,
		    "head %u on: VBLANK_COUNT %u at %llu, was %u: t0 %llu, counter %u\n",
		    head->index, count, time, tl->dev_count, tl->t0, tl->count0);
}

/* A disable latched, at a vblank: the device froze its counter there. */
void pvdc_timeline_stop(struct pvdc_head *head)
{
	pvdc_timeline_off(head, false);
}

/*
 * The counter at device time @now and the device time of the vblank that
 * started its frame.  Never less than already reported: a correction of
 * the clock mapping must not move the counter backwards.
 */
static u32 pvdc_head_count_at(struct pvdc_head *head, u64 now, u64 *when)
{
	struct pvdc_timeline *tl = &head->tl;
	u32 count;
	u64 n;

	lockdep_assert_held(&head->tl_lock);

	if (!tl->on) {
		count = tl->off_count;
		*when = tl->off_time;
	} else if (now < tl->t0) {
		count = tl->count0;
		*when = tl->t0;
	} else {
		n = div64_u64(now - tl->t0, tl->period);
		count = tl->count0 + (u32)n;
		*when = tl->t0 + n * tl->period;
	}

	if ((s32)(count - tl->floor) < 0) {
		drm_dbg_vbl(head->crtc.dev,
			    "head %u: counter %u held at %u (now %llu, t0 %llu)\n",
			    head->index, count, tl->floor, now, tl->t0);
		count = tl->floor;
		*when = tl->floor_time;
	}
	tl->floor = count;
	tl->floor_time = *when;

	return count;
}

static u64 pvdc_head_now(struct pvdc_head *head)
{
	return READ_ONCE(head->irq_now) ?: pvdc_clock_now(head->pvdc);
}

/*
 * Where the core's vblank calls about to be made stand (0: nowhere, they
 * read the clock).  Only the holder of now_lock sets it, and sets it back
 * to 0 before it lets go: the interrupt handler and a commit completing
 * its event without the device never overwrite each other's.  A callback
 * on another CPU that reads it meanwhile gets a vblank the device has
 * passed, which the counter's floor keeps in order.
 */
static void pvdc_head_set_now(struct pvdc_head *head, u64 now)
{
	lockdep_assert_held(&head->now_lock);
	WRITE_ONCE(head->irq_now, now);
}

/* Device time at which the counter of an enabled head reaches @count. */
static u64 pvdc_tl_time_of(const struct pvdc_timeline *tl, u32 count)
{
	return tl->t0 + (u64)(u32)(count - tl->count0) * tl->period;
}

/* How far the device's clock may be from the mapping's, at most. */
u64 pvdc_clock_margin(struct pvdc_device *pvdc)
{
	return min_t(u64, 2 * READ_ONCE(pvdc->clock.error) +
		     PVDC_CLOCK_IRQ_MARGIN_NS, PVDC_CLOCK_IRQ_MARGIN_MAX_NS);
}

/*
 * Where the interrupt handler stands: the device has passed the vblank or
 * latch it reports, so the handler places itself past any error of the
 * mapping, for the counter it reports not to lag the device.
 */
static u64 pvdc_head_irq_now(struct pvdc_head *head)
{
	return pvdc_clock_now(head->pvdc) + pvdc_clock_margin(head->pvdc);
}

/*
 * The vblank after the one the DRM core was last told about, if the
 * device has passed it by @now: its device time, else 0.
 */
static u64 pvdc_head_next_step(struct pvdc_head *head, u64 now)
{
	struct pvdc_timeline *tl = &head->tl;
	unsigned long flags;
	u64 step = 0, when;
	u32 count, floor;

	spin_lock_irqsave(&head->tl_lock, flags);
	floor = tl->floor;
	if (tl->on && now >= tl->t0) {
		count = tl->count0 + (u32)div64_u64(now - tl->t0, tl->period);
		when = pvdc_tl_time_of(tl, floor + 1);
		if ((s32)(count - floor) > 0 && when >= tl->t0)
			step = when;
	}
	spin_unlock_irqrestore(&head->tl_lock, flags);

	return step;
}

/*
 * Called from the interrupt handler.  A handler that runs late (a loaded
 * host) may find several vblanks passed: the DRM core is told of each in
 * turn, so that every waiter and event gets the vblank it asked for, with
 * that vblank's timestamp: up to a second of a 60 Hz head, a stop of the
 * vCPU that a loaded host does cause.
 */
#define PVDC_VBLANK_REPLAY	64
/* Latches reported early by one handler, at most: one per flip rung. */
#define PVDC_VBLANK_EARLY_LATCHES	4

void pvdc_head_vblank(struct pvdc_head *head)
{
	unsigned long flags;
	unsigned int i;
	u64 now, step;

	/*
	 * Where the handler stands is read once it holds the lock: a wait for
	 * it would otherwise leave vblanks the device has passed untold, and
	 * the CRC read after would number its frame with the newer count.
	 * The device may have latched a commit since it reported what the
	 * handler is at: that is reported first, at its own frame, which the
	 * counter once past it could not go back to.  What the device
	 * latches after it was asked, it latches at a vblank the counter is
	 * not brought past.
	 */
	for (i = 0; ; i++) {
		spin_lock_irqsave(&head->now_lock, flags);
		now = pvdc_head_irq_now(head);
		if (i == PVDC_VBLANK_EARLY_LATCHES ||
		    !pvdc_head_latch_unreported(head))
			break;
		spin_unlock_irqrestore(&head->now_lock, flags);
		pvdc_head_latched_early(head);
	}
	for (i = 0; i < PVDC_VBLANK_REPLAY; i++) {
		step = pvdc_head_next_step(head, now);
		if (!step)
			break;
		pvdc_head_set_now(head, step);
		trace_pvdc_vblank(head->index, step, now);
		if (!drm_crtc_handle_vblank(&head->crtc))
			break;
	}
	/* Too far behind to tell one by one: the core catches up at once. */
	if (i == PVDC_VBLANK_REPLAY) {
		pvdc_head_set_now(head, now);
		trace_pvdc_vblank(head->index, now, now);
		drm_crtc_handle_vblank(&head->crtc);
	}
	pvdc_head_set_now(head, 0);
	spin_unlock_irqrestore(&head->now_lock, flags);

	if (READ_ONCE(head->crc_enabled))
		pvdc_crc_vblank(head);
}

/*
 * Device time a doorbell rung at @now latches at on @head: its next vblank,
 * or 0 when the head is off (an enable latches at the first vblank of its
 * new timeline, a frame of its mode or the device's link-up delay after
 * the doorbell: the timeline tells, once it started).
 */
u64 pvdc_head_next_vblank(struct pvdc_head *head, u64 now)
{
	struct pvdc_timeline *tl = &head->tl;
	unsigned long flags;
	u64 next = 0;

	spin_lock_irqsave(&head->tl_lock, flags);
	if (tl->on && now < tl->t0)
		next = tl->t0 + tl->period;
	else if (tl->on)
		next = tl->t0 + (div64_u64(now - tl->t0, tl->period) + 1) *
		       tl->period;
	spin_unlock_irqrestore(&head->tl_lock, flags);

	return next;
}

u64 pvdc_clock_device_now(struct pvdc_device *pvdc)
{
	return pvdc_clock_now(pvdc);
}

/* Device time the head was enabled at, for the event of the enable. */
u64 pvdc_timeline_t0(struct pvdc_head *head)
{
	unsigned long flags;
	u64 t0;

	spin_lock_irqsave(&head->tl_lock, flags);
	t0 = head->tl.on ? head->tl.t0 : 0;
	spin_unlock_irqrestore(&head->tl_lock, flags);

	return t0;
}

/* Device time of vblank @frame (a VBLANK_COUNT) of the running timeline. */
u64 pvdc_head_frame_time(struct pvdc_head *head, u32 frame)
{
	struct pvdc_timeline *tl = &head->tl;
	unsigned long flags;
	u64 time = 0;
	u32 count;

	spin_lock_irqsave(&head->tl_lock, flags);
	count = frame + tl->offset;
	if (tl->on && (s32)(count - tl->count0) >= 0)
		time = pvdc_tl_time_of(tl, count);
	spin_unlock_irqrestore(&head->tl_lock, flags);

	return time;
}

/*
 * The DRM core's number of device vblank @frame (a VBLANK_COUNT).  The
 * core's counter stands for the driver's counter it was last given, the
 * floor: counting back from there keeps the number right when the device
 * passed another vblank that the core was not told of yet, where the
 * distance to VBLANK_COUNT read now would number the frame one low (and
 * the next frame's entry after it then skip one).  The two are read as
 * one pair under the core's vblank_time_lock, which its counter updates
 * hold from the driver's counter callback to the store: another CPU in
 * between (a vblank wait's update) has moved the floor and not yet the
 * count, which would number the frame one low as well.
 */
u64 pvdc_head_frame_count(struct pvdc_head *head, u32 frame)
{
	struct drm_device *drm = head->crtc.dev;
	struct pvdc_timeline *tl = &head->tl;
	unsigned long flags;
	u64 count;
	s32 back;

	spin_lock_irqsave(&drm->vblank_time_lock, flags);
	spin_lock(&head->tl_lock);
	count = drm_crtc_vblank_count(&head->crtc);
	back = (s32)(tl->floor - (frame + tl->offset));
	spin_unlock(&head->tl_lock);
	spin_unlock_irqrestore(&drm->vblank_time_lock, flags);

	return count - back;
}

/*
 * The device time to stamp the event of a latch with, given @when, the
 * driver's idea of that time.  The latch lies after the one the last
 * event carried (a head latches once per vblank at most, and a commit
 * waits for the event of the one before) and before now (the device
 * reported it).  @when outside of that, a prediction gone wrong (made
 * after the doorbell from a clock mapping that lags the device, and not
 * caught by the reading before it), is dropped: 0 stands for the vblank
 * the handler is at, which lies after both.
 */
u64 pvdc_head_latch_time(struct pvdc_head *head, u64 when)
{
	if (when && (when <= head->stamped || when > pvdc_head_irq_now(head))) {
		drm_dbg_vbl(head->crtc.dev,
			    "head %u: latch at %llu not after %llu or in the future\n",
			    head->index, when, head->stamped);
		when = 0;
	}
	return when;
}

/*
 * Complete @event with the frame the device latched it at, device time
 * @latched (0: as the interrupt handler sees it now).  The DRM core's
 * counter only moves with vblank interrupts, which page flips do without:
 * bring it up to that frame first, from the timeline.  Returns the device
 * time of the vblank the event carries.
 */
u64 pvdc_head_send_event(struct pvdc_head *head,
			 struct drm_pending_vblank_event *event, u64 latched)
{
	struct drm_crtc *crtc = &head->crtc;
	struct drm_device *drm = crtc->dev;
	unsigned long flags, now_flags;
	u64 stamp = latched;

	/* From the interrupt handler, or a commit done without the device. */
	spin_lock_irqsave(&head->now_lock, now_flags);
	pvdc_head_set_now(head, latched ? latched : pvdc_head_irq_now(head));
	/* Once off, the core's counter is the one drm_crtc_vblank_off() saved. */
	if (pvdc_timeline_on(head)) {
		drm_crtc_accurate_vblank_count(crtc);
		spin_lock_irqsave(&head->tl_lock, flags);
		stamp = head->tl.floor_time;
		spin_unlock_irqrestore(&head->tl_lock, flags);
	}
	spin_lock_irqsave(&drm->event_lock, flags);
	drm_crtc_send_vblank_event(crtc, event);
	spin_unlock_irqrestore(&drm->event_lock, flags);
	pvdc_head_set_now(head, 0);
	spin_unlock_irqrestore(&head->now_lock, now_flags);

	return stamp;
}

/* ------------------------------------------------------------------------ */
/* CRTC vblank callbacks                                                    */
/* ------------------------------------------------------------------------ */

u32 pvdc_crtc_get_vblank_counter(struct drm_crtc *crtc)
{
	struct pvdc_head *head = to_pvdc_head(crtc);
	u64 now = pvdc_head_now(head), when;
	unsigned long flags;
	u32 count;

	spin_lock_irqsave(&head->tl_lock, flags);
	count = pvdc_head_count_at(head, now, &when);
	spin_unlock_irqrestore(&head->tl_lock, flags);

	return count;
}

bool pvdc_crtc_get_vblank_timestamp(struct drm_crtc *crtc, int *max_error,
				    ktime_t *vblank_time, bool in_vblank_irq)
{
	struct pvdc_head *head = to_pvdc_head(crtc);
	struct pvdc_device *pvdc = head->pvdc;
	u64 now = pvdc_head_now(head), when;
	unsigned long flags;

	spin_lock_irqsave(&head->tl_lock, flags);
	pvdc_head_count_at(head, now, &when);
	spin_unlock_irqrestore(&head->tl_lock, flags);

	/* A head never enabled has no vblank to stamp. */
	if (!when)
		return false;

	*vblank_time = ns_to_ktime(pvdc_clock_to_ktime(&pvdc->clock, when));
	*max_error = min_t(u32, READ_ONCE(pvdc->clock.error), INT_MAX);

	return true;
}

int pvdc_crtc_enable_vblank(struct drm_crtc *crtc)
{
	u32 vblank = PVDC_INT(drm_crtc_index(crtc), PVDC_INT_VBLANK);

	pvdc_update_int_enable(to_pvdc(crtc->dev), vblank, 0);

	return 0;
}

void pvdc_crtc_disable_vblank(struct drm_crtc *crtc)
{
	u32 vblank = PVDC_INT(drm_crtc_index(crtc), PVDC_INT_VBLANK);

	pvdc_update_int_enable(to_pvdc(crtc->dev), 0, vblank);
}
