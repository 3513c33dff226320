/*
 * pvdc: paravirtual display controller - one QEMU console per connector.
 *
 * The console of connector c shows the active state of the head that
 * drives it (enabled, HS_CONNECTOR = c), composed by pvdc-compose.c, or
 * the blank picture of a disabled head if none does.
 * pvdc series: boot
 * Connector 0 shows the boot display instead from reset to the first
 * head enabled (pvdc-boot.c).
 * pvdc series: end boot
 * Composition only happens when something changed: the head driving the
 * connector, its active state (compared with the scene last shown, so a
 * commit that changes nothing visible costs nothing) or the VRAM under a
 * visible plane, found through dirty logging (DIRTY_MEMORY_VGA).  The dirty
 * bitmap is snapshot once per refresh for the whole device and the damage
 * handed to each connector; only the damaged rectangle is composed again.  A
 * head showing exactly one framebuffer is displayed straight from VRAM.
 * pvdc series: memory
 * So is one in guest pages bound above VRAM (pvdc-memory.c) where its bytes
 * are contiguous in the host.  Bindings have no dirty log: the guest reports
 * what it writes there (DAMAGE_LEN, pvdc_console_damage()), and turning bus
 * mastering off or on shows every head again whole.
 * pvdc series: end memory
 *
 * Consoles are refreshed when the UI's refresh timer asks
 * (GraphicHwOps.gfx_update, every 30 ms by default), which finds what the
 * guest drew without a commit, and, when a head latches a commit, at once:
 * the latch schedules a push of every console it changes that a UI listens
 * to (qemu_console_is_visible(), the test dpy_gfx_update itself makes),
 * run by a bottom half in the main loop, not in the vCPU thread whose
 * register access may have caught up with the latch point.  A push is the
 * same refresh: it composes the damage, or hands the direct surface over,
 * and calls dpy_gfx_update for that frame.  A console has at most one
 * push pending: latches that come before it runs (a busy main loop, a
 * slow UI) fold into it and the UI gets the last frame.  With no UI, a
 * latch costs nothing more.
 *
 * When the host-cursor property is set, the cursor plane is handed to the
 * UI (dpy_cursor_define, dpy_mouse_set) instead of being composed, so that
 * moving it costs no composition.  QEMU offers no way to ask whether a UI
 * draws cursors, hence the property; CRCs always include the cursor.
 *
 * Every pointer and size handed to the UI lies inside VRAM, by one rule
 * (pvdc_vram_span()).
 * pvdc series: memory
 * Or inside one host mapping of a binding (pvdc_memory_host_span()), which
 * no UNBIND drops while the active state shows it.
 * pvdc series: end memory
 * A framebuffer that passed the commit rules may still not be displayable
 * straight from memory (its last line is short, a surface is not), and is
 * composed instead.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "qemu/log.h"
#include "qom/object.h"
#include "qapi/visitor.h"
#include "exec/memory.h"
#include "exec/target_page.h"
#include "pvdc-compose.h"
#include "pvdc-internal.h"
#include "trace.h"

/* Shown by a connector no head drives. */
#define PVDC_BLANK_WIDTH    640
#define PVDC_BLANK_HEIGHT   480

typedef enum PVDCSurfaceKind {
    PVDC_SURFACE_NONE,          /* the placeholder of a new console */
    PVDC_SURFACE_BLANK,
    PVDC_SURFACE_COMPOSED,      /* device-owned, head-sized, x8r8g8b8 */
    PVDC_SURFACE_DIRECT,        /* wraps the framebuffer in VRAM */
    /* pvdc series: boot */
    PVDC_SURFACE_BOOT,          /* the boot display's (pvdc-boot.c) */
    /* pvdc series: end boot */
} PVDCSurfaceKind;

/* The console of a connector. */
typedef struct PVDCDisplay {
    PVDCSurfaceKind kind;
    PVDCComposeDirect direct;   /* if kind is PVDC_SURFACE_DIRECT */
    /*
     * The scene on the surface, without a cursor drawn by the UI, and
     * the head whose picture it is.
     */
    PVDCComposeScene shown;
    unsigned int shown_head;
    bool shown_valid;
    /* VRAM writes not composed yet, coordinates of the driving head. */
    QemuRect damage;
    /* The last dirty snapshot has been handed out and not consumed. */
    bool damage_fresh;
    /* the UI asked for everything again (GraphicHwOps.invalidate) */
    bool redraw;
    /* dpy_gfx_update calls for the picture, the surface's first included */
    uint64_t updates;

    /* A latch changed what the console shows since its last push. */
    bool push_pending;
    /* statistics: frames pushed at a latch, latches folded into a push */
    uint64_t pushes;
    uint64_t coalesced;

    /* The cursor plane as last given to the UI. */
    bool cursor_on;
    bool cursor_dirty;          /* its framebuffer was written */
    PVDCPlaneRegs cursor;
    int cursor_x, cursor_y;
} PVDCDisplay;

/* PS_CTRL's colour fields hold the engine's (DRM's) enumeration values. */
QEMU_BUILD_BUG_ON(PVDC_COLOR_BT601 != PVDC_COMPOSE_BT601 ||
                  PVDC_COLOR_BT709 != PVDC_COMPOSE_BT709 ||
                  PVDC_COLOR_BT2020 != PVDC_COMPOSE_BT2020);

/*
 * VRAM bytes [@offset, @offset + @len) as a host pointer, or NULL if any
 * of them lies outside VRAM.  The one rule for every pointer and size the
 * device hands to the UI: a direct surface, the host cursor's pixels.
 * (Composition checks its own reads against the VRAM size, and the CRC
 * image is the device's own.)
 */
static uint8_t *pvdc_vram_span(PVDCState *s, uint64_t offset, uint64_t len)
{
    if (offset > s->conf.vram_size || len > s->conf.vram_size - offset) {
        return NULL;
    }
    return (uint8_t *)memory_region_get_ram_ptr(&s->vram) + offset;
}

/* The head that drives @conn, or NULL if none does. */
static PVDCHead *pvdc_connector_head(PVDCConnector *conn)
{
    PVDCState *s = conn->dev;
    unsigned int h;

    for (h = 0; h < s->conf.num_heads; h++) {
        if (pvdc_head_on(&s->heads[h]) &&
            s->heads[h].active.regs[R_HS_CONNECTOR] == conn->index) {
            return &s->heads[h];
        }
    }
    return NULL;
}

static unsigned int pvdc_cursor_plane(PVDCHead *head)
{
    uint32_t per_head = head->dev->conf.num_overlays + 2;

    return head->index * per_head + per_head - 1;
}

/* The cursor plane of @head if the UI draws it, else -1. */
static int pvdc_host_cursor_plane(PVDCHead *head)
{
    PVDCState *s = head->dev;
    unsigned int p = pvdc_cursor_plane(head);
    const PVDCPlaneRegs *r = &s->planes[p].active;

    /* The UI gets a cursor out of VRAM only: bindings are composed. */
    if (!s->host_cursor || !pvdc_plane_on(r) ||
        r->regs[R_PS_HEAD] != head->index ||
        r->regs[R_PS_FORMAT] != PVDC_FMT_ARGB8888 ||
        r->regs[R_PS_FB_OFFSET] >= s->conf.vram_size) {
        return -1;
    }
    return p;
}

void pvdc_console_scene(PVDCHead *head, PVDCComposeScene *scene,
                        int skip, unsigned int *ids)
{
    PVDCState *s = head->dev;
    unsigned int p;

    memset(scene, 0, sizeof(*scene));
    scene->width = FIELD_EX32(head->active.regs[R_HS_HTIMING], XY, X);
    scene->height = FIELD_EX32(head->active.regs[R_HS_VTIMING], XY, X);
    scene->background = head->active.regs[R_HS_BACKGROUND];
    /* pvdc series: color */
    scene->color = head->active_color.pipeline;
    /* pvdc series: end color */

    for (p = 0; p < s->num_planes; p++) {
        const PVDCPlaneRegs *r = &s->planes[p].active;
        PVDCComposePlane *plane;

        if (!pvdc_plane_on(r) || r->regs[R_PS_HEAD] != head->index ||
            p == skip) {
            continue;
        }
        /* Unique zpos below the planes per head keeps this from happening. */
        if (scene->num_planes == ARRAY_SIZE(scene->planes)) {
            break;
        }
        if (ids) {
            ids[scene->num_planes] = p;
        }
        plane = &scene->planes[scene->num_planes++];
        plane->format = r->regs[R_PS_FORMAT];
        plane->offset = r->regs[R_PS_FB_OFFSET];
        plane->pitch = r->regs[R_PS_FB_PITCH];
        plane->fb_width = FIELD_EX32(r->regs[R_PS_FB_SIZE], XY, X);
        plane->fb_height = FIELD_EX32(r->regs[R_PS_FB_SIZE], XY, Y);
        plane->src_x = r->regs[R_PS_SRC_X];
        plane->src_y = r->regs[R_PS_SRC_Y];
        plane->src_w = r->regs[R_PS_SRC_W];
        plane->src_h = r->regs[R_PS_SRC_H];
        plane->dst_x = (int16_t)FIELD_EX32(r->regs[R_PS_DST_POS], XY, X);
        plane->dst_y = (int16_t)FIELD_EX32(r->regs[R_PS_DST_POS], XY, Y);
        plane->dst_w = FIELD_EX32(r->regs[R_PS_DST_SIZE], XY, X);
        plane->dst_h = FIELD_EX32(r->regs[R_PS_DST_SIZE], XY, Y);
        plane->zpos = r->regs[R_PS_ZPOS];
        plane->alpha = MIN(r->regs[R_PS_ALPHA], UINT16_MAX);
        plane->ctrl = r->regs[R_PS_CTRL];
        /* Used by the YCbCr formats only, and then validated. */
        plane->chroma_offset = r->regs[R_PS_CHROMA_OFFSET];
        plane->chroma_pitch = r->regs[R_PS_CHROMA_PITCH];
        plane->encoding = FIELD_EX32(r->regs[R_PS_CTRL], PS_CTRL,
                                     COLOR_ENCODING);
        plane->range = FIELD_EX32(r->regs[R_PS_CTRL], PS_CTRL,
                                  COLOR_RANGE_FULL) ?
                       PVDC_COMPOSE_RANGE_FULL : PVDC_COMPOSE_RANGE_LIMITED;
    }
}

static bool pvdc_rect_empty(const QemuRect *rect)
{
    return !rect->width || !rect->height;
}

/* Add to @damage what writing VRAM [@start, @end) changes on the head. */
static void pvdc_plane_damage_run(const PVDCComposePlane *plane,
                                  uint32_t width, uint32_t height,
                                  uint64_t start, uint64_t end,
                                  QemuRect *damage)
{
    QemuRect rect;

    if (start < end &&
        pvdc_compose_plane_damage(plane, width, height, start, end - start,
                                  &rect)) {
        pvdc_compose_rect_union(damage, &rect);
    }
}

/*
 * Add to @damage what the dirty pages under one memory plane of @plane
 * change on a head of @width x @height: @rows lines of @row_bytes bytes,
 * the first at @base, @pitch bytes apart.  Returns whether any page was
 * dirty.
 */
static bool pvdc_plane_dirty_lines(PVDCState *s, DirtyBitmapSnapshot *snap,
                                   const PVDCComposePlane *plane,
                                   uint32_t width, uint32_t height,
                                   uint64_t base, uint64_t row_bytes,
                                   uint32_t rows, uint32_t pitch,
                                   QemuRect *damage)
{
    uint64_t page = qemu_target_page_size();
    uint64_t addr, next = 0;
    uint64_t run = 0, run_end = 0;  /* dirty pages not handed on yet */
    uint32_t y;
    bool any = false;

    for (y = 0; y < rows; y++) {
        uint64_t start = base + (uint64_t)y * pitch;
        uint64_t end = MIN(start + row_bytes, s->conf.vram_size);

        /* Lines closer than a page share pages: look each up once. */
        for (addr = MAX(ROUND_DOWN(start, page), next); addr < end;
             addr += page) {
            s->damage_pages++;
            if (!memory_region_snapshot_get_dirty(&s->vram, snap, addr,
                                                  page)) {
                continue;
            }
            /* one damage rectangle per run of consecutive dirty pages */
            if (addr != run_end) {
                pvdc_plane_damage_run(plane, width, height, run, run_end,
                                      damage);
                run = addr;
            }
            run_end = addr + page;
            any = true;
        }
        next = MAX(next, ROUND_UP(end, page));
    }
    pvdc_plane_damage_run(plane, width, height, run, run_end, damage);
    return any;
}

/*
 * Add to @damage what the dirty pages under @plane change on a head of
 * @width x @height.  Returns whether any page was dirty.  Only the lines
 * and columns the plane samples are looked up (of both memory planes of
 * NV12 and P010), so the cost follows what is shown, not the span a long
 * pitch puts between its lines.
 */
static bool pvdc_plane_dirty(PVDCState *s, DirtyBitmapSnapshot *snap,
                             const PVDCComposePlane *plane, uint32_t width,
                             uint32_t height, QemuRect *damage)
{
    PVDCComposeSpan span[2];
    unsigned int n = pvdc_compose_plane_sources(plane, span);
    bool any = false;

    for (unsigned int i = 0; i < n; i++) {
        /* pvdc series: memory */
        /* In a binding: DAMAGE_LEN says what changed. */
        if (span[i].offset >= s->conf.vram_size) {
            continue;
        }
        /* pvdc series: end memory */
        any |= pvdc_plane_dirty_lines(s, snap, plane, width, height,
                                      span[i].offset, span[i].row_bytes,
                                      span[i].rows, span[i].pitch, damage);
    }
    return any;
}

/*
 * Take the one dirty snapshot of this refresh and hand the damage to every
 * connector, under the planes of the head that drives it; each console
 * composes its own when it is refreshed.
 */
static void pvdc_console_collect_damage(PVDCState *s)
{
    DirtyBitmapSnapshot *snap;
    unsigned int c, i;
    /* pvdc series: memory */
    bool master = pvdc_memory_reachable(s);
    /* pvdc series: end memory */

    /* pvdc series: memory */
    /* Planes in bindings appear or vanish: every head whole. */
    if (master != s->bus_master_shown) {
        pvdc_console_invalidate(s);
    }
    s->bus_master_shown = master;
    /* pvdc series: end memory */
    snap = memory_region_snapshot_and_clear_dirty(&s->vram, 0,
                                                  s->conf.vram_size,
                                                  DIRTY_MEMORY_VGA);
    for (c = 0; c < s->conf.num_heads; c++) {
        PVDCDisplay *d = s->connectors[c].display;
        PVDCHead *head = pvdc_connector_head(&s->connectors[c]);
        unsigned int ids[PVDC_MAX_PLANES_PER_HEAD];
        PVDCComposeScene scene;
        int cursor;

        d->damage_fresh = true;
        if (!head) {
            continue;
        }
        cursor = pvdc_host_cursor_plane(head);
        pvdc_console_scene(head, &scene, -1, ids);
        for (i = 0; i < scene.num_planes; i++) {
            QemuRect ignored = {};

            if ((int)ids[i] == cursor) {
                d->cursor_dirty |= pvdc_plane_dirty(s, snap, &scene.planes[i],
                                                    scene.width, scene.height,
                                                    &ignored);
            } else {
                pvdc_plane_dirty(s, snap, &scene.planes[i], scene.width,
                                 scene.height, &d->damage);
            }
        }
    }
    g_free(snap);
}

bool pvdc_console_compose(PVDCHead *head,
                          const PVDCComposeScene *scene,
                          pixman_image_t *image,
                          const QemuRect *damage)
{
    PVDCState *s = head->dev;
    const uint8_t *vram = memory_region_get_ram_ptr(&s->vram);
    /* pvdc series: memory */
    g_autoptr(GPtrArray) bounce = g_ptr_array_new_with_free_func(g_free);
    /* pvdc series: end memory */
    PVDCComposeScene view = *scene;

    /* pvdc series: memory */
    pvdc_memory_views(s, &view, bounce);
    /* pvdc series: end memory */
    if (!pvdc_compose(&view, vram, s->conf.vram_size, image, damage)) {
        return false;
    }
    head->compositions++;
    s->compositions++;
    trace_pvdc_compose(head->index, damage ? damage->x : 0,
                       damage ? damage->y : 0,
                       damage ? damage->width : scene->width,
                       damage ? damage->height : scene->height);
    return true;
}

static void pvdc_console_update(PVDCConnector *conn, const QemuRect *rect)
{
    dpy_gfx_update(conn->con, rect->x, rect->y, rect->width, rect->height);
    conn->display->updates++;
}

/*
 * A new surface is not shown until it is updated: dpy_gfx_replace_surface()
 * only hands it to the listeners, and some (D-Bus, VNC) wait for an update
 * to send anything.
 */
static void pvdc_console_update_full(PVDCConnector *conn)
{
    dpy_gfx_update_full(conn->con);
    conn->display->updates++;
}

static void pvdc_console_show_blank(PVDCConnector *conn)
{
    PVDCDisplay *d = conn->display;

    if (d->kind != PVDC_SURFACE_BLANK) {
        dpy_gfx_replace_surface(conn->con,
                                qemu_create_displaysurface(PVDC_BLANK_WIDTH,
                                                           PVDC_BLANK_HEIGHT));
        d->kind = PVDC_SURFACE_BLANK;
        pvdc_console_update_full(conn);
    }
    d->shown_valid = false;
}

/* pvdc series: boot */
/*
 * While no head is enabled since reset, head 0's console shows the boot
 * display.  Returns false if @conn does not show it.
 */
static bool pvdc_console_show_boot(PVDCConnector *conn)
{
    PVDCState *s = conn->dev;
    PVDCDisplay *d = conn->display;

    if (conn->index != 0 || !s->boot_display) {
        return false;
    }
    if (d->kind != PVDC_SURFACE_BOOT) {
        /* Until the firmware sets its framebuffer up: not an old picture. */
        pvdc_console_show_blank(conn);
        d->kind = PVDC_SURFACE_BOOT;
    }
    pvdc_boot_display_update(s, conn->con);
    return true;
}

/* pvdc series: end boot */
/* What the console of a connector that no head drives shows. */
static void pvdc_console_show_undriven(PVDCConnector *conn)
{
    /* pvdc series: boot */
    if (pvdc_console_show_boot(conn)) {
        return;
    }
    /* pvdc series: end boot */
    pvdc_console_show_blank(conn);
}

/*
 * Show @scene of @head on @conn straight from VRAM if the engine and the
 * UI allow it.  Returns false if it must be composed.
 */
static bool pvdc_console_show_direct(PVDCConnector *conn, PVDCHead *head,
                                     const PVDCComposeScene *scene,
                                     bool changed, const QemuRect *damage)
{
    PVDCState *s = head->dev;
    PVDCDisplay *d = conn->display;
    PVDCComposeDirect direct;
    uint64_t size;
    uint8_t *pixels;

    /* pvdc series: capture */
    /* The CRC and the console must show the same: keep them composed. */
    if (FIELD_EX32(head->crc_ctrl, CRC_CTRL, ENABLE)) {
        return false;
    }
    /* pvdc series: end capture */
    /*
     * The engine checks the plane against the whole device address
     * space; where it lies is checked next.
     */
    if (!pvdc_compose_direct(scene, PVDC_ADDR_SPACE_SIZE, &direct) ||
        !dpy_gfx_check_format(conn->con, direct.format)) {
        return false;
    }
    /* A UI may read the surface whole, padding of its last line too. */
    size = (uint64_t)direct.stride * scene->height;
    pixels = pvdc_vram_span(s, direct.offset, size);
    /* pvdc series: memory */
    if (!pixels) {
        pixels = pvdc_memory_host_span(s, direct.offset, size);
    }
    /* pvdc series: end memory */
    if (!pixels) {
        trace_pvdc_direct_refused(head->index, direct.offset, size);
        return false;
    }
    /* The same device address may be bound to other pages since. */
    if (changed || d->kind != PVDC_SURFACE_DIRECT ||
        memcmp(&direct, &d->direct, sizeof(direct)) ||
        surface_data(qemu_console_surface(conn->con)) != (void *)pixels) {
        DisplaySurface *surface =
            qemu_create_displaysurface_from(scene->width, scene->height,
                                            direct.format, direct.stride,
                                            pixels);

        dpy_gfx_replace_surface(conn->con, surface);
        d->kind = PVDC_SURFACE_DIRECT;
        d->direct = direct;
        pvdc_console_update_full(conn);
    } else if (!pvdc_rect_empty(damage)) {
        pvdc_console_update(conn, damage);
    }
    return true;
}

static void pvdc_console_show_composed(PVDCConnector *conn, PVDCHead *head,
                                       const PVDCComposeScene *scene,
                                       bool changed, const QemuRect *damage)
{
    PVDCDisplay *d = conn->display;
    DisplaySurface *surface = qemu_console_surface(conn->con);

    if (d->kind != PVDC_SURFACE_COMPOSED || !surface ||
        surface_width(surface) != scene->width ||
        surface_height(surface) != scene->height) {
        surface = qemu_create_displaysurface(scene->width, scene->height);
        dpy_gfx_replace_surface(conn->con, surface);
        d->kind = PVDC_SURFACE_COMPOSED;
        changed = true;
    }
    if (changed) {
        pvdc_console_compose(head, scene, surface->image, NULL);
        pvdc_console_update_full(conn);
    } else if (!pvdc_rect_empty(damage)) {
        pvdc_console_compose(head, scene, surface->image, damage);
        pvdc_console_update(conn, damage);
    }
}

/* QEMUCursor pixels are straight (not premultiplied) host-endian ARGB. */
static uint32_t pvdc_cursor_pixel(uint32_t argb, unsigned int blend,
                                  uint16_t plane_alpha)
{
    uint32_t a = argb >> 24;
    uint32_t rgb = argb & 0xffffff;

    if (blend == PVDC_BLEND_NONE) {
        a = 0xff;
    } else if (blend == PVDC_BLEND_PREMULTI && a && a < 0xff) {
        /* the channels of a pixel, not register fields */
        uint32_t r = MIN(extract32(argb, 16, 8) * 255 / a, 255);
        uint32_t g = MIN(extract32(argb, 8, 8) * 255 / a, 255);
        uint32_t b = MIN(extract32(argb, 0, 8) * 255 / a, 255);

        rgb = r << 16 | g << 8 | b;
    }
    a = (a * plane_alpha + UINT16_MAX / 2) / UINT16_MAX;
    return a << 24 | rgb;
}

static void pvdc_console_define_cursor(PVDCConnector *conn,
                                       const PVDCPlaneRegs *r)
{
    PVDCState *s = conn->dev;
    /* Validated: unscaled ARGB8888, at most PVDC_CURSOR_MAX_SIZE. */
    uint32_t w = FIELD_EX32(r->regs[R_PS_DST_SIZE], XY, X);
    uint32_t h = FIELD_EX32(r->regs[R_PS_DST_SIZE], XY, Y);
    uint32_t pitch = r->regs[R_PS_FB_PITCH];
    uint64_t origin = r->regs[R_PS_FB_OFFSET] +
                      (uint64_t)(r->regs[R_PS_SRC_Y] >> 16) * pitch +
                      (uint64_t)(r->regs[R_PS_SRC_X] >> 16) * 4;
    const uint8_t *pixels = pvdc_vram_span(s, origin,
                                           (uint64_t)pitch * (h - 1) + w * 4);
    unsigned int blend = FIELD_EX32(r->regs[R_PS_CTRL], PS_CTRL, BLEND);
    QEMUCursor *cursor;
    uint32_t x, y;

    if (!pixels || !w || !h) {
        return;
    }
    cursor = cursor_alloc(w, h);
    if (!cursor) {
        return;
    }
    cursor->hot_x = MIN(FIELD_EX32(r->regs[R_PS_HOTSPOT], XY, X), w - 1);
    cursor->hot_y = MIN(FIELD_EX32(r->regs[R_PS_HOTSPOT], XY, Y), h - 1);
    for (y = 0; y < h; y++) {
        const uint8_t *line = pixels + (uint64_t)y * pitch;

        for (x = 0; x < w; x++) {
            cursor->data[y * w + x] =
                pvdc_cursor_pixel(ldl_le_p(line + x * 4), blend,
                                  MIN(r->regs[R_PS_ALPHA], UINT16_MAX));
        }
    }
    dpy_cursor_define(conn->con, cursor);
    cursor_unref(cursor);
}

/* Hand the cursor plane @p (-1: none) to the UI of @conn. */
static void pvdc_console_update_cursor(PVDCConnector *conn, int p)
{
    PVDCState *s = conn->dev;
    PVDCDisplay *d = conn->display;
    PVDCPlaneRegs image;
    int x, y;

    if (p < 0) {
        if (d->cursor_on) {
            dpy_mouse_set(conn->con, d->cursor_x, d->cursor_y, false);
            d->cursor_on = false;
        }
        return;
    }

    /* Only the position changes when the cursor moves. */
    image = s->planes[p].active;
    image.regs[R_PS_DST_POS] = 0;
    if (!d->cursor_on || d->cursor_dirty ||
        memcmp(&image, &d->cursor, sizeof(image))) {
        pvdc_console_define_cursor(conn, &image);
        d->cursor = image;
        d->cursor_dirty = false;
    }
    x = (int16_t)FIELD_EX32(s->planes[p].active.regs[R_PS_DST_POS], XY, X) +
        MIN(FIELD_EX32(image.regs[R_PS_HOTSPOT], XY, X),
            FIELD_EX32(image.regs[R_PS_DST_SIZE], XY, X) - 1);
    y = (int16_t)FIELD_EX32(s->planes[p].active.regs[R_PS_DST_POS], XY, Y) +
        MIN(FIELD_EX32(image.regs[R_PS_HOTSPOT], XY, Y),
            FIELD_EX32(image.regs[R_PS_DST_SIZE], XY, Y) - 1);
    if (!d->cursor_on || x != d->cursor_x || y != d->cursor_y) {
        dpy_mouse_set(conn->con, x, y, true);
        d->cursor_x = x;
        d->cursor_y = y;
        d->cursor_on = true;
    }
}

static void pvdc_console_refresh(PVDCConnector *conn)
{
    PVDCDisplay *d = conn->display;
    PVDCHead *head = pvdc_connector_head(conn);
    PVDCComposeScene scene;
    QemuRect damage;
    bool changed;
    int cursor;

    if (!d->damage_fresh) {
        pvdc_console_collect_damage(conn->dev);
    }
    d->damage_fresh = false;
    damage = d->damage;
    qemu_rect_init(&d->damage, 0, 0, 0, 0);

    if (!head) {
        pvdc_console_show_undriven(conn);
        pvdc_console_update_cursor(conn, -1);
    } else {
        cursor = pvdc_host_cursor_plane(head);
        pvdc_console_scene(head, &scene, cursor, NULL);
        /* Another head took the connector: its picture, whole. */
        changed = !d->shown_valid || d->shown_head != head->index ||
                  memcmp(&scene, &d->shown, sizeof(scene));
        if (!pvdc_console_show_direct(conn, head, &scene, changed, &damage)) {
            pvdc_console_show_composed(conn, head, &scene, changed, &damage);
        }
        memcpy(&d->shown, &scene, sizeof(scene));   /* padding too */
        d->shown_head = head->index;
        d->shown_valid = true;
        pvdc_console_update_cursor(conn, cursor);
    }

    if (d->redraw) {
        d->redraw = false;
        pvdc_console_update_full(conn);
    }
}

static void pvdc_gfx_update(void *opaque)
{
    PVDCConnector *conn = opaque;

    /* What a push pending would show, the UI is about to get. */
    conn->display->push_pending = false;
    pvdc_console_refresh(conn);
}

/* The bottom half that pushes what latches changed to the UIs. */
static void pvdc_console_push_bh(void *opaque)
{
    PVDCState *s = opaque;
    unsigned int c;

    if (!pvdc_alive(s) || s->push_stalled) {
        return;
    }
    for (c = 0; c < s->conf.num_heads; c++) {
        PVDCConnector *conn = &s->connectors[c];
        PVDCDisplay *d = conn->display;
        uint64_t updates = d->updates;

        if (!d->push_pending) {
            continue;
        }
        d->push_pending = false;
        /* The UI may have gone since the latch. */
        if (!qemu_console_is_visible(conn->con)) {
            continue;
        }
        pvdc_console_refresh(conn);
        /* A commit that changes nothing visible is not a frame. */
        if (d->updates != updates) {
            d->pushes++;
            trace_pvdc_push(c, d->pushes);
        }
    }
}

/*
 * A latch changed what the console of @connector may show: push the frame
 * to its UI, if one listens, from the main loop.
 */
static void pvdc_console_latched(PVDCState *s, uint32_t connector)
{
    PVDCConnector *conn = &s->connectors[connector];
    PVDCDisplay *d = conn->display;

    /* Nobody would see it: the UI's next refresh, if any, finds it. */
    if (!qemu_console_is_visible(conn->con)) {
        return;
    }
    if (d->push_pending) {
        d->coalesced++;
        return;
    }
    d->push_pending = true;
    qemu_bh_schedule(s->push_bh);
}

void pvdc_console_head_latched(PVDCHead *head, bool was_on,
                               uint32_t old_connector)
{
    uint32_t connector = head->active.regs[R_HS_CONNECTOR];

    /* The connector it leaves, or keeps. */
    if (was_on) {
        pvdc_console_latched(head->dev, old_connector);
    }
    /* The connector it takes. */
    if (pvdc_head_on(head) && (!was_on || connector != old_connector)) {
        pvdc_console_latched(head->dev, connector);
    }
}

/* x-push-stall was cleared: push what waited. */
static void pvdc_console_push_resume(PVDCState *s)
{
    if (pvdc_alive(s) && !s->push_stalled) {
        qemu_bh_schedule(s->push_bh);
    }
}

static void pvdc_gfx_invalidate(void *opaque)
{
    PVDCConnector *conn = opaque;

    conn->display->redraw = true;
}

/* pvdc series: outputs */
static void pvdc_ui_info(void *opaque, uint32_t idx, QemuUIInfo *info)
{
    PVDCConnector *conn = opaque;

    pvdc_output_ui_info(conn->dev, conn->index, info);
}

/* pvdc series: end outputs */
static const GraphicHwOps pvdc_gfx_ops = {
    .invalidate = pvdc_gfx_invalidate,
    .gfx_update = pvdc_gfx_update,
    /* pvdc series: outputs */
    .ui_info = pvdc_ui_info,
    /* pvdc series: end outputs */
};

/* pvdc series: color */
void pvdc_console_color_changed(PVDCHead *head)
{
    PVDCState *s = head->dev;
    const PVDCComposeColor *old = head->active_color.pipeline;
    unsigned int c;

    /* Wherever the head is shown, it left or it stays. */
    for (c = 0; old && c < s->conf.num_heads; c++) {
        PVDCDisplay *d = s->connectors[c].display;

        if (d && d->shown_valid && d->shown.color == old) {
            d->shown_valid = false;
        }
    }
}

/* pvdc series: end color */
/* pvdc series: memory */
void pvdc_console_invalidate(PVDCState *s)
{
    unsigned int c;

    for (c = 0; c < s->conf.num_heads; c++) {
        PVDCDisplay *d = s->connectors[c].display;

        if (d) {
            d->shown_valid = false;
        }
    }
}

void pvdc_console_damage(PVDCState *s, uint64_t start, uint64_t len)
{
    unsigned int c, i;

    for (c = 0; c < s->conf.num_heads; c++) {
        PVDCDisplay *d = s->connectors[c].display;
        PVDCHead *head = pvdc_connector_head(&s->connectors[c]);
        PVDCComposeScene scene;
        QemuRect rect;

        if (!head) {
            continue;
        }
        pvdc_console_scene(head, &scene, -1, NULL);
        for (i = 0; i < scene.num_planes; i++) {
            if (pvdc_compose_plane_damage(&scene.planes[i], scene.width,
                                          scene.height, start, len, &rect)) {
                pvdc_compose_rect_union(&d->damage, &rect);
            }
        }
    }
}

/* pvdc series: end memory */
static void pvdc_console_pushes(Object *obj, Visitor *v, const char *name,
                                void *opaque, Error **errp)
{
    PVDCConnector *conn = opaque;
    uint64_t value = conn->display ? conn->display->pushes : 0;

    visit_type_uint64(v, name, &value, errp);
}

static void pvdc_console_coalesced(Object *obj, Visitor *v, const char *name,
                                   void *opaque, Error **errp)
{
    PVDCConnector *conn = opaque;
    uint64_t value = conn->display ? conn->display->coalesced : 0;

    visit_type_uint64(v, name, &value, errp);
}

static void pvdc_console_pending(Object *obj, Visitor *v, const char *name,
                                 void *opaque, Error **errp)
{
    PVDCConnector *conn = opaque;
    bool value = conn->display && conn->display->push_pending;

    visit_type_bool(v, name, &value, errp);
}

static bool pvdc_get_push_stall(Object *obj, Error **errp)
{
    return PVDC(obj)->push_stalled;
}

static void pvdc_set_push_stall(Object *obj, bool value, Error **errp)
{
    PVDCState *s = PVDC(obj);

    s->push_stalled = value;
    pvdc_console_push_resume(s);
}

void pvdc_console_instance_init(PVDCState *s)
{
    unsigned int h;

    object_property_add_bool(OBJECT(s), "x-push-stall", pvdc_get_push_stall,
                             pvdc_set_push_stall);
    object_property_set_description(OBJECT(s), "x-push-stall",
                                    "while true, frames latched wait to be "
                                    "pushed to the UIs, as behind a busy "
                                    "main loop (test knob, settable at run "
                                    "time)");
    object_property_add_uint64_ptr(OBJECT(s), "x-damage-pages",
                                   &s->damage_pages, OBJ_PROP_FLAG_READ);
    object_property_set_description(OBJECT(s), "x-damage-pages",
                                    "VRAM pages looked up in the dirty "
                                    "bitmap to find what to compose again "
                                    "(statistic)");
    object_property_add_uint64_ptr(OBJECT(s), "x-compositions",
                                   &s->compositions, OBJ_PROP_FLAG_READ);
    object_property_set_description(OBJECT(s), "x-compositions",
                                    "pictures composed so far, all heads, "
                                    "CRC captures included (statistic)");
    for (h = 0; h < PVDC_MAX_HEADS; h++) {
        g_autofree char *name = g_strdup_printf("x-head%u-compositions", h);

        object_property_add_uint64_ptr(OBJECT(s), name,
                                       &s->heads[h].compositions,
                                       OBJ_PROP_FLAG_READ);
        object_property_set_description(OBJECT(s), name,
                                        "pictures composed so far for this "
                                        "head (statistic)");
    }
    for (h = 0; h < PVDC_MAX_HEADS; h++) {
        g_autofree char *pushes = g_strdup_printf("x-console%u-pushes", h);
        g_autofree char *coalesced =
            g_strdup_printf("x-console%u-coalesced", h);
        g_autofree char *pending =
            g_strdup_printf("x-console%u-push-pending", h);

        object_property_add(OBJECT(s), pushes, "uint64", pvdc_console_pushes,
                            NULL, NULL, &s->connectors[h]);
        object_property_set_description(OBJECT(s), pushes,
                                        "frames pushed to the UI of this "
                                        "console at a latch (statistic)");
        object_property_add(OBJECT(s), coalesced, "uint64",
                            pvdc_console_coalesced, NULL, NULL,
                            &s->connectors[h]);
        object_property_set_description(OBJECT(s), coalesced,
                                        "latches folded into a push still "
                                        "pending on this console "
                                        "(statistic)");
        object_property_add(OBJECT(s), pending, "bool", pvdc_console_pending,
                            NULL, NULL, &s->connectors[h]);
        object_property_set_description(OBJECT(s), pending,
                                        "a latch changed this console and "
                                        "its push has not run yet");
    }
}

void pvdc_console_init(PVDCState *s)
{
    unsigned int h;

    memory_region_set_log(&s->vram, true, DIRTY_MEMORY_VGA);
    /*
     * Not guarded against re-entrant I/O, like gfx_update from the UI's
     * timer: it writes no guest memory, and the dirty snapshot lets go of
     * the BQL (run_on_cpu() in memory_global_after_dirty_log_sync()), when
     * a guard held would refuse the guest's own register accesses.
     */
    s->push_bh = qemu_bh_new(pvdc_console_push_bh, s);
    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCConnector *conn = &s->connectors[h];

        conn->dev = s;
        conn->index = h;
        /* pvdc series: capture */
        pvdc_capture_init(&s->heads[h]);
        /* pvdc series: end capture */
        conn->display = g_new0(PVDCDisplay, 1);
        conn->con = graphic_console_init(DEVICE(s), h, &pvdc_gfx_ops, conn);
    }
}

void pvdc_console_unrealize(PVDCState *s)
{
    unsigned int c;

    qemu_bh_cancel(s->push_bh);
    for (c = 0; c < s->conf.num_heads; c++) {
        graphic_console_close(s->connectors[c].con);
    }
    memory_region_set_log(&s->vram, false, DIRTY_MEMORY_VGA);
}

void pvdc_console_finalize(PVDCState *s)
{
    unsigned int h;

    if (s->push_bh) {
        qemu_bh_delete(s->push_bh);
        s->push_bh = NULL;
    }
    for (h = 0; h < PVDC_MAX_HEADS; h++) {
        /* pvdc series: capture */
        pvdc_capture_finalize(&s->heads[h]);
        /* pvdc series: end capture */
        g_free(s->connectors[h].display);
        s->connectors[h].display = NULL;
    }
}
