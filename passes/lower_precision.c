/* lower_precision.c — compile --precision=fp16|bf16: float32 tensors held in
 * half precision where the target computes the op on half tensors.
 *
 * What: g->precision (DT_F16 or DT_BF16; DT_UNDEF or DT_F32: nothing to
 * do) names the half type H. Nodes are taken in schedule order; a node
 * goes half when
 *   - it reads weights (an f32 constant of rank >= 2: Conv, Gemm, MatMul
 *     with constant operands) or a tensor an earlier node made half, so
 *     half regions start at the weighted layers and spread to what follows
 *     them, while f32 nodes among f32 nodes stay f32 (half there would only
 *     add Casts);
 *   - it writes an f32 tensor and every float tensor it reads or writes is
 *     f32 (no f64 or half already): a node that turns floats into integers
 *     or bools (a Cast to an integer type, ArgMax, a comparison) keeps its
 *     f32 inputs, so rounding them to half cannot change its result; and
 *   - the target (g->supports, the backend's per-node check) accepts the
 *     same node with those tensors in H.
 * The inputs its op takes as compile-time constants (OpDesc.const_inputs:
 * Resize's scales, ...) stay f32. Every other node keeps its f32 tensors.
 *
 * How: each f32 value v gets at most one twin in H. A half node's f32
 * output becomes a new value in H (the twin, named "<v>.f16" or
 * "<v>.bf16") that its half readers read; v itself keeps its name and f32
 * type and is computed from the twin by a Cast node only when something
 * still reads it in f32 or it is a graph output (the compiled API keeps the
 * model's f32 inputs and outputs). A half node's f32 input that is a
 * constant reads a constant converted at compile time (the weights are
 * stored in H); one computed in f32 (or a graph input) reads a Cast of it
 * to H, one Cast per value. The Casts then fuse with elementwise neighbours
 * like any other elementwise node (fuse-elementwise runs after).
 *
 * Arithmetic: the backend's half kernels compute in float (elementwise
 * kernels load H into float and store back; the library GEMMs and
 * convolutions accumulate in fp32), so what changes is the storage: every
 * half tensor is rounded to H. Training graphs are not converted (the
 * compile driver refuses --precision with --grad/--train).
 */
#include "passes.h"

#include "../ir/op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *half_tag(DType h) { return h == DT_BF16 ? "bf16" : "f16"; }

/* Whether input j of n is one its op takes as a compile-time constant. */
static int const_slot(const Node *n, int j) { return j < 32 && (ir_op(n->op)->const_inputs >> j & 1u); }

/* Whether the target accepts n with its f32 tensors (except constant
 * slots) in h: a copy of the node over copies of its values, checked by
 * g->supports with a diagnostic nobody reads. */
static int goes_half(const Graph *g, const Node *n, DType h)
{
    int n_io = n->n_in + n->n_out, f32_out = 0;
    for (int i = 0; i < n_io; i++) {
        const Value *v = i < n->n_in ? n->in[i] : n->out[i - n->n_in];
        if (!v || !ir_dtype_is_float(v->dtype)) continue;
        if (v->dtype != DT_F32) return 0;
        if (i >= n->n_in) f32_out = 1;
    }
    if (!f32_out) return 0;
    Value *copies = calloc((size_t)n_io, sizeof *copies);
    Value **ins = calloc((size_t)n->n_in + 1, sizeof *ins), **outs = calloc((size_t)n->n_out + 1, sizeof *outs);
    GC_ASSERT(copies && ins && outs);
    for (int i = 0; i < n_io; i++) {
        const Value *v = i < n->n_in ? n->in[i] : n->out[i - n->n_in];
        Value **slot = i < n->n_in ? &ins[i] : &outs[i - n->n_in];
        if (!v) continue;
        copies[i] = *v;
        if (v->dtype == DT_F32 && (i >= n->n_in || !const_slot(n, i))) copies[i].dtype = h;
        *slot = &copies[i];
    }
    Node tmp = *n;
    tmp.in = ins;
    tmp.out = outs;
    Diag quiet = {0};
    int ok = g->supports(g, &tmp, &quiet) == 0;
    free(copies);
    free(ins);
    free(outs);
    return ok;
}

/* A Cast of v to dtype t, appended to the schedule (toposorted later). */
static Value *add_cast(Graph *g, Value *v, DType t, const char *out_name)
{
    char node_name[512], to[32];
    snprintf(node_name, sizeof node_name, "%s.to_%s", v->name, ir_dtype_name(t));
    Node *c = ir_add_node(g, OP_Cast, node_name, &v, 1, 1, &out_name);
    snprintf(to, sizeof to, "to=%d", ir_dtype_to_onnx(t));
    int rc = ir_set_attrs(g, c, to, NULL);
    GC_ASSERT(rc == 0);
    ir_set_out(c, 0, t, &v->shape);
    return c->out[0];
}

int pass_lower_precision(Graph *g, Diag *d)
{
    const DType h = g->precision;
    if (h == DT_UNDEF || h == DT_F32) return 0;
    if (h != DT_F16 && h != DT_BF16) return diag_error(d, "--precision: half precision must be f16 or bf16");
    if (!g->supports) return 0; /* no target check: nothing is known to run in half */
    for (int i = 0; i < g->n_values; i++) g->values[i]->id = i;
    const int nv0 = g->n_values, nn0 = g->n_nodes;
    Node **nodes = malloc(sizeof *nodes * (size_t)(nn0 + 1));
    Value **twin = calloc((size_t)nv0 + 1, sizeof *twin); /* the H twin of original value i */
    char *moved = calloc((size_t)nv0 + 1, 1);          /* value i's producer now writes its twin */
    GC_ASSERT(nodes && twin && moved);
    memcpy(nodes, g->nodes, sizeof *nodes * (size_t)nn0);
    int converted = 0;
    for (int k = 0; k < nn0; k++) {
        Node *n = nodes[k];
        /* half where it pays: a node that reads weights (an f32 constant of
         * rank >= 2) or a tensor some earlier node made half; an f32 node
         * between f32 nodes stays f32 (half there would only add Casts) */
        int seeds = 0;
        for (int j = 0; j < n->n_in && !seeds; j++) {
            const Value *v = n->in[j];
            if (!v || v->id >= nv0 || v->dtype != DT_F32 || const_slot(n, j)) continue;
            seeds = moved[v->id] || (v->kind == VK_CONST && v->shape.rank >= 2);
        }
        if (seeds && goes_half(g, n, h)) {
            converted++;
            for (int j = 0; j < n->n_in; j++) {
                Value *v = n->in[j];
                if (!v || v->dtype != DT_F32 || const_slot(n, j) || v->id >= nv0) continue;
                if (!twin[v->id]) {
                    char name[512];
                    snprintf(name, sizeof name, "%s.%s", v->name, half_tag(h));
                    if (v->kind == VK_CONST) {
                        int64_t cnt = ir_numel(&v->shape);
                        void *buf = malloc((size_t)(cnt ? cnt : 1) * 2);
                        GC_ASSERT(buf);
                        for (int64_t e = 0; e < cnt; e++) ir_store_f64(h, buf, (size_t)e, ir_load_f64(DT_F32, v->data, (size_t)e));
                        twin[v->id] = ir_add_const(g, name, h, &v->shape, buf, 1);
                        free(buf);
                    } else {
                        twin[v->id] = add_cast(g, v, h, name);
                    }
                }
                n->in[j] = twin[v->id];
            }
            for (int o = 0; o < n->n_out; o++) {
                Value *v = n->out[o];
                if (v->dtype != DT_F32 || v->id >= nv0) continue;
                char name[512];
                snprintf(name, sizeof name, "%s.%s", v->name, half_tag(h));
                Value *t = ir_new_value(g, name);
                t->dtype = h;
                t->shape = v->shape;
                t->shape_known = 1;
                t->kind = v->kind;
                t->producer = n;
                t->producer_out = o;
                n->out[o] = t;
                v->producer = NULL;
                twin[v->id] = t;
                moved[v->id] = 1;
            }
            continue;
        }
        /* an f32 node reading a value whose producer went half: the value
         * computed back from its twin (once) */
        for (int j = 0; j < n->n_in; j++) {
            Value *v = n->in[j];
            if (v && v->id < nv0 && moved[v->id] && !v->producer) {
                Node *c = add_cast(g, twin[v->id], DT_F32, NULL)->producer;
                c->out[0] = v;
                v->producer = c;
                v->producer_out = 0;
            }
        }
    }
    for (int i = 0; i < g->n_outputs; i++) {
        Value *v = g->outputs[i];
        if (v->id < nv0 && moved[v->id] && !v->producer) {
            Node *c = add_cast(g, twin[v->id], DT_F32, NULL)->producer;
            c->out[0] = v;
            v->producer = c;
            v->producer_out = 0;
        }
    }
    free(nodes);
    free(twin);
    free(moved);
    if (!converted) return 0;
    /* the Casts were appended: restore the topological order, then drop the
     * values nothing reads any more (the Casts' placeholder outputs) */
    if (ir_toposort(g, d)) return -1;
    ir_sweep_values(g);
    return 0;
}
