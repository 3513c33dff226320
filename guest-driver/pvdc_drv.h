/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pvdc: DRM driver for the QEMU paravirtual display controller.
 *
 * Every head is a CRTC with one encoder and one connector.  The device keeps
 * three copies of the display state: the driver writes the shadow copy, a
 * doorbell arms it and the device applies it at the head's next vblank, all
 * or nothing, and reports the outcome with an interrupt.  The atomic checks
 * mirror the device's validation rules so that a commit the driver accepts
 * is one the device applies.
 */
#ifndef PVDC_DRV_H
#define PVDC_DRV_H

#include <linux/io.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <drm/drm_atomic.h>
#include <drm/drm_connector.h>
#include <drm/drm_crtc.h>
#include <drm/drm_device.h>
#include <drm/drm_encoder.h>
#include <drm/drm_plane.h>

#include "pvdc-regs.h"

#define PVDC_DRIVER_NAME	"pvdc"

struct pvdc_device;

struct pvdc_head {
	struct pvdc_device *pvdc;
	unsigned int index;
	struct drm_crtc crtc;
	struct drm_encoder encoder;
	struct drm_connector connector;

	/*
	 * Commit completion, protected by pvdc->irq_lock: armed is true from
	 * the doorbell to the COMMIT_DONE or COMMIT_REJECTED interrupt; the
	 * event, if any, is sent from that interrupt.
	 */
	bool armed;
	u32 armed_seq;
	struct drm_pending_vblank_event *event;

	/* Last hardware vblank counter read. */
	u32 vblank_count;
	/* Device time of the vblank being handled by the interrupt. */
	u64 irq_vblank_time;

	/* Set by the CRC debugfs interface, read in the vblank interrupt. */
	bool crc_enabled;
};

struct pvdc_plane {
	struct drm_plane base;
	unsigned int index;		/* device plane number */
	unsigned int type;		/* PVDC_PLANE_TYPE_* */
	unsigned int home;		/* head bound to at reset */
	u32 possible_heads;		/* device head mask */
	/* The shadow registers no longer hold the current state's values. */
	bool shadow_lost;
};

/*
 * Values derived from the plane state in atomic_check: the shadow register
 * values to program (indexed by PVDC_PS_* / 4), plus what the head-level
 * checks need.  FB_OFFSET is only known once the buffer is pinned, so it is
 * filled in at commit time.
 */
struct pvdc_plane_state {
	struct drm_plane_state base;
	u32 regs[PVDC_PLANE_STATE_REGS];
	bool enabled;
	bool scaled;
	u32 bandwidth;			/* KiB read per frame */
};

struct pvdc_crtc_state {
	struct drm_crtc_state base;
	u32 bandwidth;			/* HS_BANDWIDTH: allocation, KiB */
	u32 need;			/* KiB the enabled planes read */
	unsigned int scalers;		/* scaled enabled planes */
	unsigned int num_enabled;	/* enabled planes */
	/* From atomic_flush to the doorbell that will complete it. */
	struct drm_pending_vblank_event *event;
};

/*
 * Resources shared by all heads.  A commit that changes them carries a new
 * copy of this state; seq orders those commits so that their tails reach
 * the device in the order they were checked.
 */
struct pvdc_global_state {
	struct drm_private_state base;
	u64 seq;
	u32 bandwidth[PVDC_MAX_HEADS];	/* allocation of each enabled head */
	u8 scalers[PVDC_MAX_HEADS];	/* scaled planes on each head */
};

struct pvdc_device {
	struct drm_device drm;
	void __iomem *mmio;
	resource_size_t vram_base;
	resource_size_t vram_size;

	/* Capabilities, read once at probe. */
	u32 features;
	unsigned int num_heads;
	unsigned int num_overlays;
	unsigned int num_planes;
	unsigned int num_scalers;
	u32 max_width, max_height;
	u32 cursor_width, cursor_height;
	u32 max_downscale, max_upscale;
	u32 pitch_align, offset_align;
	u32 bandwidth_total;
	u32 formats[PVDC_MAX_FORMATS];
	unsigned int num_formats;
	u32 format_mask[3];		/* per PVDC_PLANE_TYPE_* */

	struct pvdc_head heads[PVDC_MAX_HEADS];
	struct pvdc_plane *planes[PVDC_MAX_PLANES];

	struct drm_property *hotplug_mode_update_property;

	struct drm_private_obj global;
	wait_queue_head_t global_wq;
	u64 global_done;		/* seq of the last global commit done */

	struct mutex hw_lock;		/* shadow writes + doorbell of a tail */
	spinlock_t irq_lock;		/* INT_ENABLE and head commit state */
	u32 int_enable;
	wait_queue_head_t commit_wq;
	struct work_struct hotplug_work;

	/* guest ktime - device clock, estimated at vblank interrupts */
	spinlock_t clock_lock;
	s64 clock_offset;
	bool clock_offset_valid;
};

#define to_pvdc(dev)		container_of(dev, struct pvdc_device, drm)
#define to_pvdc_head(c)		container_of(c, struct pvdc_head, crtc)
#define to_pvdc_plane(p)	container_of(p, struct pvdc_plane, base)
#define to_pvdc_plane_state(s)	container_of(s, struct pvdc_plane_state, base)
#define to_pvdc_crtc_state(s)	container_of(s, struct pvdc_crtc_state, base)
#define to_pvdc_global_state(s)	container_of(s, struct pvdc_global_state, base)

static inline u32 pvdc_read(struct pvdc_device *pvdc, u32 reg)
{
	return ioread32(pvdc->mmio + reg);
}

static inline void pvdc_write(struct pvdc_device *pvdc, u32 reg, u32 val)
{
	iowrite32(val, pvdc->mmio + reg);
}

static inline unsigned int pvdc_planes_per_head(struct pvdc_device *pvdc)
{
	return pvdc->num_overlays + 2;
}

/* pvdc_drv.c */
void pvdc_update_int_enable(struct pvdc_device *pvdc, u32 set, u32 clear);

/* pvdc_crtc.c */
int pvdc_crtc_init(struct pvdc_device *pvdc, struct pvdc_head *head);
int pvdc_crtc_global_check(struct drm_atomic_state *state, bool *rerun);
void pvdc_head_commit_done(struct pvdc_head *head, bool rejected);
void pvdc_head_vblank(struct pvdc_head *head);
void pvdc_atomic_commit_tail(struct drm_atomic_state *state);
u32 pvdc_mode_period_ns(const struct drm_display_mode *mode);
enum drm_mode_status pvdc_mode_check(struct pvdc_device *pvdc,
				     const struct drm_display_mode *mode);

/* pvdc_plane.c */
struct pvdc_plane *pvdc_plane_init(struct pvdc_device *pvdc,
				   unsigned int index, u32 caps);
void pvdc_plane_sanitize(struct pvdc_device *pvdc, unsigned int index);

/* pvdc_output.c */
int pvdc_output_create_properties(struct pvdc_device *pvdc);
int pvdc_output_init(struct pvdc_device *pvdc, struct pvdc_head *head);
void pvdc_hotplug_work(struct work_struct *work);

/* pvdc_global.c */
int pvdc_global_init(struct pvdc_device *pvdc);
struct pvdc_global_state *
pvdc_get_global_state(struct drm_atomic_state *state);
struct pvdc_global_state *
pvdc_get_new_global_state(struct drm_atomic_state *state);
void pvdc_global_commit_begin(struct pvdc_device *pvdc,
			      struct pvdc_global_state *global);
void pvdc_global_commit_end(struct pvdc_device *pvdc,
			    struct pvdc_global_state *global);

/* pvdc_crc.c */
int pvdc_set_crc_source(struct drm_crtc *crtc, const char *source);
int pvdc_verify_crc_source(struct drm_crtc *crtc, const char *source,
			   size_t *values_cnt);
const char *const *pvdc_get_crc_sources(struct drm_crtc *crtc, size_t *count);
void pvdc_crc_vblank(struct pvdc_head *head);

#endif /* PVDC_DRV_H */
