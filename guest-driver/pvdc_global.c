// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: resources shared by all heads.
 *
 * The scaler pool, the device's bandwidth and the connectors are used by
 * every head, so they are accounted in a drm_private_obj.  A commit that
 * changes a head's share pulls the global state in with
 * pvdc_get_global_state(): the core takes its lock (handling -EDEADLK), so
 * the checks of such commits see each other.  Page flips and other changes
 * that keep every share never touch it.
 *
 * The device checks the sums, and that no two enabled heads drive one
 * connector, at the latch point, against what the other heads scan out
 * then.  So a commit that takes a share another commit gives up must not
 * latch before that commit: the global state keeps, for each head, the
 * drm_crtc_commit that last lowered its share or released its connector,
 * and a commit that raises a share or takes a connector waits for those to
 * be done before it rings (i915's "serialize", without pulling every CRTC
 * in).  A commit that only gives up, or changes nothing shared, waits for
 * nobody.  Within a commit, the tail turns off every head it modesets
 * before it enables any (pvdc_commit.c).
 */

#include <linux/slab.h>

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_state_helper.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "pvdc_drv.h"

static struct drm_private_state *
pvdc_global_duplicate_state(struct drm_private_obj *obj)
{
	struct pvdc_global_state *old = to_pvdc_global_state(obj->state);
	struct pvdc_global_state *state;
	unsigned int h;

	state = kmemdup(old, sizeof(*state), GFP_KERNEL);
	if (!state)
		return NULL;
	__drm_atomic_helper_private_obj_duplicate_state(obj, &state->base);

	for (h = 0; h < PVDC_MAX_HEADS; h++) {
		struct drm_crtc_commit *commit = state->release[h];

		/* Latched: nobody has to wait for it any more. */
		if (commit && try_wait_for_completion(&commit->flip_done))
			state->release[h] = NULL;
		else if (commit)
			drm_crtc_commit_get(commit);
	}
	state->lowered = 0;
	state->takes = false;

	return &state->base;
}

static void pvdc_global_destroy_state(struct drm_private_obj *obj,
				      struct drm_private_state *state)
{
	struct pvdc_global_state *global = to_pvdc_global_state(state);
	unsigned int h;

	for (h = 0; h < PVDC_MAX_HEADS; h++)
		if (global->release[h])
			drm_crtc_commit_put(global->release[h]);
	kfree(global);
}

static const struct drm_private_state_funcs pvdc_global_funcs = {
	.atomic_duplicate_state = pvdc_global_duplicate_state,
	.atomic_destroy_state = pvdc_global_destroy_state,
};

static void pvdc_global_fini(struct drm_device *drm, void *arg)
{
	drm_atomic_private_obj_fini(&to_pvdc(drm)->global);
}

int pvdc_global_init(struct pvdc_device *pvdc)
{
	struct pvdc_global_state *state;

	state = kzalloc(sizeof(*state), GFP_KERNEL);
	if (!state)
		return -ENOMEM;
	/* Every head is off after pvdc_sanitize(). */
	memset(state->route, PVDC_NO_ROUTE, sizeof(state->route));

	drm_atomic_private_obj_init(&pvdc->drm, &pvdc->global, &state->base,
				    &pvdc_global_funcs);

	return drmm_add_action_or_reset(&pvdc->drm, pvdc_global_fini, NULL);
}

static struct pvdc_global_state *
pvdc_get_global_state(struct drm_atomic_state *state)
{
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct drm_private_state *priv;

	priv = drm_atomic_get_private_obj_state(state, &pvdc->global);
	if (IS_ERR(priv))
		return ERR_CAST(priv);

	return to_pvdc_global_state(priv);
}

static struct pvdc_global_state *
pvdc_global_state(struct drm_atomic_state *state, bool new)
{
	struct drm_private_obj *obj = &to_pvdc(state->dev)->global;
	struct drm_private_state *priv;

	if (new)
		priv = drm_atomic_get_new_private_obj_state(state, obj);
	else
		priv = drm_atomic_get_old_private_obj_state(state, obj);

	return priv ? to_pvdc_global_state(priv) : NULL;
}

bool pvdc_global_in_state(struct drm_atomic_state *state)
{
	return pvdc_global_state(state, true);
}

/* ------------------------------------------------------------------------ */
/* Check                                                                    */
/* ------------------------------------------------------------------------ */

/*
 * Whether the commit changes a head's share of the device: its route is
 * one, and changes only with a modeset.
 */
static bool pvdc_global_needed(struct drm_atomic_state *state)
{
	struct drm_crtc_state *old_state, *new_state;
	struct drm_crtc *crtc;
	int i;

	for_each_oldnew_crtc_in_state(state, crtc, old_state, new_state, i) {
		if (drm_atomic_crtc_needs_modeset(new_state) ||
		    to_pvdc_crtc_state(new_state)->scalers !=
		    to_pvdc_crtc_state(old_state)->scalers)
			return true;
	}

	return false;
}

static int pvdc_global_check_scalers(struct drm_atomic_state *state,
				     struct pvdc_global_state *global)
{
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct drm_crtc_state *crtc_state;
	struct drm_crtc *crtc;
	unsigned int h, scalers = 0;
	int i;

	for_each_new_crtc_in_state(state, crtc, crtc_state, i)
		global->scalers[drm_crtc_index(crtc)] =
			to_pvdc_crtc_state(crtc_state)->scalers;
	for (h = 0; h < pvdc->num_heads; h++)
		scalers += global->scalers[h];
	if (scalers > pvdc->num_scalers) {
		drm_dbg_atomic(&pvdc->drm, "%u scaled planes, %u scalers\n",
			       scalers, pvdc->num_scalers);
		return -EINVAL;
	}

	return 0;
}

/*
 * The device refuses to change the allocation of an enabled head, so a
 * head gets its allocation when it is enabled: what its planes need, room
 * for a full-size cursor, and up to a fair share of what is left, so that
 * later plane updates rarely need more.  They never get more by a modeset:
 * a plane update that does not fit is refused (pvdc_crtc.c).
 */
static int pvdc_global_allocate_bandwidth(struct drm_atomic_state *state,
					  struct pvdc_global_state *global)
{
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	u32 share = pvdc->bandwidth_total / pvdc->num_heads;
	u32 cursor = pvdc_crtc_cursor_bandwidth(pvdc);
	struct drm_crtc_state *crtc_state;
	struct drm_crtc *crtc;
	u64 used = 0, needs = 0;
	unsigned int h;
	u32 slack;
	int i;

	for_each_new_crtc_in_state(state, crtc, crtc_state, i) {
		struct pvdc_crtc_state *pstate = to_pvdc_crtc_state(crtc_state);

		if (!drm_atomic_crtc_needs_modeset(crtc_state))
			continue;
		global->bandwidth[drm_crtc_index(crtc)] = 0;
		if (crtc_state->active)
			needs += pstate->need;
	}
	for (h = 0; h < pvdc->num_heads; h++)
		used += global->bandwidth[h];
	if (used + needs > pvdc->bandwidth_total) {
		drm_dbg_atomic(&pvdc->drm, "needs %llu KiB of bandwidth, has %u\n",
			       used + needs, pvdc->bandwidth_total);
		return -EINVAL;
	}

	slack = pvdc->bandwidth_total - used - needs;
	for_each_new_crtc_in_state(state, crtc, crtc_state, i) {
		struct pvdc_crtc_state *pstate = to_pvdc_crtc_state(crtc_state);
		u32 want, extra;

		if (!drm_atomic_crtc_needs_modeset(crtc_state))
			continue;
		if (!crtc_state->active) {
			pstate->regs[PVDC_REG_INDEX(PVDC_HS_BANDWIDTH)] = 0;
			continue;
		}
		want = max(share, pstate->need + cursor);
		extra = min(want - pstate->need, slack);
		slack -= extra;
		pstate->regs[PVDC_REG_INDEX(PVDC_HS_BANDWIDTH)] =
			pstate->need + extra;
		global->bandwidth[drm_crtc_index(crtc)] = pstate->need + extra;
	}

	return 0;
}

/*
 * The connector each enabled head drives.  The DRM core keeps a connector
 * on one CRTC at most, so the heads that drive one of their CRTC's
 * connectors never share it.  A head that is on with its writeback
 * connector alone still drives a connector for the device (HS_CONNECTOR
 * names one of an enabled head): one no other head drives, its own if it
 * can.  The device refuses a connector driven by two enabled heads
 * (PVDC_ERR_CONNECTOR): so is a commit that gives a CRTC the connector
 * such a head kept.
 */
static int pvdc_global_route(struct drm_atomic_state *state,
			     struct pvdc_global_state *global)
{
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct drm_crtc_state *crtc_state;
	struct drm_crtc *crtc;
	unsigned long used = 0;
	unsigned int h, c;
	int i;

	for_each_new_crtc_in_state(state, crtc, crtc_state, i) {
		int connector = to_pvdc_crtc_state(crtc_state)->connector;

		if (drm_atomic_crtc_needs_modeset(crtc_state))
			global->route[drm_crtc_index(crtc)] =
				crtc_state->active && connector >= 0 ?
				connector : PVDC_NO_ROUTE;
	}
	for (h = 0; h < pvdc->num_heads; h++) {
		c = global->route[h];
		if (c == PVDC_NO_ROUTE)
			continue;
		if (__test_and_set_bit(c, &used)) {
			drm_dbg_atomic(&pvdc->drm,
				       "connector %u kept by a writeback-only head\n",
				       c);
			return -EINVAL;
		}
	}

	for_each_new_crtc_in_state(state, crtc, crtc_state, i) {
		struct pvdc_crtc_state *pstate = to_pvdc_crtc_state(crtc_state);

		h = drm_crtc_index(crtc);
		if (!drm_atomic_crtc_needs_modeset(crtc_state) ||
		    !crtc_state->active || pstate->connector >= 0)
			continue;
		c = test_bit(h, &used) ? find_first_zero_bit(&used,
							     pvdc->num_heads) : h;
		if (c >= pvdc->num_heads)
			return -EINVAL;
		__set_bit(c, &used);
		global->route[h] = c;
		pstate->regs[PVDC_REG_INDEX(PVDC_HS_CONNECTOR)] = c;
	}

	return 0;
}

/* Which heads give up a share, and whether any head takes one. */
static void pvdc_global_changes(struct drm_atomic_state *state,
				struct pvdc_global_state *global)
{
	struct pvdc_global_state *old = pvdc_global_state(state, false);
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	unsigned int h;

	global->lowered = 0;
	global->takes = false;
	for (h = 0; h < pvdc->num_heads; h++) {
		if (global->scalers[h] < old->scalers[h] ||
		    global->bandwidth[h] < old->bandwidth[h])
			global->lowered |= BIT(h);
		if (global->scalers[h] > old->scalers[h] ||
		    global->bandwidth[h] > old->bandwidth[h])
			global->takes = true;
		/* A connector moves: released by the old head, taken anew. */
		if (global->route[h] == old->route[h])
			continue;
		if (old->route[h] != PVDC_NO_ROUTE)
			global->lowered |= BIT(h);
		if (global->route[h] != PVDC_NO_ROUTE)
			global->takes = true;
	}
}

/*
 * The scalers, the bandwidth and the connectors are shared by all heads;
 * runs once the CRTCs summed up what their planes need and found their
 * connectors.
 */
int pvdc_global_check(struct drm_atomic_state *state)
{
	struct pvdc_global_state *global;
	int ret;

	if (!pvdc_global_needed(state))
		return 0;

	global = pvdc_get_global_state(state);
	if (IS_ERR(global))
		return PTR_ERR(global);

	ret = pvdc_global_check_scalers(state, global);
	if (ret)
		return ret;
	ret = pvdc_global_allocate_bandwidth(state, global);
	if (ret)
		return ret;
	ret = pvdc_global_route(state, global);
	if (ret)
		return ret;
	pvdc_global_changes(state, global);

	return 0;
}

/* ------------------------------------------------------------------------ */
/* Commit                                                                   */
/* ------------------------------------------------------------------------ */

/*
 * atomic_commit_setup: the commit objects exist now.  A head whose share
 * goes down is released when this commit latches on it.
 *
 * Last moment the new global state may be read: once swapped in, a commit
 * of other heads can swap it out and free it before this commit's tail
 * even starts (private objects have no commit tracking).  What the tail
 * needs of it is copied into the commit.
 */
int pvdc_global_commit_setup(struct drm_atomic_state *state)
{
	struct pvdc_global_state *global = pvdc_global_state(state, true);
	struct drm_crtc_state *crtc_state;
	struct drm_crtc *crtc;
	int i;

	if (!global)
		return 0;

	to_pvdc_atomic_state(state)->takes = global->takes;

	for_each_new_crtc_in_state(state, crtc, crtc_state, i) {
		unsigned int h = drm_crtc_index(crtc);

		if (!(global->lowered & BIT(h)) || !crtc_state->commit)
			continue;
		if (global->release[h])
			drm_crtc_commit_put(global->release[h]);
		global->release[h] = drm_crtc_commit_get(crtc_state->commit);
	}

	return 0;
}

/*
 * Before a commit that takes a share rings: every commit that gave one up
 * before it was checked has latched.  No timeout: the device latches every
 * armed commit at an instant fixed when it was armed.  The tail reads only
 * the old global state, which is this commit's to free.
 */
void pvdc_global_serialize(struct drm_atomic_state *state)
{
	struct pvdc_global_state *old = pvdc_global_state(state, false);
	unsigned int h;

	if (!to_pvdc_atomic_state(state)->takes || WARN_ON(!old))
		return;

	for (h = 0; h < PVDC_MAX_HEADS; h++)
		if (old->release[h])
			wait_for_completion(&old->release[h]->flip_done);
}
