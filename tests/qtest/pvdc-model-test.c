/*
 * QTest cases for pvdc against its reference model (pvdc-model.c): random
 * register writes, doorbells, amends and clock steps, after each of which the
 * device's active state must be the model's.
 *
 * Two promises are checked directly on the device as well, without the
 * model: between latch points no active register changes, and a latch
 * changes nothing of a head outside the latching group (its head state,
 * and every plane it shows, bit for bit).
 *
 * Bindings of guest pages come and go among the other steps: BIND and
 * UNBIND's status (busy among them) is the model's after each, and
 * planes, writeback targets and colour tables now and then lie in one.
 * Nothing is composed here, so every entry points into a few pages.
 *
 * Time only moves through the qtest clock.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-model.h"

typedef struct Random {
    GRand *rng;
    PVDCTest t;
    Model m;
    /* latched groups seen, and the latches that moved a plane */
    unsigned int latches, moves;
    /* enables latched where the model said, a frame after the doorbell */
    unsigned int timed_enables;
} Random;

static void random_write(Random *r, uint32_t addr, uint32_t val)
{
    pvdc_wr(&r->t, addr, val);
    r->m.now = pvdc_now_ns(&r->t);
    model_write(&r->m, addr, val);
}

/* Bindings: in BIND_SLOTS slots of BIND_SLOT bytes above VRAM. */
#define BIND_PAGE           PVDC_BIND_PAGE_SIZE
#define BIND_SLOT           (64 * KiB)
#define BIND_SLOTS          8
#define BIND_TABLE          (1 * MiB)               /* guest RAM */
#define BIND_POOL           (2 * MiB)               /* guest RAM */
#define BIND_MAX_ENTRIES    4

/*
 * Somewhere in a binding, @align-aligned, if there is one and the dice
 * say so (1 in @odds); else @otherwise.
 */
static uint32_t random_in_binding(Random *r, uint32_t align, int odds,
                                  uint32_t otherwise)
{
    const ModelBinding *b;

    if (!r->m.num_bindings || g_rand_int_range(r->rng, 0, odds)) {
        return otherwise;
    }
    b = &r->m.bindings[g_rand_int_range(r->rng, 0, r->m.num_bindings)];
    return b->addr + ROUND_DOWN(g_rand_int_range(r->rng, 0, b->size), align);
}

/*
 * BIND a range, mostly in a slot of its own, at times across the next
 * (overlap), misaligned, or with a table whose entries break a rule; or
 * UNBIND one, mostly a binding.  The status is the model's.
 */
static void random_bind(Random *r)
{
    Model *m = &r->m;
    GRand *rng = r->rng;
    uint64_t e[2 * BIND_MAX_ENTRIES];
    uint32_t addr, pages, n, left;
    uint32_t cmd = PVDC_BIND_CMD_BIND;

    if (m->num_bindings && g_rand_int_range(rng, 0, 3) == 0) {
        const ModelBinding *b =
            &m->bindings[g_rand_int_range(rng, 0, m->num_bindings)];

        cmd = PVDC_BIND_CMD_UNBIND;
        addr = b->addr;
        pages = b->size / BIND_PAGE +
                (g_rand_int_range(rng, 0, 8) ? 0 : 1);
        n = 0;
    } else {
        addr = m->vram + g_rand_int_range(rng, 0, BIND_SLOTS) * BIND_SLOT +
               (g_rand_int_range(rng, 0, 4) ? 0 : BIND_PAGE);
        addr += g_rand_int_range(rng, 0, 16) ? 0 : BIND_PAGE / 2;
        pages = g_rand_int_range(rng, 1, BIND_SLOT / BIND_PAGE + 1);
        n = g_rand_int_range(rng, 1, MIN(pages, BIND_MAX_ENTRIES) + 1);
        left = pages;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t len = i == n - 1 ? left :
                           g_rand_int_range(rng, 1, left - (n - 1 - i) + 1);

            e[2 * i] = BIND_POOL + BIND_PAGE * g_rand_int_range(rng, 0, 4);
            e[2 * i + 1] = (uint64_t)len * BIND_PAGE;
            left -= len;
        }
        if (g_rand_int_range(rng, 0, 12) == 0) {
            e[2 * (n - 1) + 1] += BIND_PAGE;        /* too long */
        }
        pvdc_write_bind_table(&r->t, BIND_TABLE, e, n);
        model_bind_table(m, BIND_TABLE, e, n);
    }
    random_write(r, PVDC_REG_BIND_ADDR, addr);
    random_write(r, PVDC_REG_BIND_SIZE, pages * BIND_PAGE);
    random_write(r, PVDC_REG_BIND_TABLE_LO, BIND_TABLE);
    random_write(r, PVDC_REG_BIND_TABLE_HI, 0);
    random_write(r, PVDC_REG_BIND_ENTRIES, n);
    random_write(r, PVDC_REG_BIND_CMD, cmd);
    g_assert_cmphex(pvdc_rd(&r->t, PVDC_REG_BIND_STATUS), ==, m->bind_status);
    g_assert_cmpuint(pvdc_statistic(r->t.qts, "x-bindings"), ==,
                     m->num_bindings);
}

/*
 * Write a consistent, mostly valid state for plane @p, so that a good
 * share of the random commits pass.
 */
static void random_plane(Random *r, unsigned int p)
{
    static const uint32_t overlay_formats[] = {
        PVDC_FMT_XRGB8888, PVDC_FMT_RGB565, PVDC_FMT_YUYV, PVDC_FMT_NV12,
        PVDC_FMT_P010,
    };
    Model *m = &r->m;
    GRand *rng = r->rng;
    int type = model_type(m, p);
    uint32_t fourcc = type == PVDC_PLANE_TYPE_CURSOR ? PVDC_FMT_ARGB8888 :
                      type == PVDC_PLANE_TYPE_PRIMARY ? PVDC_FMT_XRGB8888 :
                      overlay_formats[g_rand_int_range(rng, 0,
                                          ARRAY_SIZE(overlay_formats))];
    bool two_plane = model_chroma_bps(fourcc);
    /* two-plane framebuffers may have odd sizes */
    uint32_t w = 8 * g_rand_int_range(rng, 1, 9) -
                 (two_plane ? g_rand_int_range(rng, 0, 2) : 0);
    uint32_t h = 8 * g_rand_int_range(rng, 1, 7) -
                 (two_plane ? g_rand_int_range(rng, 0, 2) : 0);
    uint32_t cpp = model_cpp(fourcc);
    uint32_t cline = DIV_ROUND_UP(w, 2) * model_chroma_bps(fourcc);
    uint32_t ctrl = PVDC_PS_CTRL_ENABLE |
                    g_rand_int_range(rng, 0, 3) <<
                    PVDC_PS_CTRL_COLOR_ENCODING_SHIFT |
                    (g_rand_boolean(rng) ? PVDC_PS_CTRL_COLOR_RANGE_FULL : 0);
    uint32_t sw = g_rand_int_range(rng, 1, w + 1);
    uint32_t sh = g_rand_int_range(rng, 1, h + 1);
    bool unscaled = type == PVDC_PLANE_TYPE_CURSOR ||
                    g_rand_int_range(rng, 0, 4);
    uint32_t regs[PVDC_PLANE_STATE_REGS] = {
        [PS(PVDC_PS_CTRL)] = ctrl,
        [PS(PVDC_PS_HEAD)] = type == PVDC_PLANE_TYPE_OVERLAY ?
                             g_rand_int_range(rng, 0, m->heads) :
                             p / (m->overlays + 2),
        [PS(PVDC_PS_FORMAT)] = fourcc,
        [PS(PVDC_PS_FB_OFFSET)] = m->offset_align *
                                  g_rand_int_range(rng, 0, 4096),
        [PS(PVDC_PS_FB_PITCH)] = ROUND_UP(w * cpp, m->pitch_align) +
                                 m->pitch_align * g_rand_int_range(rng, 0, 2),
        [PS(PVDC_PS_FB_SIZE)] = PVDC_XY(w, h),
        [PS(PVDC_PS_SRC_X)] = FP16(w - sw),
        [PS(PVDC_PS_SRC_Y)] = FP16(h - sh),
        [PS(PVDC_PS_SRC_W)] = FP16(sw),
        [PS(PVDC_PS_SRC_H)] = FP16(sh),
        [PS(PVDC_PS_DST_POS)] = PVDC_XY(g_rand_int_range(rng, -70, 70),
                                        g_rand_int_range(rng, -50, 50)),
        [PS(PVDC_PS_DST_SIZE)] = unscaled ? PVDC_XY(sw, sh) :
                                 PVDC_XY(2 * sw, sh),
        [PS(PVDC_PS_ZPOS)] = g_rand_int_range(rng, 0, m->overlays + 2),
        [PS(PVDC_PS_ALPHA)] = g_rand_int(rng) & 0xffff,
        /* unused by one-plane formats: anything */
        [PS(PVDC_PS_CHROMA_OFFSET)] = !two_plane ? g_rand_int(rng) :
                                      m->offset_align *
                                      g_rand_int_range(rng, 0, 4096),
        [PS(PVDC_PS_CHROMA_PITCH)] = !two_plane ? g_rand_int(rng) :
                                     ROUND_UP(cline, m->pitch_align) +
                                     m->pitch_align *
                                     g_rand_int_range(rng, 0, 2),
    };

    /* Now and then in a binding, where it may fit or not. */
    regs[PS(PVDC_PS_FB_OFFSET)] = random_in_binding(r, m->offset_align, 4,
                                      regs[PS(PVDC_PS_FB_OFFSET)]);
    if (two_plane) {
        regs[PS(PVDC_PS_CHROMA_OFFSET)] =
            random_in_binding(r, m->offset_align, 6,
                              regs[PS(PVDC_PS_CHROMA_OFFSET)]);
    }

    /* Now and then a Cb:Cr plane that breaks a rule, or nearly. */
    switch (two_plane ? g_rand_int_range(rng, 0, 12) : -1) {
    case 0:
        regs[PS(PVDC_PS_CHROMA_OFFSET)] += m->offset_align / 2;
        break;
    case 1:
        regs[PS(PVDC_PS_CHROMA_PITCH)] = ROUND_DOWN(cline - 1,
                                                    m->pitch_align);
        break;
    case 2:
        regs[PS(PVDC_PS_CHROMA_PITCH)] += m->pitch_align / 2;
        break;
    case 3:
        /* ends at most a few lines past the end of VRAM */
        regs[PS(PVDC_PS_CHROMA_OFFSET)] = m->vram -
            regs[PS(PVDC_PS_CHROMA_PITCH)] * g_rand_int_range(rng, 1, 4);
        break;
    case 4:
        regs[PS(PVDC_PS_CHROMA_OFFSET)] = -m->offset_align *
                                          g_rand_int_range(rng, 1, 4);
        break;
    }
    for (unsigned int i = 0; i < PVDC_PLANE_STATE_REGS; i++) {
        random_write(r, PVDC_PLANE_SHADOW(p) + i * 4, regs[i]);
    }
}

/*
 * A connector no active-enabled head but @head drives, its own first if
 * @own; its own if there is none.
 */
static uint32_t random_free_connector(Model *m, GRand *rng, unsigned int head,
                                      bool own)
{
    uint32_t free = MAKE_64BIT_MASK(0, m->heads);
    unsigned int k, skip;

    for (k = 0; k < m->heads; k++) {
        if (k != head && model_on(m->ha[k]) &&
            m->ha[k][HS(PVDC_HS_CONNECTOR)] < m->heads) {
            free &= ~BIT(m->ha[k][HS(PVDC_HS_CONNECTOR)]);
        }
    }
    if (!free || (own && (free & BIT(head)))) {
        return head;
    }
    for (skip = g_rand_int_range(rng, 0, ctpop32(free)); skip; skip--) {
        free &= free - 1;
    }
    return ctz32(free);
}

/* A mostly valid value for a register, sometimes anything at all. */
static uint32_t random_value(Random *r, bool head, uint32_t reg,
                             unsigned int index, bool clean)
{
    static const uint32_t formats[] = {
        PVDC_FMT_XRGB8888, PVDC_FMT_ARGB8888, PVDC_FMT_RGB565,
        PVDC_FMT_YUYV, PVDC_FMT_XRGB2101010, PVDC_FMT_NV12, PVDC_FMT_P010,
    };
    Model *m = &r->m;
    GRand *rng = r->rng;
    uint32_t w = 16 * g_rand_int_range(rng, 1, 5);
    uint32_t h = 8 * g_rand_int_range(rng, 1, 7);

    if (!clean && g_rand_int_range(rng, 0, 20) == 0) {
        return g_rand_int(rng);
    }
    if (head) {
        switch (reg) {
        case PVDC_HS_CTRL:
            /* the colour stages and writeback in any combination */
            return (g_rand_int_range(rng, 0, 6) ? PVDC_HS_CTRL_ENABLE : 0) |
                   (g_rand_int_range(rng, 0, 3) ? 0 :
                    g_rand_int(rng) & PVDC_HS_CTRL_VALID_MASK &
                    ~PVDC_HS_CTRL_ENABLE);
        case PVDC_HS_DEGAMMA_LUT:
        case PVDC_HS_CTM:
        case PVDC_HS_GAMMA_LUT:
            /* sometimes misaligned, at the end of VRAM or near 2^32 */
            switch (g_rand_int_range(rng, 0, 9)) {
            case 8:
                return random_in_binding(r, PVDC_COLOR_ALIGN, 1, 0);
            case 0:
                return g_rand_int(rng) | 4;
            case 1:
                return m->vram - PVDC_COLOR_ALIGN *
                                 g_rand_int_range(rng, 1, 20);
            case 2:
                return -PVDC_COLOR_ALIGN * g_rand_int_range(rng, 1, 4);
            default:
                return PVDC_COLOR_ALIGN * g_rand_int_range(rng, 0, 4096);
            }
        case PVDC_HS_LUT_SIZES: {
            static const uint32_t sizes[] = {
                0, 1, PVDC_LUT_MIN_SIZE, 17, 256, PVDC_LUT_MAX_SIZE,
                PVDC_LUT_MAX_SIZE + 1, 0xffff,
            };

            return PVDC_XY(sizes[g_rand_int_range(rng, 0, ARRAY_SIZE(sizes))],
                           sizes[g_rand_int_range(rng, 0,
                                                  ARRAY_SIZE(sizes))]);
        }
        case PVDC_HS_WB_FORMAT: {
            static const uint32_t wb_formats[] = {
                PVDC_FMT_XRGB8888, PVDC_FMT_ABGR8888, PVDC_FMT_RGB565, 0,
            };

            return wb_formats[g_rand_int_range(rng, 0,
                                               ARRAY_SIZE(wb_formats))];
        }
        case PVDC_HS_WB_OFFSET:
            /* sometimes misaligned, ending past VRAM or near 2^32 */
            switch (g_rand_int_range(rng, 0, 9)) {
            case 8:
                return random_in_binding(r, m->offset_align, 1, 0);
            case 0:
                return g_rand_int(rng) | 0x20;
            case 1:
                return m->vram - m->offset_align * g_rand_int_range(rng, 1,
                                                                    64);
            case 2:
                return -m->offset_align * g_rand_int_range(rng, 1, 4);
            default:
                return 8 * MiB + m->offset_align * g_rand_int_range(rng, 0,
                                                                    4096);
            }
        case PVDC_HS_WB_PITCH:
            return g_rand_int_range(rng, 0, 8) ?
                   m->pitch_align * g_rand_int_range(rng, 4, 7) :
                   g_rand_int_range(rng, 0, 512);
        case PVDC_HS_HTIMING:
            return PVDC_XY(MODE_W, MODE_HTOTAL);
        case PVDC_HS_HSYNC:
            return PVDC_XY(MODE_W + 2, MODE_W + 6);
        case PVDC_HS_VTIMING:
            return PVDC_XY(MODE_H, MODE_VTOTAL);
        case PVDC_HS_VSYNC:
            return PVDC_XY(MODE_H + 1, MODE_H + 2);
        case PVDC_HS_PIXEL_CLOCK:
            return g_rand_boolean(rng) ? CLOCK_1MS : CLOCK_2MS;
        case PVDC_HS_BANDWIDTH:
            return g_rand_int_range(rng, 0, 4) ? m->bandwidth_total / m->heads :
                   g_rand_int_range(rng, 0, m->bandwidth_total / m->heads);
        case PVDC_HS_CONNECTOR:
            /*
             * Its own or a free one; written alone, also any, or one that
             * does not exist.
             */
            switch (g_rand_int_range(rng, clean ? 2 : 0, 16)) {
            case 0:
                return g_rand_boolean(rng) ? m->heads : 0xffffffff;
            case 1:
                return g_rand_int_range(rng, 0, m->heads);
            case 2:
            case 3:
            case 4:
            case 5:
                return random_free_connector(m, rng, index, false);
            default:
                return random_free_connector(m, rng, index, true);
            }
        default:
            return g_rand_int(rng) & 0xffffff;
        }
    }
    switch (reg) {
    case PVDC_PS_CTRL:
        return g_rand_int_range(rng, 0, 4) ? PVDC_PS_CTRL_ENABLE :
               g_rand_int(rng) & PVDC_PS_CTRL_VALID_MASK;
    case PVDC_PS_HEAD:
        return g_rand_int_range(rng, 0, 4) ? index / (m->overlays + 2) :
               g_rand_int_range(rng, 0, m->heads + 1);
    case PVDC_PS_FORMAT:
        return formats[g_rand_int_range(rng, 0, ARRAY_SIZE(formats))];
    case PVDC_PS_FB_OFFSET:
        return random_in_binding(r, m->offset_align, 4,
                                 m->offset_align *
                                 g_rand_int_range(rng, 0, 1024));
    case PVDC_PS_FB_PITCH:
        return m->pitch_align * g_rand_int_range(rng, 1, 5);
    case PVDC_PS_FB_SIZE:
    case PVDC_PS_DST_SIZE:
        return PVDC_XY(w, h);
    case PVDC_PS_SRC_X:
    case PVDC_PS_SRC_Y:
        return g_rand_int_range(rng, 0, 3) ? 0 : FP16(8);
    case PVDC_PS_SRC_W:
        return FP16(w);
    case PVDC_PS_SRC_H:
        return FP16(h);
    case PVDC_PS_DST_POS:
        return PVDC_XY(g_rand_int_range(rng, -70, 70),
                       g_rand_int_range(rng, -50, 50));
    case PVDC_PS_ZPOS:
        return g_rand_int_range(rng, 0, m->overlays + 3);
    case PVDC_PS_CHROMA_OFFSET:
        /* sometimes misaligned, past VRAM or near 2^32 */
        switch (g_rand_int_range(rng, 0, 8)) {
        case 0:
            return g_rand_int(rng) | 0x20;
        case 1:
            return m->vram - m->offset_align * g_rand_int_range(rng, 0, 4);
        case 2:
            return -m->offset_align * g_rand_int_range(rng, 1, 4);
        default:
            return m->offset_align * g_rand_int_range(rng, 0, 4096);
        }
    case PVDC_PS_CHROMA_PITCH:
        return g_rand_int_range(rng, 0, 8) ?
               m->pitch_align * g_rand_int_range(rng, 0, 5) :
               g_rand_int_range(rng, 0, 512);
    default:
        return g_rand_int(rng) & 0xffff;
    }
}

/* An overlay plane, any head's. */
static unsigned int random_overlay(Random *r)
{
    unsigned int per_head = r->m.overlays + 2;

    return g_rand_int_range(r->rng, 0, r->m.heads) * per_head +
           g_rand_int_range(r->rng, 1, r->m.overlays + 1);
}

/*
 * Move an overlay to another head through a commit of that head only:
 * enabled or disabled on the way, which must both be refused while a head
 * outside the commit shows it.
 */
static void random_move(Random *r)
{
    unsigned int p = random_overlay(r);
    uint32_t to = g_rand_int_range(r->rng, 0, r->m.heads);
    uint32_t ctrl = g_rand_boolean(r->rng) ? PVDC_PS_CTRL_ENABLE : 0;

    if (ctrl && g_rand_boolean(r->rng)) {
        random_plane(r, p);
    }
    random_write(r, PVDC_PLANE_SHADOW(p) + PVDC_PS_HEAD, to);
    random_write(r, PVDC_PLANE_SHADOW(p) + PVDC_PS_CTRL, ctrl);
    random_write(r, PVDC_HEAD_CONTROL(to) + PVDC_HEAD_DOORBELL, 1);
}

/*
 * Make the shadow state of head @h what it shows, with the planes it
 * would carry: a commit of it then changes nothing by itself.
 */
static void random_shadow_is_active(Random *r, unsigned int h)
{
    Model *m = &r->m;

    for (unsigned int i = 0; i < PVDC_HEAD_STATE_REGS; i++) {
        random_write(r, PVDC_HEAD_SHADOW(h) + i * 4, m->ha[h][i]);
    }
    for (unsigned int p = 0; p < m->planes; p++) {
        if (m->ps[p][PS(PVDC_PS_HEAD)] == h) {
            for (unsigned int i = 0; i < PVDC_PLANE_STATE_REGS; i++) {
                random_write(r, PVDC_PLANE_SHADOW(p) + i * 4, m->pa[p][i]);
            }
        }
    }
}

/*
 * Move an overlay shown by one head to another enabled head in one commit
 * of both: what a driver does to take a plane from a CRTC to another.
 */
static void random_group_move(Random *r)
{
    Model *m = &r->m;
    unsigned int p = random_overlay(r);
    uint32_t from, to;

    /* Rather one that a head shows, to a head that is on. */
    for (int tries = 0; tries < 8 && !model_on(m->pa[p]); tries++) {
        p = random_overlay(r);
    }
    from = m->pa[p][PS(PVDC_PS_HEAD)];
    to = (from + g_rand_int_range(r->rng, 1, m->heads)) % m->heads;
    for (int tries = 0; tries < 8 && !model_on(m->ha[to]); tries++) {
        to = (from + g_rand_int_range(r->rng, 1, m->heads)) % m->heads;
    }
    random_shadow_is_active(r, from);
    random_shadow_is_active(r, to);
    random_write(r, PVDC_PLANE_SHADOW(p) + PVDC_PS_HEAD, to);
    if (!model_on(m->ps[p])) {
        random_plane(r, p);
        random_write(r, PVDC_PLANE_SHADOW(p) + PVDC_PS_HEAD, to);
    }
    random_write(r, PVDC_REG_MULTI_DOORBELL, BIT(from) | BIT(to));
}

static void model_compare(Random *r)
{
    PVDCSnapshot dev, model;

    memset(&model, 0, sizeof(model));
    memcpy(model.head, r->m.ha, sizeof(r->m.ha));
    memcpy(model.plane, r->m.pa, sizeof(r->m.pa));
    pvdc_snapshot_active(&r->t, &dev);
    for (unsigned int h = 0; h < r->m.heads; h++) {
        for (unsigned int i = 0; i < PVDC_HEAD_STATE_REGS; i++) {
            if (dev.head[h][i] != model.head[h][i]) {
                g_test_message("head %u register 0x%x: device 0x%x, model "
                               "0x%x", h, i * 4, dev.head[h][i],
                               model.head[h][i]);
            }
        }
    }
    for (unsigned int p = 0; p < r->m.planes; p++) {
        for (unsigned int i = 0; i < PVDC_PLANE_STATE_REGS; i++) {
            if (dev.plane[p][i] != model.plane[p][i]) {
                g_test_message("plane %u register 0x%x: device 0x%x, model "
                               "0x%x", p, i * 4, dev.plane[p][i],
                               model.plane[p][i]);
            }
        }
    }
    g_assert(memcmp(&dev, &model, sizeof(dev)) == 0);
}

/*
 * The device changed nothing of the heads outside @latched since @before:
 * their head state, and the planes they showed, bit for bit.
 */
static void assert_other_heads_kept(Random *r, const PVDCSnapshot *before,
                                    uint32_t latched)
{
    PVDCSnapshot now;

    pvdc_snapshot_active(&r->t, &now);
    for (unsigned int h = 0; h < r->m.heads; h++) {
        if (latched & BIT(h)) {
            continue;
        }
        g_assert(memcmp(now.head[h], before->head[h],
                        sizeof(now.head[h])) == 0);
        for (unsigned int p = 0; p < r->m.planes; p++) {
            if (model_on(before->plane[p]) &&
                before->plane[p][PS(PVDC_PS_HEAD)] == h) {
                g_assert(memcmp(now.plane[p], before->plane[p],
                                sizeof(now.plane[p])) == 0);
            }
        }
    }
}

/*
 * What the device latched by now fell due at the latch point the model
 * derived at its doorbell, never earlier, and nothing due is left armed
 * unless it writes back (docs/specs/pvdc.rst: Latch point).
 */
static void model_check_latch_points(Random *r, uint32_t done)
{
    Model *m = &r->m;

    for (unsigned int h = 0; h < m->heads; h++) {
        if (!(m->armed & BIT(h)) || m->latch[h] < 0) {
            continue;
        }
        if (done & BIT(h)) {
            g_assert_cmpint(m->latch[h], <=, pvdc_now_ns(&r->t));
            r->timed_enables += !model_on(m->ha[h]) &&
                                model_on(m->harm[h]);
        } else if (!model_group_may_defer(m, m->group[h])) {
            g_assert_cmpint(m->latch[h], >, pvdc_now_ns(&r->t));
        }
    }
}

/* After each step, latch in the model what the device latched. */
static void model_sync(Random *r)
{
    Model *m = &r->m;
    uint32_t done = m->armed & ~pvdc_rd(&r->t, PVDC_REG_MULTI_DOORBELL);
    uint32_t result[PVDC_MAX_HEADS];
    PVDCSnapshot before;
    unsigned int h;

    model_check_latch_points(r, done);
    if (!done) {
        return;
    }
    memset(&before, 0, sizeof(before));
    memcpy(before.head, m->ha, sizeof(m->ha));
    memcpy(before.plane, m->pa, sizeof(m->pa));
    /* Groups latched at one instant go in order of their lowest head. */
    for (h = 0; h < m->heads; h++) {
        if (done & BIT(h) && m->armed & BIT(h)) {
            uint32_t group = m->group[h];
            uint32_t heads_before[PVDC_MAX_PLANES];

            g_assert_cmphex(group & ~done, ==, 0);
            for (unsigned int p = 0; p < m->planes; p++) {
                heads_before[p] = model_on(m->pa[p]) ?
                                  m->pa[p][PS(PVDC_PS_HEAD)] : UINT32_MAX;
            }
            model_latch(m, group, result);
            r->latches++;
            for (unsigned int p = 0; p < m->planes; p++) {
                r->moves += model_on(m->pa[p]) &&
                            heads_before[p] != UINT32_MAX &&
                            heads_before[p] != m->pa[p][PS(PVDC_PS_HEAD)];
            }
        }
    }
    for (h = 0; h < m->heads; h++) {
        if (done & BIT(h)) {
            g_assert_cmpuint(pvdc_head_ctl(&r->t, h, PVDC_HEAD_DONE_SEQ), ==,
                             m->seq[h]);
            g_assert_cmphex(pvdc_head_ctl(&r->t, h, PVDC_HEAD_RESULT), ==,
                            result[h]);
        }
    }
    /* On the device itself, whatever the model says. */
    assert_other_heads_kept(r, &before, done);
    model_compare(r);
}

/* Turn head @h off as a driver does: the head and every plane on it. */
static void random_head_off_regs(Random *r, unsigned int h)
{
    random_write(r, PVDC_HEAD_SHADOW(h) + PVDC_HS_CTRL, 0);
    for (unsigned int p = 0; p < r->m.planes; p++) {
        if (r->m.ps[p][PS(PVDC_PS_HEAD)] == h) {
            random_write(r, PVDC_PLANE_SHADOW(p) + PVDC_PS_CTRL, 0);
        }
    }
}

static void random_head_off(Random *r)
{
    random_head_off_regs(r, g_rand_int_range(r->rng, 0, r->m.heads));
}

/*
 * Move a connector as a driver does: the head driving it lets it go and
 * a head that is off takes it, in one group; at times the taker alone,
 * which is refused while the connector is still driven.
 */
static void random_route(Random *r)
{
    Model *m = &r->m;
    GRand *rng = r->rng;
    unsigned int from = g_rand_int_range(rng, 0, m->heads);
    unsigned int to = (from + g_rand_int_range(rng, 1, m->heads)) % m->heads;
    uint32_t connector;

    for (int tries = 0; tries < 8 && model_on(m->ha[to]); tries++) {
        to = (from + g_rand_int_range(rng, 1, m->heads)) % m->heads;
    }
    connector = model_on(m->ha[from]) ? m->ha[from][HS(PVDC_HS_CONNECTOR)] :
                random_free_connector(m, rng, to, false);
    random_head_off_regs(r, from);
    random_shadow_is_active(r, to);
    for (uint32_t reg = PVDC_HS_HTIMING; reg <= PVDC_HS_BANDWIDTH; reg += 4) {
        random_write(r, PVDC_HEAD_SHADOW(to) + reg,
                     random_value(r, true, reg, to, true));
    }
    random_write(r, PVDC_HEAD_SHADOW(to) + PVDC_HS_CONNECTOR, connector);
    random_write(r, PVDC_HEAD_SHADOW(to) + PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
    random_write(r, PVDC_REG_MULTI_DOORBELL,
                 g_rand_int_range(rng, 0, 4) ? BIT(from) | BIT(to) : BIT(to));
}

static void random_head(Random *r)
{
    unsigned int h = g_rand_int_range(r->rng, 0, r->m.heads);

    for (uint32_t reg = 0; reg < PVDC_HEAD_STATE_REGS; reg++) {
        random_write(r, PVDC_HEAD_SHADOW(h) + reg * 4,
                     random_value(r, true, reg * 4, h, true));
    }
}

/* One random register write: a value of a shadow register, a doorbell. */
static void random_register(Random *r, unsigned int op)
{
    Model *m = &r->m;
    GRand *rng = r->rng;
    uint32_t addr, val;

    if (op < 36) {
        bool head = g_rand_int_range(rng, 0, 4) == 0;
        unsigned int n = head ? g_rand_int_range(rng, 0, m->heads)
                              : g_rand_int_range(rng, 0, m->planes);
        uint32_t reg = 4 * (head ?
                            g_rand_int_range(rng, 0, PVDC_HEAD_STATE_REGS) :
                            g_rand_int_range(rng, 0, PVDC_PLANE_STATE_REGS));

        addr = head ? PVDC_HEAD_SHADOW(n) + reg : PVDC_PLANE_SHADOW(n) + reg;
        val = random_value(r, head, reg, n, false);
    } else if (op < 48) {
        addr = PVDC_HEAD_CONTROL(g_rand_int_range(rng, 0, m->heads)) +
               PVDC_HEAD_DOORBELL;
        switch (g_rand_int_range(rng, 0, 8)) {
        case 0:
            val = g_rand_int(rng);
            break;
        case 1:
        case 2:
            val = PVDC_DOORBELL_AMEND;
            break;
        default:
            val = PVDC_DOORBELL_ARM;
        }
    } else if (op < 52) {
        addr = PVDC_REG_MULTI_DOORBELL;
        val = g_rand_int_range(rng, 0, 1 << (m->heads + 1));
    } else {
        /* anywhere, including read-only and unknown registers */
        addr = g_rand_int_range(rng, 0, PVDC_MMIO_SIZE / 4) * 4;
        val = g_rand_int(rng);
    }
    /* a BIND reads a table of the test's own: random_bind() */
    if (addr != PVDC_REG_INT_ENABLE && addr != PVDC_REG_BIND_CMD) {
        random_write(r, addr, val);
    }
}

static void random_step(Random *r, unsigned int i)
{
    unsigned int op = g_rand_int_range(r->rng, 0, 100);

    if (op < 12) {
        random_plane(r, g_rand_int_range(r->rng, 0, r->m.planes));
    } else if (op < 17) {
        random_head(r);
    } else if (op < 20) {
        random_head_off(r);
    } else if (op < 24) {
        random_move(r);
    } else if (op < 28) {
        random_group_move(r);
    } else if (op < 84) {
        random_register(r, op - 28);
    } else if (op < 85) {
        random_route(r);
    } else if (op < 90) {
        random_bind(r);
    } else if (r->m.armed) {
        pvdc_step_next(&r->t);
    } else {
        pvdc_step_to(&r->t, r->t.now + g_rand_int_range(r->rng, 1, 3000000));
    }
    model_sync(r);
    /* Between latches, nothing may change either. */
    if (i % 64 == 0) {
        model_compare(r);
    }
}

static void test_random_commits_match_reference_model(void)
{
    unsigned int i, steps = g_test_slow() ? 40000 : 6000;
    Random r = { .rng = g_rand_new_with_seed(20260101) };

    pvdc_test_start(&r.t, "heads=3,overlays=1,scalers=1,vram-size=16M,"
                    "max-width=128,max-height=96,bandwidth-kib=60");
    model_init(&r.m, &r.t);

    for (i = 0; i < steps; i++) {
        random_step(&r, i);
    }
    g_test_message("%u commits applied, %u rejected, %u amended; %u "
                   "latches, %u moved a plane to another head, %u enabled "
                   "a head on another connector; %u showed a plane in a "
                   "binding; %u enables latched where the model said",
                   r.m.applied, r.m.rejected, r.m.amended, r.latches,
                   r.moves, r.m.rerouted, r.m.applied_bound,
                   r.timed_enables);
    for (i = 0; i <= PVDC_RESULT_CODE_MASK; i++) {
        if (r.m.errors[i]) {
            g_test_message("  error 0x%02x: %u", i, r.m.errors[i]);
        }
    }
    for (i = 0; i <= PVDC_BIND_ERR_BUSY; i++) {
        if (r.m.bind_outcomes[0][i] || r.m.bind_outcomes[1][i]) {
            g_test_message("  BIND status %u: %u, UNBIND: %u", i,
                           r.m.bind_outcomes[0][i], r.m.bind_outcomes[1][i]);
        }
    }
    g_assert_cmpuint(r.m.applied, >, steps / 50);
    g_assert_cmpuint(r.m.rejected, >, steps / 50);
    g_assert_cmpuint(r.m.errors[PVDC_ERR_PLANE_BUSY], >, steps / 500);
    g_assert_cmpuint(r.moves, >, steps / 500);
    g_assert_cmpuint(r.m.amended, >, steps / 500);
    /* and enables, at the first vblank of their timelines */
    g_assert_cmpuint(r.timed_enables, >, steps / 1000);
    /* the Cb:Cr rules are exercised too */
    g_assert_cmpuint(r.m.errors[PVDC_ERR_CHROMA], >, steps / 1000);
    /* and the writeback rule */
    g_assert_cmpuint(r.m.errors[PVDC_ERR_WRITEBACK], >, steps / 1000);
    /* and routing: refused, and applied */
    g_assert_cmpuint(r.m.errors[PVDC_ERR_CONNECTOR], >, steps / 1000);
    g_assert_cmpuint(r.m.rerouted, >, steps / 1000);
    /* and bindings: bound, unbound, busy both ways, overlapping, bad */
    g_assert_cmpuint(r.m.applied_bound, >, steps / 1000);
    g_assert_cmpuint(r.m.bind_outcomes[0][PVDC_BIND_OK], >, steps / 500);
    g_assert_cmpuint(r.m.bind_outcomes[1][PVDC_BIND_OK], >, steps / 1000);
    g_assert_cmpuint(r.m.bind_outcomes[0][PVDC_BIND_ERR_BUSY], >, 0);
    g_assert_cmpuint(r.m.bind_outcomes[1][PVDC_BIND_ERR_BUSY], >, 0);
    g_assert_cmpuint(r.m.bind_outcomes[0][PVDC_BIND_ERR_OVERLAP], >, 0);
    g_assert_cmpuint(r.m.bind_outcomes[0][PVDC_BIND_ERR_TABLE], >, 0);
    g_rand_free(r.rng);
    pvdc_test_stop(&r.t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/random/active-state-is-always-a-valid-armed-state",
                   test_random_commits_match_reference_model);

    return g_test_run();
}
