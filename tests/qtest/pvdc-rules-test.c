/*
 * QTest cases for pvdc's validation rules: one test per rule (each breaks it
 * in the shadow state and expects its error code and plane, the active
 * state unchanged), and the order in which a commit checks them.
 *
 * Time only moves through the qtest clock (pvdc_step_to(), pvdc_step_next()):
 * every expectation about a vblank or a latch point is exact to the
 * nanosecond.  The test modes are tiny (64x48) so that a frame lasts a round
 * number of milliseconds.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest.h"

typedef struct RuleCase {
    const char *name;
    /* Breaks the rule in the shadow state; returns the head to commit. */
    unsigned int (*breaks)(PVDCTest *t);
    uint32_t code;
    /* The plane reported, PVDC_RESULT_PLANE_NONE for a head rule. */
    unsigned int (*plane)(PVDCTest *t);
} RuleCase;

static unsigned int no_plane(PVDCTest *t)
{
    return PVDC_RESULT_PLANE_NONE;
}

static unsigned int primary0(PVDCTest *t)
{
    return pvdc_plane_of(t, 0, PRIMARY);
}

static unsigned int overlay0(PVDCTest *t)
{
    return pvdc_plane_of(t, 0, OVERLAY(0));
}

static unsigned int cursor0(PVDCTest *t)
{
    return pvdc_cursor_of(t, 0);
}

static unsigned int primary1(PVDCTest *t)
{
    return pvdc_plane_of(t, 1, PRIMARY);
}

static unsigned int break_head_reserved(PVDCTest *t)
{
    /* the lowest reserved bit */
    pvdc_wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL,
            PVDC_HS_CTRL_ENABLE | BIT(ctz32(~PVDC_HS_CTRL_VALID_MASK)));
    return 0;
}

static unsigned int break_mode(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    /* hsync starts inside the active area */
    pvdc_wr(t, PVDC_HEAD_SHADOW(1) + PVDC_HS_HSYNC,
            PVDC_XY(MODE_W - 1, MODE_W + 6));
    return 1;
}

static unsigned int break_modeset_required(PVDCTest *t)
{
    pvdc_wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_PIXEL_CLOCK, CLOCK_2MS);
    return 0;
}

static unsigned int break_bandwidth_change(PVDCTest *t)
{
    pvdc_wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH,
            RULE_HEAD_BANDWIDTH - 1);
    return 0;
}

static unsigned int break_bandwidth_alloc(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    pvdc_wr(t, PVDC_HEAD_SHADOW(1) + PVDC_HS_BANDWIDTH,
            RULE_HEAD_BANDWIDTH + 1);
    return 1;
}

static unsigned int break_connector_range(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    pvdc_wr_head(t, 1, PVDC_HS_CONNECTOR, t->heads);
    return 1;
}

static unsigned int break_connector_all_ones(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    pvdc_wr_head(t, 1, PVDC_HS_CONNECTOR, 0xffffffff);
    return 1;
}

/* Connector 0 is driven by head 0, active and outside the commit. */
static unsigned int break_connector_taken(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    pvdc_wr_head(t, 1, PVDC_HS_CONNECTOR, 0);
    return 1;
}

static unsigned int break_connector_change(PVDCTest *t)
{
    /* connector 1 is free: only the modeset rule stands in the way */
    pvdc_wr_head(t, 0, PVDC_HS_CONNECTOR, 1);
    return 0;
}

/* pvdc series: color */
/* Colour tables at 1 MiB (DEGAMMA), 2 MiB (CTM) and 3 MiB (GAMMA). */
static void write_color_regs(PVDCTest *t, unsigned int head, uint32_t stages,
                             uint32_t sizes)
{
    pvdc_wr_head(t, head, PVDC_HS_DEGAMMA_LUT, 1 * MiB);
    pvdc_wr_head(t, head, PVDC_HS_CTM, 2 * MiB);
    pvdc_wr_head(t, head, PVDC_HS_GAMMA_LUT, 3 * MiB);
    pvdc_wr_head(t, head, PVDC_HS_LUT_SIZES, sizes);
    pvdc_wr_head(t, head, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE | stages);
}

static unsigned int break_color_lut_size(PVDCTest *t)
{
    write_color_regs(t, 0, PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_GAMMA,
                     PVDC_XY(256, PVDC_LUT_MAX_SIZE + 1));
    return 0;
}

static unsigned int break_color_lut_align(PVDCTest *t)
{
    write_color_regs(t, 0, PVDC_HS_CTRL_DEGAMMA, PVDC_XY(256, 256));
    pvdc_wr_head(t, 0, PVDC_HS_DEGAMMA_LUT, 1 * MiB + PVDC_COLOR_ALIGN / 2);
    return 0;
}

static unsigned int break_color_ctm_bounds(PVDCTest *t)
{
    write_color_regs(t, 0, PVDC_HS_CTRL_CTM, 0);
    pvdc_wr_head(t, 0, PVDC_HS_CTM, t->vram_size - PVDC_CTM_SIZE + 8);
    return 0;
}

/* A head being enabled with a broken pipeline. */
static unsigned int break_color_on_enable(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    write_color_regs(t, 1, PVDC_HS_CTRL_GAMMA, PVDC_XY(256, 1));
    return 1;
}

/* pvdc series: end color */
/* A writeback target of the whole test mode at 4 MiB, enabled on @head. */
static void write_wb_regs(PVDCTest *t, unsigned int head, uint32_t format)
{
    pvdc_wr_head(t, head, PVDC_HS_WB_FORMAT, format);
    pvdc_wr_head(t, head, PVDC_HS_WB_OFFSET, 4 * MiB);
    pvdc_wr_head(t, head, PVDC_HS_WB_PITCH, MODE_PITCH);
    pvdc_wr_head(t, head, PVDC_HS_CTRL,
                 PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_WRITEBACK);
}

/* Unlike colour stages, writeback is refused on a disabled head. */
static unsigned int break_wb_disabled_head(PVDCTest *t)
{
    write_wb_regs(t, 1, PVDC_FMT_XRGB8888);
    pvdc_wr_head(t, 1, PVDC_HS_CTRL, PVDC_HS_CTRL_WRITEBACK);
    return 1;
}

static unsigned int break_wb_format(PVDCTest *t)
{
    write_wb_regs(t, 0, PVDC_FMT_RGB565);
    return 0;
}

static unsigned int break_wb_offset_align(PVDCTest *t)
{
    write_wb_regs(t, 0, PVDC_FMT_ABGR8888);
    pvdc_wr_head(t, 0, PVDC_HS_WB_OFFSET, 4 * MiB + 2);
    return 0;
}

static unsigned int break_wb_pitch_align(PVDCTest *t)
{
    write_wb_regs(t, 0, PVDC_FMT_XRGB8888);
    pvdc_wr_head(t, 0, PVDC_HS_WB_PITCH, MODE_PITCH + 2);
    return 0;
}

static unsigned int break_wb_pitch_small(PVDCTest *t)
{
    write_wb_regs(t, 0, PVDC_FMT_XRGB8888);
    pvdc_wr_head(t, 0, PVDC_HS_WB_PITCH, MODE_PITCH - 64);
    return 0;
}

static unsigned int break_wb_bounds(PVDCTest *t)
{
    write_wb_regs(t, 0, PVDC_FMT_ARGB8888);
    /* one aligned step too far */
    pvdc_wr_head(t, 0, PVDC_HS_WB_OFFSET,
                 t->vram_size - (uint64_t)MODE_PITCH * MODE_H + 64);
    return 0;
}

/* A head being enabled with a target it cannot take. */
static unsigned int break_wb_on_enable(PVDCTest *t)
{
    pvdc_write_mode(t, 1, CLOCK_1MS);
    write_wb_regs(t, 1, 0);
    return 1;
}

static unsigned int break_plane_ctrl(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE | BIT(1));
    return 0;
}

static unsigned int break_plane_ctrl_blend(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_PS_CTRL_BLEND_MASK << PVDC_PS_CTRL_BLEND_SHIFT);
    return 0;
}

static void write_cursor(PVDCTest *t, unsigned int plane, unsigned int head)
{
    pvdc_write_plane(t, plane, head, 0, t->overlays + 1);
    pvdc_wr_plane(t, plane, PVDC_PS_FORMAT, PVDC_FMT_ARGB8888);
}

static unsigned int break_plane_ctrl_cursor_rotation(PVDCTest *t)
{
    write_cursor(t, cursor0(t), 0);
    pvdc_wr_plane(t, cursor0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_PS_CTRL_ROTATE_180);
    return 0;
}

static unsigned int break_plane_head(PVDCTest *t)
{
    /* A primary plane cannot leave its home head. */
    pvdc_write_plane(t, primary1(t), 0, 0, 1);
    return 0;
}

/* Head 1 enabled, with overlay 0 (shrunk) committed on it. */
static void commit_overlay0_on_head1(PVDCTest *t)
{
    pvdc_enable_head(t, 1, CLOCK_1MS);
    pvdc_write_plane(t, overlay0(t), 1, 0, 1);
    pvdc_shrink_plane(t, overlay0(t));
    pvdc_doorbell(t, 1);
    g_assert_cmphex(pvdc_wait_outcome(t, 1, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    (void)pvdc_rd(t, PVDC_REG_INT_ACK);
}

static unsigned int break_plane_busy(PVDCTest *t)
{
    commit_overlay0_on_head1(t);
    /* Still enabled on head 1, now committed on head 0. */
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_HEAD, 0);
    return 0;
}

static unsigned int break_plane_busy_disabled(PVDCTest *t)
{
    /* Taking it away disabled changes head 1 just as much. */
    break_plane_busy(t);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CTRL, 0);
    return 0;
}

static unsigned int break_head_disabled_outside_commit(PVDCTest *t)
{
    commit_overlay0_on_head1(t);
    /* Head 1 off, its primary too; overlay 0 now shadows head 0. */
    pvdc_wr(t, PVDC_HEAD_SHADOW(1) + PVDC_HS_CTRL, 0);
    pvdc_wr_plane(t, primary1(t), PVDC_PS_CTRL, 0);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_HEAD, 0);
    return 1;
}

static unsigned int break_head_disabled(PVDCTest *t)
{
    pvdc_wr(t, PVDC_HEAD_SHADOW(0) + PVDC_HS_CTRL, 0);
    return 0;
}

static unsigned int break_format(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FORMAT, PVDC_FMT_YUYV);
    return 0;
}

static unsigned int break_format_nv12_primary(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FORMAT, PVDC_FMT_NV12);
    return 0;
}

static unsigned int break_format_p010_cursor(PVDCTest *t)
{
    write_cursor(t, cursor0(t), 0);
    pvdc_shrink_plane(t, cursor0(t));
    pvdc_wr_plane(t, cursor0(t), PVDC_PS_FORMAT, PVDC_FMT_P010);
    return 0;
}

/*
 * A 16x16 NV12 (@format) overlay of head 0 with a valid Cb:Cr plane at
 * 1 MiB: what the chroma rules start from.
 */
static void write_two_plane_overlay(PVDCTest *t, uint32_t format)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_shrink_plane(t, overlay0(t));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FORMAT, format);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_SIZE, PVDC_XY(16, 16));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_PITCH, 64);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_OFFSET, 1 * MiB);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_PITCH, 64);
}

static unsigned int break_color_encoding(PVDCTest *t)
{
    write_two_plane_overlay(t, PVDC_FMT_NV12);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  PVDC_PS_CTRL_COLOR_ENCODING_MASK <<
                  PVDC_PS_CTRL_COLOR_ENCODING_SHIFT);
    return 0;
}

static unsigned int break_color_encoding_rgb(PVDCTest *t)
{
    /* checked for every format, even one that ignores it */
    pvdc_wr_plane(t, primary0(t), PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE |
                  3u << PVDC_PS_CTRL_COLOR_ENCODING_SHIFT |
                  PVDC_PS_CTRL_COLOR_RANGE_FULL);
    return 0;
}

static unsigned int break_chroma_offset_align(PVDCTest *t)
{
    write_two_plane_overlay(t, PVDC_FMT_NV12);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_OFFSET, 1 * MiB + 2);
    return 0;
}

static unsigned int break_chroma_pitch_small(PVDCTest *t)
{
    /* P010, 17 pixels wide: 9 samples of 4 bytes, 36 bytes a line */
    write_two_plane_overlay(t, PVDC_FMT_P010);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_SIZE, PVDC_XY(17, 16));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_PITCH, 64);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_PITCH, 0);
    return 0;
}

static unsigned int break_chroma_pitch_align(PVDCTest *t)
{
    write_two_plane_overlay(t, PVDC_FMT_NV12);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_PITCH, 98);
    return 0;
}

static unsigned int break_chroma_bounds(PVDCTest *t)
{
    /* 8 lines 64 bytes apart, the last of 16: ends 16 bytes past VRAM */
    write_two_plane_overlay(t, PVDC_FMT_NV12);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_OFFSET,
                  t->vram_size - 7 * 64);
    return 0;
}

static unsigned int break_fb_size(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_SIZE, PVDC_XY(0, MODE_H));
    return 0;
}

static unsigned int break_fb_size_yuyv_odd(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FORMAT, PVDC_FMT_YUYV);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_SIZE, PVDC_XY(MODE_W - 1, MODE_H));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_SRC_W, FP16(MODE_W - 1));
    return 0;
}

static unsigned int break_pitch(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_PITCH, MODE_PITCH - 64);
    return 0;
}

static unsigned int break_pitch_alignment(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_PITCH, MODE_PITCH + 2);
    return 0;
}

/*
 * Issue 35: a one-line framebuffer, offset + pitch * 0 + line inside
 * VRAM, that the engine could not draw.
 */
static unsigned int break_pitch_one_line_2g(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_SIZE, PVDC_XY(MODE_W, 1));
    pvdc_wr_plane(t, primary0(t), PVDC_PS_SRC_H, FP16(1));
    pvdc_wr_plane(t, primary0(t), PVDC_PS_DST_SIZE, PVDC_XY(MODE_W, 1));
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_PITCH, PVDC_FB_SPAN_MAX + 1);
    return 0;
}

/* Aligned pitches, so that only their span breaks a rule. */
static unsigned int break_pitch_span(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_PITCH,
                  ROUND_UP(PVDC_FB_SPAN_MAX / MODE_H + 1, 64));
    return 0;
}

/* One Cb:Cr line of two Y lines, inside VRAM at any pitch */
static unsigned int break_chroma_pitch_span(PVDCTest *t)
{
    write_two_plane_overlay(t, PVDC_FMT_NV12);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_FB_SIZE, PVDC_XY(16, 2));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_SRC_H, FP16(2));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_DST_SIZE, PVDC_XY(16, 2));
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_CHROMA_PITCH, PVDC_FB_SPAN_MAX + 1);
    return 0;
}

static unsigned int break_offset_align(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_OFFSET, 2);
    return 0;
}

static unsigned int break_fb_bounds(PVDCTest *t)
{
    uint64_t size = (uint64_t)MODE_PITCH * (MODE_H - 1) + MODE_PITCH;

    /* Ends 64 bytes past the end of VRAM. */
    pvdc_wr_plane(t, primary0(t), PVDC_PS_FB_OFFSET, t->vram_size - size + 64);
    return 0;
}

static unsigned int break_src_rect(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_SRC_X, FP16(1));
    return 0;
}

static unsigned int break_dst_rect(PVDCTest *t)
{
    uint32_t max_w = PVDC_X(pvdc_rd(t, PVDC_REG_MAX_SIZE));

    pvdc_wr_plane(t, primary0(t), PVDC_PS_DST_POS, PVDC_XY(-(int)max_w - 1, 0));
    return 0;
}

static unsigned int break_cursor(PVDCTest *t)
{
    write_cursor(t, cursor0(t), 0);
    /* 2x upscaling is within the limits, but a cursor never scales */
    pvdc_wr_plane(t, cursor0(t), PVDC_PS_SRC_W, FP16(MODE_W / 2));
    pvdc_wr_plane(t, cursor0(t), PVDC_PS_SRC_H, FP16(MODE_H / 2));
    return 0;
}

static unsigned int break_scale_ratio(PVDCTest *t)
{
    pvdc_wr_plane(t, primary0(t), PVDC_PS_DST_SIZE,
                  PVDC_XY(MODE_W / 5, MODE_H));
    return 0;
}

static unsigned int break_zpos_range(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, t->overlays + 2);
    return 0;
}

static unsigned int break_zpos_unique(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_write_plane(t, pvdc_plane_of(t, 0, OVERLAY(1)), 0, 0, 1);
    return 0;
}

static unsigned int break_scalers(PVDCTest *t)
{
    uint64_t reg = PVDC_PLANE_SHADOW(primary0(t)) + PVDC_PS_DST_SIZE;

    pvdc_wr(t, reg, PVDC_XY(MODE_W / 2, MODE_H / 2));
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    pvdc_wr_plane(t, overlay0(t), PVDC_PS_DST_SIZE,
                  PVDC_XY(MODE_W / 2, MODE_H / 2));
    return 0;
}

static unsigned int break_bandwidth(PVDCTest *t)
{
    pvdc_write_plane(t, overlay0(t), 0, 0, 1);
    return 0;
}

static const RuleCase rule_cases[] = {
    { "head-reserved-bits", break_head_reserved, PVDC_ERR_HEAD_RESERVED,
      no_plane },
    { "invalid-mode", break_mode, PVDC_ERR_MODE, no_plane },
    /* pvdc series: color */
    { "color-lut-size-out-of-range", break_color_lut_size, PVDC_ERR_COLOR,
      no_plane },
    { "color-lut-misaligned", break_color_lut_align, PVDC_ERR_COLOR,
      no_plane },
    { "color-matrix-past-vram", break_color_ctm_bounds, PVDC_ERR_COLOR,
      no_plane },
    { "color-on-a-head-being-enabled", break_color_on_enable, PVDC_ERR_COLOR,
      no_plane },
    /* pvdc series: end color */
    { "writeback-on-a-disabled-head", break_wb_disabled_head,
      PVDC_ERR_WRITEBACK, no_plane },
    { "writeback-format-not-taken", break_wb_format, PVDC_ERR_WRITEBACK,
      no_plane },
    { "writeback-offset-misaligned", break_wb_offset_align,
      PVDC_ERR_WRITEBACK, no_plane },
    { "writeback-pitch-misaligned", break_wb_pitch_align, PVDC_ERR_WRITEBACK,
      no_plane },
    { "writeback-pitch-smaller-than-a-line", break_wb_pitch_small,
      PVDC_ERR_WRITEBACK, no_plane },
    { "writeback-past-vram", break_wb_bounds, PVDC_ERR_WRITEBACK, no_plane },
    { "writeback-on-a-head-being-enabled", break_wb_on_enable,
      PVDC_ERR_WRITEBACK, no_plane },
    { "connector-past-num-connectors", break_connector_range,
      PVDC_ERR_CONNECTOR, no_plane },
    { "connector-0xffffffff", break_connector_all_ones, PVDC_ERR_CONNECTOR,
      no_plane },
    { "connector-driven-by-an-active-head", break_connector_taken,
      PVDC_ERR_CONNECTOR, no_plane },
    { "timing-change-on-enabled-head", break_modeset_required,
      PVDC_ERR_MODESET_REQUIRED, no_plane },
    { "connector-change-on-enabled-head", break_connector_change,
      PVDC_ERR_MODESET_REQUIRED, no_plane },
    { "bandwidth-change-on-enabled-head", break_bandwidth_change,
      PVDC_ERR_BANDWIDTH_CHANGE, no_plane },
    { "bandwidth-allocation-over-total", break_bandwidth_alloc,
      PVDC_ERR_BANDWIDTH_ALLOC, no_plane },
    { "plane-reserved-control-bits", break_plane_ctrl, PVDC_ERR_PLANE_CTRL,
      overlay0 },
    { "plane-blend-mode-3", break_plane_ctrl_blend, PVDC_ERR_PLANE_CTRL,
      overlay0 },
    { "cursor-rotation", break_plane_ctrl_cursor_rotation,
      PVDC_ERR_PLANE_CTRL, cursor0 },
    { "primary-on-foreign-head", break_plane_head, PVDC_ERR_PLANE_HEAD,
      primary1 },
    { "plane-enabled-on-other-head", break_plane_busy, PVDC_ERR_PLANE_BUSY,
      overlay0 },
    { "plane-disabled-away-from-the-head-showing-it",
      break_plane_busy_disabled, PVDC_ERR_PLANE_BUSY, overlay0 },
    { "plane-on-disabled-head", break_head_disabled, PVDC_ERR_HEAD_DISABLED,
      primary0 },
    { "plane-left-on-head-being-disabled", break_head_disabled_outside_commit,
      PVDC_ERR_HEAD_DISABLED, overlay0 },
    { "format-not-accepted-by-plane", break_format, PVDC_ERR_FORMAT,
      primary0 },
    { "nv12-on-a-primary-plane", break_format_nv12_primary, PVDC_ERR_FORMAT,
      primary0 },
    { "p010-on-a-cursor-plane", break_format_p010_cursor, PVDC_ERR_FORMAT,
      cursor0 },
    { "color-encoding-3", break_color_encoding, PVDC_ERR_PLANE_CTRL,
      overlay0 },
    { "color-encoding-3-on-an-rgb-plane", break_color_encoding_rgb,
      PVDC_ERR_PLANE_CTRL, primary0 },
    { "misaligned-chroma-offset", break_chroma_offset_align,
      PVDC_ERR_CHROMA, overlay0 },
    { "chroma-pitch-smaller-than-a-line", break_chroma_pitch_small,
      PVDC_ERR_CHROMA, overlay0 },
    { "misaligned-chroma-pitch", break_chroma_pitch_align, PVDC_ERR_CHROMA,
      overlay0 },
    { "chroma-plane-past-vram", break_chroma_bounds, PVDC_ERR_CHROMA,
      overlay0 },
    { "one-chroma-line-pitch-of-2^31", break_chroma_pitch_span,
      PVDC_ERR_CHROMA, overlay0 },
    { "zero-framebuffer-width", break_fb_size, PVDC_ERR_FB_SIZE, primary0 },
    { "odd-yuyv-width", break_fb_size_yuyv_odd, PVDC_ERR_FB_SIZE, overlay0 },
    { "pitch-smaller-than-a-line", break_pitch, PVDC_ERR_PITCH, primary0 },
    { "misaligned-pitch", break_pitch_alignment, PVDC_ERR_PITCH, primary0 },
    { "one-line-pitch-of-2^31", break_pitch_one_line_2g, PVDC_ERR_PITCH,
      primary0 },
    { "pitch-times-height-past-2^31-1", break_pitch_span, PVDC_ERR_PITCH,
      primary0 },
    { "misaligned-offset", break_offset_align, PVDC_ERR_OFFSET_ALIGN,
      primary0 },
    { "framebuffer-past-vram", break_fb_bounds, PVDC_ERR_FB_BOUNDS,
      primary0 },
    { "source-outside-framebuffer", break_src_rect, PVDC_ERR_SRC_RECT,
      primary0 },
    { "destination-out-of-range", break_dst_rect, PVDC_ERR_DST_RECT,
      primary0 },
    { "scaled-cursor", break_cursor, PVDC_ERR_CURSOR, cursor0 },
    { "downscale-beyond-limit", break_scale_ratio, PVDC_ERR_SCALE_RATIO,
      primary0 },
    { "zpos-out-of-range", break_zpos_range, PVDC_ERR_ZPOS, overlay0 },
    { "zpos-not-unique", break_zpos_unique, PVDC_ERR_ZPOS, overlay0 },
    { "more-scaled-planes-than-scalers", break_scalers, PVDC_ERR_SCALERS,
      overlay0 },
    { "planes-over-head-bandwidth", break_bandwidth, PVDC_ERR_BANDWIDTH,
      no_plane },
};

static void test_rule(const void *opaque)
{
    const RuleCase *rule = opaque;
    uint32_t expect, status;
    PVDCSnapshot before;
    unsigned int head;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    (void)pvdc_rd(&t, PVDC_REG_INT_ACK);

    head = rule->breaks(&t);
    pvdc_snapshot_active(&t, &before);
    pvdc_doorbell(&t, head);
    expect = pvdc_result_of(rule->code, rule->plane(&t));
    g_assert_cmphex(pvdc_wait_outcome(&t, head, 2 * SCALE_MS), ==, expect);
    pvdc_assert_active_is(&t, &before);

    status = pvdc_rd(&t, PVDC_REG_INT_STATUS);
    g_assert_cmphex(status, ==, PVDC_INT(head, PVDC_INT_COMMIT_REJECTED));
    pvdc_test_stop(&t);
}

/*
 * The bandwidth a plane needs counts NV12 at 1.5 and P010 at 3 bytes per
 * pixel, exactly: head 0 has 8 KiB left next to its primary plane, an
 * unscaled overlay of w x h pixels fits or not by the exact product.
 */
static void test_ycbcr_bandwidth_is_exact(void)
{
    static const struct {
        uint32_t format, w, h;
        bool fits;
    } fbs[] = {
        { PVDC_FMT_NV12, 80, 68, true },    /* 8160 bytes (2 bpp: 10880) */
        { PVDC_FMT_NV12, 84, 65, true },    /* 8190 bytes */
        { PVDC_FMT_NV12, 80, 70, false },   /* 8400 bytes (1 bpp: 5600) */
        { PVDC_FMT_NV12, 91, 61, false },   /* 8326.5 bytes */
        { PVDC_FMT_P010, 52, 52, true },    /* 8112 bytes (4 bpp: 10816) */
        { PVDC_FMT_P010, 56, 50, false },   /* 8400 bytes (2 bpp: 5600) */
        { PVDC_FMT_P010, 45, 61, false },   /* 8235 bytes */
    };
    unsigned int ov;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    ov = overlay0(&t);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    for (int i = 0; i < ARRAY_SIZE(fbs); i++) {
        uint32_t w = fbs[i].w, h = fbs[i].h;
        uint32_t bps = 4, expect;

        if (fbs[i].format == PVDC_FMT_NV12) {
            bps = 2;
        }

        pvdc_write_plane(&t, ov, 0, 0, 1);
        pvdc_write_fb(&t, ov, fbs[i].format, 0, ROUND_UP(w * bps / 2, 64), w,
                      h);
        pvdc_wr_plane(&t, ov, PVDC_PS_CHROMA_OFFSET, 1 * MiB);
        pvdc_wr_plane(&t, ov, PVDC_PS_CHROMA_PITCH,
                      ROUND_UP(DIV_ROUND_UP(w, 2) * bps, 64));
        expect = fbs[i].fits ? PVDC_RESULT_APPLIED
                             : pvdc_head_result(PVDC_ERR_BANDWIDTH);
        g_assert_cmphex(pvdc_commit(&t, 0), ==, expect);
        pvdc_wr_plane(&t, ov, PVDC_PS_CTRL, 0);
        g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    }
    pvdc_test_stop(&t);
}

/* pvdc series: color */
/*
 * A disabled head ignores its colour stages, as it does its timings: any
 * value is taken, and read back in the active window.  Enabled, the same
 * values are refused; valid ones on an enabled head are no modeset.
 */
static void test_color_on_disabled_head_is_ignored(void)
{
    static const uint32_t regs[][2] = {
        { PVDC_HS_DEGAMMA_LUT, 0xfffffffc },
        { PVDC_HS_CTM, 0x3 },
        { PVDC_HS_GAMMA_LUT, 0xffffffff },
        { PVDC_HS_LUT_SIZES, PVDC_XY(0, 0xffff) },
        { PVDC_HS_CTRL, PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM |
                        PVDC_HS_CTRL_GAMMA },
    };
    int64_t t0;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    for (unsigned int i = 0; i < ARRAY_SIZE(regs); i++) {
        pvdc_wr_head(&t, 1, regs[i][0], regs[i][1]);
    }
    g_assert_cmphex(pvdc_commit(&t, 1), ==, PVDC_RESULT_APPLIED);
    for (unsigned int i = 0; i < ARRAY_SIZE(regs); i++) {
        g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(1) + regs[i][0]), ==,
                        regs[i][1]);
        g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_SHADOW(1) + regs[i][0]), ==,
                        regs[i][1]);
    }
    pvdc_write_mode(&t, 1, CLOCK_1MS);
    pvdc_wr_head(&t, 1, PVDC_HS_CTRL, PVDC_HS_CTRL_VALID_MASK);
    g_assert_cmphex(pvdc_commit(&t, 1), ==, pvdc_head_result(PVDC_ERR_COLOR));

    /* turned on and off on an enabled head: applied, timeline kept */
    t0 = pvdc_enable_head(&t, 0, CLOCK_1MS);
    write_color_regs(&t, 0, PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM |
                     PVDC_HS_CTRL_GAMMA, PVDC_XY(2, 2));
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmphex(pvdc_rd(&t, PVDC_HEAD_ACTIVE(0) + PVDC_HS_CTRL), ==,
                    PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_DEGAMMA |
                    PVDC_HS_CTRL_CTM | PVDC_HS_CTRL_GAMMA);
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    g_assert_cmphex(pvdc_commit(&t, 0), ==, PVDC_RESULT_APPLIED);
    g_assert_cmpuint(pvdc_head_ctl(&t, 0, PVDC_HEAD_VBLANK_COUNT), ==,
                     (pvdc_now_ns(&t) - t0) / PERIOD_1MS);
    pvdc_test_stop(&t);
}

/* pvdc series: end color */
/* A commit breaking several rules reports the first in the documented order. */
static void test_first_broken_rule_is_reported(void)
{
    unsigned int primary, overlay;
    PVDCSnapshot before;
    PVDCTest t;

    pvdc_test_start(&t, RULE_PROPS);
    primary = primary0(&t);
    overlay = overlay0(&t);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_snapshot_active(&t, &before);

    /* MODE, then CONNECTOR, then MODESET_REQUIRED. */
    pvdc_wr_head(&t, 0, PVDC_HS_PIXEL_CLOCK, CLOCK_2MS);
    pvdc_wr_head(&t, 0, PVDC_HS_CONNECTOR, t.heads);
    pvdc_wr_head(&t, 0, PVDC_HS_HSYNC, PVDC_XY(MODE_W - 1, MODE_W + 6));
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_MODE));
    pvdc_wr_head(&t, 0, PVDC_HS_HSYNC, PVDC_XY(MODE_W, MODE_HTOTAL));
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_CONNECTOR));
    pvdc_wr_head(&t, 0, PVDC_HS_CONNECTOR, 0);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_MODESET_REQUIRED));
    /* CONNECTOR before BANDWIDTH_ALLOC, on a head being enabled... */
    pvdc_write_mode(&t, 1, CLOCK_1MS);
    pvdc_wr_head(&t, 1, PVDC_HS_CONNECTOR, 0);
    pvdc_wr_head(&t, 1, PVDC_HS_BANDWIDTH, 2 * RULE_HEAD_BANDWIDTH);
    /* pvdc series: color */
    /* ...and before COLOR */
    write_color_regs(&t, 1, PVDC_HS_CTRL_GAMMA, PVDC_XY(0, 0));
    /* pvdc series: end color */
    pvdc_doorbell(&t, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_CONNECTOR));
    pvdc_wr_head(&t, 1, PVDC_HS_CONNECTOR, 1);
    pvdc_doorbell(&t, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_ALLOC));
    pvdc_wr_head(&t, 1, PVDC_HS_CTRL, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_PIXEL_CLOCK, CLOCK_1MS);

    /* Head rules come before plane rules. */
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_PITCH, 4);
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH, 1);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_CHANGE));
    /* pvdc series: color */
    /* The colour rule is the last head rule. */
    write_color_regs(&t, 0, PVDC_HS_CTRL_GAMMA, PVDC_XY(0, 0));
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH_CHANGE));
    /* pvdc series: end color */
    pvdc_wr(&t, PVDC_HEAD_SHADOW(0) + PVDC_HS_BANDWIDTH, RULE_HEAD_BANDWIDTH);
    /* Writeback is the last head rule. */
    pvdc_wr_head(&t, 0, PVDC_HS_WB_FORMAT, PVDC_FMT_XRGB8888);
    pvdc_wr_head(&t, 0, PVDC_HS_WB_PITCH, 4);
    /* pvdc series: color */
    /* After the colour rule. */
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_GAMMA |
                                 PVDC_HS_CTRL_WRITEBACK);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_COLOR));
    /* pvdc series: end color */
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE |
                                 PVDC_HS_CTRL_WRITEBACK);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_WRITEBACK));
    pvdc_wr_head(&t, 0, PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    /* pvdc series: color */
    pvdc_wr_head(&t, 0, PVDC_HS_LUT_SIZES, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_DEGAMMA_LUT, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_CTM, 0);
    pvdc_wr_head(&t, 0, PVDC_HS_GAMMA_LUT, 0);
    /* pvdc series: end color */

    /* Within a plane: PITCH before OFFSET_ALIGN before SRC_RECT. */
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_OFFSET, 2);
    pvdc_wr_plane(&t, primary, PVDC_PS_SRC_W, 0);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_result_of(PVDC_ERR_PITCH, primary));
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_PITCH, MODE_PITCH);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_result_of(PVDC_ERR_OFFSET_ALIGN, primary));

    /* Planes in index order, whatever their rule; sums last. */
    pvdc_write_plane(&t, overlay, 0, 0, 1);
    pvdc_wr_plane(&t, overlay, PVDC_PS_FORMAT, 0);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_result_of(PVDC_ERR_OFFSET_ALIGN, primary));
    pvdc_wr_plane(&t, primary, PVDC_PS_FB_OFFSET, 0);
    pvdc_wr_plane(&t, primary, PVDC_PS_SRC_W, FP16(MODE_W));
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_result_of(PVDC_ERR_FORMAT, overlay));
    pvdc_wr_plane(&t, overlay, PVDC_PS_FORMAT, PVDC_FMT_XRGB8888);
    pvdc_doorbell(&t, 0);
    g_assert_cmphex(pvdc_wait_outcome(&t, 0, 2 * SCALE_MS), ==,
                    pvdc_head_result(PVDC_ERR_BANDWIDTH));
    pvdc_assert_active_is(&t, &before);
    pvdc_test_stop(&t);
}

/* The zpos rule compares against planes the commit does not carry, too. */
static void test_zpos_clash_with_plane_outside_commit(void)
{
    PVDCSnapshot before;
    PVDCTest t;

    pvdc_test_start(&t, "heads=2,overlays=2");
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    pvdc_enable_head(&t, 1, CLOCK_1MS);
    /* Overlay 0 of head 0, committed on head 1 at zpos 1. */
    pvdc_write_plane(&t, overlay0(&t), 1, 0, 1);
    pvdc_doorbell(&t, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 2 * SCALE_MS), ==,
                    PVDC_RESULT_APPLIED);
    /* Head 1's own overlay at zpos 1 too, committed through head 1. */
    pvdc_write_plane(&t, pvdc_plane_of(&t, 1, OVERLAY(0)), 1, 0, 1);
    pvdc_wr_plane(&t, overlay0(&t), PVDC_PS_HEAD, 0);
    pvdc_wr_plane(&t, overlay0(&t), PVDC_PS_CTRL, 0);
    pvdc_snapshot_active(&t, &before);
    /*
     * Overlay 0 of head 0 now shadows HEAD 0 so it is not in head 1's
     * commit: its active state (enabled, zpos 1 on head 1) clashes.
     */
    pvdc_doorbell(&t, 1);
    g_assert_cmphex(pvdc_wait_outcome(&t, 1, 2 * SCALE_MS), ==,
                    pvdc_result_of(PVDC_ERR_ZPOS,
                                   pvdc_plane_of(&t, 1, OVERLAY(0))));
    pvdc_assert_active_is(&t, &before);
    pvdc_test_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    for (int i = 0; i < ARRAY_SIZE(rule_cases); i++) {
        g_autofree char *path =
            g_strdup_printf("/pvdc/rules/%s-is-rejected", rule_cases[i].name);

        qtest_add_data_func(path, &rule_cases[i], test_rule);
    }
    qtest_add_func("/pvdc/rules/ycbcr-bandwidth-counts-exact-bytes-per-pixel",
                   test_ycbcr_bandwidth_is_exact);
    /* pvdc series: color */
    qtest_add_func("/pvdc/rules/color-on-a-disabled-head-is-ignored",
                   test_color_on_disabled_head_is_ignored);
    /* pvdc series: end color */
    qtest_add_func("/pvdc/rules/first-broken-rule-in-order-is-reported",
                   test_first_broken_rule_is_reported);
    qtest_add_func("/pvdc/rules/zpos-clash-with-plane-outside-commit"
                   "-is-rejected",
                   test_zpos_clash_with_plane_outside_commit);

    return g_test_run();
}
