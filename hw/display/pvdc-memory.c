/*
 * pvdc: paravirtual display controller - guest memory.
 *
 * The device address space is [0, 2^32): VRAM at [0, VRAM_SIZE), and
 * above it, in the BIND_SPACE bytes up to 2^32 (fewer if a test's
 * x-bind-space says so), ranges of guest pages the guest binds with
 * BIND_CMD, a GART at buffer granularity.  A BIND reads the guest's table
 * of pages once, checks every entry and maps its pages (through the
 * device's PCI DMA address space, so that an IOMMU translates them and a
 * device without bus mastering reaches nothing); the mappings stay until
 * the UNBIND of the range, a reset or unrealize.  So a page flip, which
 * names a buffer by its device address like a VRAM offset, needs no DMA
 * set-up.
 * A plane's framebuffer (and Cb:Cr plane), a writeback target and a
 * colour table lie wholly in VRAM or wholly in one binding; composition
 * reads a binding's bytes through views (pvdc_memory_views()), a doorbell
 * copies colour tables out of it (pvdc_memory_load()) and writeback
 * writes into it (pvdc_memory_store()).  The latch contract holds because
 * a binding cannot change while an armed or active state reads or writes
 * it: BIND and UNBIND of such a range are refused (PVDC_BIND_ERR_BUSY).
 * Where guest RAM is a file the host shares (memory-backend-memfd), BIND
 * also maps a binding's pages once more at consecutive host addresses,
 * a host view through which it is read like contiguous memory: shown
 * straight from its pages, composed with no copy.
 * Guest RAM has no dirty log the consoles could use: the guest reports
 * what it writes into a binding with DAMAGE_ADDR and DAMAGE_LEN, and
 * writeback reports what it writes as the guest would.
 *
 * Nothing is read from or mapped out of anything but guest RAM: the
 * device's own BARs and any other MMIO are refused before the first
 * access (the DMA re-entrancy of CVE-2021-3750).  RAM may leave the
 * guest's memory map under a binding (a DIMM the guest ejects): the
 * mappings keep the host memory alive, as dma_memory_map() promises, but
 * the device marks the binding lost and reads and writes it no more;
 * only UNBIND (or a reset) releases it.
 *
 * Copyright (c) 2026 The pvdc authors
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */

#include "qemu/osdep.h"
#include "qemu/log.h"
#include "qapi/error.h"
#include "system/dma.h"
#include "exec/ramblock.h"
#include "hw/pci/pci.h"
#include "migration/vmstate.h"
#include "pvdc-compose.h"
#include "pvdc-internal.h"
#include "trace.h"

/*
 * Host mappings all the host views of a device may take together: each
 * run of a view is a mapping of its own (a VMA), of which the host allows
 * a process about 65530 (vm.max_map_count); a guest binding a million
 * scattered pages must not leave QEMU none.  16384 runs hold 64 MiB of
 * single scattered pages, the buffers of a few heads; bindings past that
 * are read through their runs.
 */
#define PVDC_MAX_VIEW_MAPPINGS  16384

/* One host mapping of a run of guest pages of a binding. */
typedef struct PVDCBindMap {
    void *host;
    dma_addr_t len;
    uint64_t off;               /* of a run: where it starts in the binding */
} PVDCBindMap;

/*
 * Where @addr of @as lies in the host, if it is writable guest RAM: not
 * MMIO, not ROM, not the device's own VRAM BAR; *@plen is cut to the
 * bytes from there on that are.  NULL if it is not (or none are).
 */
static uint8_t *pvdc_ram_host(PVDCState *s, AddressSpace *as, hwaddr addr,
                              hwaddr *plen)
{
    MemTxAttrs attrs = MEMTXATTRS_UNSPECIFIED;
    MemoryRegion *mr;
    hwaddr xlat;

    RCU_READ_LOCK_GUARD();
    mr = address_space_translate(as, addr, &xlat, plen, true, attrs);
    if (!memory_access_is_direct(mr, true, attrs) || mr == &s->vram ||
        !*plen) {
        return NULL;
    }
    return (uint8_t *)memory_region_get_ram_ptr(mr) + xlat;
}

/*
 * Map [@addr, @addr + @len) of @as, which must be guest RAM other than
 * the device's own, appending the mappings to @maps (a RAM region ends a
 * mapping: the range may take several).  False, with the mappings made
 * so far still in @maps, if a byte of it is not.
 */
static bool pvdc_dma_map(PVDCState *s, AddressSpace *as, uint64_t addr,
                         uint64_t len, GArray *maps)
{
    MemTxAttrs attrs = MEMTXATTRS_UNSPECIFIED;

    if (addr + len < addr) {
        return false;
    }
    /* Each pass maps at least one byte: bounded by @len. */
    while (len) {
        PVDCBindMap map;
        hwaddr plen = len;

        if (!pvdc_ram_host(s, as, addr, &plen)) {
            return false;
        }
        map.len = MIN(plen, len);
        map.host = dma_memory_map(as, addr, &map.len,
                                  DMA_DIRECTION_FROM_DEVICE, attrs);
        if (!map.host) {
            return false;
        }
        g_array_append_val(maps, map);
        if (!map.len) {
            return false;
        }
        addr += map.len;
        len -= map.len;
    }
    return true;
}

/*
 * Writeback marked what it wrote dirty when it wrote it
 * (pvdc_binding_rw()): an unmap marks nothing again.
 */
static void pvdc_dma_unmap(PVDCState *s, GArray *maps)
{
    AddressSpace *as = pci_device_iommu_address_space(PCI_DEVICE(s));
    unsigned int i;

    for (i = 0; i < maps->len; i++) {
        PVDCBindMap *map = &g_array_index(maps, PVDCBindMap, i);

        dma_memory_unmap(as, map->host, map->len, DMA_DIRECTION_FROM_DEVICE,
                         0);
    }
    g_array_set_size(maps, 0);
}

static void pvdc_binding_free(PVDCState *s, PVDCBinding *b)
{
    if (b->view) {
        munmap(b->view, b->size);
        s->view_mappings -= b->runs->len;
    }
    if (b->runs) {
        g_array_free(b->runs, true);
    }
    if (b->maps) {
        pvdc_dma_unmap(s, b->maps);
        g_array_free(b->maps, true);
    }
    g_free(b->entries);
    memset(b, 0, sizeof(*b));
}

/*
 * Whether mapping @b starts where mapping @a ends, in the same RAM block:
 * the bytes of both are one run of host memory, whose dirty bits are
 * those of one range of that block.
 */
static bool pvdc_host_contiguous(const PVDCBindMap *a, const PVDCBindMap *b)
{
    ram_addr_t off_a, off_b;
    MemoryRegion *mr_a, *mr_b;

    if ((uint8_t *)a->host + a->len != b->host) {
        return false;
    }
    mr_a = memory_region_from_host(a->host, &off_a);
    mr_b = memory_region_from_host(b->host, &off_b);
    return mr_a && mr_a == mr_b && off_a + a->len == off_b;
}

/*
 * The mappings of @b as runs of host memory: consecutive mappings that
 * are contiguous in the host (pages that are contiguous in guest RAM, as
 * hugepages give them, however many entries list them) become one, so
 * that a buffer in them is read straight from the host (the direct path
 * of the consoles, no bounce copy).  The mappings themselves stay as
 * made: each is unmapped as it was mapped.
 */
static void pvdc_binding_merge(PVDCBinding *b)
{
    unsigned int i;

    b->runs = g_array_new(false, false, sizeof(PVDCBindMap));
    for (i = 0; i < b->maps->len; i++) {
        PVDCBindMap *map = &g_array_index(b->maps, PVDCBindMap, i);
        PVDCBindMap *last = b->runs->len ?
            &g_array_index(b->runs, PVDCBindMap, b->runs->len - 1) : NULL;

        if (last && pvdc_host_contiguous(last, map)) {
            last->len += map->len;
        } else {
            PVDCBindMap run = *map;

            run.off = last ? last->off + last->len : 0;
            g_array_append_val(b->runs, run);
        }
    }
}

/*
 * The file and offset of the pages of @run, if they lie in a RAM block
 * that is a shared mapping of a file (memory-backend-memfd, or -file with
 * share=on) at offsets that file's pages allow; else -1.
 */
static int pvdc_run_file(const PVDCBindMap *run, uint64_t *file_offset)
{
    RAMBlock *rb;
    ram_addr_t off;

    /* The mapping holds a reference to the RAM block's region. */
    rb = qemu_ram_block_from_host(run->host, false, &off);
    /*
     * A run is one DMA mapping or several merged because their host
     * addresses follow each other; only the pages of the block itself
     * may be mapped from its file, lest the view reach past its end.
     */
    if (!rb || !qemu_ram_is_shared(rb) || qemu_ram_get_fd(rb) < 0 ||
        run->len > qemu_ram_get_used_length(rb) - off ||
        (rb->fd_offset + off) % qemu_ram_pagesize(rb) ||
        run->len % qemu_ram_pagesize(rb)) {
        return -1;
    }
    *file_offset = rb->fd_offset + off;
    return qemu_ram_get_fd(rb);
}

/*
 * A contiguous host view of the pages of @b, in the order its entries
 * list them, where every run lies in a file the guest's RAM is shared
 * with: host addresses reserved once, and each run's part of the file
 * mapped at the next of them, as udmabuf makes one buffer of such pages.
 * Reads from the binding then take the direct paths (a surface straight
 * from the pages, composition with no bounce copy) whatever the order of
 * its pages.  Made once per binding at BIND (or migration load) and
 * unmapped with its mappings.  The view is read-only: writeback writes
 * through the mappings, whose RAM blocks carry the dirty log.  Where
 * there is no such file, a mapping fails or the device has taken
 * PVDC_MAX_VIEW_MAPPINGS, no view (a trace event, not an error): the
 * runs serve as before.
 */
static void pvdc_binding_view(PVDCState *s, PVDCBinding *b)
{
    uint8_t *view;
    uint64_t pos = 0;
    unsigned int i;

    if (b->runs->len < 2) {
        return;                 /* contiguous in the host already */
    }
    if (b->runs->len > PVDC_MAX_VIEW_MAPPINGS - s->view_mappings) {
        trace_pvdc_memory_no_view_room(b->addr, b->size, b->runs->len,
                                       s->view_mappings);
        return;
    }
    view = mmap(NULL, b->size, PROT_NONE,
                MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (view == MAP_FAILED) {
        trace_pvdc_memory_no_view(b->addr, b->size, 0);
        return;
    }
    for (i = 0; i < b->runs->len; i++) {
        PVDCBindMap *run = &g_array_index(b->runs, PVDCBindMap, i);
        uint64_t file_offset;
        int fd = pvdc_run_file(run, &file_offset);

        if (fd < 0 ||
            mmap(view + pos, run->len, PROT_READ, MAP_SHARED | MAP_FIXED, fd,
                 file_offset) == MAP_FAILED) {
            munmap(view, b->size);
            trace_pvdc_memory_no_view(b->addr, b->size, i);
            return;
        }
        pos += run->len;
    }
    b->view = view;
    s->view_mappings += b->runs->len;
    trace_pvdc_memory_view(b->addr, b->size, b->runs->len);
}

/* Map the pages of @b's entries from @as; false, nothing mapped, if not. */
static bool pvdc_binding_map(PVDCState *s, AddressSpace *as, PVDCBinding *b)
{
    int32_t i;

    b->maps = g_array_new(false, false, sizeof(PVDCBindMap));
    for (i = 0; i < b->num_entries; i++) {
        if (!pvdc_dma_map(s, as, b->entries[i].addr, b->entries[i].len,
                          b->maps)) {
            pvdc_dma_unmap(s, b->maps);
            g_array_free(b->maps, true);
            b->maps = NULL;
            return false;
        }
    }
    pvdc_binding_merge(b);
    pvdc_binding_view(s, b);
    return true;
}

/*
 * The rules of BIND on a range, in the order BIND_STATUS reports them;
 * the number of entries and the DMA are checked by the callers.
 */
static uint32_t pvdc_bind_range_check(PVDCState *s, uint64_t addr,
                                      uint64_t size, uint32_t ignore)
{
    uint32_t i;

    if (!size || addr % PVDC_BIND_PAGE_SIZE || size % PVDC_BIND_PAGE_SIZE ||
        addr < s->conf.vram_size ||
        addr + size > s->conf.vram_size + s->conf.bind_space) {
        return PVDC_BIND_ERR_RANGE;
    }
    for (i = 0; i < s->num_bindings; i++) {
        PVDCBinding *b = &s->bindings[i];

        if (i != ignore && addr < (uint64_t)b->addr + b->size &&
            b->addr < addr + size) {
            return PVDC_BIND_ERR_OVERLAP;
        }
    }
    return PVDC_BIND_OK;
}

/* Each entry page-aligned and non-empty, their lengths adding to @size. */
static bool pvdc_bind_entries_valid(const PVDCBindEntry *e, uint32_t n,
                                    uint64_t size)
{
    uint64_t sum = 0;
    uint32_t i;

    for (i = 0; i < n; i++) {
        if (!e[i].len || e[i].addr % PVDC_BIND_PAGE_SIZE ||
            e[i].len % PVDC_BIND_PAGE_SIZE || e[i].len > size - sum) {
            return false;
        }
        sum += e[i].len;
    }
    return sum == size;
}

/*
 * Copy the table of @n entries at @table into @e, read once: DMA from
 * RAM only, through the bus-master address space.
 */
static bool pvdc_bind_read_table(PVDCState *s, uint64_t table, uint32_t n,
                                 PVDCBindEntry *e)
{
    AddressSpace *as = pci_get_address_space(PCI_DEVICE(s));
    g_autoptr(GArray) maps = g_array_new(false, false, sizeof(PVDCBindMap));
    uint64_t len = (uint64_t)n * PVDC_BIND_ENTRY_SIZE;
    g_autofree uint8_t *raw = g_malloc(len);
    uint64_t done = 0;
    bool ok;
    uint32_t i;

    ok = pvdc_dma_map(s, as, table, len, maps);
    for (i = 0; ok && i < maps->len; i++) {
        PVDCBindMap *map = &g_array_index(maps, PVDCBindMap, i);

        memcpy(raw + done, map->host, map->len);
        done += map->len;
    }
    pvdc_dma_unmap(s, maps);
    if (!ok) {
        return false;
    }
    for (i = 0; i < n; i++) {
        e[i].addr = ldq_le_p(raw + (uint64_t)i * PVDC_BIND_ENTRY_SIZE);
        e[i].len = ldq_le_p(raw + (uint64_t)i * PVDC_BIND_ENTRY_SIZE + 8);
    }
    return true;
}

/*
 * The device address ranges plane state @r reads, [@start[i], @end[i])
 * per memory plane, as the commit rules bound them; 0 if it reads none
 * (disabled, or a format or size no commit accepts).
 */
static unsigned int pvdc_plane_ranges(const PVDCPlaneRegs *r,
                                      uint64_t start[2], uint64_t end[2])
{
    const PVDCComposeFormat *fmt = pvdc_compose_format(r->regs[R_PS_FORMAT]);
    uint64_t w = FIELD_EX32(r->regs[R_PS_FB_SIZE], XY, X);
    uint64_t h = FIELD_EX32(r->regs[R_PS_FB_SIZE], XY, Y);

    if (!pvdc_plane_on(r) || !fmt || !w || !h) {
        return 0;
    }
    start[0] = r->regs[R_PS_FB_OFFSET];
    end[0] = start[0] + (uint64_t)r->regs[R_PS_FB_PITCH] * (h - 1) +
             w * fmt->cpp;
    if (!fmt->chroma_cpp) {
        return 1;
    }
    start[1] = r->regs[R_PS_CHROMA_OFFSET];
    end[1] = start[1] +
             (uint64_t)r->regs[R_PS_CHROMA_PITCH] * (DIV_ROUND_UP(h, 2) - 1) +
             DIV_ROUND_UP(w, 2) * fmt->chroma_cpp;
    return 2;
}

static bool pvdc_plane_reads(const PVDCPlaneRegs *r, uint64_t addr,
                             uint64_t size)
{
    uint64_t start[2], end[2];
    unsigned int i, n = pvdc_plane_ranges(r, start, end);

    for (i = 0; i < n; i++) {
        if (start[i] < addr + size && addr < end[i]) {
            return true;
        }
    }
    return false;
}

static bool pvdc_span_meets(uint64_t start, uint64_t len, uint64_t addr,
                            uint64_t size)
{
    return start < addr + size && addr < start + len;
}

/*
 * Whether head state @r reads or writes a byte of [@addr, @addr + @size)
 * outside its planes: its writeback target, as the commit rules bound it
 * (a format no commit accepts writes nothing), and the colour tables of
 * the stages it enables (copied at the doorbell, but the state must stay
 * what the commit rules accept, migration checks it again).
 */
static bool pvdc_head_uses(const PVDCHeadRegs *r, uint64_t addr,
                           uint64_t size)
{
    const PVDCComposeFormat *fmt = pvdc_compose_format(r->regs[R_HS_WB_FORMAT]);
    uint64_t w = FIELD_EX32(r->regs[R_HS_HTIMING], XY, X);
    uint64_t h = FIELD_EX32(r->regs[R_HS_VTIMING], XY, X);

    if (!FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, ENABLE)) {
        return false;
    }
    if (FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, WRITEBACK) && fmt && w && h &&
        pvdc_span_meets(r->regs[R_HS_WB_OFFSET],
                        (uint64_t)r->regs[R_HS_WB_PITCH] * (h - 1) +
                        w * fmt->cpp,
                        addr, size)) {
        return true;
    }
    return (FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, DEGAMMA) &&
            pvdc_span_meets(r->regs[R_HS_DEGAMMA_LUT],
                            (uint64_t)FIELD_EX32(r->regs[R_HS_LUT_SIZES],
                                                 XY, X) *
                            PVDC_LUT_ENTRY_SIZE, addr, size)) ||
           (FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, CTM) &&
            pvdc_span_meets(r->regs[R_HS_CTM], PVDC_CTM_SIZE, addr, size)) ||
           (FIELD_EX32(r->regs[R_HS_CTRL], HS_CTRL, GAMMA) &&
            pvdc_span_meets(r->regs[R_HS_GAMMA_LUT],
                            (uint64_t)FIELD_EX32(r->regs[R_HS_LUT_SIZES],
                                                 XY, Y) *
                            PVDC_LUT_ENTRY_SIZE, addr, size));
}

/*
 * Whether a byte of [@addr, @addr + @size) is read by an enabled plane
 * of the active state or of an armed commit (whose content is only
 * checked at its latch point: it may name a range not bound yet), or
 * used by their heads' writeback targets and colour tables.
 */
static bool pvdc_memory_in_use(PVDCState *s, uint64_t addr, uint64_t size)
{
    unsigned int h, p;

    for (p = 0; p < s->num_planes; p++) {
        if (pvdc_plane_reads(&s->planes[p].active, addr, size)) {
            return true;
        }
    }
    for (h = 0; h < s->conf.num_heads; h++) {
        PVDCHead *head = &s->heads[h];

        if (pvdc_head_uses(&head->active, addr, size) ||
            (head->is_armed && pvdc_head_uses(&head->armed, addr, size))) {
            return true;
        }
        for (p = 0; head->is_armed && p < s->num_planes; p++) {
            if (head->plane_armed[p] &&
                pvdc_plane_reads(&head->armed_planes[p], addr, size)) {
                return true;
            }
        }
    }
    return false;
}

/* The binding holding all of [@addr, @addr + @len), or NULL. */
static PVDCBinding *pvdc_binding_find(PVDCState *s, uint64_t addr,
                                      uint64_t len)
{
    uint32_t i;

    for (i = 0; i < s->num_bindings; i++) {
        PVDCBinding *b = &s->bindings[i];

        if (addr >= b->addr && addr - b->addr <= b->size &&
            len <= b->size - (addr - b->addr)) {
            return b;
        }
    }
    return NULL;
}

bool pvdc_memory_bound(PVDCState *s, uint64_t addr, uint64_t len)
{
    return pvdc_binding_find(s, addr, len) != NULL;
}

bool pvdc_memory_reachable(PVDCState *s)
{
    return pci_get_word(PCI_DEVICE(s)->config + PCI_COMMAND) &
           PCI_COMMAND_MASTER;
}

/*
 * The binding holding [@addr, @addr + @len) if the device may read or
 * write its pages now (bus mastering on, its RAM still there), else NULL.
 */
static PVDCBinding *pvdc_binding_usable(PVDCState *s, uint64_t addr,
                                        uint64_t len)
{
    PVDCBinding *b = pvdc_binding_find(s, addr, len);

    return b && !b->lost && pvdc_memory_reachable(s) ? b : NULL;
}

/*
 * The run of @b holding byte @off of it (which it holds): composition
 * looks up every line it reads, in bindings of thousands of runs.
 */
static unsigned int pvdc_binding_run(PVDCBinding *b, uint64_t off)
{
    unsigned int lo = 0, hi = b->runs->len;

    /* Each pass halves [lo, hi): bounded by log2 of the runs. */
    while (hi - lo > 1) {
        unsigned int mid = lo + (hi - lo) / 2;

        if (g_array_index(b->runs, PVDCBindMap, mid).off <= off) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/*
 * The host pointer to bytes [@off, @off + @len) of @b if they lie in
 * one mapping (or its host view), else NULL.
 */
static const uint8_t *pvdc_binding_ptr(PVDCBinding *b, uint64_t off,
                                       uint64_t len)
{
    PVDCBindMap *run;

    if (b->view) {
        return b->view + off;
    }
    if (!b->runs || !b->runs->len) {
        return NULL;
    }
    run = &g_array_index(b->runs, PVDCBindMap, pvdc_binding_run(b, off));
    off -= run->off;
    return len <= run->len - off ? (uint8_t *)run->host + off : NULL;
}

/*
 * Copy bytes [@off, @off + @len) of @b, which it holds, to @buf, or with
 * @is_write from @buf to them and mark them dirty as an unmap would: the
 * mappings live on, and a migration must send the pages again.
 */
static void pvdc_binding_rw(PVDCBinding *b, uint64_t off, uint64_t len,
                            uint8_t *buf, bool is_write)
{
    unsigned int i;

    if (b->view && !is_write) {
        memcpy(buf, b->view + off, len);
        return;
    }
    if (!b->runs || !b->runs->len) {
        return;
    }
    i = pvdc_binding_run(b, off);
    off -= g_array_index(b->runs, PVDCBindMap, i).off;
    for (; len && i < b->runs->len; i++) {
        PVDCBindMap *map = &g_array_index(b->runs, PVDCBindMap, i);
        uint8_t *host = (uint8_t *)map->host + off;
        uint64_t n = MIN(len, map->len - off);
        MemoryRegion *mr;
        ram_addr_t ram_off;

        if (!is_write) {
            memcpy(buf, host, n);
        } else {
            memcpy(host, buf, n);
            /* RAM checked at the mapping: the pointer is in a RAM block. */
            mr = memory_region_from_host(host, &ram_off);
            if (mr) {
                memory_region_set_dirty(mr, ram_off, n);
            }
        }
        buf += n;
        len -= n;
        off = 0;
    }
}

bool pvdc_memory_load(PVDCState *s, uint64_t addr, uint64_t len, void *dst)
{
    PVDCBinding *b = pvdc_binding_usable(s, addr, len);

    if (!b) {
        return false;
    }
    pvdc_binding_rw(b, addr - b->addr, len, dst, false);
    return true;
}

bool pvdc_memory_store(PVDCState *s, uint64_t addr, uint32_t pitch,
                       uint32_t lines, uint64_t line, const uint8_t *src,
                       uint64_t stride)
{
    uint64_t len;
    PVDCBinding *b;
    uint32_t y;

    if (!lines) {
        return false;
    }
    len = (uint64_t)pitch * (lines - 1) + line;
    b = pvdc_binding_usable(s, addr, len);
    if (!b) {
        return false;
    }
    for (y = 0; y < lines; y++) {
        /* A write only reads @src: dropping its const is safe. */
        pvdc_binding_rw(b, addr - b->addr + (uint64_t)y * pitch, line,
                        (uint8_t *)src + (uint64_t)y * stride, true);
    }
    trace_pvdc_memory_store(addr, pitch, lines);
    /* No dirty log for the consoles: as if the guest reported it. */
    pvdc_console_damage(s, addr, len);
    return true;
}

/* A memory plane composition reads through a binding's runs. */
typedef struct PVDCMemoryFetch {
    PVDCState *s;
    PVDCBinding *b;
    uint64_t base;              /* the device address of its byte 0 */
    uint64_t size;
} PVDCMemoryFetch;

/*
 * PVDCComposeFetchFn of a PVDCMemoryFetch: the lines composition reads,
 * straight from the pages where they are contiguous in the host, else
 * copied (counted in x-bounce-bytes).
 */
static const uint8_t *pvdc_memory_fetch(void *opaque, uint64_t offset,
                                        uint64_t len, uint8_t *copy)
{
    PVDCMemoryFetch *f = opaque;
    uint64_t off = f->base - f->b->addr + offset;

    /* The engine reads inside the size it was given: never taken. */
    if (offset > f->size || len > f->size - offset) {
        return NULL;
    }
    if (!copy) {
        return pvdc_binding_ptr(f->b, off, len);
    }
    pvdc_binding_rw(f->b, off, len, copy, false);
    f->s->bounce_bytes += len;
    return copy;
}

/*
 * A view of one memory plane of a plane outside VRAM: device addresses
 * [@base, @end).  A direct pointer where they are host-contiguous, else
 * a fetch of the lines composition reads, kept in @keep.  False if there
 * is none.  Composition copies at most a band of lines at a time: a
 * copy of the whole plane would cost about as much again as the
 * composition.
 */
static bool pvdc_memory_view(PVDCState *s, uint64_t base, uint64_t end,
                             const uint8_t **mem, PVDCMemoryFetch **fetch,
                             uint64_t *size, GPtrArray *keep)
{
    PVDCBinding *b = pvdc_binding_usable(s, base, end - base);
    PVDCMemoryFetch *f;

    if (!b) {
        return false;
    }
    *size = end - base;
    *mem = pvdc_binding_ptr(b, base - b->addr, *size);
    if (*mem) {
        return true;
    }
    f = g_new(PVDCMemoryFetch, 1);
    *f = (PVDCMemoryFetch) { .s = s, .b = b, .base = base, .size = *size };
    g_ptr_array_add(keep, f);
    *fetch = f;
    trace_pvdc_memory_fetch(base, end, b->runs->len);
    return true;
}

uint8_t *pvdc_memory_host_span(PVDCState *s, uint64_t addr, uint64_t len)
{
    PVDCBinding *b = pvdc_binding_usable(s, addr, len);

    if (!b) {
        return NULL;
    }
    return (uint8_t *)pvdc_binding_ptr(b, addr - b->addr, len);
}

void pvdc_memory_views(PVDCState *s, PVDCComposeScene *scene,
                       GPtrArray *keep)
{
    bool master = pvdc_memory_reachable(s);
    unsigned int i = 0;

    /* Each pass keeps or drops plane @i: bounded by the planes. */
    while (i < scene->num_planes) {
        PVDCComposePlane *plane = &scene->planes[i];
        PVDCComposeSpan span[2];
        unsigned int n = pvdc_compose_plane_sources(plane, span);
        uint64_t base[2] = { plane->offset, plane->chroma_offset };
        const uint8_t *mem[2] = {};
        PVDCMemoryFetch *fetch[2] = {};
        uint64_t size[2] = {};
        bool ok = true, outside = false;
        unsigned int k;

        for (k = 0; k < n; k++) {
            uint64_t end = span[k].offset +
                           (uint64_t)span[k].pitch * (span[k].rows - 1) +
                           span[k].row_bytes;

            if (end <= s->conf.vram_size) {
                continue;
            }
            outside = true;
            ok &= master && span[k].offset >= base[k] &&
                  pvdc_memory_view(s, base[k], end, &mem[k], &fetch[k],
                                   &size[k], keep);
        }
        if (outside && !master && !s->bus_master_off_logged) {
            qemu_log_mask(LOG_GUEST_ERROR, "pvdc: bus mastering is off: "
                          "planes in guest memory are not shown\n");
            s->bus_master_off_logged = true;
        }
        if (!ok) {
            /* Not shown, as if disabled: the rest of the scene is. */
            memmove(plane, plane + 1,
                    (scene->num_planes - i - 1) * sizeof(*plane));
            scene->num_planes--;
            continue;
        }
        plane->mem = mem[0];
        plane->mem_size = size[0];
        if (mem[0] || fetch[0]) {
            plane->offset = 0;
        }
        if (fetch[0]) {
            plane->fetch = pvdc_memory_fetch;
            plane->fetch_opaque = fetch[0];
        }
        plane->chroma_mem = mem[1];
        plane->chroma_mem_size = size[1];
        if (mem[1] || fetch[1]) {
            plane->chroma_offset = 0;
        }
        if (fetch[1]) {
            plane->chroma_fetch = pvdc_memory_fetch;
            plane->chroma_fetch_opaque = fetch[1];
        }
        i++;
    }
    if (master) {
        s->bus_master_off_logged = false;
    }
}

static uint32_t pvdc_bind(PVDCState *s)
{
    PCIDevice *pci = PCI_DEVICE(s);
    uint64_t table = deposit64(s->bind_table_lo, 32, 32, s->bind_table_hi);
    uint32_t n = s->bind_entries;
    PVDCBinding b = {
        .addr = s->bind_addr,
        .size = s->bind_size,
    };
    uint32_t status, i;

    status = pvdc_bind_range_check(s, b.addr, b.size, UINT32_MAX);
    if (status != PVDC_BIND_OK) {
        return status;
    }
    if (pvdc_memory_in_use(s, b.addr, b.size)) {
        return PVDC_BIND_ERR_BUSY;
    }
    if (s->num_bindings == PVDC_MAX_BINDINGS) {
        return PVDC_BIND_ERR_NOSPC;
    }
    if (table % PVDC_BIND_TABLE_ALIGN || !n || n > PVDC_MAX_BIND_ENTRIES) {
        return PVDC_BIND_ERR_TABLE;
    }
    if (n > PVDC_MAX_BIND_ENTRIES - s->bound_entries) {
        return PVDC_BIND_ERR_NOSPC;
    }
    b.num_entries = n;
    b.entries = g_new(PVDCBindEntry, n);
    if (!pvdc_bind_read_table(s, table, n, b.entries)) {
        status = PVDC_BIND_ERR_DMA;
    } else if (!pvdc_bind_entries_valid(b.entries, n, b.size)) {
        status = PVDC_BIND_ERR_TABLE;
    } else if (!pvdc_binding_map(s, pci_get_address_space(pci), &b)) {
        status = PVDC_BIND_ERR_DMA;
    }
    if (status != PVDC_BIND_OK) {
        g_free(b.entries);
        return status;
    }

    /* Keep the array in address order. */
    for (i = s->num_bindings; i > 0 && s->bindings[i - 1].addr > b.addr;
         i--) {
        s->bindings[i] = s->bindings[i - 1];
    }
    s->bindings[i] = b;
    s->num_bindings++;
    s->bound_entries += n;
    return PVDC_BIND_OK;
}

static uint32_t pvdc_unbind(PVDCState *s)
{
    uint32_t i;

    for (i = 0; i < s->num_bindings; i++) {
        PVDCBinding *b = &s->bindings[i];

        if (b->addr == s->bind_addr && b->size == s->bind_size) {
            if (pvdc_memory_in_use(s, b->addr, b->size)) {
                return PVDC_BIND_ERR_BUSY;
            }
            s->bound_entries -= b->num_entries;
            pvdc_binding_free(s, b);
            memmove(b, b + 1, (s->num_bindings - i - 1) * sizeof(*b));
            s->num_bindings--;
            memset(&s->bindings[s->num_bindings], 0, sizeof(*b));
            return PVDC_BIND_OK;
        }
    }
    return PVDC_BIND_ERR_NOT_BOUND;
}

static void pvdc_bind_cmd(PVDCState *s, uint32_t cmd)
{
    switch (cmd) {
    case PVDC_BIND_CMD_BIND:
        s->bind_status = pvdc_bind(s);
        break;
    case PVDC_BIND_CMD_UNBIND:
        s->bind_status = pvdc_unbind(s);
        break;
    default:
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: BIND_CMD %u is not a "
                      "PVDC_BIND_CMD_*; ignored\n", cmd);
        return;
    }
    if (s->bind_status != PVDC_BIND_OK) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: BIND_CMD %u of 0x%x+0x%x "
                      "(table 0x%x%08x, %u entries) refused: status %u\n",
                      cmd, s->bind_addr, s->bind_size, s->bind_table_hi,
                      s->bind_table_lo, s->bind_entries, s->bind_status);
    }
    trace_pvdc_bind_cmd(cmd, s->bind_addr, s->bind_size, s->bind_entries,
                        s->bind_status);
}

/*
 * DAMAGE_LEN: the part of the range above VRAM (which has a dirty log of
 * its own) and below 2^32; a range past 2^32 is clipped and logged.
 */
static void pvdc_memory_damage(PVDCState *s, uint32_t len)
{
    uint64_t start = MAX(s->damage_addr, s->conf.vram_size);
    uint64_t end = (uint64_t)s->damage_addr + len;

    if (end > PVDC_ADDR_SPACE_SIZE) {
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: DAMAGE of 0x%x+0x%x ends past "
                      "the device address space; clipped\n",
                      s->damage_addr, len);
        end = PVDC_ADDR_SPACE_SIZE;
    }
    trace_pvdc_memory_damage(s->damage_addr, len);
    if (start < end) {
        pvdc_console_damage(s, start, end - start);
    }
}

bool pvdc_memory_read(PVDCState *s, hwaddr addr, uint32_t *val)
{
    switch (addr) {
    case PVDC_REG_BIND_ADDR:
        *val = s->bind_addr;
        return true;
    case PVDC_REG_BIND_SIZE:
        *val = s->bind_size;
        return true;
    case PVDC_REG_BIND_TABLE_LO:
        *val = s->bind_table_lo;
        return true;
    case PVDC_REG_BIND_TABLE_HI:
        *val = s->bind_table_hi;
        return true;
    case PVDC_REG_BIND_ENTRIES:
        *val = s->bind_entries;
        return true;
    case PVDC_REG_BIND_STATUS:
        *val = s->bind_status;
        return true;
    case PVDC_REG_BIND_CMD:
        *val = 0;               /* write-only: a command is never pending */
        return true;
    case PVDC_REG_NUM_BINDINGS:
        *val = PVDC_MAX_BINDINGS;
        return true;
    case PVDC_REG_BIND_SPACE:
        *val = s->conf.bind_space;
        return true;
    case PVDC_REG_DAMAGE_ADDR:
        *val = s->damage_addr;
        return true;
    case PVDC_REG_DAMAGE_LEN:
        *val = 0;               /* write-only: it acts when written */
        return true;
    default:
        return false;
    }
}

bool pvdc_memory_write(PVDCState *s, hwaddr addr, uint32_t val)
{
    switch (addr) {
    case PVDC_REG_BIND_ADDR:
        s->bind_addr = val;
        return true;
    case PVDC_REG_BIND_SIZE:
        s->bind_size = val;
        return true;
    case PVDC_REG_BIND_TABLE_LO:
        s->bind_table_lo = val;
        return true;
    case PVDC_REG_BIND_TABLE_HI:
        s->bind_table_hi = val;
        return true;
    case PVDC_REG_BIND_ENTRIES:
        s->bind_entries = val;
        return true;
    case PVDC_REG_BIND_CMD:
        pvdc_bind_cmd(s, val);
        return true;
    case PVDC_REG_DAMAGE_ADDR:
        s->damage_addr = val;
        return true;
    case PVDC_REG_DAMAGE_LEN:
        pvdc_memory_damage(s, val);
        return true;
    default:
        return false;
    }
}

static void pvdc_memory_drop(PVDCState *s)
{
    unsigned int i;

    /* All of them: a stream that failed to load may have left entries. */
    for (i = 0; i < PVDC_MAX_BINDINGS; i++) {
        pvdc_binding_free(s, &s->bindings[i]);
    }
    s->num_bindings = 0;
    s->bound_entries = 0;
}

void pvdc_memory_reset(PVDCState *s)
{
    pvdc_memory_drop(s);
    s->bind_addr = s->bind_size = 0;
    s->bind_table_lo = s->bind_table_hi = 0;
    s->bind_entries = 0;
    s->bind_status = PVDC_BIND_OK;
    s->damage_addr = 0;
}

/* ------------------------------------------------------------------------ */
/* RAM leaving the memory map                                               */
/* ------------------------------------------------------------------------ */

/*
 * Whether every entry of @b still translates, through the address space
 * its pages were mapped from, to the host memory they were mapped to.
 */
static bool pvdc_binding_intact(PVDCState *s, PVDCBinding *b)
{
    AddressSpace *as = pci_device_iommu_address_space(PCI_DEVICE(s));
    unsigned int m = 0;
    uint64_t done = 0;          /* bytes of mapping @m matched */
    int32_t i;

    for (i = 0; i < b->num_entries; i++) {
        uint64_t addr = b->entries[i].addr, len = b->entries[i].len;

        /* Each pass matches at least one byte: bounded by the size. */
        while (len) {
            PVDCBindMap *map;
            hwaddr plen;

            if (m >= b->maps->len) {
                return false;
            }
            map = &g_array_index(b->maps, PVDCBindMap, m);
            plen = MIN(len, map->len - done);
            if (pvdc_ram_host(s, as, addr, &plen) !=
                (uint8_t *)map->host + done) {
                return false;
            }
            addr += plen;
            len -= plen;
            done += plen;
            if (done == map->len) {
                m++;
                done = 0;
            }
        }
    }
    return true;
}

static void pvdc_ram_region_del(MemoryListener *listener,
                                MemoryRegionSection *section)
{
    PVDCState *s = container_of(listener, PVDCState, ram_listener);

    if (memory_region_is_ram(section->mr) && section->mr != &s->vram) {
        s->ram_removed = true;
    }
}

/*
 * After a change of the memory map that removed RAM (a section may only
 * have been split, and come back whole in the same change): every
 * binding whose pages are no longer the RAM it mapped is lost.  It stays
 * bound, so that the states that name it stay valid, but its planes are
 * not shown, writebacks into it are not written and its colour tables
 * not read, as with bus mastering off; the mappings, which keep the host
 * memory alive until UNBIND, are not touched again.
 */
static void pvdc_ram_commit(MemoryListener *listener)
{
    PVDCState *s = container_of(listener, PVDCState, ram_listener);
    bool any = false;
    uint32_t i;

    if (!s->ram_removed) {
        return;
    }
    s->ram_removed = false;
    for (i = 0; i < s->num_bindings; i++) {
        PVDCBinding *b = &s->bindings[i];

        if (b->lost || !b->maps || pvdc_binding_intact(s, b)) {
            continue;
        }
        b->lost = true;
        any = true;
        qemu_log_mask(LOG_GUEST_ERROR, "pvdc: RAM under binding 0x%x+0x%x "
                      "left the memory map: it is no longer read or "
                      "written, until UNBIND\n", b->addr, b->size);
        trace_pvdc_memory_lost(b->addr, b->size);
    }
    if (any) {
        pvdc_console_invalidate(s);
    }
}

void pvdc_memory_realize(PVDCState *s)
{
    s->ram_listener = (MemoryListener) {
        .name = "pvdc-ram",
        .region_del = pvdc_ram_region_del,
        .commit = pvdc_ram_commit,
    };
    memory_listener_register(&s->ram_listener, &address_space_memory);
}

void pvdc_memory_unrealize(PVDCState *s)
{
    memory_listener_unregister(&s->ram_listener);
}

/* ------------------------------------------------------------------------ */
/* Migration                                                                */
/* ------------------------------------------------------------------------ */

static bool pvdc_memory_needed(void *opaque)
{
    PVDCState *s = opaque;

    return s->num_bindings || s->bind_addr || s->bind_size ||
           s->bind_table_lo || s->bind_table_hi || s->bind_entries ||
           s->bind_status || s->damage_addr;
}

/* pvdc_pre_load() dropped the device's own bindings. */
static int pvdc_memory_pre_load(void *opaque)
{
    return pvdc_subsection_pre_load(opaque, PVDC_SUBSECTION_MEMORY);
}

/*
 * Each binding as BIND checks it, in address order, then mapped.  The
 * source's guest may have turned bus mastering off since it bound them:
 * the pages are mapped through the IOMMU address space, which ignores it,
 * as they were at BIND.
 */
static int pvdc_memory_post_load(void *opaque, int version_id)
{
    PVDCState *s = opaque;
    AddressSpace *as = pci_device_iommu_address_space(PCI_DEVICE(s));
    uint64_t entries = 0;
    uint32_t i;

    if (s->bind_status > PVDC_BIND_ERR_BUSY) {
        error_report("pvdc: BIND_STATUS %u is no PVDC_BIND_* outcome",
                     s->bind_status);
        return -EINVAL;
    }
    for (i = 0; i < s->num_bindings; i++) {
        PVDCBinding *b = &s->bindings[i];
        uint32_t status = pvdc_bind_range_check(s, b->addr, b->size, i);

        entries += b->num_entries;
        if (status == PVDC_BIND_OK && i && b->addr < s->bindings[i - 1].addr) {
            status = PVDC_BIND_ERR_OVERLAP;
        }
        if (status == PVDC_BIND_OK && entries > PVDC_MAX_BIND_ENTRIES) {
            status = PVDC_BIND_ERR_NOSPC;
        }
        if (status == PVDC_BIND_OK &&
            !pvdc_bind_entries_valid(b->entries, b->num_entries, b->size)) {
            status = PVDC_BIND_ERR_TABLE;
        }
        if (status == PVDC_BIND_OK && !pvdc_binding_map(s, as, b)) {
            status = PVDC_BIND_ERR_DMA;
        }
        if (status != PVDC_BIND_OK) {
            error_report("pvdc: binding %u at 0x%x+0x%x: status %u, as BIND "
                         "would refuse it", i, b->addr, b->size, status);
            return -EINVAL;
        }
    }
    s->bound_entries = entries;
    return 0;
}

static bool pvdc_bindings_fit(void *opaque, int version_id)
{
    PVDCState *s = opaque;

    return s->num_bindings <= PVDC_MAX_BINDINGS;
}

static bool pvdc_entries_fit(void *opaque, int version_id)
{
    PVDCBinding *b = opaque;

    return b->num_entries > 0 && b->num_entries <= PVDC_MAX_BIND_ENTRIES;
}

static const VMStateDescription vmstate_pvdc_bind_entry = {
    .name = "pvdc/bind-entry",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT64(addr, PVDCBindEntry),
        VMSTATE_UINT64(len, PVDCBindEntry),
        VMSTATE_END_OF_LIST()
    },
};

static const VMStateDescription vmstate_pvdc_binding = {
    .name = "pvdc/binding",
    .version_id = 1,
    .minimum_version_id = 1,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(addr, PVDCBinding),
        VMSTATE_UINT32(size, PVDCBinding),
        VMSTATE_INT32(num_entries, PVDCBinding),
        /* before the allocation it sizes */
        VMSTATE_VALIDATE("1 to PVDC_MAX_BIND_ENTRIES entries",
                         pvdc_entries_fit),
        VMSTATE_STRUCT_VARRAY_ALLOC(entries, PVDCBinding, num_entries, 1,
                                    vmstate_pvdc_bind_entry, PVDCBindEntry),
        VMSTATE_END_OF_LIST()
    },
};

/*
 * The BIND_* and DAMAGE_ADDR registers and the bindings with their
 * entries; without this subsection there are none.  The mappings are
 * made again by post_load.
 */
const VMStateDescription vmstate_pvdc_memory = {
    .name = "pvdc/memory",
    .version_id = 1,
    .minimum_version_id = 1,
    .needed = pvdc_memory_needed,
    .pre_load = pvdc_memory_pre_load,
    .post_load = pvdc_memory_post_load,
    .fields = (const VMStateField[]) {
        VMSTATE_UINT32(bind_addr, PVDCState),
        VMSTATE_UINT32(bind_size, PVDCState),
        VMSTATE_UINT32(bind_table_lo, PVDCState),
        VMSTATE_UINT32(bind_table_hi, PVDCState),
        VMSTATE_UINT32(bind_entries, PVDCState),
        VMSTATE_UINT32(bind_status, PVDCState),
        VMSTATE_UINT32(num_bindings, PVDCState),
        VMSTATE_VALIDATE("at most PVDC_MAX_BINDINGS bindings",
                         pvdc_bindings_fit),
        VMSTATE_STRUCT_VARRAY_UINT32(bindings, PVDCState, num_bindings, 1,
                                     vmstate_pvdc_binding, PVDCBinding),
        VMSTATE_UINT32(damage_addr, PVDCState),
        VMSTATE_END_OF_LIST()
    },
};
