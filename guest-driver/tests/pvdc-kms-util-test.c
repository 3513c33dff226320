// SPDX-License-Identifier: GPL-2.0-or-later OR MIT
/*
 * pvdc-kms-util-test: the command lines of the in-guest programs, as
 * pvdc-kms-util.c parses them, checked on the host (TAP).
 *
 * Each case runs in a child of its own, so that getopt() starts afresh
 * and a usage error's exit status and stderr can be looked at.
 */
#include <sys/wait.h>

#include "pvdc-kms-util.h"

#define NUM_ARGS(a)	((int)(sizeof(a) / sizeof((a)[0])) - 1)

/* TAP lines printed, for the plan. */
static unsigned int tests;

/* What a case's child printed, and how it ended. */
struct outcome {
	int status;		/* exit status, -1 if it did not exit */
	char out[1024], err[512];
};

static void slurp(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	buf[len] = 0;
	close(fd);
}

static struct outcome run(void (*fn)(void))
{
	struct outcome o = { .status = -1 };
	int out[2], err[2], status;
	pid_t pid;

	if (pipe(out) || pipe(err)) {
		perror("pipe");
		exit(1);
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (!pid) {
		dup2(out[1], STDOUT_FILENO);
		dup2(err[1], STDERR_FILENO);
		close(out[0]);
		close(err[0]);
		kms_failures = 0;	/* the parent's count so far */
		fn();
		fflush(stdout);
		_exit(kms_failures ? 1 : 0);
	}
	close(out[1]);
	close(err[1]);
	/* Far less than a pipe holds: one after the other cannot block. */
	slurp(out[0], o.out, sizeof(o.out));
	slurp(err[0], o.err, sizeof(o.err));
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status))
		o.status = WEXITSTATUS(status);
	return o;
}

static const char *card = KMS_CARD;
static unsigned int head, frames = 300;
static int scalers = 2;
static double seconds = 5;
static bool overlay;

static const struct kms_option opts[] = {
	{ 'd', KMS_OPTION_STRING, &card, "CARD" },
	{ 'H', KMS_OPTION_UINT, &head, "HEAD" },
	{ 'n', KMS_OPTION_UINT, &frames, "FRAMES" },
	{ 's', KMS_OPTION_INT, &scalers, "SCALERS" },
	{ 't', KMS_OPTION_DOUBLE, &seconds, "SECONDS" },
	{ 'o', KMS_OPTION_FLAG, &overlay, NULL },
	{ 0 }
};

/* Every kind of option, then the operands. */
static void every_kind(void)
{
	char *argv[] = { "prog", "-d", "/dev/dri/card1", "-H", "3", "-n",
			 "12", "-s", "-1", "-t", "2.5", "-o", "moves",
			 "legacy", NULL };
	int argc = NUM_ARGS(argv);
	int first = kms_options(argc, argv, 1, opts, "TEST...");

	kms_result(first == 12 && !strcmp(argv[first], "moves"),
		   "options-end-at-the-first-operand # %d", first);
	kms_result(!strcmp(card, "/dev/dri/card1"), "string-option # %s",
		   card);
	kms_result(head == 3 && frames == 12, "unsigned-options # %u %u",
		   head, frames);
	kms_result(scalers == -1, "int-option # %d", scalers);
	kms_result(seconds == 2.5, "double-option # %g", seconds);
	kms_result(overlay, "flag-option");
}

/* Nothing given: every value keeps its default. */
static void defaults(void)
{
	char *argv[] = { "prog", NULL };
	int first = kms_options(NUM_ARGS(argv), argv, 1, opts, "TEST...");

	kms_result(first == 1 && !strcmp(card, KMS_CARD) && head == 0 &&
		   frames == 300 && scalers == 2 && seconds == 5 && !overlay,
		   "defaults-kept-without-options");
	kms_result(!strcmp(kms_operand(NUM_ARGS(argv), argv, first, KMS_CARD),
			   KMS_CARD), "operand-default-when-missing");
}

/* pvdc-stress MODE [options] [DEVICE]: options from argv[2] on. */
static void after_a_word(void)
{
	char *argv[] = { "prog", "random", "-n", "7", "/dev/dri/card2", NULL };
	int argc = NUM_ARGS(argv);
	int first = kms_options(argc, argv, 2, opts, "[DEVICE]");

	kms_result(frames == 7 && !strcmp(argv[1], "random"),
		   "options-after-the-first-word");
	kms_result(!strcmp(kms_operand(argc, argv, first, KMS_CARD),
			   "/dev/dri/card2"), "operand-given");
}

/* Options after the operands, as getopt() takes them. */
static void options_last(void)
{
	char *argv[] = { "prog", "intervals", "-H", "1", NULL };
	int first = kms_options(NUM_ARGS(argv), argv, 1, opts, "TEST...");

	kms_result(head == 1 && !strcmp(argv[first], "intervals"),
		   "options-after-the-operands");
}

static void unknown(void)
{
	char *argv[] = { "prog", "-x", "moves", NULL };

	kms_options(NUM_ARGS(argv), argv, 1, opts, "TEST...");
}

static void missing_argument(void)
{
	char *argv[] = { "prog", "moves", "-H", NULL };

	kms_options(NUM_ARGS(argv), argv, 1, opts, "TEST...");
}

/*
 * Case @fn: the "ok" lines it printed, then, for a case that must exit
 * with @status and say @err on stderr, one of its own.
 */
static void expect(const char *name, void (*fn)(void), int status,
		   const char *err)
{
	struct outcome o = run(fn);
	const char *line;

	fputs(o.out, stdout);
	for (line = o.out; *line; line = strchr(line, '\n') + 1) {
		if (!strncmp(line, "ok ", 3) || !strncmp(line, "not ok ", 7))
			tests++;
		if (!strchr(line, '\n'))
			break;
	}
	if (status) {
		tests++;
		kms_result(o.status == status && strstr(o.err, err),
			   "%s # exit %d", name, o.status);
	} else if (o.status) {
		tests++;
		kms_result(false, "%s # exit %d: %s", name, o.status, o.err);
	}
}

int main(void)
{
	static const char usage[] = "usage: prog [-d CARD] [-H HEAD] "
		"[-n FRAMES] [-s SCALERS] [-t SECONDS] [-o] TEST...\n";

	setvbuf(stdout, NULL, _IOLBF, 0);
	expect("every-kind", every_kind, 0, NULL);
	expect("defaults", defaults, 0, NULL);
	expect("after-a-word", after_a_word, 0, NULL);
	expect("options-last", options_last, 0, NULL);
	expect("unknown-option-exits-2-with-usage", unknown, 2, usage);
	expect("missing-argument-exits-2-with-usage", missing_argument, 2,
	       usage);
	printf("1..%u\n", tests);
	return kms_failures ? 1 : 0;
}
