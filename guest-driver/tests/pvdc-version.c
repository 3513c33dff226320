// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-version: check that /dev/dri/card0 is driven by pvdc.
 *
 * Prints the DRM_IOCTL_VERSION answer and "ok drm-version" when the driver
 * name is "pvdc"; exits non-zero otherwise.
 */
#include "pvdc-kms-util.h"

int main(int argc, char **argv)
{
	const char *path = kms_operand(argc, argv, 1, KMS_CARD);
	drmVersionPtr v;
	int fd, ok;

	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("not ok drm-version: open %s: %m\n", path);
		return 1;
	}
	v = drmGetVersion(fd);
	if (!v) {
		printf("not ok drm-version: DRM_IOCTL_VERSION: %m\n");
		close(fd);
		return 1;
	}
	printf("name=%s version=%d.%d.%d date=%s desc=%s\n", v->name,
	       v->version_major, v->version_minor, v->version_patchlevel,
	       v->date, v->desc);
	ok = strcmp(v->name, "pvdc") == 0;
	printf("%s drm-version\n", ok ? "ok" : "not ok");
	drmFreeVersion(v);
	close(fd);
	return ok ? 0 : 1;
}
