/* SPDX-License-Identifier: GPL-2.0-or-later OR MIT */
/*
 * pvdc: paravirtual display controller - register map.
 *
 * The single source of truth for the device model, the qtests and the
 * guest drivers (the Linux driver's copy is generated from it).  Plain C
 * preprocessor definitions only, no types and no includes.
 *
 * The behaviour behind every register is specified in docs/specs/pvdc.rst.
 *
 * BAR0 is the register file (PVDC_MMIO_SIZE bytes of 32-bit little-endian
 * registers), BAR2 is VRAM.  Registers are grouped in windows:
 *
 *   global        identification, capabilities, interrupts, multi-head commit
 *   plane caps    one read-only word per plane: type and possible heads
 *   head control  per head, immediate: doorbell, commit outcome, vblank,
 *                 CRC; and the connector registers of connector h
 *   head shadow   per head, latched: mode timings, enable, bandwidth, colour,
 *                 writeback, the connector it drives
 *   head active   read-only view of what the head scans out now
 *   plane shadow  per plane, latched: framebuffer, source/destination, blend
 *   plane active  read-only view of what the plane scans out now
 *   EDID          per connector, read-only, PVDC_EDID_SIZE bytes
 *
 * "Latched" registers are written into the shadow copy only; a doorbell arms
 * them and the device applies them at the head's next vblank, all or none.
 *
 * A field of a register is given by its _SHIFT and _LENGTH (in bits); the
 * single-bit flags and the _MASK of a field (unshifted) derive from them.
 */
#ifndef HW_DISPLAY_PVDC_REGS_H
#define HW_DISPLAY_PVDC_REGS_H

/*
 * PCI identity: a QEMU device's, Red Hat's vendor ID with a device ID from
 * the 1b36:0000..00ff range of QEMU's docs/specs/pci-ids.rst.
 */
#define PVDC_PCI_VENDOR_ID              0x1b36
#define PVDC_PCI_DEVICE_ID              0x0015
#define PVDC_PCI_REVISION               0x01
#define PVDC_MMIO_BAR                   0
#define PVDC_VRAM_BAR                   2

#define PVDC_MMIO_SIZE                  0x10000

/* Topology limits (device properties are checked against these). */
#define PVDC_MAX_HEADS                  8
#define PVDC_MAX_OVERLAYS               8
/* primary + overlays + cursor per head */
#define PVDC_MAX_PLANES_PER_HEAD        (PVDC_MAX_OVERLAYS + 2)
#define PVDC_MAX_PLANES \
    (PVDC_MAX_HEADS * PVDC_MAX_PLANES_PER_HEAD)
#define PVDC_MAX_SCALERS                16
#define PVDC_MAX_FORMATS                16
/*
 * The longest link-up delay (x-link-up-delay-ms): an enable latches at most
 * this long, or a frame of its mode if that is longer, after its doorbell.
 * A driver bounds its waits for a latch with it, and stays under the 10 s
 * a DRM core waits for a commit.
 */
#define PVDC_MAX_LINK_UP_DELAY_MS       5000

/* ------------------------------------------------------------------------ */
/* Global window                                                            */
/* ------------------------------------------------------------------------ */

#define PVDC_REG_ID                     0x0000  /* RO: PVDC_ID */
#define PVDC_ID                         0x43445650 /* "PVDC" little-endian */
#define PVDC_REG_VERSION                0x0004  /* RO: major, minor */
#define PVDC_VERSION_MAJOR              1
#define PVDC_VERSION_MINOR              0
#define PVDC_VERSION_MAJOR_SHIFT        16
#define PVDC_VERSION_MAJOR_LENGTH       16
#define PVDC_VERSION_MINOR_SHIFT        0
#define PVDC_VERSION_MINOR_LENGTH       16
/*
 * RO: PVDC_FEATURE_*, only for what a pvdc may lack on its machine or by a
 * property; everything else in this map every pvdc has.
 */
#define PVDC_REG_FEATURES               0x0008
/* An MSI capability: the machine has working MSI (msi_nonbroken) */
#define PVDC_FEATURE_MSI                (1u << 0)
/*
 * The device has the machine's boot display (a ramfb companion): the
 * firmware's framebuffer (efifb, vesafb) is this device's to take over
 */
#define PVDC_FEATURE_BOOT_DISPLAY       (1u << 1)
#define PVDC_REG_NUM_HEADS              0x000c  /* RO */
#define PVDC_REG_NUM_OVERLAYS           0x0010  /* RO: overlays per head */
#define PVDC_REG_NUM_PLANES             0x0014  /* RO: all planes, all heads */
#define PVDC_REG_NUM_SCALERS            0x0018  /* RO: device-wide pool */
#define PVDC_REG_VRAM_SIZE_LO           0x001c  /* RO: bytes */
#define PVDC_REG_VRAM_SIZE_HI           0x0020  /* RO */
#define PVDC_REG_MAX_SIZE               0x0024  /* RO: PVDC_XY(width, height) */
#define PVDC_REG_CURSOR_MAX             0x0028  /* RO: PVDC_XY(width, height) */
#define PVDC_REG_SCALE_LIMITS           0x002c  /* RO: see below */
/*
 * src / dst <= MAX_DOWNSCALE and dst / src <= MAX_UPSCALE, per axis, both
 * integer factors; compared exactly against the 16.16 source size.  A
 * MAX_UPSCALE of 0 means no limit: only the sizes are.
 */
#define PVDC_SCALE_MAX_DOWNSCALE_SHIFT  0
#define PVDC_SCALE_MAX_UPSCALE_SHIFT    8
#define PVDC_SCALE_FACTOR_LENGTH        8
#define PVDC_SCALE_FACTOR_MASK          ((1u << PVDC_SCALE_FACTOR_LENGTH) - 1)
#define PVDC_REG_PITCH_ALIGN            0x0030  /* RO: bytes */
#define PVDC_REG_OFFSET_ALIGN           0x0034  /* RO: bytes */
/* RO: KiB per frame, all heads */
#define PVDC_REG_BANDWIDTH_TOTAL        0x0038
/*
 * RO: PVDC_XY(degamma, gamma), the largest LUTs a head takes; at least
 * PVDC_LUT_MIN_SIZE entries each.
 */
#define PVDC_REG_LUT_SIZE               0x003c
#define PVDC_LUT_MIN_SIZE               2
#define PVDC_LUT_MAX_SIZE               4096

/*
 * Interrupts: four bits per head, head h at bit 4 * h.  Level-triggered
 * INTx is asserted while STATUS & ENABLE is non-zero; with MSI one message
 * is sent whenever enabled bits become set, one for the bits set together.
 */
#define PVDC_REG_INT_STATUS             0x0040  /* RW1C */
#define PVDC_REG_INT_ENABLE             0x0044  /* RW */
/* RO: a read returns STATUS and clears the bits it returned */
#define PVDC_REG_INT_ACK                0x0048
#define PVDC_INT_VBLANK                 (1u << 0)
#define PVDC_INT_COMMIT_DONE            (1u << 1)  /* armed state applied */
#define PVDC_INT_COMMIT_REJECTED        (1u << 2)  /* armed state refused */
#define PVDC_INT_HOTPLUG                (1u << 3)
#define PVDC_INT_BITS_PER_HEAD          4
#define PVDC_INT_HEAD_MASK              ((1u << PVDC_INT_BITS_PER_HEAD) - 1)
#define PVDC_INT(head, bit) \
    ((bit) << ((head) * PVDC_INT_BITS_PER_HEAD))

/*
 * Multi-head commit: writing a mask of heads arms all of them as one group,
 * validated as a whole and applied to all or to none.  Reads return the mask
 * of heads that currently have a commit armed.
 */
#define PVDC_REG_MULTI_DOORBELL         0x004c

/*
 * The device clock (QEMU_CLOCK_VIRTUAL) in nanoseconds, the clock of every
 * vblank time and latch point.  Read HI, LO, then HI again: if HI changed,
 * read again.
 */
#define PVDC_REG_CLOCK_LO               0x0050  /* RO */
#define PVDC_REG_CLOCK_HI               0x0054  /* RO */

/*
 * Connectors: as many as heads.  Connector c has the CONNECTOR, PREFERRED
 * and SUGGESTED_POS registers of head control window c, EDID window c, the
 * HOTPLUG interrupt bit of head c, and QEMU console c; it shows the head
 * whose active HS_CONNECTOR is c, if one is enabled.
 */
#define PVDC_REG_NUM_CONNECTORS         0x0058  /* RO */

/*
 * Formats: FORMAT_TABLE[i] is a DRM fourcc (0 past the end).  Each plane
 * type has a mask of the table entries it accepts.
 */
#define PVDC_REG_FORMAT_TABLE(i)        (0x0080 + (i) * 4)  /* RO */
#define PVDC_REG_FORMATS_PRIMARY        0x00c0  /* RO: mask over the table */
#define PVDC_REG_FORMATS_OVERLAY        0x00c4  /* RO */
#define PVDC_REG_FORMATS_CURSOR         0x00c8  /* RO */
/* RO: the formats HS_WB_FORMAT takes */
#define PVDC_REG_FORMATS_WRITEBACK      0x00cc

/*
 * Guest memory.  The device address space is [0, 2^32): VRAM occupies
 * [0, VRAM_SIZE); above it the guest binds ranges of its own pages, read
 * by DMA through the device's PCI address space.  BIND_CMD executes a
 * command on [BIND_ADDR, BIND_ADDR + BIND_SIZE) inside the write and
 * leaves its outcome in BIND_STATUS.  The table of a BIND is an array of
 * BIND_ENTRIES entries of PVDC_BIND_ENTRY_SIZE bytes, read once, by the
 * command: a little-endian u64 DMA address and a u64 length, both
 * multiples of PVDC_BIND_PAGE_SIZE, the lengths adding up to BIND_SIZE.
 */
#define PVDC_REG_BIND_ADDR              0x0100  /* RW: device address */
#define PVDC_REG_BIND_SIZE              0x0104  /* RW: bytes */
#define PVDC_REG_BIND_TABLE_LO          0x0108  /* RW: DMA address */
#define PVDC_REG_BIND_TABLE_HI          0x010c  /* RW */
#define PVDC_REG_BIND_ENTRIES           0x0110  /* RW: entries in the table */
#define PVDC_REG_BIND_CMD               0x0114  /* W: PVDC_BIND_CMD_* */
#define PVDC_BIND_CMD_BIND              1
#define PVDC_BIND_CMD_UNBIND            2
#define PVDC_REG_BIND_STATUS            0x0118  /* RO: of the last command */
#define PVDC_BIND_OK                    0x00
/* address or size misaligned or zero, below VRAM_SIZE or past BIND_SPACE */
#define PVDC_BIND_ERR_RANGE             0x01
#define PVDC_BIND_ERR_OVERLAP           0x02    /* overlaps a binding */
/* table misaligned or of 0 or too many entries; an entry is not valid */
#define PVDC_BIND_ERR_TABLE             0x03
/* the table or an entry is not guest RAM the device may reach */
#define PVDC_BIND_ERR_DMA               0x04
/* PVDC_MAX_BINDINGS or PVDC_MAX_BIND_ENTRIES, all bindings, reached */
#define PVDC_BIND_ERR_NOSPC             0x05
#define PVDC_BIND_ERR_NOT_BOUND         0x06    /* UNBIND: not one binding */
/* a byte of the range is read by the active state or an armed commit */
#define PVDC_BIND_ERR_BUSY              0x07
#define PVDC_REG_NUM_BINDINGS           0x011c  /* RO: PVDC_MAX_BINDINGS */
/*
 * RO: bytes of device address space above VRAM that bindings may use,
 * [VRAM_SIZE, VRAM_SIZE + BIND_SPACE): 2^32 - VRAM_SIZE unless a test
 * made it smaller
 */
#define PVDC_REG_BIND_SPACE             0x0128
#define PVDC_BIND_PAGE_SIZE             4096
#define PVDC_BIND_ENTRY_SIZE            16
#define PVDC_BIND_TABLE_ALIGN           8
#define PVDC_MAX_BINDINGS               256
/* entries of one table, and of all bindings together */
#define PVDC_MAX_BIND_ENTRIES           (1u << 20)
/*
 * Guest RAM has no dirty log: writing DAMAGE_LEN tells the device that
 * the guest wrote [DAMAGE_ADDR, DAMAGE_ADDR + DAMAGE_LEN) of a binding.
 */
#define PVDC_REG_DAMAGE_ADDR            0x0120  /* RW: device address */
#define PVDC_REG_DAMAGE_LEN             0x0124  /* W: bytes, acts */

/* DRM fourccs, spelled out so that this header needs no drm_fourcc.h. */
#define PVDC_FOURCC(a, b, c, d) \
    ((unsigned int)(a) | ((unsigned int)(b) << 8) | \
     ((unsigned int)(c) << 16) | ((unsigned int)(d) << 24))
#define PVDC_FMT_XRGB8888               PVDC_FOURCC('X', 'R', '2', '4')
#define PVDC_FMT_ARGB8888               PVDC_FOURCC('A', 'R', '2', '4')
#define PVDC_FMT_XBGR8888               PVDC_FOURCC('X', 'B', '2', '4')
#define PVDC_FMT_ABGR8888               PVDC_FOURCC('A', 'B', '2', '4')
#define PVDC_FMT_RGB565                 PVDC_FOURCC('R', 'G', '1', '6')
#define PVDC_FMT_XRGB2101010            PVDC_FOURCC('X', 'R', '3', '0')
#define PVDC_FMT_YUYV                   PVDC_FOURCC('Y', 'U', 'Y', 'V')
/* Two memory planes: Y, then Cb:Cr at PS_CHROMA_OFFSET / PS_CHROMA_PITCH */
#define PVDC_FMT_NV12                   PVDC_FOURCC('N', 'V', '1', '2')
#define PVDC_FMT_P010                   PVDC_FOURCC('P', '0', '1', '0')

/* ------------------------------------------------------------------------ */
/* Plane capabilities: one read-only word per plane                         */
/* ------------------------------------------------------------------------ */

#define PVDC_REG_PLANE_CAPS(p)          (0x0400 + (p) * 4)
#define PVDC_PLANE_CAPS_TYPE_SHIFT      0
#define PVDC_PLANE_CAPS_TYPE_LENGTH     2
#define PVDC_PLANE_CAPS_TYPE_MASK \
    ((1u << PVDC_PLANE_CAPS_TYPE_LENGTH) - 1)
#define PVDC_PLANE_TYPE_PRIMARY         0
#define PVDC_PLANE_TYPE_OVERLAY         1
#define PVDC_PLANE_TYPE_CURSOR          2
#define PVDC_PLANE_CAPS_HEADS_SHIFT     8       /* mask of possible heads */
#define PVDC_PLANE_CAPS_HEADS_LENGTH    PVDC_MAX_HEADS
#define PVDC_PLANE_CAPS_HEADS_MASK \
    ((1u << PVDC_PLANE_CAPS_HEADS_LENGTH) - 1)
/* head it is bound to at reset */
#define PVDC_PLANE_CAPS_HOME_SHIFT      16
#define PVDC_PLANE_CAPS_HOME_LENGTH     8
#define PVDC_PLANE_CAPS_HOME_MASK \
    ((1u << PVDC_PLANE_CAPS_HOME_LENGTH) - 1)

/* ------------------------------------------------------------------------ */
/* Head control window: immediate registers, PVDC_HEAD_STRIDE per head       */
/* ------------------------------------------------------------------------ */

#define PVDC_HEAD_STRIDE                0x40
#define PVDC_HEAD_CONTROL_BASE          0x1000
#define PVDC_HEAD_CONTROL(h) \
    (PVDC_HEAD_CONTROL_BASE + (h) * PVDC_HEAD_STRIDE)

/* W: PVDC_DOORBELL_*; R: 1 while a commit is armed. */
#define PVDC_HEAD_DOORBELL              0x00
#define PVDC_DOORBELL_ARM               1       /* arm the shadow state */
/* Replace the armed state of a commit not latched yet, or arm. */
#define PVDC_DOORBELL_AMEND             2
/* RO: sequence of the last doorbell or amend */
#define PVDC_HEAD_ARMED_SEQ             0x04
#define PVDC_HEAD_DONE_SEQ              0x08    /* RO: of the last outcome */
#define PVDC_HEAD_RESULT                0x0c    /* RO: outcome of DONE_SEQ */
#define PVDC_RESULT_CODE_SHIFT          0
#define PVDC_RESULT_CODE_LENGTH         8
#define PVDC_RESULT_CODE_MASK           ((1u << PVDC_RESULT_CODE_LENGTH) - 1)
#define PVDC_RESULT_PLANE_SHIFT         8       /* plane that broke the rule */
#define PVDC_RESULT_PLANE_LENGTH        8
#define PVDC_RESULT_PLANE_MASK          ((1u << PVDC_RESULT_PLANE_LENGTH) - 1)
/* the rule is about the head */
#define PVDC_RESULT_PLANE_NONE          PVDC_RESULT_PLANE_MASK
/* RO: vblanks since reset, modulo 2^32 */
#define PVDC_HEAD_VBLANK_COUNT          0x10
#define PVDC_HEAD_VBLANK_TIME_LO        0x14    /* RO: ns, QEMU_CLOCK_VIRTUAL */
#define PVDC_HEAD_VBLANK_TIME_HI        0x18    /* RO; reading LO latches HI */
/* RO: PVDC_CONNECTOR_*, of connector h */
#define PVDC_HEAD_CONNECTOR             0x1c
#define PVDC_CONNECTOR_CONNECTED_SHIFT  0
#define PVDC_CONNECTOR_CONNECTED        (1u << PVDC_CONNECTOR_CONNECTED_SHIFT)
#define PVDC_HEAD_PREFERRED             0x20    /* RO: PVDC_XY(width, height) */
#define PVDC_HEAD_SUGGESTED_POS         0x24    /* RO: PVDC_XY(x, y) */
#define PVDC_HEAD_CRC_CTRL              0x28    /* RW: PVDC_CRC_CTRL_* */
#define PVDC_CRC_CTRL_ENABLE_SHIFT      0
#define PVDC_CRC_CTRL_ENABLE            (1u << PVDC_CRC_CTRL_ENABLE_SHIFT)
/* RO: CRC32 of the current frame, captured by this read if not yet */
#define PVDC_HEAD_CRC_VALUE             0x2c
#define PVDC_HEAD_CRC_FRAME             0x30    /* RO: its VBLANK_COUNT */
/*
 * CRC capture, all heads together, composes at most this many pixels per
 * second of QEMU_CLOCK_VIRTUAL (a head's capture costs its active width *
 * height * (1 + its enabled planes)), with bursts of an eighth of it.
 */
#define PVDC_CRC_PIXELS_PER_SECOND      (1u << 28)
/*
 * A capture that first applies a colour pipeline with a CTM also pays for
 * deriving its output tables: each evaluation of the GAMMA_LUT counts as
 * this many pixels.
 */
#define PVDC_CRC_PIXELS_PER_LUT_EVALUATION 16
#define PVDC_HEAD_STATUS                0x34    /* RW1C: PVDC_HEAD_STATUS_* */
#define PVDC_HEAD_STATUS_DOORBELL_OVERRUN_SHIFT 0
#define PVDC_HEAD_STATUS_DOORBELL_OVERRUN \
    (1u << PVDC_HEAD_STATUS_DOORBELL_OVERRUN_SHIFT)
#define PVDC_HEAD_FRAME_PERIOD          0x38    /* RO: ns, of the active mode */
/* RO: low half of the VBLANK_COUNT at the latch point of DONE_SEQ */
#define PVDC_HEAD_DONE_FRAME            0x3c

/* Commit outcome codes (PVDC_HEAD_RESULT bits 0..7). */
#define PVDC_RESULT_NONE                0x00    /* no commit completed yet */
#define PVDC_RESULT_APPLIED             0x01
#define PVDC_ERR_MODE                   0x10    /* invalid timings */
#define PVDC_ERR_MODESET_REQUIRED       0x11    /* timings changed, head on */
#define PVDC_ERR_BANDWIDTH_ALLOC        0x12    /* over the device total */
#define PVDC_ERR_BANDWIDTH_CHANGE       0x13    /* allocation changed, on */
#define PVDC_ERR_BANDWIDTH              0x14    /* planes need more */
#define PVDC_ERR_HEAD_DISABLED          0x15    /* plane on a disabled head */
#define PVDC_ERR_HEAD_RESERVED          0x16    /* reserved HS_CTRL bits */
/* a LUT size outside 2..LUT_SIZE, a LUT or the CTM misaligned or past VRAM */
#define PVDC_ERR_COLOR                  0x17
/* writeback on a disabled head, format not taken, pitch, alignment, VRAM */
#define PVDC_ERR_WRITEBACK              0x18
/* HS_CONNECTOR past NUM_CONNECTORS, or driven by another enabled head */
#define PVDC_ERR_CONNECTOR              0x19
#define PVDC_ERR_PLANE_HEAD             0x20    /* not for that head */
#define PVDC_ERR_PLANE_BUSY             0x21    /* shown outside the group */
#define PVDC_ERR_FORMAT                 0x22    /* format not accepted */
#define PVDC_ERR_FB_SIZE                0x23    /* zero or too large */
/* too small, misaligned, or times the height past PVDC_FB_SPAN_MAX */
#define PVDC_ERR_PITCH                  0x24
#define PVDC_ERR_OFFSET_ALIGN           0x25    /* offset misaligned */
#define PVDC_ERR_FB_BOUNDS              0x26    /* framebuffer outside VRAM */
#define PVDC_ERR_SRC_RECT               0x27    /* empty or outside the fb */
#define PVDC_ERR_DST_RECT               0x28    /* empty or out of range */
#define PVDC_ERR_SCALE_RATIO            0x29    /* beyond the limits */
#define PVDC_ERR_SCALERS                0x2a    /* more than NUM_SCALERS */
#define PVDC_ERR_CURSOR                 0x2b    /* too large or scaled */
#define PVDC_ERR_ZPOS                   0x2c    /* out of range or taken */
#define PVDC_ERR_PLANE_CTRL             0x2d    /* invalid PS_CTRL bits */
/* Cb:Cr plane misaligned, its pitch too small or too long, outside VRAM */
#define PVDC_ERR_CHROMA                 0x2e
#define PVDC_ERR_GROUP                  0x30    /* another member failed */

/* ------------------------------------------------------------------------ */
/* Head state: shadow (RW) and active (RO) windows, same layout             */
/* ------------------------------------------------------------------------ */

#define PVDC_HEAD_SHADOW_BASE           0x2000
#define PVDC_HEAD_ACTIVE_BASE           0x3000
#define PVDC_HEAD_SHADOW(h) \
    (PVDC_HEAD_SHADOW_BASE + (h) * PVDC_HEAD_STRIDE)
#define PVDC_HEAD_ACTIVE(h) \
    (PVDC_HEAD_ACTIVE_BASE + (h) * PVDC_HEAD_STRIDE)

#define PVDC_HS_CTRL                    0x00
#define PVDC_HS_CTRL_ENABLE_SHIFT       0
#define PVDC_HS_CTRL_ENABLE             (1u << PVDC_HS_CTRL_ENABLE_SHIFT)
/*
 * The colour pipeline, applied after blending in this order; a stage whose
 * bit is clear passes values through and its registers are ignored.
 */
#define PVDC_HS_CTRL_DEGAMMA_SHIFT      1
#define PVDC_HS_CTRL_DEGAMMA            (1u << PVDC_HS_CTRL_DEGAMMA_SHIFT)
#define PVDC_HS_CTRL_CTM_SHIFT          2
#define PVDC_HS_CTRL_CTM                (1u << PVDC_HS_CTRL_CTM_SHIFT)
#define PVDC_HS_CTRL_GAMMA_SHIFT        3
#define PVDC_HS_CTRL_GAMMA              (1u << PVDC_HS_CTRL_GAMMA_SHIFT)
/*
 * Writeback: the latch that applies this state also writes the frame the
 * head then shows (after the colour pipeline, hactive x vactive pixels)
 * once into VRAM at HS_WB_OFFSET, before DONE_SEQ and COMMIT_DONE tell the
 * commit applied.  Not kept: the next commit writes only if it sets it too.
 */
#define PVDC_HS_CTRL_WRITEBACK_SHIFT    4
#define PVDC_HS_CTRL_WRITEBACK          (1u << PVDC_HS_CTRL_WRITEBACK_SHIFT)
#define PVDC_HS_CTRL_VALID_MASK \
    (PVDC_HS_CTRL_ENABLE | PVDC_HS_CTRL_DEGAMMA | PVDC_HS_CTRL_CTM | \
     PVDC_HS_CTRL_GAMMA | PVDC_HS_CTRL_WRITEBACK)
#define PVDC_HS_HTIMING                 0x04    /* PVDC_XY(hactive, htotal) */
/* PVDC_XY(hsync_start, hsync_end) */
#define PVDC_HS_HSYNC                   0x08
#define PVDC_HS_VTIMING                 0x0c    /* PVDC_XY(vactive, vtotal) */
/* PVDC_XY(vsync_start, vsync_end) */
#define PVDC_HS_VSYNC                   0x10
/* kHz, 1..PVDC_MAX_PIXEL_CLOCK_KHZ */
#define PVDC_HS_PIXEL_CLOCK             0x14
#define PVDC_MAX_PIXEL_CLOCK_KHZ        2000000
/*
 * Shortest frame a mode may have (10 kHz refresh): a vblank every few
 * nanoseconds would keep the device's timer firing without end.  It is
 * also the shortest interval between two runs of the device's timer, all
 * heads together.
 */
#define PVDC_MIN_FRAME_PERIOD_NS        100000
#define PVDC_HS_BANDWIDTH               0x18    /* allocation, KiB per frame */
#define PVDC_HS_BACKGROUND              0x1c    /* XRGB8888 */
/*
 * VRAM offsets of the tables (an array of struct drm_color_lut) and of the
 * matrix (struct drm_color_ctm), little-endian, PVDC_COLOR_ALIGN-aligned.
 * The device copies them when the commit is armed: VRAM written after the
 * doorbell does not change the commit.
 */
#define PVDC_HS_DEGAMMA_LUT             0x20
#define PVDC_HS_CTM                     0x24
#define PVDC_HS_GAMMA_LUT               0x28
#define PVDC_HS_LUT_SIZES               0x2c    /* PVDC_XY(degamma, gamma) */
/* Writeback target, used while HS_CTRL WRITEBACK is set: like PS_FB_* */
#define PVDC_HS_WB_FORMAT               0x30    /* DRM fourcc */
#define PVDC_HS_WB_OFFSET               0x34    /* bytes into VRAM */
#define PVDC_HS_WB_PITCH                0x38    /* bytes per line */
/*
 * The connector an enabled head drives, 0..NUM_CONNECTORS-1, h at reset.
 * Like the timings, it changes only while the head is off or turned on.
 */
#define PVDC_HS_CONNECTOR               0x3c
#define PVDC_HEAD_STATE_REGS            16
#define PVDC_COLOR_ALIGN                8
#define PVDC_LUT_ENTRY_SIZE             8       /* struct drm_color_lut */
#define PVDC_CTM_SIZE                   72      /* struct drm_color_ctm */

/* ------------------------------------------------------------------------ */
/* Plane state: shadow (RW) and active (RO) windows, same layout            */
/* ------------------------------------------------------------------------ */

#define PVDC_PLANE_STRIDE               0x80
#define PVDC_PLANE_SHADOW_BASE          0x4000
#define PVDC_PLANE_ACTIVE_BASE          0x7000
#define PVDC_PLANE_SHADOW(p) \
    (PVDC_PLANE_SHADOW_BASE + (p) * PVDC_PLANE_STRIDE)
#define PVDC_PLANE_ACTIVE(p) \
    (PVDC_PLANE_ACTIVE_BASE + (p) * PVDC_PLANE_STRIDE)

#define PVDC_PS_CTRL                    0x00
#define PVDC_PS_CTRL_ENABLE_SHIFT       0
#define PVDC_PS_CTRL_ENABLE             (1u << PVDC_PS_CTRL_ENABLE_SHIFT)
#define PVDC_PS_CTRL_ROTATE_180_SHIFT   4
#define PVDC_PS_CTRL_ROTATE_180         (1u << PVDC_PS_CTRL_ROTATE_180_SHIFT)
#define PVDC_PS_CTRL_REFLECT_X_SHIFT    5
#define PVDC_PS_CTRL_REFLECT_X          (1u << PVDC_PS_CTRL_REFLECT_X_SHIFT)
#define PVDC_PS_CTRL_REFLECT_Y_SHIFT    6
#define PVDC_PS_CTRL_REFLECT_Y          (1u << PVDC_PS_CTRL_REFLECT_Y_SHIFT)
#define PVDC_PS_CTRL_BLEND_SHIFT        8
#define PVDC_PS_CTRL_BLEND_LENGTH       2
#define PVDC_PS_CTRL_BLEND_MASK         ((1u << PVDC_PS_CTRL_BLEND_LENGTH) - 1)
#define PVDC_BLEND_NONE                 0
#define PVDC_BLEND_PREMULTI             1
#define PVDC_BLEND_COVERAGE             2
#define PVDC_PS_CTRL_FILTER_BILINEAR_SHIFT 12
#define PVDC_PS_CTRL_FILTER_BILINEAR \
    (1u << PVDC_PS_CTRL_FILTER_BILINEAR_SHIFT)
/* YCbCr formats: the values of enum drm_color_encoding / drm_color_range */
#define PVDC_PS_CTRL_COLOR_ENCODING_SHIFT 16
#define PVDC_PS_CTRL_COLOR_ENCODING_LENGTH 2
#define PVDC_PS_CTRL_COLOR_ENCODING_MASK \
    ((1u << PVDC_PS_CTRL_COLOR_ENCODING_LENGTH) - 1)
#define PVDC_COLOR_BT601                0
#define PVDC_COLOR_BT709                1
#define PVDC_COLOR_BT2020               2
#define PVDC_PS_CTRL_COLOR_RANGE_FULL_SHIFT 18
#define PVDC_PS_CTRL_COLOR_RANGE_FULL \
    (1u << PVDC_PS_CTRL_COLOR_RANGE_FULL_SHIFT)
#define PVDC_PS_CTRL_VALID_MASK \
    (PVDC_PS_CTRL_ENABLE | PVDC_PS_CTRL_ROTATE_180 | \
     PVDC_PS_CTRL_REFLECT_X | PVDC_PS_CTRL_REFLECT_Y | \
     PVDC_PS_CTRL_BLEND_MASK << PVDC_PS_CTRL_BLEND_SHIFT | \
     PVDC_PS_CTRL_FILTER_BILINEAR | \
     PVDC_PS_CTRL_COLOR_ENCODING_MASK << PVDC_PS_CTRL_COLOR_ENCODING_SHIFT | \
     PVDC_PS_CTRL_COLOR_RANGE_FULL)
#define PVDC_PS_HEAD                    0x04    /* head the plane is bound to */
#define PVDC_PS_FORMAT                  0x08    /* DRM fourcc */
#define PVDC_PS_FB_OFFSET               0x0c    /* bytes into VRAM */
#define PVDC_PS_FB_PITCH                0x10    /* bytes per line */
/*
 * A pitch times the lines of its plane (PS_FB_PITCH, PS_CHROMA_PITCH,
 * HS_WB_PITCH) is at most this many bytes: line addresses are signed
 * 32-bit offsets from the first line.
 */
#define PVDC_FB_SPAN_MAX                0x7fffffffu
/* PVDC_XY(width, height), pixels */
#define PVDC_PS_FB_SIZE                 0x14
/* 16.16 fixed point, in the fb */
#define PVDC_PS_SRC_X                   0x18
#define PVDC_PS_SRC_Y                   0x1c
#define PVDC_PS_SRC_W                   0x20
#define PVDC_PS_SRC_H                   0x24
/* PVDC_XY(x, y), signed 16-bit each */
#define PVDC_PS_DST_POS                 0x28
#define PVDC_PS_DST_SIZE                0x2c    /* PVDC_XY(width, height) */
/* 0 = bottom; unique per head */
#define PVDC_PS_ZPOS                    0x30
#define PVDC_PS_ALPHA                   0x34    /* 0..0xffff, 0xffff = opaque */
#define PVDC_PS_HOTSPOT                 0x38    /* cursor: PVDC_XY(x, y) */
/* NV12, P010: the Cb:Cr plane, like FB_OFFSET and FB_PITCH; else unused */
#define PVDC_PS_CHROMA_OFFSET           0x3c
#define PVDC_PS_CHROMA_PITCH            0x40
#define PVDC_PLANE_STATE_REGS           17

/* ------------------------------------------------------------------------ */
/* EDID window                                                              */
/* ------------------------------------------------------------------------ */

#define PVDC_EDID_BASE                  0xa000
/*
 * A base block and up to two extensions, as QEMU generates them: a
 * CTA-861 one, and a DisplayID one for a preferred mode 4096 pixels wide
 * or more or whose pixel clock is 655.36 MHz or more.  Past the blocks
 * the EDID's extension count names, the window reads as zeros.
 */
#define PVDC_EDID_SIZE                  0x180
#define PVDC_EDID(h)                    (PVDC_EDID_BASE + (h) * PVDC_EDID_SIZE)

/* Two 16-bit fields packed in one register: x (low) and y (high). */
#define PVDC_XY_X_SHIFT                 0
#define PVDC_XY_Y_SHIFT                 16
#define PVDC_XY_LENGTH                  16
#define PVDC_XY_MASK                    ((1u << PVDC_XY_LENGTH) - 1)
#define PVDC_XY(x, y) \
    (((unsigned int)(x) & PVDC_XY_MASK) << PVDC_XY_X_SHIFT | \
     ((unsigned int)(y) & PVDC_XY_MASK) << PVDC_XY_Y_SHIFT)
#define PVDC_X(v) \
    (((v) >> PVDC_XY_X_SHIFT) & PVDC_XY_MASK)
#define PVDC_Y(v) \
    (((v) >> PVDC_XY_Y_SHIFT) & PVDC_XY_MASK)

#endif /* HW_DISPLAY_PVDC_REGS_H */
