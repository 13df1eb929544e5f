/* passes.h — every pass has one signature; the pipeline is a list of
 * named passes (see pipeline.c), each with the lowest -O level it runs at. */
#ifndef GRAPHC_PASSES_H
#define GRAPHC_PASSES_H

#include "../ir/ir.h"
#include "../ir/writer.h"

typedef int (*PassFn)(Graph *g, Diag *d);

typedef struct Pass {
    const char *name;
    PassFn fn;
    int min_level; /* runs when g->opt_level >= min_level */
    /* Passes that must come earlier in the pipeline (NULL-terminated; a
     * pipeline that breaks this is refused before anything runs). */
    const char *const *after;
    /* NULL: the pass runs at its levels; else it runs only when this says
     * so for the graph (an option asked for it), and otherwise neither runs
     * nor shows in dumps and reports. */
    int (*wanted)(const Graph *g);
} Pass;

/* The compile pipeline, in order; terminated by {NULL, NULL, 0}. */
extern const Pass pass_pipeline[];

typedef struct PipelineOptions {
    /* "all" or a pass name: the text IR is appended to `dump` after (before)
     * that pass, headed "# after PASS" ("# before PASS"). Unknown names are
     * an error listing the passes. NULL: none. */
    const char *print_after, *print_before;
    Writer *dump;
    /* When set, one line per pass that ran: "pass NAME: N nodes, T ms". */
    Writer *report;
} PipelineOptions;

/* 0 when every pass of the pipeline comes after the passes its `after`
 * list names, else -1 naming the pass and the one it must follow. */
int pass_check_order(const Pass *pipeline, Diag *d);
/* Runs the passes of g->opt_level in order; the verifier runs before the
 * first and after each. */
int pass_run_pipeline(Graph *g, const PipelineOptions *o, Diag *d);

/* Kernels the generated run executes: the scheduled nodes, less the view
 * nodes whose output memory planning made an alias of their input. */
int pass_count_kernels(const Graph *g);

/* Shape inference; folds constant nodes as it goes (pass_fold_node). */
int pass_infer_shapes(Graph *g, Diag *d);
/* Reverse-mode autodiff and the optimizer update when g->train is set
 * (autodiff.c); nothing otherwise. */
int pass_autodiff(Graph *g, Diag *d);
/* Folds what is left and removes dead nodes and values (fold_constants.c). */
int pass_fold_constants(Graph *g, Diag *d);
/* Identity/Dropout/no-op Reshape and Cast removal, Reshape chains, inverse
 * Transposes, x*1 and x+0, CSE and DCE (simplify.c). */
int pass_simplify(Graph *g, Diag *d);
/* BatchNormalization folded into the Conv/Gemm before it (fold_batchnorm.c). */
int pass_fold_batchnorm(Graph *g, Diag *d);
/* The decomposed LayerNorm (ReduceMean, Sub, Pow, ReduceMean, Add, Sqrt,
 * Div, Mul, Add) rewritten as one LayerNormalization (fuse_layernorm.c). */
int pass_fuse_layernorm(Graph *g, Diag *d);
/* --precision=fp16|bf16: f32 tensors held in half where the target takes
 * them, Casts at the boundaries (lower_precision.c). */
int pass_lower_precision(Graph *g, Diag *d);
/* Elementwise chains and trees become one Fused node (fuse_elementwise.c). */
int pass_fuse_elementwise(Graph *g, Diag *d);
/* Bias, activation and residual folded into Conv/Gemm/MatMul (fuse_epilogue.c). */
int pass_fuse_epilogue(Graph *g, Diag *d);
/* Liveness, in-place reuse (at -O2), views, workspaces, offsets (plan_memory.c). */
int pass_plan_memory(Graph *g, Diag *d);

/* One buffer of a finished memory plan: a value (or a node's workspace)
 * that owns arena bytes [offset, offset+size) from step first to step last
 * (inclusive, indices into g->nodes). Values that share a buffer in place
 * and views appear once, under the buffer's root value. */
typedef struct PlanEntry {
    const char *name; /* value name, or "NODE (workspace)" */
    int64_t offset, size;
    int first, last;
    int is_workspace;
} PlanEntry;
/* The buffers of g's memory plan (plan-memory ran), in order of first step;
 * *out is malloc'd (caller frees). Returns the count. */
int pass_plan_entries(const Graph *g, PlanEntry **out);

/* Folds node n, whose outputs' shapes are inferred, when its inputs are
 * constants (or only their shapes matter): 1 if folded (its outputs are now
 * constants; the caller drops n from the schedule), 0 if not, -1 on error. */
int pass_fold_node(Graph *g, Node *n, Diag *d);

#endif
