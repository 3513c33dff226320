/*
 * QTest cases for pvdc's connectors: the preferred mode and suggested
 * position of each, from the headN-* properties at start or changed at
 * run time, the EDID that describes them, the hotplug interrupt of the
 * connector (not of the head driving it), and their state and the last
 * CRC across migration.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "pvdc-qtest-compose.h"

/* The preferred mode in the first detailed timing descriptor. */
static void edid_preferred(PVDCCompose *t, unsigned int head, uint32_t *w,
                           uint32_t *h)
{
    uint8_t edid[PVDC_EDID_SIZE];

    for (int i = 0; i < PVDC_EDID_SIZE; i += 4) {
        stl_le_p(edid + i, pvdc_rd(&t->p, PVDC_EDID(head) + i));
    }
    *w = edid[56] | (edid[58] >> 4) << 8;
    *h = edid[59] | (edid[61] >> 4) << 8;
}

/*
 * The monitor on connector 0 changes while head 1 drives it: the hotplug
 * bit and EDID are connector 0's.
 */
static void test_hotplug_belongs_to_the_connector(void)
{
    PVDCScene scene = {};
    uint32_t w, h;
    PVDCCompose t;

    pvdc_compose_start(&t, NULL, false);
    pvdc_build_other_two_planes(&t, &scene);
    pvdc_commit_routed(&t, 1, 0, &scene);
    (void)pvdc_rd(&t.p, PVDC_REG_INT_ACK);

    pvdc_qom_set_uint(t.p.qts, "head0-yres", 720);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(0, PVDC_INT_HOTPLUG));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1024, 720));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1024, 768));
    edid_preferred(&t, 0, &w, &h);
    g_assert_cmpuint(h, ==, 720);
    edid_preferred(&t, 1, &w, &h);
    g_assert_cmpuint(h, ==, 768);
    pvdc_compose_stop(&t);
}

static void test_hotplug_on_property_change(void)
{
    uint32_t w, h;
    QDict *rsp;
    PVDCCompose t;

    pvdc_compose_start(&t, "xres=800,yres=600", false);
    edid_preferred(&t, 1, &w, &h);
    g_assert_cmpuint(w, ==, 800);
    g_assert_cmpuint(h, ==, 600);
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(800, 0));

    pvdc_qom_set_uint(t.p.qts, "head1-xres", 1280);
    pvdc_qom_set_uint(t.p.qts, "head1-yres", 720);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(1, PVDC_INT_HOTPLUG));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1280, 720));
    edid_preferred(&t, 1, &w, &h);
    g_assert_cmpuint(w, ==, 1280);
    g_assert_cmpuint(h, ==, 720);
    /* head 0 did not change */
    g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(800, 600));
    edid_preferred(&t, 0, &w, &h);
    g_assert_cmpuint(w, ==, 800);

    /* head 0 narrower: head 1, placed right of it, moves too */
    pvdc_wr(&t.p, PVDC_REG_INT_STATUS, pvdc_rd(&t.p, PVDC_REG_INT_STATUS));
    pvdc_qom_set_uint(t.p.qts, "head0-xres", 640);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(0, PVDC_INT_HOTPLUG) |
                    PVDC_INT(1, PVDC_INT_HOTPLUG));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(640, 0));

    /* an explicit position */
    pvdc_wr(&t.p, PVDC_REG_INT_STATUS, pvdc_rd(&t.p, PVDC_REG_INT_STATUS));
    pvdc_qom_set_uint(t.p.qts, "head1-y", 600);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==,
                    PVDC_INT(1, PVDC_INT_HOTPLUG));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(640, 600));

    /* the same value again is no event; out of range is refused */
    pvdc_wr(&t.p, PVDC_REG_INT_STATUS, pvdc_rd(&t.p, PVDC_REG_INT_STATUS));
    pvdc_qom_set_uint(t.p.qts, "head1-xres", 1280);
    rsp = qtest_qmp(t.p.qts, "{ 'execute': 'qom-set', 'arguments': "
                    "{ 'path': %s, 'property': 'head1-xres', "
                    "'value': 100000 } }", PVDC_QOM_PATH);
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    rsp = qtest_qmp(t.p.qts, "{ 'execute': 'qom-set', 'arguments': "
                    "{ 'path': %s, 'property': 'head5-xres', "
                    "'value': 640 } }", PVDC_QOM_PATH);
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==, 0);
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1280, 720));
    pvdc_compose_stop(&t);
}

/* Connector state and the last CRC survive migration. */
static void test_migration_keeps_connectors_and_crc(void)
{
    g_autofree char *props = pvdc_compose_props(NULL);
    PVDCScene scene = {};
    uint32_t crc, frame, w, h;
    PVDCCompose src, dst = {};

    pvdc_compose_start(&src, NULL, true);
    pvdc_build_two_planes(&src, &scene);
    pvdc_commit_scene(&src, 0, &scene);
    crc = pvdc_next_frame_crc(&src, 0);
    frame = pvdc_head_ctl(&src.p, 0, PVDC_HEAD_CRC_FRAME);
    pvdc_qom_set_uint(src.p.qts, "head1-xres", 1280);
    pvdc_qom_set_uint(src.p.qts, "head1-y", 100);
    pvdc_step_to(&src.p, src.p.now + 1);
    pvdc_test_migrate(&src.p, &dst.p, props, NULL);
    dst.shadow = g_malloc0(SHADOW_VRAM);

    g_assert_cmphex(pvdc_head_ctl(&dst.p, 0, PVDC_HEAD_CRC_VALUE), ==, crc);
    g_assert_cmpuint(pvdc_head_ctl(&dst.p, 0, PVDC_HEAD_CRC_FRAME), ==, frame);
    g_assert_cmphex(pvdc_head_ctl(&dst.p, 1, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1280, 768));
    g_assert_cmphex(pvdc_head_ctl(&dst.p, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(1024, 100));
    edid_preferred(&dst, 1, &w, &h);
    g_assert_cmpuint(w, ==, 1280);
    g_assert_cmpuint(h, ==, 768);
    /* VRAM came along: the next frame is the same picture */
    g_assert_cmphex(pvdc_next_frame_crc(&dst, 0), ==, crc);

    pvdc_compose_stop(&dst);
    pvdc_compose_stop(&src);
}

static void test_per_head_properties_at_start(void)
{
    uint32_t w, h;
    PVDCCompose t;

    pvdc_compose_start(&t, "head0-xres=640,head0-yres=480,head1-x=0,"
                       "head1-y=480", false);
    g_assert_cmphex(pvdc_head_ctl(&t.p, 0, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(640, 480));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_PREFERRED), ==,
                    PVDC_XY(1024, 768));
    g_assert_cmphex(pvdc_head_ctl(&t.p, 1, PVDC_HEAD_SUGGESTED_POS), ==,
                    PVDC_XY(0, 480));
    edid_preferred(&t, 0, &w, &h);
    g_assert_cmpuint(w, ==, 640);
    g_assert_cmpuint(h, ==, 480);
    g_assert_cmphex(pvdc_rd(&t.p, PVDC_REG_INT_STATUS), ==, 0);
    pvdc_compose_stop(&t);
}

static void test_properties_of_missing_heads_fail_realize(void)
{
    QTestState *qts = qtest_init("-machine q35 -nodefaults");
    QDict *rsp;

    rsp = qtest_qmp(qts, "{ 'execute': 'device_add', 'arguments': "
                    "{ 'driver': 'pvdc', 'heads': 2, 'head2-xres': 640 } }");
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    rsp = qtest_qmp(qts, "{ 'execute': 'device_add', 'arguments': "
                    "{ 'driver': 'pvdc', 'head0-xres': 100000 } }");
    g_assert(qdict_haskey(rsp, "error"));
    qobject_unref(rsp);
    qtest_quit(qts);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/output/hotplug-belongs-to-the-connector",
                   test_hotplug_belongs_to_the_connector);
    qtest_add_func("/pvdc/output/migration-keeps-connectors-and-crc",
                   test_migration_keeps_connectors_and_crc);
    qtest_add_func("/pvdc/output/property-change-raises-hotplug",
                   test_hotplug_on_property_change);
    qtest_add_func("/pvdc/output/per-head-properties-at-start",
                   test_per_head_properties_at_start);
    qtest_add_func("/pvdc/output/properties-of-missing-heads-fail-realize",
                   test_properties_of_missing_heads_fail_realize);

    return g_test_run();
}
