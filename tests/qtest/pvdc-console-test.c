/*
 * QTest cases for what reaches pvdc's consoles: a head composed only when
 * what it shows changed (dirty tracking, of VRAM and of the Cb:Cr plane
 * of YCbCr planes), shown straight from VRAM when one plane covers it
 * alone, a cursor drawn by the UI (host-cursor=on), console c showing the
 * head that drives connector c, and latched frames pushed to the UI once
 * each.  Pictures are compared with the reference composer of the compose
 * qtest library (pvdc-qtest-compose.h).
 *
 * Time only moves through the qtest clock; the mode is 64x48 at one
 * frame per millisecond.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest-compose.h"

/* ------------------------------------------------------------------------ */
/* Dirty tracking                                                           */
/* ------------------------------------------------------------------------ */

static void test_idle_guest_costs_no_composition(void)
{
    PVDCScene scene = {};
    uint64_t n;
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, false);
    pvdc_build_two_planes(&t, &scene);
    pvdc_commit_scene(&t, 0, &scene);
    pvdc_assert_screen_is(&t, 0, &scene);
    n = pvdc_compositions(&t, 0);
    g_assert_cmpuint(n, ==, 1);

    for (int i = 0; i < 5; i++) {
        pvdc_step_to(&t.p, t.p.now + 10 * SCALE_MS);
        pvdc_assert_screen_is(&t, 0, &scene);
    }
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, n);

    /* a commit that changes nothing visible costs nothing either */
    pvdc_commit_scene(&t, 0, &scene);
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, n);
    g_assert_cmpuint(pvdc_compositions(&t, 1), ==, 0);
    g_assert_cmpuint(pvdc_statistic(t.p.qts, "x-compositions"), ==, n);
    pvdc_compose_stop(&t);
}

typedef struct Rect {
    int x, y, width, height;
} Rect;

/* The rectangle of the last composition the trace in @log reports. */
static void last_composition(const char *log, Rect *rect)
{
    g_autofree char *text = NULL;
    const char *line = NULL, *p;
    unsigned int head;

    g_assert(g_file_get_contents(log, &text, NULL, NULL));
    for (p = text; (p = strstr(p, "pvdc_compose ")); p++) {
        line = p;
    }
    g_assert_nonnull(line);
    g_assert_cmpint(sscanf(line, "pvdc_compose head %u rect %d,%d %dx%d",
                           &head, &rect->x, &rect->y, &rect->width,
                           &rect->height), ==, 5);
}

static void assert_rect_holds(const Rect *rect, int x, int y)
{
    g_assert_cmpint(rect->x, <=, x);
    g_assert_cmpint(rect->y, <=, y);
    g_assert_cmpint(rect->x + rect->width, >, x);
    g_assert_cmpint(rect->y + rect->height, >, y);
}

/*
 * A write under a visible plane is composed once, and only the part of
 * the head the written pages show (the trace says which part).
 */
static void test_vram_write_recomposes_what_it_touched(void)
{
    g_autofree char *dir = g_dir_make_tmp("pvdc-compose-XXXXXX", NULL);
    g_autofree char *log = g_strdup_printf("%s/trace.log", dir);
    g_autofree char *extra = g_strdup_printf("-d trace:pvdc_compose -D %s",
                                             log);
    PVDCScene scene = {};
    uint32_t pixel = 0x00abcdef;
    Rect rect;
    uint64_t n;
    PVDCCompose t;

    pvdc_compose_start_with(&t, NULL, extra, false);
    pvdc_build_two_planes(&t, &scene);
    pvdc_commit_scene(&t, 0, &scene);
    pvdc_assert_screen_is(&t, 0, &scene);
    n = pvdc_compositions(&t, 0);
    last_composition(log, &rect);
    g_assert_cmpint(rect.width * rect.height, ==, MODE_W * MODE_H);

    /* under the overlay at (30, 20): the new pixel shows */
    pvdc_vram_write(&t, FB_BASE(1) + 5 * scene.planes[1].pitch + 7 * 4, &pixel,
                    4);
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, n + 1);
    last_composition(log, &rect);
    assert_rect_holds(&rect, 37, 25);
    g_assert_cmpint(rect.width * rect.height, <=, 20 * 16);

    /* the primary's line 40: a band of lines of the head, not all of it */
    pvdc_vram_write(&t, FB_BASE(0) + 40 * scene.planes[0].pitch + 3 * 4,
                    &pixel, 4);
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, n + 2);
    last_composition(log, &rect);
    assert_rect_holds(&rect, 3, 40);
    g_assert_cmpint(rect.height, <, MODE_H);

    /* VRAM no plane shows: nothing to do */
    pvdc_vram_write(&t, FB_BASE(5) + 100, &pixel, 4);
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, n + 2);
    pvdc_compose_stop(&t);
    unlink(log);
    rmdir(dir);
}

/* One full-screen XRGB8888 plane is shown from VRAM: no composition. */
static void test_direct_scanout_needs_no_composition(void)
{
    PVDCScene scene = {};
    uint32_t pixel = 0x00fedcba;
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, false);
    pvdc_show_one_framebuffer(&t, &scene);
    pvdc_vram_write(&t, FB_BASE(0) + 17 * scene.planes[0].pitch + 3 * 4,
                    &pixel, 4);
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, 0);
    pvdc_compose_stop(&t);
}

/*
 * A YCbCr plane covering the head alone is never shown from VRAM, and a
 * write to its Cb:Cr plane alone is composed again.
 */
static void test_ycbcr_is_composed_and_its_chroma_tracked(void)
{
    static const uint32_t formats[] = { PVDC_FMT_NV12, PVDC_FMT_P010 };

    for (int i = 0; i < ARRAY_SIZE(formats); i++) {
        PVDCScene scene = {};
        const uint8_t cbcr[4] = { 0x10, 0xf0, 0x20, 0xe0 };
        uint64_t n;
        PVDCCompose t;

        pvdc_compose_start(&t, NULL, false);
        pvdc_scene_add(&scene, pvdc_scene_plane(&t, OVERLAY(0), formats[i], 0,
                                                MODE_W, MODE_H, 0, 0, 0));
        pvdc_commit_scene(&t, 0, &scene);
        pvdc_assert_screen_is(&t, 0, &scene);
        n = pvdc_compositions(&t, 0);
        g_assert_cmpuint(n, ==, 1);

        /* chroma samples (5, 7) and (6, 7): lines 13..16 of the head */
        pvdc_vram_write(&t, CHROMA_BASE(0) + 7 * scene.planes[0].chroma_pitch +
                        5 * pvdc_chroma_bps(formats[i]), cbcr,
                        pvdc_chroma_bps(formats[i]));
        pvdc_vram_write(&t, CHROMA_BASE(0) + 7 * scene.planes[0].chroma_pitch +
                        6 * pvdc_chroma_bps(formats[i]), cbcr,
                        pvdc_chroma_bps(formats[i]));
        pvdc_assert_screen_is(&t, 0, &scene);
        g_assert_cmpuint(pvdc_compositions(&t, 0), ==, n + 1);
        pvdc_compose_stop(&t);
    }
}

/* ------------------------------------------------------------------------ */
/* A cursor the UI draws                                                    */
/* ------------------------------------------------------------------------ */

/*
 * With host-cursor=on the UI draws the cursor plane: the console picture
 * leaves it out and moving it composes nothing.
 * pvdc series: capture
 * CRCs still have it.
 * pvdc series: end capture
 */
static void test_host_cursor_is_not_composed(void)
{
    PVDCScene scene = {}, without = {};
    g_autofree uint32_t *want = g_new(uint32_t, MODE_W * MODE_H);
    uint64_t n;
    PVDCCompose t;

    pvdc_compose_start(&t, "host-cursor=on", true);
    pvdc_build_cursor(&t, &scene);
    pvdc_commit_scene(&t, 0, &scene);
    pvdc_reference(&t, &scene, want);
    /* pvdc series: capture */
    g_assert_cmphex(pvdc_next_frame_crc(&t, 0), ==,
                    pvdc_frame_crc(want, MODE_W * MODE_H));

    pvdc_wr(&t.p, PVDC_HEAD_CONTROL(0) + PVDC_HEAD_CRC_CTRL, 0);
    /* pvdc series: end capture */
    without = scene;
    without.num_planes--;
    g_assert_cmpuint(scene.planes[without.num_planes].slot, ==, CURSOR);
    pvdc_assert_screen_is(&t, 0, &without);
    n = pvdc_compositions(&t, 0);

    scene.planes[without.num_planes].dst_x = -5;
    scene.planes[without.num_planes].dst_y = 40;
    pvdc_commit_scene(&t, 0, &scene);
    pvdc_assert_screen_is(&t, 0, &without);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, n);
    pvdc_compose_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Connector routing: console c shows the head that drives connector c      */
/* ------------------------------------------------------------------------ */

/* Disable @head and its planes. */
static void disable_head(PVDCCompose *t, unsigned int head)
{
    for (unsigned int i = 0; i < SLOTS; i++) {
        pvdc_wr(&t->p,
                PVDC_PLANE_SHADOW(pvdc_slot_index(head, i)) + PVDC_PS_CTRL, 0);
    }
    pvdc_wr(&t->p, PVDC_HEAD_SHADOW(head) + PVDC_HS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(&t->p, head), ==, PVDC_RESULT_APPLIED);
    t->head_on[head] = false;
}

/*
 * Connector 0 moves from head 0 to head 1, then the heads swap, then
 * go back: each console shows the head that drives its connector, or
 * the blank picture once the head left it.
 */
static void test_console_shows_the_head_driving_it(void)
{
    PVDCScene scene0 = {}, scene1 = {};
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, false);
    pvdc_build_two_planes(&t, &scene0);
    pvdc_build_other_two_planes(&t, &scene1);
    pvdc_commit_scene(&t, 0, &scene0);
    pvdc_assert_screen_is(&t, 0, &scene0);
    pvdc_assert_screen_blank(&t, 1);

    disable_head(&t, 0);
    pvdc_commit_routed(&t, 1, 0, &scene1);
    pvdc_assert_screen_is(&t, 0, &scene1);
    pvdc_assert_screen_blank(&t, 1);

    /* swapped: head 0 on connector 1, head 1 on connector 0 */
    pvdc_commit_routed(&t, 0, 1, &scene0);
    pvdc_assert_screen_is(&t, 0, &scene1);
    pvdc_assert_screen_is(&t, 1, &scene0);

    /* and back, through a disable of both */
    disable_head(&t, 0);
    pvdc_assert_screen_blank(&t, 1);
    disable_head(&t, 1);
    pvdc_assert_screen_blank(&t, 0);
    pvdc_commit_routed(&t, 1, 1, &scene1);
    pvdc_commit_routed(&t, 0, 0, &scene0);
    pvdc_assert_screen_is(&t, 0, &scene0);
    pvdc_assert_screen_is(&t, 1, &scene1);
    pvdc_compose_stop(&t);
}

/* The surface of a console has the size of the mode of the head on it. */
static void test_console_takes_the_size_of_its_head(void)
{
    g_autofree uint32_t *got = NULL;
    PVDCScene scene = {};
    int w, h;
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, false);
    pvdc_write_mode_sized(&t.p, 1, MODE_W / 2, MODE_H / 2, MODE_HTOTAL,
                          MODE_VTOTAL, CLOCK_1MS);
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(1) + PVDC_HS_BACKGROUND, 0x123456);
    pvdc_wr(&t.p, PVDC_HEAD_SHADOW(1) + PVDC_HS_CONNECTOR, 0);
    g_assert_cmphex(pvdc_commit(&t.p, 1), ==, PVDC_RESULT_APPLIED);
    got = pvdc_screendump(t.p.qts, 0, &w, &h);
    g_assert_cmpint(w, ==, MODE_W / 2);
    g_assert_cmpint(h, ==, MODE_H / 2);
    for (int i = 0; i < w * h; i++) {
        g_assert_cmphex(got[i], ==, 0x123456);
    }
    pvdc_assert_screen_blank(&t, 1);

    disable_head(&t, 1);
    pvdc_build_two_planes(&t, &scene);
    pvdc_commit_routed(&t, 0, 0, &scene);
    pvdc_assert_screen_is(&t, 0, &scene);
    pvdc_compose_stop(&t);
}

/*
 * A VRAM write under a plane of head 1, which drives connector 0, is
 * composed again into console 0, once; console 1 stays blank.
 */
static void test_vram_write_updates_the_routed_console(void)
{
    PVDCScene scene = {};
    uint32_t pixel = 0x00abcdef;
    uint64_t n;
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, false);
    pvdc_build_other_two_planes(&t, &scene);
    pvdc_commit_routed(&t, 1, 0, &scene);
    pvdc_assert_screen_is(&t, 0, &scene);
    pvdc_assert_screen_blank(&t, 1);
    n = pvdc_compositions(&t, 1);
    g_assert_cmpuint(n, ==, 1);

    /* under the overlay at (10, 4) */
    pvdc_vram_write(&t, FB_BASE(3) + 5 * scene.planes[1].pitch + 7 * 2, &pixel,
                    2);
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 1), ==, n + 1);
    /* the primary's line 30 */
    pvdc_vram_write(&t, FB_BASE(2) + 30 * scene.planes[0].pitch + 3 * 4,
                    &pixel, 4);
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 1), ==, n + 2);
    pvdc_assert_screen_blank(&t, 1);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, 0);
    pvdc_compose_stop(&t);
}

/* With host-cursor=on, the cursor of the routed head is the UI's too. */
static void test_host_cursor_follows_the_route(void)
{
    PVDCScene scene = {}, without;
    uint64_t n;
    PVDCCompose t;

    pvdc_compose_start(&t, "host-cursor=on", false);
    pvdc_build_cursor(&t, &scene);
    pvdc_commit_routed(&t, 1, 0, &scene);
    without = scene;
    without.num_planes--;
    g_assert_cmpuint(scene.planes[without.num_planes].slot, ==, CURSOR);
    pvdc_assert_screen_is(&t, 0, &without);
    pvdc_assert_screen_blank(&t, 1);
    n = pvdc_compositions(&t, 1);

    /* moving it composes nothing */
    scene.planes[without.num_planes].dst_x = -5;
    scene.planes[without.num_planes].dst_y = 40;
    pvdc_commit_routed(&t, 1, 0, &scene);
    pvdc_assert_screen_is(&t, 0, &without);
    g_assert_cmpuint(pvdc_compositions(&t, 1), ==, n);
    pvdc_compose_stop(&t);
}

/* ------------------------------------------------------------------------ */
/* Frames pushed to the UI at the latch                                     */
/* ------------------------------------------------------------------------ */

/*
 * A UI listening on console 0 only: a VNC display without sockets or
 * clients, which never asks for a refresh itself, so that every frame
 * console 0 gets is one the device pushed.
 */
#define ONE_LISTENER        "-vnc none"
/* Frames flipped in each case; the mode's refresh is 1 kHz. */
#define PUSH_FRAMES         6

static uint64_t console_stat(PVDCCompose *t, const char *what,
                             unsigned int console)
{
    g_autofree char *prop = g_strdup_printf("x-console%u-%s", console, what);

    return pvdc_statistic(t->p.qts, prop);
}

static bool push_pending(PVDCCompose *t, unsigned int console)
{
    g_autofree char *prop = g_strdup_printf("x-console%u-push-pending",
                                            console);
    QDict *rsp = qtest_qmp(t->p.qts, "{ 'execute': 'qom-get', 'arguments': "
                           "{ 'path': %s, 'property': %s } }", PVDC_QOM_PATH,
                           prop);
    bool pending;

    g_assert(qdict_haskey(rsp, "return"));
    pending = qdict_get_bool(rsp, "return");
    qobject_unref(rsp);
    return pending;
}

/*
 * Return once the push a latch scheduled on @console has run, the
 * @pushes'th.  It runs from the main loop, which each QMP round trip lets
 * run: the device says when it is done, no clock is involved.
 */
static void wait_pushed(PVDCCompose *t, unsigned int console, uint64_t pushes)
{
    for (int i = 0; i < 100 && push_pending(t, console); i++) {
        continue;
    }
    g_assert_false(push_pending(t, console));
    g_assert_cmpuint(console_stat(t, "pushes", console), ==, pushes);
}

/*
 * Frame @i of a composed scene, in @scene, committed on head 0: the
 * primary and an overlay that moves, so that every frame shows something
 * else.
 */
static void flip_moving_overlay(PVDCCompose *t, PVDCScene *scene,
                                unsigned int i)
{
    memset(scene, 0, sizeof(*scene));
    scene->background = 0x405060;
    pvdc_scene_add(scene, pvdc_scene_plane(t, PRIMARY, PVDC_FMT_XRGB8888, 0,
                                           MODE_W, MODE_H, 0, 0, 0));
    pvdc_scene_add(scene, pvdc_scene_plane(t, OVERLAY(0), PVDC_FMT_XRGB8888, 1,
                                           20, 16, 2 + 3 * i, 20, 1));
    pvdc_commit_scene(t, 0, scene);
}

/*
 * Frame @i of a single full-screen plane flipped between two buffers, in
 * @scene, committed on head 0.
 */
static void flip_buffers(PVDCCompose *t, PVDCScene *scene, unsigned int i)
{
    memset(scene, 0, sizeof(*scene));
    pvdc_scene_add(scene, pvdc_scene_plane(t, PRIMARY, PVDC_FMT_XRGB8888,
                                           2 + i % 2, MODE_W, MODE_H, 0, 0, 0));
    pvdc_commit_scene(t, 0, scene);
}

/*
 * Each latched frame that changes the picture is pushed to the UI once
 * and composed once; a commit that changes nothing visible is no frame.
 * The console nobody listens to gets nothing, and costs nothing.
 */
static void test_latched_frames_are_pushed(void)
{
    PVDCScene scene;
    PVDCCompose t;

    pvdc_compose_start_with(&t, NULL, ONE_LISTENER, false);
    for (unsigned int i = 0; i < PUSH_FRAMES; i++) {
        flip_moving_overlay(&t, &scene, i);
        pvdc_commit_scene(&t, 1, &scene);
        wait_pushed(&t, 0, i + 1);
        g_assert_cmpuint(pvdc_compositions(&t, 0), ==, i + 1);
    }
    pvdc_commit_scene(&t, 0, &scene);
    wait_pushed(&t, 0, PUSH_FRAMES);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, PUSH_FRAMES);
    g_assert_cmpuint(console_stat(&t, "coalesced", 0), ==, 0);

    g_assert_cmpuint(console_stat(&t, "pushes", 1), ==, 0);
    g_assert_cmpuint(pvdc_compositions(&t, 1), ==, 0);
    /* The UI was handed the last frame. */
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, PUSH_FRAMES);
    pvdc_compose_stop(&t);
}

/*
 * A full-screen plane flipped between two buffers is shown straight from
 * VRAM: each flip replaces the surface, and the UI is told to draw it.
 */
static void test_direct_flips_are_pushed(void)
{
    PVDCScene scene;
    PVDCCompose t;

    pvdc_compose_start_with(&t, NULL, ONE_LISTENER, false);
    for (unsigned int i = 0; i < PUSH_FRAMES; i++) {
        flip_buffers(&t, &scene, i);
        wait_pushed(&t, 0, i + 1);
    }
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, 0);
    pvdc_assert_screen_is(&t, 0, &scene);
    pvdc_compose_stop(&t);
}

/* Without a UI, frames latched are neither composed nor pushed. */
static void test_no_listener_no_push(void)
{
    uint64_t callbacks;
    PVDCScene scene;
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, false);
    /* a push scheduled would stay pending: none is */
    pvdc_qom_set_bool(t.p.qts, "x-push-stall", true);
    for (unsigned int i = 0; i < PUSH_FRAMES; i++) {
        flip_moving_overlay(&t, &scene, i);
        g_assert_false(push_pending(&t, 0));
    }
    g_assert_cmpuint(pvdc_statistic(t.p.qts, "x-compositions"), ==, 0);
    g_assert_cmpuint(console_stat(&t, "pushes", 0), ==, 0);
    /* and once the guest stops, the device does nothing more */
    callbacks = pvdc_timer_callbacks(&t.p);
    pvdc_step_to(&t.p, t.p.now + 50 * PERIOD_1MS);
    g_assert_cmpuint(pvdc_timer_callbacks(&t.p), ==, callbacks);
    g_assert_cmpuint(pvdc_statistic(t.p.qts, "x-compositions"), ==, 0);
    pvdc_compose_stop(&t);
}

/*
 * Behind a UI that has not taken the last push, latches do not wait and
 * do not queue: they fold into the push pending, which shows the last.
 */
static void test_slow_listener_coalesces(void)
{
    PVDCScene scene;
    PVDCCompose t;

    pvdc_compose_start_with(&t, NULL, ONE_LISTENER, false);
    flip_moving_overlay(&t, &scene, 0);
    wait_pushed(&t, 0, 1);

    pvdc_qom_set_bool(t.p.qts, "x-push-stall", true);
    for (unsigned int i = 1; i <= PUSH_FRAMES; i++) {
        flip_moving_overlay(&t, &scene, i);
    }
    g_assert_true(push_pending(&t, 0));
    g_assert_cmpuint(console_stat(&t, "pushes", 0), ==, 1);
    g_assert_cmpuint(console_stat(&t, "coalesced", 0), ==, PUSH_FRAMES - 1);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, 1);
    g_assert_cmpuint(pvdc_statistic(t.p.qts, "x-commits-applied"), ==,
                     PUSH_FRAMES + 1);

    pvdc_qom_set_bool(t.p.qts, "x-push-stall", false);
    wait_pushed(&t, 0, 2);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, 2);
    /* what was pushed is the last frame: nothing is left to compose */
    pvdc_assert_screen_is(&t, 0, &scene);
    g_assert_cmpuint(pvdc_compositions(&t, 0), ==, 2);
    pvdc_compose_stop(&t);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/compose/dirty/idle-guest-costs-no-composition",
                   test_idle_guest_costs_no_composition);
    qtest_add_func("/pvdc/compose/dirty/vram-write-recomposes-once",
                   test_vram_write_recomposes_what_it_touched);
    qtest_add_func("/pvdc/compose/dirty/direct-scanout-needs-no-composition",
                   test_direct_scanout_needs_no_composition);
    qtest_add_func("/pvdc/compose/dirty/ycbcr-is-composed-and-its-chroma-"
                   "tracked", test_ycbcr_is_composed_and_its_chroma_tracked);
    qtest_add_func("/pvdc/compose/cursor/host-cursor-is-not-composed",
                   test_host_cursor_is_not_composed);
    qtest_add_func("/pvdc/compose/routing/console-shows-the-head-driving-it",
                   test_console_shows_the_head_driving_it);
    qtest_add_func("/pvdc/compose/routing/console-takes-the-size-of-its-head",
                   test_console_takes_the_size_of_its_head);
    qtest_add_func("/pvdc/compose/routing/vram-write-updates-the-routed-"
                   "console", test_vram_write_updates_the_routed_console);
    qtest_add_func("/pvdc/compose/routing/host-cursor-follows-the-route",
                   test_host_cursor_follows_the_route);
    qtest_add_func("/pvdc/compose/push/latched-frames-are-pushed",
                   test_latched_frames_are_pushed);
    qtest_add_func("/pvdc/compose/push/direct-flips-are-pushed",
                   test_direct_flips_are_pushed);
    qtest_add_func("/pvdc/compose/push/no-listener-no-push",
                   test_no_listener_no_push);
    qtest_add_func("/pvdc/compose/push/slow-listener-coalesces",
                   test_slow_listener_coalesces);

    return g_test_run();
}
