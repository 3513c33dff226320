// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: buffers.
 *
 * Buffers are GEM shmem objects, native or imported through PRIME, and the
 * device scans them out of guest pages bound into its address space: above
 * VRAM, the BIND_SPACE bytes of device address space the device reports
 * are handed out by a drm_mm, and a buffer is bound there once, the first
 * time a plane or a writeback job pins it, with a table of its
 * DMA-contiguous runs.  The binding outlives the pin: flipping between
 * buffers binds nothing, and a flip stays the register writes it is with
 * VRAM.  A binding is dropped when its object is freed, which happens only
 * once no state shows it (the framebuffers hold the objects until the
 * device latched the state that replaced them), or evicted, least recently
 * used first, when the device or the address space has no room for a new
 * one and no state uses it.
 *
 * TEST_ONLY must foresee the room, and atomic_check may write no device
 * register: the check reserves in the driver's books only
 * (pvdc_gem_reserve()).  Each object the commit pins anew gets its pages
 * and its BIND table allocated and a range of the address space (@reserve)
 * counted against the device's bindings and entries; evicting an idle
 * binding for it only moves the binding's range to the stale bindings,
 * which the device drops before the next BIND.  prepare_fb then binds
 * into the range the check reserved, so what the check accepted finds
 * room whatever other heads commit meanwhile.  A check cannot tell a
 * TEST_ONLY from a commit, so its reservation is tentative until
 * atomic_commit confirms it; a tentative one that ends (TEST_ONLY, a
 * failed check, a backoff) gives back what it evicted, unless the device
 * dropped it meanwhile.  A check that finds no room but for tentative
 * reservations waits for them to end and tries again, so a TEST_ONLY
 * never makes another commit fail.  Those reservations end without
 * waiting for anything: the reservation is the check's last step, and
 * atomic_commit confirms it before waiting for any other commit.
 *
 * Guest RAM has no dirty log: what is written into a shown buffer in place
 * reaches the device as DAMAGE_ADDR/DAMAGE_LEN byte ranges, the rows of
 * each damage clip: those of an atomic commit's FB_DAMAGE_CLIPS
 * (pvdc_gem_damage()), and those of DIRTYFB and the fbdev console
 * (pvdc_fb_dirty()), which need no commit: the device recomposes whatever
 * shows the bytes.
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/scatterlist.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include <drm/drm_damage_helper.h>
#include <drm/drm_debugfs.h>
#include <drm/drm_drv.h>
#include <drm/drm_fourcc.h>
#include <drm/drm_framebuffer.h>
#include <drm/drm_gem_framebuffer_helper.h>
#include <drm/drm_gem_shmem_helper.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "pvdc_drv.h"

/* drm_panic maps an imported buffer through its dma-buf. */
MODULE_IMPORT_NS(DMA_BUF);

/* The device address space ends at 2^32: the offset registers' width. */
#define PVDC_ADDRESS_SPACE_END	SZ_4G

/* More damage clips than this are reported as the rows they span. */
#define PVDC_DAMAGE_MAX_RANGES	8

struct pvdc_gem_object {
	struct drm_gem_shmem_object base;
	/* The binding: device addresses, allocated while bound. */
	struct drm_mm_node node;
	/* In pvdc->bindings while bound, least recently used first. */
	struct list_head lru;
	/* Pins of states that show it (prepare_fb to release). */
	unsigned int use;
	/*
	 * Checked commits that pin it anew, until their prepare_fb or their
	 * end: it is not evicted meanwhile.  While it is reserved and
	 * unbound, @reserve is the range its BIND will take and @table its
	 * BIND table, both counted in the device's limits.
	 */
	unsigned int reserved;
	struct drm_mm_node reserve;
	__le64 *table;
	dma_addr_t table_dma;
	/* Runs of DMA-contiguous pages: its BIND entries; 0 until known. */
	unsigned int runs;
	/* Its range, evicted by a tentative reservation that may restore it. */
	struct pvdc_stale_binding *evicted;
	/*
	 * Mapped for drm_panic, from the first time a primary plane shows it
	 * until it is freed (pvdc_gem_fb_panic_prepare()); null if that
	 * failed.  @panic_tried is set, under the reservation lock, once
	 * @panic_map is final.
	 */
	struct iosys_map panic_map;
	bool panic_tried;
};

/*
 * A binding the device may still hold after the driver dropped it: of an
 * object freed once the device could no longer be reached (unplugged, the
 * remove path's drm_atomic_helper_shutdown() included), dropped by
 * pvdc_gem_unbind_all(); or evicted by a check, dropped by the device
 * before the next BIND (pvdc_gem_flush_stale()).  While a tentative
 * reservation may restore it, it is on that reservation's @victim list
 * too, with @bo while the object lives and is not evicted again.
 */
struct pvdc_stale_binding {
	struct list_head link;		/* in stale_bindings, until dropped */
	u64 start, size;
	struct list_head victim;
	struct pvdc_gem_object *bo;
};

/*
 * A checked commit's reservation, from its check to its prepare_fb or its
 * end: the objects it pins anew, each counted in their @reserved with a
 * reference, and while @tentative, the bindings its check evicted.
 */
struct pvdc_reservation {
	bool tentative;
	struct list_head victims;
	unsigned int num_objs;
	struct drm_gem_object *objs[] __counted_by(num_objs);
};

static struct pvdc_gem_object *to_pvdc_gem(struct drm_gem_object *obj)
{
	return container_of(to_drm_gem_shmem_obj(obj), struct pvdc_gem_object,
			    base);
}

/* ------------------------------------------------------------------------ */
/* Bindings                                                                 */
/* ------------------------------------------------------------------------ */

/* A BIND_CMD on [@addr, @addr + @size): its BIND_STATUS. */
static u32 pvdc_bind_cmd(struct pvdc_device *pvdc, u32 cmd, u64 addr,
			 u64 size, dma_addr_t table, u32 entries)
{
	lockdep_assert_held(&pvdc->bind_lock);

	pvdc_write(pvdc, PVDC_REG_BIND_ADDR, addr);
	pvdc_write(pvdc, PVDC_REG_BIND_SIZE, size);
	if (cmd == PVDC_BIND_CMD_BIND) {
		pvdc_write(pvdc, PVDC_REG_BIND_TABLE_LO, lower_32_bits(table));
		pvdc_write(pvdc, PVDC_REG_BIND_TABLE_HI, upper_32_bits(table));
		pvdc_write(pvdc, PVDC_REG_BIND_ENTRIES, entries);
	}
	pvdc_write(pvdc, PVDC_REG_BIND_CMD, cmd);

	return pvdc_read(pvdc, PVDC_REG_BIND_STATUS);
}

/* A stale binding no one needs any more: dropped by the device, no victim. */
static void pvdc_gem_stale_done(struct pvdc_stale_binding *stale)
{
	if (list_empty(&stale->link) && list_empty(&stale->victim))
		kfree(stale);
}

/* Keep [@start, @start + @size) in stale_bindings, for the device. */
static struct pvdc_stale_binding *pvdc_gem_add_stale(struct pvdc_device *pvdc,
						     u64 start, u64 size)
{
	struct pvdc_stale_binding *stale;

	stale = kzalloc(sizeof(*stale), GFP_KERNEL);
	if (!stale)
		return NULL;
	stale->start = start;
	stale->size = size;
	INIT_LIST_HEAD(&stale->victim);
	list_add_tail(&stale->link, &pvdc->stale_bindings);

	return stale;
}

/* @bo's binding leaves the driver's books and the device's limits. */
static void pvdc_gem_forget(struct pvdc_device *pvdc,
			    struct pvdc_gem_object *bo)
{
	drm_mm_remove_node(&bo->node);
	list_del_init(&bo->lru);
	pvdc->bindings_used--;
	pvdc->entries_used -= bo->runs;
}

/*
 * Drop @bo's binding.  Only bindings no state uses are dropped, so the
 * device never finds one busy.  Without the device (unplugged), the
 * device's side is left to pvdc_gem_unbind_all(), which the remove path
 * runs once nothing else touches the device.
 */
static void pvdc_gem_unbind(struct pvdc_device *pvdc,
			    struct pvdc_gem_object *bo)
{
	u32 status;
	int idx;

	lockdep_assert_held(&pvdc->bind_lock);

	if (drm_dev_enter(&pvdc->drm, &idx)) {
		status = pvdc_bind_cmd(pvdc, PVDC_BIND_CMD_UNBIND,
				       bo->node.start, bo->node.size, 0, 0);
		drm_dev_exit(idx);
		WARN_ONCE(status == PVDC_BIND_ERR_BUSY,
			  "pvdc: binding %#llx+%#llx unbound while shown\n",
			  bo->node.start, bo->node.size);
	} else {
		pvdc_gem_add_stale(pvdc, bo->node.start, bo->node.size);
	}
	pvdc_gem_forget(pvdc, bo);
}

/*
 * The device drops the stale bindings (with @device), or they are
 * forgotten: before a BIND, which their ranges and their count in the
 * device's limits must not stop, and when the device holds no binding.
 * Called with the device entered, or once it cannot be.
 */
static void pvdc_gem_flush_stale(struct pvdc_device *pvdc, bool device)
{
	struct pvdc_stale_binding *stale, *tmp;

	lockdep_assert_held(&pvdc->bind_lock);

	list_for_each_entry_safe(stale, tmp, &pvdc->stale_bindings, link) {
		if (device)
			pvdc_bind_cmd(pvdc, PVDC_BIND_CMD_UNBIND, stale->start,
				      stale->size, 0, 0);
		list_del_init(&stale->link);
		pvdc_gem_stale_done(stale);
	}
}

/*
 * Room in the device for one more binding of @runs entries, beside the
 * bindings and the reservations: the device counts the stale bindings
 * too, but drops them before the next BIND.
 */
static bool pvdc_gem_device_room(struct pvdc_device *pvdc, unsigned int runs)
{
	return pvdc->bindings_used < pvdc->max_bindings &&
	       (u64)pvdc->entries_used + runs <= PVDC_MAX_BIND_ENTRIES;
}

/*
 * Evict the least recently used binding no state uses and no checked
 * commit reserved, in the driver's books only: its range becomes a stale
 * binding, on @victims, from which a tentative reservation that ends
 * restores it (pvdc_gem_restore()).  -ENOSPC if there is none.
 */
static int pvdc_gem_evict(struct pvdc_device *pvdc, struct list_head *victims)
{
	struct pvdc_stale_binding *stale;
	struct pvdc_gem_object *bo;

	list_for_each_entry(bo, &pvdc->bindings, lru) {
		if (bo->use || bo->reserved)
			continue;
		stale = pvdc_gem_add_stale(pvdc, bo->node.start, bo->node.size);
		if (!stale)
			return -ENOMEM;
		/* Only the newest eviction of an object may restore it. */
		if (bo->evicted)
			bo->evicted->bo = NULL;
		bo->evicted = stale;
		stale->bo = bo;
		list_add(&stale->victim, victims);
		pvdc_gem_forget(pvdc, bo);
		return 0;
	}

	return -ENOSPC;
}

/*
 * What a check evicted, newest first: with @restore (its commit will not
 * happen), each binding the device still holds goes back to its object,
 * if the object lives, has not been bound or reserved elsewhere since,
 * and its range and the device's limits have room; the others stay stale.
 */
static void pvdc_gem_restore(struct pvdc_device *pvdc,
			     struct list_head *victims, bool restore)
{
	struct pvdc_stale_binding *stale, *tmp;
	struct pvdc_gem_object *bo;

	lockdep_assert_held(&pvdc->bind_lock);

	list_for_each_entry_safe(stale, tmp, victims, victim) {
		list_del_init(&stale->victim);
		bo = stale->bo;
		stale->bo = NULL;
		if (!bo)
			goto done;
		bo->evicted = NULL;
		if (!restore || list_empty(&stale->link) ||
		    drm_mm_node_allocated(&bo->node) ||
		    drm_mm_node_allocated(&bo->reserve) ||
		    !pvdc_gem_device_room(pvdc, bo->runs))
			goto done;
		bo->node.start = stale->start;
		bo->node.size = stale->size;
		bo->node.color = 0;
		if (drm_mm_reserve_node(&pvdc->bind_mm, &bo->node))
			goto done;
		/* Least recently used again, as it was. */
		list_add(&bo->lru, &pvdc->bindings);
		pvdc->bindings_used++;
		pvdc->entries_used += bo->runs;
		list_del_init(&stale->link);
done:
		pvdc_gem_stale_done(stale);
	}
}

/* The sg table of @bo's pages, mapped for the device. */
static struct sg_table *pvdc_gem_sgt(struct pvdc_gem_object *bo)
{
	if (bo->base.base.import_attach)
		return bo->base.sgt;

	return drm_gem_shmem_get_pages_sgt(&bo->base);
}

/*
 * Walk the first @size bytes of @sgt in runs of DMA-contiguous pages,
 * writing them to @table if it is not NULL: the number of runs, or
 * -EINVAL if a segment is not made of whole device pages or @sgt is short.
 */
static int pvdc_gem_runs(struct sg_table *sgt, u64 size, __le64 *table)
{
	u64 left = size, start = 0, len = 0;
	struct scatterlist *sg;
	int runs = 0;
	unsigned int i;

	for_each_sgtable_dma_sg(sgt, sg, i) {
		u64 addr = sg_dma_address(sg);
		u64 seg = min_t(u64, sg_dma_len(sg), left);

		if (!left)
			break;
		if (!seg || !IS_ALIGNED(addr | seg, PVDC_BIND_PAGE_SIZE))
			return -EINVAL;
		if (len && start + len == addr) {
			len += seg;
		} else {
			if (len && table) {
				table[2 * runs - 2] = cpu_to_le64(start);
				table[2 * runs - 1] = cpu_to_le64(len);
			}
			start = addr;
			len = seg;
			runs++;
		}
		left -= seg;
	}
	if (left)
		return -EINVAL;
	if (table) {
		table[2 * runs - 2] = cpu_to_le64(start);
		table[2 * runs - 1] = cpu_to_le64(len);
	}

	return runs;
}

/* An imported buffer the device can bind: whole pages all along. */
static int pvdc_gem_check_bindable(struct drm_gem_object *obj)
{
	if (!obj->import_attach)
		return 0;

	return min(pvdc_gem_runs(to_drm_gem_shmem_obj(obj)->sgt,
				 round_up(obj->size, PVDC_BIND_PAGE_SIZE),
				 NULL), 0);
}

static u64 pvdc_gem_bind_size(struct pvdc_gem_object *bo)
{
	return round_up(bo->base.base.size, PVDC_BIND_PAGE_SIZE);
}

/*
 * @bo's BIND entries, counted once: the pages of a native object, which
 * this allocates and maps, stay until it is freed, and an imported one's
 * sg table is its attachment's.  Outside bind_lock, as pinning is.
 */
static int pvdc_gem_count_runs(struct pvdc_gem_object *bo)
{
	struct sg_table *sgt;
	int runs;

	if (READ_ONCE(bo->runs))
		return 0;
	sgt = pvdc_gem_sgt(bo);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	runs = pvdc_gem_runs(sgt, pvdc_gem_bind_size(bo), NULL);
	if (runs < 0)
		return runs;
	if (runs > PVDC_MAX_BIND_ENTRIES)
		return -E2BIG;
	WRITE_ONCE(bo->runs, runs);

	return 0;
}

/*
 * Reserve a range of the address space, a binding and @bo's entries in
 * the device and its BIND table for @bo, which is unbound and whose runs
 * are counted, evicting (onto @victims) bindings no state uses and no
 * checked commit reserved while there is no room.  No device register is
 * written.
 */
static int pvdc_gem_reserve_range(struct pvdc_device *pvdc,
				  struct pvdc_gem_object *bo,
				  struct list_head *victims)
{
	struct drm_device *drm = &pvdc->drm;
	int ret = 0;

	lockdep_assert_held(&pvdc->bind_lock);

	while (!pvdc_gem_device_room(pvdc, bo->runs) && !ret)
		ret = pvdc_gem_evict(pvdc, victims);
	if (ret)
		return ret;
	do {
		ret = drm_mm_insert_node_generic(&pvdc->bind_mm, &bo->reserve,
						 pvdc_gem_bind_size(bo),
						 PVDC_BIND_PAGE_SIZE, 0,
						 DRM_MM_INSERT_BEST);
	} while (ret == -ENOSPC && !pvdc_gem_evict(pvdc, victims));
	if (ret)
		return ret;
	bo->table = dma_alloc_coherent(drm->dev,
				       bo->runs * PVDC_BIND_ENTRY_SIZE,
				       &bo->table_dma, GFP_KERNEL);
	if (!bo->table) {
		drm_mm_remove_node(&bo->reserve);
		return -ENOMEM;
	}
	pvdc->bindings_used++;
	pvdc->entries_used += bo->runs;

	return 0;
}

static void pvdc_gem_free_table(struct pvdc_device *pvdc,
				struct pvdc_gem_object *bo)
{
	dma_free_coherent(pvdc->drm.dev, bo->runs * PVDC_BIND_ENTRY_SIZE,
			  bo->table, bo->table_dma);
	bo->table = NULL;
}

/* A reservation of @bo ends; the last gives back a range not bound. */
static void pvdc_gem_put_reserve(struct pvdc_device *pvdc,
				 struct pvdc_gem_object *bo)
{
	lockdep_assert_held(&pvdc->bind_lock);

	if (--bo->reserved || !drm_mm_node_allocated(&bo->reserve))
		return;
	drm_mm_remove_node(&bo->reserve);
	pvdc_gem_free_table(pvdc, bo);
	pvdc->bindings_used--;
	pvdc->entries_used -= bo->runs;
}

/*
 * Bind @bo into the range reserved for it: the device drops the stale
 * bindings first, so that their ranges and their count do not stand in
 * the way.  The check counted everything else.
 */
static int pvdc_gem_bind(struct pvdc_device *pvdc, struct pvdc_gem_object *bo,
			 struct sg_table *sgt)
{
	struct drm_device *drm = &pvdc->drm;
	u64 size = pvdc_gem_bind_size(bo);
	int ret = 0, idx;
	u32 status;

	lockdep_assert_held(&pvdc->bind_lock);

	pvdc_gem_runs(sgt, size, bo->table);
	/* The range moves to the binding: nothing can take it meanwhile. */
	bo->node.start = bo->reserve.start;
	bo->node.size = bo->reserve.size;
	bo->node.color = 0;
	drm_mm_remove_node(&bo->reserve);
	if (WARN_ON(drm_mm_reserve_node(&pvdc->bind_mm, &bo->node))) {
		ret = -ENOSPC;
		goto err_count;
	}
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto err_node;
	}
	pvdc_gem_flush_stale(pvdc, true);
	status = pvdc_bind_cmd(pvdc, PVDC_BIND_CMD_BIND, bo->node.start, size,
			       bo->table_dma, bo->runs);
	drm_dev_exit(idx);
	if (status != PVDC_BIND_OK) {
		drm_err(drm, "binding %llu KiB in %u runs at %#llx: error %#x\n",
			size >> 10, bo->runs, bo->node.start, status);
		ret = status == PVDC_BIND_ERR_NOSPC ? -ENOSPC : -EIO;
		goto err_node;
	}
	list_add_tail(&bo->lru, &pvdc->bindings);
	goto out;

err_node:
	drm_mm_remove_node(&bo->node);
err_count:
	pvdc->bindings_used--;
	pvdc->entries_used -= bo->runs;
out:
	pvdc_gem_free_table(pvdc, bo);
	return ret;
}

/*
 * Pin @obj's pages and bind them for a state that shows it, into the
 * range its commit's check reserved.  An object pinned without a check
 * (none is, but the binding is kept correct) reserves here.  An imported
 * object's pages are held by its attachment: it is not pinned.
 */
static int pvdc_gem_pin(struct pvdc_device *pvdc, struct drm_gem_object *obj)
{
	struct pvdc_gem_object *bo = to_pvdc_gem(obj);
	struct sg_table *sgt;
	LIST_HEAD(victims);
	int ret;

	if (!obj->import_attach) {
		ret = drm_gem_shmem_pin(&bo->base);
		if (ret)
			return ret;
	}
	sgt = pvdc_gem_sgt(bo);
	if (IS_ERR(sgt)) {
		ret = PTR_ERR(sgt);
		goto err_unpin;
	}
	ret = pvdc_gem_count_runs(bo);
	if (ret)
		goto err_unpin;

	mutex_lock(&pvdc->bind_lock);
	if (drm_mm_node_allocated(&bo->node)) {
		list_move_tail(&bo->lru, &pvdc->bindings);
	} else {
		if (!drm_mm_node_allocated(&bo->reserve))
			ret = pvdc_gem_reserve_range(pvdc, bo, &victims);
		pvdc_gem_restore(pvdc, &victims, !!ret);
		if (!ret)
			ret = pvdc_gem_bind(pvdc, bo, sgt);
	}
	if (!ret)
		bo->use++;
	mutex_unlock(&pvdc->bind_lock);
	if (ret)
		goto err_unpin;

	return 0;

err_unpin:
	if (!obj->import_attach)
		drm_gem_shmem_unpin(&bo->base);
	return ret;
}

/* The binding stays, for the next state that shows @obj. */
static void pvdc_gem_unpin(struct pvdc_device *pvdc, struct drm_gem_object *obj)
{
	struct pvdc_gem_object *bo = to_pvdc_gem(obj);

	mutex_lock(&pvdc->bind_lock);
	bo->use--;
	mutex_unlock(&pvdc->bind_lock);
	if (!obj->import_attach)
		drm_gem_shmem_unpin(&bo->base);
}

/* Every memory plane's object of @fb, for a plane or writeback. */
int pvdc_gem_fb_pin(struct drm_framebuffer *fb)
{
	struct pvdc_device *pvdc = to_pvdc(fb->dev);
	unsigned int i;
	int ret;

	for (i = 0; i < fb->format->num_planes; i++) {
		ret = pvdc_gem_pin(pvdc, fb->obj[i]);
		if (ret)
			goto err;
	}

	return 0;

err:
	while (i--)
		pvdc_gem_unpin(pvdc, fb->obj[i]);
	return ret;
}

void pvdc_gem_fb_unpin(struct drm_framebuffer *fb)
{
	struct pvdc_device *pvdc = to_pvdc(fb->dev);
	unsigned int i;

	for (i = 0; i < fb->format->num_planes; i++)
		pvdc_gem_unpin(pvdc, fb->obj[i]);
}

/*
 * The device address of memory plane @i of @fb, pinned: its binding does
 * not move while it is.
 */
u32 pvdc_gem_fb_address(const struct drm_framebuffer *fb, unsigned int i)
{
	struct pvdc_gem_object *bo = to_pvdc_gem(fb->obj[i]);

	return bo->node.start + fb->offsets[i];
}

/*
 * Forget every binding: before sleep, whether or not waking resets the
 * device, and at remove, so that the next driver finds none.  With
 * @device, the device, which shows nothing now and which nobody else
 * touches, drops them too: those of live objects, and those of objects
 * freed while the device could not be entered.
 */
void pvdc_gem_unbind_all(struct pvdc_device *pvdc, bool device)
{
	struct pvdc_gem_object *bo, *tmp;

	mutex_lock(&pvdc->bind_lock);
	list_for_each_entry_safe(bo, tmp, &pvdc->bindings, lru) {
		if (device)
			pvdc_bind_cmd(pvdc, PVDC_BIND_CMD_UNBIND,
				      bo->node.start, bo->node.size, 0, 0);
		pvdc_gem_forget(pvdc, bo);
	}
	pvdc_gem_flush_stale(pvdc, device);
	mutex_unlock(&pvdc->bind_lock);
}

/* ------------------------------------------------------------------------ */
/* Damage                                                                   */
/* ------------------------------------------------------------------------ */

static void pvdc_damage_write(struct pvdc_device *pvdc, u64 addr, u64 len)
{
	spin_lock(&pvdc->damage_lock);
	pvdc_write(pvdc, PVDC_REG_DAMAGE_ADDR, addr);
	pvdc_write(pvdc, PVDC_REG_DAMAGE_LEN, len);
	spin_unlock(&pvdc->damage_lock);
}

/*
 * Rows [@y1, @y2) of @fb, of every memory plane, to the device; @fb is
 * bound.
 */
static void pvdc_damage_rows(struct pvdc_device *pvdc,
			     const struct drm_framebuffer *fb, u32 y1, u32 y2)
{
	const struct drm_format_info *info = fb->format;
	unsigned int i;

	if (y1 >= y2)
		return;
	for (i = 0; i < info->num_planes; i++) {
		u32 sub = i ? info->vsub : 1;
		u32 first = y1 / sub, last = DIV_ROUND_UP(y2, sub);

		pvdc_damage_write(pvdc, pvdc_gem_fb_address(fb, i) +
				  (u64)first * fb->pitches[i],
				  (u64)(last - first) * fb->pitches[i]);
	}
}

/*
 * A plane that shows the same framebuffer in its new state was written in
 * place (DIRTYFB, the fbdev console): tell the device which rows, one
 * range per damage clip, or the rows all clips span when there are many.
 * Called with the device entered.
 */
void pvdc_gem_damage(struct drm_plane_state *old_state,
		     struct drm_plane_state *new_state)
{
	struct pvdc_device *pvdc = to_pvdc(new_state->plane->dev);
	struct drm_framebuffer *fb = new_state->fb;
	struct drm_atomic_helper_damage_iter iter;
	u32 y1 = U32_MAX, y2 = 0;
	struct drm_rect clip;
	bool merge;

	merge = drm_plane_get_damage_clips_count(new_state) >
		PVDC_DAMAGE_MAX_RANGES;
	drm_atomic_helper_damage_iter_init(&iter, old_state, new_state);
	drm_atomic_for_each_plane_damage(&iter, &clip) {
		if (!merge) {
			pvdc_damage_rows(pvdc, fb, clip.y1, clip.y2);
			continue;
		}
		y1 = min_t(u32, y1, clip.y1);
		y2 = max_t(u32, y2, clip.y2);
	}
	if (merge)
		pvdc_damage_rows(pvdc, fb, y1, y2);
}

/*
 * DIRTYFB and the fbdev console's damage: the rows of @clips (all of @fb
 * without any) straight to the device, if a state uses @fb's objects: an
 * object no state uses is shown nowhere, and a device that went away
 * shows nothing.
 */
static int pvdc_fb_dirty(struct drm_framebuffer *fb, struct drm_file *file,
			 unsigned int flags, unsigned int color,
			 struct drm_clip_rect *clips, unsigned int num_clips)
{
	struct pvdc_device *pvdc = to_pvdc(fb->dev);
	bool merge = num_clips > PVDC_DAMAGE_MAX_RANGES;
	u32 y1 = U32_MAX, y2 = 0;
	unsigned int i;
	int idx;

	if (!drm_dev_enter(fb->dev, &idx))
		return 0;
	mutex_lock(&pvdc->bind_lock);
	for (i = 0; i < fb->format->num_planes; i++)
		if (!to_pvdc_gem(fb->obj[i])->use)
			goto out;
	if (!num_clips)
		pvdc_damage_rows(pvdc, fb, 0, fb->height);
	for (i = 0; i < num_clips; i++) {
		u32 top = min_t(u32, clips[i].y1, fb->height);
		u32 bottom = min_t(u32, clips[i].y2, fb->height);

		if (!merge) {
			pvdc_damage_rows(pvdc, fb, top, bottom);
			continue;
		}
		y1 = min(y1, top);
		y2 = max(y2, bottom);
	}
	if (merge)
		pvdc_damage_rows(pvdc, fb, y1, y2);
out:
	mutex_unlock(&pvdc->bind_lock);
	drm_dev_exit(idx);

	return 0;
}

/* ------------------------------------------------------------------------ */
/* drm_panic                                                                */
/* ------------------------------------------------------------------------ */

/*
 * The object's vmap, or an imported object's dma-buf vmap, which may be
 * I/O memory: drm_panic draws into either, where the shmem helper's vmap
 * would refuse the latter with a warning.  With the reservation lock held.
 */
static int pvdc_gem_panic_vmap(struct pvdc_gem_object *bo,
			       struct iosys_map *map)
{
	struct drm_gem_object *obj = &bo->base.base;

	if (obj->import_attach)
		return dma_buf_vmap(obj->import_attach->dmabuf, map);

	return drm_gem_shmem_vmap(&bo->base, map);
}

/*
 * drm_panic draws into the buffer a primary plane shows, and can map
 * nothing then: map @fb's object the first time a primary plane is to show
 * it, and keep it mapped until the object is freed.  A page flip between
 * buffers shown before then maps nothing, where mapping at each flip and
 * unmapping at cleanup costs milliseconds on a debug kernel.  Only formats
 * of one memory plane, the ones drm_panic draws.  An object that cannot be
 * mapped (an exporter without vmap) is shown all the same, without a panic
 * screen, and not tried again.
 */
void pvdc_gem_fb_panic_prepare(struct drm_framebuffer *fb)
{
	struct drm_gem_object *obj = fb->obj[0];
	struct pvdc_gem_object *bo = to_pvdc_gem(obj);

	if (!IS_ENABLED(CONFIG_DRM_PANIC) || fb->format->num_planes != 1)
		return;
	/*
	 * A flip takes no lock for a buffer tried before: pairs with the
	 * release below, so that @panic_map is seen final.
	 */
	if (smp_load_acquire(&bo->panic_tried))
		return;

	dma_resv_lock(obj->resv, NULL);
	if (!bo->panic_tried) {
		if (pvdc_gem_panic_vmap(bo, &bo->panic_map)) {
			drm_dbg_kms(obj->dev, "buffer not mapped: no panic screen\n");
			iosys_map_clear(&bo->panic_map);
		}
		/* Pairs with the acquire above. */
		smp_store_release(&bo->panic_tried, true);
	}
	dma_resv_unlock(obj->resv);
}

/*
 * Where drm_panic draws into @fb, shown by a primary plane, which mapped
 * it before the state was committed; false if it could not be mapped.
 */
bool pvdc_gem_fb_panic_map(const struct drm_framebuffer *fb,
			   struct iosys_map *map)
{
	struct pvdc_gem_object *bo = to_pvdc_gem(fb->obj[0]);

	if (fb->format->num_planes != 1 || iosys_map_is_null(&bo->panic_map))
		return false;
	*map = bo->panic_map;
	iosys_map_incr(map, fb->offsets[0]);

	return true;
}

static void pvdc_gem_panic_unmap(struct pvdc_gem_object *bo)
{
	struct drm_gem_object *obj = &bo->base.base;

	if (iosys_map_is_null(&bo->panic_map))
		return;

	dma_resv_lock(obj->resv, NULL);
	if (obj->import_attach)
		dma_buf_vunmap(obj->import_attach->dmabuf, &bo->panic_map);
	else
		drm_gem_shmem_vunmap(&bo->base, &bo->panic_map);
	dma_resv_unlock(obj->resv);
}

/* ------------------------------------------------------------------------ */
/* Objects and framebuffers                                                 */
/* ------------------------------------------------------------------------ */

/*
 * No state uses a freed object (its framebuffers are gone, and they are
 * released only once the device latched what replaced them): its binding
 * can go.
 */
static void pvdc_gem_free(struct drm_gem_object *obj)
{
	struct pvdc_device *pvdc = to_pvdc(obj->dev);
	struct pvdc_gem_object *bo = to_pvdc_gem(obj);

	mutex_lock(&pvdc->bind_lock);
	WARN_ON(bo->use || bo->reserved);
	if (drm_mm_node_allocated(&bo->node))
		pvdc_gem_unbind(pvdc, bo);
	/* A tentative reservation that evicted it restores it no more. */
	if (bo->evicted)
		bo->evicted->bo = NULL;
	mutex_unlock(&pvdc->bind_lock);

	pvdc_gem_panic_unmap(bo);
	drm_gem_shmem_free(&bo->base);
}

static const struct drm_gem_object_funcs pvdc_gem_funcs = {
	.free = pvdc_gem_free,
	.print_info = drm_gem_shmem_object_print_info,
	.pin = drm_gem_shmem_object_pin,
	.unpin = drm_gem_shmem_object_unpin,
	.get_sg_table = drm_gem_shmem_object_get_sg_table,
	.vmap = drm_gem_shmem_object_vmap,
	.vunmap = drm_gem_shmem_object_vunmap,
	.mmap = drm_gem_shmem_object_mmap,
	.vm_ops = &drm_gem_shmem_vm_ops,
};

struct drm_gem_object *pvdc_gem_create_object(struct drm_device *dev,
					      size_t size)
{
	struct pvdc_gem_object *bo;

	bo = kzalloc(sizeof(*bo), GFP_KERNEL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	INIT_LIST_HEAD(&bo->lru);
	bo->base.base.funcs = &pvdc_gem_funcs;

	return &bo->base.base;
}

/* Lines at the device's pitch alignment, as the planes require. */
int pvdc_gem_dumb_create(struct drm_file *file, struct drm_device *dev,
			 struct drm_mode_create_dumb *args)
{
	struct pvdc_device *pvdc = to_pvdc(dev);
	u64 pitch, size;

	/* PITCH_ALIGN need not be a power of two. */
	pitch = roundup((u64)args->width * DIV_ROUND_UP(args->bpp, 8),
			pvdc->pitch_align);
	size = PAGE_ALIGN(pitch * args->height);
	if (!size || pitch > U32_MAX || size > PVDC_ADDRESS_SPACE_END)
		return -EINVAL;
	args->pitch = pitch;
	args->size = size;

	return drm_gem_shmem_dumb_create(file, dev, args);
}

static const struct drm_framebuffer_funcs pvdc_fb_funcs = {
	.destroy = drm_gem_fb_destroy,
	.create_handle = drm_gem_fb_create_handle,
	.dirty = pvdc_fb_dirty,
};

/*
 * GEM framebuffers whose DIRTYFB reports to the device directly, not
 * through a commit that would wait for a latch with the planes locked.
 * An imported buffer whose pages the device cannot bind is refused here,
 * not when it is first shown.
 */
struct drm_framebuffer *pvdc_fb_create(struct drm_device *dev,
				       struct drm_file *file,
				       const struct drm_mode_fb_cmd2 *cmd)
{
	const struct drm_format_info *info = drm_get_format_info(dev, cmd);
	unsigned int i;
	int ret;

	ret = pvdc_framebuffer_check(dev, cmd);
	if (ret)
		return ERR_PTR(ret);
	for (i = 0; info && i < info->num_planes; i++) {
		struct drm_gem_object *obj;

		obj = drm_gem_object_lookup(file, cmd->handles[i]);
		if (!obj)
			break;
		ret = pvdc_gem_check_bindable(obj);
		drm_gem_object_put(obj);
		if (ret) {
			drm_dbg_kms(dev, "imported buffer not in whole pages\n");
			return ERR_PTR(ret);
		}
	}

	return drm_gem_fb_create_with_funcs(dev, file, cmd, &pvdc_fb_funcs);
}

/*
 * A mode is possible if two full-screen XRGB8888 framebuffers, what a
 * page flip needs, fit in the device address space.
 */
enum drm_mode_status pvdc_gem_mode_valid(struct drm_device *dev,
					 const struct drm_display_mode *mode)
{
	struct pvdc_device *pvdc = to_pvdc(dev);
	u64 fb;

	fb = PAGE_ALIGN(roundup((u64)mode->hdisplay * 4, pvdc->pitch_align) *
			mode->vdisplay);
	if (2 * fb > pvdc->bind_end - pvdc->bind_start)
		return MODE_MEM;

	return MODE_OK;
}

/*
 * The bindings, least recently used first: device address, size and the
 * states that use each.  Tests check that what the device shows stays
 * bound.  Then, after a '#', what checked commits reserved, in bindings
 * and entries, how many of them are tentative, and how many bindings
 * wait for the device to drop them.
 */
static int pvdc_bindings_show(struct seq_file *m, void *data)
{
	struct drm_debugfs_entry *entry = m->private;
	struct pvdc_device *pvdc = to_pvdc(entry->dev);
	struct pvdc_stale_binding *stale;
	unsigned int bound = 0, entries = 0, stales = 0;
	struct pvdc_gem_object *bo;

	mutex_lock(&pvdc->bind_lock);
	list_for_each_entry(bo, &pvdc->bindings, lru) {
		seq_printf(m, "%#llx %#llx %u\n", bo->node.start,
			   bo->node.size, bo->use);
		bound++;
		entries += bo->runs;
	}
	list_for_each_entry(stale, &pvdc->stale_bindings, link)
		stales++;
	seq_printf(m, "# reserved %u bindings %u entries, %u tentative, %u stale\n",
		   pvdc->bindings_used - bound, pvdc->entries_used - entries,
		   pvdc->tentative, stales);
	mutex_unlock(&pvdc->bind_lock);

	return 0;
}

static void pvdc_gem_fini(struct drm_device *drm, void *arg)
{
	struct pvdc_device *pvdc = arg;

	mutex_lock(&pvdc->bind_lock);
	pvdc_gem_flush_stale(pvdc, false);
	mutex_unlock(&pvdc->bind_lock);
	drm_mm_takedown(&pvdc->bind_mm);
	mutex_destroy(&pvdc->bind_lock);
}

/*
 * The device address space above VRAM, BIND_SPACE bytes (read at probe,
 * before the colour tables take its top of VRAM), and DMA from the whole
 * guest physical space.
 */
int pvdc_gem_init(struct pvdc_device *pvdc)
{
	struct drm_device *drm = &pvdc->drm;
	u64 space;
	int ret;

	ret = dma_set_mask_and_coherent(drm->dev, DMA_BIT_MASK(64));
	if (ret)
		return ret;

	space = pvdc_read(pvdc, PVDC_REG_BIND_SPACE);
	pvdc->bind_start = round_up((u64)pvdc->vram_size, PVDC_BIND_PAGE_SIZE);
	pvdc->bind_end = min_t(u64, round_down((u64)pvdc->vram_size + space,
					       PVDC_BIND_PAGE_SIZE),
			       PVDC_ADDRESS_SPACE_END);
	if (pvdc->bind_start >= pvdc->bind_end) {
		drm_err(drm, "no device address space above %llu MiB of VRAM\n",
			(u64)pvdc->vram_size >> 20);
		return -ENODEV;
	}
	pvdc->max_bindings = pvdc_read(pvdc, PVDC_REG_NUM_BINDINGS);
	mutex_init(&pvdc->bind_lock);
	init_waitqueue_head(&pvdc->reserve_wq);
	spin_lock_init(&pvdc->damage_lock);
	INIT_LIST_HEAD(&pvdc->bindings);
	INIT_LIST_HEAD(&pvdc->stale_bindings);
	drm_mm_init(&pvdc->bind_mm, pvdc->bind_start,
		    pvdc->bind_end - pvdc->bind_start);
	drm_debugfs_add_file(drm, "pvdc_bindings", pvdc_bindings_show, NULL);

	return drmm_add_action_or_reset(drm, pvdc_gem_fini, pvdc);
}

/* ------------------------------------------------------------------------ */
/* A commit's new buffers                                                   */
/* ------------------------------------------------------------------------ */

static unsigned int pvdc_gem_fb_objects(struct drm_framebuffer *fb,
					struct drm_gem_object **objs,
					unsigned int n)
{
	unsigned int i;

	for (i = 0; i < fb->format->num_planes; i++, n++)
		if (objs)
			objs[n] = fb->obj[i];

	return n;
}

/*
 * The objects of every framebuffer @state pins that its plane does not
 * pin already: the new framebuffers of its planes (prepare_fb), and its
 * writeback targets; into @objs if it is not NULL.  How many.  A plane
 * that keeps its framebuffer keeps it bound: its old state pins it until
 * this commit's cleanup.
 */
static unsigned int pvdc_gem_new_objects(struct drm_atomic_state *state,
					 struct drm_gem_object **objs)
{
	struct drm_plane_state *old_state, *new_state;
	struct drm_connector_state *conn_state;
	struct drm_connector *conn;
	struct drm_plane *plane;
	unsigned int n = 0;
	int i;

	for_each_oldnew_plane_in_state(state, plane, old_state, new_state, i)
		if (new_state->fb && new_state->fb != old_state->fb)
			n = pvdc_gem_fb_objects(new_state->fb, objs, n);
	for_each_new_connector_in_state(state, conn, conn_state, i)
		if (conn_state->writeback_job && conn_state->writeback_job->fb)
			n = pvdc_gem_fb_objects(conn_state->writeback_job->fb,
						objs, n);

	return n;
}

/*
 * One more reservation of @bo: a bound object is kept bound, an unbound
 * one gets a range unless another checked commit reserved one for it.
 */
static int pvdc_gem_reserve_object(struct pvdc_device *pvdc,
				   struct pvdc_gem_object *bo,
				   struct list_head *victims)
{
	int ret;

	if (!drm_mm_node_allocated(&bo->node) &&
	    !drm_mm_node_allocated(&bo->reserve)) {
		ret = pvdc_gem_reserve_range(pvdc, bo, victims);
		if (ret)
			return ret;
	}
	bo->reserved++;

	return 0;
}

/* A tentative reservation is confirmed or ends: checks waiting retry. */
static void pvdc_gem_resolve(struct pvdc_device *pvdc,
			     struct pvdc_reservation *resv)
{
	lockdep_assert_held(&pvdc->bind_lock);

	resv->tentative = false;
	pvdc->tentative--;
	WRITE_ONCE(pvdc->reserve_seq, pvdc->reserve_seq + 1);
	wake_up_all(&pvdc->reserve_wq);
}

/*
 * atomic_check, its last step: reserve in the driver's books what the
 * commit pins anew (pvdc_gem_reserve_range()), all objects or none, so
 * that TEST_ONLY foresees the address space, its fragmentation and the
 * device's limits, and prepare_fb finds its room whatever other heads
 * commit meanwhile.  No device register is written.  The reservation is
 * tentative until pvdc_gem_reserve_confirm(): where only other tentative
 * reservations stand in the way, which may be TEST_ONLY commits, the
 * check waits for them to end (none waits for anything) and tries again.
 * A flip between bound buffers takes bind_lock once, to count its
 * reservations, and allocates nothing.
 */
int pvdc_gem_reserve(struct drm_atomic_state *state)
{
	struct pvdc_atomic_state *pstate = to_pvdc_atomic_state(state);
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct pvdc_reservation *resv;
	unsigned long seq;
	unsigned int i, n;
	bool wait;
	int ret;

	/* A state checked again reserves afresh. */
	pvdc_gem_unreserve(state);
	n = pvdc_gem_new_objects(state, NULL);
	if (!n)
		return 0;
	resv = kzalloc(struct_size(resv, objs, n), GFP_KERNEL);
	if (!resv)
		return -ENOMEM;
	resv->num_objs = n;
	INIT_LIST_HEAD(&resv->victims);
	pvdc_gem_new_objects(state, resv->objs);
	for (i = 0; i < n; i++) {
		ret = pvdc_gem_count_runs(to_pvdc_gem(resv->objs[i]));
		if (ret)
			goto out;
	}

	for (;;) {
		mutex_lock(&pvdc->bind_lock);
		for (i = 0; i < n; i++) {
			ret = pvdc_gem_reserve_object(pvdc,
						      to_pvdc_gem(resv->objs[i]),
						      &resv->victims);
			if (ret)
				break;
		}
		if (!ret) {
			resv->tentative = true;
			pvdc->tentative++;
			mutex_unlock(&pvdc->bind_lock);
			for (i = 0; i < n; i++)
				drm_gem_object_get(resv->objs[i]);
			pstate->resv = resv;
			return 0;
		}
		while (i--)
			pvdc_gem_put_reserve(pvdc, to_pvdc_gem(resv->objs[i]));
		pvdc_gem_restore(pvdc, &resv->victims, true);
		wait = ret == -ENOSPC && pvdc->tentative;
		seq = pvdc->reserve_seq;
		mutex_unlock(&pvdc->bind_lock);
		if (!wait)
			break;
		ret = wait_event_interruptible(pvdc->reserve_wq,
					       READ_ONCE(pvdc->reserve_seq) != seq);
		if (ret)
			break;
	}
	if (ret == -ENOSPC)
		drm_dbg_atomic(state->dev,
			       "no room to bind the commit's %u new buffers in %llu KiB\n",
			       n, (pvdc->bind_end - pvdc->bind_start) >> 10);
out:
	kfree(resv);
	return ret;
}

/*
 * atomic_commit, first thing: the commit happens, what its check evicted
 * stays evicted, and checks that waited for its reservation retry.
 */
void pvdc_gem_reserve_confirm(struct drm_atomic_state *state)
{
	struct pvdc_reservation *resv = to_pvdc_atomic_state(state)->resv;
	struct pvdc_device *pvdc = to_pvdc(state->dev);

	if (!resv || !resv->tentative)
		return;
	mutex_lock(&pvdc->bind_lock);
	pvdc_gem_restore(pvdc, &resv->victims, false);
	pvdc_gem_resolve(pvdc, resv);
	mutex_unlock(&pvdc->bind_lock);
}

/*
 * The commit's objects are pinned (prepare_fb, prepare_writeback_job,
 * which bound them into their reserved ranges), or will never be
 * (TEST_ONLY, a failed check or commit, a backoff before the check runs
 * again): the ranges left unbound are given back, and a tentative
 * reservation's evictions are undone.
 */
void pvdc_gem_unreserve(struct drm_atomic_state *state)
{
	struct pvdc_atomic_state *pstate = to_pvdc_atomic_state(state);
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct pvdc_reservation *resv = pstate->resv;
	unsigned int i;

	if (!resv)
		return;
	mutex_lock(&pvdc->bind_lock);
	for (i = 0; i < resv->num_objs; i++)
		pvdc_gem_put_reserve(pvdc, to_pvdc_gem(resv->objs[i]));
	if (resv->tentative) {
		pvdc_gem_restore(pvdc, &resv->victims, true);
		pvdc_gem_resolve(pvdc, resv);
	}
	mutex_unlock(&pvdc->bind_lock);
	/* The last reference frees the object, which takes bind_lock. */
	for (i = 0; i < resv->num_objs; i++)
		drm_gem_object_put(resv->objs[i]);
	kfree(resv);
	pstate->resv = NULL;
}
