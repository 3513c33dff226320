// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-poke: the device's registers, without its driver.
 *
 *   pvdc-poke read OFFSET
 *   pvdc-poke write OFFSET VALUE
 *	One register of BAR0, through sysfs.
 *   pvdc-poke leave-on
 *	What a previous driver could leave behind: every head on with its
 *	primary plane, and the first overlay of each head shown on the next
 *	head, in one MULTI_DOORBELL.  Waits for it to latch.
 *   pvdc-poke status
 *	Prints "on HEADS PLANES": the masks of the heads and planes the
 *	device scans out now.
 *
 * BAR0 is mapped through /sys/bus/pci/devices/.../resource0; while the
 * driver holds it, that needs the guest booted with iomem=relaxed.
 */
#include <dirent.h>

#include "pvdc-kms-util.h"
#include "pvdc-regs.h"

static volatile uint32_t *bar;

static uint32_t rd(uint32_t reg)
{
	return bar[reg / 4];
}

static void wr(uint32_t reg, uint32_t val)
{
	bar[reg / 4] = val;
}

/* BAR0 of the first pvdc on the PCI bus, bound to a driver or not. */
static volatile uint32_t *map_pvdc(void)
{
	DIR *dir = opendir("/sys/bus/pci/devices");
	struct dirent *de;
	char path[512];

	while (dir && (de = readdir(dir))) {
		unsigned int vendor = 0, device = 0;
		FILE *f;

		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/vendor",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%x", &vendor) != 1)
			vendor = 0;
		fclose(f);
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s/device",
			 de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fscanf(f, "%x", &device) != 1)
			device = 0;
		fclose(f);
		if (vendor != PVDC_PCI_VENDOR_ID || device != PVDC_PCI_DEVICE_ID)
			continue;
		snprintf(path, sizeof(path), "/sys/bus/pci/devices/%s",
			 de->d_name);
		closedir(dir);
		return kms_bar_map_path(path, PVDC_MMIO_BAR, NULL);
	}
	printf("not ok no pvdc on the PCI bus\n");
	exit(1);
}

/* 640x480 at 60 Hz, with an equal share of the bandwidth. */
static void write_head(unsigned int h, unsigned int heads)
{
	uint32_t base = PVDC_HEAD_SHADOW(h);

	wr(base + PVDC_HS_BANDWIDTH, rd(PVDC_REG_BANDWIDTH_TOTAL) / heads);
	wr(base + PVDC_HS_BACKGROUND, 0x000080);
	wr(base + PVDC_HS_HTIMING, PVDC_XY(640, 800));
	wr(base + PVDC_HS_HSYNC, PVDC_XY(656, 752));
	wr(base + PVDC_HS_VTIMING, PVDC_XY(480, 525));
	wr(base + PVDC_HS_VSYNC, PVDC_XY(490, 492));
	wr(base + PVDC_HS_PIXEL_CLOCK, 25175);
	wr(base + PVDC_HS_CTRL, PVDC_HS_CTRL_ENABLE);
}

static void write_plane(unsigned int p, unsigned int h, uint32_t w,
			uint32_t ht, uint32_t zpos)
{
	uint32_t base = PVDC_PLANE_SHADOW(p);

	wr(base + PVDC_PS_HEAD, h);
	wr(base + PVDC_PS_FORMAT, PVDC_FMT_XRGB8888);
	wr(base + PVDC_PS_FB_OFFSET, 0);
	wr(base + PVDC_PS_FB_PITCH, 640 * 4);
	wr(base + PVDC_PS_FB_SIZE, PVDC_XY(640, 480));
	wr(base + PVDC_PS_SRC_X, 0);
	wr(base + PVDC_PS_SRC_Y, 0);
	wr(base + PVDC_PS_SRC_W, w << 16);
	wr(base + PVDC_PS_SRC_H, ht << 16);
	wr(base + PVDC_PS_DST_POS, PVDC_XY(16, 16));
	wr(base + PVDC_PS_DST_SIZE, PVDC_XY(w, ht));
	wr(base + PVDC_PS_ZPOS, zpos);
	wr(base + PVDC_PS_ALPHA, 0xffff);
	wr(base + PVDC_PS_CTRL, PVDC_PS_CTRL_ENABLE);
}

/* Ring @mask as one group once nothing is armed, and wait for its latch. */
static void group_commit(uint32_t mask)
{
	unsigned int i;

	for (i = 0; i < 1000 && rd(PVDC_REG_MULTI_DOORBELL); i++)
		usleep(10000);
	wr(PVDC_REG_MULTI_DOORBELL, mask);
	for (i = 0; i < 1000 && rd(PVDC_REG_MULTI_DOORBELL); i++)
		usleep(10000);
}

static int leave_on(void)
{
	unsigned int heads = rd(PVDC_REG_NUM_HEADS);
	unsigned int planes = rd(PVDC_REG_NUM_PLANES);
	unsigned int per_head = planes / heads, h, p;
	uint32_t mask = (1u << heads) - 1;

	/* New timings only on a head that is off: everything off first. */
	for (p = 0; p < planes; p++)
		wr(PVDC_PLANE_SHADOW(p) + PVDC_PS_CTRL, 0);
	for (h = 0; h < heads; h++)
		wr(PVDC_HEAD_SHADOW(h) + PVDC_HS_CTRL, 0);
	group_commit(mask);

	for (h = 0; h < heads; h++) {
		write_head(h, heads);
		write_plane(h * per_head, h, 640, 480, 0);
		/* Head h's first overlay on the next head. */
		if (per_head > 2 && heads > 1)
			write_plane(h * per_head + 1, (h + 1) % heads, 64, 64, 1);
	}
	group_commit(mask);
	for (h = 0; h < heads; h++) {
		uint32_t result = rd(PVDC_HEAD_CONTROL(h) + PVDC_HEAD_RESULT);

		if ((result & PVDC_RESULT_CODE_MASK) != PVDC_RESULT_APPLIED) {
			printf("not ok leave-on: head %u result %#x\n", h,
			       result);
			return 1;
		}
	}
	printf("ok leave-on # %u heads on, overlays shown on other heads\n",
	       heads);
	return 0;
}

static int status(void)
{
	unsigned int heads = rd(PVDC_REG_NUM_HEADS);
	unsigned int planes = rd(PVDC_REG_NUM_PLANES), i;
	uint32_t on_heads = 0, on_planes = 0;

	for (i = 0; i < heads; i++)
		if (rd(PVDC_HEAD_ACTIVE(i) + PVDC_HS_CTRL) & PVDC_HS_CTRL_ENABLE)
			on_heads |= 1u << i;
	for (i = 0; i < planes && i < 32; i++)
		if (rd(PVDC_PLANE_ACTIVE(i) + PVDC_PS_CTRL) & PVDC_PS_CTRL_ENABLE)
			on_planes |= 1u << i;
	printf("on %#x %#x\n", on_heads, on_planes);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s read OFFSET | write OFFSET VALUE | leave-on | status\n",
			argv[0]);
		return 2;
	}
	bar = map_pvdc();
	if (!strcmp(argv[1], "read") && argc == 3) {
		printf("%#x\n", rd(strtoul(argv[2], NULL, 0)));
		return 0;
	}
	if (!strcmp(argv[1], "write") && argc == 4) {
		wr(strtoul(argv[2], NULL, 0), strtoul(argv[3], NULL, 0));
		return 0;
	}
	if (!strcmp(argv[1], "leave-on"))
		return leave_on();
	if (!strcmp(argv[1], "status"))
		return status();
	fprintf(stderr, "%s: unknown command %s\n", argv[0], argv[1]);
	return 2;
}
