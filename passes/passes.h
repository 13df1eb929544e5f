/* passes.h — every pass has one signature; the pipeline is a list of
 * named passes (see pipeline.c). */
#ifndef GRAPHC_PASSES_H
#define GRAPHC_PASSES_H

#include "../ir/ir.h"
#include "../ir/writer.h"

typedef int (*PassFn)(Graph *g, Diag *d);

typedef struct Pass {
    const char *name;
    PassFn fn;
} Pass;

/* The compile pipeline, in order; terminated by {NULL, NULL}. */
extern const Pass pass_pipeline[];

/* Runs the pipeline. When print_after is "all" or a pass name, the text IR
 * is appended to `dump` after that pass ("; after PASS" header). Unknown
 * names are an error listing the passes. The verifier runs after each pass. */
int pass_run_pipeline(Graph *g, const char *print_after, Writer *dump, Diag *d);

int pass_infer_shapes(Graph *g, Diag *d);
int pass_plan_memory(Graph *g, Diag *d);

#endif
