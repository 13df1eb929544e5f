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

/* Shape inference; folds constant nodes as it goes (pass_fold_node). */
int pass_infer_shapes(Graph *g, Diag *d);
/* Folds what is left and removes dead nodes and values (fold_constants.c). */
int pass_fold_constants(Graph *g, Diag *d);
int pass_plan_memory(Graph *g, Diag *d);

/* Folds node n, whose outputs' shapes are inferred, when its inputs are
 * constants (or only their shapes matter): 1 if folded (its outputs are now
 * constants; the caller drops n from the schedule), 0 if not, -1 on error. */
int pass_fold_node(Graph *g, Node *n, Diag *d);

#endif
