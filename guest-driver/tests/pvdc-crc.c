// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-crc: frame CRCs through the DRM debugfs CRC interface.
 *
 * Lights the first connected head with colour bars, captures CRCs with the
 * "auto" source, and checks that a still picture gives one stable CRC, that
 * another picture gives another one, and that going back gives the first
 * one again; frame numbers must increase.
 *
 * Usage: pvdc-crc [DEVICE [DEBUGFS-DIR]]; debugfs must be mounted
 * (default /sys/kernel/debug/dri/0).
 */
#include <poll.h>

#include "pvdc-kms-util.h"

#define SAMPLES		4
/* Frames to let go by after a flip before the picture is known settled. */
#define SETTLE		2

static int crc_fd = -1;
static int crc_data = -1;
static uint32_t last_frame;
static bool frames_ok = true;

/* One read() is one entry: "0xFRAME 0xCRC\n", NUL-terminated. */
static bool read_crc(uint32_t *crc, uint32_t *frame_out)
{
	unsigned int frame, value;
	char line[64];
	ssize_t len;

	len = read(crc_data, line, sizeof(line) - 1);
	if (len <= 0) {
		printf("# reading CRCs: %s\n", len ? strerror(errno) : "EOF");
		return false;
	}
	line[len] = 0;
	if (sscanf(line, "%x %x", &frame, &value) != 2) {
		printf("# bad CRC entry: %s\n", line);
		return false;
	}
	if (last_frame && frame <= last_frame)
		frames_ok = false;
	last_frame = frame;
	*crc = value;
	*frame_out = frame;
	return true;
}

/*
 * The CRC of a still picture shown since vblank @since: SAMPLES equal
 * values, once the entries of older frames are drained.
 */
static bool stable_crc(uint32_t since, uint32_t *crc)
{
	uint32_t value, frame;
	int i;

	do {
		if (!read_crc(crc, &frame))
			return false;
	} while (frame < since + SETTLE);
	for (i = 1; i < SAMPLES; i++) {
		if (!read_crc(&value, &frame) || value != *crc)
			return false;
	}
	return true;
}

static void flip_done(int fd, unsigned int seq, unsigned int sec,
		      unsigned int usec, void *data)
{
	(void)fd; (void)sec; (void)usec;
	*(unsigned int *)data = seq;
}

/*
 * Show @buf (NULL: what is shown); returns the vblank count from which it
 * is on screen: the flip event's, however late the flip is queued and the
 * event read on a loaded host.
 */
static uint32_t show(int fd, uint32_t crtc_id, int pipe,
		     struct kms_buffer *buf)
{
	drmEventContext ev = {
		.version = 2,
		.page_flip_handler = flip_done,
	};
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	unsigned int seq = 0;
	drmVBlank vbl = { 0 };

	if (!buf) {
		vbl.request.type = DRM_VBLANK_RELATIVE |
				   (pipe << DRM_VBLANK_HIGH_CRTC_SHIFT);
		vbl.request.sequence = 1;
		return drmWaitVBlank(fd, &vbl) ? 0 : vbl.reply.sequence;
	}
	if (drmModePageFlip(fd, crtc_id, buf->fb_id, DRM_MODE_PAGE_FLIP_EVENT,
			    &seq))
		return 0;
	/* The kernel itself gives up on a flip after 10 s. */
	while (!seq && poll(&pfd, 1, 10000) > 0)
		drmHandleEvent(fd, &ev);
	return seq;
}

static void report(bool ok, const char *name, uint32_t crc)
{
	kms_result(ok, "%s%s%08x", name, ok ? " # " : ": crc ", crc);
}

/* The first connected connector, its mode, and the first CRTC it can use. */
static int find_head(int fd, drmModeRes *res, uint32_t *conn_id,
		     uint32_t *crtc_id, drmModeModeInfo *mode)
{
	int i, j, pipe = -1;

	for (i = 0; res && i < res->count_connectors && pipe < 0; i++) {
		drmModeConnector *conn;
		drmModeEncoder *enc;

		conn = drmModeGetConnector(fd, res->connectors[i]);
		if (!conn || kms_connector_mode(conn, mode) ||
		    !conn->count_encoders) {
			drmModeFreeConnector(conn);
			continue;
		}
		enc = drmModeGetEncoder(fd, conn->encoders[0]);
		for (j = 0; enc && j < res->count_crtcs; j++) {
			if (enc->possible_crtcs & (1u << j)) {
				pipe = j;
				*crtc_id = res->crtcs[j];
				*conn_id = conn->connector_id;
				break;
			}
		}
		drmModeFreeEncoder(enc);
		drmModeFreeConnector(conn);
	}
	return pipe;
}

/* Select the "auto" CRC source of CRTC @pipe and open its data file. */
static bool open_crc_capture(const char *dbg, int pipe)
{
	char file[256];

	snprintf(file, sizeof(file), "%s/crtc-%d/crc/control", dbg, pipe);
	crc_fd = open(file, O_WRONLY);
	if (crc_fd < 0 || write(crc_fd, "auto", 4) != 4) {
		printf("not ok crc-source-auto: %s: %s\n", file,
		       strerror(errno));
		return false;
	}
	close(crc_fd);
	snprintf(file, sizeof(file), "%s/crtc-%d/crc/data", dbg, pipe);
	crc_data = open(file, O_RDONLY);
	kms_result(crc_data >= 0, "crc-capture-opens%s%s",
		   crc_data >= 0 ? "" : ": ",
		   crc_data >= 0 ? "" : strerror(errno));
	return crc_data >= 0;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/dev/dri/card0";
	const char *dbg = argc > 2 ? argv[2] : "/sys/kernel/debug/dri/0";
	struct kms_buffer a, b;
	drmModeModeInfo mode;
	uint32_t crc_a = 0, crc_b = 0, crc_a2 = 0, conn_id = 0, crtc_id = 0;
	uint32_t since;
	bool ok;
	drmModeRes *res;
	int fd, pipe;

	fd = kms_open(path);
	res = drmModeGetResources(fd);
	pipe = find_head(fd, res, &conn_id, &crtc_id, &mode);
	if (pipe < 0) {
		printf("not ok crc-setup: no connected head\n");
		return 1;
	}

	if (kms_buffer_create(fd, &a, mode.hdisplay, mode.vdisplay,
			      DRM_FORMAT_XRGB8888) ||
	    kms_buffer_create(fd, &b, mode.hdisplay, mode.vdisplay,
			      DRM_FORMAT_XRGB8888)) {
		printf("not ok crc-setup: buffers: %s\n", strerror(errno));
		return 1;
	}
	kms_buffer_fill(&a, 0);
	kms_buffer_fill(&b, 3);
	if (drmModeSetCrtc(fd, crtc_id, a.fb_id, 0, 0, &conn_id, 1, &mode)) {
		printf("not ok crc-setup: modeset: %s\n", strerror(errno));
		return 1;
	}
	if (!open_crc_capture(dbg, pipe))
		return 1;

	since = show(fd, crtc_id, pipe, NULL);
	ok = since && stable_crc(since, &crc_a);
	report(ok, "crc-stable-for-a-still-picture", crc_a);
	since = show(fd, crtc_id, pipe, &b);
	ok = since && stable_crc(since, &crc_b);
	report(ok && crc_b != crc_a, "crc-changes-with-the-picture", crc_b);
	since = show(fd, crtc_id, pipe, &a);
	ok = since && stable_crc(since, &crc_a2);
	report(ok && crc_a2 == crc_a, "crc-same-picture-same-crc", crc_a2);
	kms_result(frames_ok, "crc-frame-numbers-increase");

	close(crc_data);
	kms_buffer_destroy(fd, &a);
	kms_buffer_destroy(fd, &b);
	drmModeFreeResources(res);
	close(fd);
	return kms_failures ? 1 : 0;
}
