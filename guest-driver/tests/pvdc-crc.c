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

static struct kms_crc crc;

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

int main(int argc, char **argv)
{
	const char *path = kms_operand(argc, argv, 1, KMS_CARD);
	const char *dbg = kms_operand(argc, argv, 2, KMS_DEBUGFS);
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
	if (!kms_crc_open(&crc, dbg, pipe))
		return 1;
	kms_result(true, "crc-capture-opens");

	since = show(fd, crtc_id, pipe, NULL);
	ok = since && kms_crc_stable(&crc, since, &crc_a);
	report(ok, "crc-stable-for-a-still-picture", crc_a);
	since = show(fd, crtc_id, pipe, &b);
	ok = since && kms_crc_stable(&crc, since, &crc_b);
	report(ok && crc_b != crc_a, "crc-changes-with-the-picture", crc_b);
	since = show(fd, crtc_id, pipe, &a);
	ok = since && kms_crc_stable(&crc, since, &crc_a2);
	report(ok && crc_a2 == crc_a, "crc-same-picture-same-crc", crc_a2);
	kms_result(crc.frames_ok, "crc-frame-numbers-increase");

	kms_crc_close(&crc);
	kms_buffer_destroy(fd, &a);
	kms_buffer_destroy(fd, &b);
	drmModeFreeResources(res);
	close(fd);
	return kms_failures ? 1 : 0;
}
