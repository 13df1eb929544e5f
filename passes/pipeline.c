/* pipeline.c — the compile pipeline as data: one array of {name, fn, level}.
 * The driver runs the passes of the graph's -O level in order, verifies the
 * graph after every pass, prints the text IR before/after named passes, and
 * reports node counts and times per pass. */
#include "passes.h"
#include "../ir/op.h"
#include "../ir/text.h"

#include <string.h>
#include <time.h>

/* What each pass needs before it: autodiff differentiates inferred,
 * folded graphs; fusion, batch-norm folding and memory planning must see
 * the backward nodes (so one plan covers forward and backward). */
static const char *const after_shapes[] = {"infer-shapes", NULL};
static const char *const after_autodiff[] = {"infer-shapes", "autodiff", NULL};
static const char *const after_fold[] = {"infer-shapes", "fold-constants", NULL};

/* lower-precision runs when compile --precision asks for half. */
static int wants_half(const Graph *g) { return g->precision == DT_F16 || g->precision == DT_BF16; }

const Pass pass_pipeline[] = {
    {"infer-shapes", pass_infer_shapes, 0, NULL, NULL},
    {"fold-constants", pass_fold_constants, 0, after_shapes, NULL},
    {"autodiff", pass_autodiff, 0, after_fold, NULL},
    {"simplify", pass_simplify, 2, after_autodiff, NULL},
    {"fold-batchnorm", pass_fold_batchnorm, 2, after_autodiff, NULL},
    {"fuse-layernorm", pass_fuse_layernorm, 2, after_autodiff, NULL},
    {"lower-precision", pass_lower_precision, 0, after_autodiff, wants_half},
    {"fuse-elementwise", pass_fuse_elementwise, 2, after_autodiff, NULL},
    {"fuse-epilogue", pass_fuse_epilogue, 2, after_autodiff, NULL},
    {"plan-memory", pass_plan_memory, 0, after_autodiff, NULL},
    {NULL, NULL, 0, NULL, NULL},
};

int pass_check_order(const Pass *pipeline, Diag *d)
{
    for (const Pass *p = pipeline; p->name; p++)
        for (const char *const *a = p->after; a && *a; a++) {
            const Pass *q = pipeline;
            while (q < p && strcmp(q->name, *a) != 0) q++;
            if (q == p) return diag_error(d, "pipeline: pass '%s' must run after '%s'", p->name, *a);
        }
    return 0;
}

static int check_pass_name(const char *name, const char *option, Diag *d)
{
    if (!name || strcmp(name, "all") == 0) return 0;
    for (const Pass *p = pass_pipeline; p->name; p++)
        if (strcmp(p->name, name) == 0) return 0;
    char names[512] = "";
    for (const Pass *p = pass_pipeline; p->name; p++) {
        strncat(names, " ", sizeof names - strlen(names) - 1);
        strncat(names, p->name, sizeof names - strlen(names) - 1);
    }
    return diag_error(d, "unknown pass '%s' for %s (passes:%s, or all)", name, option, names);
}

static int wants(const char *opt, const char *name)
{
    return opt && (strcmp(opt, "all") == 0 || strcmp(opt, name) == 0);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* A dump of g into w. Kernel notes (Graph.kernel_note) describe the
 * backend's final choice, made on the planned graph: only the dump after the
 * last pass shows them. */
static void dump_graph(Graph *g, Writer *w, int last)
{
    int (*note)(const Graph *, const Node *, char *, size_t) = g->kernel_note;
    if (!last) g->kernel_note = NULL;
    ir_print(g, w, 1);
    g->kernel_note = note;
}

int pass_run_pipeline(Graph *g, const PipelineOptions *o, Diag *d)
{
    static const PipelineOptions none = {0};
    if (!o) o = &none;
    if (check_pass_name(o->print_after, "--print-after", d)) return -1;
    if (check_pass_name(o->print_before, "--print-before", d)) return -1;
    if (pass_check_order(pass_pipeline, d)) return -1;
    if (ir_verify(g, d)) return -1;
    for (const Pass *p = pass_pipeline; p->name; p++) {
        if (g->opt_level < p->min_level || (p->wanted && !p->wanted(g))) continue;
        if (o->dump && wants(o->print_before, p->name)) {
            w_line(o->dump, "# before %s", p->name);
            dump_graph(g, o->dump, 0);
        }
        double t0 = now_ms();
        if (p->fn(g, d)) return -1;
        double t1 = now_ms();
        if (ir_verify(g, d)) return -1;
        if (o->report) w_line(o->report, "pass %s: %d nodes, %.1f ms", p->name, g->n_nodes, t1 - t0);
        if (o->dump && wants(o->print_after, p->name)) {
            w_line(o->dump, "# after %s", p->name);
            dump_graph(g, o->dump, p[1].name == NULL);
        }
    }
    return 0;
}

int pass_count_kernels(const Graph *g)
{
    int k = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        if (ir_op(n->op)->view && n->n_out >= 1 && n->out[0]->alias) continue;
        k++;
    }
    return k;
}
