/* builder.c — the public C API (include/graphc/graphc.h) on top of the IR.
 * It is a thin checked layer: it turns dtype names and op names into IR
 * enums, rejects what the IR would only assert on (bad ranks, negative dims,
 * values from another graph, duplicate names, wrong input/output counts)
 * with a message, and forwards attribute text to ir_set_attrs so the builder
 * and the text IR accept the same attribute syntax. Compiling goes through
 * api_compile_graph, the compile function of the command-line driver too.
 *
 * The IR reports into its own Diag; every public function reports into a
 * local one and copies the message out (export_diag), so the public GcDiag
 * stays a plain struct of the header.
 */
#include "graphc/graphc.h"

#include "../ir/interp.h"
#include "../ir/ir.h"
#include "../ir/op.h"
#include "../ir/text.h"
#include "../ir/writer.h"
#include "../passes/passes.h"
#include "compile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert((int)GC_WEIGHTS_INCBIN == BACKEND_WEIGHTS_INCBIN && (int)GC_WEIGHTS_CARRAY == BACKEND_WEIGHTS_CARRAY &&
                   (int)GC_WEIGHTS_FILE == BACKEND_WEIGHTS_FILE,
               "GcWeights and BackendWeights have the same values");

/* Copies the outcome of a call that reported into d into the caller's gd;
 * returns rc. */
static int export_diag(GcDiag *gd, const Diag *d, int rc)
{
    if (gd && d->n_errors) {
        gd->n_errors += d->n_errors;
        snprintf(gd->msg, sizeof gd->msg, "%s", d->msg);
    }
    return rc;
}

GcGraph *gc_graph_new(const char *name) { return ir_graph_new(name); }

GcGraph *gc_load(const char *path, GcDiag *gd)
{
    Diag d = {0};
    LoadOptions lo = {0};
    GcGraph *g = path ? api_load(path, &lo, &d) : NULL;
    if (!path) diag_error(&d, "gc_load: path is NULL");
    if (!g) export_diag(gd, &d, -1);
    return g;
}

void gc_graph_free(GcGraph *g) { ir_graph_free(g); }

int gc_load_ops(const char *path, GcDiag *gd)
{
    Diag d = {0};
    int rc = path ? api_load_ops(path, &d) : diag_error(&d, "gc_load_ops: path is NULL");
    return export_diag(gd, &d, rc);
}

/* Checks the parts shared by inputs and constants; fills *t and *s. */
static int check_tensor(GcGraph *g, const char *what, const char *name, const char *dtype, int rank,
                        const int64_t *dims, DType *t, Shape *s, Diag *d)
{
    if (!g) return diag_error(d, "%s: graph is NULL", what);
    if (!name || !*name) return diag_error(d, "%s needs a name", what);
    if (ir_find_value(g, name)) return diag_error(d, "%s '%s': the name is already used", what, name);
    if (!dtype || ir_dtype_parse(dtype, t))
        return diag_error(d, "%s '%s': unknown dtype '%s' (expected f32 f64 f16 bf16 i8 u8 i16 i32 i64 bool)", what,
                          name, dtype ? dtype : "(null)");
    if (rank < 0 || rank > IR_MAX_RANK)
        return diag_error(d, "%s '%s': rank %d is outside 0..%d", what, name, rank, IR_MAX_RANK);
    if (rank > 0 && !dims) return diag_error(d, "%s '%s': dims is NULL", what, name);
    for (int i = 0; i < rank; i++)
        if (dims[i] < 0) return diag_error(d, "%s '%s': dimension %d is negative (%lld)", what, name, i, (long long)dims[i]);
    *s = ir_shape(rank, dims);
    int64_t n, bytes;
    if (ir_shape_numel(s, &n) || ir_mul_ok(n, (int64_t)ir_dtype_size(*t), &bytes))
        return diag_error(d, "%s '%s': shape is too large", what, name);
    return 0;
}

GcValue *gc_input(GcGraph *g, const char *name, const char *dtype, int rank, const int64_t *dims, GcDiag *gd)
{
    DType t;
    Shape s = {0};
    Diag d = {0};
    if (check_tensor(g, "input", name, dtype, rank, dims, &t, &s, &d)) return export_diag(gd, &d, -1), NULL;
    return ir_add_input(g, name, t, &s);
}

GcValue *gc_const(GcGraph *g, const char *name, const char *dtype, int rank, const int64_t *dims,
                  const void *data, GcDiag *gd)
{
    DType t;
    Shape s = {0};
    Diag d = {0};
    if (check_tensor(g, "constant", name, dtype, rank, dims, &t, &s, &d)) return export_diag(gd, &d, -1), NULL;
    if (!data && ir_numel(&s) > 0)
        return export_diag(gd, &d, diag_error(&d, "constant '%s': data is NULL", name)), NULL;
    return ir_add_const(g, name, t, &s, data, 1);
}

static int belongs(const GcGraph *g, const GcValue *v)
{
    return v->id >= 0 && v->id < g->n_values && g->values[v->id] == v;
}

/* Shared by gc_op and gc_op_multi; n_out < 0 means the op's minimum. */
static Node *add_op(GcGraph *g, const char *op, const char *name, GcValue *const *in, int n_in,
                    const char *attrs, int n_out, Diag *d)
{
    if (!g) return diag_error(d, "op: graph is NULL"), NULL;
    if (!op) return diag_error(d, "op: op name is NULL"), NULL;
    int k = ir_op_lookup(op);
    if (k < 0) return diag_error(d, "unknown op '%s'", op), NULL;
    const OpDesc *od = ir_op(k);
    const char *label = name ? name : od->name;
    if (n_in < 0 || n_in < od->min_in || (od->max_in >= 0 && n_in > od->max_in))
        return diag_error(d, "node '%s' (%s): expects %d..%d inputs, got %d", label, od->name, od->min_in,
                          od->max_in, n_in), NULL;
    if (n_out < 0) n_out = od->min_out;
    if (n_out < od->min_out || (od->max_out >= 0 && n_out > od->max_out))
        return diag_error(d, "node '%s' (%s): expects %d..%d outputs, got %d", label, od->name, od->min_out,
                          od->max_out, n_out), NULL;
    if (n_in > 0 && !in) return diag_error(d, "node '%s' (%s): inputs array is NULL", label, od->name), NULL;
    for (int i = 0; i < n_in; i++) {
        if (in[i] && !belongs(g, in[i]))
            return diag_error(d, "node '%s' (%s): input %d does not belong to this graph", label, od->name, i), NULL;
        if (!in[i] && i < od->min_in)
            return diag_error(d, "node '%s' (%s): required input %d is NULL", label, od->name, i), NULL;
    }
    if (name) {
        for (int i = 0; i < g->n_nodes; i++)
            if (strcmp(g->nodes[i]->name, name) == 0)
                return diag_error(d, "node '%s' (%s): the node name is already used", name, od->name), NULL;
    }
    /* Outputs are named after the node ("fc1", then "fc1_1", ...), so the
     * text IR prints `%fc1 = Gemm(...)`; unnamed nodes get fresh names. */
    const char **out_names = NULL;
    char (*buf)[280] = NULL;
    if (name && n_out > 0) {
        out_names = calloc((size_t)n_out, sizeof *out_names);
        buf = calloc((size_t)n_out, sizeof *buf);
        GC_ASSERT(out_names && buf);
        for (int i = 0; i < n_out; i++) {
            if (i == 0) snprintf(buf[i], sizeof buf[i], "%.256s", name);
            else snprintf(buf[i], sizeof buf[i], "%.256s_%d", name, i);
            out_names[i] = buf[i];
        }
    }
    int n_nodes = g->n_nodes, n_values = g->n_values;
    Node *n = ir_add_node(g, k, name, in, n_in, n_out, out_names);
    free(out_names);
    free(buf);
    if (attrs && *attrs && ir_set_attrs(g, n, attrs, d)) {
        /* Roll back: the node and its outputs are the last entries. */
        g->n_nodes = n_nodes;
        g->n_values = n_values;
        return NULL;
    }
    return n;
}

GcValue *gc_op(GcGraph *g, const char *op, const char *name, GcValue *const *in, int n_in, const char *attrs,
               GcDiag *gd)
{
    Diag d = {0};
    Node *n = add_op(g, op, name, in, n_in, attrs, -1, &d);
    if (!n) return export_diag(gd, &d, -1), NULL;
    if (n->n_out == 0) return export_diag(gd, &d, diag_node_error(&d, n, "op has no outputs")), NULL;
    return n->out[0];
}

int gc_op_multi(GcGraph *g, const char *op, const char *name, GcValue *const *in, int n_in, const char *attrs,
                int n_out, GcValue **out, GcDiag *gd)
{
    Diag d = {0};
    if (n_out > 0 && !out) return export_diag(gd, &d, diag_error(&d, "op '%s': out array is NULL", op ? op : "(null)"));
    Node *n = add_op(g, op, name, in, n_in, attrs, n_out < 0 ? 0 : n_out, &d);
    if (!n) return export_diag(gd, &d, -1);
    for (int i = 0; i < n_out; i++) out[i] = n->out[i];
    return 0;
}

void gc_output(GcGraph *g, GcValue *v)
{
    GC_ASSERT(g && v && belongs(g, v));
    ir_add_output(g, v);
}

int gc_infer(GcGraph *g, GcDiag *gd)
{
    Diag d = {0};
    return export_diag(gd, &d, ir_verify(g, &d) || pass_infer_shapes(g, &d) ? -1 : 0);
}

int gc_value_shape(const GcValue *v, int64_t *dims, int max_rank)
{
    if (!v || !v->shape_known) return -1;
    for (int i = 0; i < v->shape.rank && i < max_rank; i++) dims[i] = v->shape.dims[i];
    return v->shape.rank;
}

int gc_write_text(GcGraph *g, const char *path, GcDiag *gd)
{
    Diag d = {0};
    Writer w;
    w_init(&w);
    ir_print(g, &w, 0);
    int rc = w_save(&w, path);
    int err = errno;
    w_free(&w);
    if (rc) return export_diag(gd, &d, diag_error(&d, "cannot write '%s': %s", path, strerror(err)));
    return 0;
}

int gc_compile(GcGraph *g, const char *dir, const GcCompileOptions *opt, GcDiag *gd)
{
    GcCompileOptions defaults = {0};
    Diag d = {0};
    if (!opt) opt = &defaults;
    if ((int)opt->opt < GC_OPT_DEFAULT || opt->opt > GC_OPT_O2)
        return export_diag(gd, &d, diag_error(&d, "unknown optimization level %d", (int)opt->opt));
    if ((int)opt->weights < GC_WEIGHTS_INCBIN || opt->weights > GC_WEIGHTS_FILE)
        return export_diag(gd, &d, diag_error(&d, "unknown weights mode %d", (int)opt->weights));
    CompileJob job = {0};
    job.backend = backend_find(opt->target ? opt->target : backend_list[0]->name);
    if (!job.backend)
        return export_diag(gd, &d, diag_error(&d, "unknown target '%s'", opt->target));
    if (opt->max_tensor_bytes < 0 || opt->max_tensor_bytes > IR_MAX_TENSOR_BYTES_CAP)
        return export_diag(gd, &d, diag_error(&d, "max_tensor_bytes %lld is out of range (0 for the default, at most %lld)",
                                              (long long)opt->max_tensor_bytes, (long long)IR_MAX_TENSOR_BYTES_CAP));
    job.opt_level = opt->opt == GC_OPT_O0 ? 0 : 2;
    job.out.name = opt->name ? opt->name : g->name;
    job.out.emit_main = opt->emit_main;
    job.out.cuda_jit = opt->cuda_jit;
    job.out.weights = (BackendWeights)opt->weights;
    job.print_after = opt->print_after;
    job.print_before = opt->print_before;
    if (opt->grad && opt->train) return export_diag(gd, &d, diag_error(&d, "grad and train exclude each other"));
    static const char *const cuda_names[3] = {"precision", "cuda_layout", "target \"cuda\""};
    if (opt->cuda_jit && strcmp(job.backend->name, "cuda") != 0)
        return export_diag(gd, &d, diag_error(&d, "cuda_jit needs target \"cuda\" (the target is '%s')", job.backend->name));
    if (api_cuda_options(&job, opt->precision, opt->cuda_layout, opt->grad || opt->train, cuda_names, &d))
        return export_diag(gd, &d, -1);
    TrainRequest tr = {opt->train ? TRAIN_REQ_TRAIN : opt->grad ? TRAIN_REQ_GRAD : TRAIN_REQ_NONE, opt->wrt, opt->loss,
                       opt->optimizer, 0};
    Graph *ig = NULL;
    if (tr.mode == TRAIN_REQ_TRAIN) { /* the inference pass: a copy of the graph as given, through its text form */
        Writer txt;
        w_init(&txt);
        ir_print(g, &txt, 0);
        ig = ir_parse(txt.buf ? txt.buf : "", txt.len, "<graph>", &d);
        w_free(&txt);
        if (!ig) return export_diag(gd, &d, -1);
        ig->max_tensor_bytes = opt->max_tensor_bytes;
    }
    if (api_setup_training(g, &tr, &d) || (ig && api_setup_inference(ig, g, &d))) {
        ir_graph_free(ig);
        return export_diag(gd, &d, -1);
    }
    job.infer_graph = ig;
    Writer dump;
    w_init(&dump);
    job.dump = &dump;
    int64_t saved_limit = g->max_tensor_bytes; /* the option holds for this compile only */
    g->max_tensor_bytes = opt->max_tensor_bytes;
    int rc = api_compile_graph(g, dir, &job, &d);
    g->max_tensor_bytes = saved_limit;
    g->train = NULL; /* differentiated once: a second compile takes the graph as it is now */
    ir_graph_free(ig);
    if (dump.len) fwrite(dump.buf, 1, dump.len, stderr);
    w_free(&dump);
    return export_diag(gd, &d, rc);
}

int gc_interpret(GcGraph *g, const void *const *inputs, void *const *outputs, GcDiag *gd)
{
    Diag d = {0};
    if (ir_verify(g, &d) || pass_infer_shapes(g, &d)) return export_diag(gd, &d, -1);
    return export_diag(gd, &d, ir_interp_run(g, INTERP_F32, inputs, outputs, &d));
}
