// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-vblank: vblank counters and timestamps as user space sees them.
 *
 *   pvdc-vblank [-d CARD] [-H HEAD] [-n FRAMES] [-l LINKUP_MS] TEST...
 *
 *   intervals  FRAMES consecutive vblank events of a steady head
 *              (drmCrtcQueueSequence, nanosecond timestamps): every
 *              interval is the frame period.  Reports the mean and the
 *              standard deviation of the intervals; fails if 3 sigma, or
 *              the mean's error, reaches 0.05 % of the period.
 *   waits      a wait for vblank N (WAIT_VBLANK absolute and relative,
 *              drmCrtcQueueSequence) returns N with N's timestamp, and a
 *              query made while the vblank interrupt is off gives the
 *              timestamp of the frame it is in.
 *   passed     a blocking wait for a sequence that has passed returns in
 *              the frame it was made in, also right after the vblank
 *              interrupt was switched off (on a 2 Hz mode; the device's
 *              VBLANK_COUNT and INT_ENABLE are read through BAR0, which
 *              needs the guest booted with iomem=relaxed).
 *   enable     the event of the commit that enables the head carries the
 *              latch time: one period before the first vblank, and at
 *              least LINKUP_MS after the commit.
 *   modeset-cursor
 *              a nonblocking modeset followed at once by cursor moves: its
 *              event arrives no earlier than the latch (LINKUP_MS after
 *              the commit), with the latch time.
 *   modeset-event
 *              a nonblocking modeset to a mode of MODESET_PERIOD_MS per
 *              frame: its event cannot be read when the ioctl returns
 *              (poll with no timeout), and comes at the first vblank of
 *              the new timeline, at least a frame after the commit,
 *              whatever LINKUP_MS: with a sequence number after any the
 *              head had, and that vblank's time.
 *   flips      FRAMES page flips on a mode of FLIP_PERIOD_US, each made
 *              after the event of the one before, with the vblank
 *              interrupt kept on (an event queued far ahead): each flip
 *              event carries the vblank the device latched the flip at
 *              (its DONE_FRAME, read through BAR0 before the next flip),
 *              and that vblank's timestamp.  With the host loaded, the
 *              interrupt handler often runs frames after the latch; with
 *              two vCPUs, a vblank's handler stopped after it read what
 *              the device raised may find the flip latched since (the
 *              driver's pvdc_latch events with early set, reported as a
 *              figure).
 *   flips-anytime
 *              the same, each flip made a random time into the frame
 *              after the event of the one before: some doorbells ring so
 *              close to a vblank that the driver cannot tell which vblank
 *              latches them and reads DONE_FRAME instead; fails unless the
 *              driver traced such a read (a pvdc_latch event with
 *              frame_read set), so the test always covers that path.
 *   modes      a mode of 0.9 s per frame is accepted and shows its
 *              vblanks; one of 1.1 s (the DRM core waits 10 s for a flip),
 *              and modes whose htotal * vtotal * vscan does not fit the
 *              core's arithmetic, are refused.
 *   fast-enables
 *              a mode of the device's shortest frame
 *              (PVDC_MIN_FRAME_PERIOD_NS) enabled, a vblank waited for,
 *              and disabled, until a vblank came while the interrupt
 *              handler read the vblank time of an enable and it read again
 *              (a pvdc_vblank_read event with rereads), at most FRAMES
 *              times: fails if that never happened.  guest-lifecycle
 *              traces how it read.
 *
 * Prints "ok NAME" / "not ok NAME: why" per check, and "# ..." figures.
 */
#include <math.h>
#include <poll.h>

#include "pvdc-kms-util.h"
#include "pvdc-regs.h"

static struct kms_display disp;
static struct kms_head *head;
static unsigned int head_index;
static unsigned int frames = 300;
static unsigned int linkup_ms;

/*
 * Events, in the order they came: one read may return several, each
 * handler call queues one, next_event() takes the oldest.
 */
#define EVENT_QUEUE	64

static struct {
	uint64_t seq;
	uint64_t time_ns;
	uint64_t data;
	uint64_t at;
	bool seen;
} got, events[EVENT_QUEUE];
static unsigned int ev_head, ev_tail;

static void queue_event(uint64_t seq, uint64_t time_ns, uint64_t data)
{
	if (ev_tail - ev_head == EVENT_QUEUE) {
		printf("not ok more than %u events unread\n", EVENT_QUEUE);
		exit(1);
	}
	events[ev_tail % EVENT_QUEUE].seq = seq;
	events[ev_tail % EVENT_QUEUE].time_ns = time_ns;
	events[ev_tail % EVENT_QUEUE].data = data;
	events[ev_tail % EVENT_QUEUE].at = kms_now_ns();
	ev_tail++;
}

static void vblank_handler(int fd, unsigned int seq, unsigned int sec,
			   unsigned int usec, void *data)
{
	(void)fd;
	(void)data;
	queue_event(seq, (uint64_t)sec * 1000000000ull + usec * 1000ull,
		    (uintptr_t)data);
}

static void flip_handler(int fd, unsigned int seq, unsigned int sec,
			 unsigned int usec, unsigned int crtc, void *data)
{
	(void)crtc;
	vblank_handler(fd, seq, sec, usec, data);
}

static void sequence_handler(int fd, uint64_t seq, uint64_t ns,
			     uint64_t data)
{
	(void)fd;
	queue_event(seq, ns, data);
}

static drmEventContext evctx = {
	.version = 4,
	.vblank_handler = vblank_handler,
	.page_flip_handler2 = flip_handler,
	.sequence_handler = sequence_handler,
};

/* The oldest event not taken yet, into @got; false if none came. */
static bool next_event(int timeout_ms)
{
	struct pollfd pfd = { .fd = disp.fd, .events = POLLIN };

	got.seen = false;
	while (ev_head == ev_tail) {
		if (poll(&pfd, 1, timeout_ms) <= 0)
			return false;
		drmHandleEvent(disp.fd, &evctx);
	}
	got.seq = events[ev_head % EVENT_QUEUE].seq;
	got.time_ns = events[ev_head % EVENT_QUEUE].time_ns;
	got.data = events[ev_head % EVENT_QUEUE].data;
	got.at = events[ev_head % EVENT_QUEUE].at;
	got.seen = true;
	ev_head++;
	return true;
}

static uint64_t period_ns(void)
{
	drmModeCrtc *crtc = drmModeGetCrtc(disp.fd, head->crtc_id);
	uint64_t p = crtc && crtc->mode_valid ?
		     kms_mode_period_ns(&crtc->mode) : 0;

	drmModeFreeCrtc(crtc);
	return p;
}

static int light(const drmModeModeInfo *mode, uint32_t flags, void *data)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	kms_head_on(&disp, req, head, mode);
	return kms_commit(&disp, req, DRM_MODE_ATOMIC_ALLOW_MODESET | flags,
			  data);
}

static int dark(void)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	kms_head_off(&disp, req, head);
	kms_plane_off(&disp, req, head->cursor);
	return kms_commit(&disp, req, DRM_MODE_ATOMIC_ALLOW_MODESET, NULL);
}

static uint32_t high_crtc(void)
{
	return (head->pipe << DRM_VBLANK_HIGH_CRTC_SHIFT) &
	       DRM_VBLANK_HIGH_CRTC_MASK;
}

/* WAIT_VBLANK; the reply's sequence and time (us resolution, in ns). */
static int wait_vblank(uint32_t type, uint32_t seq, uint32_t *reply_seq,
		       uint64_t *reply_ns)
{
	drmVBlank vbl = { 0 };

	vbl.request.type = type | high_crtc();
	vbl.request.sequence = seq;
	if (drmWaitVBlank(disp.fd, &vbl))
		return -errno;
	*reply_seq = vbl.reply.sequence;
	*reply_ns = (uint64_t)vbl.reply.tval_sec * 1000000000ull +
		    vbl.reply.tval_usec * 1000ull;
	return 0;
}

/* |a - b| within @tol ns, b being exact and a truncated to microseconds. */
static bool near_us(uint64_t a, uint64_t b, uint64_t tol)
{
	return a <= b + tol && a + 1000 + tol > b;
}

/* ------------------------------------------------------------------------ */
/* intervals                                                                */
/* ------------------------------------------------------------------------ */

#define QUEUE_AHEAD	16

static void test_intervals(void)
{
	uint64_t p = period_ns(), start, next, last_seq = 0, last_ns = 0;
	double sum = 0, sum2 = 0, mean, sigma, worst = 0;
	unsigned int n = 0, wrong_seq = 0, queued = 0, i;
	int64_t *dev;

	if (!p || drmCrtcGetSequence(disp.fd, head->crtc_id, &start, NULL)) {
		kms_result(false, "intervals: no steady head: %s",
			   strerror(errno));
		return;
	}
	dev = calloc(frames + 1, sizeof(*dev));
	next = start + 2;
	for (i = 0; i < QUEUE_AHEAD; i++, queued++)
		if (drmCrtcQueueSequence(disp.fd, head->crtc_id, 0, next + i,
					 NULL, next + i))
			printf("# queueing vblank %llu: %s\n",
			       (unsigned long long)(next + i), strerror(errno));
	for (i = 0; i <= frames; i++) {
		if (!next_event(3000)) {
			kms_result(false, "intervals: no event for vblank %llu (last %llu, %u for another)",
				   (unsigned long long)(next + i),
				   (unsigned long long)last_seq, wrong_seq);
			free(dev);
			return;
		}
		if (got.seq != next + i) {
			if (wrong_seq < 10)
				printf("# event for %llu (asked %llu): %llu, at %llu, read %+lld ns later\n",
				       (unsigned long long)(next + i),
				       (unsigned long long)got.data,
				       (unsigned long long)got.seq,
				       (unsigned long long)got.time_ns,
				       (long long)(got.at - got.time_ns));
			wrong_seq++;
			continue;
		}
		if (queued <= frames) {
			if (drmCrtcQueueSequence(disp.fd, head->crtc_id, 0,
						 next + queued, NULL,
						 next + queued))
				printf("# queueing vblank %llu: %s\n",
				       (unsigned long long)(next + queued),
				       strerror(errno));
			queued++;
		}
		if (i) {
			double d = (double)(got.time_ns - last_ns) /
				   (double)(got.seq - last_seq);

			dev[n++] = (int64_t)got.time_ns - (int64_t)last_ns -
				   (int64_t)p;
			sum += d;
			sum2 += d * d;
		}
		last_seq = got.seq;
		last_ns = got.time_ns;
	}
	mean = sum / n;
	sigma = sqrt(fmax(sum2 / n - mean * mean, 0));
	for (i = 0; i < n; i++)
		worst = fmax(worst, fabs((double)dev[i]));
	printf("# intervals: %u over %u frames, period %llu ns, mean %.1f ns, sigma %.1f ns, 3 sigma %.5f %% of the period, largest deviation %.0f ns\n",
	       n, frames, (unsigned long long)p, mean, sigma,
	       300.0 * sigma / (double)p, worst);
	kms_result(!wrong_seq, "intervals-events-arrive-for-their-vblank%s",
		   wrong_seq ? ": some came for another" : "");
	kms_result(3 * sigma < 0.0005 * (double)p &&
		   fabs(mean - (double)p) < 0.0005 * (double)p,
		   "intervals-exactly-periodic # sigma %.1f ns, mean %.1f ns",
		   sigma, mean);
	free(dev);
}

/* ------------------------------------------------------------------------ */
/* waits                                                                    */
/* ------------------------------------------------------------------------ */

static void test_waits(void)
{
	uint64_t p = period_ns(), s0, t0, t;
	uint32_t seq;
	int ret;

	if (!p || drmCrtcGetSequence(disp.fd, head->crtc_id, &s0, &t0)) {
		kms_result(false, "waits: no steady head");
		return;
	}

	ret = wait_vblank(DRM_VBLANK_ABSOLUTE, (uint32_t)(s0 + 2), &seq, &t);
	kms_result(!ret && seq == (uint32_t)(s0 + 2) &&
		   near_us(t, t0 + 2 * p, 1000),
		   "wait-absolute-returns-n-with-its-timestamp # asked %u, got %u, %+lld ns",
		   (uint32_t)(s0 + 2), seq,
		   (long long)(t - (t0 + 2 * p)));

	ret = wait_vblank(DRM_VBLANK_RELATIVE, 1, &seq, &t);
	kms_result(!ret && (int32_t)(seq - (uint32_t)(s0 + 2)) >= 1 &&
		   near_us(t, t0 + (uint64_t)(uint32_t)(seq - (uint32_t)s0) * p,
			   1000),
		   "wait-relative-returns-n-with-its-timestamp # got %u", seq);

	ret = drmCrtcQueueSequence(disp.fd, head->crtc_id,
				   DRM_CRTC_SEQUENCE_RELATIVE, 2, NULL, 0);
	if (!ret && next_event(3000))
		kms_result(got.time_ns + 1000 > t0 + (got.seq - s0) * p &&
			   got.time_ns < t0 + (got.seq - s0) * p + 1000,
			   "queue-sequence-event-has-its-timestamp # seq %llu, %+lld ns",
			   (unsigned long long)got.seq,
			   (long long)(got.time_ns - (t0 + (got.seq - s0) * p)));
	else
		kms_result(false, "queue-sequence-event-has-its-timestamp: %s",
			   ret ? strerror(errno) : "no event");

	/* Events of WAIT_VBLANK, absolute. */
	{
		drmVBlank vbl = { 0 };
		uint32_t want;

		drmCrtcGetSequence(disp.fd, head->crtc_id, &s0, &t0);
		want = (uint32_t)s0 + 3;
		vbl.request.type = DRM_VBLANK_ABSOLUTE | DRM_VBLANK_EVENT |
				   high_crtc();
		vbl.request.sequence = want;
		ret = drmWaitVBlank(disp.fd, &vbl) ? -errno : 0;
		if (ret)
			printf("# WAIT_VBLANK with an event: %s\n",
			       strerror(-ret));
		else if (!next_event(3000))
			printf("# no event for vblank %u (reply %u)\n", want,
			       vbl.reply.sequence);
		kms_result(!ret && got.seen &&
			   (uint32_t)got.seq == want &&
			   near_us(got.time_ns, t0 + 3 * p, 1000),
			   "wait-event-for-n-is-for-n-with-its-timestamp # asked %u, got %u",
			   want, (uint32_t)got.seq);
	}
}

/* ------------------------------------------------------------------------ */
/* passed                                                                   */
/* ------------------------------------------------------------------------ */

static volatile uint32_t *bar0;

static uint32_t device_count(void)
{
	return kms_reg(bar0, PVDC_HEAD_CONTROL(head->pipe) +
		       PVDC_HEAD_VBLANK_COUNT);
}

/*
 * A wait for a passed sequence, made and returned within one frame of the
 * device: if it had waited for a vblank, the device's counter would have
 * moved.  A vblank may fall inside by chance: try again, a few times.
 */
static bool passed_wait_returns_at_once(uint32_t passed, uint64_t *latency_ns)
{
	int attempt;

	for (attempt = 0; attempt < 5; attempt++) {
		uint32_t before = device_count(), seq, after;
		uint64_t t, start = kms_now_ns();

		if (wait_vblank(DRM_VBLANK_ABSOLUTE, passed, &seq, &t))
			return false;
		*latency_ns = kms_now_ns() - start;
		after = device_count();
		if (before == after)
			return true;
	}
	return false;
}

static bool vblank_irq_off(void)
{
	uint32_t bit = PVDC_INT(head->pipe, PVDC_INT_VBLANK);
	unsigned int i;

	/* The interrupt goes off at the first vblank nobody waits for. */
	for (i = 0; i < 100; i++) {
		if (!(kms_reg(bar0, PVDC_REG_INT_ENABLE) & bit))
			return true;
		usleep(50000);
	}
	return false;
}

static void test_passed(void)
{
	drmModeModeInfo slow = head->mode;
	uint64_t latency = 0, s0;
	uint32_t seq;
	uint64_t t;
	bool ok;

	bar0 = kms_bar_map(disp.card, PVDC_MMIO_BAR, NULL);
	/* 2 Hz: a vblank within a wait is unlikely, not impossible. */
	slow.clock = (uint32_t)((uint64_t)slow.htotal * slow.vtotal / 500);
	slow.vrefresh = 2;
	if (light(&slow, 0, NULL)) {
		kms_result(false, "passed: 2 Hz mode refused: %s",
			   strerror(errno));
		return;
	}
	drmCrtcGetSequence(disp.fd, head->crtc_id, &s0, NULL);
	wait_vblank(DRM_VBLANK_ABSOLUTE, (uint32_t)s0 + 1, &seq, &t);

	ok = passed_wait_returns_at_once(seq - 1, &latency);
	kms_result(ok, "wait-for-passed-sequence-returns-at-once # %llu us",
		   (unsigned long long)latency / 1000);

	kms_result(vblank_irq_off(), "vblank-interrupt-switched-off");
	ok = passed_wait_returns_at_once(seq - 1, &latency);
	kms_result(ok, "wait-for-passed-sequence-with-interrupt-off-returns-at-once # %llu us",
		   (unsigned long long)latency / 1000);
	light(NULL, 0, NULL);
}

/* ------------------------------------------------------------------------ */
/* enable, modeset-cursor                                                   */
/* ------------------------------------------------------------------------ */

/* Event of the enabling commit (seq, time) against the first vblank's. */
static void check_latch_event(const char *name, uint64_t t_commit)
{
	uint64_t seq = got.seq, when = got.time_ns, p = period_ns();

	if (drmCrtcQueueSequence(disp.fd, head->crtc_id, 0, seq + 1, NULL, 0) ||
	    !next_event(5000)) {
		kms_result(false, "%s: no vblank after the enable", name);
		return;
	}
	/* If seq + 1 has passed already, the reply is for the frame now. */
	kms_result(got.seq > seq &&
		   near_us(when, got.time_ns - (got.seq - seq) * p, 1000),
		   "%s-event-carries-the-latch-time # vblank %llu is %+lld ns after it",
		   name, (unsigned long long)(got.seq - seq),
		   (long long)(got.time_ns - when));
	kms_result(when + 100000 >= t_commit + linkup_ms * 1000000ull,
		   "%s-event-not-before-the-link-up # %.3f ms after the commit",
		   name, (when - (double)t_commit) / 1e6);
}

static void test_enable(void)
{
	uint64_t t_commit;

	if (dark()) {
		kms_result(false, "enable: head off: %s", strerror(errno));
		return;
	}
	t_commit = kms_now_ns();
	if (light(NULL, DRM_MODE_ATOMIC_NONBLOCK | DRM_MODE_PAGE_FLIP_EVENT,
		  NULL) || !next_event(linkup_ms + 10000)) {
		kms_result(false, "enable: no event: %s", strerror(errno));
		return;
	}
	check_latch_event("enable", t_commit);
}

static void test_modeset_cursor(void)
{
	struct kms_buffer cursor;
	struct pollfd pfd = { .fd = disp.fd, .events = POLLIN };
	unsigned int moves = 0, refused = 0;
	uint64_t t_commit, arrived, deadline;

	if (kms_buffer_create(disp.fd, &cursor, 64, 64, DRM_FORMAT_ARGB8888) ||
	    dark()) {
		kms_result(false, "modeset-cursor: set-up: %s",
			   strerror(errno));
		return;
	}
	kms_buffer_fill(&cursor, 1);
	t_commit = kms_now_ns();
	if (light(NULL, DRM_MODE_ATOMIC_NONBLOCK | DRM_MODE_PAGE_FLIP_EVENT,
		  NULL)) {
		kms_result(false, "modeset-cursor: commit: %s",
			   strerror(errno));
		return;
	}
	if (drmModeSetCursor(disp.fd, head->crtc_id, cursor.handle, 64, 64))
		refused++;
	deadline = t_commit + (linkup_ms + 10000) * 1000000ull;
	while (ev_head == ev_tail && (uint64_t)kms_now_ns() < deadline) {
		if (drmModeMoveCursor(disp.fd, head->crtc_id, moves % 200,
				      moves % 150))
			refused++;
		moves++;
		if (poll(&pfd, 1, 0) > 0)
			drmHandleEvent(disp.fd, &evctx);
	}
	arrived = kms_now_ns();
	if (!next_event(0)) {
		kms_result(false, "modeset-cursor: no event");
		return;
	}
	printf("# %u cursor moves (%u refused) before the modeset's event\n",
	       moves, refused);
	kms_result(arrived + 100000 >= t_commit + linkup_ms * 1000000ull &&
		   moves > 0,
		   "modeset-event-arrives-after-the-latch # %.3f ms after the commit",
		   (arrived - (double)t_commit) / 1e6);
	check_latch_event("modeset-cursor", t_commit);
	drmModeSetCursor(disp.fd, head->crtc_id, 0, 0, 0);
	kms_buffer_destroy(disp.fd, &cursor);
}

/* @m with a pixel clock for a frame of @ns nanoseconds. */
static drmModeModeInfo mode_of_period(const drmModeModeInfo *m, uint64_t ns)
{
	drmModeModeInfo r = *m;

	r.clock = (uint32_t)((uint64_t)m->htotal * m->vtotal * 1000000ull / ns);
	r.vrefresh = 1;
	return r;
}

/*
 * Long enough that the ioctl returns within the frame, on a loaded host;
 * short next to the DRM core's 10 s wait for a flip.
 */
#define MODESET_PERIOD_MS	250

static void test_modeset_event(void)
{
	drmModeModeInfo slow = mode_of_period(&head->mode,
					      MODESET_PERIOD_MS * 1000000ull);
	struct pollfd pfd = { .fd = disp.fd, .events = POLLIN };
	uint64_t t_commit, t_before;
	uint32_t before;
	int ready;

	if (wait_vblank(DRM_VBLANK_RELATIVE, 0, &before, &t_before) ||
	    dark()) {
		kms_result(false, "modeset-event: set-up: %s", strerror(errno));
		return;
	}
	t_commit = kms_now_ns();
	if (light(&slow, DRM_MODE_ATOMIC_NONBLOCK | DRM_MODE_PAGE_FLIP_EVENT,
		  NULL)) {
		kms_result(false, "modeset-event: commit: %s", strerror(errno));
		return;
	}
	ready = poll(&pfd, 1, 0);
	kms_result(ready == 0,
		   "modeset-event-not-readable-when-the-ioctl-returns%s",
		   ready > 0 ? ": it is" : ready < 0 ? ": poll failed" : "");
	if (!next_event(linkup_ms + 10000)) {
		kms_result(false, "modeset-event: no event");
		return;
	}
	kms_result((int32_t)((uint32_t)got.seq - before) > 0,
		   "modeset-event-carries-a-vblank-of-the-new-timeline # %llu, the head was at %u",
		   (unsigned long long)got.seq, before);
	kms_result(got.time_ns + 100000 >=
		   t_commit + MODESET_PERIOD_MS * 1000000ull,
		   "modeset-event-a-frame-after-the-commit # %.3f ms after it",
		   (got.time_ns - (double)t_commit) / 1e6);
	check_latch_event("modeset", t_commit);
	light(NULL, 0, NULL);
}

/* ------------------------------------------------------------------------ */
/* flips                                                                    */
/* ------------------------------------------------------------------------ */

/* Short, for the interrupt handler to be late by frames on a busy host. */
#define FLIP_PERIOD_US	4000

static int flip(unsigned int buf)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	struct kms_buffer *fb = &head->buf[buf];

	kms_plane_set(&disp, req, head->primary, head, fb, 0, 0, fb->width,
		      fb->height);
	return kms_commit(&disp, req, DRM_MODE_ATOMIC_NONBLOCK |
			  DRM_MODE_PAGE_FLIP_EVENT, (void *)1);
}

/*
 * Record this head's events @event of the driver (pvdc_trace.h) where
 * @filter holds, in a tracefs instance @name; false, with a "not ok" line
 * for @test, if that cannot be done.
 */
static bool trace_head(struct kms_trace *t, const char *name,
		       const char *event, const char *filter, const char *test)
{
	char f[128];

	snprintf(f, sizeof(f), "pipe == %u && %s", head->pipe, filter);
	if (kms_trace_start(t, name, event, f))
		return true;
	kms_result(false, "%s: tracing %s if %s: %s", test, event, f,
		   strerror(errno));
	return false;
}

static void test_flips(bool anytime)
{
	drmModeModeInfo fast = mode_of_period(&head->mode,
					      FLIP_PERIOD_US * 1000ull);
	const char *name = anytime ? "flips-anytime" : "flips";
	uint64_t p, now, last_seq = 0, last_ns = 0, late = 0;
	uint32_t frame, last_frame = 0;
	struct kms_trace early, reads;
	unsigned int i, wrong = 0;

	if (!trace_head(&early, "pvdc-vblank-early", "pvdc/pvdc_latch",
			"early == 1", name))
		return;
	if (anytime && !trace_head(&reads, "pvdc-vblank-frame-reads",
				   "pvdc/pvdc_latch", "frame_read == 1", name)) {
		kms_trace_stop(&early);
		return;
	}
	if (!bar0)
		bar0 = kms_bar_map(disp.card, PVDC_MMIO_BAR, NULL);
	if (light(&fast, 0, NULL) || !(p = period_ns()) ||
	    drmCrtcGetSequence(disp.fd, head->crtc_id, &now, NULL) ||
	    drmCrtcQueueSequence(disp.fd, head->crtc_id, 0, now + (1u << 30),
				 NULL, 0)) {
		kms_result(false, "%s: set-up: %s", name, strerror(errno));
		light(NULL, 0, NULL);
		kms_trace_stop(&early);
		if (anytime)
			kms_trace_stop(&reads);
		return;
	}
	for (i = 0; i < frames; i++) {
		uint64_t d_ns, want_ns;

		if (anytime) {
			struct timespec ts = { .tv_nsec = random() % p };

			nanosleep(&ts, NULL);
		}
		if (flip(1 - i % 2) || !next_event(3000) || got.data != 1) {
			kms_result(false, "%s: flip %u: %s", name, i,
				   got.seen ? "another event" : strerror(errno));
			break;
		}
		/* Nothing is armed until the next flip: DONE_FRAME holds. */
		frame = kms_reg(bar0, PVDC_HEAD_CONTROL(head->pipe) +
				PVDC_HEAD_DONE_FRAME);
		late += got.at > got.time_ns + p;
		if (i) {
			d_ns = got.time_ns - last_ns;
			want_ns = (uint64_t)(uint32_t)(frame - last_frame) * p;
			/* Timestamps in us; the mapping's slope, 1000 ppm. */
			if (got.seq - last_seq != (uint32_t)(frame - last_frame) ||
			    d_ns + 2000 + want_ns / 1000 < want_ns ||
			    d_ns > want_ns + 2000 + want_ns / 1000) {
				if (wrong < 10)
					printf("# flip %u: event seq +%llu at +%llu ns, device frame +%u, %llu ns\n",
					       i,
					       (unsigned long long)(got.seq - last_seq),
					       (unsigned long long)d_ns,
					       frame - last_frame,
					       (unsigned long long)want_ns);
				wrong++;
			}
		}
		last_seq = got.seq;
		last_ns = got.time_ns;
		last_frame = frame;
	}
	printf("# %s: %u, %llu events read more than a frame after their vblank, %lld latches reported at a vblank before their interrupt\n",
	       name, i, (unsigned long long)late, kms_trace_count(&early));
	kms_trace_stop(&early);
	kms_result(i == frames && !wrong,
		   "%s-events-carry-the-latch-frame-and-its-time%s",
		   anytime ? "anytime-flip" : "flip",
		   wrong ? ": some do not" : "");
	if (anytime) {
		long long n = kms_trace_count(&reads);

		kms_trace_stop(&reads);
		printf("# flips-anytime: the driver read DONE_FRAME %lld times\n",
		       n);
		kms_result(n > 0, "flips-anytime-took-the-done-frame-path%s",
			   n < 0 ? ": the trace cannot be read" :
			   !n ? ": never" : "");
	}
	/* Switching off sends the event queued ahead. */
	dark();
	next_event(1000);
	light(NULL, 0, NULL);
}

/* ------------------------------------------------------------------------ */
/* modes                                                                    */
/* ------------------------------------------------------------------------ */

static int try_mode(const drmModeModeInfo *mode, uint32_t flags)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	kms_head_on(&disp, req, head, mode);
	return kms_commit(&disp, req, DRM_MODE_ATOMIC_ALLOW_MODESET | flags,
			  NULL);
}

static void test_modes(void)
{
	drmModeModeInfo slow = mode_of_period(&head->mode, 900000000ull);
	drmModeModeInfo slower = mode_of_period(&head->mode, 1100000000ull);
	drmModeModeInfo huge = head->mode, scanned = head->mode;
	uint32_t seq;
	uint64_t t;
	int ret;

	kms_result(!try_mode(&slow, DRM_MODE_ATOMIC_TEST_ONLY),
		   "mode-of-0.9-s-per-frame-accepted # %llu ns",
		   (unsigned long long)kms_mode_period_ns(&slow));
	ret = try_mode(&slow, 0);
	if (!ret)
		ret = wait_vblank(DRM_VBLANK_RELATIVE, 2, &seq, &t);
	kms_result(!ret, "mode-of-0.9-s-per-frame-shows-its-vblanks%s%s",
		   ret ? ": " : "", ret ? strerror(-ret) : "");
	kms_result(try_mode(&slower, DRM_MODE_ATOMIC_TEST_ONLY) == -EINVAL,
		   "mode-of-1.1-s-per-frame-refused # %llu ns",
		   (unsigned long long)kms_mode_period_ns(&slower));

	/* 65535 x 65535 pixels: over INT_MAX, the core's frame size. */
	huge.htotal = huge.hsync_end = 65535;
	huge.vtotal = huge.vsync_end = 65535;
	huge.clock = 2000000;
	kms_result(try_mode(&huge, DRM_MODE_ATOMIC_TEST_ONLY) == -EINVAL,
		   "mode-of-over-2^31-pixels-per-frame-refused");
	/* With vscan 3 the product passes 2^32: a 32-bit wrap looks fast. */
	scanned.htotal = scanned.hsync_end = 40000;
	scanned.vtotal = scanned.vsync_end = 40000;
	scanned.vscan = 3;
	scanned.clock = 2000000;
	kms_result(try_mode(&scanned, DRM_MODE_ATOMIC_TEST_ONLY) == -EINVAL,
		   "mode-whose-htotal-vtotal-vscan-wraps-refused");
	light(NULL, 0, NULL);
}

/* 64x48 in an 80x50 frame, at the shortest frame the device takes. */
static drmModeModeInfo shortest_frame_mode(void)
{
	drmModeModeInfo m = { 0 };

	m.hdisplay = 64;
	m.hsync_start = 64;
	m.hsync_end = 72;
	m.htotal = 80;
	m.vdisplay = 48;
	m.vsync_start = 48;
	m.vsync_end = 49;
	m.vtotal = 50;
	m.type = DRM_MODE_TYPE_USERDEF;
	snprintf(m.name, sizeof(m.name), "64x48@fastest");
	return mode_of_period(&m, PVDC_MIN_FRAME_PERIOD_NS);
}

static void test_fast_enables(void)
{
	drmModeModeInfo fast = shortest_frame_mode();
	struct kms_trace rereads;
	long long n = 0;
	unsigned int i;
	uint32_t seq;
	uint64_t t;
	int ret = 0;

	if (!trace_head(&rereads, "pvdc-vblank-rereads", "pvdc/pvdc_vblank_read",
			"rereads > 0", "fast-enables"))
		return;
	for (i = 0; i < frames && !ret && !n; i++) {
		ret = light(&fast, 0, NULL);
		if (!ret)
			ret = wait_vblank(DRM_VBLANK_RELATIVE, 1, &seq, &t);
		if (!ret)
			ret = dark();
		n = kms_trace_count(&rereads);
	}
	kms_trace_stop(&rereads);
	printf("# fast-enables: %u enables of a %llu ns frame, %lld re-reads\n",
	       i, (unsigned long long)kms_mode_period_ns(&fast), n);
	kms_result(!ret && n > 0, "fast-enables-met-a-vblank-inside-a-read%s%s",
		   ret ? ": " : n < 0 ? ": the trace cannot be read" :
		   !n ? ": never" : "", ret ? strerror(-ret) : "");
	light(NULL, 0, NULL);
}

int main(int argc, char **argv)
{
	const char *card = KMS_CARD;
	const struct kms_option opts[] = {
		{ 'd', KMS_OPTION_STRING, &card, "CARD" },
		{ 'H', KMS_OPTION_UINT, &head_index, "HEAD" },
		{ 'n', KMS_OPTION_UINT, &frames, "FRAMES" },
		{ 'l', KMS_OPTION_UINT, &linkup_ms, "LINKUP_MS" },
		{ 0 }
	};
	int first, i;

	first = kms_options(argc, argv, 1, opts, "TEST...");
	kms_display_open(&disp, card);
	if (head_index >= disp.num_heads || frames < 2) {
		printf("not ok head %u: %u heads\n", head_index, disp.num_heads);
		return 1;
	}
	head = &disp.heads[head_index];
	printf("# head %u: crtc %u, connector %u, primary %u, cursor %u, %ux%u\n",
	       head_index, head->crtc_id, head->conn_id, head->primary,
	       head->cursor, head->mode.hdisplay, head->mode.vdisplay);
	if (light(NULL, 0, NULL)) {
		printf("not ok light head %u: %s\n", head_index,
		       strerror(errno));
		return 1;
	}

	for (i = first; i < argc; i++) {
		if (!strcmp(argv[i], "intervals"))
			test_intervals();
		else if (!strcmp(argv[i], "waits"))
			test_waits();
		else if (!strcmp(argv[i], "passed"))
			test_passed();
		else if (!strcmp(argv[i], "enable"))
			test_enable();
		else if (!strcmp(argv[i], "modeset-cursor"))
			test_modeset_cursor();
		else if (!strcmp(argv[i], "modeset-event"))
			test_modeset_event();
		else if (!strcmp(argv[i], "flips"))
			test_flips(false);
		else if (!strcmp(argv[i], "flips-anytime"))
			test_flips(true);
		else if (!strcmp(argv[i], "modes"))
			test_modes();
		else if (!strcmp(argv[i], "fast-enables"))
			test_fast_enables();
		else
			kms_result(false, "unknown test %s", argv[i]);
	}
	dark();
	return kms_failures ? 1 : 0;
}
