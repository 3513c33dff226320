/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pvdc: DRM driver for the QEMU paravirtual display controller.
 *
 * Every head is a CRTC and brings a connector, with its encoder, that the
 * CRTC of the same index drives at reset, and any CRTC can drive any one
 * connector.  The device
 * keeps three copies of the display state: the driver writes the shadow
 * copy, a doorbell arms it and the device applies it at the head's next
 * vblank, all or nothing, and reports the outcome with an interrupt.  The
 * atomic checks mirror the device's validation rules so that a commit the
 * driver accepts is one the device applies.
 *
 * Nothing here waits on a clock: a commit is complete when the device says
 * so (DONE_SEQ reached the ARMED_SEQ of its doorbell), and the heads share
 * no lock that is held across a wait.
 */
#ifndef PVDC_DRV_H
#define PVDC_DRV_H

#include <linux/bitfield.h>
#include <linux/io.h>
#include <linux/iosys-map.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/seqlock.h>
#include <linux/types.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <drm/drm_atomic.h>
#include <drm/drm_connector.h>
#include <drm/drm_crtc.h>
#include <drm/drm_device.h>
#include <drm/drm_encoder.h>
#include <drm/drm_mm.h>
#include <drm/drm_plane.h>
#include <drm/drm_writeback.h>

#include "pvdc-regs.h"

#define PVDC_DRIVER_NAME	"pvdc"

/* Index of the register at offset @off of a state window in a regs[] image. */
#define PVDC_REG_INDEX(off)	((off) / 4)

struct pvdc_device;

/*
 * The device's vblanks are instants of its clock: vblank n of an enabled
 * head is at t0 + n * period.  The driver keeps that timeline and a mapping
 * from the device clock to ktime (pvdc_vblank.c), so that the vblank counter
 * and timestamps cost no register access.
 */
struct pvdc_timeline {
	bool on;
	u64 t0;			/* device ns of the enable latch */
	u64 period;		/* ns per frame */
	u32 count0;		/* counter at t0 */
	u32 off_count;		/* counter while off */
	u64 off_time;		/* device ns of the last vblank while off */
	/* Device VBLANK_COUNT + offset = the driver's counter. */
	u32 offset;
	u32 dev_count;		/* VBLANK_COUNT while off */
	/* Never report less than what was reported (mapping updates). */
	u32 floor;
	u64 floor_time;
};

/*
 * What one doorbell of a head completes when the device latches it: a
 * commit's event, writeback job and timeline change.  Lives in the commit's
 * struct pvdc_atomic_state (or on the tail's stack), which the tail keeps
 * until it saw @completed: the interrupt handler touches nothing of it
 * after setting @completed.
 */
struct pvdc_latch {
	struct list_head link;
	u32 seq;
	struct drm_pending_vblank_event *event;
	/* The head's writeback connector, if it has a job in this latch. */
	struct drm_writeback_connector *wb;
	u32 wb_ctrl;		/* HS_CTRL of the commit, WRITEBACK clear */
	u64 when;		/* device time of the latch, 0 if unknown */
	bool group;		/* latches with other heads */
	bool ask;		/* @when is in doubt: read DONE_FRAME */
	bool enables;		/* the head's timeline starts here */
	bool disables;		/* ... or stops */
	bool resync;		/* of a commit rewriting a refused head */
	bool completed;
};

/* A framebuffer kept pinned until the device latched what replaced it. */
struct pvdc_release {
	struct list_head link;
	u32 seq;
	struct drm_framebuffer *fb;
};

struct pvdc_head {
	struct pvdc_device *pvdc;
	unsigned int index;
	struct drm_crtc crtc;
	/* Connector @index and its encoder, on any CRTC (pvdc_output.c). */
	struct drm_encoder encoder;
	struct drm_connector connector;
	/* pvdc_writeback.c */
	struct drm_writeback_connector wb;
	/*
	 * The target of the writeback armed on the head, under irq_lock:
	 * the active state names it until a later doorbell latches, so it
	 * stays bound until then (pvdc_writeback_retire()).
	 */
	struct pvdc_release *wb_rel;

	/* Doorbells, under pvdc->irq_lock. */
	u32 seq;		/* ARMED_SEQ of the last doorbell written */
	u32 done;		/* DONE_SEQ the driver has processed */
	bool resolve;		/* read DONE_SEQ at the next interrupt */
	/*
	 * Commit tails writing this head's shadow state: a cursor update
	 * leaves its doorbell to them, so that it never arms half of theirs.
	 */
	unsigned int hold;
	/*
	 * HS_CTRL WRITEBACK is set in the shadow registers for the doorbell
	 * @wb_seq: until that latched, a cursor update rings no doorbell
	 * (@cursor_deferred) that would write the target a second time.
	 */
	bool wb_armed;
	bool cursor_deferred;
	u32 wb_seq;
	u32 wb_ctrl;		/* HS_CTRL once the writeback latched */
	struct list_head latches;	/* struct pvdc_latch, by seq */
	struct list_head releases;	/* struct pvdc_release, by seq */
	wait_queue_head_t wq;

	/* pvdc_vblank.c: started and stopped by the interrupt handler. */
	spinlock_t tl_lock;		/* protects tl */
	struct pvdc_timeline tl;
	/*
	 * Device time the core's vblank calls stand at, 0 outside them: the
	 * interrupt handler's, or a commit completing its event without the
	 * device.  Set under now_lock, read locklessly by the callbacks.
	 */
	spinlock_t now_lock;
	u64 irq_now;
	/* Device time of the vblank the last commit event carried. */
	u64 stamped;

	/* Set by the CRC debugfs interface, read in the vblank interrupt. */
	bool crc_enabled;
	/* CRC_FRAME of the last CRC handed to the core, if crc_sent. */
	bool crc_sent;
	u32 crc_frame;

	/*
	 * The head's colour tables in the VRAM reserved at probe (pvdc_crtc.c):
	 * device offsets, and the mapping of the first.
	 */
	u32 degamma_offset, gamma_offset, ctm_offset;
	void __iomem *color;
};

struct pvdc_plane {
	struct drm_plane base;
	unsigned int index;		/* device plane number */
	unsigned int type;		/* PVDC_PLANE_TYPE_* */
	unsigned int home;		/* head bound to at reset */
	u32 possible_heads;		/* device head mask */
};

/*
 * Values derived from the plane state in atomic_check: the shadow register
 * image (indexed by PVDC_REG_INDEX(PVDC_PS_*)), plus what the head-level
 * checks need.  FB_OFFSET is only known once the buffer is pinned, so it is
 * filled in at commit time.
 */
struct pvdc_plane_state {
	struct drm_plane_state base;
	u32 regs[PVDC_PLANE_STATE_REGS];
	bool enabled;
	bool scaled;
	u32 bandwidth;			/* KiB read per frame */
	/* For a cursor update that replaces the framebuffer in place. */
	struct pvdc_release *release;
};

struct pvdc_crtc_state {
	struct drm_crtc_state base;
	/* Shadow register image, indexed by PVDC_REG_INDEX(PVDC_HS_*). */
	u32 regs[PVDC_HEAD_STATE_REGS];
	u32 need;			/* KiB the enabled planes read */
	unsigned int scalers;		/* scaled enabled planes */
	/*
	 * The connector the head drives while active, -1 if none: off, or
	 * only its writeback connector (pvdc_global.c gives HS_CONNECTOR one
	 * then).  Derived on a modeset, like the timings.
	 */
	int connector;
	/* A commit that rewrites the head after the device refused one. */
	bool resync;
};

/*
 * A commit, for what its tail shares with the interrupt handler or needs
 * of a new state it may no longer read.  Once the tail signals hw_done,
 * the next commit on its CRTCs can run as soon as this one's events are
 * sent, and free its old states, which are this commit's new ones; a
 * commit on other CRTCs that swaps the global state out can free it at
 * any time after our swap.  This structure is freed only after the tail
 * returned (the tail holds a reference to the state).
 */
struct pvdc_atomic_state {
	struct drm_atomic_state base;
	/* From atomic_flush to the latch of the tail's doorbell, by head. */
	struct pvdc_latch latches[PVDC_MAX_HEADS];
	/* The commit raises a share of the device (pvdc_global.c). */
	bool takes;
	/* What its check reserved of the device address space (pvdc_gem.c). */
	struct pvdc_reservation *resv;
};

/* In pvdc_global_state.route[]: the head is off. */
#define PVDC_NO_ROUTE		0xff

/*
 * Resources shared by all heads.  release[] holds, per head, the commit
 * that lowered the head's share and may not have latched yet: a commit
 * that takes a share waits for those (pvdc_global_serialize()).  The
 * connectors are shared like the scalers: route[h] is the connector head
 * h drives (HS_CONNECTOR), PVDC_NO_ROUTE while it is off.
 */
struct pvdc_global_state {
	struct drm_private_state base;
	u32 bandwidth[PVDC_MAX_HEADS];	/* allocation of each enabled head */
	u8 scalers[PVDC_MAX_HEADS];	/* scaled planes on each head */
	u8 route[PVDC_MAX_HEADS];	/* connector of each enabled head */
	struct drm_crtc_commit *release[PVDC_MAX_HEADS];
	/* This commit's changes, decided in atomic_check. */
	u32 lowered;			/* heads whose share goes down */
	bool takes;			/* some share goes up */
};

/* Device clock -> ktime, pvdc_vblank.c. */
struct pvdc_clock {
	seqcount_spinlock_t seq;
	spinlock_t lock;		/* serialises the writers of seq */
	u64 dev0;			/* device ns at the anchor */
	s64 kt0;			/* ktime ns at the anchor */
	s64 skew;			/* slope - 1, in units of 2^-32 */
	s64 rate;			/* estimated rate - 1, same units */
	/* Half the width of the best sample of the last sync, ns. */
	u32 error;
	unsigned int interval;		/* seconds to the next sync */
	struct delayed_work sync_work;
};

struct pvdc_device {
	struct drm_device drm;
	void __iomem *mmio;
	resource_size_t vram_base;
	resource_size_t vram_size;
	int irq;

	/* Capabilities, read once at probe. */
	u32 features;
	unsigned int num_heads;
	unsigned int num_overlays;
	unsigned int num_planes;
	unsigned int num_scalers;
	u32 max_width, max_height;
	u32 cursor_width, cursor_height;
	u32 max_downscale;
	u32 max_upscale;		/* 0: no limit */
	u32 pitch_align, offset_align;
	u32 bandwidth_total;
	/* Largest colour LUTs. */
	u32 degamma_size, gamma_size;
	u32 formats[PVDC_MAX_FORMATS];
	unsigned int num_formats;
	u32 format_mask[3];		/* per PVDC_PLANE_TYPE_* */
	u32 wb_format_mask;		/* FORMATS_WRITEBACK */

	struct pvdc_head heads[PVDC_MAX_HEADS];
	struct pvdc_plane *planes[PVDC_MAX_PLANES];

	struct drm_property *hotplug_mode_update_property;
	struct drm_private_obj global;

	/*
	 * Interrupt state, doorbells and their completions.  Never held
	 * across a wait: a head waits on its own wait queue.
	 */
	spinlock_t irq_lock;		/* doorbells, INT_ENABLE, the heads' */
	u32 int_enable;
	/* Interrupts masked for good (unbind): complete everything at once. */
	bool quiesced;
	/* Shadow registers that may not hold what the state says. */
	DECLARE_BITMAP(stale_heads, PVDC_MAX_HEADS);
	DECLARE_BITMAP(stale_planes, PVDC_MAX_PLANES);
	/* Heads the device refused a commit of, to be rewritten. */
	u32 resync_heads;
	struct work_struct resync_work;

	/*
	 * The device address space above VRAM, [bind_start, bind_end), and
	 * the bindings in it (pvdc_gem.c): BIND_* registers, bind_mm,
	 * bindings, the counts below and every object's binding, use and
	 * reservations are under bind_lock.  Bindings and reservations
	 * together hold @bindings_used of the device's @max_bindings and
	 * @entries_used entries; @tentative reservations are not confirmed
	 * yet, and @reserve_seq counts those that were or ended, for the
	 * checks waiting on @reserve_wq.
	 */
	u64 bind_start, bind_end;
	struct mutex bind_lock;	/* see above */
	struct drm_mm bind_mm;
	struct list_head bindings;	/* least recently used first */
	struct list_head stale_bindings;	/* for the device to drop */
	u32 max_bindings, bindings_used, entries_used;
	unsigned int tentative;
	unsigned long reserve_seq;
	wait_queue_head_t reserve_wq;
	spinlock_t damage_lock;		/* DAMAGE_ADDR/DAMAGE_LEN pairs */

	/* Framebuffers the device stopped reading, unpinned in a work. */
	struct list_head released;
	struct work_struct release_work;

	struct work_struct hotplug_work;

	spinlock_t reg64_lock;		/* LO/HI pairs read as one value */
	struct pvdc_clock clock;
};

#define to_pvdc(dev)		container_of(dev, struct pvdc_device, drm)
#define to_pvdc_head(c)		container_of(c, struct pvdc_head, crtc)
#define to_pvdc_plane(p)	container_of(p, struct pvdc_plane, base)
#define to_pvdc_plane_state(s)	container_of(s, struct pvdc_plane_state, base)
#define to_pvdc_crtc_state(s)	container_of(s, struct pvdc_crtc_state, base)
#define to_pvdc_global_state(s)	container_of(s, struct pvdc_global_state, base)
#define to_pvdc_atomic_state(s)	container_of(s, struct pvdc_atomic_state, base)
#define wb_to_pvdc_head(w)	container_of(w, struct pvdc_head, wb)

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

/*
 * The longest a waiter waits for the device to latch a commit: an enable
 * latches a frame of its mode after its doorbell, or the device's link-up
 * delay if that is longer, anything else at the head's next vblank, and
 * the driver's modes have frames of at most a second (pvdc_crtc.c); the
 * rest is room for a loaded host.  A device that has not latched by then
 * is wedged: the waiter gets an error, the commit still completes when the
 * device latches it.
 */
#define PVDC_LATCH_TIMEOUT_MS	(PVDC_MAX_LINK_UP_DELAY_MS + 5 * MSEC_PER_SEC)

/* Sequence numbers wrap: @a is at or after @b. */
static inline bool pvdc_seq_reached(u32 a, u32 b)
{
	return (s32)(a - b) >= 0;
}

/* pvdc_drv.c */
void pvdc_update_int_enable(struct pvdc_device *pvdc, u32 set, u32 clear);
void pvdc_write_regs(struct pvdc_device *pvdc, u32 base, const u32 *regs,
		     const u32 *old, unsigned int count, bool all);

/* pvdc_gem.c */
int pvdc_gem_init(struct pvdc_device *pvdc);
struct drm_gem_object *pvdc_gem_create_object(struct drm_device *dev,
					      size_t size);
int pvdc_gem_dumb_create(struct drm_file *file, struct drm_device *dev,
			 struct drm_mode_create_dumb *args);
struct drm_framebuffer *pvdc_fb_create(struct drm_device *dev,
				       struct drm_file *file,
				       const struct drm_mode_fb_cmd2 *cmd);
enum drm_mode_status pvdc_gem_mode_valid(struct drm_device *dev,
					 const struct drm_display_mode *mode);
int pvdc_gem_fb_pin(struct drm_framebuffer *fb);
void pvdc_gem_fb_unpin(struct drm_framebuffer *fb);
u32 pvdc_gem_fb_address(const struct drm_framebuffer *fb, unsigned int i);
void pvdc_gem_unbind_all(struct pvdc_device *pvdc, bool device);
void pvdc_gem_damage(struct drm_plane_state *old_state,
		     struct drm_plane_state *new_state);
int pvdc_gem_reserve(struct drm_atomic_state *state);
void pvdc_gem_reserve_confirm(struct drm_atomic_state *state);
void pvdc_gem_unreserve(struct drm_atomic_state *state);
void pvdc_gem_fb_panic_prepare(struct drm_framebuffer *fb);
bool pvdc_gem_fb_panic_map(const struct drm_framebuffer *fb,
			   struct iosys_map *map);

/* pvdc_crtc.c */
int pvdc_color_init(struct pvdc_device *pvdc);
int pvdc_crtc_init(struct pvdc_device *pvdc, struct pvdc_head *head);
enum drm_mode_status pvdc_mode_check(struct pvdc_device *pvdc,
				     const struct drm_display_mode *mode);
u32 pvdc_crtc_cursor_bandwidth(struct pvdc_device *pvdc);

/* pvdc_commit.c */
int pvdc_atomic_commit(struct drm_device *drm, struct drm_atomic_state *state,
		       bool nonblock);
struct drm_atomic_state *pvdc_atomic_state_alloc(struct drm_device *drm);
void pvdc_atomic_state_clear(struct drm_atomic_state *state);
void pvdc_atomic_state_free(struct drm_atomic_state *state);
void pvdc_atomic_commit_tail(struct drm_atomic_state *state);
void pvdc_head_latched(struct pvdc_head *head, bool rejected);
bool pvdc_head_latch_unreported(struct pvdc_head *head);
void pvdc_head_latched_early(struct pvdc_head *head);
void pvdc_head_wait_rung(struct pvdc_head *head);
void pvdc_head_cursor_doorbell(struct pvdc_head *head,
			       struct pvdc_release *rel);
void pvdc_commit_quiesce(struct pvdc_device *pvdc);
void pvdc_resync_work(struct work_struct *work);
void pvdc_release_work(struct work_struct *work);
void pvdc_heads_reset(struct pvdc_device *pvdc);

/* pvdc_vblank.c */
void pvdc_clock_init(struct pvdc_device *pvdc);
void pvdc_clock_resume(struct pvdc_device *pvdc);
void pvdc_clock_fini(struct pvdc_device *pvdc);
bool pvdc_timeline_on(struct pvdc_head *head);
void pvdc_timeline_reset(struct pvdc_head *head);
void pvdc_timeline_start(struct pvdc_head *head);
void pvdc_timeline_stop(struct pvdc_head *head);
void pvdc_head_vblank(struct pvdc_head *head);
u64 pvdc_head_send_event(struct pvdc_head *head,
			 struct drm_pending_vblank_event *event, u64 latched);
u64 pvdc_head_next_vblank(struct pvdc_head *head, u64 now);
u64 pvdc_head_frame_time(struct pvdc_head *head, u32 frame);
u64 pvdc_head_frame_count(struct pvdc_head *head, u32 frame);
u64 pvdc_head_latch_time(struct pvdc_head *head, u64 when);
u64 pvdc_clock_device_now(struct pvdc_device *pvdc);
u64 pvdc_clock_margin(struct pvdc_device *pvdc);
u64 pvdc_timeline_t0(struct pvdc_head *head);
u32 pvdc_crtc_get_vblank_counter(struct drm_crtc *crtc);
bool pvdc_crtc_get_vblank_timestamp(struct drm_crtc *crtc, int *max_error,
				    ktime_t *vblank_time, bool in_vblank_irq);
int pvdc_crtc_enable_vblank(struct drm_crtc *crtc);
void pvdc_crtc_disable_vblank(struct drm_crtc *crtc);

/* pvdc_plane.c */
struct pvdc_plane *pvdc_plane_init(struct pvdc_device *pvdc,
				   unsigned int index, u32 caps);
bool pvdc_format_usable(u32 fourcc);
int pvdc_framebuffer_check(struct drm_device *dev,
			   const struct drm_mode_fb_cmd2 *mode_cmd);
void pvdc_plane_reset_regs(u32 *regs, unsigned int home);
void pvdc_plane_write(struct drm_plane *plane, struct drm_atomic_state *state);

/* pvdc_output.c */
int pvdc_output_create_properties(struct pvdc_device *pvdc);
int pvdc_output_init(struct pvdc_device *pvdc, struct pvdc_head *head);
void pvdc_output_init_routes(struct pvdc_device *pvdc);
int pvdc_output_crtc_connector(struct drm_crtc *crtc,
			       struct drm_atomic_state *state);
void pvdc_hotplug_work(struct work_struct *work);

/* pvdc_writeback.c */
int pvdc_writeback_init(struct pvdc_device *pvdc, struct pvdc_head *head);
void pvdc_writeback_crtc_regs(struct pvdc_head *head,
			      struct drm_atomic_state *state,
			      struct pvdc_crtc_state *pstate);
void pvdc_writeback_retire(struct pvdc_head *head);
void pvdc_writeback_complete(struct pvdc_latch *latch, int status);

/* pvdc_global.c */
int pvdc_global_init(struct pvdc_device *pvdc);
int pvdc_global_check(struct drm_atomic_state *state);
int pvdc_global_commit_setup(struct drm_atomic_state *state);
void pvdc_global_serialize(struct drm_atomic_state *state);
bool pvdc_global_in_state(struct drm_atomic_state *state);

/* pvdc_crc.c */
int pvdc_set_crc_source(struct drm_crtc *crtc, const char *source);
int pvdc_verify_crc_source(struct drm_crtc *crtc, const char *source,
			   size_t *values_cnt);
const char *const *pvdc_get_crc_sources(struct drm_crtc *crtc, size_t *count);
void pvdc_crc_vblank(struct pvdc_head *head);

#endif /* PVDC_DRV_H */
