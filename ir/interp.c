/* interp.c — the reference interpreter.
 *
 * Walks the nodes in their (topological) order and calls each op's
 * reference evaluation on double buffers. In INTERP_F32 mode every value is
 * rounded to its dtype after the op that produces it (so f32 results match
 * what compiled f32 code computes, up to evaluation order); in INTERP_F64
 * mode floating values keep double precision, which is what gradient checks
 * need. Integer and bool values are exact in both modes (doubles hold
 * integers up to 2^53). Buffers are freed as soon as their last reader ran.
 * A buffer malloc cannot give is a user error naming the value (sizes come
 * from the model; shape inference has held them to the size policy).
 */
#include "interp.h"
#include "op.h"

#include <stdlib.h>
#include <string.h>

/* A value's double buffer; NULL with "out of memory" naming node n (or no
 * node) and the value when malloc fails: sizes are user data (within the
 * size policy, ir_check_tensor_size, but 8 bytes per element here). */
static double *value_buf(const Value *v, const Node *n, int zero, Diag *d)
{
    int64_t cnt = ir_value_max_numel(v);
    double *p = zero ? calloc((size_t)(cnt ? cnt : 1), sizeof(double)) : malloc(sizeof(double) * (size_t)(cnt ? cnt : 1));
    if (!p)
        diag_node_error(d, n, "out of memory: the interpreter needs %lld bytes for '%s'", (long long)cnt * 8, v->name);
    return p;
}

static double *load_const(const Value *v, const Node *n, Diag *d)
{
    int64_t n_el = ir_numel(&v->shape);
    double *p = value_buf(v, n, 0, d);
    if (!p) return NULL;
    for (int64_t i = 0; i < n_el; i++) p[i] = ir_load_f64(v->dtype, v->data, (size_t)i);
    return p;
}

static void round_value(const Value *v, double *p, InterpPrec prec)
{
    if (prec == INTERP_F64 && (v->dtype == DT_F32 || v->dtype == DT_F64)) return;
    int64_t n = ir_numel(&v->shape);
    for (int64_t i = 0; i < n; i++) p[i] = ir_round_to(v->dtype, p[i]);
}

/* Data-dependent shapes: whether some node reads a shape from an input
 * that is not a constant (OpDesc.shape_inputs). */
static int has_runtime_shape_inputs(const Graph *g)
{
    for (int s = 0; s < g->n_nodes; s++) {
        const Node *n = g->nodes[s];
        uint32_t m = ir_op(n->op)->shape_inputs;
        for (int j = 0; j < n->n_in && j < 32; j++)
            if ((m >> j & 1) && n->in[j] && n->in[j]->kind != VK_CONST) return 1;
    }
    return 0;
}

/* Before node n runs in a graph with data-dependent shapes: its shape
 * inputs, computed by now (buf), become constants holding their values,
 * and n's shapes are inferred again, so its outputs get their actual
 * extents (and the nodes after it, inferred in turn, theirs). This is the
 * one place the interpreter changes the graph: only for such graphs, which
 * `graphc run` specializes to one run anyway. */
static int infer_at_run_time(Graph *g, Node *n, double *const *buf, Diag *d)
{
    uint32_t m = ir_op(n->op)->shape_inputs;
    for (int j = 0; j < n->n_in && j < 32; j++) {
        Value *v = n->in[j];
        if (!(m >> j & 1) || !v || v->kind == VK_CONST) continue;
        GC_ASSERT(buf[v->id]);
        int64_t cnt = ir_numel(&v->shape);
        size_t nb = (size_t)cnt * ir_dtype_size(v->dtype);
        unsigned char *data = ir_alloc(g, nb ? nb : 1);
        for (int64_t i = 0; i < cnt; i++) ir_store_f64(v->dtype, data, (size_t)i, buf[v->id][i]);
        v->data = data;
        v->nbytes = nb;
        v->kind = VK_CONST;
    }
    /* the extents its outputs were planned at, which the actual ones must
     * respect (the buffers of graph outputs are allocated at them): each
     * data-dependent dim within its bound, each output's elements within
     * its cap (the dims --max-dim bounds jointly) */
    Shape *was = malloc(sizeof *was * (size_t)(n->n_out ? n->n_out : 1));
    int64_t *cap = malloc(sizeof *cap * (size_t)(n->n_out ? n->n_out : 1));
    GC_ASSERT(was && cap);
    for (int j = 0; j < n->n_out; j++) {
        was[j] = n->out[j]->shape;
        cap[j] = n->out[j]->shape_known ? ir_value_max_numel(n->out[j]) : INT64_MAX;
    }
    int rc = ir_infer_node(g, n, d);
    for (int j = 0; j < n->n_out && !rc; j++) {
        const Value *v = n->out[j];
        for (int k = 0; k < v->shape.rank && k < was[j].rank && !rc; k++)
            if (was[j].sym[k] && ir_sym_is_data(g, was[j].sym[k]) && v->shape.dims[k] > was[j].dims[k])
                rc = diag_node_error(d, n, "dim %d of output '%s' is %lld at run time, beyond its bound %lld", k, v->name,
                                     (long long)v->shape.dims[k], (long long)was[j].dims[k]);
        if (!rc && ir_numel(&v->shape) > cap[j])
            rc = diag_node_error(d, n, "output '%s' has %lld elements at run time, beyond its bound of %lld (--max-dim)", v->name,
                                 (long long)ir_numel(&v->shape), (long long)cap[j]);
    }
    free(was);
    free(cap);
    return rc;
}

int ir_interp_run_f64(const Graph *g, InterpPrec prec, const double *const *inputs,
                      double *const *outputs, Diag *d)
{
    int nv = g->n_values;
    double **buf = calloc((size_t)nv + 1, sizeof(double *));
    char *owned = calloc((size_t)nv + 1, 1);
    int *last = malloc(sizeof(int) * ((size_t)nv + 1));
    GC_ASSERT(buf && owned && last);
    for (int i = 0; i < nv; i++) last[i] = -1;
    for (int s = 0; s < g->n_nodes; s++)
        for (int j = 0; j < g->nodes[s]->n_in; j++)
            if (g->nodes[s]->in[j]) last[g->nodes[s]->in[j]->id] = s;
    int rc = 0;
    for (int i = 0; i < g->n_inputs && !rc; i++) {
        Value *v = g->inputs[i];
        int64_t n = ir_numel(&v->shape);
        buf[v->id] = value_buf(v, NULL, 0, d);
        if (!buf[v->id]) { rc = -1; break; }
        if (n) memcpy(buf[v->id], inputs[i], sizeof(double) * (size_t)n);
        round_value(v, buf[v->id], prec);
        owned[v->id] = 1;
    }
    const double *in_small[16];
    double *out_small[16];
    int dynamic = has_runtime_shape_inputs(g);
    for (int s = 0; s < g->n_nodes && !rc; s++) {
        const Node *n = g->nodes[s];
        const OpDesc *od = ir_op(n->op);
        if (!od->eval) { rc = diag_node_error(d, n, "op '%s' has no reference evaluation", od->name); break; }
        if (dynamic && (rc = infer_at_run_time((Graph *)g, (Node *)n, buf, d)) != 0) break;
        const double **in = n->n_in <= 16 ? in_small : malloc(sizeof(double *) * (size_t)n->n_in);
        double **out = n->n_out <= 16 ? out_small : malloc(sizeof(double *) * (size_t)n->n_out);
        GC_ASSERT(in && out);
        for (int j = 0; j < n->n_in; j++) {
            const Value *v = n->in[j];
            in[j] = NULL;
            if (!v) continue;
            if (!buf[v->id] && (v->kind == VK_CONST || v->kind == VK_STATE)) {
                if (!(buf[v->id] = load_const(v, n, d))) { rc = -1; break; }
                owned[v->id] = 1;
            }
            GC_ASSERT(buf[v->id]);
            in[j] = buf[v->id];
        }
        for (int j = 0; j < n->n_out && !rc; j++) {
            const Value *v = n->out[j];
            if (!(buf[v->id] = value_buf(v, n, 1, d))) { rc = -1; break; }
            owned[v->id] = 1;
            out[j] = buf[v->id];
        }
        if (!rc && prec == INTERP_F64 && n->op == OP_Cast && (n->in[0]->dtype == DT_F32 || n->in[0]->dtype == DT_F64) &&
            (n->out[0]->dtype == DT_F32 || n->out[0]->dtype == DT_F64)) {
            /* f32 values keep double precision in this mode, a cast between f32 and f64 too */
            int64_t ne = ir_numel(&n->out[0]->shape);
            if (ne) memcpy(out[0], in[0], sizeof(double) * (size_t)ne);
        } else if (!rc && !ir_outputs_empty(n)) {
            rc = od->eval(n, (const double *const *)in, (double *const *)out, d);
        }
        for (int j = 0; j < n->n_out && !rc; j++) round_value(n->out[j], out[j], prec);
        if (in != in_small) free(in);
        if (out != out_small) free(out);
        /* free inputs whose last reader was this node (graph outputs stay) */
        for (int j = 0; j < n->n_in; j++) {
            const Value *v = n->in[j];
            if (v && last[v->id] == s && !v->is_output && owned[v->id]) {
                free(buf[v->id]);
                buf[v->id] = NULL;
                owned[v->id] = 0;
            }
        }
    }
    for (int i = 0; i < g->n_outputs && !rc; i++) {
        const Value *v = g->outputs[i];
        if (!buf[v->id] && (v->kind == VK_CONST || v->kind == VK_STATE)) {
            if (!(buf[v->id] = load_const(v, NULL, d))) { rc = -1; break; }
            owned[v->id] = 1;
        }
        GC_ASSERT(buf[v->id]);
        int64_t n = ir_numel(&v->shape);
        if (n) memcpy(outputs[i], buf[v->id], sizeof(double) * (size_t)n);
    }
    for (int i = 0; i < nv; i++)
        if (owned[i]) free(buf[i]);
    free(buf);
    free(owned);
    free(last);
    return rc;
}

int ir_interp_run(const Graph *g, InterpPrec prec, const void *const *inputs,
                  void *const *outputs, Diag *d)
{
    int ni = g->n_inputs, no = g->n_outputs;
    double **din = calloc((size_t)ni + 1, sizeof(double *));
    double **dout = calloc((size_t)no + 1, sizeof(double *));
    GC_ASSERT(din && dout);
    int rc = 0;
    for (int i = 0; i < ni && !rc; i++) {
        const Value *v = g->inputs[i];
        int64_t n = ir_numel(&v->shape);
        if (!(din[i] = value_buf(v, NULL, 0, d))) { rc = -1; break; }
        for (int64_t k = 0; k < n; k++) din[i][k] = ir_load_f64(v->dtype, inputs[i], (size_t)k);
    }
    for (int i = 0; i < no && !rc; i++)
        if (!(dout[i] = value_buf(g->outputs[i], NULL, 0, d))) rc = -1;
    if (!rc) rc = ir_interp_run_f64(g, prec, (const double *const *)din, dout, d);
    for (int i = 0; i < no && !rc; i++) {
        const Value *v = g->outputs[i];
        int64_t n = ir_numel(&v->shape);
        for (int64_t k = 0; k < n; k++) ir_store_f64(v->dtype, outputs[i], (size_t)k, dout[i][k]);
    }
    for (int i = 0; i < ni; i++) free(din[i]);
    for (int i = 0; i < no; i++) free(dout[i]);
    free(din);
    free(dout);
    return rc;
}
