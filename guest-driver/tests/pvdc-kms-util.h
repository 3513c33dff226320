/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * Helpers shared by the in-guest KMS test programs (pvdc-kms-util.c, one
 * library linked into each): TAP-like reporting, dumb buffers, property
 * lookup, a display of heads with their planes, frame CRCs, the device's
 * registers.  The includes are what every program uses.
 */
#ifndef PVDC_KMS_UTIL_H
#define PVDC_KMS_UTIL_H

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <drm_fourcc.h>
#include <xf86drm.h>
#include <xf86drmMode.h>

#include "pvdc-regs.h"

#ifndef DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT
#define DRM_CLIENT_CAP_CURSOR_PLANE_HOTSPOT 6
#endif
#ifndef DRM_CLIENT_CAP_WRITEBACK_CONNECTORS
#define DRM_CLIENT_CAP_WRITEBACK_CONNECTORS 5
#endif
#ifndef DRM_MODE_CONNECTOR_WRITEBACK
#define DRM_MODE_CONNECTOR_WRITEBACK 18
#endif

/* "not ok" lines kms_result() printed: a program fails if there was one. */
extern int kms_failures;

/* ------------------------------------------------------------------------ */
/* Command lines                                                            */
/* ------------------------------------------------------------------------ */

/* The device a program drives unless its command line names another. */
#define KMS_CARD		"/dev/dri/card0"
/* Its DRM debugfs directory (the CRC interface). */
#define KMS_DEBUGFS		"/sys/kernel/debug/dri/0"

/* What kms_options() stores for an option in what its @value points to. */
enum kms_option_type {
	KMS_OPTION_FLAG,	/* bool, true when given */
	KMS_OPTION_STRING,	/* const char *, the argument */
	KMS_OPTION_INT,		/* int, atoi() */
	KMS_OPTION_UINT,	/* unsigned int, decimal */
	KMS_OPTION_DOUBLE,	/* double, atof() */
};

/* An option of a program's command line; a list ends with { 0 }. */
struct kms_option {
	char name;			/* -name */
	enum kms_option_type type;
	void *value;
	const char *arg;		/* its argument in the usage line */
};

/*
 * getopt() over argv[@first..] with the options @opts; the index of the
 * first operand.  An unknown option or a missing argument prints "usage:
 * PROGRAM [-x ARG]... @operands" on stderr and exits with 2.
 */
int kms_options(int argc, char **argv, int first,
		const struct kms_option *opts, const char *operands);

/* The usage line of kms_options() on stderr, and an exit with 2. */
__attribute__((noreturn))
void kms_usage(char **argv, const struct kms_option *opts,
	       const char *operands);

/* Operand argv[@i] where there is one, else @otherwise. */
const char *kms_operand(int argc, char **argv, int i, const char *otherwise);

__attribute__((format(printf, 2, 3)))
void kms_result(bool ok, const char *fmt, ...);

/* CLOCK_MONOTONIC, the clock of DRM's event timestamps. */
uint64_t kms_now_ns(void);

/* kms_now_ns(), in seconds. */
double kms_now(void);

int kms_open(const char *path);

/* The mode setting resources of @fd; exits when it has none. */
void kms_resources(int fd, drmModeRes **res, drmModePlaneRes **pres);

/* kms_open(), for a client of the atomic uAPI with universal planes. */
int kms_open_atomic(const char *path);

/*
 * A framebuffer in one dumb buffer.  NV12 and P010 have their Cb:Cr plane
 * (ceil(width / 2) x ceil(height / 2) samples) after the Y plane, with the
 * same pitch.
 */
struct kms_buffer {
	uint32_t width, height, pitch, format, cpp;
	uint32_t chroma_offset, chroma_pitch;	/* 0 for one plane */
	uint32_t handle, fb_id;
	uint64_t size;
	void *map;
};

/* NV12 and P010: a Y plane and an interleaved Cb:Cr plane. */
bool kms_format_two_planes(uint32_t format);

/* Bytes per pixel of the Y (or only) plane. */
uint32_t kms_format_cpp(uint32_t format);

/* A dumb buffer with a framebuffer on it; 0 or -errno. */
int kms_buffer_create(int fd, struct kms_buffer *buf, uint32_t width,
		      uint32_t height, uint32_t format);

void kms_buffer_destroy(int fd, struct kms_buffer *buf);

/* The cursor images of the tests: a size every cursor plane takes. */
#define KMS_CURSOR_SIZE		64

/* A cursor image of solid @argb (ARGB8888); exits on failure. */
void kms_cursor_image(int fd, struct kms_buffer *buf, uint32_t argb);

/*
 * Colour bars shifted by @phase, for 32-bit formats; solid for others (a
 * grey for YCbCr).
 */
void kms_buffer_fill(struct kms_buffer *buf, unsigned int phase);

/*
 * The id of the property NAME of an object, 0 if it has none; with @out,
 * also its description (for its range or enum values; the caller frees it
 * with drmModeFreeProperty()).
 */
uint32_t kms_prop_find(int fd, uint32_t obj, uint32_t type, const char *name,
		       drmModePropertyRes **out);

uint32_t kms_prop_id(int fd, uint32_t obj, uint32_t type, const char *name);

bool kms_prop_value(int fd, uint32_t obj, uint32_t type, const char *name,
		    uint64_t *value);

/* 0 when the connector is connected and has a mode, copied to @mode. */
int kms_connector_mode(drmModeConnector *conn, drmModeModeInfo *mode);

/* ------------------------------------------------------------------------ */
/* A display for the timing and head tests: heads with their planes        */
/* ------------------------------------------------------------------------ */

#define KMS_MAX_HEADS		8
#define KMS_MAX_PLANES		80

struct kms_head {
	uint32_t pipe, crtc_id, conn_id;
	uint32_t primary, cursor;		/* plane ids */
	drmModeModeInfo mode;
	struct kms_buffer buf[2];
};

struct kms_display {
	int fd;
	const char *card;
	unsigned int num_heads;
	struct kms_head heads[KMS_MAX_HEADS];
	unsigned int num_planes;
	uint32_t planes[KMS_MAX_PLANES];
	uint32_t plane_crtcs[KMS_MAX_PLANES];	/* possible_crtcs */
	uint64_t plane_type[KMS_MAX_PLANES];
};

/*
 * A thread that must react within a frame (flip on every vblank): real-time
 * priority over the other threads of the test, where allowed.
 */
void kms_realtime(void);

/* The device's frame period of @m, to the nanosecond (FRAME_PERIOD). */
uint64_t kms_mode_period_ns(const drmModeModeInfo *m);

/* @m with its pixel clock changed for a refresh of @hz (same timings). */
drmModeModeInfo kms_mode_at_hz(const drmModeModeInfo *m, unsigned int hz);

/* A property blob of @mode (for MODE_ID); exits on failure. */
uint32_t kms_mode_blob(int fd, const drmModeModeInfo *mode);

/*
 * @n buffers the size of @mode, XRGB8888, with colour bars shifted by
 * @phase, @phase + 1, ... (kms_buffer_fill()); exits on failure.
 */
void kms_mode_buffers(int fd, struct kms_buffer *buf, unsigned int n,
		      const drmModeModeInfo *mode, unsigned int phase);

/* Add property @name of object @obj to @req; exits if there is none. */
void kms_add(int fd, drmModeAtomicReq *req, uint32_t obj, uint32_t type,
	     const char *name, uint64_t val);

/*
 * Connector @conn_id of @res as a head (kms_output(): a CRTC not in @used,
 * which it updates), with the primary and cursor planes of that CRTC, in
 * @h, without buffers.  false when the connector makes no head: not
 * connected, no CRTC left, or no primary plane.
 */
bool kms_head_find(int fd, const drmModeRes *res, uint32_t conn_id,
		   uint32_t *used, struct kms_head *h);

/* Every connected head with its CRTC, planes, preferred mode and buffers. */
void kms_display_open(struct kms_display *d, const char *card);

/* Head @index of @d; exits when there is no such head. */
struct kms_head *kms_display_head(struct kms_display *d, unsigned int index);

/* The @n-th overlay plane (pvdc's can go on every head). */
uint32_t kms_overlay(struct kms_display *d, unsigned int n);

/* Add @plane showing @fb at full size, unscaled unless @w x @h differ. */
void kms_plane_set(struct kms_display *d, drmModeAtomicReq *req, uint32_t plane,
		   struct kms_head *h, struct kms_buffer *fb, uint32_t x,
		   uint32_t y, uint32_t w, uint32_t h_);

void kms_plane_off(struct kms_display *d, drmModeAtomicReq *req,
		   uint32_t plane);

/*
 * Head @h on with @mode (its own if NULL) and its first buffer, cropped
 * (not scaled) to the mode: a scaler is for what a test asks for.
 */
void kms_head_on(struct kms_display *d, drmModeAtomicReq *req,
		 struct kms_head *h, const drmModeModeInfo *mode);

void kms_head_off(struct kms_display *d, drmModeAtomicReq *req,
		  struct kms_head *h);

/*
 * The two cursor images the tests alternate, solid red and green
 * (kms_cursor_image()); exits on failure.
 */
void kms_cursor_images(int fd, struct kms_buffer images[2]);

/* @image (NULL: none) on @h's cursor with SETCURSOR; 0 or -errno. */
int kms_cursor_set(int fd, const struct kms_head *h,
		   const struct kms_buffer *image);

/* @h's cursor off, and kms_cursor_images() destroyed. */
void kms_cursor_images_off(int fd, const struct kms_head *h,
			   struct kms_buffer images[2]);

/*
 * Where the @i-th move of a moving cursor takes it on @h: steps of 7 and 5
 * pixels, wrapping at the edges, so that it crosses the whole head.
 */
void kms_cursor_place(const struct kms_head *h, unsigned int i, uint32_t *x,
		      uint32_t *y);

/* Commit and free @req; 0 or -errno. */
int kms_commit(struct kms_display *d, drmModeAtomicReq *req, uint32_t flags,
	       void *data);

/*
 * Commit @req (freed) with an event; the vblank from which its picture is
 * on screen, or 0 with -errno in @err.
 */
uint32_t kms_commit_shown(struct kms_display *d, drmModeAtomicReq *req,
			  uint32_t flags, int *err);

/*
 * A head flipped on every vblank by a thread of its own: legacy page flips
 * with an event, the next one issued from the event of the one before,
 * with a real-time priority (kms_realtime()).  The thread reads every
 * event of the display's file: the rest of the program asks for none
 * while it runs.  The counts are the thread's, read once it stopped (or
 * @errors, to stop early).
 */
struct kms_flipper {
	struct kms_display *d;
	struct kms_head *h;
	pthread_t thread;
	volatile bool stop;
	uint64_t period_ns;		/* of the head's mode */
	uint64_t issued_ns;		/* when the flip in flight was issued */
	volatile unsigned int errors;	/* a flip refused, or no event */
	unsigned int flips, events;
	unsigned int missed;		/* vblanks between two events */
	unsigned int late;		/* latched after the next vblank */
	unsigned int first_seq, last_seq;
	uint64_t last_ns;		/* the last event's timestamp */
	uint64_t longest_ns;		/* between two events */
	uint64_t longest_ioctl_ns;	/* of a page flip ioctl */
	uint64_t longest_wait_ns;	/* from a flip to its event */
};

/* Start flipping head @h of @d (its buffers 0 and 1). */
void kms_flipper_start(struct kms_flipper *f, struct kms_display *d,
		       struct kms_head *h);

/* Stop the thread, after the flip in flight. */
void kms_flipper_stop(struct kms_flipper *f);

/* The frames the flips spanned, from the first event to the last. */
unsigned int kms_flipper_frames(const struct kms_flipper *f);

/*
 * Whether the flips kept to one per vblank: more than ten, none refused,
 * and at most one in fifty latched after the vblank that followed its
 * ioctl (a host that stalls the guest for longer than a frame makes a few
 * late).
 */
bool kms_flipper_paced(const struct kms_flipper *f);

/*
 * BAR @bar of the PCI device at sysfs path @dev, mapped: the device's
 * registers read without being a client of its driver.  While the driver
 * holds the BARs, that needs the guest booted with iomem=relaxed.
 */
volatile uint32_t *kms_bar_map_path(const char *dev, int bar, size_t *size);

/* BAR @bar of the device behind @card (/dev/dri/cardN). */
volatile uint32_t *kms_bar_map(const char *card, int bar, size_t *size);

uint32_t kms_reg(volatile uint32_t *bar, uint32_t reg);

/*
 * Connector @conn_id as an output: its preferred mode, to @mode, and the
 * first CRTC one of its encoders can drive that is not in @used (a mask of
 * CRTC indices, updated).  The CRTC's index, or -1 when the connector is
 * not connected or no CRTC is left for it.
 */
int kms_output(int fd, const drmModeRes *res, uint32_t conn_id,
	       drmModeModeInfo *mode, uint32_t *used);

/* ------------------------------------------------------------------------ */
/* Frame CRCs through the DRM debugfs CRC interface                         */
/* ------------------------------------------------------------------------ */

/* Equal CRCs in a row that make a picture known still. */
#define KMS_CRC_SAMPLES		4
/* Frames to let go by after a flip before the picture is known settled. */
#define KMS_CRC_SETTLE		2

struct kms_crc {
	int data;			/* crtc-N/crc/data, -1 when closed */
	uint32_t last_frame;
	bool frames_ok;			/* frame numbers kept increasing */
};

/*
 * Select the "auto" CRC source of CRTC @pipe under debugfs directory @dbg
 * (/sys/kernel/debug/dri/N) and open its data file; false, with a
 * "not ok" line, if that fails.
 */
bool kms_crc_open(struct kms_crc *c, const char *dbg, int pipe);

/* Stops the capture. */
void kms_crc_close(struct kms_crc *c);

/*
 * The CRC of a still picture shown since vblank @since: KMS_CRC_SAMPLES
 * equal values, once the entries of older frames are drained.
 */
bool kms_crc_stable(struct kms_crc *c, uint32_t since, uint32_t *crc);

/* The stable CRC of pipe @pipe since vblank @since (kms_crc_stable()). */
bool kms_crc_since(const char *debugfs, unsigned int pipe, uint32_t since,
		   uint32_t *crc);

/*
 * Commit @req (freed) with an event and take the stable CRC of the picture
 * of head @h it shows (kms_commit_shown(), kms_crc_since() under @debugfs);
 * false, with a "not ok" line for @name, if either fails.
 */
bool kms_commit_crc(struct kms_display *d, drmModeAtomicReq *req,
		    const char *debugfs, const struct kms_head *h,
		    uint32_t *crc, const char *name);

/*
 * The start of a program that tests head 0 through frame CRCs: its command
 * line, [-c CARD] [-d DEBUGFS] TEST... (@debugfs replaced when given), and
 * its display, with head 0, or an exit after "not ok @setup: no connected
 * head".  The index of the first TEST.
 */
int kms_crc_start(int argc, char **argv, struct kms_display *d,
		  const char **debugfs, const char *setup);

/* ------------------------------------------------------------------------ */
/* The driver's tracepoints, through a tracefs instance                     */
/* ------------------------------------------------------------------------ */

/* Where tracefs is: its own mount, or debugfs's automount of it. */
#define KMS_TRACEFS		"/sys/kernel/tracing"
#define KMS_TRACEFS_DEBUGFS	"/sys/kernel/debug/tracing"

/*
 * The records of one event in a trace buffer of the program's own (a
 * tracefs instance), which other tracing does not disturb.
 */
struct kms_trace {
	char dir[160];		/* the instance, "" when it could not be made */
	char event[64];		/* the event's name, as its records give it */
};

/*
 * Record event @event ("SYSTEM/NAME", such as "pvdc/pvdc_latch") where
 * @filter (the event filter syntax of tracefs; NULL: every record) holds,
 * in a new instance @name.  false, with the reason in errno, if tracefs,
 * the event or the filter is not there.
 */
bool kms_trace_start(struct kms_trace *t, const char *name,
		     const char *event, const char *filter);

/* The records of the event so far; -1 if the instance cannot be read. */
long long kms_trace_count(const struct kms_trace *t);

/* Removes the instance and its records. */
void kms_trace_stop(struct kms_trace *t);

/*
 * The shadow registers of every plane and head of the device whose BAR 0
 * is @bar0 (a malloc'ed array of @count).
 */
uint32_t *kms_shadow_registers(volatile uint32_t *bar0, size_t *count);

/*
 * Whether the test @name was asked for in argv[@first..]: all of them when
 * none is named, except "hold", which keeps the picture for the host and
 * only runs when named.
 */
bool kms_wanted(int argc, char **argv, int first, const char *name);

#endif /* PVDC_KMS_UTIL_H */
