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
 * flip released.  A TEST_ONLY commit that needs an eviction leaves every
 * binding as it was (the driver's pvdc_bindings in debugfs).
 * Nonblocking commits are checked the same way.  A writeback target that
 * alone does not fit beside the shown buffers is refused by TEST_ONLY and
 * by the commit's check.  Then a thread checks, TEST_ONLY, a flip of
 * head 1 to two buffers never shown, which need room, while head 0 flips
 * back and forth between buffers that fit: every flip of head 0 succeeds
 * (a TEST_ONLY's reservation never makes another head's commit fail).  Last, nothing
 * stays reserved.  Every blocking commit waits for its latch, so that the
 * buffers it replaced are released when it returns.
 */
#include "pvdc-kms-util.h"

#define HEADS		2
/* The buffers shown, those flipped to, and head 1's for TEST_ONLY alone. */
#define SETS		3
#define UNSHOWN		2
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
		for (s = 0; s < sizeof(kh->buf) / sizeof(kh->buf[0]); s++)
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

#define BINDINGS	"/sys/kernel/debug/dri/0/pvdc_bindings"

/* The driver's bindings and reservations, as debugfs lists them. */
static void bindings(char *text, size_t size)
{
	FILE *f = fopen(BINDINGS, "r");
	size_t n = f ? fread(text, 1, size - 1, f) : 0;

	text[n] = 0;
	if (f)
		fclose(f);
}

/* A TEST_ONLY commit of @sets that must be accepted and change nothing. */
static void test_only_keeps_bindings(const char *what, const int sets[HEADS])
{
	static char before[4096], after[4096];
	int ret;

	bindings(before, sizeof(before));
	ret = show(sets, DRM_MODE_ATOMIC_TEST_ONLY);
	bindings(after, sizeof(after));
	kms_result(!ret, "TEST_ONLY %s: %s", what,
		   ret ? strerror(-ret) : "accepted");
	kms_result(before[0] && !strcmp(before, after),
		   "TEST_ONLY %s leaves the bindings as they were", what);
	if (strcmp(before, after))
		printf("# before:\n%s# after:\n%s", before, after);
}

/* Head 0's writeback connector, attached with the client cap. */
static uint32_t writeback_connector(void)
{
	drmModeRes *res;
	uint32_t id = 0;
	int i;

	if (drmSetClientCap(disp.fd, DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 1))
		return 0;
	res = drmModeGetResources(disp.fd);
	for (i = 0; res && i < res->count_connectors && !id; i++) {
		drmModeConnector *c = drmModeGetConnector(disp.fd,
							  res->connectors[i]);
		drmModeEncoder *e = NULL;

		if (c && c->connector_type == DRM_MODE_CONNECTOR_WRITEBACK &&
		    c->count_encoders)
			e = drmModeGetEncoder(disp.fd, c->encoders[0]);
		if (e && e->possible_crtcs & (1u << disp.heads[0].pipe))
			id = c->connector_id;
		drmModeFreeEncoder(e);
		drmModeFreeConnector(c);
	}
	drmModeFreeResources(res);
	return id;
}

/*
 * A writeback target of head 0's mode in a buffer four times its size:
 * with the four shown buffers, more than the address space holds, even
 * once every other binding is evicted.
 */
static void writeback_overflows(void)
{
	struct kms_head *kh = &disp.heads[0];
	uint32_t handles[4] = { 0 }, pitches[4] = { 0 }, offsets[4] = { 0 };
	struct drm_mode_create_dumb big = {
		.width = kh->mode.hdisplay,
		.height = 4 * kh->mode.vdisplay,	/* more than a mode may be */
		.bpp = 32,
	};
	struct drm_mode_destroy_dumb destroy = { 0 };
	uint32_t conn = writeback_connector(), fb = 0, flags;
	int test = 0, real = 0;
	drmModeAtomicReq *req;

	if (!conn || drmIoctl(disp.fd, DRM_IOCTL_MODE_CREATE_DUMB, &big)) {
		kms_result(false, "writeback target: connector %u, %s", conn,
			   strerror(errno));
		return;
	}
	handles[0] = big.handle;
	pitches[0] = big.pitch;
	destroy.handle = big.handle;
	if (drmModeAddFB2(disp.fd, kh->mode.hdisplay, kh->mode.vdisplay,
			  DRM_FORMAT_XRGB8888, handles, pitches, offsets, &fb,
			  0)) {
		kms_result(false, "writeback target: %s", strerror(errno));
		drmIoctl(disp.fd, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
		return;
	}
	printf("# writeback target in %llu bytes\n",
	       (unsigned long long)big.size);
	flags = DRM_MODE_ATOMIC_ALLOW_MODESET;
	for (int i = 0; i < 2; i++) {
		req = drmModeAtomicAlloc();
		kms_add(disp.fd, req, conn, DRM_MODE_OBJECT_CONNECTOR,
			"CRTC_ID", kh->crtc_id);
		kms_add(disp.fd, req, conn, DRM_MODE_OBJECT_CONNECTOR,
			"WRITEBACK_FB_ID", fb);
		if (!i)
			test = kms_commit(&disp, req,
					  flags | DRM_MODE_ATOMIC_TEST_ONLY,
					  NULL);
		else
			real = kms_commit(&disp, req, flags, NULL);
	}
	kms_result(test == -ENOSPC,
		   "TEST_ONLY of a writeback target that alone does not fit: %s",
		   test ? strerror(-test) : "accepted");
	kms_result(real == -ENOSPC,
		   "commit of a writeback target that alone does not fit: %s",
		   real ? strerror(-real) : "done");
	drmModeRmFB(disp.fd, fb);
	drmIoctl(disp.fd, DRM_IOCTL_MODE_DESTROY_DUMB, &destroy);
}

#define RACE_FLIPS	400

static volatile bool racing;
static unsigned int race_accepted, race_refused;

/*
 * Head 1 to buffers never shown, TEST_ONLY, until the flips are done:
 * each check reserves two ranges.
 */
static void *race_test_only(void *arg __attribute__((unused)))
{
	const int sets[HEADS] = { KEEP, UNSHOWN };

	while (racing) {
		if (show(sets, DRM_MODE_ATOMIC_TEST_ONLY))
			race_refused++;
		else
			race_accepted++;
	}
	return NULL;
}

/*
 * Both heads show their first buffers, four of the seven bindings; head
 * 0 flips between its first and second buffers, which fit beside them.
 * Head 1's TEST_ONLY commits of two buffers never shown reserve two
 * ranges each, evicting the least recently used idle bindings: those
 * head 0 flips to next.  Every flip of head 0 fits once they end.
 */
static void test_only_races(void)
{
	const int flip[2][HEADS] = { { 1, KEEP }, { 0, KEEP } };
	const int first[HEADS] = { 0, 0 };
	unsigned int i, failed = 0;
	pthread_t thread;
	int ret, err = 0;

	ret = show(first, 0);
	kms_result(!ret, "both heads show their first buffers before the race%s%s",
		   ret ? ": " : "", ret ? strerror(-ret) : "");
	racing = true;
	if (pthread_create(&thread, NULL, race_test_only, NULL)) {
		kms_result(false, "race: thread");
		return;
	}
	for (i = 0; i < RACE_FLIPS; i++) {
		ret = show(flip[i % 2], 0);
		if (ret) {
			failed++;
			err = ret;
		}
	}
	racing = false;
	pthread_join(thread, NULL);
	kms_result(!failed && race_accepted + race_refused,
		   "%u flips of head 0 beside head 1's TEST_ONLY commits: %u failed%s%s # TEST_ONLY %u accepted, %u refused",
		   RACE_FLIPS, failed, err ? ", " : "",
		   err ? strerror(-err) : "", race_accepted, race_refused);
}

/* Once every commit ended, nothing stays reserved. */
static void nothing_reserved(void)
{
	static char text[4096];
	char *line;

	bindings(text, sizeof(text));
	line = strstr(text, "# reserved");
	kms_result(line && strstr(line, "# reserved 0 bindings 0 entries, 0 tentative"),
		   "no reservation outlives its commit: %s",
		   line ? line : "no reservation line");
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
	 * Seven bound, four shown: head 0's first buffers need the room of
	 * an idle binding, one of head 1's first two.  The TEST_ONLY
	 * evicts it in its reservation only, which it gives back: head 1's
	 * flip to its first two finds them bound.
	 */
	test_only_keeps_bindings("of head 0 to its first two buffers, "
				 "which needs an eviction", head0_first);
	predict("of head 1 to its first two buffers, "
		"which head 0's TEST_ONLY would have evicted", KEEP, 0, 0, 0);

	predict("nonblocking, of head 0 to its first two and head 1 to its "
		"second two buffers, eight in all", 0, 1,
		DRM_MODE_ATOMIC_NONBLOCK, -ENOSPC);
	predict("nonblocking, of head 0 to its first two buffers, six in all",
		0, KEEP, DRM_MODE_ATOMIC_NONBLOCK, 0);

	writeback_overflows();
	test_only_races();
	nothing_reserved();
	return kms_failures ? 1 : 0;
}
