/* grad.c — the builder gradient facets use (see grad.h).
 *
 * Every backward node is an ordinary node: ir_add_node, attributes through
 * ir_set_attrs (the text form the importers and the text IR use), then the
 * op's own shape inference, so a backward graph is checked exactly like a
 * forward one. Nodes are named after the forward node ("conv1_grad",
 * "conv1_grad2", ...), their outputs after the nodes, so IR dumps show which
 * forward node each backward node came from.
 */
#include "grad.h"
#include "op.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

Value gb_absent_marker;

Value *gb_node(GradCtx *gc, OpKind op, const char *attrs, int n_in, Value *const *in, int n_out, Value **out)
{
    if (gc->err) return NULL;
    Value *ins[32];
    GC_ASSERT(n_out >= 1 && n_out <= 8);
    if (n_in > 32) {
        diag_node_error(gc->d, gc->n, "its gradient would need a node of %d inputs (at most 32)", n_in);
        gc->err = 1;
        return NULL;
    }
    for (int i = 0; i < n_in; i++) {
        if (!in[i]) return NULL; /* an operand failed (or a facet passed none): err is set or it is a bug */
        ins[i] = in[i] == GB_ABSENT ? NULL : in[i];
    }
    char name[256];
    gc->seq++;
    if (gc->seq == 1) snprintf(name, sizeof name, "%s_grad", gc->n->name);
    else snprintf(name, sizeof name, "%s_grad%d", gc->n->name, gc->seq);
    /* outputs are named after the node: NAME, NAME_1, NAME_2, ... (the first
     * output's name is the node's, so dumps print no prefix) */
    char more[7][300];
    const char *names[8] = {name};
    for (int j = 1; j < n_out; j++) {
        snprintf(more[j - 1], sizeof more[j - 1], "%s_%d", name, j);
        names[j] = more[j - 1];
    }
    Node *m = ir_add_node(gc->g, op, NULL, ins, n_in, n_out, names);
    m->backward = 1;
    if (attrs && *attrs && ir_set_attrs(gc->g, m, attrs, gc->d)) {
        gc->err = 1;
        return NULL;
    }
    for (int i = 0; i < n_in; i++)
        if (ins[i] && !ins[i]->shape_known) GC_ASSERT(0 && "backward operand without a type");
    const OpDesc *od = ir_op(op);
    if (od->infer(m, gc->d)) {
        gc->err = 1;
        return NULL;
    }
    for (int j = 0; j < n_out; j++) {
        if (ir_check_tensor_size(gc->g, m, "output", m->out[j], gc->d)) {
            gc->err = 1;
            return NULL;
        }
        if (out) out[j] = m->out[j];
    }
    return m->out[0];
}

Value *gb1(GradCtx *gc, OpKind op, const char *attrs, Value *a) { return gb_node(gc, op, attrs, 1, &a, 1, NULL); }

Value *gb2(GradCtx *gc, OpKind op, const char *attrs, Value *a, Value *b)
{
    Value *in[2] = {a, b};
    return gb_node(gc, op, attrs, 2, in, 1, NULL);
}

Value *gb3(GradCtx *gc, OpKind op, const char *attrs, Value *a, Value *b, Value *c)
{
    Value *in[3] = {a, b, c};
    return gb_node(gc, op, attrs, 3, in, 1, NULL);
}

const char *gb_fmt(GradCtx *gc, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    GC_ASSERT(n >= 0 && (size_t)n < sizeof buf);
    return ir_strdup(gc->g, buf);
}

/* Appends attribute a of kind k in the text form ir_set_attr parses. */
static void attr_text(char *buf, size_t cap, size_t *len, const char *key, AttrKind k, const AttrVal *a)
{
    size_t n = *len;
#define PUT(...) (n += (size_t)snprintf(buf + n, n < cap ? cap - n : 0, __VA_ARGS__))
    PUT("%s%s=", n ? " " : "", key);
    switch (k) {
    case ATTR_INT: PUT("%lld", (long long)a->i); break;
    case ATTR_FLOAT: PUT("%.17g", a->f); break;
    case ATTR_STRING: PUT("\"%s\"", a->s ? a->s : ""); break;
    case ATTR_INTS:
        PUT("[");
        for (int i = 0; i < a->n; i++) PUT("%s%lld", i ? "," : "", (long long)a->ints[i]);
        PUT("]");
        break;
    case ATTR_FLOATS:
        PUT("[");
        for (int i = 0; i < a->n; i++) PUT("%s%.17g", i ? "," : "", a->floats[i]);
        PUT("]");
        break;
    case ATTR_TENSOR: GC_ASSERT(0 && "tensor attributes are not copied into backward nodes"); break;
    }
#undef PUT
    GC_ASSERT(n < cap);
    *len = n;
}

const char *gb_fwd_attrs(GradCtx *gc, const char *extra)
{
    const Node *n = gc->n;
    const OpDesc *od = ir_op(n->op);
    char buf[4096];
    size_t len = 0;
    buf[0] = 0;
    for (int k = 0; k < od->n_attrs; k++)
        if (n->attrs[k].set && od->attrs[k].kind != ATTR_TENSOR)
            attr_text(buf, sizeof buf, &len, od->attrs[k].name, od->attrs[k].kind, &n->attrs[k]);
    if (extra) len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s", len ? " " : "", extra);
    GC_ASSERT(len < sizeof buf);
    return ir_strdup(gc->g, buf);
}

Value *gb_scalar(GradCtx *gc, DType t, double v)
{
    if (gc->err) return NULL;
    unsigned char buf[8];
    ir_store_f64(t, buf, 0, v);
    Shape s = ir_shape(0, NULL);
    return ir_add_const(gc->g, NULL, t, &s, buf, 1);
}

Value *gb_ints(GradCtx *gc, const int64_t *v, int n)
{
    if (gc->err) return NULL;
    int64_t dims[1] = {n};
    Shape s = ir_shape(1, dims);
    return ir_add_const(gc->g, NULL, DT_I64, &s, v, 1);
}

Value *gb_zeros_like(GradCtx *gc, const Value *v)
{
    if (gc->err) return NULL;
    Value *z = ir_add_const(gc->g, NULL, v->dtype, &v->shape, NULL, 0);
    z->data = ir_alloc(gc->g, z->nbytes); /* zeroed */
    return z;
}

Value *gb_dy(GradCtx *gc, int j) { return gc->dy[j] ? gc->dy[j] : gb_zeros_like(gc, gc->n->out[j]); }

Value *gb_sum(GradCtx *gc, Value *g, const int64_t *axes, int n_axes, int keepdims)
{
    if (!g || gc->err) return NULL;
    if (n_axes == 0) return g;
    return gb2(gc, OP_ReduceSum, keepdims ? NULL : "keepdims=0", g, gb_ints(gc, axes, n_axes));
}

Value *gb_reshape(GradCtx *gc, Value *g, const Shape *to)
{
    if (!g || gc->err) return NULL;
    if (ir_shape_eq(&g->shape, to)) return g;
    return gb2(gc, OP_Reshape, NULL, g, gb_ints(gc, to->dims, to->rank));
}

Value *gb_expand(GradCtx *gc, Value *g, const Shape *to)
{
    if (!g || gc->err) return NULL;
    if (ir_shape_eq(&g->shape, to)) return g;
    return gb2(gc, OP_Expand, NULL, g, gb_ints(gc, to->dims, to->rank));
}

Value *gb_reduce_to(GradCtx *gc, Value *g, const Shape *to)
{
    if (!g || gc->err) return NULL;
    if (ir_shape_eq(&g->shape, to)) return g;
    int r = g->shape.rank, lead = r - to->rank;
    GC_ASSERT(lead >= 0);
    int64_t axes[IR_MAX_RANK];
    int na = 0;
    for (int k = 0; k < r; k++)
        if (k < lead || (to->dims[k - lead] == 1 && g->shape.dims[k] != 1)) axes[na++] = k;
    return gb_reshape(gc, gb_sum(gc, g, axes, na, 1), to);
}

void gb_set(GradCtx *gc, int i, Value *g)
{
    GC_ASSERT(i >= 0 && i < gc->n->n_in);
    if (!gc->need[i] || !g || gc->err) return;
    const Value *x = gc->n->in[i];
    if (g->dtype != x->dtype || !ir_shape_eq(&g->shape, &x->shape)) {
        char a[128], b[128];
        diag_node_error(gc->d, gc->n, "internal error: the gradient of input %d ('%s', %s%s) built by op '%s' is %s%s", i,
                        x->name, ir_dtype_name(x->dtype), ir_shape_str(&x->shape, a, sizeof a), ir_op(gc->n->op)->name,
                        ir_dtype_name(g->dtype), ir_shape_str(&g->shape, b, sizeof b));
        gc->err = 1;
        return;
    }
    gc->dx[i] = g;
}

int gb_done(GradCtx *gc) { return gc->err ? -1 : 0; }

int ir_bw_inputs(const Node *n, int is_output, int i) { (void)n; (void)i; return !is_output; }
int ir_bw_outputs(const Node *n, int is_output, int i) { (void)n; (void)i; return is_output; }
int ir_bw_all(const Node *n, int is_output, int i) { (void)n; (void)is_output; (void)i; return 1; }
int ir_bw_none(const Node *n, int is_output, int i) { (void)n; (void)is_output; (void)i; return 0; }
int ir_bw_input0(const Node *n, int is_output, int i) { (void)n; return !is_output && i == 0; }
