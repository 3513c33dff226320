/*
 * The pvdc memory qtest library (pvdc-qtest-memory.c), linked into the
 * qtests of guest memory bound into the device address space above VRAM
 * (BIND_*): a machine with guest pages from libqos' allocator, allocated
 * one at a time so that no two are contiguous, BIND tables built in guest
 * RAM, and the BIND and UNBIND sequences that bind them.  Its names start
 * with pvdc_ (PVDC for types).
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TESTS_QTEST_PVDC_QTEST_MEMORY_H
#define TESTS_QTEST_PVDC_QTEST_MEMORY_H

#include "libqos/libqos-malloc.h"
#include "libqos/malloc-pc.h"
#include "pvdc-qtest.h"

/*
 * Every machine: pvdc with MEM_PROPS (16 MiB of VRAM, the rest of the 4 GiB
 * device address space for bindings) and MEM_EXTRA's guest RAM.
 */
#define PAGE                PVDC_BIND_PAGE_SIZE
#define RAM_SIZE            (128 * MiB)
#define MEM_PROPS           "vram-size=16M"
#define MEM_EXTRA           "-m 128M"
/*
 * Guest RAM in a memfd the host can map again: bindings get a contiguous
 * host view of their pages.
 */
#define MEM_EXTRA_MEMFD     "-m 128M -object memory-backend-memfd,id=ram," \
                            "size=128M -machine memory-backend=ram"
/* pages of the scattered buffer */
#define BUF_PAGES           16

typedef struct PVDCMem {
    PVDCTest t;
    QGuestAllocator alloc;
    uint64_t table;             /* room for TABLE_ROOM entries */
    uint64_t pages[BUF_PAGES];  /* allocated in this order */
    uint32_t base;              /* the first device address above VRAM */
} PVDCMem;

/* Entries the BIND table at PVDCMem.table has room for. */
#define TABLE_ROOM          256

/* What head 0 shows where no plane covers it. */
#define MEM_BACKGROUND      0x336699

/* pvdc with @props, the machine with @extra on its command line. */
void pvdc_mem_start_props(PVDCMem *m, const char *props, const char *extra);

/*
 * The machine with @extra (MEM_EXTRA or MEM_EXTRA_MEMFD) on its command
 * line.
 */
void pvdc_mem_start_with(PVDCMem *m, const char *extra);

/* The machine with MEM_EXTRA on its command line. */
void pvdc_mem_start(PVDCMem *m);

/* Free the allocator and quit the machine. */
void pvdc_mem_stop(PVDCMem *m);

/* How many bindings the device holds (x-bindings). */
uint32_t pvdc_mem_bindings(PVDCMem *m);

/* Bind the scattered buffer, its pages in reverse order, at @addr. */
uint32_t pvdc_mem_bind_scattered(PVDCMem *m, uint32_t addr);

/* Bind @size bytes at @addr to one entry: @entry_addr, @entry_len. */
uint32_t pvdc_mem_bind_one(PVDCMem *m, uint32_t addr, uint32_t size,
                           uint64_t entry_addr, uint64_t entry_len);

/* Turn bus mastering (PCI_COMMAND_MASTER) of the device on or off. */
void pvdc_set_bus_master(PVDCTest *t, bool on);

/* The guest page holding byte @rel of the buffer of pages @first.. */
uint64_t pvdc_mem_page_of(PVDCMem *m, int first, int n, uint32_t rel);

/* Bind the @n pages from @first, in reverse order, at @addr. */
uint32_t pvdc_mem_bind_pages(PVDCMem *m, uint32_t addr, int first, int n);

/* The guest wrote [@addr, @addr + @len) of the device address space. */
void pvdc_damage(PVDCTest *t, uint32_t addr, uint32_t len);

/* The CRC of head 0's current frame. */
uint32_t pvdc_crc_now(PVDCTest *t);

/* The CRC of a frame of the background alone. */
uint32_t pvdc_mem_background_crc(void);

/*
 * Console 0 shows @fb, a framebuffer of the test mode in XRGB8888 lines
 * of MODE_PITCH bytes.
 */
void pvdc_mem_assert_shows(PVDCTest *t, const uint8_t *fb);

/* Console 0 shows MEM_BACKGROUND alone. */
void pvdc_mem_assert_background(PVDCTest *t);

#endif /* TESTS_QTEST_PVDC_QTEST_MEMORY_H */
