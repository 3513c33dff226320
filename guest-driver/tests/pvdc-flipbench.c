// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-flipbench: page-flip pacing and atomic check cost, in the guest.
 *
 *   pvdc-flipbench [-d CARD] [-k HEADS] [-t SECONDS] [-n FLIPS] [-c CHECKS]
 *                  [-r HZ] [-o]
 *
 * Sets the preferred mode on up to HEADS connected outputs (two dumb
 * buffers each; with -r, every head but the first runs the same size at
 * HZ, its pixel clock lowered to match), then flips every head from its
 * own thread with legacy nonblocking page flips (drmModePageFlip with an
 * event), each thread waiting for its event before the next flip, for
 * SECONDS seconds or FLIPS flips per head (-t 0: set the modes, flip
 * nothing).  bench/run.py counts MMIO accesses per flip as the difference
 * between a run of 2N flips and one of N, over N.  Works on any
 * KMS driver (pvdc, bochs, virtio-gpu).  With -c, also times CHECKS
 * atomic TEST_ONLY commits of a primary-plane flip against as many
 * DRM_IOCTL_VERSION calls.  "missed" counts vblanks that passed between
 * two flip events (from the events' sequence numbers).  With -o, an
 * overlay plane shows a buffer of its own over the middle of each head
 * while the primary flips, so that every frame is a scene of two planes
 * (which pvdc composes instead of showing a buffer straight).
 *
 * Output, one line per record, key=value pairs (for bench/run.py):
 *   flipbench head=I crtc=ID refresh_hz=R flips=N seconds=S
 *             flips_per_s=F missed=M seq_span=K
 *   flipbench total heads=K flips=N seconds=S
 *   checkbench test_only_ns=A version_ns=B checks=C
 */

#include <poll.h>
#include <pthread.h>
#include <time.h>

#include "pvdc-kms-util.h"

#define MAX_HEADS 8

struct head {
	unsigned int index;
	uint32_t crtc_id, conn_id, plane_id;
	drmModeModeInfo mode;
	struct kms_buffer buf[2];
	struct kms_buffer overlay;	/* with -o */
	unsigned int front;
	double refresh_hz;

	/* flip thread <-> event thread */
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool pending;
	unsigned int events;
	unsigned int first_seq, last_seq;
	uint64_t missed;

	unsigned int flips;
	int error;
	double seconds;
};

static int fd;
static struct head heads[MAX_HEADS];
static unsigned int num_heads;
static volatile bool stop_events;

static void flip_done(int drm_fd, unsigned int seq, unsigned int sec,
		      unsigned int usec, unsigned int crtc_id, void *data)
{
	struct head *h = data;

	(void)drm_fd;
	(void)sec;
	(void)usec;
	(void)crtc_id;
	pthread_mutex_lock(&h->lock);
	if (h->events && seq > h->last_seq + 1)
		h->missed += seq - h->last_seq - 1;
	if (!h->events)
		h->first_seq = seq;
	h->last_seq = seq;
	h->events++;
	h->pending = false;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

static void *event_thread(void *arg)
{
	drmEventContext ev = {
		.version = 3,
		.page_flip_handler2 = flip_done,
	};
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	(void)arg;
	while (!stop_events) {
		if (poll(&pfd, 1, 100) > 0)
			drmHandleEvent(fd, &ev);
	}
	return NULL;
}

/* How long each flip thread runs: seconds, or a number of flips. */
static struct {
	double seconds;
	unsigned int max_flips;
	unsigned int slow_hz;
	bool overlay;
} run = { .seconds = 5 };

/*
 * A flip is done at the latest one frame after it is queued; the kernel
 * itself gives up on a flip after 10 s.
 */
#define FLIP_TIMEOUT_S 10

static void *flip_thread(void *arg)
{
	struct head *h = arg;
	double t0 = kms_now(), end = t0 + run.seconds;

	while (run.max_flips ? h->flips < run.max_flips : kms_now() < end) {
		unsigned int next = h->front ^ 1;
		int ret;

		pthread_mutex_lock(&h->lock);
		h->pending = true;
		pthread_mutex_unlock(&h->lock);
		ret = drmModePageFlip(fd, h->crtc_id, h->buf[next].fb_id,
				      DRM_MODE_PAGE_FLIP_EVENT, h);
		if (ret) {
			if (errno == EBUSY)
				continue;
			h->error = errno;
			break;
		}
		pthread_mutex_lock(&h->lock);
		while (h->pending) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += FLIP_TIMEOUT_S;
			if (pthread_cond_timedwait(&h->cond, &h->lock, &ts)) {
				h->error = ETIMEDOUT;
				break;
			}
		}
		pthread_mutex_unlock(&h->lock);
		if (h->error)
			break;
		h->front = next;
		h->flips++;
	}
	h->seconds = kms_now() - t0;
	return NULL;
}

static double mode_refresh(const drmModeModeInfo *m)
{
	if (!m->htotal || !m->vtotal)
		return m->vrefresh;
	return m->clock * 1000.0 / ((double)m->htotal * m->vtotal);
}

/*
 * @m with its pixel clock lowered so that it refreshes at @hz, rounded up:
 * a frame no longer than 1 / @hz (the driver may refuse longer ones).
 */
static void slow_mode(drmModeModeInfo *m, unsigned int hz)
{
	m->clock = (uint32_t)(((uint64_t)m->htotal * m->vtotal * hz + 999) /
			      1000);
	if (!m->clock)
		m->clock = 1;
	m->vrefresh = hz;
	m->type &= ~DRM_MODE_TYPE_PREFERRED;
	snprintf(m->name, sizeof(m->name), "%ux%u@%u", m->hdisplay,
		 m->vdisplay, hz);
}

/*
 * An overlay plane that can show on CRTC @crtc (its index) and is not
 * taken yet (@taken), showing a quarter-size buffer of its own in the
 * middle of @h; 0 or -errno.
 */
static int show_overlay(struct head *h, int crtc, uint32_t *taken)
{
	drmModePlaneRes *pres = drmModeGetPlaneResources(fd);
	uint32_t w = h->mode.hdisplay / 4, ht = h->mode.vdisplay / 4;
	uint32_t i, id = 0;
	int ret;

	if (!pres)
		return -errno;
	/* Without universal planes, only overlays are listed. */
	for (i = 0; i < pres->count_planes && !id && i < 32; i++) {
		drmModePlane *p = drmModeGetPlane(fd, pres->planes[i]);

		if (p && (p->possible_crtcs & (1u << crtc)) &&
		    !(*taken & (1u << i))) {
			id = p->plane_id;
			*taken |= 1u << i;
		}
		drmModeFreePlane(p);
	}
	drmModeFreePlaneResources(pres);
	if (!id)
		return -ENODEV;
	ret = kms_buffer_create(fd, &h->overlay, w, ht, DRM_FORMAT_XRGB8888);
	if (ret)
		return ret;
	kms_buffer_fill(&h->overlay, 2);
	if (drmModeSetPlane(fd, id, h->crtc_id, h->overlay.fb_id, 0,
			    (h->mode.hdisplay - w) / 2,
			    (h->mode.vdisplay - ht) / 2, w, ht, 0, 0,
			    w << 16, ht << 16))
		return -errno;
	return 0;
}

static int setup_heads(unsigned int want)
{
	drmModeRes *res = drmModeGetResources(fd);
	uint32_t used_crtcs = 0, overlays = 0;
	int i, j;

	if (!res)
		return -errno;
	for (i = 0; i < res->count_connectors && num_heads < want; i++) {
		struct head *h = &heads[num_heads];
		int crtc;

		j = kms_output(fd, res, res->connectors[i], &h->mode,
			       &used_crtcs);
		if (j < 0)
			continue;
		h->conn_id = res->connectors[i];
		h->crtc_id = res->crtcs[j];
		crtc = j;
		if (num_heads && run.slow_hz)
			slow_mode(&h->mode, run.slow_hz);
		for (j = 0; j < 2; j++) {
			int ret = kms_buffer_create(fd, &h->buf[j],
						    h->mode.hdisplay,
						    h->mode.vdisplay,
						    DRM_FORMAT_XRGB8888);
			if (ret) {
				fprintf(stderr, "dumb buffer: %s\n",
					strerror(-ret));
				return ret;
			}
			kms_buffer_fill(&h->buf[j], j * 4);
		}
		if (drmModeSetCrtc(fd, h->crtc_id, h->buf[0].fb_id, 0, 0,
				   &h->conn_id, 1, &h->mode)) {
			fprintf(stderr, "set crtc %u: %s\n", h->crtc_id,
				strerror(errno));
			return -errno;
		}
		if (run.overlay) {
			int ret = show_overlay(h, crtc, &overlays);

			if (ret) {
				fprintf(stderr, "overlay on crtc %u: %s\n",
					h->crtc_id, strerror(-ret));
				return ret;
			}
		}
		h->index = num_heads;
		h->refresh_hz = mode_refresh(&h->mode);
		pthread_mutex_init(&h->lock, NULL);
		pthread_cond_init(&h->cond, NULL);
		num_heads++;
	}
	drmModeFreeResources(res);
	return num_heads ? 0 : -ENODEV;
}

/* The primary plane currently showing @h's CRTC. */
static uint32_t primary_plane(struct head *h)
{
	drmModePlaneRes *pres = drmModeGetPlaneResources(fd);
	uint32_t id = 0, i;

	if (!pres)
		return 0;
	for (i = 0; i < pres->count_planes && !id; i++) {
		drmModePlane *p = drmModeGetPlane(fd, pres->planes[i]);
		uint64_t type = 0;

		if (p && p->crtc_id == h->crtc_id &&
		    kms_prop_value(fd, p->plane_id, DRM_MODE_OBJECT_PLANE,
				   "type", &type) &&
		    type == DRM_PLANE_TYPE_PRIMARY)
			id = p->plane_id;
		drmModeFreePlane(p);
	}
	drmModeFreePlaneResources(pres);
	return id;
}

static int check_bench(unsigned int checks)
{
	struct head *h = &heads[0];
	uint32_t plane, fb_prop;
	double t0, t_check, t_version;
	unsigned int i;

	if (drmSetClientCap(fd, DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1) ||
	    drmSetClientCap(fd, DRM_CLIENT_CAP_ATOMIC, 1)) {
		printf("checkbench error=no-atomic\n");
		return -1;
	}
	plane = primary_plane(h);
	fb_prop = plane ? kms_prop_id(fd, plane, DRM_MODE_OBJECT_PLANE,
				      "FB_ID") : 0;
	if (!fb_prop) {
		printf("checkbench error=no-primary-plane\n");
		return -1;
	}

	for (int round = 0; round < 2; round++) {	/* first one warms up */
		t0 = kms_now();
		for (i = 0; i < checks; i++) {
			drmModeAtomicReq *req = drmModeAtomicAlloc();
			int ret;

			drmModeAtomicAddProperty(req, plane, fb_prop,
						 h->buf[(h->front + 1 + i) & 1].fb_id);
			ret = drmModeAtomicCommit(fd, req,
						  DRM_MODE_ATOMIC_TEST_ONLY,
						  NULL);
			drmModeAtomicFree(req);
			if (ret) {
				printf("checkbench error=%s\n",
				       strerror(errno));
				return -1;
			}
		}
		t_check = kms_now() - t0;

		t0 = kms_now();
		for (i = 0; i < checks; i++) {
			drmVersionPtr v = drmGetVersion(fd);

			drmFreeVersion(v);
		}
		t_version = kms_now() - t0;
	}
	printf("checkbench test_only_ns=%.0f version_ns=%.0f checks=%u\n",
	       t_check * 1e9 / checks, t_version * 1e9 / checks, checks);
	return 0;
}

int main(int argc, char **argv)
{
	const char *card = KMS_CARD;
	unsigned int want = 1, checks = 0, total = 0;
	const struct kms_option opts[] = {
		{ 'd', KMS_OPTION_STRING, &card, "CARD" },
		{ 'k', KMS_OPTION_UINT, &want, "HEADS" },
		{ 't', KMS_OPTION_DOUBLE, &run.seconds, "SECONDS" },
		{ 'n', KMS_OPTION_UINT, &run.max_flips, "FLIPS" },
		{ 'c', KMS_OPTION_UINT, &checks, "CHECKS" },
		{ 'r', KMS_OPTION_UINT, &run.slow_hz, "HZ" },
		{ 'o', KMS_OPTION_FLAG, &run.overlay, NULL },
		{ 0 }
	};
	pthread_t threads[MAX_HEADS], events;
	double seconds = 0;
	int status = 0;
	unsigned int i;

	kms_options(argc, argv, 1, opts, NULL);
	if (want < 1 || want > MAX_HEADS)
		want = 1;

	fd = kms_open(card);
	if (drmSetMaster(fd))
		fprintf(stderr, "warning: not DRM master: %s\n",
			strerror(errno));
	if (setup_heads(want)) {
		printf("flipbench error=no-heads\n");
		return 1;
	}
	if (num_heads < want)
		printf("flipbench warning=only-%u-heads\n", num_heads);

	pthread_create(&events, NULL, event_thread, NULL);
	for (i = 0; i < num_heads; i++) {
		pthread_create(&threads[i], NULL, flip_thread, &heads[i]);
	}
	/* For a host waiting to disturb the flips. */
	printf("# flipping %u heads\n", num_heads);
	fflush(stdout);
	for (i = 0; i < num_heads; i++)
		pthread_join(threads[i], NULL);
	stop_events = true;
	pthread_join(events, NULL);

	for (i = 0; i < num_heads; i++) {
		struct head *h = &heads[i];

		printf("flipbench head=%u crtc=%u refresh_hz=%.3f flips=%u "
		       "seconds=%.3f flips_per_s=%.2f missed=%llu "
		       "seq_span=%u%s%s\n",
		       i, h->crtc_id, h->refresh_hz, h->flips, h->seconds,
		       h->seconds > 0 ? h->flips / h->seconds : 0,
		       (unsigned long long)h->missed,
		       h->events ? h->last_seq - h->first_seq + 1 : 0,
		       h->error ? " error=" : "",
		       h->error ? strerror(h->error) : "");
		total += h->flips;
		seconds = h->seconds > seconds ? h->seconds : seconds;
		status |= h->error != 0;
	}
	printf("flipbench total heads=%u flips=%u seconds=%.3f\n", num_heads,
	       total, seconds);

	if (checks && check_bench(checks))
		status = 1;
	fflush(stdout);
	return status;
}
