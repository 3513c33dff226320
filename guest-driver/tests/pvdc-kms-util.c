// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * Helpers shared by the in-guest KMS test programs: TAP-like reporting,
 * dumb buffers, property lookup, a display of heads with their planes,
 * frame CRCs and the device's registers.  Compiled once and linked into
 * every program (guest-driver/tests/meson.build).
 */
#include <getopt.h>

#include "pvdc-kms-util.h"

/* The most options a program has (kms_options() sizes its getopt() string). */
#define KMS_MAX_OPTIONS		16

int kms_failures;

/* ------------------------------------------------------------------------ */
/* Command lines                                                            */
/* ------------------------------------------------------------------------ */

void kms_usage(char **argv, const struct kms_option *opts, const char *operands)
{
	const struct kms_option *o;

	fprintf(stderr, "usage: %s", argv[0]);
	for (o = opts; o->name; o++) {
		if (o->type == KMS_OPTION_FLAG)
			fprintf(stderr, " [-%c]", o->name);
		else
			fprintf(stderr, " [-%c %s]", o->name, o->arg);
	}
	fprintf(stderr, "%s%s\n", operands ? " " : "",
		operands ? operands : "");
	exit(2);
}

int kms_options(int argc, char **argv, int first,
		const struct kms_option *opts, const char *operands)
{
	char optstring[2 * KMS_MAX_OPTIONS + 1];
	const struct kms_option *o;
	size_t n = 0;
	int opt;

	for (o = opts; o->name; o++) {
		if (o - opts >= KMS_MAX_OPTIONS) {
			fprintf(stderr, "%s: more than %d options\n", argv[0],
				KMS_MAX_OPTIONS);
			exit(2);
		}
		optstring[n++] = o->name;
		if (o->type != KMS_OPTION_FLAG)
			optstring[n++] = ':';
	}
	optstring[n] = 0;
	optind = first;
	while ((opt = getopt(argc, argv, optstring)) != -1) {
		for (o = opts; o->name && o->name != opt; o++)
			;
		if (!o->name)	/* getopt() said what was wrong: '?' */
			kms_usage(argv, opts, operands);
		switch (o->type) {
		case KMS_OPTION_FLAG:
			*(bool *)o->value = true;
			break;
		case KMS_OPTION_STRING:
			*(const char **)o->value = optarg;
			break;
		case KMS_OPTION_INT:
			*(int *)o->value = atoi(optarg);
			break;
		case KMS_OPTION_UINT:
			*(unsigned int *)o->value = strtoul(optarg, NULL, 10);
			break;
		case KMS_OPTION_DOUBLE:
			*(double *)o->value = atof(optarg);
			break;
		}
	}
	return optind;
}

const char *kms_operand(int argc, char **argv, int i, const char *otherwise)
{
	return i < argc ? argv[i] : otherwise;
}

/* ------------------------------------------------------------------------ */
/* Reporting, clocks, devices, buffers, properties                          */
/* ------------------------------------------------------------------------ */

void kms_result(bool ok, const char *fmt, ...)
{
	va_list ap;

	printf("%s ", ok ? "ok" : "not ok");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!ok)
		kms_failures++;
}

/* CLOCK_MONOTONIC, the clock of DRM's event timestamps. */
uint64_t kms_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* kms_now_ns(), in seconds. */
double kms_now(void)
{
	return kms_now_ns() / 1e9;
}

int kms_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("not ok open: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

void kms_resources(int fd, drmModeRes **res, drmModePlaneRes **pres)
{
	*res = drmModeGetResources(fd);
	*pres = drmModeGetPlaneResources(fd);
	if (!*res || !*pres) {
		printf("not ok resources: %s\n", strerror(errno));
		exit(1);
	}
}

/* kms_open(), for a client of the atomic uAPI with universal planes. */
int kms_open_atomic(const char *path)
{
	int fd = kms_open(path);

	if (drmSetClientCap(fd, DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1) ||
	    drmSetClientCap(fd, DRM_CLIENT_CAP_ATOMIC, 1)) {
		printf("not ok atomic-cap: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

/* NV12 and P010: a Y plane and an interleaved Cb:Cr plane. */
bool kms_format_two_planes(uint32_t format)
{
	return format == DRM_FORMAT_NV12 || format == DRM_FORMAT_P010;
}

/* Bytes per pixel of the Y (or only) plane. */
uint32_t kms_format_cpp(uint32_t format)
{
	switch (format) {
	case DRM_FORMAT_NV12:
		return 1;
	case DRM_FORMAT_RGB565:
	case DRM_FORMAT_YUYV:
	case DRM_FORMAT_P010:
		return 2;
	default:
		return 4;
	}
}

/* A dumb buffer with a framebuffer on it; 0 or -errno. */
int kms_buffer_create(int fd, struct kms_buffer *buf, uint32_t width,
		      uint32_t height, uint32_t format)
{
	struct drm_mode_create_dumb create = { 0 };
	struct drm_mode_map_dumb map = { 0 };
	uint32_t handles[4] = { 0 }, pitches[4] = { 0 }, offsets[4] = { 0 };
	uint32_t cpp = kms_format_cpp(format);
	bool two = kms_format_two_planes(format);

	memset(buf, 0, sizeof(*buf));
	/* A Cb:Cr sample is two Y pixels wide: round odd widths up. */
	create.width = two ? width + (width & 1) : width;
	create.height = two ? height + (height + 1) / 2 : height;
	create.bpp = cpp * 8;
	if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &create))
		return -errno;
	buf->width = width;
	buf->height = height;
	buf->format = format;
	buf->cpp = cpp;
	buf->pitch = create.pitch;
	buf->handle = create.handle;
	buf->size = create.size;

	handles[0] = buf->handle;
	pitches[0] = buf->pitch;
	if (two) {
		buf->chroma_offset = buf->pitch * height;
		buf->chroma_pitch = buf->pitch;
		handles[1] = buf->handle;
		pitches[1] = buf->chroma_pitch;
		offsets[1] = buf->chroma_offset;
	}
	if (drmModeAddFB2(fd, width, height, format, handles, pitches, offsets,
			  &buf->fb_id, 0))
		return -errno;

	map.handle = buf->handle;
	if (drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map))
		return -errno;
	buf->map = mmap(NULL, buf->size, PROT_READ | PROT_WRITE, MAP_SHARED,
			fd, map.offset);
	if (buf->map == MAP_FAILED) {
		buf->map = NULL;
		return -errno;
	}
	return 0;
}

void kms_buffer_destroy(int fd, struct kms_buffer *buf)
{
	struct drm_mode_destroy_dumb destroy = { .handle = buf->handle };

	if (buf->map)
		munmap(buf->map, buf->size);
	if (buf->fb_id)
		drmModeRmFB(fd, buf->fb_id);
	if (buf->handle)
		drmIoctl(fd, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
	memset(buf, 0, sizeof(*buf));
}

void kms_cursor_image(int fd, struct kms_buffer *buf, uint32_t argb)
{
	uint32_t i;

	if (kms_buffer_create(fd, buf, KMS_CURSOR_SIZE, KMS_CURSOR_SIZE,
			      DRM_FORMAT_ARGB8888)) {
		printf("not ok cursor buffer: %s\n", strerror(errno));
		exit(1);
	}
	for (i = 0; i < KMS_CURSOR_SIZE * KMS_CURSOR_SIZE; i++)
		((uint32_t *)buf->map)[i] = argb;
}

/*
 * Colour bars shifted by @phase, for 32-bit formats; solid for others (a
 * grey for YCbCr).
 */
void kms_buffer_fill(struct kms_buffer *buf, unsigned int phase)
{
	static const uint32_t bars[] = {
		0xffffffff, 0xffffff00, 0xff00ffff, 0xff00ff00,
		0xffff00ff, 0xffff0000, 0xff0000ff, 0xff000000,
	};
	uint32_t x, y;

	for (y = 0; y < buf->height; y++) {
		uint8_t *line = (uint8_t *)buf->map + (size_t)y * buf->pitch;

		if (buf->cpp != 4) {
			memset(line, 0x80, (size_t)buf->width * buf->cpp);
			continue;
		}
		for (x = 0; x < buf->width; x++) {
			unsigned int bar = (x * 8 / buf->width + phase) % 8;

			((uint32_t *)line)[x] = bars[bar];
		}
	}
	if (buf->chroma_pitch)
		memset((uint8_t *)buf->map + buf->chroma_offset, 0x80,
		       (size_t)buf->chroma_pitch * ((buf->height + 1) / 2));
}

/*
 * The id of the property NAME of an object, 0 if it has none; with @out,
 * also its description (for its range or enum values; the caller frees it
 * with drmModeFreeProperty()).
 */
uint32_t kms_prop_find(int fd, uint32_t obj, uint32_t type, const char *name,
		       drmModePropertyRes **out)
{
	drmModeObjectProperties *props;
	uint32_t id = 0, i;

	props = drmModeObjectGetProperties(fd, obj, type);
	if (!props)
		return 0;
	for (i = 0; i < props->count_props && !id; i++) {
		drmModePropertyRes *p = drmModeGetProperty(fd, props->props[i]);

		if (p && !strcmp(p->name, name)) {
			id = p->prop_id;
			if (out) {
				*out = p;
				p = NULL;
			}
		}
		drmModeFreeProperty(p);
	}
	drmModeFreeObjectProperties(props);
	return id;
}

uint32_t kms_prop_id(int fd, uint32_t obj, uint32_t type, const char *name)
{
	return kms_prop_find(fd, obj, type, name, NULL);
}

bool kms_prop_value(int fd, uint32_t obj, uint32_t type, const char *name,
		    uint64_t *value)
{
	drmModeObjectProperties *props;
	bool found = false;
	uint32_t i;

	props = drmModeObjectGetProperties(fd, obj, type);
	if (!props)
		return false;
	for (i = 0; i < props->count_props && !found; i++) {
		drmModePropertyRes *p = drmModeGetProperty(fd, props->props[i]);

		if (p && !strcmp(p->name, name)) {
			*value = props->prop_values[i];
			found = true;
		}
		drmModeFreeProperty(p);
	}
	drmModeFreeObjectProperties(props);
	return found;
}

/* 0 when the connector is connected and has a mode, copied to @mode. */
int kms_connector_mode(drmModeConnector *conn, drmModeModeInfo *mode)
{
	int i;

	if (conn->connection != DRM_MODE_CONNECTED || !conn->count_modes)
		return -1;
	*mode = conn->modes[0];
	for (i = 0; i < conn->count_modes; i++) {
		if (conn->modes[i].type & DRM_MODE_TYPE_PREFERRED) {
			*mode = conn->modes[i];
			break;
		}
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* A display for the timing and head tests: heads with their planes         */
/* ------------------------------------------------------------------------ */

/*
 * A thread that must react within a frame (flip on every vblank): real-time
 * priority over the other threads of the test, where allowed.
 */
void kms_realtime(void)
{
	struct sched_param param = { .sched_priority = 10 };

	pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
}

/* The device's frame period of @m, to the nanosecond (FRAME_PERIOD). */
uint64_t kms_mode_period_ns(const drmModeModeInfo *m)
{
	return (uint64_t)m->htotal * m->vtotal * 1000000ull / m->clock;
}

/* @m with its pixel clock changed for a refresh of @hz (same timings). */
drmModeModeInfo kms_mode_at_hz(const drmModeModeInfo *m, unsigned int hz)
{
	drmModeModeInfo r = *m;

	r.clock = (uint32_t)(((uint64_t)m->htotal * m->vtotal * hz + 999) /
			     1000);
	r.vrefresh = hz;
	return r;
}

uint32_t kms_mode_blob(int fd, const drmModeModeInfo *mode)
{
	uint32_t blob;

	if (drmModeCreatePropertyBlob(fd, mode, sizeof(*mode), &blob)) {
		printf("not ok mode blob: %s\n", strerror(errno));
		exit(1);
	}
	return blob;
}

void kms_mode_buffers(int fd, struct kms_buffer *buf, unsigned int n,
		      const drmModeModeInfo *mode, unsigned int phase)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		if (kms_buffer_create(fd, &buf[i], mode->hdisplay,
				      mode->vdisplay, DRM_FORMAT_XRGB8888)) {
			printf("not ok buffers: %s\n", strerror(errno));
			exit(1);
		}
		kms_buffer_fill(&buf[i], phase + i);
	}
}

/* Add property @name of object @obj to @req; exits if there is none. */
void kms_add(int fd, drmModeAtomicReq *req, uint32_t obj, uint32_t type,
	     const char *name, uint64_t val)
{
	uint32_t prop = kms_prop_id(fd, obj, type, name);

	if (!prop) {
		printf("not ok property %s of object %u missing\n", name, obj);
		exit(1);
	}
	drmModeAtomicAddProperty(req, obj, prop, val);
}

bool kms_head_find(int fd, const drmModeRes *res, uint32_t conn_id,
		   uint32_t *used, struct kms_head *h)
{
	drmModePlaneRes *pres = drmModeGetPlaneResources(fd);
	uint64_t type;
	uint32_t i;
	int pipe;

	memset(h, 0, sizeof(*h));
	pipe = kms_output(fd, res, conn_id, &h->mode, used);
	for (i = 0; pipe >= 0 && pres && i < pres->count_planes; i++) {
		drmModePlane *p = drmModeGetPlane(fd, pres->planes[i]);

		if (p && (p->possible_crtcs & (1u << pipe)) &&
		    kms_prop_value(fd, p->plane_id, DRM_MODE_OBJECT_PLANE,
				   "type", &type)) {
			if (type == DRM_PLANE_TYPE_PRIMARY && !h->primary)
				h->primary = p->plane_id;
			if (type == DRM_PLANE_TYPE_CURSOR && !h->cursor)
				h->cursor = p->plane_id;
		}
		drmModeFreePlane(p);
	}
	drmModeFreePlaneResources(pres);
	if (pipe < 0 || !h->primary)
		return false;
	h->pipe = pipe;
	h->crtc_id = res->crtcs[pipe];
	h->conn_id = conn_id;
	return true;
}

/* Every connected head with its CRTC, planes, preferred mode and buffers. */
void kms_display_open(struct kms_display *d, const char *card)
{
	drmModeRes *res;
	drmModePlaneRes *pres;
	uint32_t used = 0;
	int i;

	memset(d, 0, sizeof(*d));
	d->card = card;
	d->fd = kms_open_atomic(card);
	/* Without it, a virtual driver hides its cursor planes. */
	drmSetClientCap(d->fd, DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT, 1);
	kms_resources(d->fd, &res, &pres);
	for (i = 0; i < (int)pres->count_planes && i < KMS_MAX_PLANES; i++) {
		drmModePlane *p = drmModeGetPlane(d->fd, pres->planes[i]);

		if (!p)
			continue;
		d->planes[d->num_planes] = p->plane_id;
		d->plane_crtcs[d->num_planes] = p->possible_crtcs;
		kms_prop_value(d->fd, p->plane_id, DRM_MODE_OBJECT_PLANE, "type",
			       &d->plane_type[d->num_planes]);
		d->num_planes++;
		drmModeFreePlane(p);
	}
	for (i = 0; i < res->count_connectors && d->num_heads < KMS_MAX_HEADS;
	     i++) {
		struct kms_head *h = &d->heads[d->num_heads];

		if (!kms_head_find(d->fd, res, res->connectors[i], &used, h))
			continue;
		kms_mode_buffers(d->fd, h->buf, 2, &h->mode, h->pipe * 2);
		d->num_heads++;
	}
	drmModeFreePlaneResources(pres);
	drmModeFreeResources(res);
}

struct kms_head *kms_display_head(struct kms_display *d, unsigned int index)
{
	if (index >= d->num_heads) {
		printf("not ok head %u: %u heads\n", index, d->num_heads);
		exit(1);
	}
	return &d->heads[index];
}

/* The @n-th overlay plane (pvdc's can go on every head). */
uint32_t kms_overlay(struct kms_display *d, unsigned int n)
{
	unsigned int i, seen = 0;

	for (i = 0; i < d->num_planes; i++)
		if (d->plane_type[i] == DRM_PLANE_TYPE_OVERLAY && seen++ == n)
			return d->planes[i];
	return 0;
}

/* Add @plane showing @fb at full size, unscaled unless @w x @h differ. */
void kms_plane_set(struct kms_display *d, drmModeAtomicReq *req, uint32_t plane,
		   struct kms_head *h, struct kms_buffer *fb, uint32_t x,
		   uint32_t y, uint32_t w, uint32_t h_)
{
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "FB_ID", fb->fb_id);
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "CRTC_ID",
		h->crtc_id);
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "SRC_X", 0);
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "SRC_Y", 0);
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "SRC_W",
		(uint64_t)fb->width << 16);
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "SRC_H",
		(uint64_t)fb->height << 16);
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "CRTC_X", x);
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "CRTC_Y", y);
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "CRTC_W", w);
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "CRTC_H", h_);
}

void kms_plane_off(struct kms_display *d, drmModeAtomicReq *req, uint32_t plane)
{
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "FB_ID", 0);
	kms_add(d->fd, req, plane, DRM_MODE_OBJECT_PLANE, "CRTC_ID", 0);
}

/*
 * Head @h on with @mode (its own if NULL) and its first buffer, cropped
 * (not scaled) to the mode: a scaler is for what a test asks for.
 */
void kms_head_on(struct kms_display *d, drmModeAtomicReq *req,
		 struct kms_head *h, const drmModeModeInfo *mode)
{
	uint32_t blob, w, ht;

	if (!mode)
		mode = &h->mode;
	blob = kms_mode_blob(d->fd, mode);
	w = h->buf[0].width < mode->hdisplay ? h->buf[0].width :
	    mode->hdisplay;
	ht = h->buf[0].height < mode->vdisplay ? h->buf[0].height :
	     mode->vdisplay;
	kms_add(d->fd, req, h->crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", blob);
	kms_add(d->fd, req, h->crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
	kms_add(d->fd, req, h->conn_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID",
		h->crtc_id);
	kms_plane_set(d, req, h->primary, h, &h->buf[0], 0, 0, w, ht);
	kms_add(d->fd, req, h->primary, DRM_MODE_OBJECT_PLANE, "SRC_W",
		(uint64_t)w << 16);
	kms_add(d->fd, req, h->primary, DRM_MODE_OBJECT_PLANE, "SRC_H",
		(uint64_t)ht << 16);
}

void kms_head_off(struct kms_display *d, drmModeAtomicReq *req,
		  struct kms_head *h)
{
	kms_add(d->fd, req, h->crtc_id, DRM_MODE_OBJECT_CRTC, "MODE_ID", 0);
	kms_add(d->fd, req, h->crtc_id, DRM_MODE_OBJECT_CRTC, "ACTIVE", 0);
	kms_add(d->fd, req, h->conn_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID",
		0);
	kms_plane_off(d, req, h->primary);
}

/* Commit and free @req; 0 or -errno. */
void kms_cursor_images(int fd, struct kms_buffer images[2])
{
	kms_cursor_image(fd, &images[0], 0xffff0000);
	kms_cursor_image(fd, &images[1], 0xff00ff00);
}

int kms_cursor_set(int fd, const struct kms_head *h,
		   const struct kms_buffer *image)
{
	if (!image)
		return drmModeSetCursor(fd, h->crtc_id, 0, 0, 0) ? -errno : 0;
	return drmModeSetCursor(fd, h->crtc_id, image->handle, image->width,
				image->height) ? -errno : 0;
}

void kms_cursor_images_off(int fd, const struct kms_head *h,
			   struct kms_buffer images[2])
{
	kms_cursor_set(fd, h, NULL);
	kms_buffer_destroy(fd, &images[0]);
	kms_buffer_destroy(fd, &images[1]);
}

void kms_cursor_place(const struct kms_head *h, unsigned int i, uint32_t *x,
		      uint32_t *y)
{
	*x = i * 7 % h->mode.hdisplay;
	*y = i * 5 % h->mode.vdisplay;
}

int kms_commit(struct kms_display *d, drmModeAtomicReq *req, uint32_t flags,
	       void *data)
{
	int ret = drmModeAtomicCommit(d->fd, req, flags, data);

	ret = ret ? -errno : 0;
	drmModeAtomicFree(req);
	return ret;
}

static void kms_flip_done(int fd, unsigned int seq, unsigned int sec,
			  unsigned int usec, unsigned int crtc, void *data)
{
	(void)fd; (void)sec; (void)usec; (void)crtc;
	*(unsigned int *)data = seq;
}

/*
 * Commit @req (freed) with an event; the vblank from which its picture is
 * on screen, or 0 with -errno in @err.
 */
uint32_t kms_commit_shown(struct kms_display *d, drmModeAtomicReq *req,
			  uint32_t flags, int *err)
{
	drmEventContext ev = {
		.version = 3,
		.page_flip_handler2 = kms_flip_done,
	};
	struct pollfd pfd = { .fd = d->fd, .events = POLLIN };
	unsigned int seq = 0;

	*err = kms_commit(d, req, flags | DRM_MODE_PAGE_FLIP_EVENT, &seq);
	if (*err)
		return 0;
	/* The kernel itself gives up on a flip after 10 s. */
	while (!seq && poll(&pfd, 1, 10000) > 0)
		drmHandleEvent(d->fd, &ev);
	if (!seq)
		*err = -ETIMEDOUT;
	return seq;
}

static void kms_flipper_event(int fd, unsigned int seq, unsigned int sec,
			      unsigned int usec, unsigned int crtc, void *data)
{
	struct kms_flipper *f = data;
	uint64_t now = (uint64_t)sec * 1000000000ull + usec * 1000ull;

	(void)fd;
	(void)crtc;
	if (f->events && seq != f->last_seq + 1)
		f->missed += seq - f->last_seq - 1;
	/* Issued before a vblank, latched at a later one. */
	if (now > f->issued_ns + f->period_ns + 1000)
		f->late++;
	if (f->events && now - f->last_ns > f->longest_ns)
		f->longest_ns = now - f->last_ns;
	if (!f->events)
		f->first_seq = seq;
	f->last_seq = seq;
	f->last_ns = now;
	f->events++;
}

static void kms_flipper_longest(uint64_t *longest, uint64_t since)
{
	uint64_t t = kms_now_ns() - since;

	if (t > *longest)
		*longest = t;
}

static void *kms_flipper_run(void *arg)
{
	drmEventContext ev = { .version = 3,
			       .page_flip_handler2 = kms_flipper_event };
	struct kms_flipper *f = arg;
	struct pollfd pfd = { .fd = f->d->fd, .events = POLLIN };
	unsigned int front = 0;

	kms_realtime();
	while (!f->stop) {
		unsigned int events = f->events;

		f->issued_ns = kms_now_ns();
		if (drmModePageFlip(f->d->fd, f->h->crtc_id,
				    f->h->buf[front ^ 1].fb_id,
				    DRM_MODE_PAGE_FLIP_EVENT, f)) {
			f->errors++;
			break;
		}
		kms_flipper_longest(&f->longest_ioctl_ns, f->issued_ns);
		while (f->events == events) {
			if (poll(&pfd, 1, 3000) <= 0) {
				f->errors++;
				return NULL;
			}
			drmHandleEvent(f->d->fd, &ev);
		}
		kms_flipper_longest(&f->longest_wait_ns, f->issued_ns);
		front ^= 1;
		f->flips++;
	}
	return NULL;
}

void kms_flipper_start(struct kms_flipper *f, struct kms_display *d,
		       struct kms_head *h)
{
	memset(f, 0, sizeof(*f));
	f->d = d;
	f->h = h;
	f->period_ns = kms_mode_period_ns(&h->mode);
	if (pthread_create(&f->thread, NULL, kms_flipper_run, f)) {
		printf("not ok flipper thread: %s\n", strerror(errno));
		exit(1);
	}
}

void kms_flipper_stop(struct kms_flipper *f)
{
	f->stop = true;
	pthread_join(f->thread, NULL);
}

unsigned int kms_flipper_frames(const struct kms_flipper *f)
{
	return f->events > 1 ? f->last_seq - f->first_seq : 0;
}

bool kms_flipper_paced(const struct kms_flipper *f)
{
	return !f->errors && f->flips > 10 && f->late * 50 <= f->flips;
}

/*
 * BAR @bar of the PCI device at sysfs path @dev, mapped: the device's
 * registers read without being a client of its driver.  While the driver
 * holds the BARs, that needs the guest booted with iomem=relaxed.
 */
volatile uint32_t *kms_bar_map_path(const char *dev, int bar, size_t *size)
{
	char path[512];
	struct stat st;
	void *map;
	int fd;

	snprintf(path, sizeof(path), "%s/resource%d", dev, bar);
	fd = open(path, O_RDWR | O_SYNC | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		printf("not ok %s: %s\n", path, strerror(errno));
		exit(1);
	}
	map = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		printf("not ok mmap %s: %s\n", path, strerror(errno));
		exit(1);
	}
	if (size)
		*size = st.st_size;
	return map;
}

/* BAR @bar of the device behind @card (/dev/dri/cardN). */
volatile uint32_t *kms_bar_map(const char *card, int bar, size_t *size)
{
	const char *name = strrchr(card, '/');
	char dev[256];

	snprintf(dev, sizeof(dev), "/sys/class/drm/%s/device",
		 name ? name + 1 : card);
	return kms_bar_map_path(dev, bar, size);
}

uint32_t kms_reg(volatile uint32_t *bar, uint32_t reg)
{
	return bar[reg / 4];
}

/*
 * Connector @conn_id as an output: its preferred mode, to @mode, and the
 * first CRTC one of its encoders can drive that is not in @used (a mask of
 * CRTC indices, updated).  The CRTC's index, or -1 when the connector is
 * not connected or no CRTC is left for it.
 */
int kms_output(int fd, const drmModeRes *res, uint32_t conn_id,
	       drmModeModeInfo *mode, uint32_t *used)
{
	drmModeConnector *conn = drmModeGetConnector(fd, conn_id);
	int i, c, pipe = -1;

	if (!conn || kms_connector_mode(conn, mode))
		goto out;
	for (i = 0; i < conn->count_encoders && pipe < 0; i++) {
		drmModeEncoder *enc = drmModeGetEncoder(fd, conn->encoders[i]);

		for (c = 0; enc && c < res->count_crtcs && pipe < 0; c++) {
			if ((enc->possible_crtcs & (1u << c)) &&
			    !(*used & (1u << c))) {
				*used |= 1u << c;
				pipe = c;
			}
		}
		drmModeFreeEncoder(enc);
	}
out:
	drmModeFreeConnector(conn);
	return pipe;
}

/* ------------------------------------------------------------------------ */
/* Frame CRCs through the DRM debugfs CRC interface                         */
/* ------------------------------------------------------------------------ */

/*
 * Select the "auto" CRC source of CRTC @pipe under debugfs directory @dbg
 * (/sys/kernel/debug/dri/N) and open its data file; false, with a
 * "not ok" line, if that fails.
 */
bool kms_crc_open(struct kms_crc *c, const char *dbg, int pipe)
{
	char file[256];
	int fd;

	memset(c, 0, sizeof(*c));
	c->data = -1;
	c->frames_ok = true;
	snprintf(file, sizeof(file), "%s/crtc-%d/crc/control", dbg, pipe);
	fd = open(file, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "auto", 4) != 4) {
		printf("not ok crc-source-auto: %s: %s\n", file,
		       strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	close(fd);
	snprintf(file, sizeof(file), "%s/crtc-%d/crc/data", dbg, pipe);
	c->data = open(file, O_RDONLY | O_CLOEXEC);
	if (c->data < 0) {
		printf("not ok crc-capture-opens: %s: %s\n", file,
		       strerror(errno));
		return false;
	}
	return true;
}

/* Stops the capture. */
void kms_crc_close(struct kms_crc *c)
{
	if (c->data >= 0)
		close(c->data);
	c->data = -1;
}

/* One read() is one entry: "0xFRAME 0xCRC\n", NUL-terminated. */
static bool kms_crc_read(struct kms_crc *c, uint32_t *crc, uint32_t *frame_out)
{
	unsigned int frame, value;
	char line[64];
	ssize_t len;

	len = read(c->data, line, sizeof(line) - 1);
	if (len <= 0) {
		printf("# reading CRCs: %s\n", len ? strerror(errno) : "EOF");
		return false;
	}
	line[len] = 0;
	if (sscanf(line, "%x %x", &frame, &value) != 2) {
		printf("# bad CRC entry: %s\n", line);
		return false;
	}
	if (c->last_frame && frame <= c->last_frame)
		c->frames_ok = false;
	c->last_frame = frame;
	*crc = value;
	*frame_out = frame;
	return true;
}

/*
 * The CRC of a still picture shown since vblank @since: KMS_CRC_SAMPLES
 * equal values, once the entries of older frames are drained.
 */
bool kms_crc_stable(struct kms_crc *c, uint32_t since, uint32_t *crc)
{
	uint32_t value, frame;
	int i;

	do {
		if (!kms_crc_read(c, crc, &frame))
			return false;
	} while (frame < since + KMS_CRC_SETTLE);
	for (i = 1; i < KMS_CRC_SAMPLES; i++) {
		if (!kms_crc_read(c, &value, &frame) || value != *crc)
			return false;
	}
	return true;
}

/* The stable CRC of pipe @pipe since vblank @since (kms_crc_stable()). */
bool kms_crc_since(const char *debugfs, unsigned int pipe, uint32_t since,
		   uint32_t *crc)
{
	struct kms_crc c;
	bool ok;

	if (!kms_crc_open(&c, debugfs, pipe))
		return false;
	ok = kms_crc_stable(&c, since, crc);
	kms_crc_close(&c);
	return ok;
}

bool kms_commit_crc(struct kms_display *d, drmModeAtomicReq *req,
		    const char *debugfs, const struct kms_head *h,
		    uint32_t *crc, const char *name)
{
	uint32_t since;
	int err;

	since = kms_commit_shown(d, req, 0, &err);
	if (!since) {
		kms_result(false, "%s: commit: %s", name, strerror(-err));
		return false;
	}
	if (!kms_crc_since(debugfs, h->pipe, since, crc)) {
		kms_result(false, "%s: no stable CRC", name);
		return false;
	}
	return true;
}

int kms_crc_start(int argc, char **argv, struct kms_display *d,
		  const char **debugfs, const char *setup)
{
	const char *card = KMS_CARD;
	const struct kms_option opts[] = {
		{ 'c', KMS_OPTION_STRING, &card, "CARD" },
		{ 'd', KMS_OPTION_STRING, debugfs, "DEBUGFS" },
		{ 0 }
	};
	int first = kms_options(argc, argv, 1, opts, "TEST...");

	kms_display_open(d, card);
	if (!d->num_heads) {
		printf("not ok %s: no connected head\n", setup);
		exit(1);
	}
	return first;
}

/* ------------------------------------------------------------------------ */
/* The driver's tracepoints, through a tracefs instance                     */
/* ------------------------------------------------------------------------ */

/* Write @value to @file of @dir; false if that fails. */
static bool kms_trace_write(const char *dir, const char *file,
			    const char *value)
{
	char path[256];
	size_t len = strlen(value);
	bool ok;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = write(fd, value, len) == (ssize_t)len;
	close(fd);
	return ok;
}

bool kms_trace_start(struct kms_trace *t, const char *name,
		     const char *event, const char *filter)
{
	const char *root = access(KMS_TRACEFS "/instances", F_OK) ?
			   KMS_TRACEFS_DEBUGFS : KMS_TRACEFS;
	const char *base = strrchr(event, '/');
	char file[160];

	snprintf(t->event, sizeof(t->event), "%s", base ? base + 1 : event);
	snprintf(t->dir, sizeof(t->dir), "%s/instances/%s", root, name);
	/* One left by a program that was killed goes with its records. */
	rmdir(t->dir);
	if (mkdir(t->dir, 0700)) {
		t->dir[0] = 0;
		return false;
	}
	snprintf(file, sizeof(file), "events/%s/filter", event);
	if (filter && !kms_trace_write(t->dir, file, filter))
		goto fail;
	snprintf(file, sizeof(file), "events/%s/enable", event);
	if (!kms_trace_write(t->dir, file, "1"))
		goto fail;
	return true;

fail:
	kms_trace_stop(t);
	return false;
}

long long kms_trace_count(const struct kms_trace *t)
{
	char path[192], line[512], tag[80];
	long long n = 0;
	FILE *f;

	if (!t->dir[0])
		return -1;
	snprintf(path, sizeof(path), "%s/trace", t->dir);
	snprintf(tag, sizeof(tag), " %s:", t->event);
	f = fopen(path, "r");
	if (!f)
		return -1;
	/* Comment lines start with '#'; records name their event. */
	while (fgets(line, sizeof(line), f))
		n += line[0] != '#' && strstr(line, tag);
	fclose(f);
	return n;
}

void kms_trace_stop(struct kms_trace *t)
{
	int err = errno;

	if (t->dir[0])
		rmdir(t->dir);
	t->dir[0] = 0;
	errno = err;
}

/*
 * The shadow registers of every plane and head of the device whose BAR 0
 * is @bar0 (a malloc'ed array of @count).
 */
uint32_t *kms_shadow_registers(volatile uint32_t *bar0, size_t *count)
{
	uint32_t planes = kms_reg(bar0, PVDC_REG_NUM_PLANES);
	uint32_t heads = kms_reg(bar0, PVDC_REG_NUM_HEADS);
	size_t n = 0, i;
	uint32_t p, h, *regs;

	regs = calloc((size_t)planes * PVDC_PLANE_STATE_REGS +
		      (size_t)heads * PVDC_HEAD_STATE_REGS, 4);
	for (p = 0; p < planes; p++)
		for (i = 0; i < PVDC_PLANE_STATE_REGS; i++)
			regs[n++] = kms_reg(bar0, PVDC_PLANE_SHADOW(p) + i * 4);
	for (h = 0; h < heads; h++)
		for (i = 0; i < PVDC_HEAD_STATE_REGS; i++)
			regs[n++] = kms_reg(bar0, PVDC_HEAD_SHADOW(h) + i * 4);
	*count = n;
	return regs;
}

/*
 * Whether the test @name was asked for in argv[@first..]: all of them when
 * none is named, except "hold", which keeps the picture for the host and
 * only runs when named.
 */
bool kms_wanted(int argc, char **argv, int first, const char *name)
{
	int i;

	if (first >= argc)
		return strcmp(name, "hold");
	for (i = first; i < argc; i++)
		if (!strcmp(argv[i], name))
			return true;
	return false;
}
