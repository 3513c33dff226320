// SPDX-License-Identifier: GPL-2.0-only
/*
 * pvdc: the tracepoints of pvdc_trace.h, defined once.  Kbuild adds this
 * directory to the include path of this file alone: define_trace.h
 * includes the header again by its name.
 */

#define CREATE_TRACE_POINTS
#include "pvdc_trace.h"
