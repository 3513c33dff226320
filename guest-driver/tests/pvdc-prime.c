// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-prime: buffers shared with other devices through PRIME, and
 * front-buffer rendering, shown on the first connected head for the host
 * to compare with its screendump.
 *
 *   pvdc-prime [-d CARD] SOURCE
 *
 * SOURCE is where the pixels come from:
 *
 *   vgem     two dumb buffers of vgem (the guest's vgem module), written
 *            through vgem's mapping, exported and imported into pvdc
 *   udmabuf  two memfd buffers made dma-bufs by /dev/udmabuf, written
 *            through the memfd's mapping, imported into pvdc
 *   export   two pvdc dumb buffers exported as dma-bufs, imported by vgem
 *            (which maps their pages for itself; the DRM core maps no
 *            imported object to user space) and written through the
 *            dma-buf's own mapping, between DMA_BUF_IOCTL_SYNC calls
 *   peer     two dumb buffers of another pvdc device, written through its
 *            mapping, exported and imported into this one
 *   virtio   two dumb buffers of virtio-gpu (the guest's virtio_gpu
 *            module), written through virtio-gpu's mapping, exported and
 *            imported into pvdc
 *   to-virtio  two pvdc dumb buffers exported and offered to virtio-gpu,
 *            whose import must fail cleanly with ENODEV (Linux 6.12's
 *            virtio-gpu imports no other device's dma-buf: its
 *            gem_prime_import_sg_table refuses every one), then written
 *            through the dma-buf's own mapping, between DMA_BUF_IOCTL_SYNC
 *            calls
 *   front    two pvdc dumb buffers; on SIGUSR1, a band of the primary's is
 *            written in place and reported with DIRTYFB (one clip)
 *
 * The first buffer, the mode's size, is shown on the primary plane: its
 * left half PRIME_LEFT, its right half PRIME_RIGHT.  The second, a quarter
 * of the mode's size in PRIME_OVERLAY, is shown on an overlay scaled to
 * half the mode at (OVERLAY_X, OVERLAY_Y).  The front band is rows
 * [FRONT_Y, FRONT_Y + FRONT_H) of the primary, in PRIME_FRONT.  Prints
 * "# holding" once the commit that shows them is complete ("# written"
 * after the band), then holds them until SIGTERM.  Any failure is a
 * "not ok" line and exit status 1.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <sys/ioctl.h>
#include <linux/dma-buf.h>
#include <linux/udmabuf.h>

#include "pvdc-kms-util.h"

#define PRIME_LEFT	0x00ff0000u
#define PRIME_RIGHT	0x000000ffu
#define PRIME_OVERLAY	0x0000ff00u
#define PRIME_FRONT	0x00ffff00u
#define OVERLAY_X	64
#define OVERLAY_Y	64
#define FRONT_Y		32
#define FRONT_H		16

static struct kms_display d;

/* A shared buffer as pvdc sees it, and where its pixels are written. */
struct prime_buffer {
	uint32_t width, height, pitch, handle, fb_id;
	int dmabuf;			/* mapped through, or -1 */
	uint64_t size;
	uint32_t *map;
};

static void fail(const char *what)
{
	printf("not ok %s: %s\n", what, strerror(errno));
	exit(1);
}

/* The first DRM card but @not whose driver is @name, opened; -1 if none. */
static int open_driver(const char *name, const char *not)
{
	char path[32];
	int i, fd;

	for (i = 0; i < 8; i++) {
		drmVersionPtr v;

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		if (!strcmp(path, not))
			continue;
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		v = drmGetVersion(fd);
		if (v && !strcmp(v->name, name)) {
			drmFreeVersion(v);
			return fd;
		}
		drmFreeVersion(v);
		close(fd);
	}
	return -1;
}

/* A dumb buffer of @fd, mapped; its pitch the device's alignment. */
static void dumb(int fd, struct prime_buffer *b, uint32_t *handle)
{
	struct drm_mode_create_dumb create = {
		.width = b->width, .height = b->height, .bpp = 32,
	};
	struct drm_mode_map_dumb map = { 0 };
	void *p;

	if (drmIoctl(fd, DRM_IOCTL_MODE_CREATE_DUMB, &create))
		fail("create dumb");
	*handle = create.handle;
	b->pitch = create.pitch;
	b->size = create.size;
	map.handle = create.handle;
	if (drmIoctl(fd, DRM_IOCTL_MODE_MAP_DUMB, &map))
		fail("map dumb");
	p = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 map.offset);
	if (p == MAP_FAILED)
		fail("mmap dumb");
	b->map = p;
}

/* @dmabuf imported into pvdc, with a framebuffer on it. */
static void import(struct prime_buffer *b, int dmabuf)
{
	uint32_t handles[4] = { 0 }, pitches[4] = { 0 }, offsets[4] = { 0 };

	if (drmPrimeFDToHandle(d.fd, dmabuf, &b->handle))
		fail("import into pvdc");
	handles[0] = b->handle;
	pitches[0] = b->pitch;
	if (drmModeAddFB2(d.fd, b->width, b->height, DRM_FORMAT_XRGB8888,
			  handles, pitches, offsets, &b->fb_id, 0))
		fail("framebuffer on the imported buffer");
}

/* @fd's dumb buffer, exported to pvdc; written through @fd's mapping. */
static void from_device(int fd, struct prime_buffer *b)
{
	uint32_t handle;
	int dmabuf;

	b->pitch = 0;
	dumb(fd, b, &handle);
	if (b->pitch % 64)
		fail("exporter's pitch not a multiple of 64");
	if (drmPrimeHandleToFD(fd, handle, DRM_CLOEXEC | DRM_RDWR, &dmabuf))
		fail("export");
	import(b, dmabuf);
	close(dmabuf);
}

/* A memfd made a dma-buf by udmabuf; written through the memfd's mapping. */
static void from_udmabuf(int udmabuf, struct prime_buffer *b)
{
	struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC };
	int memfd, dmabuf;
	void *p;

	b->pitch = b->width * 4;
	b->size = ((uint64_t)b->pitch * b->height + 4095) & ~4095ull;
	memfd = memfd_create("pvdc-prime", MFD_ALLOW_SEALING);
	if (memfd < 0 || ftruncate(memfd, b->size) ||
	    fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK) < 0)
		fail("memfd");
	create.memfd = memfd;
	create.size = b->size;
	dmabuf = ioctl(udmabuf, UDMABUF_CREATE, &create);
	if (dmabuf < 0)
		fail("udmabuf");
	p = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, memfd, 0);
	if (p == MAP_FAILED)
		fail("mmap memfd");
	b->map = p;
	import(b, dmabuf);
	close(dmabuf);
	close(memfd);
}

/* pvdc's own dumb buffer, written through pvdc's mapping. */
static void native(struct prime_buffer *b)
{
	struct kms_buffer kb;

	if (kms_buffer_create(d.fd, &kb, b->width, b->height,
			      DRM_FORMAT_XRGB8888))
		fail("pvdc buffer");
	b->handle = kb.handle;
	b->fb_id = kb.fb_id;
	b->pitch = kb.pitch;
	b->size = kb.size;
	b->map = kb.map;
}

/*
 * pvdc's dumb buffer exported (@b->dmabuf): its own mapping is given up,
 * the importer's or the dma-buf's takes its place.
 */
static void export_native(struct prime_buffer *b)
{
	native(b);
	munmap(b->map, b->size);
	if (drmPrimeHandleToFD(d.fd, b->handle, DRM_CLOEXEC | DRM_RDWR,
			       &b->dmabuf))
		fail("export from pvdc");
}

/* @b mapped through its dma-buf, for the CPU to write. */
static void map_dmabuf(struct prime_buffer *b)
{
	void *p;

	p = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_SHARED, b->dmabuf,
		 0);
	if (p == MAP_FAILED)
		fail("mmap of the dma-buf");
	b->map = p;
}

/*
 * pvdc's dumb buffer exported, imported by vgem, and mapped through the
 * dma-buf (@b->dmabuf, for the DMA_BUF_IOCTL_SYNC around the writes).
 */
static void to_vgem(int vgem, struct prime_buffer *b)
{
	uint32_t handle;

	export_native(b);
	if (drmPrimeFDToHandle(vgem, b->dmabuf, &handle))
		fail("import into vgem");
	map_dmabuf(b);
}

/*
 * pvdc's dumb buffer exported and offered to virtio-gpu, which attaches
 * to it and maps it for its device before it refuses it (ENODEV); then
 * mapped through the dma-buf (@b->dmabuf).  A virtio-gpu that takes it
 * is said so: the test reads which.
 */
static void to_virtio(int virtio, struct prime_buffer *b)
{
	uint32_t handle;

	export_native(b);
	if (!drmPrimeFDToHandle(virtio, b->dmabuf, &handle))
		printf("# virtio-gpu imported the buffer\n");
	else if (errno == ENODEV)
		printf("# virtio-gpu refused the buffer: ENODEV\n");
	else
		fail("import into virtio-gpu");
	map_dmabuf(b);
}

/* CPU access to @b begins (DMA_BUF_SYNC_START) or ends, if a dma-buf. */
static void cpu_access(struct prime_buffer *b, uint64_t when)
{
	struct dma_buf_sync sync = { .flags = when | DMA_BUF_SYNC_WRITE };

	if (b->dmabuf >= 0 && ioctl(b->dmabuf, DMA_BUF_IOCTL_SYNC, &sync))
		fail("DMA_BUF_IOCTL_SYNC");
}

/* Rows [@y0, @y1) of @b: @left left of column @split, @right from it. */
static void fill(struct prime_buffer *b, uint32_t y0, uint32_t y1,
		 uint32_t split, uint32_t left, uint32_t right)
{
	uint32_t x, y;

	for (y = y0; y < y1; y++) {
		uint32_t *line = b->map + (size_t)y * b->pitch / 4;

		for (x = 0; x < b->width; x++)
			line[x] = x < split ? left : right;
	}
}

static volatile sig_atomic_t usr1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1 = 1;
}

int main(int argc, char **argv)
{
	const char *card = KMS_CARD, *source;
	const struct kms_option opts[] = {
		{ 'd', KMS_OPTION_STRING, &card, "CARD" },
		{ 0 }
	};
	struct prime_buffer primary = { .dmabuf = -1 };
	struct prime_buffer overlay = { .dmabuf = -1 };
	struct kms_head *h;
	drmModeAtomicReq *req;
	int first, fd = -1;
	uint32_t plane;

	first = kms_options(argc, argv, 1, opts, "SOURCE");
	if (first >= argc)
		kms_usage(argv, opts, "SOURCE");
	source = argv[first];
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGUSR1, on_usr1);

	kms_display_open(&d, card);
	plane = kms_overlay(&d, 0);
	if (!d.num_heads || !plane) {
		printf("not ok no head with an overlay\n");
		return 1;
	}
	h = &d.heads[0];
	primary.width = h->mode.hdisplay;
	primary.height = h->mode.vdisplay;
	overlay.width = primary.width / 4;
	overlay.height = primary.height / 4;

	if (!strcmp(source, "vgem") || !strcmp(source, "export")) {
		fd = open_driver("vgem", card);
		if (fd < 0)
			fail("no vgem device");
		if (!strcmp(source, "vgem")) {
			from_device(fd, &primary);
			from_device(fd, &overlay);
		} else {
			to_vgem(fd, &primary);
			to_vgem(fd, &overlay);
		}
	} else if (!strcmp(source, "virtio") ||
		   !strcmp(source, "to-virtio")) {
		fd = open_driver("virtio_gpu", card);
		if (fd < 0)
			fail("no virtio-gpu device");
		if (!strcmp(source, "virtio")) {
			from_device(fd, &primary);
			from_device(fd, &overlay);
		} else {
			to_virtio(fd, &primary);
			to_virtio(fd, &overlay);
		}
	} else if (!strcmp(source, "peer")) {
		fd = open_driver("pvdc", card);
		if (fd < 0)
			fail("no other pvdc device");
		from_device(fd, &primary);
		from_device(fd, &overlay);
	} else if (!strcmp(source, "udmabuf")) {
		fd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
		if (fd < 0)
			fail("/dev/udmabuf");
		from_udmabuf(fd, &primary);
		from_udmabuf(fd, &overlay);
	} else if (!strcmp(source, "front")) {
		native(&primary);
		native(&overlay);
	} else {
		fprintf(stderr, "unknown source %s\n", source);
		return 2;
	}
	cpu_access(&primary, DMA_BUF_SYNC_START);
	cpu_access(&overlay, DMA_BUF_SYNC_START);
	fill(&primary, 0, primary.height, primary.width / 2, PRIME_LEFT,
	     PRIME_RIGHT);
	fill(&overlay, 0, overlay.height, 0, 0, PRIME_OVERLAY);
	cpu_access(&primary, DMA_BUF_SYNC_END);
	cpu_access(&overlay, DMA_BUF_SYNC_END);

	req = drmModeAtomicAlloc();
	kms_head_on(&d, req, h, NULL);
	kms_add(d.fd, req, h->primary, DRM_MODE_OBJECT_PLANE, "FB_ID",
		primary.fb_id);
	kms_plane_set(&d, req, plane, h, &(struct kms_buffer){
			.width = overlay.width, .height = overlay.height,
			.fb_id = overlay.fb_id }, OVERLAY_X, OVERLAY_Y,
		      overlay.width * 2, overlay.height * 2);
	if (kms_commit(&d, req, DRM_MODE_ATOMIC_ALLOW_MODESET, NULL))
		fail("commit");
	printf("# holding\n");

	while (!usr1)
		pause();
	if (!strcmp(source, "front")) {
		drmModeClip clip = {
			.x1 = 0, .y1 = FRONT_Y,
			.x2 = primary.width, .y2 = FRONT_Y + FRONT_H,
		};

		fill(&primary, FRONT_Y, FRONT_Y + FRONT_H, 0, 0, PRIME_FRONT);
		if (drmModeDirtyFB(d.fd, primary.fb_id, &clip, 1))
			fail("DIRTYFB");
		printf("# written\n");
	}
	for (;;)
		pause();
}
