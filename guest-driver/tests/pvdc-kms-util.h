/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Helpers shared by the in-guest KMS test programs (header only, so that
 * every program stays one .c file): TAP-like reporting, dumb buffers and
 * property lookup.
 */
#ifndef PVDC_KMS_UTIL_H
#define PVDC_KMS_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#ifndef DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT
#define DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT 6
#endif

static int kms_failures;

#define KMS_UNUSED __attribute__((unused))

static KMS_UNUSED void __attribute__((format(printf, 2, 3)))
kms_result(bool ok, const char *fmt, ...)
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
static KMS_UNUSED int64_t kms_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* kms_now_ns(), in seconds. */
static KMS_UNUSED double kms_now(void)
{
	return kms_now_ns() / 1e9;
}

static KMS_UNUSED int kms_open(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0) {
		printf("not ok open: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	return fd;
}

/* kms_open(), for a client of the atomic uAPI with universal planes. */
static KMS_UNUSED int kms_open_atomic(const char *path)
{
	int fd = kms_open(path);

	if (drmSetClientCap(fd, DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1) ||
	    drmSetClientCap(fd, DRM_CLIENT_CAP_ATOMIC, 1)) {
		printf("not ok atomic-cap: %s\n", strerror(errno));
		exit(1);
	}
	return fd;
}

struct kms_buffer {
	uint32_t width, height, pitch, format, cpp;
	uint32_t handle, fb_id;
	uint64_t size;
	void *map;
};

/* A dumb buffer with a framebuffer on it; 0 or -errno. */
static KMS_UNUSED int kms_buffer_create(int fd, struct kms_buffer *buf,
					uint32_t width, uint32_t height,
					uint32_t format)
{
	struct drm_mode_create_dumb create = { 0 };
	struct drm_mode_map_dumb map = { 0 };
	uint32_t handles[4] = { 0 }, pitches[4] = { 0 }, offsets[4] = { 0 };
	uint32_t bpp = format == DRM_FORMAT_RGB565 ||
		       format == DRM_FORMAT_YUYV ? 16 : 32;

	memset(buf, 0, sizeof(*buf));
	create.width = width;
	create.height = height;
	create.bpp = bpp;
	if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &create))
		return -errno;
	buf->width = width;
	buf->height = height;
	buf->format = format;
	buf->cpp = bpp / 8;
	buf->pitch = create.pitch;
	buf->handle = create.handle;
	buf->size = create.size;

	handles[0] = buf->handle;
	pitches[0] = buf->pitch;
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

static KMS_UNUSED void kms_buffer_destroy(int fd, struct kms_buffer *buf)
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

/* Colour bars shifted by @phase, for 32-bit formats; solid for others. */
static KMS_UNUSED void kms_buffer_fill(struct kms_buffer *buf,
				       unsigned int phase)
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
}

/*
 * The id of the property NAME of an object, 0 if it has none; with @out,
 * also its description (for its range or enum values; the caller frees it
 * with drmModeFreeProperty()).
 */
static KMS_UNUSED uint32_t kms_prop_find(int fd, uint32_t obj, uint32_t type,
					 const char *name,
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

static KMS_UNUSED uint32_t kms_prop_id(int fd, uint32_t obj, uint32_t type,
				       const char *name)
{
	return kms_prop_find(fd, obj, type, name, NULL);
}

static KMS_UNUSED bool kms_prop_value(int fd, uint32_t obj, uint32_t type,
				      const char *name, uint64_t *value)
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
static KMS_UNUSED int kms_connector_mode(drmModeConnector *conn,
					 drmModeModeInfo *mode)
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

#endif /* PVDC_KMS_UTIL_H */
