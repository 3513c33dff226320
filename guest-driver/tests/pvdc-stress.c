// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-stress: random atomic requests against the pvdc driver.
 *
 *   pvdc-stress random [-j THREADS] [-n COUNT] [-s SEED] [DEVICE]
 *	THREADS threads (default 4) each send COUNT (default 300) random
 *	atomic requests on the shared file: random objects in random order,
 *	random properties with mostly plausible and sometimes garbage
 *	values, TEST_ONLY, NONBLOCK and ALLOW_MODESET mixed; framebuffers of
 *	RGB formats, YUYV, NV12 and P010 (odd-sized), the YCbCr ones with
 *	random COLOR_ENCODING and COLOR_RANGE; CRTC colour pipelines of
 *	random DEGAMMA_LUT, CTM and GAMMA_LUT blobs (LUTs of 2 to the
 *	largest size of entries, and some of sizes the device refuses;
 *	matrices with coefficients past what it represents); writeback
 *	connectors attached and detached, with random WRITEBACK_FB_IDs and
 *	out-fences (the fences are closed unread); every connector routed
 *	to a random CRTC with a mode or off at once (moves and swaps of
 *	connectors between heads, on a device with routing).  The kernel
 *	may refuse a request only with the errors of the atomic uAPI;
 *	enough of them must reach the device that the host can check it
 *	never refused one (QOM statistic x-commits-rejected).  At the end
 *	every head is off and the other properties are back to what they
 *	were (no colour pipeline).
 *
 *   pvdc-stress test-only [-n COUNT] [-s SEED] [DEVICE]
 *	Lights every head, holds a vblank reference on each (so no vblank
 *	interrupt is switched off meanwhile), prints "# ready", waits for
 *	SIGUSR1, sends COUNT random TEST_ONLY requests, accepted and refused
 *	ones, prints "# done" and waits for SIGTERM.  The host compares the
 *	device's x-mmio-writes statistic around the TEST_ONLY burst.
 */
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "pvdc-kms-util.h"

#define MAX_OBJECTS	128
#define MAX_PROPS	32
#define MAX_FBS		8
#define MAX_BLOBS	8
#define MAX_ERRNO	140
#define ARRAY_LEN(a)	(sizeof(a) / sizeof((a)[0]))

struct prop {
	uint32_t id;
	uint32_t flags;
	char name[DRM_PROP_NAME_LEN];
	uint64_t min, max;
	uint64_t initial;
	uint64_t values[32];
	int count_values;
};

struct object {
	uint32_t id, type;
	struct prop props[MAX_PROPS];
	int count_props;
};

static int fd;
static struct object objects[MAX_OBJECTS];
static int num_objects;
static uint32_t crtcs[8], num_crtcs;
static struct kms_buffer fbs[MAX_FBS];
static int num_fbs;
static uint32_t blobs[MAX_BLOBS];
static int num_blobs;
/* DEGAMMA_LUT and GAMMA_LUT blobs, CTM blobs. */
#define MAX_COLOR_BLOBS	8
static uint32_t luts[MAX_COLOR_BLOBS], ctms[MAX_COLOR_BLOBS];
static int num_luts, num_ctms;

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long accepted, accepted_test_only, accepted_real;
/* Real commits that set a colour property (the thread's last request). */
static unsigned long accepted_color;
static __thread bool request_has_color;
/* Real commits with a writeback job, and where the kernel puts its fence. */
static unsigned long accepted_writeback;
static __thread bool request_has_writeback;
static __thread int32_t writeback_fence;
static unsigned long refused[MAX_ERRNO + 1];
/*
 * The connectors that are not writeback ones, by index (connector c is
 * CRTC c's at reset), and whether any can go on another CRTC; real
 * commits that put one on a CRTC of another index.
 */
static int route_objects[8], num_route_objects;
static bool routing;
static unsigned long accepted_moves;
static __thread bool request_moves;

/* ------------------------------------------------------------------------ */
/* Discovery                                                                */
/* ------------------------------------------------------------------------ */

static void add_object(uint32_t id, uint32_t type)
{
	drmModeObjectProperties *props;
	struct object *o;
	uint32_t i;

	if (num_objects >= MAX_OBJECTS)
		return;
	props = drmModeObjectGetProperties(fd, id, type);
	if (!props)
		return;
	o = &objects[num_objects++];
	o->id = id;
	o->type = type;
	for (i = 0; i < props->count_props && o->count_props < MAX_PROPS; i++) {
		drmModePropertyRes *p = drmModeGetProperty(fd, props->props[i]);
		struct prop *q = &o->props[o->count_props];
		int k;

		if (!p)
			continue;
		q->id = p->prop_id;
		q->flags = p->flags;
		q->initial = props->prop_values[i];
		snprintf(q->name, sizeof(q->name), "%s", p->name);
		if (p->count_values >= 2) {
			q->min = p->values[0];
			q->max = p->values[1];
		}
		for (k = 0; k < p->count_enums && k < 32; k++)
			q->values[k] = p->enums[k].value;
		q->count_values = k;
		o->count_props++;
		drmModeFreeProperty(p);
	}
	drmModeFreeObjectProperties(props);
}

/*
 * LUTs of random entries: of the smallest and the largest sizes the CRTC
 * takes and a few between, and of one entry and of one more than the
 * largest, which it refuses; matrices of random coefficients, some far
 * past the device's range (it clamps), and the identity.  None without
 * the properties.
 */
static void color_blobs(drmModeRes *res)
{
	unsigned int seed = 4242, sizes[6], n, i, k;
	uint64_t max = 0;
	struct drm_color_lut *lut;
	struct drm_color_ctm ctm;

	if (!res || !res->count_crtcs ||
	    !kms_prop_value(fd, res->crtcs[0], DRM_MODE_OBJECT_CRTC,
			    "GAMMA_LUT_SIZE", &max) || max < 2)
		return;
	sizes[0] = 2;
	sizes[1] = 17;
	sizes[2] = 256;
	sizes[3] = max;
	sizes[4] = 1;
	sizes[5] = max + 1;
	lut = calloc(max + 1, sizeof(*lut));
	for (i = 0; i < ARRAY_LEN(sizes); i++) {
		n = sizes[i];
		for (k = 0; k < n; k++) {
			lut[k].red = rand_r(&seed);
			lut[k].green = rand_r(&seed);
			lut[k].blue = rand_r(&seed);
		}
		if (!drmModeCreatePropertyBlob(fd, lut, n * sizeof(*lut),
					       &luts[num_luts]))
			num_luts++;
	}
	free(lut);
	for (i = 0; i < 4; i++) {
		for (k = 0; k < 9; k++) {
			uint64_t mag = i == 0 ? (uint64_t)(k % 4 == 0) << 32 :
				       i == 3 ? (uint64_t)rand_r(&seed) << 24 :
				       (uint64_t)rand_r(&seed) << 2;

			/* S31.32 sign-magnitude */
			ctm.matrix[k] = mag | (uint64_t)(rand_r(&seed) & 1) << 63;
			if (i == 0)
				ctm.matrix[k] = mag;
		}
		if (!drmModeCreatePropertyBlob(fd, &ctm, sizeof(ctm),
					       &ctms[num_ctms]))
			num_ctms++;
	}
}

static void discover(void)
{
	static const struct {
		uint32_t w, h, format;
	} fb_shapes[MAX_FBS] = {
		{ 1024, 768, DRM_FORMAT_XRGB8888 },
		{ 1024, 768, DRM_FORMAT_XRGB8888 },
		{ 320, 180, DRM_FORMAT_ARGB8888 },
		{ 64, 64, DRM_FORMAT_ARGB8888 },
		{ 320, 200, DRM_FORMAT_RGB565 },
		{ 320, 180, DRM_FORMAT_YUYV },
		/* Overlays only; odd sizes have a partial Cb:Cr sample. */
		{ 320, 180, DRM_FORMAT_NV12 },
		{ 301, 181, DRM_FORMAT_P010 },
	};
	drmModeRes *res = drmModeGetResources(fd);
	drmModePlaneRes *pres = drmModeGetPlaneResources(fd);
	int i, k;

	if (!res || !pres) {
		printf("not ok resources: %s\n", strerror(errno));
		exit(1);
	}
	for (i = 0; i < res->count_crtcs && num_crtcs < 8; i++) {
		crtcs[num_crtcs++] = res->crtcs[i];
		add_object(res->crtcs[i], DRM_MODE_OBJECT_CRTC);
	}
	for (i = 0; i < (int)pres->count_planes; i++)
		add_object(pres->planes[i], DRM_MODE_OBJECT_PLANE);
	for (i = 0; i < res->count_connectors; i++) {
		drmModeConnector *c = drmModeGetConnector(fd, res->connectors[i]);
		drmModeEncoder *e = c && c->count_encoders ?
				    drmModeGetEncoder(fd, c->encoders[0]) : NULL;

		add_object(res->connectors[i], DRM_MODE_OBJECT_CONNECTOR);
		if (e && c->connector_type != DRM_MODE_CONNECTOR_WRITEBACK &&
		    num_route_objects < (int)ARRAY_LEN(route_objects)) {
			route_objects[num_route_objects++] = num_objects - 1;
			routing |= __builtin_popcount(e->possible_crtcs) > 1;
		}
		drmModeFreeEncoder(e);
		for (k = 0; c && k < c->count_modes && num_blobs < MAX_BLOBS;
		     k++) {
			/* The preferred mode and a couple of others. */
			if (k > 2 && !(c->modes[k].type & DRM_MODE_TYPE_PREFERRED))
				continue;
			if (drmModeCreatePropertyBlob(fd, &c->modes[k],
						      sizeof(c->modes[k]),
						      &blobs[num_blobs]) == 0)
				num_blobs++;
		}
		drmModeFreeConnector(c);
	}
	color_blobs(res);
	for (i = 0; i < MAX_FBS; i++) {
		if (kms_buffer_create(fd, &fbs[num_fbs], fb_shapes[i].w,
				      fb_shapes[i].h, fb_shapes[i].format))
			continue;
		kms_buffer_fill(&fbs[num_fbs], i);
		num_fbs++;
	}
	drmModeFreeResources(res);
	drmModeFreePlaneResources(pres);
	printf("# %d objects, %u crtcs, %d mode blobs, %d LUTs, %d CTMs, %d framebuffers\n",
	       num_objects, num_crtcs, num_blobs, num_luts, num_ctms, num_fbs);
}

/* ------------------------------------------------------------------------ */
/* Random requests                                                          */
/* ------------------------------------------------------------------------ */

static uint64_t rnd64(unsigned int *seed)
{
	return ((uint64_t)rand_r(seed) << 33) ^ ((uint64_t)rand_r(seed) << 11) ^
	       rand_r(seed);
}

static unsigned int rnd(unsigned int *seed, unsigned int n)
{
	return n ? (unsigned int)rand_r(seed) % n : 0;
}

static uint64_t plausible_size(unsigned int *seed)
{
	static const uint64_t sizes[] = { 64, 180, 200, 320, 640, 768, 1024 };

	if (rnd(seed, 4) == 0)
		return 1 + rnd(seed, 1200);
	return sizes[rnd(seed, ARRAY_LEN(sizes))];
}

static uint64_t random_value(unsigned int *seed, const struct object *o,
			     const struct prop *p)
{
	const char *n = p->name;

	/* Garbage now and then, of every kind. */
	if (rnd(seed, 20) == 0)
		return rnd(seed, 2) ? rnd64(seed) : (uint64_t)rand_r(seed);

	if (!strcmp(n, "FB_ID"))
		return rnd(seed, 6) ? fbs[rnd(seed, num_fbs)].fb_id : 0;
	if (!strcmp(n, "WRITEBACK_FB_ID")) {
		request_has_writeback = rnd(seed, 3) != 0;
		return request_has_writeback ? fbs[rnd(seed, 2)].fb_id : 0;
	}
	if (!strcmp(n, "CRTC_ID")) {
		/* Keep connectors and primaries mostly on their home CRTC. */
		if (rnd(seed, 6) == 0)
			return 0;
		return crtcs[rnd(seed, num_crtcs)];
	}
	if (!strcmp(n, "MODE_ID"))
		return rnd(seed, 6) ? blobs[rnd(seed, num_blobs)] : 0;
	if (!strcmp(n, "ACTIVE"))
		return rnd(seed, 4) != 0;
	if (!strcmp(n, "SRC_X") || !strcmp(n, "SRC_Y"))
		return rnd(seed, 2) ? 0 : (uint64_t)rnd(seed, 256) << 16 |
					  rnd(seed, 2) << 15;
	if (!strcmp(n, "SRC_W") || !strcmp(n, "SRC_H"))
		return plausible_size(seed) << 16;
	if (!strcmp(n, "CRTC_X") || !strcmp(n, "CRTC_Y"))
		return (uint64_t)(int64_t)((int)rnd(seed, 1300) - 200);
	if (!strcmp(n, "CRTC_W") || !strcmp(n, "CRTC_H"))
		return plausible_size(seed);
	if (!strcmp(n, "FB_DAMAGE_CLIPS"))
		return 0;
	/* Colour pipelines: mostly LUTs of sizes the CRTC takes. */
	if (!strcmp(n, "DEGAMMA_LUT") || !strcmp(n, "GAMMA_LUT")) {
		request_has_color = true;
		return rnd(seed, 3) == 0 || !num_luts ? 0 :
		       luts[rnd(seed, num_luts)];
	}
	if (!strcmp(n, "CTM")) {
		request_has_color = true;
		return rnd(seed, 3) == 0 || !num_ctms ? 0 :
		       ctms[rnd(seed, num_ctms)];
	}
	if (p->flags & DRM_MODE_PROP_BLOB)
		return rnd(seed, 2) ? 0 : blobs[rnd(seed, num_blobs)];
	if ((p->flags & (DRM_MODE_PROP_ENUM | DRM_MODE_PROP_BITMASK)) &&
	    p->count_values) {
		uint64_t v = p->values[rnd(seed, p->count_values)];

		/* Rotation: an angle, sometimes with a reflection. */
		if (p->flags & DRM_MODE_PROP_BITMASK)
			return (1ull << v) | (rnd(seed, 3) ? 0 :
				1ull << p->values[rnd(seed, p->count_values)]);
		return v;
	}
	if (p->flags & DRM_MODE_PROP_RANGE)
		return p->min + rnd64(seed) % (p->max - p->min + 1 ?: 1);
	if (p->flags & DRM_MODE_PROP_SIGNED_RANGE)
		return (uint64_t)((int64_t)rnd(seed, 400) - 200);
	(void)o;
	return rand_r(seed);
}

static void set_prop(drmModeAtomicReq *req, const struct object *o,
		     const char *name, uint64_t value)
{
	int k;

	for (k = 0; k < o->count_props; k++)
		if (!strcmp(o->props[k].name, name))
			drmModeAtomicAddProperty(req, o->id, o->props[k].id,
						 value);
}

/* A plane showing a random part of a framebuffer somewhere on a head. */
static void whole_plane(drmModeAtomicReq *req, unsigned int *seed,
			const struct object *o)
{
	const struct kms_buffer *fb = &fbs[rnd(seed, num_fbs)];
	uint32_t w = 1 + rnd(seed, fb->width), h = 1 + rnd(seed, fb->height);
	uint32_t x = rnd(seed, fb->width - w + 1);
	uint32_t y = rnd(seed, fb->height - h + 1);

	if (rnd(seed, 2)) {
		x = 0;
		y = 0;
		w = fb->width;
		h = fb->height;
	}
	set_prop(req, o, "FB_ID", fb->fb_id);
	set_prop(req, o, "CRTC_ID", crtcs[rnd(seed, num_crtcs)]);
	set_prop(req, o, "SRC_X", (uint64_t)x << 16);
	set_prop(req, o, "SRC_Y", (uint64_t)y << 16);
	set_prop(req, o, "SRC_W", (uint64_t)w << 16);
	set_prop(req, o, "SRC_H", (uint64_t)h << 16);
	set_prop(req, o, "CRTC_X", (uint64_t)(int64_t)((int)rnd(seed, 1100) - 50));
	set_prop(req, o, "CRTC_Y", (uint64_t)(int64_t)((int)rnd(seed, 800) - 50));
	if (rnd(seed, 2)) {
		w = 1 + rnd(seed, 2 * w);
		h = 1 + rnd(seed, 2 * h);
	}
	set_prop(req, o, "CRTC_W", w);
	set_prop(req, o, "CRTC_H", h);
	/* Overlays: any encoding and range (the properties' enum values). */
	if (fb->format == DRM_FORMAT_YUYV || kms_format_two_planes(fb->format)) {
		set_prop(req, o, "COLOR_ENCODING", rnd(seed, 3));
		set_prop(req, o, "COLOR_RANGE", rnd(seed, 2));
	}
}

/*
 * A writeback job (with an out-fence now and then) on a CRTC, on a
 * connector that has the properties.
 */
static void whole_writeback(drmModeAtomicReq *req, unsigned int *seed,
			    const struct object *o)
{
	int k;

	for (k = 0; k < o->count_props; k++)
		if (!strcmp(o->props[k].name, "WRITEBACK_FB_ID"))
			break;
	if (k == o->count_props)
		return;
	set_prop(req, o, "CRTC_ID", crtcs[rnd(seed, num_crtcs)]);
	set_prop(req, o, "WRITEBACK_FB_ID", fbs[rnd(seed, 2)].fb_id);
	if (rnd(seed, 2))
		set_prop(req, o, "WRITEBACK_OUT_FENCE_PTR",
			 (uintptr_t)&writeback_fence);
	request_has_writeback = true;
}

static const struct object *find_object(uint32_t id)
{
	int i;

	for (i = 0; i < num_objects; i++)
		if (objects[i].id == id)
			return &objects[i];
	return NULL;
}

/*
 * Every connector on a random CRTC of its own or off, every CRTC with a
 * connector on with a mode, the others off: a whole routing the kernel
 * can take, where a connector moved alone would leave its CRTC on without
 * one.  With routing, connectors move and swap between heads.
 */
static void whole_routing(drmModeAtomicReq *req, unsigned int *seed)
{
	uint32_t used = 0;
	unsigned int c, k;

	for (c = 0; c < (unsigned int)num_route_objects; c++) {
		uint32_t crtc = 0;

		k = rnd(seed, num_crtcs);
		if (rnd(seed, 4) && !(used & 1u << k)) {
			used |= 1u << k;
			crtc = crtcs[k];
			request_moves |= k != c;
		}
		set_prop(req, &objects[route_objects[c]], "CRTC_ID", crtc);
	}
	for (k = 0; k < num_crtcs; k++) {
		const struct object *crtc = find_object(crtcs[k]);
		bool on = used & 1u << k;

		if (!crtc)
			continue;
		set_prop(req, crtc, "MODE_ID",
			 on && num_blobs ? blobs[rnd(seed, num_blobs)] : 0);
		set_prop(req, crtc, "ACTIVE", on);
	}
}

static drmModeAtomicReq *random_request(unsigned int *seed)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	unsigned int count = 1 + rnd(seed, 4), i;

	/* Now and then a new routing, alone or with the rest. */
	if (num_route_objects && rnd(seed, 10) == 0) {
		whole_routing(req, seed);
		if (rnd(seed, 2))
			return req;
	}
	for (i = 0; i < count; i++) {
		const struct object *o = &objects[rnd(seed, num_objects)];
		unsigned int props = 1 + rnd(seed, o->count_props);
		unsigned int k;

		/* A garbage object id now and then. */
		if (rnd(seed, 50) == 0) {
			drmModeAtomicAddProperty(req, rand_r(seed),
						 o->props[0].id, 0);
			continue;
		}
		/* Mostly a whole plane, so that some requests make sense. */
		if (o->type == DRM_MODE_OBJECT_PLANE && rnd(seed, 3))
			whole_plane(req, seed, o);
		/* A writeback connector: often a whole job. */
		if (o->type == DRM_MODE_OBJECT_CONNECTOR && rnd(seed, 2))
			whole_writeback(req, seed, o);
		for (k = 0; k < props; k++) {
			const struct prop *p = &o->props[rnd(seed, o->count_props)];

			/* The kernel would write a fence fd at that address. */
			if (!strcmp(p->name, "OUT_FENCE_PTR"))
				continue;
			if (!strcmp(p->name, "WRITEBACK_OUT_FENCE_PTR")) {
				drmModeAtomicAddProperty(req, o->id, p->id,
							 rnd(seed, 2) ? 0 :
							 (uintptr_t)&writeback_fence);
				continue;
			}
			if ((p->flags & DRM_MODE_PROP_IMMUTABLE) &&
			    rnd(seed, 10))
				continue;
			drmModeAtomicAddProperty(req, o->id, p->id,
						 random_value(seed, o, p));
		}
	}
	return req;
}

static uint32_t random_flags(unsigned int *seed)
{
	uint32_t flags = 0;

	if (rnd(seed, 5) < 2)
		flags |= DRM_MODE_ATOMIC_TEST_ONLY;
	else if (rnd(seed, 2))
		flags |= DRM_MODE_ATOMIC_NONBLOCK;
	if (rnd(seed, 2))
		flags |= DRM_MODE_ATOMIC_ALLOW_MODESET;
	return flags;
}

static bool expected_error(int err)
{
	return err == EINVAL || err == ERANGE || err == ENOENT ||
	       err == EBUSY || err == ENOSPC;
}

static bool send_random(unsigned int *seed, uint32_t flags)
{
	drmModeAtomicReq *req;
	int ret, err;

	request_has_color = false;
	request_has_writeback = false;
	request_moves = false;
	writeback_fence = -1;
	req = random_request(seed);
	ret = drmModeAtomicCommit(fd, req, flags, NULL);
	err = ret ? errno : 0;
	drmModeAtomicFree(req);
	if (writeback_fence >= 0)
		close(writeback_fence);
	pthread_mutex_lock(&stats_lock);
	if (!ret) {
		accepted++;
		if (flags & DRM_MODE_ATOMIC_TEST_ONLY)
			accepted_test_only++;
		else
			accepted_real++;
		if (!(flags & DRM_MODE_ATOMIC_TEST_ONLY) && request_has_color)
			accepted_color++;
		if (!(flags & DRM_MODE_ATOMIC_TEST_ONLY) &&
		    request_has_writeback)
			accepted_writeback++;
		if (!(flags & DRM_MODE_ATOMIC_TEST_ONLY) && request_moves)
			accepted_moves++;
	} else {
		refused[err <= MAX_ERRNO ? err : 0]++;
	}
	pthread_mutex_unlock(&stats_lock);
	if (ret && !expected_error(err)) {
		printf("# unexpected error %s (flags 0x%x)\n", strerror(err),
		       flags);
		return false;
	}
	return true;
}

static void print_stats(const char *what)
{
	unsigned long total = accepted;
	int e;

	for (e = 0; e <= MAX_ERRNO; e++)
		total += refused[e];
	printf("# %s: %lu requests, %lu accepted (%lu test-only, %lu real)",
	       what, total, accepted, accepted_test_only, accepted_real);
	for (e = 0; e <= MAX_ERRNO; e++)
		if (refused[e])
			printf(", %lu %s", refused[e], e ? strerror(e) : "other");
	printf("\n");
}

/* Every plane and head off, after whatever is still pending. */
static int all_off(void)
{
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	int i, k, ret;

	for (i = 0; i < num_objects; i++) {
		const struct object *o = &objects[i];

		for (k = 0; k < o->count_props; k++) {
			const struct prop *p = &o->props[k];

			if (!strcmp(p->name, "CRTC_ID") ||
			    !strcmp(p->name, "FB_ID") ||
			    !strcmp(p->name, "MODE_ID") ||
			    !strcmp(p->name, "ACTIVE") ||
			    !strcmp(p->name, "DEGAMMA_LUT") ||
			    !strcmp(p->name, "CTM") ||
			    !strcmp(p->name, "GAMMA_LUT"))
				drmModeAtomicAddProperty(req, o->id, p->id, 0);
			else if (!(p->flags & (DRM_MODE_PROP_IMMUTABLE |
					       DRM_MODE_PROP_BLOB)) &&
				 strcmp(p->name, "OUT_FENCE_PTR") &&
				 strcmp(p->name, "DPMS") &&
				 strcmp(p->name, "IN_FENCE_FD"))
				/*
				 * Alpha, zpos, rotation... as found: legacy
				 * clients after us inherit them.
				 */
				drmModeAtomicAddProperty(req, o->id, p->id,
							 p->initial);
		}
	}
	ret = drmModeAtomicCommit(fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET, NULL);
	ret = ret ? -errno : 0;
	drmModeAtomicFree(req);
	return ret;
}

struct worker {
	pthread_t thread;
	unsigned int seed;
	unsigned int count;
	bool ok;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	unsigned int i;

	w->ok = true;
	for (i = 0; i < w->count; i++)
		if (!send_random(&w->seed, random_flags(&w->seed)))
			w->ok = false;
	return NULL;
}

/* Writeback connectors among the objects (the device has writeback). */
static bool has_writeback(void)
{
	int i, k;

	for (i = 0; i < num_objects; i++)
		for (k = 0; k < objects[i].count_props; k++)
			if (!strcmp(objects[i].props[k].name,
				    "WRITEBACK_FB_ID"))
				return true;
	return false;
}

static void run_random(unsigned int threads, unsigned int count,
		       unsigned int seed)
{
	struct worker workers[16];
	double start = kms_now();
	bool ok = true;
	unsigned int i;
	int ret;

	if (threads > 16)
		threads = 16;
	for (i = 0; i < threads; i++) {
		workers[i].seed = seed + i * 7919;
		workers[i].count = count;
		pthread_create(&workers[i].thread, NULL, worker_main,
			       &workers[i]);
	}
	for (i = 0; i < threads; i++) {
		pthread_join(workers[i].thread, NULL);
		ok &= workers[i].ok;
	}
	printf("# %u threads, %.1f s\n", threads, kms_now() - start);
	print_stats("random");
	kms_result(ok, "random-requests-refused-only-with-uapi-errors");
	kms_result(accepted_real >= 20 && accepted_test_only >= 20,
		   "random-requests-reach-the-device # %lu real, %lu test-only",
		   accepted_real, accepted_test_only);
	if (num_luts)
		kms_result(accepted_color >= 20,
			   "random-requests-change-colour-pipelines # %lu real",
			   accepted_color);
	if (has_writeback())
		kms_result(accepted_writeback >= 1,
			   "random-requests-write-back # %lu real",
			   accepted_writeback);
	if (routing)
		kms_result(accepted_moves >= 20,
			   "random-requests-move-connectors-between-heads # %lu real",
			   accepted_moves);
	ret = all_off();
	kms_result(!ret, "all-off-after-random-requests%s%s",
		   ret ? ": " : "", ret ? strerror(-ret) : "");
}

/* ------------------------------------------------------------------------ */
/* TEST_ONLY burst                                                          */
/* ------------------------------------------------------------------------ */

static void add(drmModeAtomicReq *req, uint32_t obj, uint32_t type,
		const char *name, uint64_t value)
{
	drmModeAtomicAddProperty(req, obj, kms_prop_id(fd, obj, type, name),
				 value);
}

/* Every connected head on, its primary plane showing a framebuffer. */
static int light_every_head(void)
{
	drmModeRes *res = drmModeGetResources(fd);
	drmModeAtomicReq *req = drmModeAtomicAlloc();
	int i, ret, lit = 0;

	for (i = 0; res && i < res->count_connectors && lit < (int)num_crtcs;
	     i++) {
		drmModeConnector *c = drmModeGetConnector(fd, res->connectors[i]);
		drmModeModeInfo mode;
		uint32_t crtc = crtcs[lit], blob, plane = 0, fb = 0;
		drmModePlaneRes *pres;
		uint32_t k;

		if (!c || c->connector_type == DRM_MODE_CONNECTOR_WRITEBACK ||
		    kms_connector_mode(c, &mode) ||
		    drmModeCreatePropertyBlob(fd, &mode, sizeof(mode), &blob)) {
			drmModeFreeConnector(c);
			continue;
		}
		pres = drmModeGetPlaneResources(fd);
		for (k = 0; pres && k < pres->count_planes && !plane; k++) {
			drmModePlane *p = drmModeGetPlane(fd, pres->planes[k]);
			uint64_t type = 0;

			kms_prop_value(fd, pres->planes[k],
				       DRM_MODE_OBJECT_PLANE, "type", &type);
			if (p && type == DRM_PLANE_TYPE_PRIMARY &&
			    (p->possible_crtcs & (1u << lit)))
				plane = p->plane_id;
			drmModeFreePlane(p);
		}
		drmModeFreePlaneResources(pres);
		fb = fbs[lit % 2].fb_id;
		add(req, crtc, DRM_MODE_OBJECT_CRTC, "MODE_ID", blob);
		add(req, crtc, DRM_MODE_OBJECT_CRTC, "ACTIVE", 1);
		add(req, c->connector_id, DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID",
		    crtc);
		add(req, plane, DRM_MODE_OBJECT_PLANE, "FB_ID", fb);
		add(req, plane, DRM_MODE_OBJECT_PLANE, "CRTC_ID", crtc);
		add(req, plane, DRM_MODE_OBJECT_PLANE, "SRC_X", 0);
		add(req, plane, DRM_MODE_OBJECT_PLANE, "SRC_Y", 0);
		add(req, plane, DRM_MODE_OBJECT_PLANE, "SRC_W",
		    (uint64_t)mode.hdisplay << 16);
		add(req, plane, DRM_MODE_OBJECT_PLANE, "SRC_H",
		    (uint64_t)mode.vdisplay << 16);
		add(req, plane, DRM_MODE_OBJECT_PLANE, "CRTC_X", 0);
		add(req, plane, DRM_MODE_OBJECT_PLANE, "CRTC_Y", 0);
		add(req, plane, DRM_MODE_OBJECT_PLANE, "CRTC_W", mode.hdisplay);
		add(req, plane, DRM_MODE_OBJECT_PLANE, "CRTC_H", mode.vdisplay);
		lit++;
		drmModeFreeConnector(c);
	}
	drmModeFreeResources(res);
	ret = drmModeAtomicCommit(fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET, NULL);
	ret = ret ? -errno : lit;
	drmModeAtomicFree(req);
	return ret;
}

static void run_test_only(unsigned int count, unsigned int seed)
{
	sigset_t set;
	unsigned int i, held = 0;
	bool ok = true;
	int sig, lit;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigprocmask(SIG_BLOCK, &set, NULL);

	lit = light_every_head();
	kms_result(lit > 0, "test-only-heads-lit # %d", lit);
	/*
	 * An event far ahead holds a vblank reference on every head, so the
	 * core's vblank-off timer cannot switch an interrupt off (a register
	 * write) during the burst.
	 */
	for (i = 0; i < (unsigned int)(lit > 0 ? lit : 0); i++)
		if (!drmCrtcQueueSequence(fd, crtcs[i],
					  DRM_CRTC_SEQUENCE_RELATIVE,
					  1000000, NULL, i))
			held++;
	kms_result(held == (unsigned int)lit, "test-only-vblank-held-on-every-head");
	printf("# ready\n");
	fflush(stdout);
	sigwait(&set, &sig);

	for (i = 0; i < count; i++)
		if (!send_random(&seed, DRM_MODE_ATOMIC_TEST_ONLY |
				 (rnd(&seed, 2) ?
				  DRM_MODE_ATOMIC_ALLOW_MODESET : 0)))
			ok = false;
	print_stats("test-only");
	kms_result(ok, "test-only-refused-only-with-uapi-errors");
	kms_result(accepted_test_only >= count / 50 &&
		   accepted_test_only <= count - count / 50,
		   "test-only-requests-both-accepted-and-refused # %lu of %u accepted",
		   accepted_test_only, count);
	printf("# done\n");
	fflush(stdout);
	if (sig == SIGUSR1)
		sigwait(&set, &sig);
}

int main(int argc, char **argv)
{
	unsigned int threads = 4, count = 300, seed = 1;
	const struct kms_option opts[] = {
		{ 'j', KMS_OPTION_UINT, &threads, "THREADS" },
		{ 'n', KMS_OPTION_UINT, &count, "COUNT" },
		{ 's', KMS_OPTION_UINT, &seed, "SEED" },
		{ 0 }
	};
	const char *mode, *path;

	if (argc < 2) {
		fprintf(stderr,
			"usage: %s random|test-only [-j THREADS] [-n COUNT] [-s SEED] [DEVICE]\n",
			argv[0]);
		return 2;
	}
	mode = argv[1];
	path = kms_operand(argc, argv,
			   kms_options(argc, argv, 2, opts, "[DEVICE]"),
			   KMS_CARD);

	fd = kms_open_atomic(path);
	/* Writeback connectors too, where the device has them. */
	drmSetClientCap(fd, DRM_CLIENT_CAP_WRITEBACK_CONNECTORS, 1);
	discover();
	if (!num_objects || !num_fbs || !num_blobs) {
		printf("not ok nothing to commit\n");
		return 1;
	}
	printf("# seed %u\n", seed);

	if (!strcmp(mode, "random"))
		run_random(threads, count, seed);
	else if (!strcmp(mode, "test-only"))
		run_test_only(count, seed);
	else
		return 2;

	close(fd);
	return kms_failures ? 1 : 0;
}
