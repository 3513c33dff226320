// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-space: TEST_ONLY foresees the device address space a commit needs.
 *
 *   pvdc-space [CARD]
 *
 * For a pvdc whose bindings have room for fewer than eight buffers of the
 * heads' preferred mode, at least seven (x-bind-space): two heads show a
 * full-screen primary and overlay each, four buffers the device holds.
 * A flip of both heads to four other buffers needs eight at once, until
 * the device latched it: its TEST_ONLY commit is refused with ENOSPC, and
 * so is the real one, by its check and not by prepare_fb.  A flip of one
 * head needs six: TEST_ONLY accepts it and the commit succeeds; then the
 * other head's flip, for which the driver evicts the buffers the first
 * flip released.  What a TEST_ONLY commit bound stays bound only as long
 * as nothing needs the room: the next commit of the other head evicts
 * it.  Nonblocking commits are checked the same way.  Every blocking
 * commit waits for its latch, so that the buffers it replaced are
 * released when it returns; the nonblocking ones come last.
 */
#include "pvdc-kms-util.h"

#define HEADS		2
#define SETS		2	/* the buffers shown, and those flipped to */
#define PLANES		2	/* primary and overlay */

static struct kms_display disp;
static struct kms_buffer buf[HEADS][SETS][PLANES];
static uint32_t overlay[HEADS];

static bool allocate(void)
{
	unsigned int h, s, p;
	int ret;

	for (h = 0; h < HEADS; h++) {
		struct kms_head *kh = &disp.heads[h];

		/* Only the buffers this test counts: none of the display's. */
		for (s = 0; s < SETS; s++)
			kms_buffer_destroy(disp.fd, &kh->buf[s]);
		overlay[h] = kms_overlay(&disp, h);
		for (s = 0; s < SETS; s++) {
			for (p = 0; p < PLANES; p++) {
				ret = kms_buffer_create(disp.fd, &buf[h][s][p],
							kh->mode.hdisplay,
							kh->mode.vdisplay,
							DRM_FORMAT_XRGB8888);
				if (ret) {
					printf("not ok allocate: %s\n",
					       strerror(-ret));
					return false;
				}
				kms_buffer_fill(&buf[h][s][p], s * PLANES + p);
			}
		}
	}
	printf("# buffers of %llu bytes\n",
	       (unsigned long long)buf[0][0][0].size);
	return true;
}

/* No change of a head's buffers. */
#define KEEP		-1

/* Each head shows its buffers of set @sets[h], unless that is KEEP. */
static int show(const int sets[HEADS], uint32_t flags)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	unsigned int h;
	int err;

	for (h = 0; h < HEADS; h++) {
		struct kms_head *kh = &disp.heads[h];
		int s = sets[h];

		if (s == KEEP)
			continue;
		if (flags & DRM_MODE_ATOMIC_ALLOW_MODESET) {
			kms_add(disp.fd, req, kh->crtc_id, DRM_MODE_OBJECT_CRTC,
				"MODE_ID", kms_mode_blob(disp.fd, &kh->mode));
			kms_add(disp.fd, req, kh->crtc_id, DRM_MODE_OBJECT_CRTC,
				"ACTIVE", 1);
			kms_add(disp.fd, req, kh->conn_id,
				DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID",
				kh->crtc_id);
		}
		kms_plane_set(&disp, req, kh->primary, kh, &buf[h][s][0], 0, 0,
			      kh->mode.hdisplay, kh->mode.vdisplay);
		kms_plane_set(&disp, req, overlay[h], kh, &buf[h][s][1], 0, 0,
			      kh->mode.hdisplay, kh->mode.vdisplay);
	}
	if (!(flags & DRM_MODE_ATOMIC_NONBLOCK))
		return kms_commit(&disp, req, flags, NULL);
	/* Shown, or refused: nothing of it is pending once this returns. */
	kms_commit_shown(&disp, req, flags, &err);
	return err;
}

/* TEST_ONLY, then the commit itself (@flags): both must end in @expect. */
static void predict(const char *what, int set0, int set1, uint32_t flags,
		    int expect)
{
	const int sets[HEADS] = { set0, set1 };
	int test = show(sets, DRM_MODE_ATOMIC_TEST_ONLY);
	int real = show(sets, flags);

	kms_result(test == expect, "TEST_ONLY %s: %s", what,
		   test ? strerror(-test) : "accepted");
	kms_result(real == expect, "commit %s: %s", what,
		   real ? strerror(-real) : "done");
}

int main(int argc, char **argv)
{
	const int first[HEADS] = { 0, 0 }, head0_first[HEADS] = { 0, KEEP };
	int ret;

	kms_display_open(&disp, kms_operand(argc, argv, 1, KMS_CARD));
	if (disp.num_heads < HEADS) {
		printf("not ok heads: %u connected\n", disp.num_heads);
		return 1;
	}
	if (!allocate())
		return 1;
	ret = show(first, DRM_MODE_ATOMIC_ALLOW_MODESET);
	kms_result(!ret, "two heads show a primary and an overlay%s%s",
		   ret ? ": " : "", ret ? strerror(-ret) : "");
	if (ret)
		return 1;

	predict("of both heads to four new buffers, eight in all", 1, 1, 0,
		-ENOSPC);
	predict("of head 0 to two new buffers, six in all", 1, KEEP, 0, 0);
	predict("of head 1 to two new buffers, evicting head 0's old ones",
		KEEP, 1, 0, 0);
	predict("of both heads back to the first four, eight in all", 0, 0, 0,
		-ENOSPC);

	/*
	 * Head 0's TEST_ONLY binds its first two buffers again: seven bound,
	 * four shown.  Head 1's flip to its first two then needs the room
	 * of one of them: the TEST_ONLY's reservation ended with its ioctl.
	 */
	ret = show(head0_first, DRM_MODE_ATOMIC_TEST_ONLY);
	kms_result(!ret, "TEST_ONLY of head 0 to its first two buffers: %s",
		   ret ? strerror(-ret) : "accepted");
	predict("of head 1 to its first two buffers, "
		"evicting what head 0's TEST_ONLY bound", KEEP, 0, 0, 0);

	predict("nonblocking, of head 0 to its first two and head 1 to its "
		"second two buffers, eight in all", 0, 1,
		DRM_MODE_ATOMIC_NONBLOCK, -ENOSPC);
	predict("nonblocking, of head 0 to its first two buffers, six in all",
		0, KEEP, DRM_MODE_ATOMIC_NONBLOCK, 0);
	return kms_failures ? 1 : 0;
}
