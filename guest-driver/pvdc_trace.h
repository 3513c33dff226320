/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pvdc: tracepoints (events/pvdc/ in tracefs).
 *
 * What the driver learns from the device about each head, and when: the
 * doorbells it rings and the vblank it predicts each will latch at, the
 * latches the device reports and how the driver found their frame, the
 * vblanks the interrupt handler reports to the DRM core, the reads of a
 * head's vblank count and time, and the corrections of the clock mapping.
 * Times are device times, in ns of the device clock (CLOCK_LO/HI), the
 * clock the device latches by: the DRM core's own drm_vblank_event gives
 * the same vblanks in ktime.  The paths that run only when a vblank comes
 * at the wrong moment (a flip's latch frame in doubt, a latch reported
 * before its interrupt, a vblank between two register reads) each show
 * in a field, so that a filter selects them.
 */

#undef TRACE_SYSTEM
#define TRACE_SYSTEM pvdc

#if !defined(_PVDC_TRACE_H_) || defined(TRACE_HEADER_MULTI_READ)
#define _PVDC_TRACE_H_

#include <linux/tracepoint.h>

/*
 * Each event of a head names it by its index, @pipe, which is its CRTC's.
 *
 * A doorbell rung on head @pipe, ARMED_SEQ @seq.  @when: the device time of
 * the vblank the driver expects it to latch at (0: not predicted, the
 * head is off, or a cursor update); @ask: that prediction is in doubt and
 * the latch will read DONE_FRAME.
 */
TRACE_EVENT(pvdc_doorbell,
	    TP_PROTO(unsigned int pipe, u32 seq, u64 when, bool ask),
	    TP_ARGS(pipe, seq, when, ask),
	    TP_STRUCT__entry(__field(unsigned int, pipe)
			     __field(u32, seq)
			     __field(u64, when)
			     __field(bool, ask)),
	    TP_fast_assign(__entry->pipe = pipe;
			   __entry->seq = seq;
			   __entry->when = when;
			   __entry->ask = ask;),
	    TP_printk("pipe=%u seq=%u when=%llu ask=%d", __entry->pipe,
		      __entry->seq, __entry->when, __entry->ask)
);

/*
 * The device latched head @pipe up to DONE_SEQ @seq.  @rejected: it refused
 * the last of them; @early: a vblank interrupt found the latch before the
 * latch's own interrupt came; @frame_read: the driver read the latch
 * frame, @frame, from DONE_FRAME, its prediction being in doubt.
 */
TRACE_EVENT(pvdc_latch,
	    TP_PROTO(unsigned int pipe, u32 seq, bool rejected, bool early,
		     bool frame_read, u32 frame),
	    TP_ARGS(pipe, seq, rejected, early, frame_read, frame),
	    TP_STRUCT__entry(__field(unsigned int, pipe)
			     __field(u32, seq)
			     __field(bool, rejected)
			     __field(bool, early)
			     __field(bool, frame_read)
			     __field(u32, frame)),
	    TP_fast_assign(__entry->pipe = pipe;
			   __entry->seq = seq;
			   __entry->rejected = rejected;
			   __entry->early = early;
			   __entry->frame_read = frame_read;
			   __entry->frame = frame;),
	    TP_printk("pipe=%u seq=%u rejected=%d early=%d frame_read=%d frame=%u",
		      __entry->pipe, __entry->seq, __entry->rejected,
		      __entry->early, __entry->frame_read, __entry->frame)
);

/*
 * The interrupt handler reports the vblank of head @pipe at device time @when
 * to the DRM core, standing at device time @now: @now - @when is how late
 * the handler runs.
 */
TRACE_EVENT(pvdc_vblank,
	    TP_PROTO(unsigned int pipe, u64 when, u64 now),
	    TP_ARGS(pipe, when, now),
	    TP_STRUCT__entry(__field(unsigned int, pipe)
			     __field(u64, when)
			     __field(u64, now)),
	    TP_fast_assign(__entry->pipe = pipe;
			   __entry->when = when;
			   __entry->now = now;),
	    TP_printk("pipe=%u when=%llu now=%llu", __entry->pipe,
		      __entry->when, __entry->now)
);

/*
 * VBLANK_COUNT @count and VBLANK_TIME @time of head @pipe, read together when
 * its timeline starts, stops or is reset; @rereads: times a vblank came
 * between the reads, which were made again.
 */
TRACE_EVENT(pvdc_vblank_read,
	    TP_PROTO(unsigned int pipe, u32 count, u64 time,
		     unsigned int rereads),
	    TP_ARGS(pipe, count, time, rereads),
	    TP_STRUCT__entry(__field(unsigned int, pipe)
			     __field(u32, count)
			     __field(u64, time)
			     __field(unsigned int, rereads)),
	    TP_fast_assign(__entry->pipe = pipe;
			   __entry->count = count;
			   __entry->time = time;
			   __entry->rereads = rereads;),
	    TP_printk("pipe=%u count=%u time=%llu rereads=%u", __entry->pipe,
		      __entry->count, __entry->time, __entry->rereads)
);

/*
 * The mapping from device time to ktime compared with a reading of the
 * device clock at device time @dev, precise to +-@half ns: off by @error
 * ns, its rate now corrected by @rate_ppb; @anchored: it was set to the
 * reading instead (at probe, resume, or an error too large to absorb).
 * The next comparison is @interval s later.
 */
TRACE_EVENT(pvdc_clock_sync,
	    TP_PROTO(u64 dev, u64 half, s64 error, s64 rate_ppb,
		     unsigned int interval, bool anchored),
	    TP_ARGS(dev, half, error, rate_ppb, interval, anchored),
	    TP_STRUCT__entry(__field(u64, dev)
			     __field(u64, half)
			     __field(s64, error)
			     __field(s64, rate_ppb)
			     __field(unsigned int, interval)
			     __field(bool, anchored)),
	    TP_fast_assign(__entry->dev = dev;
			   __entry->half = half;
			   __entry->error = error;
			   __entry->rate_ppb = rate_ppb;
			   __entry->interval = interval;
			   __entry->anchored = anchored;),
	    TP_printk("dev=%llu half=%llu error=%lld rate_ppb=%lld interval=%u anchored=%d",
		      __entry->dev, __entry->half, __entry->error,
		      __entry->rate_ppb, __entry->interval, __entry->anchored)
);

#endif /* _PVDC_TRACE_H_ */

/* Outside the guard: define_trace.h reads this header again. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pvdc_trace
#include <trace/define_trace.h>
