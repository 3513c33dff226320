/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * The YCbCr to RGB conversion of pvdc, as docs/specs/pvdc.rst ("YCbCr
 * formats") defines it, bit for bit: what an NV12, P010 or YUYV plane
 * shows, for a test to compare with an XRGB8888 plane of those pixels.
 *
 * Plain C99 and header only, so that the in-guest programs (built against
 * libc and libdrm alone) can use it.  The coefficients are derived here,
 * in exact integer arithmetic, from the encodings' Kr and Kb and the
 * quantisation of each range, rounded once to 16.16, halves up, as the
 * spec says; pvdc_ycbcr_check() compares the result with the spec's
 * table for BT.601 limited range.
 */
#ifndef PVDC_YCBCR_H
#define PVDC_YCBCR_H

#include <stdbool.h>
#include <stdint.h>

/* The values of enum drm_color_encoding and enum drm_color_range. */
enum { PVDC_YCBCR_BT601, PVDC_YCBCR_BT709, PVDC_YCBCR_BT2020,
       PVDC_YCBCR_ENCODINGS };
enum { PVDC_YCBCR_LIMITED, PVDC_YCBCR_FULL, PVDC_YCBCR_RANGES };

struct pvdc_ycbcr {
	int64_t y_off, c_off;		/* in n-bit units */
	int64_t y, r_v, g_u, g_v, b_u;	/* 16.16 */
};

/* round(num / den), halves up, for positive values */
static inline int64_t pvdc_ycbcr_round(int64_t num, int64_t den)
{
	return (2 * num + den) / (2 * den);
}

/*
 * The coefficients of @encoding and @range for @depth-bit components (8,
 * or 10 for P010): 255 * coefficient / scale, in 16.16, where Kr, Kb and
 * Kg = 1 - Kr - Kb are in units of 1/10000, as the standards give them.
 */
static inline void pvdc_ycbcr_init(struct pvdc_ycbcr *k, unsigned int encoding,
				   unsigned int range, unsigned int depth)
{
	static const int64_t krkb[PVDC_YCBCR_ENCODINGS][2] = {
		{ 2990, 1140 }, { 2126, 722 }, { 2627, 593 },
	};
	int64_t kr = krkb[encoding][0], kb = krkb[encoding][1];
	int64_t kg = 10000 - kr - kb;
	bool full = range == PVDC_YCBCR_FULL;
	int64_t ys = full ? (1 << depth) - 1 : 219 << (depth - 8);
	int64_t cs = full ? (1 << depth) - 1 : 224 << (depth - 8);
	int64_t one = 65536 * 255;

	k->y_off = full ? 0 : 16 << (depth - 8);
	k->c_off = 1 << (depth - 1);
	k->y = pvdc_ycbcr_round(one, ys);
	/* 2 (1 - Kr), 2 (1 - Kb) */
	k->r_v = pvdc_ycbcr_round(one * 2 * (10000 - kr), 10000 * cs);
	k->b_u = pvdc_ycbcr_round(one * 2 * (10000 - kb), 10000 * cs);
	/* 2 Kb (1 - Kb) / Kg, 2 Kr (1 - Kr) / Kg */
	k->g_u = pvdc_ycbcr_round(one * 2 * kb * (10000 - kb),
				  10000 * kg * cs);
	k->g_v = pvdc_ycbcr_round(one * 2 * kr * (10000 - kr),
				  10000 * kg * cs);
}

/* The spec's coefficients of BT.601 limited range, 8 and 10 bits. */
static inline bool pvdc_ycbcr_check(void)
{
	static const int64_t spec[2][5] = {
		{ 76309, 104597, 25675, 53279, 132201 },
		{ 19077, 26149, 6419, 13320, 33050 },
	};
	struct pvdc_ycbcr k;
	unsigned int i;

	for (i = 0; i < 2; i++) {
		pvdc_ycbcr_init(&k, PVDC_YCBCR_BT601, PVDC_YCBCR_LIMITED,
				i ? 10 : 8);
		if (k.y != spec[i][0] || k.r_v != spec[i][1] ||
		    k.g_u != spec[i][2] || k.g_v != spec[i][3] ||
		    k.b_u != spec[i][4])
			return false;
	}
	return true;
}

static inline uint32_t pvdc_ycbcr_clamp8(int64_t v)
{
	return v < 0 ? 0 : v > 255 ? 255 : (uint32_t)v;
}

/* >> of a negative value, made explicit: rounds towards minus infinity. */
static inline int64_t pvdc_ycbcr_floor19(int64_t v)
{
	return v >= 0 ? v >> 19 : -((-v + (1 << 19) - 1) >> 19);
}

/*
 * Luma @y and chroma @u8, @v8 in eighths of a sample (the chroma siting
 * interpolates in eighths) to 0x00RRGGBB.
 */
static inline uint32_t pvdc_ycbcr_rgb(const struct pvdc_ycbcr *k, int y,
				      int u8, int v8)
{
	int64_t l = k->y * 8 * (y - k->y_off) + (1 << 18);
	int64_t u = u8 - 8 * k->c_off, v = v8 - 8 * k->c_off;
	uint32_t r = pvdc_ycbcr_clamp8(pvdc_ycbcr_floor19(l + k->r_v * v));
	uint32_t g = pvdc_ycbcr_clamp8(pvdc_ycbcr_floor19(l - k->g_u * u -
							  k->g_v * v));
	uint32_t b = pvdc_ycbcr_clamp8(pvdc_ycbcr_floor19(l + k->b_u * u));

	return r << 16 | g << 8 | b;
}

static inline int pvdc_ycbcr_clampi(int v, int lo, int hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/*
 * The chroma of pixel (@x, @y) of a two-plane format, in eighths, MPEG-2
 * siting: sample (j, k) sits on luma column 2j, halfway between lines 2k
 * and 2k + 1.  @sample(ctx, j, k) gives one component of a stored sample;
 * @cols x @rows are the samples of the source rectangle (which starts at
 * 0, 0 here), where the indices are clamped.
 */
static inline int pvdc_ycbcr_chroma(int (*sample)(const void *ctx, int j,
						  int k),
				    const void *ctx, int cols, int rows,
				    int x, int y)
{
	int k0 = y / 2, k1 = pvdc_ycbcr_clampi(y & 1 ? k0 + 1 : k0 - 1, 0,
					       rows - 1);
	int j0 = x / 2, j1 = pvdc_ycbcr_clampi(x & 1 ? j0 + 1 : j0, 0,
					       cols - 1);

	/* twice a column or once each of two; 3 times its line, once the other */
	return 3 * (sample(ctx, j0, k0) + sample(ctx, j1, k0)) +
	       sample(ctx, j0, k1) + sample(ctx, j1, k1);
}

#endif /* PVDC_YCBCR_H */
