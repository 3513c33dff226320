/*
 * QTest cases for pvdc's boot display: the ramfb companion on head 0.
 *
 * The test plays the firmware: it writes a picture into guest RAM and its
 * place into the fw_cfg file etc/ramfb by fw_cfg DMA, as SeaBIOS's
 * vgabios-ramfb.bin and OVMF's QemuRamfbDxe do, then looks at head 0's
 * console through QMP screendumps.  Nothing here waits on a clock: the
 * console is refreshed by each screendump.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/bswap.h"
#include "standard-headers/drm/drm_fourcc.h"
#include "standard-headers/linux/qemu_fw_cfg.h"
#include "libqos/fw_cfg.h"
#include "pvdc-qtest.h"

#define RAMFB_FILE          "etc/ramfb"
/* PC fw_cfg: selector and data ports, DMA address (big-endian, 64-bit). */
#define FW_CFG_IO_BASE      0x510
#define FW_CFG_DMA_HI       (FW_CFG_IO_BASE + 4)
#define FW_CFG_DMA_LO       (FW_CFG_IO_BASE + 8)

/*
 * The firmware's framebuffer: another size than the test mode's, so that
 * a screendump tells which of the two head 0 shows.  Guest RAM the
 * machine does not use without firmware.
 */
#define BOOT_W              80
#define BOOT_H              60
#define BOOT_STRIDE         (BOOT_W * 4)
#define BOOT_FB_ADDR        0x800000ULL
#define BOOT_CFG_ADDR       0x7ff000ULL
#define BOOT_DMA_ADDR       0x7ff100ULL

/* What the disabled connector shows (pvdc-console.c). */
#define BLANK_W             640
#define BLANK_H             480

/* hw/display/ramfb.c's etc/ramfb, big-endian. */
typedef struct QEMU_PACKED RAMFBCfg {
    uint64_t addr;
    uint32_t fourcc;
    uint32_t flags;
    uint32_t width;
    uint32_t height;
    uint32_t stride;
} RAMFBCfg;

static uint32_t boot_pixel(uint32_t seed, int x, int y)
{
    uint32_t r = (seed + x * 3) & 0xff;
    uint32_t g = (y * 4) & 0xff;
    uint32_t b = (seed ^ 0x80) & 0xff;

    return r << 16 | g << 8 | b;
}

/* The firmware draws picture @seed into its framebuffer. */
static void boot_draw(QTestState *qts, uint32_t seed)
{
    g_autofree uint32_t *fb = g_new(uint32_t, BOOT_W * BOOT_H);

    for (int y = 0; y < BOOT_H; y++) {
        for (int x = 0; x < BOOT_W; x++) {
            fb[y * BOOT_W + x] = cpu_to_le32(boot_pixel(seed, x, y));
        }
    }
    qtest_memwrite(qts, BOOT_FB_ADDR, fb, BOOT_STRIDE * BOOT_H);
}

/* The selector of fw_cfg file @name, or 0 if the machine has none. */
static uint16_t fw_cfg_file_select(QTestState *qts, const char *name)
{
    QFWCFG *fw_cfg = pc_fw_cfg_init(qts);
    g_autofree struct fw_cfg_file *files = NULL;
    uint32_t count;
    uint16_t select = 0;

    qfw_cfg_select(fw_cfg, FW_CFG_FILE_DIR);
    qfw_cfg_read_data(fw_cfg, &count, sizeof(count));
    count = be32_to_cpu(count);
    files = g_new(struct fw_cfg_file, count);
    qfw_cfg_read_data(fw_cfg, files, count * sizeof(*files));
    for (uint32_t i = 0; i < count; i++) {
        if (!strcmp(files[i].name, name)) {
            select = be16_to_cpu(files[i].select);
        }
    }
    pc_fw_cfg_uninit(fw_cfg);
    return select;
}

/* Set the firmware's framebuffer up through etc/ramfb, by fw_cfg DMA. */
static void boot_setup(QTestState *qts)
{
    uint16_t select = fw_cfg_file_select(qts, RAMFB_FILE);
    RAMFBCfg cfg = {
        .addr = cpu_to_be64(BOOT_FB_ADDR),
        .fourcc = cpu_to_be32(DRM_FORMAT_XRGB8888),
        .width = cpu_to_be32(BOOT_W),
        .height = cpu_to_be32(BOOT_H),
        .stride = cpu_to_be32(BOOT_STRIDE),
    };
    struct fw_cfg_dma_access access = {
        .control = cpu_to_be32((uint32_t)select << 16 |
                               FW_CFG_DMA_CTL_SELECT | FW_CFG_DMA_CTL_WRITE),
        .length = cpu_to_be32(sizeof(cfg)),
        .address = cpu_to_be64(BOOT_CFG_ADDR),
    };

    g_assert_cmpuint(select, !=, 0);
    qtest_memwrite(qts, BOOT_CFG_ADDR, &cfg, sizeof(cfg));
    qtest_memwrite(qts, BOOT_DMA_ADDR, &access, sizeof(access));
    /* The low half starts the transfer; done before the write returns. */
    qtest_outl(qts, FW_CFG_DMA_HI, cpu_to_be32(BOOT_DMA_ADDR >> 32));
    qtest_outl(qts, FW_CFG_DMA_LO, cpu_to_be32((uint32_t)BOOT_DMA_ADDR));
    qtest_memread(qts, BOOT_DMA_ADDR, &access, sizeof(access));
    g_assert_cmphex(be32_to_cpu(access.control), ==, 0);
}

/* Head 0 shows the firmware's picture @seed. */
static void assert_boot_shown(QTestState *qts, uint32_t seed)
{
    int w, h;
    g_autofree uint32_t *pixels = pvdc_screendump(qts, 0, &w, &h);

    g_assert_cmpint(w, ==, BOOT_W);
    g_assert_cmpint(h, ==, BOOT_H);
    for (int y = 0; y < BOOT_H; y++) {
        for (int x = 0; x < BOOT_W; x++) {
            g_assert_cmphex(pixels[y * w + x], ==, boot_pixel(seed, x, y));
        }
    }
}

/* Connector @head shows the picture of a disabled connector. */
static void assert_head_blank(QTestState *qts, unsigned int head)
{
    int w, h;
    g_autofree uint32_t *pixels = pvdc_screendump(qts, head, &w, &h);

    g_assert_cmpint(w, ==, BLANK_W);
    g_assert_cmpint(h, ==, BLANK_H);
    for (int i = 0; i < w * h; i++) {
        g_assert_cmphex(pixels[i], ==, 0);
    }
}

static void assert_blank(QTestState *qts)
{
    assert_head_blank(qts, 0);
}

/* Head 0 shows the device's own picture: the test mode, VRAM zeroed. */
static void assert_head_shown(QTestState *qts)
{
    int w, h;
    g_autofree uint32_t *pixels = pvdc_screendump(qts, 0, &w, &h);

    g_assert_cmpint(w, ==, MODE_W);
    g_assert_cmpint(h, ==, MODE_H);
    for (int i = 0; i < w * h; i++) {
        g_assert_cmphex(pixels[i], ==, 0);
    }
}

static void disable_head0(PVDCTest *t)
{
    pvdc_wr_head(t, 0, PVDC_HS_CTRL, 0);
    pvdc_wr_plane(t, pvdc_plane_of(t, 0, PRIMARY), PVDC_PS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(t, 0), ==, PVDC_RESULT_APPLIED);
}

static void test_firmware_picture_on_head0(void)
{
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    /* Before the firmware sets a framebuffer up: nothing of it. */
    assert_blank(t.qts);
    boot_draw(t.qts, 1);
    boot_setup(t.qts);
    assert_boot_shown(t.qts, 1);
    /* Straight from guest RAM: what the firmware draws next shows. */
    boot_draw(t.qts, 2);
    assert_boot_shown(t.qts, 2);
    /* Only head 0 has it. */
    assert_head_blank(t.qts, 1);
    pvdc_test_stop(&t);
}

static void test_first_enabled_head_ends_it(void)
{
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    boot_draw(t.qts, 1);
    boot_setup(t.qts);
    assert_boot_shown(t.qts, 1);
    /* Head 1 drives connector 1: connector 0's boot display ends too. */
    pvdc_enable_head(&t, 1, CLOCK_1MS);
    assert_blank(t.qts);
    pvdc_wr_head(&t, 1, PVDC_HS_CTRL, 0);
    pvdc_wr_plane(&t, pvdc_plane_of(&t, 1, PRIMARY), PVDC_PS_CTRL, 0);
    g_assert_cmphex(pvdc_commit(&t, 1), ==, PVDC_RESULT_APPLIED);

    pvdc_enable_head(&t, 0, CLOCK_1MS);
    assert_head_shown(t.qts);
    /* Disabled again, or set up again: the device never reads it again. */
    disable_head0(&t);
    assert_blank(t.qts);
    boot_draw(t.qts, 2);
    boot_setup(t.qts);
    assert_blank(t.qts);
    pvdc_test_stop(&t);
}

static void test_reset_brings_it_back(void)
{
    PVDCTest t;

    pvdc_test_start(&t, NULL);
    boot_draw(t.qts, 1);
    boot_setup(t.qts);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    assert_head_shown(t.qts);

    qtest_system_reset(t.qts);
    pvdc_test_detach(&t);
    pvdc_test_attach(&t, t.qts);
    /* Not the device's last picture, until the firmware draws again. */
    assert_blank(t.qts);
    boot_draw(t.qts, 3);
    boot_setup(t.qts);
    assert_boot_shown(t.qts, 3);
    pvdc_test_stop(&t);
}

static void test_ramfb_off_has_none(void)
{
    PVDCTest t;

    pvdc_test_start(&t, "ramfb=off");
    g_assert_cmpuint(fw_cfg_file_select(t.qts, RAMFB_FILE), ==, 0);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_BOOT_DISPLAY,
                    ==, 0);
    assert_blank(t.qts);
    pvdc_test_stop(&t);
}

/* FEATURES of the pvdc in slot @slot of @t's machine. */
static uint32_t features_in_slot(PVDCTest *t, int slot)
{
    g_autofree QPCIDevice *dev = qpci_device_find(t->bus,
                                                  QPCI_DEVFN(slot, 0));
    QPCIBar mmio;

    g_assert_nonnull(dev);
    qpci_device_enable(dev);
    mmio = qpci_iomap(dev, PVDC_MMIO_BAR, NULL);
    return qpci_io_readl(dev, mmio, PVDC_REG_FEATURES);
}

static void test_features_name_the_device_with_it(void)
{
    PVDCTest t;

    /* The first pvdc has it, the second goes without. */
    pvdc_test_start_with(&t, NULL, "-device pvdc,id=pvdc1,addr=05.0");
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_BOOT_DISPLAY,
                    ==, PVDC_FEATURE_BOOT_DISPLAY);
    g_assert_cmphex(features_in_slot(&t, 5) & PVDC_FEATURE_BOOT_DISPLAY,
                    ==, 0);
    /* Whether it shows or not: a driver reloaded later takes it over. */
    boot_draw(t.qts, 1);
    boot_setup(t.qts);
    pvdc_enable_head(&t, 0, CLOCK_1MS);
    assert_head_shown(t.qts);
    g_assert_cmphex(pvdc_rd(&t, PVDC_REG_FEATURES) & PVDC_FEATURE_BOOT_DISPLAY,
                    ==, PVDC_FEATURE_BOOT_DISPLAY);
    pvdc_test_stop(&t);
}

/* QEMU with @args fails to start and says @message. */
static void assert_refused(const char *args, const char *message)
{
    g_autofree char *cmd = g_strdup_printf("%s -machine q35 -nodefaults "
                                           "-display none -S %s",
                                           g_getenv("QTEST_QEMU_BINARY"),
                                           args);
    g_autofree char *err = NULL;
    int status;

    g_assert_true(g_spawn_command_line_sync(cmd, NULL, &err, &status, NULL));
    g_assert_true(WIFEXITED(status));
    g_assert_cmpint(WEXITSTATUS(status), !=, 0);
    g_assert_nonnull(strstr(err, message));
}

static void test_one_ramfb_per_machine(void)
{
    PVDCTest t;
    QDict *rsp;

    /* auto: the second pvdc has none, silently. */
    pvdc_test_start_with(&t, NULL, "-device pvdc,id=pvdc1,addr=05.0 "
                         "-device pcie-root-port,id=rp0,bus=pcie.0,"
                         "addr=06.0,chassis=1,slot=1");
    g_assert_cmpuint(fw_cfg_file_select(t.qts, RAMFB_FILE), !=, 0);
    /* on: refused, whether another device has it or it comes too late */
    rsp = qtest_qmp(t.qts, "{ 'execute': 'device_add', 'arguments': "
                    "{ 'driver': 'pvdc', 'id': 'pvdc2', 'bus': 'rp0', "
                    "'ramfb': 'on' } }");
    g_assert_true(qdict_haskey(rsp, "error"));
    g_assert_nonnull(strstr(qdict_get_str(qdict_get_qdict(rsp, "error"),
                                          "desc"),
                            "cannot be added to a running machine"));
    qobject_unref(rsp);
    /* auto: plugged without one */
    qtest_qmp_assert_success(t.qts, "{ 'execute': 'device_add', "
                             "'arguments': { 'driver': 'pvdc', "
                             "'id': 'pvdc2', 'bus': 'rp0' } }");
    pvdc_test_stop(&t);

    assert_refused("-device pvdc -device pvdc,ramfb=on",
                   "another device has the machine's " RAMFB_FILE);
    assert_refused("-device ramfb -device pvdc,ramfb=on",
                   "another device has the machine's " RAMFB_FILE);
}

static void test_migration_keeps_the_picture(void)
{
    PVDCTest src, dst;

    pvdc_test_start(&src, NULL);
    boot_draw(src.qts, 1);
    boot_setup(src.qts);
    assert_boot_shown(src.qts, 1);
    pvdc_test_migrate(&src, &dst, NULL, NULL);
    pvdc_test_stop(&src);
    assert_boot_shown(dst.qts, 1);
    /* The destination's companion goes on as the source's did. */
    boot_draw(dst.qts, 2);
    assert_boot_shown(dst.qts, 2);
    pvdc_enable_head(&dst, 0, CLOCK_1MS);
    assert_head_shown(dst.qts);

    /* Over on the source: over on the destination. */
    pvdc_test_migrate(&dst, &src, NULL, NULL);
    pvdc_test_stop(&dst);
    disable_head0(&src);
    assert_blank(src.qts);
    boot_setup(src.qts);
    assert_blank(src.qts);
    pvdc_test_stop(&src);
}

static void test_migration_needs_ramfb(void)
{
    PVDCTest src;
    g_autofree char *dir = g_dir_make_tmp("pvdc-migrate-XXXXXX", NULL);
    g_autofree char *sock = g_strdup_printf("%s/migrate", dir);
    g_autofree char *uri = g_strdup_printf("unix:%s", sock);
    QTestState *dst;

    pvdc_test_start(&src, NULL);
    boot_draw(src.qts, 1);
    boot_setup(src.qts);
    /* A destination that says how the load ended instead of exiting. */
    dst = pvdc_test_spawn("ramfb=off", "-incoming defer");
    qtest_qmp_assert_success(dst, "{ 'execute': 'migrate-incoming', "
                             "'arguments': { 'uri': %s, "
                             "'exit-on-error': false } }", uri);
    qtest_qmp_assert_success(src.qts, "{ 'execute': 'migrate', "
                             "'arguments': { 'uri': %s } }", uri);
    /* The source sends it all; the destination refuses it. */
    pvdc_migration_wait(src.qts);
    g_assert_false(pvdc_migration_wait(dst));
    qtest_quit(dst);
    pvdc_test_stop(&src);
    unlink(sock);
    rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);

    qtest_add_func("/pvdc/boot/firmware-picture-on-head0",
                   test_firmware_picture_on_head0);
    qtest_add_func("/pvdc/boot/first-enabled-head-ends-it",
                   test_first_enabled_head_ends_it);
    qtest_add_func("/pvdc/boot/reset-brings-it-back",
                   test_reset_brings_it_back);
    qtest_add_func("/pvdc/boot/ramfb-off-has-none", test_ramfb_off_has_none);
    qtest_add_func("/pvdc/boot/features-name-the-device-with-it",
                   test_features_name_the_device_with_it);
    qtest_add_func("/pvdc/boot/one-ramfb-per-machine",
                   test_one_ramfb_per_machine);
    qtest_add_func("/pvdc/boot/migration-keeps-the-picture",
                   test_migration_keeps_the_picture);
    qtest_add_func("/pvdc/boot/migration-needs-ramfb",
                   test_migration_needs_ramfb);
    return g_test_run();
}
