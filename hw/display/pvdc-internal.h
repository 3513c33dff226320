/*
 * pvdc: paravirtual display controller - interfaces between the parts of
 * the device model.
 *
 *   pvdc.h         the device state
 *   pvdc.c         QOM type, properties, realize, reset, migration
 *   pvdc-mmio.c    register file: read/write dispatch
 *   pvdc-latch.c   doorbells, arming a commit, latching it all or nothing
 *   pvdc-rules.c   the rules a commit and a loaded state are checked by
 * pvdc series: color
 *   pvdc-color.c   the LUTs and CTM of a head: copied at arm, derived
 * pvdc series: end color
 *   pvdc-timing.c  vblank timelines, the timer, interrupts
 * pvdc series: console
 *   pvdc-console.c one QEMU console per connector, showing the head that
 *                  drives it
 * pvdc series: end console
 * pvdc series: capture
 *   pvdc-capture.c frame CRCs, writeback, the budget they share
 * pvdc series: end capture
 *   pvdc-compose.c composition of the active planes into a picture
 * pvdc series: outputs
 *   pvdc-output.c  connectors: EDID, preferred mode, hotplug
 * pvdc series: end outputs
 * pvdc series: memory
 *   pvdc-memory.c  guest memory: bindings of guest pages above VRAM
 * pvdc series: end memory
 * pvdc series: boot
 *   pvdc-boot.c    the boot display: a ramfb companion on head 0
 * pvdc series: end boot
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef HW_DISPLAY_PVDC_INTERNAL_H
#define HW_DISPLAY_PVDC_INTERNAL_H

#include "ui/rect.h"
#include "pvdc.h"
#include "pvdc-fields.h"

/*
 * Fixed limits of this implementation.  Guests read them from the
 * capability registers; they are only spelled here.
 */
#define PVDC_CURSOR_MAX_SIZE            256
/*
 * pixman reads and writes lines of 32-bit words from a 32-bit aligned
 * first pixel: that, and not the alignment of any hardware, is what a
 * pitch and an offset need.
 */
#define PVDC_PITCH_ALIGNMENT            4
#define PVDC_OFFSET_ALIGNMENT           4
/* Upscaling has no limit: a plane costs what its destination does. */
#define PVDC_MAX_DOWNSCALE              4
#define PVDC_MAX_SIZE_LIMIT             16384
/* pvdc series: outputs */
/* Preferred mode of the connectors unless the xres/yres properties say. */
#define PVDC_DEFAULT_XRES               1024
#define PVDC_DEFAULT_YRES               768
/* pvdc series: end outputs */
/* The device address space: VRAM, then bindings (pvdc-memory.c). */
#define PVDC_ADDR_SPACE_SIZE            BIT_ULL(32)

static inline bool pvdc_head_on(const PVDCHead *head)
{
    return FIELD_EX32(head->active.regs[R_HS_CTRL], HS_CTRL, ENABLE);
}

static inline bool pvdc_plane_on(const PVDCPlaneRegs *r)
{
    return FIELD_EX32(r->regs[R_PS_CTRL], PS_CTRL, ENABLE);
}

/* pvdc.c */
uint32_t pvdc_plane_type(PVDCState *s, unsigned int plane);
uint32_t pvdc_plane_home(PVDCState *s, unsigned int plane);
uint32_t pvdc_plane_caps(PVDCState *s, unsigned int plane);

/*
 * Whether the device still answers.  Between unrealize and finalize a
 * vCPU may still dispatch an access already under way, and a hot-unplug
 * can happen inside the device's own interrupt message: from then on
 * every entry point returns at once, leaving the state alone.
 */
static inline bool pvdc_alive(PVDCState *s)
{
    return DEVICE(s)->realized;
}

/* The subsections of vmstate_pvdc. */
typedef enum PVDCSubsection {
    PVDC_SUBSECTION_OUTPUT,
    PVDC_SUBSECTION_COLORS,
    PVDC_SUBSECTION_MEMORY,
    PVDC_SUBSECTION_BOOT,
} PVDCSubsection;

/*
 * The pre_load of subsection @which: a stream brings each at most once
 * (QEMU's loader would load a repeated one again over the first).
 */
int pvdc_subsection_pre_load(PVDCState *s, PVDCSubsection which);

/* pvdc-mmio.c */
extern const MemoryRegionOps pvdc_mmio_ops;

/* pvdc-rules.c */
uint32_t pvdc_format_mask(unsigned int plane_type);
/* FORMATS_WRITEBACK: the FORMAT_TABLE entries a writeback target takes. */
uint32_t pvdc_writeback_format_mask(void);
/* The writeback target of @r is valid for its mode (PVDC_ERR_WRITEBACK). */
bool pvdc_writeback_target_valid(PVDCState *s, const PVDCHeadRegs *r);
uint64_t pvdc_mode_period_ns(const PVDCHeadRegs *regs);
bool pvdc_mode_valid(PVDCState *s, const PVDCHeadRegs *r);
/* pvdc series: color */
/* The registers of the colour stages @r enables (PVDC_ERR_COLOR). */
bool pvdc_color_valid(PVDCState *s, const PVDCHeadRegs *r);
/* pvdc series: end color */

/*
 * The state a commit would leave behind: for every head and plane, the
 * armed copy if the group carries it, the active one otherwise.
 */
typedef struct PVDCCommitView {
    PVDCState *s;
    uint32_t group;
    const PVDCHeadRegs *head[PVDC_MAX_HEADS];
    const PVDCPlaneRegs *plane[PVDC_MAX_PLANES];
    int owner[PVDC_MAX_PLANES];     /* head whose commit carries it, or -1 */
} PVDCCommitView;

void pvdc_commit_view_init(PVDCCommitView *v, PVDCState *s, uint32_t group);
/*
 * The first rule @v breaks, as a RESULT value, and the head it breaks it
 * on in @failed; 0 if it breaks none.
 */
uint32_t pvdc_check_commit(PVDCCommitView *v, unsigned int *failed);
/* A RESULT value with code @code about the head, not a plane. */
uint32_t pvdc_head_error(uint32_t code);
/* What the RESULT value @result refuses, and where, for the log. */
const char *pvdc_error_name(uint32_t result);
void pvdc_error_where(uint32_t result, char *buf, size_t size);
/*
 * Check a whole loaded state as a commit would: the active state against
 * every rule, the armed commits for what a doorbell guarantees (their
 * content is checked when they latch, like any other commit).
 */
bool pvdc_loaded_state_valid(PVDCState *s, Error **errp);

/* pvdc-latch.c */
void pvdc_doorbell(PVDCState *s, uint32_t mask);
void pvdc_doorbell_amend(PVDCState *s, unsigned int head);
uint32_t pvdc_armed_mask(PVDCState *s);
/*
 * Latch the commits due by @now, in time order.  Sets their interrupt
 * bits in INT_STATUS; sending the interrupt is the caller's job.
 */
void pvdc_latch_due_commits(PVDCState *s, int64_t now);
bool pvdc_next_latch(PVDCState *s, int64_t *when);

/* pvdc series: color */
/* pvdc-color.c */
/* Free the tables and the pipeline of @c and empty it. */
void pvdc_color_clear(PVDCHeadColor *c);
/*
 * (Re)derive @c->pipeline from the copied tables; false if their sizes
 * are out of range.
 */
bool pvdc_color_derive(PVDCHeadColor *c);
/* Copy the tables of the armed state of @head (at its doorbell). */
void pvdc_color_arm(PVDCState *s, PVDCHead *head);
/* Whether loaded tables @c are what a doorbell would have copied for @r. */
bool pvdc_color_matches(PVDCState *s, const PVDCHeadRegs *r,
                        const PVDCHeadColor *c);
/*
 * The latch point of @head: the armed tables become the active ones, and
 * the consoles forget a pipeline that goes.
 */
void pvdc_color_latch(PVDCHead *head);
/* Drop the armed and active tables of @head (reset, a stream's load). */
void pvdc_color_reset(PVDCHead *head);

/* pvdc series: end color */
/* pvdc-timing.c */
uint64_t pvdc_vblank_count(PVDCHead *head, int64_t now);
int64_t pvdc_vblank_time(PVDCHead *head, int64_t now);
int64_t pvdc_next_vblank(PVDCHead *head, int64_t after);
void pvdc_timeline_enable(PVDCHead *head, int64_t when);
void pvdc_timeline_disable(PVDCHead *head, int64_t when);
bool pvdc_timeline_valid(PVDCHead *head);
/*
 * Bring the device up to @now: the vblank interrupts and the latch points
 * that passed, in time order.  Run by the timer and before every register
 * access, so the guest never sees an event the rate-limited timer has not
 * run yet.
 */
void pvdc_catch_up(PVDCState *s, int64_t now);
void pvdc_timer_update(PVDCState *s);
void pvdc_timer_cb(void *opaque);
/* Set @bits (PVDC_INT(head, bit)) in INT_STATUS and interrupt. */
void pvdc_irq_raise(PVDCState *s, uint32_t bits);
void pvdc_irq_update(PVDCState *s, uint32_t was_pending);
void pvdc_set_int_enable(PVDCState *s, uint32_t val);

/* pvdc series: console */
/* pvdc-console.c */
struct PVDCComposeScene;
void pvdc_console_instance_init(PVDCState *s);
void pvdc_console_init(PVDCState *s);
void pvdc_console_unrealize(PVDCState *s);
/* pvdc series: memory */
/* What bindings show changed wholesale: every console composes anew. */
void pvdc_console_invalidate(PVDCState *s);
/* pvdc series: end memory */
void pvdc_console_finalize(PVDCState *s);
/* pvdc series: color */
/*
 * The active colour pipeline of @head is about to be replaced: the
 * consoles that show it compose again whole, whatever address the new
 * one has.
 */
void pvdc_console_color_changed(PVDCHead *head);
/* pvdc series: end color */
/* pvdc series: memory */
/*
 * The guest wrote [@start, @start + @len) of a binding (DAMAGE_LEN):
 * every console whose head shows a plane reading those bytes composes
 * again what they change.
 */
void pvdc_console_damage(PVDCState *s, uint64_t start, uint64_t len);
/* pvdc series: end memory */
/*
 * @head latched a commit (it was enabled, on connector @old_connector, if
 * @was_on): push the frames of the consoles it may change, of the
 * connector it leaves or keeps and of the one it takes, to their UIs.
 */
void pvdc_console_head_latched(PVDCHead *head, bool was_on,
                               uint32_t old_connector);
/*
 * The active state of @head as the engine sees it, leaving out plane
 * @skip.  @ids, if not NULL, gets the plane index of each scene plane.
 */
void pvdc_console_scene(PVDCHead *head, struct PVDCComposeScene *scene,
                        int skip, unsigned int *ids);
/*
 * Compose @scene of @head (its @damage, or whole if NULL) into @image,
 * counted in the compositions of the head; false if it could not.
 */
bool pvdc_console_compose(PVDCHead *head,
                          const struct PVDCComposeScene *scene,
                          pixman_image_t *image, const QemuRect *damage);

/* pvdc series: end console */
/* pvdc series: capture */
/* pvdc-capture.c */
/* The capture state of @head (realize, finalize). */
void pvdc_capture_init(PVDCHead *head);
void pvdc_capture_finalize(PVDCHead *head);
/*
 * PVDC_HEAD_CRC_VALUE: capture the CRC of the current frame of @head if it
 * has not been captured yet and the budget allows, and return the last
 * CRC captured.
 */
uint32_t pvdc_crc_read(PVDCHead *head, int64_t now);
void pvdc_crc_budget_reset(PVDCState *s, int64_t now);
/*
 * The composition budget CRC capture and writeback share: 0 if it allows
 * a composition at @now, else the time until it will (it is in debt).
 */
int64_t pvdc_budget_wait(PVDCState *s, int64_t now);
/*
 * Compose the frame @head shows at the latch point @when into its
 * writeback target (active HS_WB_*) and mark the range dirty.  Takes
 * its cost from the budget whatever the balance: it is never dropped.
 */
void pvdc_writeback(PVDCHead *head, int64_t when);
/*
 * The active state of @head changed at a latch point: the frame that
 * starts there gets a CRC of its own, even at a vblank count already
 * captured (a head enabled again, or after a reset).
 */
void pvdc_crc_invalidate(PVDCHead *head);

/* pvdc series: end capture */
/* pvdc series: outputs */
/* pvdc-output.c */
extern const VMStateDescription vmstate_pvdc_output;
void pvdc_output_instance_init(PVDCState *s);
bool pvdc_output_realize(PVDCState *s, Error **errp);
/* PVDC_HEAD_PREFERRED and PVDC_HEAD_SUGGESTED_POS of @connector. */
uint32_t pvdc_output_preferred(PVDCState *s, unsigned int connector);
uint32_t pvdc_output_position(PVDCState *s, unsigned int connector);
/*
 * The UI window of the console of @connector asks for another mode
 * (GraphicHwOps.ui_info).
 */
void pvdc_output_ui_info(PVDCState *s, unsigned int connector,
                         const QemuUIInfo *info);

/* pvdc series: end outputs */
/* pvdc series: boot */
/* pvdc-boot.c */
extern const VMStateDescription vmstate_pvdc_boot;
/* Set the ramfb companion up as the ramfb property says. */
bool pvdc_boot_realize(PVDCState *s, Error **errp);
/* Head 0 shows the boot display again, if the device has one. */
void pvdc_boot_reset(PVDCState *s);
/* A head is enabled: the boot display is over until the next reset. */
void pvdc_boot_end(PVDCState *s);
/* Refresh @con with the boot display (pvdc-console.c, while shown). */
void pvdc_boot_display_update(PVDCState *s, QemuConsole *con);

/* pvdc series: end boot */
/* pvdc series: memory */
/* pvdc-memory.c */
extern const VMStateDescription vmstate_pvdc_memory;
/* The BIND_* registers at @addr; false if @addr is none of them. */
bool pvdc_memory_read(PVDCState *s, hwaddr addr, uint32_t *val);
bool pvdc_memory_write(PVDCState *s, hwaddr addr, uint32_t val);
/* Unmap and forget every binding, clear the registers (reset, unrealize). */
void pvdc_memory_reset(PVDCState *s);
/* Watch for RAM under bindings going away (realize, unrealize). */
void pvdc_memory_realize(PVDCState *s);
void pvdc_memory_unrealize(PVDCState *s);
/* Whether [@addr, @addr + @len) lies wholly in one binding. */
bool pvdc_memory_bound(PVDCState *s, uint64_t addr, uint64_t len);
/*
 * The host pointer to [@addr, @addr + @len) if those bytes lie in one
 * binding, contiguous in the host's mapping of its pages, and bus
 * mastering is on; else NULL (also if the binding lost its RAM).  Valid
 * until the binding is dropped.
 */
uint8_t *pvdc_memory_host_span(PVDCState *s, uint64_t addr, uint64_t len);
/*
 * Copy [@addr, @addr + @len), which lies in one binding, to @dst; false,
 * nothing copied, if it does not, it lost its RAM or bus mastering is
 * off.
 */
bool pvdc_memory_load(PVDCState *s, uint64_t addr, uint64_t len, void *dst);
/*
 * Write @lines (at least one) lines of @line bytes, @stride apart in
 * @src, @pitch apart from @addr on, into the binding that holds them all,
 * marking the pages dirty for migration and the lines damaged for the
 * consoles; false, nothing written, if none does, it lost its RAM or bus
 * mastering is off.
 */
bool pvdc_memory_store(PVDCState *s, uint64_t addr, uint32_t pitch,
                       uint32_t lines, uint64_t line, const uint8_t *src,
                       uint64_t stride);
/* Whether the device may read bindings: bus mastering is on. */
bool pvdc_memory_reachable(PVDCState *s);
/*
 * Give each plane of @scene that reads outside VRAM (its memory planes
 * in bindings, as the commit rules accept them) views of its own: host
 * memory, or a fetch of the lines composition reads (what it copies
 * counts in x-bounce-bytes), whose state @keep keeps until the scene is
 * composed (it frees it, g_free).  With bus mastering off such planes
 * are dropped from @scene (not shown, as if disabled), as is a plane
 * in a binding that lost its RAM or whose view cannot be made.
 */
void pvdc_memory_views(PVDCState *s, struct PVDCComposeScene *scene,
                       GPtrArray *keep);

/* pvdc series: end memory */
#endif /* HW_DISPLAY_PVDC_INTERNAL_H */
