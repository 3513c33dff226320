// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-demo: what the display controller is for, on screen.
 *
 *   head 0  a desktop on the primary plane, a "video" on an overlay that
 *           moves and scales, a translucent ARGB8888 panel with per-pixel
 *           alpha, and a cursor plane following a path;
 *   head 1  the same video letterboxed on black with no primary plane at
 *           all, only an overlay scaled to fit.
 *
 * Everything goes through the atomic uAPI: one nonblocking commit per head
 * per page-flip event, double-buffered video frames, the achieved frame rate
 * drawn into the frames.  Before the first commit the whole configuration is
 * checked with TEST_ONLY; what the driver refuses is dropped step by step
 * (scaling, alpha, zpos, planes, the second head) and each drop is printed,
 * so the program also runs on a one-plane, one-head driver such as bochs.
 *
 * Usage: pvdc-demo [SECONDS [DEVICE]]; runs until SIGINT/SIGTERM when
 * SECONDS is absent or 0.
 */
#include <poll.h>
#include <signal.h>
#include <stddef.h>

#include "pvdc-kms-util.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_HEADS	2
#define VIDEO_W		320
#define VIDEO_H		180
#define PANEL_W		360
#define PANEL_H		150
#define CURSOR_SIZE	64
#define FPS_PERIOD_NS	2000000000ll
/* A head whose flip event does not come in this time is kicked again. */
#define EVENT_TIMEOUT_NS 1000000000ll
#define MAX_COMMIT_FAILURES 5
#define PI_F		3.14159265f

static volatile sig_atomic_t stop_requested;

/* ------------------------------------------------------------------------ */
/* Drawing: 32-bit pixels, everything clipped to the buffer                 */
/* ------------------------------------------------------------------------ */

struct rect {
	int x, y, w, h;
};

struct canvas {
	uint8_t *base;
	uint32_t pitch;
	int w, h;
};

static uint32_t rgb(unsigned int r, unsigned int g, unsigned int b)
{
	return 0xff000000u | (r & 0xff) << 16 | (g & 0xff) << 8 | (b & 0xff);
}

/* Premultiplied ARGB: colour channels already scaled by alpha. */
static uint32_t argb(unsigned int a, unsigned int r, unsigned int g,
		     unsigned int b)
{
	return (a & 0xff) << 24 | (r * a / 255) << 16 | (g * a / 255) << 8 |
	       (b * a / 255);
}

static void fill_rect(const struct canvas *c, int x, int y, int w, int h,
		      uint32_t colour)
{
	int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
	int x1 = x + w > c->w ? c->w : x + w;
	int y1 = y + h > c->h ? c->h : y + h;

	for (int j = y0; j < y1; j++) {
		uint32_t *row = (uint32_t *)(c->base + (size_t)j * c->pitch);

		for (int i = x0; i < x1; i++)
			row[i] = colour;
	}
}

/* Sine without libm: a parabola refined once, error below 0.1 %. */
static float fsin(float x)
{
	float y;

	x -= 2 * PI_F * (float)(int)(x / (2 * PI_F));
	if (x > PI_F)
		x -= 2 * PI_F;
	else if (x < -PI_F)
		x += 2 * PI_F;
	y = 4 / PI_F * x - 4 / (PI_F * PI_F) * x * (x < 0 ? -x : x);
	return 0.225f * (y * (y < 0 ? -y : y) - y) + y;
}

static float fcos(float x)
{
	return fsin(x + PI_F / 2);
}

/* A 5x7 font with just the characters the demo writes. */
static const struct glyph {
	char c;
	uint8_t rows[7];
} font[] = {
	{ '0', { 0x0e, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0e } },
	{ '1', { 0x04, 0x0c, 0x04, 0x04, 0x04, 0x04, 0x0e } },
	{ '2', { 0x0e, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1f } },
	{ '3', { 0x1f, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0e } },
	{ '4', { 0x02, 0x06, 0x0a, 0x12, 0x1f, 0x02, 0x02 } },
	{ '5', { 0x1f, 0x10, 0x1e, 0x01, 0x01, 0x11, 0x0e } },
	{ '6', { 0x06, 0x08, 0x10, 0x1e, 0x11, 0x11, 0x0e } },
	{ '7', { 0x1f, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08 } },
	{ '8', { 0x0e, 0x11, 0x11, 0x0e, 0x11, 0x11, 0x0e } },
	{ '9', { 0x0e, 0x11, 0x11, 0x0f, 0x01, 0x02, 0x0c } },
	{ '.', { 0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x0c } },
	{ ':', { 0x00, 0x0c, 0x0c, 0x00, 0x0c, 0x0c, 0x00 } },
	{ '-', { 0x00, 0x00, 0x00, 0x1f, 0x00, 0x00, 0x00 } },
	{ '%', { 0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03 } },
	{ '@', { 0x0e, 0x11, 0x17, 0x15, 0x17, 0x10, 0x0f } },
	{ 'A', { 0x0e, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11 } },
	{ 'B', { 0x1e, 0x11, 0x11, 0x1e, 0x11, 0x11, 0x1e } },
	{ 'C', { 0x0e, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0e } },
	{ 'D', { 0x1c, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1c } },
	{ 'E', { 0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x1f } },
	{ 'F', { 0x1f, 0x10, 0x10, 0x1e, 0x10, 0x10, 0x10 } },
	{ 'G', { 0x0e, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0f } },
	{ 'H', { 0x11, 0x11, 0x11, 0x1f, 0x11, 0x11, 0x11 } },
	{ 'I', { 0x0e, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0e } },
	{ 'K', { 0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11 } },
	{ 'L', { 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1f } },
	{ 'M', { 0x11, 0x1b, 0x15, 0x15, 0x11, 0x11, 0x11 } },
	{ 'N', { 0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11 } },
	{ 'O', { 0x0e, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e } },
	{ 'P', { 0x1e, 0x11, 0x11, 0x1e, 0x10, 0x10, 0x10 } },
	{ 'R', { 0x1e, 0x11, 0x11, 0x1e, 0x14, 0x12, 0x11 } },
	{ 'S', { 0x0f, 0x10, 0x10, 0x0e, 0x01, 0x01, 0x1e } },
	{ 'T', { 0x1f, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04 } },
	{ 'U', { 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0e } },
	{ 'V', { 0x11, 0x11, 0x11, 0x11, 0x11, 0x0a, 0x04 } },
	{ 'W', { 0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0a } },
	{ 'X', { 0x11, 0x11, 0x0a, 0x04, 0x0a, 0x11, 0x11 } },
	{ 'Y', { 0x11, 0x11, 0x0a, 0x04, 0x04, 0x04, 0x04 } },
};

static void draw_text(const struct canvas *c, int x, int y, int scale,
		      uint32_t colour, const char *text)
{
	for (; *text; text++, x += 6 * scale) {
		const struct glyph *g = NULL;

		for (size_t i = 0; i < ARRAY_SIZE(font); i++)
			if (font[i].c == *text)
				g = &font[i];
		if (!g)
			continue;
		for (int row = 0; row < 7; row++)
			for (int col = 0; col < 5; col++)
				if (g->rows[row] & (0x10 >> col))
					fill_rect(c, x + col * scale,
						  y + row * scale, scale,
						  scale, colour);
	}
}

static int text_width(const char *text, int scale)
{
	return (int)strlen(text) * 6 * scale - scale;
}

/* A window: frame, title bar with its buttons, then the client area. */
static void draw_window(const struct canvas *c, int x, int y, int w, int h,
			uint32_t title_colour, const char *title)
{
	fill_rect(c, x + 6, y + 6, w, h, rgb(10, 20, 40));	/* shadow */
	fill_rect(c, x, y, w, h, rgb(200, 200, 205));
	fill_rect(c, x + 2, y + 2, w - 4, 20, title_colour);
	draw_text(c, x + 8, y + 6, 2, rgb(255, 255, 255), title);
	for (int i = 0; i < 3; i++)
		fill_rect(c, x + w - 20 - i * 18, y + 5, 14, 14,
			  i ? rgb(220, 220, 220) : rgb(230, 80, 70));
	fill_rect(c, x + 2, y + 24, w - 4, h - 26, rgb(245, 245, 240));
}

static void draw_desktop(const struct canvas *c, const struct rect *player)
{
	int w = c->w, h = c->h;

	for (int y = 0; y < h; y++)
		fill_rect(c, 0, y, w, 1,
			  rgb(20 + 30 * y / h, 50 + 90 * y / h,
			      110 + 110 * y / h));

	/* A terminal, ruled with "text" lines of varying lengths. */
	draw_window(c, w / 20, h / 12, w * 2 / 5, h * 2 / 5,
		    rgb(60, 60, 70), "TERMINAL");
	for (int i = 0, y = h / 12 + 32; y < h / 12 + h * 2 / 5 - 12;
	     i++, y += 12)
		fill_rect(c, w / 20 + 10, y, (w * 2 / 5 - 30) *
			  (3 + (i * 7) % 5) / 8, 6, rgb(40, 140, 60));

	/* The player window, when the video plays on the primary plane. */
	if (player)
		draw_window(c, player->x - 2, player->y - 24, player->w + 4,
			    player->h + 26, rgb(40, 90, 170), "VIDEO");

	/* A document with a chart. */
	draw_window(c, w / 8, h / 2 + 20, w / 3, h / 3, rgb(150, 60, 110),
		    "PVDC DEMO");
	for (int i = 0; i < 8; i++) {
		int bar = (h / 3 - 60) * (2 + (i * 5) % 7) / 8;

		fill_rect(c, w / 8 + 16 + i * (w / 3 - 32) / 8,
			  h / 2 + 20 + h / 3 - 12 - bar, (w / 3 - 32) / 10,
			  bar, rgb(60 + i * 20, 120, 200 - i * 15));
	}

	/* Taskbar. */
	fill_rect(c, 0, h - 28, w, 28, rgb(30, 30, 38));
	fill_rect(c, 4, h - 24, 80, 20, rgb(60, 120, 200));
	draw_text(c, 14, h - 21, 2, rgb(255, 255, 255), "PVDC");
}

/*
 * One video frame at time t: scrolling colour bars, a grey ramp, a ball
 * that bounces around, the frame number and the head's frame rate.
 */
static void draw_video(const struct canvas *c, float t, unsigned int frame,
		       const char *fps)
{
	static const uint32_t bars[8] = {
		0xffc0c0c0, 0xffc0c000, 0xff00c0c0, 0xff00c000,
		0xffc000c0, 0xffc00000, 0xff0000c0, 0xff101010,
	};
	int w = c->w, h = c->h, band = h * 3 / 4;
	int shift = (int)(t * 60) % w;
	int cx = w / 2 + (int)(w * 0.35f * fsin(t * 1.3f));
	int cy = band / 2 + (int)(band * 0.3f * fcos(t * 2.1f));
	int r = h / 7;
	char text[32];

	for (int y = 0; y < h; y++) {
		uint32_t *row = (uint32_t *)(c->base + (size_t)y * c->pitch);

		for (int x = 0; x < w; x++) {
			int dx = x - cx, dy = y - cy;
			uint32_t p;

			if (y >= band)
				p = rgb(255 * x / w, 255 * x / w, 255 * x / w);
			else
				p = bars[((x + shift) % w) * 8 / w];
			if (dx * dx + dy * dy < r * r)
				p = dx * dx + dy * dy < r * r / 3 ?
				    rgb(255, 230, 120) : rgb(240, 120, 30);
			row[x] = p;
		}
	}
	snprintf(text, sizeof(text), "%u", frame);
	fill_rect(c, 0, 0, text_width(text, 2) + 8, 22, rgb(0, 0, 0));
	draw_text(c, 4, 4, 2, rgb(255, 255, 255), text);
	fill_rect(c, w - text_width(fps, 2) - 8, 0, text_width(fps, 2) + 8,
		  22, rgb(0, 0, 0));
	draw_text(c, w - text_width(fps, 2) - 4, 4, 2, rgb(120, 255, 120),
		  fps);
}

static void draw_panel(const struct canvas *c)
{
	int radius = 16;

	for (int y = 0; y < c->h; y++) {
		uint32_t *row = (uint32_t *)(c->base + (size_t)y * c->pitch);

		for (int x = 0; x < c->w; x++) {
			/* Rounded corners: fully transparent outside. */
			int dx = x < radius ? radius - x :
				 x >= c->w - radius ? x - (c->w - radius - 1) : 0;
			int dy = y < radius ? radius - y :
				 y >= c->h - radius ? y - (c->h - radius - 1) : 0;
			int d2 = dx * dx + dy * dy;

			if (d2 > radius * radius)
				row[x] = 0;
			else if (d2 > (radius - 2) * (radius - 2) ||
				 (!dx && (x < 2 || x >= c->w - 2)) ||
				 (!dy && (y < 2 || y >= c->h - 2)))
				row[x] = argb(230, 200, 220, 255);
			else
				row[x] = argb(96 + 80 * y / c->h, 10, 20, 60);
		}
	}
	draw_text(c, 20, 24, 3, argb(255, 255, 255, 255), "TRANSLUCENT");
	draw_text(c, 20, 60, 2, argb(255, 180, 220, 255),
		  "ARGB8888 - PER-PIXEL ALPHA");
	for (int i = 0; i < 10; i++)
		fill_rect(c, 20 + i * 32, 96, 28, 28,
			  argb(25 * (i + 1), 255, 200, 60));
}

static void draw_cursor(const struct canvas *c)
{
	/* An arrow: outline, then fill, by rows of growing width. */
	fill_rect(c, 0, 0, c->w, c->h, 0);
	for (int y = 0; y < 34 && y < c->h; y++) {
		int len = y < 24 ? y / 2 + 1 : 0;

		fill_rect(c, 0, y, len + 2, 1, argb(255, 0, 0, 0));
		if (len > 1)
			fill_rect(c, 1, y, len, 1, argb(255, 255, 255, 255));
	}
	for (int y = 0; y < 14; y++) {
		fill_rect(c, 6 + y / 3, 22 + y, 5, 1, argb(255, 0, 0, 0));
		fill_rect(c, 7 + y / 3, 22 + y, 3, 1, argb(255, 255, 255, 255));
	}
}

/* ------------------------------------------------------------------------ */
/* KMS objects                                                              */
/* ------------------------------------------------------------------------ */

struct buffer {
	uint32_t handle, fb_id, fb_id_opaque;
	uint32_t width, height, pitch;
	uint64_t size;
	uint8_t *map;
};

struct plane {
	uint32_t id, possible_crtcs, crtc_id;
	int type;
	bool used;
	drmModePlanePtr info;
	/* property ids (0: absent) */
	uint32_t fb_id, crtc, src_x, src_y, src_w, src_h;
	uint32_t crtc_x, crtc_y, crtc_w, crtc_h;
	uint32_t zpos, alpha, blend, hotspot_x, hotspot_y;
	uint64_t zpos_min, zpos_max, blend_premulti;
	bool zpos_mutable;
};

struct head {
	int index, crtc_index;
	uint32_t crtc_id, conn_id, mode_blob;
	uint32_t prop_mode_id, prop_active, prop_conn_crtc;
	drmModeModeInfo mode;
	struct plane *primary, *video, *panel, *cursor;
	struct buffer desk[2], vid[2], panel_buf, cursor_buf;
	int desk_back, vid_back;
	struct rect sw_video;		/* video's place on the primary */
	bool pending, vblank_events;
	unsigned int last_sequence;
	int failures;
	int64_t commit_ns, next_commit_ns, period_ns;
	unsigned int frame, flips, flips_window, flips_print;
	char fps[24];
};

/*
 * What the configuration may give up when the driver refuses it, in the
 * order it is given up; each is printed when dropped.
 */
enum degrade {
	D_H1_PRIMARY,		/* head 1 needs a primary plane under the video */
	D_H0_VIDEO_SCALE,
	D_H1_VIDEO_SCALE,
	D_PANEL_ALPHA,
	D_ZPOS,
	D_CURSOR,
	D_PANEL,
	D_H0_VIDEO,
	D_H1_VIDEO,
	D_H1,
	D_COUNT
};

static const char *const degrade_text[D_COUNT] = {
	[D_H1_PRIMARY] = "head 1 without a primary plane (black primary used)",
	[D_H0_VIDEO_SCALE] = "head 0 video overlay scaling (shown 1:1)",
	[D_H1_VIDEO_SCALE] = "head 1 video scaled to fit (shown 1:1)",
	[D_PANEL_ALPHA] = "head 0 panel per-pixel alpha (opaque XRGB8888)",
	[D_ZPOS] = "zpos (planes stacked in the driver's order)",
	[D_CURSOR] = "head 0 cursor plane",
	[D_PANEL] = "head 0 translucent panel overlay",
	[D_H0_VIDEO] = "head 0 video overlay (video drawn on the primary)",
	[D_H1_VIDEO] = "head 1 video overlay (video drawn on the primary)",
	[D_H1] = "head 1",
};

struct demo {
	int fd;
	int nheads;
	struct head heads[MAX_HEADS];
	struct plane *planes;
	int nplanes;
	bool degraded[D_COUNT];
	bool forced[D_COUNT];	/* given up before testing: nothing to try */
	int64_t start_ns;
};

static void force(struct demo *d, enum degrade what, const char *why)
{
	if (d->degraded[what])
		return;
	d->degraded[what] = d->forced[what] = true;
	printf("pvdc-demo: dropped: %s: %s\n", degrade_text[what], why);
}

/* The plane properties the demo sets, by name, and where it keeps their ids. */
static const struct {
	const char *name;
	size_t offset;
} plane_props[] = {
	{ "FB_ID", offsetof(struct plane, fb_id) },
	{ "CRTC_ID", offsetof(struct plane, crtc) },
	{ "SRC_X", offsetof(struct plane, src_x) },
	{ "SRC_Y", offsetof(struct plane, src_y) },
	{ "SRC_W", offsetof(struct plane, src_w) },
	{ "SRC_H", offsetof(struct plane, src_h) },
	{ "CRTC_X", offsetof(struct plane, crtc_x) },
	{ "CRTC_Y", offsetof(struct plane, crtc_y) },
	{ "CRTC_W", offsetof(struct plane, crtc_w) },
	{ "CRTC_H", offsetof(struct plane, crtc_h) },
	{ "alpha", offsetof(struct plane, alpha) },
	{ "HOTSPOT_X", offsetof(struct plane, hotspot_x) },
	{ "HOTSPOT_Y", offsetof(struct plane, hotspot_y) },
};

static int load_planes(struct demo *d)
{
	drmModePlaneResPtr res = drmModeGetPlaneResources(d->fd);

	if (!res) {
		fprintf(stderr, "pvdc-demo: drmModeGetPlaneResources: %m\n");
		return -1;
	}
	d->nplanes = (int)res->count_planes;
	d->planes = calloc(res->count_planes, sizeof(*d->planes));
	for (int i = 0; i < d->nplanes; i++) {
		struct plane *p = &d->planes[i];
		uint32_t obj = res->planes[i], t = DRM_MODE_OBJECT_PLANE;
		drmModePropertyPtr prop = NULL;
		uint64_t type;

		p->id = obj;
		p->info = drmModeGetPlane(d->fd, obj);
		p->possible_crtcs = p->info ? p->info->possible_crtcs : 0;
		p->crtc_id = p->info ? p->info->crtc_id : 0;
		p->type = kms_prop_value(d->fd, obj, t, "type", &type) ?
			  (int)type : 0;
		for (size_t n = 0; n < ARRAY_SIZE(plane_props); n++)
			*(uint32_t *)((char *)p + plane_props[n].offset) =
				kms_prop_find(d->fd, obj, t,
					      plane_props[n].name, NULL);
		p->zpos = kms_prop_find(d->fd, obj, t, "zpos", &prop);
		if (prop) {
			p->zpos_mutable = !(prop->flags & DRM_MODE_PROP_IMMUTABLE) &&
					  (prop->flags & DRM_MODE_PROP_RANGE) &&
					  prop->count_values == 2;
			if (p->zpos_mutable) {
				p->zpos_min = prop->values[0];
				p->zpos_max = prop->values[1];
			}
			drmModeFreeProperty(prop);
			prop = NULL;
		}
		p->blend = kms_prop_find(d->fd, obj, t, "pixel blend mode", &prop);
		if (prop) {
			p->blend = 0;
			for (int e = 0; e < prop->count_enums; e++)
				if (!strcmp(prop->enums[e].name,
					    "Pre-multiplied")) {
					p->blend = prop->prop_id;
					p->blend_premulti = prop->enums[e].value;
				}
			drmModeFreeProperty(prop);
		}
	}
	drmModeFreePlaneResources(res);
	return 0;
}

static bool plane_has_format(const struct plane *p, uint32_t fourcc)
{
	for (uint32_t i = 0; p->info && i < p->info->count_formats; i++)
		if (p->info->formats[i] == fourcc)
			return true;
	return false;
}

static struct plane *take_plane(struct demo *d, const struct head *h,
				int type, uint32_t fourcc)
{
	for (int i = 0; i < d->nplanes; i++) {
		struct plane *p = &d->planes[i];

		if (!p->used && p->type == type && p->fb_id && p->crtc &&
		    (p->possible_crtcs & (1u << h->crtc_index)) &&
		    plane_has_format(p, fourcc)) {
			p->used = true;
			return p;
		}
	}
	return NULL;
}

/* Connected connectors, in order, each with a CRTC of its own. */
static int find_heads(struct demo *d)
{
	drmModeResPtr res = drmModeGetResources(d->fd);
	uint32_t crtcs_taken = 0;

	if (!res) {
		fprintf(stderr, "pvdc-demo: drmModeGetResources: %m\n");
		return -1;
	}
	for (int c = 0; c < res->count_connectors && d->nheads < MAX_HEADS;
	     c++) {
		drmModeConnectorPtr conn =
			drmModeGetConnector(d->fd, res->connectors[c]);
		struct head *h = &d->heads[d->nheads];
		int mode = -1, crtc = -1;

		if (!conn)
			continue;
		for (int m = 0; conn->connection == DRM_MODE_CONNECTED &&
				m < conn->count_modes; m++) {
			if (conn->modes[m].type & DRM_MODE_TYPE_PREFERRED) {
				mode = m;
				break;
			}
			if (mode < 0)
				mode = m;
		}
		for (int e = 0; mode >= 0 && e < conn->count_encoders &&
				crtc < 0; e++) {
			drmModeEncoderPtr enc =
				drmModeGetEncoder(d->fd, conn->encoders[e]);

			for (int i = 0; enc && i < res->count_crtcs; i++)
				if ((enc->possible_crtcs & (1u << i)) &&
				    !(crtcs_taken & (1u << i))) {
					crtc = i;
					break;
				}
			drmModeFreeEncoder(enc);
		}
		if (crtc >= 0) {
			crtcs_taken |= 1u << crtc;
			h->index = d->nheads++;
			h->crtc_index = crtc;
			h->crtc_id = res->crtcs[crtc];
			h->conn_id = conn->connector_id;
			h->mode = conn->modes[mode];
		}
		drmModeFreeConnector(conn);
	}
	drmModeFreeResources(res);
	if (!d->nheads) {
		fprintf(stderr,
			"pvdc-demo: no connected connector with a mode and a free CRTC\n");
		return -1;
	}
	return 0;
}

static int create_buffer(int fd, struct buffer *b, uint32_t w, uint32_t h,
			 uint32_t fourcc, uint32_t opaque_fourcc)
{
	uint32_t handles[4] = { 0 }, pitches[4] = { 0 }, offsets[4] = { 0 };
	uint64_t offset;

	if (drmModeCreateDumbBuffer(fd, w, h, 32, 0, &b->handle, &b->pitch,
				    &b->size)) {
		fprintf(stderr, "pvdc-demo: dumb buffer %ux%u: %m\n", w, h);
		return -1;
	}
	b->width = w;
	b->height = h;
	handles[0] = b->handle;
	pitches[0] = b->pitch;
	if (drmModeAddFB2(fd, w, h, fourcc, handles, pitches, offsets,
			  &b->fb_id, 0)) {
		fprintf(stderr, "pvdc-demo: framebuffer %ux%u: %m\n", w, h);
		return -1;
	}
	/* The same pixels without their alpha, for the no-alpha fallback. */
	if (opaque_fourcc && drmModeAddFB2(fd, w, h, opaque_fourcc, handles,
					   pitches, offsets,
					   &b->fb_id_opaque, 0))
		b->fb_id_opaque = 0;
	if (drmModeMapDumbBuffer(fd, b->handle, &offset)) {
		fprintf(stderr, "pvdc-demo: map dumb buffer: %m\n");
		return -1;
	}
	b->map = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		      (off_t)offset);
	if (b->map == MAP_FAILED) {
		fprintf(stderr, "pvdc-demo: mmap dumb buffer: %m\n");
		b->map = NULL;
		return -1;
	}
	memset(b->map, 0, b->size);
	return 0;
}

static struct canvas canvas_of(const struct buffer *b)
{
	return (struct canvas){ b->map, b->pitch, (int)b->width,
				(int)b->height };
}

static struct canvas sub_canvas(const struct buffer *b, struct rect r)
{
	return (struct canvas){ b->map + (size_t)r.y * b->pitch + r.x * 4,
				b->pitch, r.w, r.h };
}

/* ------------------------------------------------------------------------ */
/* Commits                                                                  */
/* ------------------------------------------------------------------------ */

static void add(drmModeAtomicReqPtr req, uint32_t obj, uint32_t prop,
		uint64_t value)
{
	if (prop)
		drmModeAtomicAddProperty(req, obj, prop, value);
}

static void add_plane(drmModeAtomicReqPtr req, const struct plane *p,
		      const struct head *h, uint32_t fb_id,
		      const struct buffer *b, struct rect dst)
{
	add(req, p->id, p->fb_id, fb_id);
	add(req, p->id, p->crtc, h->crtc_id);
	add(req, p->id, p->src_x, 0);
	add(req, p->id, p->src_y, 0);
	add(req, p->id, p->src_w, (uint64_t)b->width << 16);
	add(req, p->id, p->src_h, (uint64_t)b->height << 16);
	add(req, p->id, p->crtc_x, (uint64_t)(int64_t)dst.x);
	add(req, p->id, p->crtc_y, (uint64_t)(int64_t)dst.y);
	add(req, p->id, p->crtc_w, (uint64_t)dst.w);
	add(req, p->id, p->crtc_h, (uint64_t)dst.h);
}

static void add_zpos(const struct demo *d, drmModeAtomicReqPtr req,
		     const struct plane *p, uint64_t z)
{
	if (d->degraded[D_ZPOS] || !p->zpos_mutable)
		return;
	if (z < p->zpos_min)
		z = p->zpos_min;
	if (z > p->zpos_max)
		z = p->zpos_max;
	add(req, p->id, p->zpos, z);
}

static bool head_on(const struct demo *d, const struct head *h)
{
	return h->index == 0 || !d->degraded[D_H1];
}

static bool overlay_video(const struct demo *d, const struct head *h)
{
	return h->video && !d->degraded[h->index ? D_H1_VIDEO : D_H0_VIDEO];
}

static bool primary_on(const struct demo *d, const struct head *h)
{
	return h->index == 0 || d->degraded[D_H1_PRIMARY] ||
	       !overlay_video(d, h);
}

static float seconds(const struct demo *d)
{
	return (float)(kms_now_ns() - d->start_ns) / 1e9f;
}

/* Where head 0's video overlay is at time t: scaling and moving. */
static struct rect video_rect(const struct demo *d, const struct head *h,
			      float t)
{
	int mw = h->mode.hdisplay, mh = h->mode.vdisplay;
	struct rect r = { 0, 0, VIDEO_W, VIDEO_H };

	if (h->index == 0) {
		if (!d->degraded[D_H0_VIDEO_SCALE]) {
			float s = 1.25f + 0.5f * fsin(t * 0.8f);

			r.w = (int)(VIDEO_W * s);
			r.h = (int)(VIDEO_H * s);
		}
		r.x = mw / 2 - r.w / 2 + (int)(mw * 0.3f * fcos(t * 0.5f));
		r.y = mh / 2 - r.h / 2 + (int)(mh * 0.25f * fsin(t * 0.7f));
	} else {
		/* Letterbox (or pillarbox): fit, keep 16:9, centre. */
		if (!d->degraded[D_H1_VIDEO_SCALE]) {
			if ((int64_t)mw * VIDEO_H <= (int64_t)mh * VIDEO_W) {
				r.w = mw;
				r.h = mw * VIDEO_H / VIDEO_W;
			} else {
				r.h = mh;
				r.w = mh * VIDEO_W / VIDEO_H;
			}
		}
		r.x = (mw - r.w) / 2;
		r.y = (mh - r.h) / 2;
	}
	return r;
}

static struct rect cursor_pos(const struct head *h, float t)
{
	int mw = h->mode.hdisplay, mh = h->mode.vdisplay;

	return (struct rect){
		mw / 2 + (int)((mw / 2 - 40) * fsin(t * 0.9f)),
		mh / 2 + (int)((mh / 2 - 40) * fsin(t * 1.7f + 0.5f)),
		(int)h->cursor_buf.width, (int)h->cursor_buf.height,
	};
}

static struct rect full(const struct head *h)
{
	return (struct rect){ 0, 0, h->mode.hdisplay, h->mode.vdisplay };
}

/*
 * The per-frame part of a head's state: new video frame or primary, the
 * video's rectangle, the cursor's position.  Draws into the back buffers.
 */
static void add_frame(struct demo *d, drmModeAtomicReqPtr req,
		      struct head *h, bool full_state)
{
	float t = seconds(d);

	if (overlay_video(d, h)) {
		struct buffer *b = &h->vid[h->vid_back];
		struct canvas c = canvas_of(b);

		draw_video(&c, t, h->frame, h->fps);
		add_plane(req, h->video, h, b->fb_id, b, video_rect(d, h, t));
	} else {
		struct buffer *b = &h->desk[h->desk_back];
		struct canvas c = sub_canvas(b, h->sw_video);

		draw_video(&c, t, h->frame, h->fps);
	}
	if (primary_on(d, h) && (full_state || !overlay_video(d, h))) {
		struct buffer *b = &h->desk[h->desk_back];

		add_plane(req, h->primary, h,
			  overlay_video(d, h) ? h->desk[0].fb_id : b->fb_id, b,
			  full(h));
	}
	if (h->cursor && !d->degraded[D_CURSOR])
		add_plane(req, h->cursor, h, h->cursor_buf.fb_id,
			  &h->cursor_buf, cursor_pos(h, t));
}

/* Everything: mode, every plane of every head, unused planes off. */
static drmModeAtomicReqPtr full_request(struct demo *d)
{
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();

	for (int i = 0; i < d->nplanes; i++) {
		struct plane *p = &d->planes[i];
		bool mine = false, on_our_crtc = false;

		for (int n = 0; n < d->nheads; n++) {
			struct head *h = &d->heads[n];

			if (!head_on(d, h))
				continue;
			mine |= (p == h->primary && primary_on(d, h)) ||
				(p == h->video && overlay_video(d, h)) ||
				(p == h->panel && !d->degraded[D_PANEL]) ||
				(p == h->cursor && !d->degraded[D_CURSOR]);
			on_our_crtc |= p->crtc_id == h->crtc_id;
		}
		/* Switch off what else shows on our CRTCs (fbcon's planes). */
		if (!mine && on_our_crtc) {
			add(req, p->id, p->fb_id, 0);
			add(req, p->id, p->crtc, 0);
		}
	}
	for (int n = 0; n < d->nheads; n++) {
		struct head *h = &d->heads[n];

		if (!head_on(d, h))
			continue;
		add(req, h->conn_id, h->prop_conn_crtc, h->crtc_id);
		add(req, h->crtc_id, h->prop_mode_id, h->mode_blob);
		add(req, h->crtc_id, h->prop_active, 1);
		add_frame(d, req, h, true);
		if (primary_on(d, h))
			add_zpos(d, req, h->primary, 0);
		if (overlay_video(d, h))
			add_zpos(d, req, h->video, 1);
		if (h->panel && !d->degraded[D_PANEL]) {
			const struct buffer *b = &h->panel_buf;
			bool alpha = !d->degraded[D_PANEL_ALPHA];
			/* Over a corner of the chart window: blending shows. */
			struct rect r = {
				h->mode.hdisplay * 3 / 8,
				h->mode.vdisplay * 5 / 8,
				PANEL_W, PANEL_H,
			};

			add_plane(req, h->panel, h,
				  alpha ? b->fb_id : b->fb_id_opaque, b, r);
			add_zpos(d, req, h->panel, 2);
			if (alpha)
				add(req, h->panel->id, h->panel->blend,
				    h->panel->blend_premulti);
			add(req, h->panel->id, h->panel->alpha,
			    alpha ? 0xffff : 0xb000);
		}
		if (h->cursor && !d->degraded[D_CURSOR]) {
			add_zpos(d, req, h->cursor, h->cursor->zpos_max);
			/* The arrow's tip is its top left pixel. */
			add(req, h->cursor->id, h->cursor->hotspot_x, 0);
			add(req, h->cursor->id, h->cursor->hotspot_y, 0);
		}
	}
	return req;
}

static int test_config(struct demo *d)
{
	drmModeAtomicReqPtr req = full_request(d);
	int ret;

	ret = drmModeAtomicCommit(d->fd, req, DRM_MODE_ATOMIC_TEST_ONLY |
				  DRM_MODE_ATOMIC_ALLOW_MODESET, NULL);
	drmModeAtomicFree(req);
	return ret;
}

/*
 * Give things up in order until TEST_ONLY passes, then take back every
 * earlier step the driver does not actually need.
 */
static int negotiate(struct demo *d)
{
	int last = -1;

	if (test_config(d) == 0)
		return 0;
	for (int i = 0; i < D_COUNT; i++) {
		if (d->degraded[i])
			continue;
		d->degraded[i] = true;
		if (test_config(d) == 0) {
			last = i;
			break;
		}
	}
	if (last < 0) {
		fprintf(stderr,
			"pvdc-demo: the driver refuses even a primary plane on head 0: %s\n",
			strerror(errno));
		return -1;
	}
	for (int i = last - 1; i >= 0; i--) {
		if (d->forced[i] || !d->degraded[i])
			continue;
		d->degraded[i] = false;
		if (test_config(d) != 0)
			d->degraded[i] = true;
	}
	for (int i = 0; i < D_COUNT; i++)
		if (d->degraded[i] && !d->forced[i])
			printf("pvdc-demo: dropped: %s: TEST_ONLY refused it\n",
			       degrade_text[i]);
	return 0;
}

static int setup_head(struct demo *d, struct head *h)
{
	uint32_t c = DRM_MODE_OBJECT_CRTC;

	h->prop_mode_id = kms_prop_find(d->fd, h->crtc_id, c, "MODE_ID", NULL);
	h->prop_active = kms_prop_find(d->fd, h->crtc_id, c, "ACTIVE", NULL);
	h->prop_conn_crtc = kms_prop_find(d->fd, h->conn_id,
				      DRM_MODE_OBJECT_CONNECTOR, "CRTC_ID",
				      NULL);
	if (!h->prop_mode_id || !h->prop_active || !h->prop_conn_crtc) {
		fprintf(stderr, "pvdc-demo: head %d: no atomic mode properties\n",
			h->index);
		return -1;
	}
	if (drmModeCreatePropertyBlob(d->fd, &h->mode, sizeof(h->mode),
				      &h->mode_blob)) {
		fprintf(stderr, "pvdc-demo: mode blob: %m\n");
		return -1;
	}
	h->period_ns = h->mode.vrefresh ? 1000000000ll / h->mode.vrefresh :
		       16666667;
	snprintf(h->fps, sizeof(h->fps), "HEAD %d", h->index);

	/* Where the video goes when it has to be drawn on the primary. */
	h->sw_video.w = h->mode.hdisplay > VIDEO_W ? VIDEO_W : h->mode.hdisplay;
	h->sw_video.h = h->mode.vdisplay > VIDEO_H ? VIDEO_H : h->mode.vdisplay;
	if (h->index == 0) {
		h->sw_video.x = h->mode.hdisplay * 11 / 20;
		h->sw_video.y = h->mode.vdisplay / 12 + 24;
	} else {
		h->sw_video.x = (h->mode.hdisplay - h->sw_video.w) / 2;
		h->sw_video.y = (h->mode.vdisplay - h->sw_video.h) / 2;
	}
	if (h->sw_video.x + h->sw_video.w > h->mode.hdisplay)
		h->sw_video.x = h->mode.hdisplay - h->sw_video.w;
	if (h->sw_video.y + h->sw_video.h > h->mode.vdisplay)
		h->sw_video.y = h->mode.vdisplay - h->sw_video.h;
	return 0;
}

/*
 * Planes go to what matters most first: both heads' primary and video
 * planes (an overlay may serve either head), then the cursor and the panel.
 */
static int assign_planes(struct demo *d)
{
	struct head *h0 = &d->heads[0], *h1 = &d->heads[1];

	h0->primary = take_plane(d, h0, DRM_PLANE_TYPE_PRIMARY,
				 DRM_FORMAT_XRGB8888);
	if (!h0->primary) {
		fprintf(stderr, "pvdc-demo: head 0: no XRGB8888 primary plane\n");
		return -1;
	}
	h0->video = take_plane(d, h0, DRM_PLANE_TYPE_OVERLAY,
			       DRM_FORMAT_XRGB8888);
	if (d->nheads > 1) {
		h1->primary = take_plane(d, h1, DRM_PLANE_TYPE_PRIMARY,
					 DRM_FORMAT_XRGB8888);
		h1->video = take_plane(d, h1, DRM_PLANE_TYPE_OVERLAY,
				       DRM_FORMAT_XRGB8888);
	}
	h0->cursor = take_plane(d, h0, DRM_PLANE_TYPE_CURSOR,
				DRM_FORMAT_ARGB8888);
	h0->panel = take_plane(d, h0, DRM_PLANE_TYPE_OVERLAY,
			       DRM_FORMAT_ARGB8888);

	if (!h0->video)
		force(d, D_H0_VIDEO, "no overlay plane");
	if (!h0->panel)
		force(d, D_PANEL, "no ARGB8888 overlay plane");
	if (!h0->cursor)
		force(d, D_CURSOR, "no ARGB8888 cursor plane");
	if (d->nheads > 1) {
		if (!h1->video)
			force(d, D_H1_VIDEO, "no overlay plane");
		if (!h1->primary)
			force(d, D_H1_PRIMARY, "no primary plane either");
		if (!h1->video && !h1->primary)
			force(d, D_H1, "no plane for it");
	} else {
		d->degraded[D_H1] = d->forced[D_H1] = true;
	}
	return 0;
}

static int create_buffers(struct demo *d, struct head *h)
{
	/* The primary is double-buffered so a video drawn on it can flip. */
	for (int i = 0; i < 2 && h->primary; i++)
		if (create_buffer(d->fd, &h->desk[i], h->mode.hdisplay,
				  h->mode.vdisplay, DRM_FORMAT_XRGB8888, 0))
			return -1;
	for (int i = 0; i < 2 && h->video; i++)
		if (create_buffer(d->fd, &h->vid[i], VIDEO_W, VIDEO_H,
				  DRM_FORMAT_XRGB8888, 0))
			return -1;
	if (h->panel) {
		struct canvas cv;

		if (create_buffer(d->fd, &h->panel_buf, PANEL_W, PANEL_H,
				  DRM_FORMAT_ARGB8888, DRM_FORMAT_XRGB8888))
			return -1;
		cv = canvas_of(&h->panel_buf);
		draw_panel(&cv);
	}
	if (h->cursor) {
		uint64_t cw = CURSOR_SIZE, ch = CURSOR_SIZE;
		struct canvas cv;

		drmGetCap(d->fd, DRM_CAP_CURSOR_WIDTH, &cw);
		drmGetCap(d->fd, DRM_CAP_CURSOR_HEIGHT, &ch);
		cw = cw > CURSOR_SIZE || !cw ? CURSOR_SIZE : cw;
		ch = ch > CURSOR_SIZE || !ch ? CURSOR_SIZE : ch;
		if (create_buffer(d->fd, &h->cursor_buf, (uint32_t)cw,
				  (uint32_t)ch, DRM_FORMAT_ARGB8888, 0))
			return -1;
		cv = canvas_of(&h->cursor_buf);
		draw_cursor(&cv);
	}
	return 0;
}

static int commit_frame(struct demo *d, struct head *h)
{
	drmModeAtomicReqPtr req = drmModeAtomicAlloc();
	int ret;

	add_frame(d, req, h, false);
	ret = drmModeAtomicCommit(d->fd, req, DRM_MODE_ATOMIC_NONBLOCK |
				  DRM_MODE_PAGE_FLIP_EVENT, d);
	drmModeAtomicFree(req);
	if (ret == 0) {
		h->pending = true;
		h->failures = 0;
		h->commit_ns = kms_now_ns();
		/*
		 * A driver without vblank interrupts sends the event at once
		 * (its sequence never moves): keep it near the refresh rate.
		 */
		if (!h->vblank_events)
			h->next_commit_ns = h->commit_ns + h->period_ns * 4 / 5;
		return 0;
	}
	if (errno == EBUSY)	/* the previous one is still in flight */
		return 0;
	fprintf(stderr, "pvdc-demo: head %d: commit of frame %u: %m\n",
		h->index, h->frame);
	return ++h->failures >= MAX_COMMIT_FAILURES ? -1 : 0;
}

/*
 * The head is found by its CRTC, not by the commit's user data: a driver
 * may pull other CRTCs into a commit (shared scalers or bandwidth), and the
 * core then sends them an event too.  Only a head waiting for its own
 * commit moves on.
 */
static void on_flip(int fd, unsigned int sequence, unsigned int sec,
		    unsigned int usec, unsigned int crtc_id, void *data)
{
	struct demo *d = data;

	(void)fd;
	(void)sec;
	(void)usec;
	for (int n = 0; n < d->nheads; n++) {
		struct head *h = &d->heads[n];

		if (h->crtc_id != crtc_id || !h->pending)
			continue;
		h->vblank_events |= sequence != h->last_sequence;
		h->last_sequence = sequence;
		h->pending = false;
		h->frame++;
		h->flips++;
		h->vid_back ^= 1;
		h->desk_back ^= 1;
	}
}

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void report_fps(struct demo *d, int64_t now, int64_t *window_start,
		       int64_t *print_start)
{
	if (now - *window_start >= 1000000000ll) {
		for (int n = 0; n < d->nheads; n++) {
			struct head *h = &d->heads[n];
			double fps = (h->flips - h->flips_window) * 1e9 /
				     (double)(now - *window_start);

			snprintf(h->fps, sizeof(h->fps), "%.1f FPS", fps);
			h->flips_window = h->flips;
		}
		*window_start = now;
	}
	if (now - *print_start >= FPS_PERIOD_NS) {
		printf("pvdc-demo: fps");
		for (int n = 0; n < d->nheads; n++) {
			struct head *h = &d->heads[n];

			if (head_on(d, h))
				printf(" head %d %.1f", n,
				       (h->flips - h->flips_print) * 1e9 /
				       (double)(now - *print_start));
			h->flips_print = h->flips;
		}
		printf("\n");
		*print_start = now;
	}
}

static int poll_timeout(const struct demo *d)
{
	int64_t now = kms_now_ns(), wait = 20000000;

	for (int n = 0; n < d->nheads; n++) {
		const struct head *h = &d->heads[n];

		if (head_on(d, h) && !h->pending &&
		    h->next_commit_ns - now < wait)
			wait = h->next_commit_ns - now;
	}
	return wait > 0 ? (int)((wait + 999999) / 1000000) : 0;
}

static int run(struct demo *d, int64_t duration_ns)
{
	drmEventContext ev = {
		.version = 3,
		.page_flip_handler2 = on_flip,
	};
	int64_t window_start = kms_now_ns(), print_start = window_start;
	int ret = 0;

	while (!stop_requested) {
		int64_t now = kms_now_ns();
		struct pollfd pfd = { .fd = d->fd, .events = POLLIN };

		if (duration_ns && now - d->start_ns >= duration_ns)
			break;
		for (int n = 0; n < d->nheads && ret == 0; n++) {
			struct head *h = &d->heads[n];

			if (!head_on(d, h))
				continue;
			if (h->pending && now - h->commit_ns > EVENT_TIMEOUT_NS) {
				fprintf(stderr,
					"pvdc-demo: head %d: no flip event within 1 s\n",
					h->index);
				h->pending = false;
			}
			if (!h->pending && now >= h->next_commit_ns)
				ret = commit_frame(d, h);
		}
		if (ret)
			return ret;
		report_fps(d, now, &window_start, &print_start);

		/* The timeout only matters while a commit waits for a retry. */
		if (poll(&pfd, 1, poll_timeout(d)) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "pvdc-demo: poll: %m\n");
			return -1;
		}
		if ((pfd.revents & POLLIN) && drmHandleEvent(d->fd, &ev)) {
			fprintf(stderr, "pvdc-demo: drmHandleEvent failed\n");
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *path = kms_operand(argc, argv, 2, KMS_CARD);
	double duration = argc > 1 ? strtod(argv[1], NULL) : 0;
	struct sigaction sa = { .sa_handler = on_signal };
	struct demo d = { .fd = -1 };
	drmModeAtomicReqPtr req;
	uint64_t dumb = 0;

	if (argc > 3 || duration < 0) {
		fprintf(stderr, "usage: %s [SECONDS [DEVICE]]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	d.fd = open(path, O_RDWR | O_CLOEXEC);
	if (d.fd < 0) {
		fprintf(stderr, "pvdc-demo: open %s: %m\n", path);
		return 1;
	}
	if (drmSetClientCap(d.fd, DRM_CLIENT_CAP_UNIVERSAL_PLANES, 1) ||
	    drmSetClientCap(d.fd, DRM_CLIENT_CAP_ATOMIC, 1)) {
		fprintf(stderr,
			"pvdc-demo: %s has no atomic mode setting: %m\n",
			path);
		return 1;
	}
	/*
	 * Paravirtualized drivers hide their cursor planes from atomic
	 * clients that do not promise to set the hotspot; this one does.
	 */
	drmSetClientCap(d.fd, DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT, 1);
	if (drmGetCap(d.fd, DRM_CAP_DUMB_BUFFER, &dumb) || !dumb) {
		fprintf(stderr, "pvdc-demo: %s has no dumb buffers\n", path);
		return 1;
	}
	if (load_planes(&d) || find_heads(&d))
		return 1;
	if (d.nheads < 2)
		printf("pvdc-demo: one head only: head 0 shown alone\n");
	for (int n = 0; n < d.nheads; n++)
		if (setup_head(&d, &d.heads[n]))
			return 1;
	if (assign_planes(&d))
		return 1;
	for (int n = 0; n < d.nheads; n++)
		if (create_buffers(&d, &d.heads[n]))
			return 1;

	d.start_ns = kms_now_ns();
	if (negotiate(&d))
		return 1;
	for (int i = 0; i < 2; i++) {
		struct head *h = &d.heads[0];
		struct canvas cv = canvas_of(&h->desk[i]);

		draw_desktop(&cv, overlay_video(&d, h) ? NULL : &h->sw_video);
	}
	req = full_request(&d);
	if (drmModeAtomicCommit(d.fd, req, DRM_MODE_ATOMIC_ALLOW_MODESET,
				NULL)) {
		fprintf(stderr,
			"pvdc-demo: mode set passed TEST_ONLY but failed: %m\n");
		return 1;
	}
	drmModeAtomicFree(req);
	for (int n = 0; n < d.nheads; n++) {
		struct head *h = &d.heads[n];

		if (!head_on(&d, h))
			continue;
		h->vid_back ^= 1;
		h->desk_back ^= 1;
		printf("pvdc-demo: head %d %dx%d@%d\n", n, h->mode.hdisplay,
		       h->mode.vdisplay, h->mode.vrefresh);
	}
	if (run(&d, (int64_t)(duration * 1e9)))
		return 1;
	printf("pvdc-demo: %s after %.1f s\n",
	       stop_requested ? "stopped" : "done",
	       (double)(kms_now_ns() - d.start_ns) / 1e9);
	close(d.fd);
	return 0;
}
