/*
 * pvdc: paravirtual display controller - the colour pipeline of a head.
 *
 * A doorbell copies the LUTs and the CTM its armed state enables out of
 * VRAM or a binding (pvdc_color_arm()), and derives the pipeline the
 * composition engine applies (pvdc-compose-color.c); the latch point moves
 * them to the active state.  A migration stream carries the copies, and
 * the destination derives the pipeline again.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "pvdc-compose.h"
#include "pvdc-internal.h"
#include "trace.h"

void pvdc_color_clear(PVDCHeadColor *c)
{
    g_free(c->degamma);
    g_free(c->gamma);
    if (!c->shared) {
        pvdc_compose_color_free(c->pipeline);
    }
    memset(c, 0, sizeof(*c));
}

/* A table as copied (little-endian struct drm_color_lut) for the engine. */
static PVDCComposeLutEntry *pvdc_lut_entries(const uint64_t *lut,
                                             uint32_t size)
{
    PVDCComposeLutEntry *e = g_new(PVDCComposeLutEntry, size);

    for (uint32_t i = 0; i < size; i++) {
        e[i].red = extract64(lut[i], 0, 16);
        e[i].green = extract64(lut[i], 16, 16);
        e[i].blue = extract64(lut[i], 32, 16);
        e[i].reserved = extract64(lut[i], 48, 16);
    }
    return e;
}

bool pvdc_color_derive(PVDCHeadColor *c)
{
    g_autofree PVDCComposeLutEntry *degamma = NULL;
    g_autofree PVDCComposeLutEntry *gamma = NULL;
    PVDCComposeColorDesc desc = {};

    if (!c->shared) {
        pvdc_compose_color_free(c->pipeline);
    }
    c->pipeline = NULL;
    c->shared = false;
    if (!c->degamma_size && !c->gamma_size && !c->has_ctm) {
        return true;
    }
    if (c->degamma_size) {
        degamma = pvdc_lut_entries(c->degamma, c->degamma_size);
        desc.degamma = degamma;
        desc.degamma_size = c->degamma_size;
    }
    if (c->gamma_size) {
        gamma = pvdc_lut_entries(c->gamma, c->gamma_size);
        desc.gamma = gamma;
        desc.gamma_size = c->gamma_size;
    }
    desc.ctm = c->has_ctm ? c->ctm : NULL;
    c->pipeline = pvdc_compose_color_new(&desc);
    return c->pipeline;
}

/*
 * What @r makes a doorbell copy: the stages it enables on an enabled
 * head, if their registers are valid (else the commit is refused at its
 * latch point and needs nothing).
 */
static void pvdc_color_expected(PVDCState *s, const PVDCHeadRegs *r,
                                uint32_t *degamma_size, bool *has_ctm,
                                uint32_t *gamma_size)
{
    bool copy = FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, ENABLE) &&
                pvdc_color_valid(s, r);

    *degamma_size = copy && FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, DEGAMMA) ?
                    FIELD_EX32(r->regs[R_HS_LUT_SIZES], XY, X) : 0;
    *has_ctm = copy && FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, CTM);
    *gamma_size = copy && FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, GAMMA) ?
                  FIELD_EX32(r->regs[R_HS_LUT_SIZES], XY, Y) : 0;
}

/* Decode @n little-endian u64 at @src into @dst. */
static void pvdc_color_words(const uint8_t *src, uint32_t n, uint64_t *dst)
{
    for (uint32_t i = 0; i < n; i++) {
        dst[i] = ldq_le_p(src + (uint64_t)i * sizeof(uint64_t));
    }
}

/*
 * Copy @n little-endian u64 at @offset, which pvdc_color_valid() placed
 * wholly in VRAM or in one binding, into @dst.  False if they lie in a
 * binding while bus mastering is off, or in one that lost its RAM: the
 * device reads nothing then.
 */
static bool pvdc_copy_color(PVDCState *s, uint32_t offset, uint32_t n,
                            uint64_t *dst)
{
    const uint8_t *vram = memory_region_get_ram_ptr(&s->vram);
    /* pvdc series: memory */
    uint64_t len = (uint64_t)n * sizeof(uint64_t);

    if ((uint64_t)offset + len > s->conf.vram_size) {
        g_autofree uint8_t *raw = g_malloc(len);

        if (!pvdc_memory_load(s, offset, len, raw)) {
            qemu_log_mask(LOG_GUEST_ERROR, "pvdc: bus mastering is off, "
                          "or the RAM under it is gone: the colour table at "
                          "0x%x is not read, its stage is bypassed\n",
                          offset);
            return false;
        }
        pvdc_color_words(raw, n, dst);
        return true;
    }
    /* pvdc series: end memory */

    pvdc_color_words(vram + offset, n, dst);
    return true;
}

/* The LUT of @size entries at @offset, or NULL (*@size 0) if unread. */
static uint64_t *pvdc_copy_lut(PVDCState *s, uint32_t offset, uint32_t *size)
{
    uint64_t *lut = g_new(uint64_t, *size);

    QEMU_BUILD_BUG_ON(PVDC_LUT_ENTRY_SIZE != sizeof(uint64_t));
    if (!pvdc_copy_color(s, offset, *size, lut)) {
        g_free(lut);
        *size = 0;
        return NULL;
    }
    return lut;
}

/* Whether @a and @b hold the same tables and matrix. */
static bool pvdc_color_same(const PVDCHeadColor *a, const PVDCHeadColor *b)
{
    return a->degamma_size == b->degamma_size &&
           a->gamma_size == b->gamma_size && a->has_ctm == b->has_ctm &&
           (!a->degamma_size ||
            !memcmp(a->degamma, b->degamma,
                    a->degamma_size * sizeof(uint64_t))) &&
           (!a->gamma_size ||
            !memcmp(a->gamma, b->gamma, a->gamma_size * sizeof(uint64_t))) &&
           (!a->has_ctm || !memcmp(a->ctm, b->ctm, sizeof(a->ctm)));
}

/*
 * Copy the tables and the matrix of the armed state of @head from VRAM.
 * Deriving with a matrix costs about a composition: a commit that keeps
 * the active pipeline (a page flip) shares it, and an amend that keeps
 * the armed one takes it over.
 */
void pvdc_color_arm(PVDCState *s, PVDCHead *head)
{
    const PVDCHeadRegs *r = &head->armed;
    PVDCHeadColor new = {}, *c = &new;

    pvdc_color_expected(s, r, &c->degamma_size, &c->has_ctm,
                        &c->gamma_size);
    if (c->degamma_size) {
        c->degamma = pvdc_copy_lut(s, r->regs[R_HS_DEGAMMA_LUT],
                                   &c->degamma_size);
    }
    if (c->gamma_size) {
        c->gamma = pvdc_copy_lut(s, r->regs[R_HS_GAMMA_LUT], &c->gamma_size);
    }
    if (c->has_ctm) {
        QEMU_BUILD_BUG_ON(sizeof(c->ctm) != PVDC_CTM_SIZE);
        c->has_ctm = pvdc_copy_color(s, r->regs[R_HS_CTM], ARRAY_SIZE(c->ctm),
                                     c->ctm);
    }
    if (head->active_color.pipeline &&
        pvdc_color_same(c, &head->active_color)) {
        c->pipeline = head->active_color.pipeline;
        c->shared = true;
    } else if (head->armed_color.pipeline && !head->armed_color.shared &&
               pvdc_color_same(c, &head->armed_color)) {
        c->pipeline = head->armed_color.pipeline;
        head->armed_color.pipeline = NULL;
    } else {
        /* The sizes were checked: deriving cannot fail. */
        pvdc_color_derive(c);
    }
    pvdc_color_clear(&head->armed_color);
    head->armed_color = new;
    if (c->pipeline) {
        trace_pvdc_color_armed(head->index, c->degamma_size, c->has_ctm,
                               c->gamma_size, c->shared,
                               pvdc_compose_color_active(c->pipeline));
    }
}

void pvdc_color_latch(PVDCHead *head)
{
    if (head->armed_color.shared) {
        /* the same pipeline: it stays, owned by the active state */
        head->active_color.pipeline = NULL;
        head->armed_color.shared = false;
    } else if (head->active_color.pipeline ||
               head->armed_color.pipeline) {
        /* The console must not take the new pipeline for the old. */
        pvdc_console_color_changed(head);
    }
    pvdc_color_clear(&head->active_color);
    head->active_color = head->armed_color;
    memset(&head->armed_color, 0, sizeof(head->armed_color));
}

void pvdc_color_reset(PVDCHead *head)
{
    if (head->active_color.pipeline) {
        pvdc_console_color_changed(head);
    }
    pvdc_color_clear(&head->armed_color);
    pvdc_color_clear(&head->active_color);
}

/*
 * A stage of @n bytes at @offset that a doorbell copied (@copied) as it
 * expected to (@expected), or bypassed: in a binding, with bus mastering
 * off at the doorbell.
 */
static bool pvdc_color_stage_matches(PVDCState *s, bool expected,
                                     bool copied, uint32_t offset, uint64_t n)
{
    return expected == copied ||
           (expected && (uint64_t)offset + n > s->conf.vram_size);
}

/* Whether loaded tables @c are what a doorbell would have copied for @r. */
bool pvdc_color_matches(PVDCState *s, const PVDCHeadRegs *r,
                        const PVDCHeadColor *c)
{
    uint32_t degamma_size, gamma_size;
    bool has_ctm;

    pvdc_color_expected(s, r, &degamma_size, &has_ctm, &gamma_size);
    return (c->degamma_size == degamma_size || !c->degamma_size) &&
           (c->gamma_size == gamma_size || !c->gamma_size) &&
           pvdc_color_stage_matches(s, degamma_size, c->degamma_size,
                                    r->regs[R_HS_DEGAMMA_LUT],
                                    (uint64_t)degamma_size *
                                    PVDC_LUT_ENTRY_SIZE) &&
           pvdc_color_stage_matches(s, has_ctm, c->has_ctm, r->regs[R_HS_CTM],
                                    PVDC_CTM_SIZE) &&
           pvdc_color_stage_matches(s, gamma_size, c->gamma_size,
                                    r->regs[R_HS_GAMMA_LUT],
                                    (uint64_t)gamma_size *
                                    PVDC_LUT_ENTRY_SIZE);
}
