/* index.c — operator descriptions of the index family: gathers and scatters
 * driven by index tensors (GatherElements, ScatterElements, GatherND,
 * ScatterND, OneHot), generators (ConstantOfShape, Range, EyeLike, Size),
 * selections (Trilu, Tile, ReverseSequence, ArgMax, ArgMin, TopK, Compress) and the
 * running sum CumSum, all with ONNX opset-17 semantics.
 *
 * Every operand that decides an output shape (the shape of
 * ConstantOfShape, Range's start/limit/delta, Tile's repeats, TopK's K,
 * OneHot's depth, Compress's condition) gives a static shape when it is a
 * constant; when it arrives at run time (OpDesc.shape_inputs) the dims it
 * decides are data-dependent (IR_SYM_NEW, ir/ir.h), bounded by the input
 * (TopK's K, Compress's count) or by --max-dim where nothing in the model
 * bounds them. CumSum's axis and Trilu's k may come at runtime (they do
 * not change the output shape).
 * Index tensors (indices, sequence_lens) may be runtime values: shape
 * inference checks the constant ones against the data shape (an out-of-range
 * constant index is an error), the reference evaluation reports a runtime
 * out-of-range index as an error, and the generated C never reads or writes
 * out of bounds (gathers yield 0, scatters skip the element). Negative
 * indices count from the end of their axis, as ONNX says.
 *
 * Runtime shapes (the infer_sym rules): the gathers and scatters take
 * runtime dims of data and indices (a NonZero's count of index tuples, a
 * runtime axis they index), checking at run time what the bounds cannot
 * (indices against the actual extents); TopK takes a runtime axis, with K
 * a constant, a shape value's term (min(300, count)) or a fresh dim, and
 * ConstantOfShape the terms of a shape value.
 *
 * The reference evaluations run on doubles in row-major order; gathers
 * and scatters locate elements through row-major coordinates (coords_of).
 *
 * Gradients (ir/grad.h) run the data movement backwards with these same
 * ops: a gather's data gradient scatter-adds dY into zeros (reduction=add,
 * so a repeated index sums), a scatter's updates gradient gathers dY, Tile
 * sums dY over its repeats, CumSum runs the other way, Trilu and
 * ReverseSequence apply themselves to dY. Index tensors, sequence lengths,
 * axes and k are integer and get no gradient; a gradient reads them (the
 * forward input 1: idx_bw_reads).
 */
#include "../grad.h"
#include "../op.h"
#include "index_attrs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHP_BUF 256
#define MAX_LIST 64

/* ---- shared helpers -------------------------------------------------------- */

/* The gradients of these ops read input 1 (indices, axis, k, lengths). */
static int idx_bw_reads(const Node *n, int is_output, int i) { (void)n; return !is_output && i == 1; }

/* Row-major coordinates of element e of shape s. */
static void coords_of(const Shape *s, int64_t e, int64_t *c)
{
    for (int i = s->rank - 1; i >= 0; i--) {
        int64_t dim = s->dims[i] ? s->dims[i] : 1;
        c[i] = e % dim;
        e /= dim;
    }
}

static int64_t dims_prod(const Shape *s, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++) p *= s->dims[i];
    return p;
}

/* Every required input (index < min_in) is present; -1 with a diagnostic. */
/* Element i of an integer constant, exact for int64. */
static int64_t const_int_at(const Value *v, int64_t i)
{
    if (v->dtype == DT_I64) {
        int64_t x;
        memcpy(&x, (const char *)v->data + 8 * i, 8);
        return x;
    }
    double x = ir_load_f64(v->dtype, v->data, (size_t)i);
    return x >= 9223372036854775808.0 ? INT64_MAX : (int64_t)x; /* u64 above INT64_MAX saturates */
}

/* Input i must be int32 or int64 (an index tensor). */
static int need_index_dtype(const Node *n, int i, Diag *d)
{
    DType t = n->in[i]->dtype;
    if (t != DT_I32 && t != DT_I64)
        return diag_node_error(d, n, "input '%s' must be int32 or int64, got %s", ir_op(n->op)->in_names[i], ir_dtype_name(t));
    return 0;
}

/* Constant scalar-like (one element) input i as a double; -1 with a diagnostic. */
static int const_scalar(const Node *n, int i, double *out, Diag *d)
{
    const Value *v = n->in[i];
    const char *name = ir_op(n->op)->in_names[i];
    char b[SHP_BUF];
    if (v->kind != VK_CONST) return diag_node_error(d, n, "input '%s' must be a constant", name);
    if (ir_numel(&v->shape) != 1)
        return diag_node_error(d, n, "input '%s' must hold exactly one value, got shape %s", name, ir_shape_str(&v->shape, b, sizeof b));
    *out = ir_dtype_is_int(v->dtype) ? (double)const_int_at(v, 0) : ir_load_f64(v->dtype, v->data, 0);
    return 0;
}

/* Constant integer scalar input i; -1 with a diagnostic. */
static int const_int_scalar(const Node *n, int i, int64_t *out, Diag *d)
{
    const Value *v = n->in[i];
    if (v->kind == VK_CONST && !ir_dtype_is_int(v->dtype))
        return diag_node_error(d, n, "input '%s' must be an integer tensor, got %s", ir_op(n->op)->in_names[i], ir_dtype_name(v->dtype));
    double x;
    if (const_scalar(n, i, &x, d)) return -1;
    *out = const_int_at(v, 0);
    return 0;
}

/* Constant 1-D integer input i (at most MAX_LIST values); count or -1. */
static int const_list(const Node *n, int i, int64_t *out, Diag *d)
{
    const Value *v = n->in[i];
    const char *name = ir_op(n->op)->in_names[i];
    if (v->kind != VK_CONST) return diag_node_error(d, n, "input '%s' must be a constant", name);
    if (!ir_dtype_is_int(v->dtype))
        return diag_node_error(d, n, "input '%s' must be an integer tensor, got %s", name, ir_dtype_name(v->dtype));
    if (v->shape.rank != 1) return diag_node_error(d, n, "input '%s' must be 1-D, got rank %d", name, v->shape.rank);
    int k = ir_const_ints(v, out, MAX_LIST);
    if (k < 0) return diag_node_error(d, n, "input '%s' has more than %d values", name, MAX_LIST);
    return k;
}

/* Checks constant index tensor `ind`: element e addresses axis
 * ax0 + e % m of size lim[e % m]. Runtime tensors pass. */
static int check_const_indices(const Node *n, const Value *ind, const int64_t *lim, int m, int ax0, Diag *d)
{
    if (ind->kind != VK_CONST || m <= 0) return 0;
    int64_t cnt = ir_numel(&ind->shape);
    for (int64_t e = 0; e < cnt; e++) {
        int64_t v = const_int_at(ind, e), dim = lim[e % m];
        if (v < -dim || v >= dim)
            return diag_node_error(d, n, "input 'indices' value %lld is out of range for axis %lld of size %lld", (long long)v,
                                   (long long)(ax0 + e % m), (long long)dim);
    }
    return 0;
}

/* Wraps runtime index v into [0, dim); -1 with a diagnostic when out of range. */
static int64_t wrap_index(const Node *n, double v, int64_t dim, int64_t axis, Diag *d)
{
    int64_t i = (int64_t)v;
    if (i < -dim || i >= dim) {
        diag_node_error(d, n, "input 'indices' value %lld is out of range for axis %lld of size %lld", (long long)i, (long long)axis,
                        (long long)dim);
        return -1;
    }
    return i < 0 ? i + dim : i;
}

/* Reduction of ScatterElements / ScatterND: 0 none, 1 add, 2 mul, 3 max, 4 min. */
static int reduction_kind(const char *s)
{
    static const char *const names[] = {"none", "add", "mul", "max", "min"};
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0) return i;
    return -1;
}

static double reduce2(int kind, double a, double b)
{
    switch (kind) {
    case 1: return a + b;
    case 2: return a * b;
    case 3: return b > a ? b : a;
    case 4: return b < a ? b : a;
    default: return b;
    }
}

static int check_reduction(const Node *n, const char *s, Diag *d)
{
    if (reduction_kind(s) < 0) return diag_node_error(d, n, "attribute 'reduction' must be none, add, mul, max or min, got '%s'", s);
    return 0;
}

static const char *const out_output[] = {"output"};

/* ---- ConstantOfShape ---------------------------------------------------------- */

static const AttrSpec cos_attrs[] = {[CONSTANT_OF_SHAPE_VALUE] = {"value", ATTR_TENSOR, NULL, 0}};
OP_ATTRS_CHECK(cos_attrs, CONSTANT_OF_SHAPE_COUNT);
static const char *const cos_in[] = {"input"};

/* Shape for a runtime 'input': its length is the rank, every dim a
 * data-dependent one that --max-dim bounds; -1 (no diagnostic) when the
 * input is a constant. */
static int runtime_dims(const Node *n, int i, Shape *s, Diag *d)
{
    const Value *v = n->in[i];
    char b[SHP_BUF];
    if (v->kind == VK_CONST) return -1;
    if (!ir_dtype_is_int(v->dtype) || v->shape.rank != 1 || ir_shape_has_sym(&v->shape))
        return diag_node_error(d, n, "input '%s' must be a 1-D integer tensor of static length, got %s%s", ir_op(n->op)->in_names[i],
                               ir_dtype_name(v->dtype), ir_shape_str(&v->shape, b, sizeof b));
    memset(s, 0, sizeof *s);
    s->rank = (int)v->shape.dims[0];
    if (s->rank > IR_MAX_RANK)
        return diag_node_error(d, n, "input '%s' has %d values; the maximum rank is %d", ir_op(n->op)->in_names[i], s->rank, IR_MAX_RANK);
    for (int k = 0; k < s->rank; k++) {
        s->dims[k] = IR_DIM_UNBOUNDED;
        s->sym[k] = IR_SYM_NEW;
    }
    return 0;
}

static int cos_set_out(Node *n, const Shape *s, Diag *d);

static int cos_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    int64_t dims[MAX_LIST];
    Shape s = {0};
    if (n->in[0]->kind != VK_CONST) {
        if (runtime_dims(n, 0, &s, d)) return -1;
        return cos_set_out(n, &s, d);
    }
    int k = const_list(n, 0, dims, d);
    if (k < 0) return -1;
    if (k > IR_MAX_RANK) return diag_node_error(d, n, "input 'input' has %d values; the maximum rank is %d", k, IR_MAX_RANK);
    memset(&s, 0, sizeof s);
    s.rank = k;
    for (int i = 0; i < k; i++) {
        if (dims[i] < 0) return diag_node_error(d, n, "input 'input' value %lld at index %d is negative", (long long)dims[i], i);
        s.dims[i] = dims[i];
    }
    int64_t cnt;
    if (ir_shape_numel(&s, &cnt)) return diag_node_error(d, n, "output element count overflows int64");
    return cos_set_out(n, &s, d);
}

/* Output 0 of shape s in the dtype of attribute 'value' (f32 without it). */
static int cos_set_out(Node *n, const Shape *s, Diag *d)
{
    DType t = DT_F32;
    const AttrVal *a = &n->attrs[CONSTANT_OF_SHAPE_VALUE];
    if (a->set) {
        int64_t vn = ir_numel(&a->t.shape);
        if (vn != 1) return diag_node_error(d, n, "attribute 'value' must hold exactly one element, got %lld", (long long)vn);
        if (a->t.dtype == DT_UNDEF || !a->t.data) return diag_node_error(d, n, "attribute 'value' holds no tensor data");
        t = a->t.dtype;
    }
    ir_set_out(n, 0, t, s);
    return 0;
}

static int cos_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)in;
    (void)d;
    const AttrVal *a = &n->attrs[CONSTANT_OF_SHAPE_VALUE];
    double v = a->set ? ir_load_f64(a->t.dtype, a->t.data, 0) : 0.0;
    int64_t cnt = ir_numel(&n->out[0]->shape);
    for (int64_t i = 0; i < cnt; i++) out[0][i] = v;
    return 0;
}

/* Runtime shapes: a shape value (Shape of a runtime-shaped tensor, ...,
 * ir/ops/shape_values.c) gives each output dim its term, so the output
 * has that tensor's runtime dims instead of fresh ones --max-dim bounds. */
static int cos_infer_sym(Graph *g, Node *n, Diag *d)
{
    IrSymTerm t[IR_MAX_RANK];
    Shape *ys = &n->out[0]->shape;
    if (n->in[0]->kind == VK_CONST || ir_value_terms(n->in[0], t, IR_MAX_RANK) != ys->rank) return 0;
    for (int k = 0; k < ys->rank; k++) {
        if (!t[k].sym && t[k].c < 0)
            return diag_node_error(d, n, "input 'input' value %lld at index %d is negative", (long long)t[k].c, k);
        ys->sym[k] = t[k].sym ? t[k].sym : IR_SYM_STATIC;
        ys->dims[k] = t[k].sym ? ir_sym(g, t[k].sym)->hi : t[k].c;
    }
    return 0;
}

const OpDesc op_ConstantOfShape = {
    .name = "ConstantOfShape", .min_in = 1, .max_in = 1, .in_names = cos_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(cos_attrs), .infer = cos_infer, .infer_sym = cos_infer_sym, .eval = cos_eval,
    .shape_inputs = 1u << 0,
};

/* ---- Size ------------------------------------------------------------------- */

static const char *const size_in[] = {"data"};
static const char *const size_out[] = {"size"};

static int size_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    Shape s = {0};
    memset(&s, 0, sizeof s);
    ir_set_out(n, 0, DT_I64, &s);
    return 0;
}

static int size_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)in;
    (void)d;
    out[0][0] = (double)ir_numel(&n->in[0]->shape);
    return 0;
}

const OpDesc op_Size = {
    .name = "Size", .min_in = 1, .max_in = 1, .in_names = size_in,
    .min_out = 1, .max_out = 1, .out_names = size_out,
    .infer = size_infer, .eval = size_eval, .shape_only = 1,
};

/* ---- GatherElements / ScatterElements ------------------------------------------ */

static const AttrSpec ge_attrs[] = {[GATHER_ELEMENTS_AXIS] = {"axis", ATTR_INT, "0", 0}};
OP_ATTRS_CHECK(ge_attrs, GATHER_ELEMENTS_COUNT);
static const AttrSpec se_attrs[] = {
    [SCATTER_ELEMENTS_AXIS] = {"axis", ATTR_INT, "0", 0},
    [SCATTER_ELEMENTS_REDUCTION] = {"reduction", ATTR_STRING, "none", 0},
};
OP_ATTRS_CHECK(se_attrs, SCATTER_ELEMENTS_COUNT);
static const char *const ge_in[] = {"data", "indices"};
static const char *const se_in[] = {"data", "indices", "updates"};

/* Shared checks: indices has data's rank and fits inside data off the
 * axis; returns the normalized axis or -1. */
static int elements_check(Node *n, int64_t axis_attr, Diag *d)
{
    const Value *x = n->in[0], *ind = n->in[1];
    char b1[SHP_BUF], b2[SHP_BUF];
    int r = x->shape.rank;
    if (need_index_dtype(n, 1, d)) return -1;
    if (r < 1) return diag_node_error(d, n, "input 'data' must have rank >= 1, got a scalar");
    if (ind->shape.rank != r)
        return diag_node_error(d, n, "input 'indices' has rank %d, but input 'data' has rank %d", ind->shape.rank, r);
    int ax = ir_norm_axis(axis_attr, r);
    if (ax < 0) return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for rank %d", (long long)axis_attr, r);
    for (int k = 0; k < r; k++)
        if (k != ax && ind->shape.dims[k] > x->shape.dims[k])
            return diag_node_error(d, n, "input 'indices' shape %s exceeds input 'data' shape %s on axis %d",
                                   ir_shape_str(&ind->shape, b1, sizeof b1), ir_shape_str(&x->shape, b2, sizeof b2), k);
    if (check_const_indices(n, ind, &x->shape.dims[ax], 1, ax, d)) return -1;
    return ax;
}

/* Runtime shapes of GatherElements / ScatterElements: off the axis each
 * dim of indices is data's (the same symbol, or both static); along it
 * either may be runtime (the kernel checks every index against data's
 * actual extent). The output has the shape of indices (a gather) or data
 * (a scatter), runtime dims included; updates has indices' shape (`infer`
 * compared them, symbols included). */
static int elements_infer_sym(Graph *g, Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape, *is = &n->in[1]->shape;
    int scatter = n->op == OP_ScatterElements;
    int ax = ir_norm_axis(n->attrs[scatter ? SCATTER_ELEMENTS_AXIS : GATHER_ELEMENTS_AXIS].i, xs->rank);
    char b1[SHP_BUF], b2[SHP_BUF];
    for (int k = 0; k < xs->rank; k++)
        if (k != ax && is->sym[k] != xs->sym[k])
            return diag_node_error(d, n, "dim %d of input 'indices' %s and input 'data' %s must be the same at run time", k,
                                   ir_shape_str_g(g, is, b1, sizeof b1), ir_shape_str_g(g, xs, b2, sizeof b2));
    memcpy(n->out[0]->shape.sym, scatter ? xs->sym : is->sym, sizeof xs->sym);
    return 0;
}

static int ge_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    if (elements_check(n, n->attrs[GATHER_ELEMENTS_AXIS].i, d) < 0) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &n->in[1]->shape);
    return 0;
}

/* Offset in data of element e of indices (value v along axis ax), or -1. */
static int64_t elements_offset(const Node *n, int64_t e, double v, int ax, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int64_t c[IR_MAX_RANK], st[IR_MAX_RANK];
    coords_of(&n->in[1]->shape, e, c);
    int64_t w = wrap_index(n, v, xs->dims[ax], ax, d);
    if (w < 0) return -1;
    c[ax] = w;
    ir_row_strides(xs, st);
    int64_t off = 0;
    for (int k = 0; k < xs->rank; k++) off += c[k] * st[k];
    return off;
}

static int ge_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int ax = ir_norm_axis(n->attrs[GATHER_ELEMENTS_AXIS].i, n->in[0]->shape.rank);
    int64_t cnt = ir_numel(&n->in[1]->shape);
    for (int64_t e = 0; e < cnt; e++) {
        int64_t off = elements_offset(n, e, in[1][e], ax, d);
        if (off < 0) return -1;
        out[0][e] = in[0][off];
    }
    return 0;
}

static int ge_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    const char *a = gb_fmt(gc, "axis=%lld reduction=\"add\"", (long long)n->attrs[GATHER_ELEMENTS_AXIS].i);
    gb_set(gc, 0, gb3(gc, OP_ScatterElements, a, gb_zeros_like(gc, n->in[0]), n->in[1], gb_dy(gc, 0)));
    return gb_done(gc);
}

const OpDesc op_GatherElements = {
    .name = "GatherElements", .min_in = 2, .max_in = 2, .in_names = ge_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(ge_attrs), .infer = ge_infer, .infer_sym = elements_infer_sym, .eval = ge_eval, .gradient = ge_grad,
    .backward_reads = idx_bw_reads,
};

static int se_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0], *ind = n->in[1], *u = n->in[2];
    char b1[SHP_BUF], b2[SHP_BUF];
    if (check_reduction(n, n->attrs[SCATTER_ELEMENTS_REDUCTION].s, d)) return -1;
    if (u->dtype != x->dtype)
        return diag_node_error(d, n, "input 'updates' has dtype %s, but input 'data' has dtype %s", ir_dtype_name(u->dtype),
                               ir_dtype_name(x->dtype));
    if (!ir_shape_eq(&u->shape, &ind->shape))
        return diag_node_error(d, n, "input 'updates' shape %s differs from input 'indices' shape %s",
                               ir_shape_str(&u->shape, b1, sizeof b1), ir_shape_str(&ind->shape, b2, sizeof b2));
    if (elements_check(n, n->attrs[SCATTER_ELEMENTS_AXIS].i, d) < 0) return -1;
    ir_set_out(n, 0, x->dtype, &x->shape);
    return 0;
}

static int se_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int ax = ir_norm_axis(n->attrs[SCATTER_ELEMENTS_AXIS].i, n->in[0]->shape.rank);
    int kind = reduction_kind(n->attrs[SCATTER_ELEMENTS_REDUCTION].s);
    memcpy(out[0], in[0], sizeof(double) * (size_t)ir_numel(&n->in[0]->shape));
    int64_t cnt = ir_numel(&n->in[1]->shape);
    for (int64_t e = 0; e < cnt; e++) {
        int64_t off = elements_offset(n, e, in[1][e], ax, d);
        if (off < 0) return -1;
        out[0][off] = reduce2(kind, out[0][off], in[2][e]);
    }
    return 0;
}

/* Scatters with reduction none or add (the others have no gradient here):
 * updates get dY gathered at their indices; data gets dY, with the
 * overwritten positions zeroed for none (a scatter of zeros into dY).
 * Duplicate indices under none are undefined in ONNX; every duplicate then
 * gets the gradient of the position. */
static int scatter_grad(GradCtx *gc, OpKind gather, OpKind scatter, const char *gather_attrs, const char *scatter_attrs,
                        const char *reduction)
{
    const Node *n = gc->n;
    int kind = reduction_kind(reduction);
    if (kind != reduction_kind("none") && kind != reduction_kind("add"))
        return diag_node_error(gc->d, n, "op '%s' with reduction '%s' has no gradient (only none and add)", ir_op(n->op)->name,
                               reduction);
    Value *dy = gb_dy(gc, 0);
    if (gc->need[0])
        gb_set(gc, 0, kind == reduction_kind("add") ? dy : gb3(gc, scatter, scatter_attrs, dy, n->in[1], gb_zeros_like(gc, n->in[2])));
    if (gc->need[2]) gb_set(gc, 2, gb2(gc, gather, gather_attrs, dy, n->in[1]));
    return gb_done(gc);
}

static int se_grad(GradCtx *gc)
{
    const char *a = gb_fmt(gc, "axis=%lld", (long long)gc->n->attrs[SCATTER_ELEMENTS_AXIS].i);
    return scatter_grad(gc, OP_GatherElements, OP_ScatterElements, a, a, gc->n->attrs[SCATTER_ELEMENTS_REDUCTION].s);
}

const OpDesc op_ScatterElements = {
    .name = "ScatterElements", .min_in = 3, .max_in = 3, .in_names = se_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(se_attrs), .infer = se_infer, .infer_sym = elements_infer_sym,
    .inplace = ir_inplace_00, .n_inplace = 1, .eval = se_eval, .gradient = se_grad, .backward_reads = idx_bw_reads,
};

/* ---- GatherND / ScatterND ------------------------------------------------------- */

static const AttrSpec gnd_attrs[] = {[GATHER_ND_BATCH_DIMS] = {"batch_dims", ATTR_INT, "0", 0}};
OP_ATTRS_CHECK(gnd_attrs, GATHER_ND_COUNT);
static const AttrSpec snd_attrs[] = {[SCATTER_ND_REDUCTION] = {"reduction", ATTR_STRING, "none", 0}};
OP_ATTRS_CHECK(snd_attrs, SCATTER_ND_COUNT);

static int gnd_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0], *ind = n->in[1];
    char b1[SHP_BUF], b2[SHP_BUF];
    if (need_index_dtype(n, 1, d)) return -1;
    int r = x->shape.rank, q = ind->shape.rank;
    int64_t b = n->attrs[GATHER_ND_BATCH_DIMS].i;
    if (r < 1) return diag_node_error(d, n, "input 'data' must have rank >= 1, got a scalar");
    if (q < 1) return diag_node_error(d, n, "input 'indices' must have rank >= 1, got a scalar");
    if (b < 0 || b >= q || b >= r)
        return diag_node_error(d, n, "attribute 'batch_dims' = %lld must be in [0, min(rank(data), rank(indices)) = %d)", (long long)b,
                               q < r ? q : r);
    for (int k = 0; k < b; k++)
        if (ind->shape.dims[k] != x->shape.dims[k])
            return diag_node_error(d, n, "input 'indices' shape %s and input 'data' shape %s differ on batch axis %d",
                                   ir_shape_str(&ind->shape, b1, sizeof b1), ir_shape_str(&x->shape, b2, sizeof b2), k);
    int64_t m = ind->shape.dims[q - 1];
    if (m < 1 || m > r - b)
        return diag_node_error(d, n, "last dim of input 'indices' is %lld; it must be in [1, rank(data) - batch_dims = %lld]", (long long)m,
                               (long long)(r - b));
    int orank = (int)(q - 1 + r - b - m);
    if (orank > IR_MAX_RANK) return diag_node_error(d, n, "output rank %d exceeds the maximum %d", orank, IR_MAX_RANK);
    if (check_const_indices(n, ind, &x->shape.dims[b], (int)m, (int)b, d)) return -1;
    Shape s = {0};
    memset(&s, 0, sizeof s);
    for (int k = 0; k < q - 1; k++) s.dims[s.rank++] = ind->shape.dims[k];
    for (int k = (int)(b + m); k < r; k++) s.dims[s.rank++] = x->shape.dims[k];
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

/* Element offset in data (past dims [ax0, ax0+m)) of index tuple t, or -1. */
static int64_t nd_offset(const Node *n, const double *tuple, int m, int ax0, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int64_t st[IR_MAX_RANK], off = 0;
    ir_row_strides(xs, st);
    for (int k = 0; k < m; k++) {
        int64_t w = wrap_index(n, tuple[k], xs->dims[ax0 + k], ax0 + k, d);
        if (w < 0) return -1;
        off += w * st[ax0 + k];
    }
    return off;
}

static int gnd_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape, *is = &n->in[1]->shape;
    int b = (int)n->attrs[GATHER_ND_BATCH_DIMS].i, q = is->rank;
    int m = (int)is->dims[q - 1];
    int64_t slice = dims_prod(xs, b + m, xs->rank), batch_stride = dims_prod(xs, b, xs->rank);
    int64_t per_batch = dims_prod(is, b, q - 1), tuples = dims_prod(is, 0, q - 1);
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = nd_offset(n, in[1] + t * m, m, b, d);
        if (off < 0) return -1;
        off += (per_batch ? t / per_batch : 0) * batch_stride;
        memcpy(out[0] + t * slice, in[0] + off, sizeof(double) * (size_t)slice);
    }
    return 0;
}

/* batch_dims 0: dY scatter-added into zeros at the index tuples. */
static int gnd_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    if (n->attrs[GATHER_ND_BATCH_DIMS].i != 0)
        return diag_node_error(gc->d, n, "op 'GatherND' with batch_dims != 0 has no gradient");
    gb_set(gc, 0, gb3(gc, OP_ScatterND, "reduction=\"add\"", gb_zeros_like(gc, n->in[0]), n->in[1], gb_dy(gc, 0)));
    return gb_done(gc);
}

/* Runtime shapes: the leading dims of indices (a NonZero's count) and the
 * data dims past the addressed ones carry into the output. The addressed
 * dims of data may be runtime (the kernel checks each index against the
 * actual extent); the tuple length (last dim of indices) must be static and
 * each batch dim the same on both sides. */
static int gnd_infer_sym(Graph *g, Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape, *is = &n->in[1]->shape;
    Shape *ys = &n->out[0]->shape;
    int b = (int)n->attrs[GATHER_ND_BATCH_DIMS].i, q = is->rank, r = xs->rank;
    char b1[SHP_BUF];
    if (is->sym[q - 1])
        return diag_node_error(d, n, "the last dim of input 'indices' %s (the index tuple length) must be static",
                               ir_shape_str_g(g, is, b1, sizeof b1));
    for (int k = 0; k < b; k++)
        if (is->sym[k] != xs->sym[k])
            return diag_node_error(d, n, "batch dim %d of inputs 'data' and 'indices' must be the same at run time", k);
    int m = (int)is->dims[q - 1], j = 0;
    for (int k = 0; k < q - 1; k++) ys->sym[j++] = is->sym[k];
    for (int k = b + m; k < r; k++) ys->sym[j++] = xs->sym[k];
    return 0;
}

const OpDesc op_GatherND = {
    .name = "GatherND", .min_in = 2, .max_in = 2, .in_names = ge_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(gnd_attrs), .infer = gnd_infer, .infer_sym = gnd_infer_sym, .eval = gnd_eval, .gradient = gnd_grad,
    .backward_reads = idx_bw_reads,
};

static int snd_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0], *ind = n->in[1], *u = n->in[2];
    char b1[SHP_BUF], b2[SHP_BUF];
    if (check_reduction(n, n->attrs[SCATTER_ND_REDUCTION].s, d)) return -1;
    if (need_index_dtype(n, 1, d)) return -1;
    if (u->dtype != x->dtype)
        return diag_node_error(d, n, "input 'updates' has dtype %s, but input 'data' has dtype %s", ir_dtype_name(u->dtype),
                               ir_dtype_name(x->dtype));
    int r = x->shape.rank, q = ind->shape.rank;
    if (r < 1) return diag_node_error(d, n, "input 'data' must have rank >= 1, got a scalar");
    if (q < 1) return diag_node_error(d, n, "input 'indices' must have rank >= 1, got a scalar");
    int64_t k = ind->shape.dims[q - 1];
    if (k < 1 || k > r)
        return diag_node_error(d, n, "last dim of input 'indices' is %lld; it must be in [1, rank(data) = %d]", (long long)k, r);
    Shape want = {0};
    memset(&want, 0, sizeof want);
    for (int i = 0; i < q - 1; i++) want.dims[want.rank++] = ind->shape.dims[i];
    for (int i = (int)k; i < r; i++) {
        if (want.rank >= IR_MAX_RANK) return diag_node_error(d, n, "input 'updates' would need rank > %d", IR_MAX_RANK);
        want.dims[want.rank++] = x->shape.dims[i];
    }
    if (!ir_shape_eq(&u->shape, &want))
        return diag_node_error(d, n, "input 'updates' shape %s must be indices.shape[:-1] + data.shape[%lld:] = %s",
                               ir_shape_str(&u->shape, b1, sizeof b1), (long long)k, ir_shape_str(&want, b2, sizeof b2));
    if (check_const_indices(n, ind, x->shape.dims, (int)k, 0, d)) return -1;
    ir_set_out(n, 0, x->dtype, &x->shape);
    return 0;
}

static int snd_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape, *is = &n->in[1]->shape;
    int q = is->rank, m = (int)is->dims[q - 1];
    int kind = reduction_kind(n->attrs[SCATTER_ND_REDUCTION].s);
    int64_t slice = dims_prod(xs, m, xs->rank), tuples = dims_prod(is, 0, q - 1);
    memcpy(out[0], in[0], sizeof(double) * (size_t)ir_numel(xs));
    for (int64_t t = 0; t < tuples; t++) {
        int64_t off = nd_offset(n, in[1] + t * m, m, 0, d);
        if (off < 0) return -1;
        for (int64_t e = 0; e < slice; e++) out[0][off + e] = reduce2(kind, out[0][off + e], in[2][t * slice + e]);
    }
    return 0;
}

static int snd_grad(GradCtx *gc)
{
    return scatter_grad(gc, OP_GatherND, OP_ScatterND, NULL, NULL, gc->n->attrs[SCATTER_ND_REDUCTION].s);
}

const OpDesc op_ScatterND = {
    .name = "ScatterND", .min_in = 3, .max_in = 3, .in_names = se_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(snd_attrs), .infer = snd_infer,
    .inplace = ir_inplace_00, .n_inplace = 1, .eval = snd_eval, .gradient = snd_grad, .backward_reads = idx_bw_reads,
};

/* ---- Trilu ------------------------------------------------------------------ */

static const AttrSpec trilu_attrs[] = {[TRILU_UPPER] = {"upper", ATTR_INT, "1", 0}};
OP_ATTRS_CHECK(trilu_attrs, TRILU_COUNT);
static const char *const trilu_in[] = {"input", "k"};

static int trilu_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    char b[SHP_BUF];
    if (x->shape.rank < 2) return diag_node_error(d, n, "input 'input' must have rank >= 2, got %d", x->shape.rank);
    if (ir_has_input(n, 1)) {
        const Value *k = n->in[1];
        if (k->dtype != DT_I64) return diag_node_error(d, n, "input 'k' must be int64, got %s", ir_dtype_name(k->dtype));
        if (ir_numel(&k->shape) != 1)
            return diag_node_error(d, n, "input 'k' must hold exactly one value, got shape %s", ir_shape_str(&k->shape, b, sizeof b));
    }
    ir_set_out(n, 0, x->dtype, &x->shape);
    return 0;
}

static int trilu_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *xs = &n->in[0]->shape;
    int r = xs->rank;
    int64_t rows = xs->dims[r - 2], cols = xs->dims[r - 1], cnt = ir_numel(xs);
    int64_t k = ir_has_input(n, 1) ? (int64_t)in[1][0] : 0;
    int upper = n->attrs[TRILU_UPPER].i != 0;
    for (int64_t e = 0; e < cnt; e++) {
        int64_t j = e % cols, i = (e / cols) % rows;
        int keep = upper ? j - i >= k : j - i <= k;
        out[0][e] = keep ? in[0][e] : 0.0;
    }
    return 0;
}

/* The same mask on dY. */
static int trilu_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    Value *in[2] = {gb_dy(gc, 0), n->in[1]};
    gb_set(gc, 0, gb_node(gc, OP_Trilu, gb_fwd_attrs(gc, NULL), ir_has_input(n, 1) ? 2 : 1, in, 1, NULL));
    return gb_done(gc);
}

const OpDesc op_Trilu = {
    .name = "Trilu", .min_in = 1, .max_in = 2, .in_names = trilu_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(trilu_attrs), .infer = trilu_infer,
    .inplace = ir_inplace_00, .n_inplace = 1, .eval = trilu_eval, .gradient = trilu_grad, .backward_reads = idx_bw_reads,
};

/* ---- Range ------------------------------------------------------------------ */

static const char *const range_in[] = {"start", "limit", "delta"};

/* Reads start, limit, delta and the element count; -1 with a diagnostic. */
static int range_read(const Node *n, double *v, int64_t *count, Diag *d)
{
    for (int i = 0; i < 3; i++)
        if (n->in[i]->kind != VK_CONST) return diag_node_error(d, n, "Range needs constant inputs");
    for (int i = 0; i < 3; i++)
        if (const_scalar(n, i, &v[i], d)) return -1;
    if (v[2] == 0) return diag_node_error(d, n, "input 'delta' must not be zero");
    double c;
    if (n->in[0]->dtype == DT_F32) /* the count is computed in the input type */
        c = ceil(ir_round_to(DT_F32, ir_round_to(DT_F32, v[1] - v[0]) / v[2]));
    else
        c = ceil((v[1] - v[0]) / v[2]);
    if (!(c < 9.0e15)) {
        if (c > 0 || isnan(c)) return diag_node_error(d, n, "Range output length is too large");
    }
    *count = c > 0 ? (int64_t)c : 0;
    return 0;
}

static int range_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    DType t = n->in[0]->dtype;
    if (t != DT_F32 && t != DT_F64 && t != DT_I16 && t != DT_I32 && t != DT_I64)
        return diag_node_error(d, n, "input 'start' must be float, double, int16, int32 or int64, got %s", ir_dtype_name(t));
    for (int i = 1; i < 3; i++)
        if (n->in[i]->dtype != t)
            return diag_node_error(d, n, "input '%s' has dtype %s, but input 'start' has dtype %s", range_in[i],
                                   ir_dtype_name(n->in[i]->dtype), ir_dtype_name(t));
    Shape s = {0};
    memset(&s, 0, sizeof s);
    s.rank = 1;
    if (n->in[0]->kind != VK_CONST || n->in[1]->kind != VK_CONST || n->in[2]->kind != VK_CONST) {
        /* read at run time: a data-dependent length that --max-dim bounds */
        char b[SHP_BUF];
        for (int i = 0; i < 3; i++)
            if (ir_numel(&n->in[i]->shape) != 1 || ir_shape_has_sym(&n->in[i]->shape))
                return diag_node_error(d, n, "input '%s' must hold exactly one value, got shape %s", range_in[i],
                                       ir_shape_str(&n->in[i]->shape, b, sizeof b));
        s.dims[0] = IR_DIM_UNBOUNDED;
        s.sym[0] = IR_SYM_NEW;
        ir_set_out(n, 0, t, &s);
        return 0;
    }
    double v[3];
    int64_t count = 0;
    if (range_read(n, v, &count, d)) return -1;
    s.dims[0] = count;
    ir_set_out(n, 0, t, &s);
    return 0;
}

static int range_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    int64_t cnt = n->out[0]->shape.dims[0];
    for (int64_t i = 0; i < cnt; i++) out[0][i] = in[0][0] + (double)i * in[2][0];
    return 0;
}

const OpDesc op_Range = {
    .name = "Range", .min_in = 3, .max_in = 3, .in_names = range_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    .infer = range_infer, .eval = range_eval,
    .shape_inputs = 1u << 0 | 1u << 1 | 1u << 2,
};

/* ---- Tile ------------------------------------------------------------------- */

static const char *const tile_in[] = {"input", "repeats"};

static int tile_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    int64_t rep[MAX_LIST];
    int r = x->shape.rank;
    if (n->in[1]->kind != VK_CONST) {
        Shape s;
        if (runtime_dims(n, 1, &s, d)) return -1;
        if (s.rank != r) return diag_node_error(d, n, "input 'repeats' has %d values, but input 'input' has rank %d", s.rank, r);
        /* dim i is x's times a repeat nothing bounds: its multiple (IR_DIM_UNBOUNDED_TIMES) */
        for (int i = 0; i < r; i++)
            if (x->shape.dims[i] > 1 && !x->shape.sym[i]) s.dims[i] = IR_DIM_UNBOUNDED_TIMES(x->shape.dims[i]);
        ir_set_out(n, 0, x->dtype, &s);
        return 0;
    }
    int k = const_list(n, 1, rep, d);
    if (k < 0) return -1;
    if (k != r) return diag_node_error(d, n, "input 'repeats' has %d values, but input 'input' has rank %d", k, r);
    Shape s = x->shape;
    for (int i = 0; i < r; i++) {
        if (rep[i] < 0) return diag_node_error(d, n, "input 'repeats' value %lld at index %d is negative", (long long)rep[i], i);
        if (ir_mul_ok(x->shape.dims[i], rep[i], &s.dims[i])) return diag_node_error(d, n, "output dim %d overflows int64", i);
    }
    int64_t cnt;
    if (ir_shape_numel(&s, &cnt)) return diag_node_error(d, n, "output element count overflows int64");
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

static int tile_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *xs = &n->in[0]->shape, *os = &n->out[0]->shape;
    int64_t st[IR_MAX_RANK], c[IR_MAX_RANK], cnt = ir_numel(os);
    ir_row_strides(xs, st);
    for (int64_t e = 0; e < cnt; e++) {
        coords_of(os, e, c);
        int64_t off = 0;
        for (int k = 0; k < os->rank; k++) off += (c[k] % xs->dims[k]) * st[k];
        out[0][e] = in[0][off];
    }
    return 0;
}

/* dY viewed with each repeated axis split into [repeats, dim] and summed
 * over the repeats (axes without repeats stay whole). */
static int tile_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    const Value *x = n->in[0];
    Value *dy = gb_dy(gc, 0);
    if (ir_numel(&dy->shape) == 0) {
        gb_set(gc, 0, gb_zeros_like(gc, x));
        return gb_done(gc);
    }
    int64_t rep[MAX_LIST], axes[IR_MAX_RANK];
    if (const_list(n, 1, rep, gc->d) < 0) return -1;
    Shape sp = {0};
    memset(&sp, 0, sizeof sp);
    int na = 0;
    for (int k = 0; k < x->shape.rank; k++) {
        if (rep[k] > 1 && x->shape.dims[k] > 1) {
            if (sp.rank + 2 > IR_MAX_RANK)
                return diag_node_error(gc->d, n, "the gradient of Tile needs rank > %d (too many repeated axes)", IR_MAX_RANK);
            axes[na++] = sp.rank;
            sp.dims[sp.rank++] = rep[k];
            sp.dims[sp.rank++] = x->shape.dims[k];
        } else {
            if (rep[k] > 1) axes[na++] = sp.rank; /* a size-1 axis: its repeats are the whole axis */
            sp.dims[sp.rank++] = dy->shape.dims[k];
        }
    }
    gb_set(gc, 0, gb_reshape(gc, gb_sum(gc, gb_reshape(gc, dy, &sp), axes, na, 1), &x->shape));
    return gb_done(gc);
}

const OpDesc op_Tile = {
    .name = "Tile", .min_in = 2, .max_in = 2, .in_names = tile_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    .infer = tile_infer, .eval = tile_eval, .gradient = tile_grad, .backward_reads = ir_bw_none,
    .shape_inputs = 1u << 1,
};

/* ---- CumSum ----------------------------------------------------------------- */

static const AttrSpec cumsum_attrs[] = {
    [CUMSUM_EXCLUSIVE] = {"exclusive", ATTR_INT, "0", 0},
    [CUMSUM_REVERSE] = {"reverse", ATTR_INT, "0", 0},
};
OP_ATTRS_CHECK(cumsum_attrs, CUMSUM_COUNT);
static const char *const cumsum_in[] = {"x", "axis"};
static const char *const cumsum_out[] = {"y"};

static int cumsum_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    if (x->dtype == DT_BOOL) return diag_node_error(d, n, "input 'x' must be numeric, got bool");
    if (x->shape.rank < 1) return diag_node_error(d, n, "input 'x' must have rank >= 1, got a scalar");
    const Value *av = n->in[1];
    char b[SHP_BUF];
    if (av->kind != VK_CONST) { /* a runtime axis: checked when evaluated */
        if (need_index_dtype(n, 1, d)) return -1;
        if (ir_numel(&av->shape) != 1)
            return diag_node_error(d, n, "input 'axis' must hold exactly one value, got shape %s", ir_shape_str(&av->shape, b, sizeof b));
    } else {
        int64_t a;
        if (const_int_scalar(n, 1, &a, d)) return -1;
        if (ir_norm_axis(a, x->shape.rank) < 0)
            return diag_node_error(d, n, "input 'axis' = %lld is out of range for rank %d", (long long)a, x->shape.rank);
    }
    ir_set_out(n, 0, x->dtype, &x->shape);
    return 0;
}

static int cumsum_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int ax = ir_norm_axis((int64_t)in[1][0], xs->rank);
    if (ax < 0) return diag_node_error(d, n, "input 'axis' = %lld is out of range for rank %d", (long long)in[1][0], xs->rank);
    int64_t outer = dims_prod(xs, 0, ax), dim = xs->dims[ax], inner = dims_prod(xs, ax + 1, xs->rank);
    int excl = n->attrs[CUMSUM_EXCLUSIVE].i != 0, rev = n->attrs[CUMSUM_REVERSE].i != 0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double acc = 0;
            for (int64_t t = 0; t < dim; t++) {
                int64_t p = (o * dim + (rev ? dim - 1 - t : t)) * inner + i;
                double v = in[0][p];
                if (excl) {
                    out[0][p] = acc;
                    acc += v;
                } else {
                    acc += v;
                    out[0][p] = acc;
                }
            }
        }
    return 0;
}

/* Each y[t] sums x over t' <= t (or < t), so x[t'] receives the dY summed
 * over t >= t' (or > t'): the same CumSum in the other direction. */
static int cumsum_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    const char *a = gb_fmt(gc, "exclusive=%d reverse=%d", n->attrs[CUMSUM_EXCLUSIVE].i != 0, n->attrs[CUMSUM_REVERSE].i == 0);
    gb_set(gc, 0, gb2(gc, OP_CumSum, a, gb_dy(gc, 0), n->in[1]));
    return gb_done(gc);
}

const OpDesc op_CumSum = {
    .name = "CumSum", .min_in = 2, .max_in = 2, .in_names = cumsum_in,
    .min_out = 1, .max_out = 1, .out_names = cumsum_out,
    OP_ATTRS(cumsum_attrs), .infer = cumsum_infer,
    .inplace = ir_inplace_00, .n_inplace = 1, .eval = cumsum_eval, .gradient = cumsum_grad, .backward_reads = idx_bw_reads,
};

/* ---- OneHot ----------------------------------------------------------------- */

static const AttrSpec onehot_attrs[] = {[ONEHOT_AXIS] = {"axis", ATTR_INT, "-1", 0}};
OP_ATTRS_CHECK(onehot_attrs, ONEHOT_COUNT);
static const char *const onehot_in[] = {"indices", "depth", "values"};

static int onehot_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *ind = n->in[0], *vals = n->in[2];
    char b[SHP_BUF];
    if (ind->dtype == DT_BOOL) return diag_node_error(d, n, "input 'indices' must be numeric, got bool");
    if (n->in[1]->dtype == DT_BOOL) return diag_node_error(d, n, "input 'depth' must be numeric, got bool");
    double dv = 0;
    int runtime = n->in[1]->kind != VK_CONST; /* depth read at run time: bounded by --max-dim */
    if (runtime && (ir_numel(&n->in[1]->shape) != 1 || ir_shape_has_sym(&n->in[1]->shape)))
        return diag_node_error(d, n, "input 'depth' must hold exactly one value, got shape %s", ir_shape_str(&n->in[1]->shape, b, sizeof b));
    if (!runtime && const_scalar(n, 1, &dv, d)) return -1;
    if (!runtime && (!(dv >= 1) || dv > 1e15)) return diag_node_error(d, n, "input 'depth' must be >= 1, got %g", dv);
    if (vals->shape.rank != 1 || vals->shape.dims[0] != 2)
        return diag_node_error(d, n, "input 'values' must have shape [2] (off, on), got %s", ir_shape_str(&vals->shape, b, sizeof b));
    int r = ind->shape.rank + 1;
    if (r > IR_MAX_RANK) return diag_node_error(d, n, "output rank %d exceeds the maximum %d", r, IR_MAX_RANK);
    int64_t a = n->attrs[ONEHOT_AXIS].i;
    int ax = ir_norm_axis(a, r);
    if (ax < 0) return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for output rank %d", (long long)a, r);
    Shape s = {0};
    memset(&s, 0, sizeof s);
    s.rank = r;
    for (int i = 0, j = 0; i < r; i++) s.dims[i] = i == ax ? (int64_t)dv : ind->shape.dims[j++];
    if (runtime) {
        s.dims[ax] = IR_DIM_UNBOUNDED;
        s.sym[ax] = IR_SYM_NEW;
        ir_set_out(n, 0, vals->dtype, &s);
        return 0;
    }
    int64_t cnt;
    if (ir_shape_numel(&s, &cnt)) return diag_node_error(d, n, "output element count overflows int64");
    ir_set_out(n, 0, vals->dtype, &s);
    return 0;
}

static int onehot_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *os = &n->out[0]->shape;
    int ax = ir_norm_axis(n->attrs[ONEHOT_AXIS].i, os->rank);
    int64_t depth = os->dims[ax], outer = dims_prod(os, 0, ax), inner = dims_prod(os, ax + 1, os->rank);
    int64_t cnt = ir_numel(os);
    for (int64_t e = 0; e < cnt; e++) out[0][e] = in[2][0];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double v = in[0][o * inner + i];
            if (!(v > -(double)depth - 1.0 && v < (double)depth)) continue;
            int64_t k = (int64_t)v;
            if (k < 0) k += depth;
            if (k >= 0 && k < depth) out[0][(o * depth + k) * inner + i] = in[2][1];
        }
    return 0;
}

const OpDesc op_OneHot = {
    .name = "OneHot", .min_in = 3, .max_in = 3, .in_names = onehot_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(onehot_attrs), .infer = onehot_infer, .eval = onehot_eval,
    .shape_inputs = 1u << 1,
};

/* ---- ArgMax / ArgMin ---------------------------------------------------------- */

static const AttrSpec arg_attrs[] = {
    [ARG_AXIS] = {"axis", ATTR_INT, "0", 0},
    [ARG_KEEPDIMS] = {"keepdims", ATTR_INT, "1", 0},
    [ARG_SELECT_LAST_INDEX] = {"select_last_index", ATTR_INT, "0", 0},
};
OP_ATTRS_CHECK(arg_attrs, ARG_COUNT);
static const char *const arg_in[] = {"data"};
static const char *const arg_out[] = {"reduced"};

static int arg_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    if (x->dtype == DT_BOOL) return diag_node_error(d, n, "input 'data' must be numeric, got bool");
    int r = x->shape.rank;
    if (r < 1) return diag_node_error(d, n, "input 'data' must have rank >= 1, got a scalar");
    int64_t a = n->attrs[ARG_AXIS].i;
    int ax = ir_norm_axis(a, r);
    if (ax < 0) return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for rank %d", (long long)a, r);
    if (x->shape.dims[ax] == 0) return diag_node_error(d, n, "cannot reduce axis %d of size 0", ax);
    Shape s = {0};
    memset(&s, 0, sizeof s);
    for (int i = 0; i < r; i++) {
        if (i == ax && !n->attrs[ARG_KEEPDIMS].i) continue;
        s.dims[s.rank++] = i == ax ? 1 : x->shape.dims[i];
    }
    ir_set_out(n, 0, DT_I64, &s);
    return 0;
}

static int arg_eval_dir(const Node *n, const double *x, double *y, int want_max)
{
    const Shape *xs = &n->in[0]->shape;
    int ax = ir_norm_axis(n->attrs[ARG_AXIS].i, xs->rank);
    int last = n->attrs[ARG_SELECT_LAST_INDEX].i != 0;
    int64_t outer = dims_prod(xs, 0, ax), dim = xs->dims[ax], inner = dims_prod(xs, ax + 1, xs->rank);
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double best = x[o * dim * inner + i];
            int64_t bi = 0;
            for (int64_t t = 1; t < dim; t++) {
                double v = x[(o * dim + t) * inner + i];
                int better = want_max ? v > best : v < best;
                if (better || (last && v == best)) {
                    best = v;
                    bi = t;
                }
            }
            y[o * inner + i] = (double)bi;
        }
    return 0;
}

static int argmax_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    return arg_eval_dir(n, in[0], out[0], 1);
}

static int argmin_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    return arg_eval_dir(n, in[0], out[0], 0);
}

const OpDesc op_ArgMax = {
    .name = "ArgMax", .min_in = 1, .max_in = 1, .in_names = arg_in,
    .min_out = 1, .max_out = 1, .out_names = arg_out,
    OP_ATTRS(arg_attrs), .infer = arg_infer, .eval = argmax_eval,
};

const OpDesc op_ArgMin = {
    .name = "ArgMin", .min_in = 1, .max_in = 1, .in_names = arg_in,
    .min_out = 1, .max_out = 1, .out_names = arg_out,
    OP_ATTRS(arg_attrs), .infer = arg_infer, .eval = argmin_eval,
};

/* ---- TopK ------------------------------------------------------------------- */

static const AttrSpec topk_attrs[] = {
    [TOPK_AXIS] = {"axis", ATTR_INT, "-1", 0},
    [TOPK_LARGEST] = {"largest", ATTR_INT, "1", 0},
    [TOPK_SORTED] = {"sorted", ATTR_INT, "1", 0},
};
OP_ATTRS_CHECK(topk_attrs, TOPK_COUNT);
static const char *const topk_in[] = {"X", "K"};
static const char *const topk_out[] = {"Values", "Indices"};

static int topk_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    if (x->dtype == DT_BOOL) return diag_node_error(d, n, "input 'X' must be numeric, got bool");
    int r = x->shape.rank;
    if (r < 1) return diag_node_error(d, n, "input 'X' must have rank >= 1, got a scalar");
    int64_t a = n->attrs[TOPK_AXIS].i;
    int ax = ir_norm_axis(a, r);
    if (ax < 0) return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for rank %d", (long long)a, r);
    const Value *kv = n->in[1];
    if (kv->kind != VK_CONST) {
        /* K known only at run time: the extent along the axis is
         * data-dependent, bounded by the axis (the kernel checks K) */
        if (!ir_dtype_is_int(kv->dtype))
            return diag_node_error(d, n, "input 'K' must be an integer tensor, got %s", ir_dtype_name(kv->dtype));
        if (kv->shape.rank > 1 || ir_numel(&kv->shape) != 1)
            return diag_node_error(d, n, "input 'K' must hold one value");
        Shape s = x->shape;
        s.sym[ax] = IR_SYM_NEW;
        ir_set_out(n, 0, x->dtype, &s);
        if (n->n_out > 1) ir_set_out(n, 1, DT_I64, &s);
        return 0;
    }
    int64_t k;
    if (const_int_scalar(n, 1, &k, d)) return -1;
    if (k < 0 || k > x->shape.dims[ax])
        return diag_node_error(d, n, "input 'K' = %lld is out of range [0, %lld] for axis %d", (long long)k, (long long)x->shape.dims[ax], ax);
    Shape s = x->shape;
    s.dims[ax] = k;
    ir_set_out(n, 0, x->dtype, &s);
    if (n->n_out > 1) ir_set_out(n, 1, DT_I64, &s);
    return 0;
}

typedef struct TopkCtx {
    const double *key;
    int largest;
} TopkCtx;

/* Whether element a comes before b: larger (smaller) first, NaN as the
 * largest value, ties by lower index (a total order). */
static int topk_before(const TopkCtx *c, int64_t a, int64_t b)
{
    double x = c->key[a], y = c->key[b];
    int xn = isnan(x), yn = isnan(y);
    if (xn || yn) {
        if (xn && yn) return a < b;
        return c->largest ? xn : yn;
    }
    if (x != y) return c->largest ? x > y : x < y;
    return a < b;
}

static int topk_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int ax = ir_norm_axis(n->attrs[TOPK_AXIS].i, xs->rank);
    int64_t outer = dims_prod(xs, 0, ax), dim = xs->dims[ax], inner = dims_prod(xs, ax + 1, xs->rank);
    int64_t k = n->out[0]->shape.dims[ax];
    double *key = malloc(sizeof(double) * (size_t)(dim ? dim : 1));
    int64_t *ord = malloc(sizeof(int64_t) * (size_t)(dim ? dim : 1));
    if (!key || !ord) {
        free(key);
        free(ord);
        return diag_node_error(d, n, "out of memory");
    }
    TopkCtx c = {key, n->attrs[TOPK_LARGEST].i != 0};
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            for (int64_t t = 0; t < dim; t++) {
                key[t] = in[0][(o * dim + t) * inner + i];
                ord[t] = t;
            }
            /* selection of the first k in order (reference: simple, O(k * dim)) */
            for (int64_t s = 0; s < k; s++) {
                int64_t best = s;
                for (int64_t t = s + 1; t < dim; t++)
                    if (topk_before(&c, ord[t], ord[best])) best = t;
                int64_t tmp = ord[s];
                ord[s] = ord[best];
                ord[best] = tmp;
                int64_t p = (o * k + s) * inner + i;
                out[0][p] = key[ord[s]];
                if (n->n_out > 1) out[1][p] = (double)ord[s];
            }
        }
    free(key);
    free(ord);
    return 0;
}

/* Gradient of Values: dY scattered back (added) to the positions Indices
 * names along the axis; K is an integer operand and gets none. */
static int topk_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    if (n->n_out < 2 || !n->out[1])
        return diag_node_error(gc->d, n, "has no gradient without its 'Indices' output");
    int axis = ir_norm_axis(n->attrs[TOPK_AXIS].i, n->in[0]->shape.rank);
    Value *z = gb_zeros_like(gc, n->in[0]);
    gb_set(gc, 0, gb3(gc, OP_ScatterElements, gb_fmt(gc, "axis=%d reduction=\"add\"", axis), z, n->out[1], gb_dy(gc, 0)));
    return gb_done(gc);
}

static int topk_bw_reads(const Node *n, int is_output, int i) { (void)n; return is_output && i == 1; }

/* Runtime shapes: X's runtime dims carry into the outputs. Along the axis
 * the output has K's extent: a constant, or when K is a shape value (the
 * detectors' min(300, Shape(scores)[0]), ir/ops/shape_values.c) its term,
 * else the data-dependent dim `infer` asked for, bounded by the axis. The
 * kernel checks K against the actual extent of the axis (NAME_ERR_SHAPE). */
static int topk_infer_sym(Graph *g, Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int ax = ir_norm_axis(n->attrs[TOPK_AXIS].i, xs->rank);
    IrSymTerm t = {0, 0};
    int runtime = n->in[1]->kind != VK_CONST, term = runtime && ir_value_terms(n->in[1], &t, 1) == 1;
    if (term && !t.sym && (t.c < 0 || t.c > xs->dims[ax]))
        return diag_node_error(d, n, "input 'K' = %lld is out of range [0, %lld] for axis %d", (long long)t.c,
                               (long long)xs->dims[ax], ax);
    for (int i = 0; i < n->n_out; i++) {
        Shape *ys = &n->out[i]->shape;
        for (int k = 0; k < xs->rank; k++)
            if (k != ax) ys->sym[k] = xs->sym[k];
        if (!runtime) ys->sym[ax] = 0; /* the constant K */
        if (!term) continue;
        if (!t.sym) {
            ys->sym[ax] = IR_SYM_STATIC;
            ys->dims[ax] = t.c;
        } else if (ir_sym(g, t.sym)->hi <= xs->dims[ax]) {
            /* a term that can exceed the axis' bound stays a fresh dim */
            ys->sym[ax] = t.sym;
            ys->dims[ax] = ir_sym(g, t.sym)->hi;
        }
    }
    return 0;
}

const OpDesc op_TopK = {
    .name = "TopK", .min_in = 2, .max_in = 2, .in_names = topk_in,
    .min_out = 1, .max_out = 2, .out_names = topk_out,
    OP_ATTRS(topk_attrs), .infer = topk_infer, .eval = topk_eval,
    .gradient = topk_grad, .backward_reads = topk_bw_reads, .infer_sym = topk_infer_sym,
    .shape_inputs = 1u << 1,
};

/* ---- EyeLike ---------------------------------------------------------------- */

static const AttrSpec eye_attrs[] = {
    [EYELIKE_DTYPE] = {"dtype", ATTR_INT, NULL, 0},
    [EYELIKE_K] = {"k", ATTR_INT, "0", 0},
};
OP_ATTRS_CHECK(eye_attrs, EYELIKE_COUNT);
static const char *const eye_in[] = {"input"};

static int eye_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    if (x->shape.rank != 2) return diag_node_error(d, n, "input 'input' must have rank 2, got %d", x->shape.rank);
    DType t = x->dtype;
    if (n->attrs[EYELIKE_DTYPE].set) {
        if (ir_dtype_from_onnx(n->attrs[EYELIKE_DTYPE].i, &t))
            return diag_node_error(d, n, "attribute 'dtype' = %lld is not a supported ONNX dtype", (long long)n->attrs[EYELIKE_DTYPE].i);
    }
    ir_set_out(n, 0, t, &x->shape);
    return 0;
}

static int eye_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)in;
    (void)d;
    const Shape *s = &n->out[0]->shape;
    int64_t rows = s->dims[0], cols = s->dims[1], k = n->attrs[EYELIKE_K].i;
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) out[0][i * cols + j] = j - i == k ? 1.0 : 0.0;
    return 0;
}

const OpDesc op_EyeLike = {
    .name = "EyeLike", .min_in = 1, .max_in = 1, .in_names = eye_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(eye_attrs), .infer = eye_infer, .eval = eye_eval, .shape_only = 1,
};

/* ---- ReverseSequence ---------------------------------------------------------- */

static const AttrSpec rs_attrs[] = {
    [REVERSE_SEQUENCE_BATCH_AXIS] = {"batch_axis", ATTR_INT, "1", 0},
    [REVERSE_SEQUENCE_TIME_AXIS] = {"time_axis", ATTR_INT, "0", 0},
};
OP_ATTRS_CHECK(rs_attrs, REVERSE_SEQUENCE_COUNT);
static const char *const rs_in[] = {"input", "sequence_lens"};
static const char *const rs_out[] = {"Y"};

static int rs_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0], *len = n->in[1];
    char b[SHP_BUF];
    int64_t ba = n->attrs[REVERSE_SEQUENCE_BATCH_AXIS].i, ta = n->attrs[REVERSE_SEQUENCE_TIME_AXIS].i;
    if (x->shape.rank < 2) return diag_node_error(d, n, "input 'input' must have rank >= 2, got %d", x->shape.rank);
    if ((ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta)
        return diag_node_error(d, n, "attributes 'batch_axis' = %lld and 'time_axis' = %lld must be 0 and 1 in some order", (long long)ba,
                               (long long)ta);
    if (len->dtype != DT_I64) return diag_node_error(d, n, "input 'sequence_lens' must be int64, got %s", ir_dtype_name(len->dtype));
    int64_t batch = x->shape.dims[ba], tdim = x->shape.dims[ta];
    if (len->shape.rank != 1 || len->shape.dims[0] != batch)
        return diag_node_error(d, n, "input 'sequence_lens' must have shape [%lld] (the batch size), got %s", (long long)batch,
                               ir_shape_str(&len->shape, b, sizeof b));
    if (len->kind == VK_CONST)
        for (int64_t i = 0; i < batch; i++) {
            int64_t v = const_int_at(len, i);
            if (v < 0 || v > tdim)
                return diag_node_error(d, n, "input 'sequence_lens' value %lld is out of range [0, %lld]", (long long)v, (long long)tdim);
        }
    ir_set_out(n, 0, x->dtype, &x->shape);
    return 0;
}

static int rs_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int ba = (int)n->attrs[REVERSE_SEQUENCE_BATCH_AXIS].i, ta = 1 - ba;
    int64_t d0 = xs->dims[0], d1 = xs->dims[1], inner = dims_prod(xs, 2, xs->rank), tdim = xs->dims[ta];
    for (int64_t i0 = 0; i0 < d0; i0++)
        for (int64_t i1 = 0; i1 < d1; i1++) {
            int64_t b = ba == 0 ? i0 : i1, t = ba == 0 ? i1 : i0;
            int64_t len = (int64_t)in[1][b];
            if (len < 0 || len > tdim)
                return diag_node_error(d, n, "input 'sequence_lens' value %lld is out of range [0, %lld]", (long long)len, (long long)tdim);
            int64_t st = t < len ? len - 1 - t : t;
            int64_t s0 = ba == 0 ? i0 : st, s1 = ba == 0 ? st : i1;
            memcpy(out[0] + (i0 * d1 + i1) * inner, in[0] + (s0 * d1 + s1) * inner, sizeof(double) * (size_t)inner);
        }
    return 0;
}

/* The reversal is its own inverse (and its own transpose). */
static int rs_grad(GradCtx *gc)
{
    gb_set(gc, 0, gb2(gc, OP_ReverseSequence, gb_fwd_attrs(gc, NULL), gb_dy(gc, 0), gc->n->in[1]));
    return gb_done(gc);
}

const OpDesc op_ReverseSequence = {
    .name = "ReverseSequence", .min_in = 2, .max_in = 2, .in_names = rs_in,
    .min_out = 1, .max_out = 1, .out_names = rs_out,
    OP_ATTRS(rs_attrs), .infer = rs_infer, .eval = rs_eval, .gradient = rs_grad, .backward_reads = idx_bw_reads,
};

/* ---- Compress --------------------------------------------------------------- */

/* Compress keeps the positions along `axis` (of the flattened input when the
 * attribute is absent) where the 1-D bool `condition` is true; a condition
 * shorter than the axis drops the positions past its end. The output shape
 * counts the true values: exact for a constant condition, else a
 * data-dependent dim bounded by the condition's length. */
static const AttrSpec compress_attrs[] = {[COMPRESS_AXIS] = {"axis", ATTR_INT, NULL, 0}};
OP_ATTRS_CHECK(compress_attrs, COMPRESS_COUNT);
static const char *const compress_in[] = {"input", "condition"};

/* outer x dim x inner view of the input for n's axis (flattened: 1 x numel x 1). */
static void compress_split(const Node *n, int64_t *outer, int64_t *dim, int64_t *inner)
{
    const Shape *xs = &n->in[0]->shape;
    if (!n->attrs[COMPRESS_AXIS].set) {
        *outer = *inner = 1;
        *dim = ir_numel(xs);
        return;
    }
    int ax = ir_norm_axis(n->attrs[COMPRESS_AXIS].i, xs->rank);
    *outer = dims_prod(xs, 0, ax);
    *dim = xs->dims[ax];
    *inner = dims_prod(xs, ax + 1, xs->rank);
}

static int compress_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0], *cond = n->in[1];
    char b[SHP_BUF];
    if (cond->dtype != DT_BOOL) return diag_node_error(d, n, "input 'condition' must be bool, got %s", ir_dtype_name(cond->dtype));
    if (cond->shape.rank != 1)
        return diag_node_error(d, n, "input 'condition' must be 1-D, got shape %s", ir_shape_str(&cond->shape, b, sizeof b));
    int ax = -1;
    if (n->attrs[COMPRESS_AXIS].set) {
        int64_t a = n->attrs[COMPRESS_AXIS].i;
        ax = ir_norm_axis(a, x->shape.rank);
        if (ax < 0) return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for rank %d", (long long)a, x->shape.rank);
    }
    int64_t outer, dim, inner, len = cond->shape.dims[0], kept = 0;
    compress_split(n, &outer, &dim, &inner);
    if (len > dim)
        return diag_node_error(d, n, "input 'condition' has %lld values, more than the %lld positions %s", (long long)len, (long long)dim,
                               ax < 0 ? "of the flattened input" : "along the axis");
    /* a runtime condition: the kept count is data-dependent, at most its length */
    int data_dim = cond->kind != VK_CONST && len > 0;
    if (cond->kind != VK_CONST) kept = len;
    else
        for (int64_t i = 0; i < len; i++) kept += ir_load_f64(DT_BOOL, cond->data, (size_t)i) != 0.0;
    Shape s = x->shape;
    if (ax < 0) s = ir_shape(1, &kept);
    else s.dims[ax] = kept;
    if (data_dim) s.sym[ax < 0 ? 0 : ax] = IR_SYM_NEW;
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

static int compress_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    int64_t outer, dim, inner, len = n->in[1]->shape.dims[0], kept = 0;
    compress_split(n, &outer, &dim, &inner);
    for (int64_t i = 0; i < len; i++) kept += in[1][i] != 0.0;
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0, j = 0; i < len; i++)
            if (in[1][i] != 0.0) {
                memcpy(out[0] + (o * kept + j) * inner, in[0] + (o * dim + i) * inner, sizeof(double) * (size_t)inner);
                j++;
            }
    return 0;
}

const OpDesc op_Compress = {
    .name = "Compress", .min_in = 2, .max_in = 2, .in_names = compress_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(compress_attrs), .infer = compress_infer, .eval = compress_eval, .shape_inputs = 2u,
};
