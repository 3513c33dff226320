// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-budget: what a pvdc with its default VRAM and bandwidth promises.
 *
 *   pvdc-budget [CARD]
 *
 * Every head gets the largest mode its connector lists and four dumb
 * buffers of it, 32 bits a pixel: a primary and an overlay plane,
 * double-buffered.  One commit then shows a full-screen primary and a
 * full-screen overlay on every head, and a second one flips every plane
 * to its other buffer.  The device's defaults must hold all of it: VRAM
 * for the buffers, bandwidth for the planes.
 */
#include "pvdc-kms-util.h"

#define BUFFERS		2	/* double-buffered */
#define PLANES		2	/* primary and overlay */

struct budget_head {
	drmModeModeInfo mode;
	uint32_t overlay;
	struct kms_buffer buf[PLANES][BUFFERS];
};

static struct kms_display disp;
static struct budget_head heads[KMS_MAX_HEADS];

/* The largest mode @conn_id lists, by area. */
static int largest_mode(uint32_t conn_id, drmModeModeInfo *mode)
{
	drmModeConnector *c = drmModeGetConnector(disp.fd, conn_id);
	uint64_t best = 0;
	int i;

	for (i = 0; c && i < c->count_modes; i++) {
		uint64_t area = (uint64_t)c->modes[i].hdisplay *
				c->modes[i].vdisplay;

		if (area > best) {
			best = area;
			*mode = c->modes[i];
		}
	}
	drmModeFreeConnector(c);
	return best ? 0 : -1;
}

static bool allocate(void)
{
	unsigned int h, p, b;
	int ret;

	for (h = 0; h < disp.num_heads; h++) {
		struct budget_head *bh = &heads[h];

		/* Only the buffers this test counts: none of the display's. */
		for (b = 0; b < BUFFERS; b++)
			kms_buffer_destroy(disp.fd, &disp.heads[h].buf[b]);
		if (largest_mode(disp.heads[h].conn_id, &bh->mode)) {
			printf("not ok allocate: head %u lists no mode\n", h);
			return false;
		}
		printf("# head %u: %ux%u\n", h, bh->mode.hdisplay,
		       bh->mode.vdisplay);
		bh->overlay = kms_overlay(&disp, h);
		for (p = 0; p < PLANES; p++) {
			for (b = 0; b < BUFFERS; b++) {
				ret = kms_buffer_create(disp.fd,
							&bh->buf[p][b],
							bh->mode.hdisplay,
							bh->mode.vdisplay,
							DRM_FORMAT_XRGB8888);
				if (ret) {
					printf("not ok allocate: head %u "
					       "buffer %u: %s\n", h,
					       p * BUFFERS + b,
					       strerror(-ret));
					return false;
				}
				kms_buffer_fill(&bh->buf[p][b], p + b);
			}
		}
	}
	printf("ok allocate four largest-mode framebuffers per head\n");
	return true;
}

/* Every head's primary and overlay full-screen, on buffer @b. */
static int show(unsigned int b, uint32_t flags)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	unsigned int h;

	for (h = 0; h < disp.num_heads; h++) {
		struct budget_head *bh = &heads[h];
		struct kms_head *kh = &disp.heads[h];

		if (flags & DRM_MODE_ATOMIC_ALLOW_MODESET) {
			uint32_t blob;

			if (drmModeCreatePropertyBlob(disp.fd, &bh->mode,
						      sizeof(bh->mode),
						      &blob)) {
				int err = -errno;

				drmModeAtomicFree(req);
				return err;
			}
			kms_add(disp.fd, req, kh->crtc_id, DRM_MODE_OBJECT_CRTC,
				"MODE_ID", blob);
			kms_add(disp.fd, req, kh->crtc_id, DRM_MODE_OBJECT_CRTC,
				"ACTIVE", 1);
			kms_add(disp.fd, req, kh->conn_id,
				DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID",
				kh->crtc_id);
		}
		kms_plane_set(&disp, req, kh->primary, kh, &bh->buf[0][b], 0, 0,
			      bh->mode.hdisplay, bh->mode.vdisplay);
		kms_plane_set(&disp, req, bh->overlay, kh, &bh->buf[1][b], 0, 0,
			      bh->mode.hdisplay, bh->mode.vdisplay);
	}
	return kms_commit(&disp, req, flags, NULL);
}

int main(int argc, char **argv)
{
	bool ok;
	int ret;

	kms_display_open(&disp, kms_operand(argc, argv, 1, KMS_CARD));
	if (disp.num_heads < 2) {
		printf("not ok heads: %u connected\n", disp.num_heads);
		return 1;
	}
	ok = allocate();
	if (ok) {
		ret = show(0, DRM_MODE_ATOMIC_ALLOW_MODESET);
		printf("%s full-screen primary and overlay on every head%s%s\n",
		       ret ? "not ok" : "ok", ret ? ": " : "",
		       ret ? strerror(-ret) : "");
		ok = !ret;
	}
	if (ok) {
		ret = show(1, 0);
		printf("%s flip every plane to its second buffer%s%s\n",
		       ret ? "not ok" : "ok", ret ? ": " : "",
		       ret ? strerror(-ret) : "");
		ok = !ret;
	}
	return ok ? 0 : 1;
}
