// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-hotplug: wait for a DRM hotplug uevent and report what it changed.
 *
 *   pvdc-hotplug [TIMEOUT_S [DEVICE]]
 *
 * Listens on NETLINK_KOBJECT_UEVENT, prints "# ready", and waits (at most
 * TIMEOUT_S seconds, default 30) for a uevent of the drm subsystem carrying
 * HOTPLUG=1.  Then probes every connector again and prints its preferred
 * mode, one line each:
 *   connector ID INDEX: WIDTHxHEIGHT
 * after "ok hotplug-uevent".  The host changes a head's preferred size and
 * checks the size printed for it.
 */
#include <poll.h>
#include <sys/socket.h>
#include <linux/netlink.h>
#include <time.h>

#include "pvdc-kms-util.h"

/* True when the NUL-separated uevent in @buf has every one of @keys. */
static bool uevent_has(const char *buf, size_t len, const char *const *keys,
		       int count)
{
	int found = 0, k;
	size_t i;

	for (k = 0; k < count; k++) {
		for (i = 0; i < len; i += strlen(buf + i) + 1) {
			if (!strcmp(buf + i, keys[k])) {
				found++;
				break;
			}
		}
	}
	return found == count;
}

static int open_uevents(void)
{
	struct sockaddr_nl addr = {
		.nl_family = AF_NETLINK,
		.nl_groups = 1,		/* the kernel's broadcast group */
	};
	int sock = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC,
			  NETLINK_KOBJECT_UEVENT);

	if (sock < 0)
		return -errno;
	if (bind(sock, (struct sockaddr *)&addr, sizeof(addr))) {
		close(sock);
		return -errno;
	}
	return sock;
}

static int wait_hotplug(int sock, double timeout)
{
	static const char *const keys[] = { "SUBSYSTEM=drm", "HOTPLUG=1" };
	double deadline = kms_now() + timeout;
	char buf[8192];

	while (kms_now() < deadline) {
		struct pollfd pfd = { .fd = sock, .events = POLLIN };
		ssize_t len;

		if (poll(&pfd, 1, (int)((deadline - kms_now()) * 1000) + 1) <= 0)
			continue;
		len = recv(sock, buf, sizeof(buf) - 1, 0);
		if (len <= 0)
			continue;
		buf[len] = 0;
		printf("# uevent %s\n", buf);
		if (uevent_has(buf, len, keys, 2))
			return 0;
	}
	return -ETIMEDOUT;
}

static void report_connectors(int fd)
{
	drmModeRes *res = drmModeGetResources(fd);
	int i;

	for (i = 0; res && i < res->count_connectors; i++) {
		/* drmModeGetConnector probes: the mode list is fresh. */
		drmModeConnector *c = drmModeGetConnector(fd, res->connectors[i]);
		drmModeModeInfo mode;

		if (c && !kms_connector_mode(c, &mode))
			printf("connector %u %d: %ux%u\n", c->connector_id, i,
			       mode.hdisplay, mode.vdisplay);
		else
			printf("connector %u %d: none\n", res->connectors[i], i);
		drmModeFreeConnector(c);
	}
	drmModeFreeResources(res);
}

int main(int argc, char **argv)
{
	double timeout = argc > 1 ? atof(argv[1]) : 30;
	const char *path = kms_operand(argc, argv, 2, KMS_CARD);
	int fd = kms_open(path);
	int sock = open_uevents();
	int ret;

	if (sock < 0) {
		printf("not ok uevent-socket: %s\n", strerror(-sock));
		return 1;
	}
	printf("# ready\n");
	fflush(stdout);
	ret = wait_hotplug(sock, timeout);
	kms_result(!ret, "hotplug-uevent%s", ret ? ": none in time" : "");
	if (!ret)
		report_connectors(fd);
	fflush(stdout);
	close(sock);
	close(fd);
	return kms_failures ? 1 : 0;
}
