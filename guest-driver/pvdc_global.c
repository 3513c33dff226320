// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: resources shared by all heads.
 *
 * The scaler pool and the device's bandwidth are used by every head, so they
 * are accounted in a drm_private_obj.  A commit that changes them pulls the
 * global state in with pvdc_get_global_state(): the core takes its lock
 * (handling -EDEADLK) and serialises the checks of such commits.
 *
 * The device validates a commit against what the other heads scan out at
 * the latch point, so the tails of commits that changed the global state
 * must also reach the device in the order they were checked.  Each such
 * state gets the next sequence number, and a tail waits for the tail of the
 * previous number to be done before it rings a doorbell.
 */

#include <linux/slab.h>

#include <drm/drm_atomic.h>
#include <drm/drm_atomic_state_helper.h>
#include <drm/drm_managed.h>
#include <drm/drm_print.h>

#include "pvdc_drv.h"

/* A tail that misses its turn this long goes ahead, loudly. */
#define PVDC_GLOBAL_TIMEOUT	(5 * HZ)

static struct drm_private_state *
pvdc_global_duplicate_state(struct drm_private_obj *obj)
{
	struct pvdc_global_state *old = to_pvdc_global_state(obj->state);
	struct pvdc_global_state *state;

	state = kmemdup(old, sizeof(*state), GFP_KERNEL);
	if (!state)
		return NULL;
	__drm_atomic_helper_private_obj_duplicate_state(obj, &state->base);
	state->seq = old->seq + 1;

	return &state->base;
}

static void pvdc_global_destroy_state(struct drm_private_obj *obj,
				      struct drm_private_state *state)
{
	kfree(to_pvdc_global_state(state));
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

	drm_atomic_private_obj_init(&pvdc->drm, &pvdc->global, &state->base,
				    &pvdc_global_funcs);

	return drmm_add_action_or_reset(&pvdc->drm, pvdc_global_fini, NULL);
}

struct pvdc_global_state *pvdc_get_global_state(struct drm_atomic_state *state)
{
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct drm_private_state *priv;

	priv = drm_atomic_get_private_obj_state(state, &pvdc->global);
	if (IS_ERR(priv))
		return ERR_CAST(priv);

	return to_pvdc_global_state(priv);
}

struct pvdc_global_state *
pvdc_get_new_global_state(struct drm_atomic_state *state)
{
	struct pvdc_device *pvdc = to_pvdc(state->dev);
	struct drm_private_state *priv;

	priv = drm_atomic_get_new_private_obj_state(state, &pvdc->global);

	return priv ? to_pvdc_global_state(priv) : NULL;
}

void pvdc_global_commit_begin(struct pvdc_device *pvdc,
			      struct pvdc_global_state *global)
{
	if (!wait_event_timeout(pvdc->global_wq,
				READ_ONCE(pvdc->global_done) + 1 >= global->seq,
				PVDC_GLOBAL_TIMEOUT))
		drm_err(&pvdc->drm, "global commit %llu: previous one not done\n",
			global->seq);
}

void pvdc_global_commit_end(struct pvdc_device *pvdc,
			    struct pvdc_global_state *global)
{
	WRITE_ONCE(pvdc->global_done, global->seq);
	wake_up_all(&pvdc->global_wq);
}
