/*
 * A reference model of pvdc's commits, written from docs/specs/pvdc.rst and
 * sharing no code with the device: registers are arrays indexed by offset
 * / 4, and the rules are checked in the documented order.  The randomised
 * test drives it next to the device; the migration tests check with it
 * that a loaded state passes the commit rules.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TESTS_QTEST_PVDC_MODEL_H
#define TESTS_QTEST_PVDC_MODEL_H

#include "pvdc-qtest.h"

#define HS(reg)     ((reg) / 4)
#define PS(reg)     ((reg) / 4)

/* A range of the device address space bound to guest pages. */
typedef struct ModelBinding {
    uint32_t addr, size, entries;
} ModelBinding;

typedef struct Model {
    /* what the capability registers say */
    unsigned int heads, overlays, planes, scalers;
    uint32_t max_w, max_h, bandwidth_total;
    uint32_t pitch_align, offset_align, cursor_max;
    uint32_t max_down, max_up;
    uint32_t lut_size;          /* LUT_SIZE: PVDC_XY(degamma, gamma) */
    uint64_t vram;
    uint32_t fmt_table[PVDC_MAX_FORMATS];
    uint32_t fmt_mask[3];
    uint32_t wb_mask;           /* FORMATS_WRITEBACK */

    /* shadow, active and armed state */
    uint32_t hs[PVDC_MAX_HEADS][PVDC_HEAD_STATE_REGS];
    uint32_t ha[PVDC_MAX_HEADS][PVDC_HEAD_STATE_REGS];
    uint32_t harm[PVDC_MAX_HEADS][PVDC_HEAD_STATE_REGS];
    uint32_t ps[PVDC_MAX_PLANES][PVDC_PLANE_STATE_REGS];
    uint32_t pa[PVDC_MAX_PLANES][PVDC_PLANE_STATE_REGS];
    bool carried[PVDC_MAX_HEADS][PVDC_MAX_PLANES];
    uint32_t parm[PVDC_MAX_HEADS][PVDC_MAX_PLANES][PVDC_PLANE_STATE_REGS];
    uint32_t armed;
    uint32_t group[PVDC_MAX_HEADS];
    uint32_t seq[PVDC_MAX_HEADS];

    /*
     * Time as the test keeps it (QEMU_CLOCK_VIRTUAL at each write), each
     * enabled head's timeline (vblank n at t0 + n * period; t0 -1: not
     * known) and each armed commit's latch point (-1: not known).
     */
    int64_t now;
    int64_t t0[PVDC_MAX_HEADS];
    uint64_t period[PVDC_MAX_HEADS];
    int64_t latch[PVDC_MAX_HEADS];

    /* the bindings, in no order, and the BIND_* registers */
    ModelBinding bindings[PVDC_MAX_BINDINGS];
    unsigned int num_bindings;
    uint64_t bound_entries;
    uint32_t bind_addr, bind_size, bind_entries, bind_status;
    uint32_t bind_table_lo, bind_table_hi;
    /* the table the test last wrote (model_bind_table()) */
    uint64_t table_at;
    uint32_t table_n;
    uint64_t table[2 * 64];

    /* outcomes so far, and the armed commits amended */
    unsigned int applied, rejected, amended;
    /* heads enabled on a connector other than their own */
    unsigned int rerouted;
    unsigned int errors[PVDC_RESULT_CODE_MASK + 1];
    /* commits applied that show a plane in a binding */
    unsigned int applied_bound;
    /* BIND_STATUS outcomes of BIND and UNBIND commands */
    unsigned int bind_outcomes[2][PVDC_BIND_ERR_BUSY + 1];
} Model;

/* A model of the device @t drives, in its reset state. */
void model_init(Model *m, PVDCTest *t);

/* Mirror a register write in the model (the device decodes it itself). */
void model_write(Model *m, uint32_t addr, uint32_t val);

/*
 * The test wrote a BIND table of @n entries (@entries[2 * i]: address,
 * @entries[2 * i + 1]: length) into guest RAM at @at; the model reads
 * it from there when a BIND names it.  At most 64 entries.
 */
void model_bind_table(Model *m, uint64_t at, const uint64_t *entries,
                      uint32_t n);

/*
 * A commit of @group that writes back may latch later than its latch
 * point (the composition budget), never earlier.
 */
bool model_group_may_defer(Model *m, uint32_t group);

/* Latch the group @group in the model; @result gets each member's outcome. */
void model_latch(Model *m, uint32_t group, uint32_t result[PVDC_MAX_HEADS]);

/*
 * Check @active, a whole active state, against every commit rule as one
 * commit of all heads that changes nothing.  Returns 0, or the first error
 * (with its head in @failed).
 */
uint32_t model_check_active(Model *m, const PVDCSnapshot *active,
                            unsigned int *failed);

static inline bool model_on(const uint32_t *regs)
{
    return regs[0] & 1;
}

static inline int model_type(Model *m, unsigned int plane)
{
    unsigned int i = plane % (m->overlays + 2);

    return i == 0 ? PVDC_PLANE_TYPE_PRIMARY :
           i == m->overlays + 1 ? PVDC_PLANE_TYPE_CURSOR :
           PVDC_PLANE_TYPE_OVERLAY;
}

/* Bytes per pixel of the (Y) plane. */
static inline unsigned int model_cpp(uint32_t fourcc)
{
    return fourcc == PVDC_FMT_NV12 ? 1 :
           fourcc == PVDC_FMT_RGB565 || fourcc == PVDC_FMT_YUYV ||
           fourcc == PVDC_FMT_P010 ? 2 : 4;
}

/* Bytes per Cb:Cr sample (per 2x2 pixels) of two-plane formats, else 0. */
static inline unsigned int model_chroma_bps(uint32_t fourcc)
{
    return fourcc == PVDC_FMT_NV12 ? 2 : fourcc == PVDC_FMT_P010 ? 4 : 0;
}

#endif /* TESTS_QTEST_PVDC_MODEL_H */
