// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-fence: explicit fences against the device's own record of when a
 * commit is armed and applied.
 *
 *   pvdc-fence [-w] [DEVICE]
 *
 * Fences come from sw_sync timelines (debugfs sync/sw_sync, CONFIG_SW_SYNC:
 * the debug kernel of scripts/build-debug-kernel.sh); without sw_sync every
 * case is reported as skipped.  The device is watched through its register
 * file (BAR0 through sysfs, mapped read-only, never a register with a side
 * effect): a head's ARMED_SEQ moves when the driver rings its doorbell,
 * DONE_SEQ when the device has latched the commit at a vblank, and a
 * plane's ACTIVE FB_OFFSET is the framebuffer it scans out.
 *
 *   in-fence-*     a page flip with IN_FENCE_FD on the primary plane is not
 *                  armed, nor latched, nor completed while its fence is
 *                  unsignalled, even vblanks later; once it is signalled,
 *                  the flip latches at a later vblank;
 *   out-fence-*    the OUT_FENCE_PTR fence of a nonblocking flip is never
 *                  signalled before the device's DONE_SEQ shows the flip
 *                  latched, is signalled once it does, without error, and
 *                  carries the flip event's timestamp: the latching vblank
 *                  (fifteen flips, watched from the ioctl on);
 *   stuck-fence-*  a flip on head 0 waiting for a fence that is never
 *                  signalled leaves head 0's picture in place while head 1
 *                  keeps flipping; with -w the program then prints
 *                  "# stuck" and waits for SIGUSR1 (the host takes its
 *                  screendumps meanwhile).  Closing the timeline signals
 *                  the fence with an error, the flip then completes, and
 *                  once every fence is gone no timeline of ours is left.
 *
 * Head 0 shows solid red, then green, then blue (the colours the host
 * checks, see tests/guest/test_fence.py); head 1 shows colour bars.
 */
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <time.h>
#include <linux/sync_file.h>

#include "pvdc-kms-util.h"
#include "pvdc-regs.h"

#define MAX_HEADS	8
/* Bound on any wait for the device or the kernel (seconds). */
#define WAIT_S		60
/* Vblanks an unsignalled in-fence must hold a flip back. */
#define HOLD_VBLANKS	3
/* Flips of head 1 while head 0 waits for a fence that never comes. */
#define OTHER_FLIPS	10
/* Out-fenced flips of head 0 (odd: head 0 ends on blue). */
#define OUT_FENCE_FLIPS	15

#define SW_SYNC_DEV	"/sys/kernel/debug/sync/sw_sync"
#define SYNC_INFO	"/sys/kernel/debug/sync/info"

/* include/uapi/linux/sync_file.h has these only in the kernel's debugfs. */
struct sw_sync_create_fence_data {
	uint32_t value;
	char name[32];
	int32_t fence;
};

#define SW_SYNC_IOC_MAGIC	'W'
#define SW_SYNC_IOC_CREATE_FENCE \
	_IOWR(SW_SYNC_IOC_MAGIC, 0, struct sw_sync_create_fence_data)
#define SW_SYNC_IOC_INC		_IOW(SW_SYNC_IOC_MAGIC, 1, uint32_t)

enum { RED, GREEN, BLUE, NUM_COLOURS };
static const uint32_t colours[NUM_COLOURS] = {
	0xffff0000, 0xff00ff00, 0xff0000ff,
};

struct head {
	struct kms_head base;		/* without its buffers */
	uint32_t mode_blob;
	unsigned int dev_plane;		/* device index of the primary plane */
	struct kms_buffer buf[NUM_COLOURS];
	unsigned int front;
};

/* The last flip event of each head. */
struct event {
	bool seen;
	unsigned int sequence;
	uint64_t time_us;
};

static int fd;
static struct head heads[MAX_HEADS];
static int num_heads;
static const uint32_t *regs;
static struct event events[MAX_HEADS];

/* One 32-bit read of the register file each time, never cached. */
static uint32_t reg(uint32_t offset)
{
	return __atomic_load_n(&regs[offset / 4], __ATOMIC_RELAXED);
}

static uint32_t armed_seq(int h)
{
	return reg(PVDC_HEAD_CONTROL(h) + PVDC_HEAD_ARMED_SEQ);
}

static uint32_t done_seq(int h)
{
	return reg(PVDC_HEAD_CONTROL(h) + PVDC_HEAD_DONE_SEQ);
}

static uint32_t scanout_offset(const struct head *h)
{
	return reg(PVDC_PLANE_ACTIVE(h->dev_plane) + PVDC_PS_FB_OFFSET);
}

/* ------------------------------------------------------------------------ */
/* Device registers                                                         */
/* ------------------------------------------------------------------------ */

static int map_registers(const char *card)
{
	char path[128];
	const char *name = strrchr(card, '/');
	void *map;
	int rfd;

	snprintf(path, sizeof(path), "/sys/class/drm/%s/device/resource%d",
		 name ? name + 1 : card, PVDC_MMIO_BAR);
	rfd = open(path, O_RDONLY | O_CLOEXEC);
	if (rfd < 0)
		return -errno;
	map = mmap(NULL, PVDC_MMIO_SIZE, PROT_READ, MAP_SHARED, rfd, 0);
	close(rfd);
	if (map == MAP_FAILED)
		return -errno;
	regs = map;
	return reg(PVDC_REG_ID) == PVDC_ID ? 0 : -ENODEV;
}

/* The device plane the driver made head @h's primary: its first one. */
static int find_device_plane(int h)
{
	uint32_t n = reg(PVDC_REG_NUM_PLANES), p;

	for (p = 0; p < n && p < PVDC_MAX_PLANES; p++) {
		uint32_t caps = reg(PVDC_REG_PLANE_CAPS(p));

		if ((caps & PVDC_PLANE_CAPS_TYPE_MASK) ==
		    PVDC_PLANE_TYPE_PRIMARY &&
		    ((caps >> PVDC_PLANE_CAPS_HOME_SHIFT) &
		     PVDC_PLANE_CAPS_HOME_MASK) == (uint32_t)h)
			return p;
	}
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Fences                                                                   */
/* ------------------------------------------------------------------------ */

static int fence_create(int timeline, uint32_t value)
{
	struct sw_sync_create_fence_data data = { .value = value };

	snprintf(data.name, sizeof(data.name), "pvdc-fence-%u", value);
	if (ioctl(timeline, SW_SYNC_IOC_CREATE_FENCE, &data))
		return -errno;
	return data.fence;
}

/*
 * 1 signalled, 0 not yet, <0 signalled with that error; the timestamp of
 * the signal (CLOCK_MONOTONIC ns) goes to @time_ns.
 */
static int fence_status(int fence, uint64_t *time_ns)
{
	struct sync_fence_info fi = { 0 };
	struct sync_file_info info = {
		.num_fences = 1,
		.sync_fence_info = (uintptr_t)&fi,
	};

	if (ioctl(fence, SYNC_IOC_FILE_INFO, &info))
		return -errno;
	if (time_ns)
		*time_ns = fi.timestamp_ns;
	return fi.status;
}

static bool fence_signalled(int fence)
{
	struct pollfd pfd = { .fd = fence, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/* ------------------------------------------------------------------------ */
/* KMS                                                                      */
/* ------------------------------------------------------------------------ */

static void add(drmModeAtomicReq *req, uint32_t obj, uint32_t type,
		const char *name, uint64_t value)
{
	uint32_t prop = kms_prop_id(fd, obj, type, name);

	if (!prop)
		printf("# object %u has no property %s\n", obj, name);
	else
		drmModeAtomicAddProperty(req, obj, prop, value);
}

static void flip_handler(int drm_fd, unsigned int seq, unsigned int sec,
			 unsigned int usec, unsigned int crtc_id, void *data)
{
	int i;

	(void)drm_fd;
	(void)data;
	for (i = 0; i < num_heads; i++) {
		if (heads[i].base.crtc_id != crtc_id)
			continue;
		events[i].seen = true;
		events[i].sequence = seq;
		events[i].time_us = sec * 1000000ull + usec;
	}
}

/* Read what events there are, waiting at most @timeout_ms for one. */
static void read_events(int timeout_ms)
{
	drmEventContext ev = {
		.version = 3,
		.page_flip_handler2 = flip_handler,
	};
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	if (poll(&pfd, 1, timeout_ms) == 1)
		drmHandleEvent(fd, &ev);
}

/* Wait (bounded) for head @h's flip event; false if none came. */
static bool wait_event_of(int h)
{
	uint64_t end = kms_now_ns() + WAIT_S * 1000000000ull;

	while (!events[h].seen && kms_now_ns() < end)
		read_events(100);
	return events[h].seen;
}

static void discover(void)
{
	drmModeRes *res;
	drmModePlaneRes *pres;
	uint32_t used = 0;
	int i, j;

	kms_resources(fd, &res, &pres);
	for (i = 0; i < res->count_connectors && num_heads < MAX_HEADS; i++) {
		struct head *h = &heads[num_heads];

		if (!kms_head_find(fd, res, res->connectors[i], &used,
				   &h->base))
			continue;
		j = find_device_plane(h->base.pipe);
		if (j < 0)
			continue;
		h->dev_plane = j;
		h->mode_blob = kms_mode_blob(fd, &h->base.mode);
		for (j = 0; j < NUM_COLOURS; j++) {
			struct kms_buffer *b = &h->buf[j];
			uint32_t y, x;

			if (kms_buffer_create(fd, b, h->base.mode.hdisplay,
					      h->base.mode.vdisplay,
					      DRM_FORMAT_XRGB8888)) {
				printf("not ok buffers: %s\n", strerror(errno));
				exit(1);
			}
			if (num_heads) {
				kms_buffer_fill(b, j);
				continue;
			}
			for (y = 0; y < b->height; y++)
				for (x = 0; x < b->width; x++)
					((uint32_t *)((uint8_t *)b->map +
						      y * b->pitch))[x] =
						colours[j];
		}
		num_heads++;
	}
	drmModeFreePlaneResources(pres);
	drmModeFreeResources(res);
}

static void primary(drmModeAtomicReq *req, const struct head *h,
		    unsigned int buf)
{
	const struct kms_head *k = &h->base;
	uint32_t t = DRM_MODE_OBJECT_PLANE;

	add(req, k->primary, t, "FB_ID", h->buf[buf].fb_id);
	add(req, k->primary, t, "CRTC_ID", k->crtc_id);
	add(req, k->primary, t, "SRC_X", 0);
	add(req, k->primary, t, "SRC_Y", 0);
	add(req, k->primary, t, "SRC_W", (uint64_t)k->mode.hdisplay << 16);
	add(req, k->primary, t, "SRC_H", (uint64_t)k->mode.vdisplay << 16);
	add(req, k->primary, t, "CRTC_X", 0);
	add(req, k->primary, t, "CRTC_Y", 0);
	add(req, k->primary, t, "CRTC_W", k->mode.hdisplay);
	add(req, k->primary, t, "CRTC_H", k->mode.vdisplay);
}

static int commit(drmModeAtomicReq *req, uint32_t flags)
{
	int ret = drmModeAtomicCommit(fd, req, flags, NULL);

	ret = ret ? -errno : 0;
	drmModeAtomicFree(req);
	return ret;
}

/* Every head on, head 0 red: a blocking modeset. */
static int light_heads(void)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	int i;

	for (i = 0; i < num_heads; i++) {
		struct head *h = &heads[i];

		add(req, h->base.crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID",
		    h->mode_blob);
		add(req, h->base.crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
		add(req, h->base.conn_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID",
		    h->base.crtc_id);
		h->front = RED;
		primary(req, h, h->front);
	}
	return commit(req, DRM_MODE_ATOMIC_ALLOW_MODESET);
}

/*
 * A nonblocking flip of head @h to buffer @buf with an event; @in_fence
 * (or -1) on its plane, the CRTC's out-fence to @out_fence (or nowhere).
 */
static int flip(int h, unsigned int buf, int in_fence, int32_t *out_fence)
{
	struct head *hd = &heads[h];
	drmModeAtomicReq *req = drmModeAtomicAlloc();

	events[h].seen = false;
	primary(req, hd, buf);
	if (in_fence >= 0)
		add(req, hd->base.primary, DRM_MODE_OBJECT_PLANE, "IN_FENCE_FD",
		    in_fence);
	if (out_fence) {
		*out_fence = -1;
		add(req, hd->base.crtc_id, DRM_MODE_OBJECT_CRTC, "OUT_FENCE_PTR",
		    (uintptr_t)out_fence);
	}
	return commit(req, DRM_MODE_ATOMIC_NONBLOCK |
			   DRM_MODE_PAGE_FLIP_EVENT);
}

/* Wait for @count vblanks of head @h; its vblank counter after them. */
static int wait_vblanks(int h, unsigned int count, unsigned int *seq)
{
	drmVBlank vbl = { 0 };

	vbl.request.type = DRM_VBLANK_RELATIVE |
		((heads[h].base.pipe << DRM_VBLANK_HIGH_CRTC_SHIFT) &
		 DRM_VBLANK_HIGH_CRTC_MASK);
	vbl.request.sequence = count;
	if (drmWaitVBlank(fd, &vbl))
		return -errno;
	if (seq)
		*seq = vbl.reply.sequence;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Cases                                                                    */
/* ------------------------------------------------------------------------ */

/* Head 0 flips red -> green, held back by an in-fence. */
static void test_in_fence(int timeline)
{
	struct head *h = &heads[0];
	uint32_t armed = armed_seq(0), shown = scanout_offset(h);
	unsigned int seq_signal = 0;
	uint64_t fence_time = 0;
	int32_t out = -1;
	int fence, ret, status;
	bool held;

	fence = fence_create(timeline, 1);
	if (fence < 0) {
		kms_result(false, "in-fence-create: %s", strerror(-fence));
		return;
	}
	ret = flip(0, GREEN, fence, &out);
	close(fence);
	kms_result(!ret, "in-fence-flip-accepted%s%s", ret ? ": " : "",
		   ret ? strerror(-ret) : "");
	if (ret)
		return;

	/* Vblanks go by: nothing may reach the device meanwhile. */
	ret = wait_vblanks(0, HOLD_VBLANKS, NULL);
	read_events(0);
	held = !ret && armed_seq(0) == armed && scanout_offset(h) == shown &&
	       !events[0].seen && !fence_signalled(out);
	kms_result(held,
		   "in-fence-holds-the-flip-for-vblanks # armed %u -> %u, scanout %#x -> %#x, event %d, out-fence %d, vblank wait %d",
		   armed, armed_seq(0), shown, scanout_offset(h),
		   events[0].seen, fence_signalled(out), ret);

	ret = wait_vblanks(0, 0, &seq_signal);
	if (ioctl(timeline, SW_SYNC_IOC_INC, &(uint32_t){ 1 })) {
		kms_result(false, "in-fence-signal: %s", strerror(errno));
		close(out);
		return;
	}
	if (!wait_event_of(0)) {
		kms_result(false, "in-fence-flip-completes-once-signalled: no event within %d s",
			   WAIT_S);
		close(out);
		return;
	}
	kms_result(!ret && events[0].sequence > seq_signal &&
		   armed_seq(0) == armed + 1 && done_seq(0) == armed + 1 &&
		   scanout_offset(h) != shown,
		   "in-fence-flip-latches-after-the-signal # vblank %u at the signal, event at %u; armed %u done %u (was %u); scanout %#x -> %#x",
		   seq_signal, events[0].sequence, armed_seq(0), done_seq(0),
		   armed, shown, scanout_offset(h));
	h->front = GREEN;

	/* Events have microseconds, fences nanoseconds, of the same time. */
	status = fence_status(out, &fence_time);
	kms_result(status == 1 && fence_time / 1000 == events[0].time_us,
		   "in-fence-flip-out-fence-carries-the-event-time # status %d, fence %llu ns, event %llu us",
		   status, (unsigned long long)fence_time,
		   (unsigned long long)events[0].time_us);
	close(out);
}

/*
 * One nonblocking flip of head 0 with an out-fence, watched from the
 * ioctl on.  The fence first, then the device: a fence seen signalled
 * before DONE_SEQ shows the flip signalled before the device latched it.
 */
struct out_fence_flip {
	bool signalled;		/* within WAIT_S */
	bool early;		/* signalled, DONE_SEQ still before the flip */
	bool seen_unlatched;	/* the device seen before the latch */
	bool on_time;		/* fence time == the flip event's */
};

static struct out_fence_flip out_fence_flip(unsigned int buf)
{
	struct out_fence_flip r = { 0 };
	struct head *h = &heads[0];
	uint32_t target = armed_seq(0) + 1, shown = scanout_offset(h);
	uint64_t end;
	uint64_t fence_time = 0;
	int32_t out = -1;

	if (flip(0, buf, -1, &out) || out < 0)
		return r;
	end = kms_now_ns() + WAIT_S * 1000000000ull;
	while (kms_now_ns() < end) {
		bool sig = fence_signalled(out);
		bool latched = (int32_t)(done_seq(0) - target) >= 0;

		if (sig) {
			r.signalled = true;
			r.early = !latched;
			break;
		}
		r.seen_unlatched |= !latched;
		/* Let the commit work run: it rings the doorbell. */
		sched_yield();
	}
	if (wait_event_of(0) && fence_status(out, &fence_time) == 1 &&
	    scanout_offset(h) != shown)
		r.on_time = fence_time / 1000 == events[0].time_us;
	h->front = buf;
	close(out);
	return r;
}

/*
 * Head 0 flips between blue and green, ending on blue.  Whether a flip is
 * seen before its latch depends on scheduling, hence many flips: an early
 * signal cannot hide in all of them.
 */
static void test_out_fence(void)
{
	unsigned int i, signalled = 0, early = 0, seen = 0, on_time = 0;

	for (i = 0; i < OUT_FENCE_FLIPS; i++) {
		struct out_fence_flip r =
			out_fence_flip(i % 2 ? GREEN : BLUE);

		signalled += r.signalled;
		early += r.early;
		seen += r.seen_unlatched;
		on_time += r.on_time;
	}
	kms_result(signalled == OUT_FENCE_FLIPS && !early && seen,
		   "out-fence-never-signalled-before-the-device-latches # %u flips: %u signalled, %u before DONE_SEQ showed the flip; %u watched before their latch",
		   OUT_FENCE_FLIPS, signalled, early, seen);
	kms_result(on_time == OUT_FENCE_FLIPS,
		   "out-fence-carries-the-latching-vblank-time # %u of %u flips: applied, fence signalled without error at its flip event's time",
		   on_time, OUT_FENCE_FLIPS);
}

static bool timeline_listed(const char *name)
{
	char line[256];
	bool found = false;
	FILE *f = fopen(SYNC_INFO, "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = !strncmp(line, name, strlen(name)) &&
			line[strlen(name)] == ':';
	fclose(f);
	return found;
}

static void wait_for_sigusr1(void)
{
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigwait(&set, &sig);
}

/* Head 0 waits for a fence that never comes; head 1 flips meanwhile. */
static void test_stuck_fence(bool pause)
{
	struct head *h0 = &heads[0], *h1 = &heads[1];
	uint32_t armed0 = armed_seq(0), shown0 = scanout_offset(h0);
	uint32_t armed1 = armed_seq(1);
	int timeline, fence, ret, i, flips = 0;
	char comm[32] = "";
	uint64_t end;
	FILE *f;

	timeline = open(SW_SYNC_DEV, O_RDWR | O_CLOEXEC);
	fence = timeline < 0 ? -errno : fence_create(timeline, 1);
	if (fence < 0) {
		kms_result(false, "stuck-fence-create: %s", strerror(-fence));
		return;
	}
	ret = flip(0, RED, fence, NULL);
	close(fence);
	kms_result(!ret, "stuck-fence-flip-accepted%s%s", ret ? ": " : "",
		   ret ? strerror(-ret) : "");
	if (ret) {
		close(timeline);
		return;
	}

	for (i = 0; i < OTHER_FLIPS; i++) {
		unsigned int next = (h1->front + 1) % NUM_COLOURS;
		uint32_t before = scanout_offset(h1);

		ret = flip(1, next, -1, NULL);
		if (ret || !wait_event_of(1) || scanout_offset(h1) == before)
			break;
		h1->front = next;
		flips++;
	}
	kms_result(flips == OTHER_FLIPS &&
		   done_seq(1) == armed1 + OTHER_FLIPS,
		   "stuck-fence-other-head-keeps-flipping # %d of %d flips, head 1 armed %u -> %u done %u%s%s",
		   flips, OTHER_FLIPS, armed1, armed_seq(1), done_seq(1),
		   ret ? ": " : "", ret ? strerror(-ret) : "");
	read_events(0);
	kms_result(armed_seq(0) == armed0 && scanout_offset(h0) == shown0 &&
		   !events[0].seen,
		   "stuck-fence-head-keeps-its-picture # head 0 armed %u -> %u, scanout %#x -> %#x, event %d",
		   armed0, armed_seq(0), shown0, scanout_offset(h0),
		   events[0].seen);

	if (pause) {
		printf("# stuck\n");
		fflush(stdout);
		wait_for_sigusr1();
	}

	/* Releasing the timeline signals its fences, with an error. */
	close(timeline);
	kms_result(wait_event_of(0) && done_seq(0) == armed0 + 1 &&
		   scanout_offset(h0) != shown0,
		   "stuck-fence-flip-completes-once-the-timeline-is-released # armed %u done %u (was %u), scanout %#x -> %#x",
		   armed_seq(0), done_seq(0), armed0, shown0,
		   scanout_offset(h0));
	h0->front = RED;

	/* sw_sync names its timelines after the opening task. */
	f = fopen("/proc/self/comm", "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	end = kms_now_ns() + WAIT_S * 1000000000ull;
	while (timeline_listed(comm) && kms_now_ns() < end)
		wait_vblanks(0, 1, NULL);
	kms_result(comm[0] && !timeline_listed(comm),
		   "stuck-fence-timelines-released # %s in %s: %s", comm,
		   SYNC_INFO, timeline_listed(comm) ? "still listed" : "gone");
}

int main(int argc, char **argv)
{
	bool pause = false;
	const struct kms_option opts[] = {
		{ 'w', KMS_OPTION_FLAG, &pause, NULL },
		{ 0 }
	};
	const char *card;
	int timeline, ret;

	card = kms_operand(argc, argv,
			   kms_options(argc, argv, 1, opts, "[DEVICE]"),
			   KMS_CARD);

	/* Blocked here, so that sigwait() gets it in every thread's stead. */
	if (pause) {
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
	}

	timeline = open(SW_SYNC_DEV, O_RDWR | O_CLOEXEC);
	if (timeline < 0) {
		printf("ok in-fence # SKIP no %s: needs CONFIG_SW_SYNC (the debug kernel)\n",
		       SW_SYNC_DEV);
		printf("ok out-fence # SKIP no sw_sync\n");
		printf("ok stuck-fence # SKIP no sw_sync\n");
		return 0;
	}

	fd = kms_open_atomic(card);
	ret = map_registers(card);
	if (ret) {
		printf("not ok device-registers: %s\n", strerror(-ret));
		return 1;
	}
	discover();
	if (num_heads < 2) {
		printf("not ok heads: %d, the stuck-fence case needs two\n",
		       num_heads);
		return 1;
	}
	ret = light_heads();
	kms_result(!ret, "heads-lit%s%s", ret ? ": " : "",
		   ret ? strerror(-ret) : "");
	if (ret)
		return 1;

	test_in_fence(timeline);
	close(timeline);
	test_out_fence();
	test_stuck_fence(pause);

	return kms_failures ? 1 : 0;
}
