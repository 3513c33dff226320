// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-stall: a blocking commit on a device that may have stopped
 * latching (the device's x-stall property, which the host sets).
 *
 * Lights the first head with a blocking modeset and prints "# ready"; with
 * -w it then waits for SIGUSR1, the host's word that it stalled the device.
 * It then turns the head off with a blocking commit, printing
 * "# committing" before and "commit RET after SECONDS s" after it: RET is
 * 0, or -errno (-ETIMEDOUT on a device that latched nothing for as long as
 * the driver waits).  With -w it then holds the device until SIGUSR1 (or
 * a signal that ends it), for the host to see the commit applied while
 * nothing else can commit.  Turning the head off, rather than flipping,
 * leaves none of the program's framebuffers in the display state:
 * whenever the program dies, closing it commits nothing.
 *
 * Usage: pvdc-stall [-w] [DEVICE]
 */
#include <signal.h>

#include "pvdc-kms-util.h"

int main(int argc, char **argv)
{
	struct kms_display d;
	drmModeAtomicReq *req;
	bool wait = false;
	const struct kms_option opts[] = {
		{ 'w', KMS_OPTION_FLAG, &wait, NULL },
		{ 0 }
	};
	const char *card;
	sigset_t usr1;
	double start;
	int ret, sig;

	card = kms_operand(argc, argv,
			   kms_options(argc, argv, 1, opts, "[DEVICE]"),
			   KMS_CARD);
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* Blocked before "# ready": a signal sent after it is never lost. */
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);

	kms_display_open(&d, card);
	if (!d.num_heads) {
		printf("not ok no head\n");
		return 1;
	}
	req = drmModeAtomicAlloc();
	kms_head_on(&d, req, &d.heads[0], NULL);
	ret = kms_commit(&d, req, DRM_MODE_ATOMIC_ALLOW_MODESET, NULL);
	if (ret) {
		printf("not ok head on: %s\n", strerror(-ret));
		return 1;
	}
	printf("# ready\n");

	if (wait && sigwait(&usr1, &sig)) {
		printf("not ok sigwait\n");
		return 1;
	}

	req = drmModeAtomicAlloc();
	kms_head_off(&d, req, &d.heads[0]);
	printf("# committing\n");
	start = kms_now();
	ret = kms_commit(&d, req, DRM_MODE_ATOMIC_ALLOW_MODESET, NULL);
	printf("commit %d after %.3f s\n", ret, kms_now() - start);

	if (wait && sigwait(&usr1, &sig)) {
		printf("not ok sigwait\n");
		return 1;
	}
	return 0;
}
