/* compile.c — the one compile function (see compile.h).
 *
 * api_load: model file → graph (frontend/load.c), then the --bind requests:
 * each names a graph input and a .npy file whose dtype and shape must match
 * it exactly; the input becomes a constant (ir_bind_input). The size policy
 * (--max-tensor-bytes) travels on the graph: shape inference and memory
 * planning enforce it.
 *
 * api_compile_graph: the backend's name check comes first (a bad name fails
 * before any pass runs), then the pipeline of the level with the backend's
 * workspace policy, then the backend's per-node support check, then the
 * backend writes the folder. The report lines are appended only after the
 * folder was written, so a report never describes a compile that failed.
 * api_compile_to_writer does the same steps but has the backend render its
 * sources into memory (the fuzz targets in tests/fuzz compile this way).
 */
#include "compile.h"

#include "../backend/c/cgen_model.h"
#include "../frontend/npy.h"
#include "../ir/custom_op.h"
#include "../passes/passes.h"

#include <stdlib.h>
#include <string.h>

static const Backend *job_backend(const CompileJob *job)
{
    return job->backend ? job->backend : backend_list[0];
}

/* Applies lo's --bind requests to g. */
static int apply_binds(Graph *g, const LoadOptions *lo, Diag *d)
{
    for (int k = 0; k < lo->n_binds; k++) {
        const char *eq = strrchr(lo->binds[k], '=');
        GC_ASSERT(eq && eq != lo->binds[k]);
        char *name = strndup(lo->binds[k], (size_t)(eq - lo->binds[k]));
        if (!name) return diag_error(d, "out of memory");
        Value *v = ir_find_value(g, name);
        int rc = 0;
        if (!v || v->kind != VK_INPUT) {
            rc = diag_error(d, "--bind: '%s' is not a graph input", name);
        } else {
            NpyArray a;
            const char *file = d->file;
            d->file = NULL; /* the npy reader names its own file */
            rc = npy_read(eq + 1, &a, d);
            d->file = file;
            if (rc == 0) {
                char s1[128], s2[128];
                if (!npy_dtype_fits(a.dtype, v->dtype) || !ir_shape_eq(&a.shape, &v->shape))
                    rc = diag_error(d, "--bind: '%s' is %s%s but input '%s' is %s%s", eq + 1, ir_dtype_name(a.dtype),
                                    ir_shape_str(&a.shape, s1, sizeof s1), name, ir_dtype_name(v->dtype),
                                    ir_shape_str(&v->shape, s2, sizeof s2));
                else
                    ir_bind_input(g, v, a.data);
                npy_free(&a);
            }
        }
        free(name);
        if (rc) return rc;
    }
    return 0;
}

Graph *api_load(const char *path, const LoadOptions *lo, Diag *d)
{
    d->file = path;
    Graph *g = load_model_opts(path, lo, d);
    if (!g) return NULL;
    g->no_fold = lo->no_fold;
    g->max_tensor_bytes = lo->max_tensor_bytes;
    g->max_dim = lo->max_dim;
    if (apply_binds(g, lo, d)) {
        ir_graph_free(g);
        return NULL;
    }
    return g;
}

int api_cuda_options(CompileJob *job, const char *precision, const char *layout, int training,
                     const char *const names[3], Diag *d)
{
    const char *target = job_backend(job)->name;
    const int cuda = strcmp(target, "cuda") == 0;
    if (precision && strcmp(precision, "fp32") && strcmp(precision, "fp16") && strcmp(precision, "bf16"))
        return diag_error(d, "%s needs fp32, fp16 or bf16, got '%s'", names[0], precision);
    if (layout && strcmp(layout, "auto") && strcmp(layout, "nchw") && strcmp(layout, "nhwc"))
        return diag_error(d, "%s needs auto, nchw or nhwc, got '%s'", names[1], layout);
    if (layout && !cuda) return diag_error(d, "%s needs %s (the target is '%s')", names[1], names[2], target);
    job->layout = !layout || strcmp(layout, "auto") == 0 ? GRAPH_LAYOUT_AUTO
                  : strcmp(layout, "nchw") == 0          ? GRAPH_LAYOUT_NCHW
                                                         : GRAPH_LAYOUT_NHWC;
    job->precision = (DType)0;
    if (precision && strcmp(precision, "fp32") != 0) {
        if (!cuda)
            return diag_error(d, "%s=%s needs %s (the %s target computes in the model's own types)", names[0], precision,
                              names[2], target);
        if (training)
            return diag_error(d, "%s=%s does not apply to --grad or --train (training computes in f32)", names[0],
                              precision);
        job->precision = strcmp(precision, "fp16") == 0 ? DT_F16 : DT_BF16;
    }
    return 0;
}

int api_run_pipeline(Graph *g, const CompileJob *job, Diag *d)
{
    GC_ASSERT(job->opt_level == 0 || job->opt_level == 2);
    g->opt_level = job->opt_level;
    g->workspace = job_backend(job)->workspace;
    g->kernel_note = job_backend(job)->kernel_note;
    g->extra_reads = job_backend(job)->extra_reads;
    g->stored_bytes = job_backend(job)->stored_bytes;
    g->plan_keep_forward = job->plan_keep_forward;
    g->max_threads = job->max_threads;
    g->layout = job->layout;
    g->precision = job->precision;
    g->supports = job_backend(job)->supports;
    PipelineOptions po = {0};
    po.print_after = job->print_after;
    po.print_before = job->print_before;
    po.dump = job->dump;
    po.report = job->report;
    return pass_run_pipeline(g, &po, d);
}

/* What comes before the backend writes: name check, pipeline, support check
 * (for the inference pass of a training job too, without dumps or report). */
static int prepare(Graph *g, const Backend *be, const CompileJob *job, Diag *d)
{
    if (be->check_name(job->out.name, d)) return -1;
    if (api_run_pipeline(g, job, d)) return -1;
    for (int i = 0; i < g->n_nodes; i++)
        if (be->supports(g, g->nodes[i], d)) return -1;
    Graph *ig = job->infer_graph;
    if (ig) {
        CompileJob ij = *job;
        ij.print_after = ij.print_before = NULL;
        ij.report = NULL;
        if (api_run_pipeline(ig, &ij, d)) return -1;
        for (int i = 0; i < ig->n_nodes; i++)
            if (be->supports(ig, ig->nodes[i], d)) return -1;
    }
    return 0;
}

/* The backend options of the job, with the inference graph of a training job. */
static BackendOptions job_out(const CompileJob *job)
{
    BackendOptions o = job->out;
    o.infer_graph = job->infer_graph;
    return o;
}

int api_compile_to_writer(Graph *g, Writer *out, const CompileJob *job, Diag *d)
{
    const Backend *be = job_backend(job);
    if (!be->render) return diag_error(d, "the %s backend cannot write its output into memory", be->name);
    if (prepare(g, be, job, d)) return -1;
    BackendOptions o = job_out(job);
    return be->render(g, &o, out, d);
}

int api_compile_graph(Graph *g, const char *dir, const CompileJob *job, Diag *d)
{
    const Backend *be = job_backend(job);
    if (prepare(g, be, job, d)) return -1;
    BackendOptions o = job_out(job);
    if (be->write(g, dir, &o, d)) return -1;
    if (job->report) {
        if (g->train) {
            int64_t st = 0;
            for (int i = 0; i < g->n_values; i++)
                if (g->values[i]->kind == VK_STATE) st += (ir_value_bytes(g->values[i]) + 63) / 64 * 64;
            w_line(job->report, "state: %lld bytes", (long long)st);
        }
        w_line(job->report, "kernels: %d", pass_count_kernels(g));
        w_line(job->report, "arena: %lld bytes, lower bound: %lld bytes, no-reuse: %lld bytes",
               (long long)g->arena_bytes, (long long)g->plan_lower_bound, (long long)g->plan_no_reuse);
        if (g->n_syms) {
            /* runtime shapes: the symbols and their bounds; the arena above is at the maximum */
            Writer sw;
            w_init(&sw);
            for (int k = 0; k < g->n_syms; k++)
                w_printf(&sw, "%s%s in [%lld, %lld]", k ? ", " : "", g->syms[k].name, (long long)g->syms[k].lo,
                         (long long)g->syms[k].hi);
            w_line(job->report, "runtime dims: %s; arena planned at the maximum", sw.buf);
            w_free(&sw);
        }
    }
    return 0;
}

int api_load_ops(const char *path, Diag *d)
{
    for (size_t i = 0; i < gc_runtime_files_count; i++)
        if (strcmp(gc_runtime_files[i].name, "custom_op.h") == 0)
            return ir_custom_load(path, (const char *)gc_runtime_files[i].data, gc_runtime_files[i].size, d);
    GC_ASSERT(!"graphc/custom_op.h missing from the embedded files");
    return -1;
}
