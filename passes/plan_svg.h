/* plan_svg.h — a finished memory plan as a picture or a table
 * (`graphc dump --memory-plan=svg|text`). */
#ifndef GRAPHC_PLAN_SVG_H
#define GRAPHC_PLAN_SVG_H

#include "../ir/ir.h"
#include "../ir/writer.h"

/* Writes g's memory plan (plan-memory ran) as a standalone SVG: one
 * rectangle per buffer, x = its lifetime over the schedule steps, y = its
 * bytes in the arena. Same plan, same bytes. */
void pass_plan_svg(const Graph *g, Writer *w);

/* The same plan as text: a header line with the totals, then one line
 * "OFFSET SIZE FIRST LAST NAME" per buffer. */
void pass_plan_text(const Graph *g, Writer *w);

#endif
