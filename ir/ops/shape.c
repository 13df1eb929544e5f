/* shape.c — operator descriptions of the shape / data-movement family:
 * Reshape, Flatten, Transpose, Concat, Split, Slice, Gather, Squeeze,
 * Unsqueeze, Pad, Expand, Shape, Constant (ONNX opset 17 semantics).
 *
 * Shape-like operands (Reshape's shape, Slice's starts/ends/axes/steps,
 * Squeeze/Unsqueeze axes, Pad pads, Expand shape, Split split) decide the
 * output shape. A constant one is read with ir_const_ints() and the shape
 * is static. One that arrives at run time (OpDesc.shape_inputs) gives the
 * dims it decides as data-dependent (IR_SYM_NEW, ir/ir.h): bounded by the
 * input where the op bounds them (Reshape, Slice, Split, Squeeze,
 * Unsqueeze), by --max-dim where nothing does (Pad's pads, Expand's new
 * dims); the C emitters resolve the operand while the model runs.
 *
 * None of these ops does arithmetic, so the reference evaluation is pure
 * data movement over doubles and works for every dtype. Most of it is one
 * strided gather (strided_copy): the output is walked in row-major order and
 * each element is read at `offset + sum(idx[k] * stride[k])` of the input,
 * with strides permuted (Transpose), scaled by the step (Slice), or 0 on
 * broadcast axes (Expand). The C emitter computes the same strides.
 *
 * Gradients (ir/grad.h) are the same data movement run backwards, built of
 * these ops: the views reshape dY back to X's shape, Transpose applies the
 * inverse permutation, Expand sums over the broadcast dims, Concat and Split
 * exchange roles (Slice per input / Concat with zeros for outputs without a
 * gradient), constant Pad pads dY by the negated pads, and Slice pads dY
 * back with zeros after spreading it (see slice_grad). Gather scatter-adds
 * dY into zeros (ScatterElements reduction=add, so repeated indices sum).
 * Reflect and edge Pad fold dY back per axis with a 0/1 matrix (pad_grad).
 * Shape operands are constants and integer, and get no gradient.
 */
#include "../grad.h"
#include "../op.h"
#include "shape_attrs.h"
#include "geometry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHP_BUF 256 /* room for one shape string */
#define MAX_LIST 64 /* longest constant list read (pads, split, ...) */

/* dst[e] = src[off + sum(idx_k * st_k)] for every index of `dims`. */
static void strided_copy(double *dst, const double *src, const Shape *dims, const int64_t *st, int64_t off)
{
    int64_t total = ir_numel(dims);
    int64_t idx[IR_MAX_RANK] = {0}, o = off;
    for (int64_t e = 0; e < total; e++) {
        dst[e] = src[o];
        for (int j = dims->rank - 1; j >= 0; j--) {
            o += st[j];
            if (++idx[j] < dims->dims[j]) break;
            o -= st[j] * idx[j];
            idx[j] = 0;
        }
    }
}

/* Reads constant integer input i (1-D, at most MAX_LIST values) into out;
 * returns the count or -1 with a diagnostic. */
static int const_list(const Node *n, int i, const char *name, int64_t *out, Diag *d)
{
    const Value *v = n->in[i];
    if (v->kind != VK_CONST) return diag_node_error(d, n, "input '%s' must be a constant", name);
    if (!ir_dtype_is_int(v->dtype))
        return diag_node_error(d, n, "input '%s' must be an integer tensor, got %s", name, ir_dtype_name(v->dtype));
    if (v->shape.rank != 1) return diag_node_error(d, n, "input '%s' must be 1-D", name);
    int k = ir_const_ints(v, out, MAX_LIST);
    if (k < 0) return diag_node_error(d, n, "input '%s' has more than %d values", name, MAX_LIST);
    return k;
}

/* Runtime shapes: the length of integer input i, a 1-D list whose values
 * arrive at run time (the output dims it decides are data-dependent); -1
 * with a diagnostic when it is not such a list. */
static int runtime_list_len(const Node *n, int i, const char *name, Diag *d)
{
    const Value *v = n->in[i];
    if (!ir_dtype_is_int(v->dtype))
        return diag_node_error(d, n, "input '%s' must be an integer tensor, got %s", name, ir_dtype_name(v->dtype));
    if (v->shape.rank != 1) return diag_node_error(d, n, "input '%s' must be 1-D", name);
    if (v->shape.sym[0]) return diag_node_error(d, n, "input '%s' must have a static length", name);
    if (v->shape.dims[0] > MAX_LIST) return diag_node_error(d, n, "input '%s' has more than %d values", name, MAX_LIST);
    return (int)v->shape.dims[0];
}

/* The largest dim of s (at least 1): the bound of an output dim that is
 * one of s's dims or 1, picked at run time. */
static int64_t max_dim_of(const Shape *s)
{
    int64_t m = 1;
    for (int k = 0; k < s->rank; k++)
        if (s->dims[k] > m) m = s->dims[k];
    return m;
}

/* An output of rank r whose every dim is data-dependent, bounded by hi. */
static void set_data_out(Node *n, DType t, int r, int64_t hi)
{
    Shape s = {0};
    memset(&s, 0, sizeof s);
    s.rank = r;
    for (int k = 0; k < r; k++) {
        s.dims[k] = hi;
        s.sym[k] = IR_SYM_NEW;
    }
    ir_set_out(n, 0, t, &s);
}

/* Every required input (index < min_in) is present; -1 with a diagnostic. */
static const char *list_str(const int64_t *v, int n, char *buf, size_t cap)
{
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int i = 0; i < n && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, "%s%lld", i ? "," : "", (long long)v[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

static int eval_copy(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    memcpy(out[0], in[0], sizeof(double) * (size_t)ir_numel(&n->out[0]->shape));
    return 0;
}

static const char *const out_output[] = {"output"};
static const char *const out_reshaped[] = {"reshaped"};
static const char *const out_transposed[] = {"transposed"};
static const char *const out_concat[] = {"concat_result"};
static const char *const out_outputs[] = {"outputs"};
static const char *const out_expanded[] = {"expanded"};
static const char *const out_squeezed[] = {"squeezed"};
static const char *const out_unsqueezed[] = {"expanded"};
static const char *const out_shape[] = {"shape"};

/* ---- Reshape -------------------------------------------------------------- */

static const AttrSpec reshape_attrs[] = {[RESHAPE_ALLOWZERO] = {"allowzero", ATTR_INT, "0", 0}};
OP_ATTRS_CHECK(reshape_attrs, RESHAPE_COUNT);
static const char *const reshape_in[] = {"data", "shape"};

static int reshape_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    if (n->in[1]->kind != VK_CONST) {
        /* runtime shapes: the shape arrives at run time; each output dim is
         * at most the element count (or a dim a 0 copies) */
        int k = runtime_list_len(n, 1, "shape", d);
        if (k < 0) return -1;
        if (k > IR_MAX_RANK) return diag_node_error(d, n, "input 'shape' has %d values; the maximum rank is %d", k, IR_MAX_RANK);
        int64_t total = ir_numel(&x->shape), m = max_dim_of(&x->shape);
        set_data_out(n, x->dtype, k, total > m ? total : m);
        return 0;
    }
    int64_t req[MAX_LIST];
    int k = const_list(n, 1, "shape", req, d);
    if (k < 0) return -1;
    if (k > IR_MAX_RANK) return diag_node_error(d, n, "input 'shape' has %d values; the maximum rank is %d", k, IR_MAX_RANK);
    int allowzero = n->attrs[RESHAPE_ALLOWZERO].i != 0;
    Shape s = {0};
    memset(&s, 0, sizeof s);
    s.rank = k;
    int infer_at = -1, has_zero = 0;
    int64_t known = 1;
    char b1[SHP_BUF], b2[SHP_BUF];
    for (int i = 0; i < k; i++) {
        int64_t v = req[i];
        if (v == -1) {
            if (infer_at >= 0) return diag_node_error(d, n, "input 'shape' %s has more than one -1", list_str(req, k, b1, sizeof b1));
            infer_at = i;
            s.dims[i] = 1;
            continue;
        }
        if (v < -1) return diag_node_error(d, n, "input 'shape' value %lld at index %d is invalid (must be >= -1)", (long long)v, i);
        if (v == 0 && !allowzero) {
            if (i >= x->shape.rank)
                return diag_node_error(d, n, "input 'shape' has 0 at index %d, which copies a dim, but input 'data' has rank %d",
                                       i, x->shape.rank);
            v = x->shape.dims[i];
        }
        if (v == 0) has_zero = 1;
        s.dims[i] = v;
        if (ir_mul_ok(known, v, &known)) return diag_node_error(d, n, "input 'shape' %s overflows int64", list_str(req, k, b1, sizeof b1));
    }
    if (allowzero && has_zero && infer_at >= 0)
        return diag_node_error(d, n, "input 'shape' cannot contain both 0 and -1 when allowzero=1");
    int64_t total = ir_numel(&x->shape);
    if (infer_at >= 0) {
        if (known == 0 || total % known != 0)
            return diag_node_error(d, n, "cannot reshape %s (%lld elements) to %s", ir_shape_str(&x->shape, b1, sizeof b1),
                                   (long long)total, list_str(req, k, b2, sizeof b2));
        s.dims[infer_at] = total / known;
    } else if (known != total) {
        return diag_node_error(d, n, "cannot reshape %s (%lld elements) to %s", ir_shape_str(&x->shape, b1, sizeof b1),
                               (long long)total, list_str(req, k, b2, sizeof b2));
    }
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

/* Runtime shapes: each symbolic dim of data stays one output dim
 * (ir_sym_view), and that dim must come from a 0 (copy) at its own index or
 * the -1 of input 'shape': a literal extent cannot follow a runtime one. */
/* Runtime shapes: a shape operand known as terms (a shape value, see
 * ir/ops/shape_values.c) gives each output dim its term: a symbol, a
 * constant (0 copies the input dim), or -1: the element count divided by the
 * others, resolved when the symbols cancel (a Reshape of [1,T,64] to
 * [1,T,4,-1]). What stays unresolved is data-dependent. */
static void reshape_from_terms(Node *n, const IrSymTerm *t, int k)
{
    const Shape *xs = &n->in[0]->shape;
    Shape *ys = &n->out[0]->shape;
    int allowzero = n->attrs[RESHAPE_ALLOWZERO].i != 0, at = -1;
    int32_t in_syms[IR_MAX_RANK], out_syms[IR_MAX_RANK];
    int n_in = 0, n_out = 0;
    int64_t in_c = 1, out_c = 1;
    for (int i = 0; i < xs->rank; i++) {
        if (xs->sym[i]) in_syms[n_in++] = xs->sym[i];
        else in_c *= xs->dims[i];
    }
    for (int j = 0; j < k; j++) {
        IrSymTerm e = t[j];
        if (!e.sym && e.c == 0 && !allowzero) {
            if (j >= xs->rank) return;
            e = xs->sym[j] ? (IrSymTerm){xs->sym[j], 0} : (IrSymTerm){0, xs->dims[j]};
        }
        if (e.sym) {
            ys->sym[j] = e.sym;
            out_syms[n_out++] = e.sym;
        } else if (e.c == -1) {
            at = j;
        } else if (e.c >= 0) {
            ys->sym[j] = IR_SYM_STATIC;
            ys->dims[j] = e.c;
            out_c *= e.c;
        } else {
            return;
        }
    }
    if (at < 0) return;
    /* -1: the same symbols on both sides (as multisets) cancel */
    if (n_in != n_out || out_c == 0 || in_c % out_c) return;
    for (int i = 0; i < n_in; i++) {
        int hit = 0;
        for (int j = 0; j < n_out && !hit; j++)
            if (out_syms[j] == in_syms[i]) {
                out_syms[j] = 0;
                hit = 1;
            }
        if (!hit) return;
    }
    ys->sym[at] = IR_SYM_STATIC;
    ys->dims[at] = in_c / out_c;
}

static int reshape_infer_sym(Graph *g, Node *n, Diag *d)
{
    if (n->in[1]->kind != VK_CONST) {
        IrSymTerm t[MAX_LIST];
        int k = ir_value_terms(n->in[1], t, MAX_LIST);
        if (k == n->out[0]->shape.rank) reshape_from_terms(n, t, k);
        Shape *ys = &n->out[0]->shape;
        for (int j = 0; j < ys->rank; j++)
            if (ys->sym[j] > 0) ys->dims[j] = ir_sym(g, ys->sym[j])->hi;
        return 0; /* what stays unresolved is data-dependent */
    }
    if (ir_sym_view(g, n, d)) return -1;
    int64_t req[MAX_LIST];
    int k = ir_const_ints(n->in[1], req, MAX_LIST);
    const Shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
    for (int j = 0; j < k; j++) {
        if (!ys->sym[j] || req[j] == -1 || (req[j] == 0 && !n->attrs[RESHAPE_ALLOWZERO].i && j < xs->rank && xs->sym[j] == ys->sym[j]))
            continue;
        return diag_node_error(d, n, "input 'shape' gives runtime dim %d of the output as the literal %lld; use 0 or -1",
                               j, (long long)req[j]);
    }
    return 0;
}

/* The views (Reshape, Flatten, Squeeze, Unsqueeze): dY reshaped back (an
 * empty X gets its zeros: a Reshape to a shape with 0 would copy a dim). */
static int view_grad(GradCtx *gc)
{
    Value *x = gc->n->in[0];
    gb_set(gc, 0, ir_numel(&x->shape) ? gb_reshape(gc, gb_dy(gc, 0), &x->shape) : gb_zeros_like(gc, x));
    return gb_done(gc);
}

const OpDesc op_Reshape = {
    .name = "Reshape", .min_in = 2, .max_in = 2, .in_names = reshape_in,
    .min_out = 1, .max_out = 1, .out_names = out_reshaped,
    OP_ATTRS(reshape_attrs), .infer = reshape_infer, .infer_sym = reshape_infer_sym, .shape_inputs = 1u << 1,
    .inplace = ir_inplace_00, .n_inplace = 1, .eval = eval_copy, .view = 1,
    .gradient = view_grad, .backward_reads = ir_bw_none,
    .infer_value = ir_value_copy,
};

/* ---- Flatten -------------------------------------------------------------- */

static const AttrSpec flatten_attrs[] = {[FLATTEN_AXIS] = {"axis", ATTR_INT, "1", 0}};
OP_ATTRS_CHECK(flatten_attrs, FLATTEN_COUNT);
static const char *const flatten_in[] = {"input"};

static int flatten_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    int r = x->shape.rank;
    int64_t axis = n->attrs[FLATTEN_AXIS].i;
    if (axis < -r || axis > r)
        return diag_node_error(d, n, "attribute 'axis' = %lld is out of range [%d, %d]", (long long)axis, -r, r);
    if (axis < 0) axis += r;
    Shape s = {0};
    memset(&s, 0, sizeof s);
    s.rank = 2;
    s.dims[0] = s.dims[1] = 1;
    for (int i = 0; i < r; i++) s.dims[i < axis ? 0 : 1] *= x->shape.dims[i];
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

const OpDesc op_Flatten = {
    .name = "Flatten", .min_in = 1, .max_in = 1, .in_names = flatten_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(flatten_attrs), .infer = flatten_infer, .infer_sym = ir_sym_view,
    .inplace = ir_inplace_00, .n_inplace = 1, .eval = eval_copy, .view = 1,
    .gradient = view_grad, .backward_reads = ir_bw_none,
    .infer_value = ir_value_copy,
};

/* ---- Transpose ------------------------------------------------------------ */

static const AttrSpec transpose_attrs[] = {[TRANSPOSE_PERM] = {"perm", ATTR_INTS, NULL, 0}};
OP_ATTRS_CHECK(transpose_attrs, TRANSPOSE_COUNT);
static const char *const transpose_in[] = {"data"};

/* Fills perm[rank] (default: reversed); -1 with a diagnostic. */
static int transpose_perm(const Node *n, int *perm, Diag *d)
{
    int r = n->in[0]->shape.rank;
    const AttrVal *a = &n->attrs[TRANSPOSE_PERM];
    if (!a->set) {
        for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
        return 0;
    }
    char b[SHP_BUF];
    if (a->n != r)
        return diag_node_error(d, n, "attribute 'perm' %s has %d values, but input 'data' has rank %d",
                               list_str(a->ints, a->n, b, sizeof b), a->n, r);
    int seen[IR_MAX_RANK] = {0};
    for (int i = 0; i < r; i++) {
        int64_t p = a->ints[i];
        if (p < 0 || p >= r || seen[p])
            return diag_node_error(d, n, "attribute 'perm' %s is not a permutation of 0..%d",
                                   list_str(a->ints, a->n, b, sizeof b), r - 1);
        seen[p] = 1;
        perm[i] = (int)p;
    }
    return 0;
}

/* See geometry.h. */
void ir_transpose_perm(const Node *n, int *perm) { GC_ASSERT(transpose_perm(n, perm, NULL) == 0); }

static int transpose_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    int perm[IR_MAX_RANK];
    if (transpose_perm(n, perm, d)) return -1;
    Shape s = x->shape;
    for (int i = 0; i < s.rank; i++) s.dims[i] = x->shape.dims[perm[i]];
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

static int transpose_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int perm[IR_MAX_RANK];
    if (transpose_perm(n, perm, d)) return -1;
    int64_t ist[IR_MAX_RANK], st[IR_MAX_RANK];
    ir_row_strides(&n->in[0]->shape, ist);
    for (int i = 0; i < n->in[0]->shape.rank; i++) st[i] = ist[perm[i]];
    strided_copy(out[0], in[0], &n->out[0]->shape, st, 0);
    return 0;
}

static int transpose_grad(GradCtx *gc)
{
    int perm[IR_MAX_RANK], r = gc->n->in[0]->shape.rank;
    if (transpose_perm(gc->n, perm, gc->d)) return -1;
    int64_t inv[IR_MAX_RANK];
    for (int i = 0; i < r; i++) inv[perm[i]] = i;
    char b[SHP_BUF];
    gb_set(gc, 0, gb1(gc, OP_Transpose, gb_fmt(gc, "perm=%s", list_str(inv, r, b, sizeof b)), gb_dy(gc, 0)));
    return gb_done(gc);
}

const OpDesc op_Transpose = {
    .name = "Transpose", .min_in = 1, .max_in = 1, .in_names = transpose_in,
    .min_out = 1, .max_out = 1, .out_names = out_transposed,
    OP_ATTRS(transpose_attrs), .infer = transpose_infer, .infer_sym = ir_sym_transpose, .eval = transpose_eval,
    .gradient = transpose_grad, .backward_reads = ir_bw_none,
};

/* ---- Concat --------------------------------------------------------------- */

static const AttrSpec concat_attrs[] = {[CONCAT_AXIS] = {"axis", ATTR_INT, NULL, 1}};
OP_ATTRS_CHECK(concat_attrs, CONCAT_COUNT);
static const char *const concat_in[] = {"inputs"};

static int concat_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    if (n->n_in < 1) return diag_node_error(d, n, "needs at least one input");
    if (!n->attrs[CONCAT_AXIS].set) return diag_node_error(d, n, "attribute 'axis' is required");
    const Value *x0 = n->in[0];
    int r = x0->shape.rank;
    if (r < 1) return diag_node_error(d, n, "input 0 must have rank >= 1, got a scalar");
    int64_t axis = n->attrs[CONCAT_AXIS].i;
    int ax = ir_norm_axis(axis, r);
    if (ax < 0) return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for rank %d", (long long)axis, r);
    Shape s = x0->shape;
    s.dims[ax] = 0;
    char b1[SHP_BUF], b2[SHP_BUF];
    for (int i = 0; i < n->n_in; i++) {
        const Value *x = n->in[i];
        if (!x) return diag_node_error(d, n, "input %d is absent", i);
        if (x->dtype != x0->dtype)
            return diag_node_error(d, n, "input %d has dtype %s, but input 0 has dtype %s", i, ir_dtype_name(x->dtype),
                                   ir_dtype_name(x0->dtype));
        if (x->shape.rank != r)
            return diag_node_error(d, n, "input %d has rank %d, but input 0 has rank %d", i, x->shape.rank, r);
        for (int k = 0; k < r; k++)
            if (k != ax && x->shape.dims[k] != x0->shape.dims[k])
                return diag_node_error(d, n, "input %d shape %s does not match input 0 shape %s outside axis %d", i,
                                       ir_shape_str(&x->shape, b1, sizeof b1), ir_shape_str(&x0->shape, b2, sizeof b2), ax);
        if (ir_add_ok(s.dims[ax], x->shape.dims[ax], &s.dims[ax])) return diag_node_error(d, n, "output size along axis %d overflows", ax);
    }
    ir_set_out(n, 0, x0->dtype, &s);
    return 0;
}

static int concat_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *os = &n->out[0]->shape;
    int ax = ir_norm_axis(n->attrs[CONCAT_AXIS].i, os->rank);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < ax; k++) outer *= os->dims[k];
    for (int k = ax + 1; k < os->rank; k++) inner *= os->dims[k];
    int64_t orow = os->dims[ax] * inner, off = 0;
    for (int i = 0; i < n->n_in; i++) {
        int64_t row = n->in[i]->shape.dims[ax] * inner;
        for (int64_t o = 0; o < outer; o++)
            memcpy(out[0] + o * orow + off, in[i] + o * row, sizeof(double) * (size_t)row);
        off += row;
    }
    return 0;
}

/* dY[off : off + len] along axis k (len >= 0). */
static Value *slice_axis(GradCtx *gc, Value *g, int k, int64_t off, int64_t len)
{
    int64_t st = off, en = off + len, ax = k;
    return gb_node(gc, OP_Slice, NULL, 4, (Value *[]){g, gb_ints(gc, &st, 1), gb_ints(gc, &en, 1), gb_ints(gc, &ax, 1)}, 1,
                   NULL);
}

/* Input i gets its extent of dY along the axis. */
static int concat_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    Value *dy = gb_dy(gc, 0);
    int ax = ir_norm_axis(n->attrs[CONCAT_AXIS].i, dy->shape.rank);
    int64_t off = 0;
    for (int i = 0; i < n->n_in; i++) {
        int64_t len = n->in[i]->shape.dims[ax];
        if (gc->need[i]) gb_set(gc, i, len == dy->shape.dims[ax] ? dy : slice_axis(gc, dy, ax, off, len));
        off += len;
    }
    return gb_done(gc);
}

const OpDesc op_Concat = {
    .name = "Concat", .min_in = 1, .max_in = -1, .in_names = concat_in,
    .min_out = 1, .max_out = 1, .out_names = out_concat,
    OP_ATTRS(concat_attrs), .infer = concat_infer, .infer_sym = ir_sym_concat, .eval = concat_eval,
    .gradient = concat_grad, .backward_reads = ir_bw_none,
    .infer_value = ir_value_concat,
};

/* ---- Split ---------------------------------------------------------------- */

static const AttrSpec split_attrs[] = {[SPLIT_AXIS] = {"axis", ATTR_INT, "0", 0}};
OP_ATTRS_CHECK(split_attrs, SPLIT_COUNT);
static const char *const split_in[] = {"input", "split"};

/* Whether input j of n is present and known only at run time. */
static int operand_at_run_time(const Node *n, int j) { return j < n->n_in && n->in[j] && n->in[j]->kind != VK_CONST; }

/* Fills sizes[n_out] along *axis; -1 with a diagnostic. */
static int split_sizes(const Node *n, int *axis, int64_t *sizes, Diag *d)
{
    const Value *x = n->in[0];
    int r = x->shape.rank;
    int64_t a = n->attrs[SPLIT_AXIS].i;
    int ax = ir_norm_axis(a, r);
    if (ax < 0) return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for rank %d", (long long)a, r);
    *axis = ax;
    int64_t dim = x->shape.dims[ax];
    if (n->n_in > 1 && n->in[1]) {
        int64_t sp[MAX_LIST];
        int k = const_list(n, 1, "split", sp, d);
        if (k < 0) return -1;
        if (k != n->n_out)
            return diag_node_error(d, n, "input 'split' has %d values, but the node has %d outputs", k, n->n_out);
        int64_t sum = 0;
        for (int i = 0; i < k; i++) {
            if (sp[i] < 0) return diag_node_error(d, n, "input 'split' value %lld at index %d is negative", (long long)sp[i], i);
            if (ir_add_ok(sum, sp[i], &sum)) return diag_node_error(d, n, "input 'split' sum overflows");
            sizes[i] = sp[i];
        }
        if (sum != dim)
            return diag_node_error(d, n, "input 'split' sums to %lld, but axis %d has size %lld", (long long)sum, ax, (long long)dim);
        return 0;
    }
    if (dim % n->n_out != 0)
        return diag_node_error(d, n, "axis %d of size %lld cannot be split equally into %d outputs", ax, (long long)dim, n->n_out);
    for (int i = 0; i < n->n_out; i++) sizes[i] = dim / n->n_out;
    return 0;
}

/* Split whose `split` sizes are known only at run time: each output's
 * extent along the axis is data-dependent, bounded by the input's (the
 * kernel checks that the sizes sum to it). */
static int split_infer_dyn(Node *n, Diag *d)
{
    const Value *x = n->in[0], *sp = n->in[1];
    int64_t a = n->attrs[SPLIT_AXIS].i;
    int ax = ir_norm_axis(a, x->shape.rank);
    if (ax < 0) return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for rank %d", (long long)a, x->shape.rank);
    if (!ir_dtype_is_int(sp->dtype))
        return diag_node_error(d, n, "input 'split' must be an integer tensor, got %s", ir_dtype_name(sp->dtype));
    if (sp->shape.rank != 1) return diag_node_error(d, n, "input 'split' must be 1-D");
    if (sp->shape.dims[0] != n->n_out)
        return diag_node_error(d, n, "input 'split' has %lld values, but the node has %d outputs", (long long)sp->shape.dims[0],
                               n->n_out);
    for (int i = 0; i < n->n_out; i++) {
        Shape s = x->shape;
        s.sym[ax] = IR_SYM_NEW;
        ir_set_out(n, i, x->dtype, &s);
    }
    return 0;
}

static int split_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    if (n->n_out < 1 || n->n_out > MAX_LIST) return diag_node_error(d, n, "needs 1 to %d outputs, got %d", MAX_LIST, n->n_out);
    if (operand_at_run_time(n, 1)) return split_infer_dyn(n, d);
    int ax;
    int64_t sizes[MAX_LIST];
    if (split_sizes(n, &ax, sizes, d)) return -1;
    for (int i = 0; i < n->n_out; i++) {
        Shape s = n->in[0]->shape;
        s.dims[ax] = sizes[i];
        ir_set_out(n, i, n->in[0]->dtype, &s);
    }
    return 0;
}

static int split_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int ax;
    int64_t sizes[MAX_LIST];
    if (split_sizes(n, &ax, sizes, d)) return -1;
    const Shape *xs = &n->in[0]->shape;
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < ax; k++) outer *= xs->dims[k];
    for (int k = ax + 1; k < xs->rank; k++) inner *= xs->dims[k];
    int64_t irow = xs->dims[ax] * inner, off = 0;
    for (int i = 0; i < n->n_out; i++) {
        int64_t row = sizes[i] * inner;
        for (int64_t o = 0; o < outer; o++)
            memcpy(out[i] + o * row, in[0] + o * irow + off, sizeof(double) * (size_t)row);
        off += row;
    }
    return 0;
}

/* dX = Concat of the outputs' gradients (zeros where none arrives). */
static int split_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    int ax;
    int64_t sizes[MAX_LIST];
    if (split_sizes(n, &ax, sizes, gc->d)) return -1;
    Value *parts[MAX_LIST];
    for (int j = 0; j < n->n_out; j++) parts[j] = gb_dy(gc, j);
    gb_set(gc, 0, n->n_out == 1 ? parts[0] : gb_node(gc, OP_Concat, gb_fmt(gc, "axis=%d", ax), n->n_out, parts, 1, NULL));
    return gb_done(gc);
}

/* Runtime shapes: a split along a static axis of data with runtime dims
 * elsewhere; each output keeps data's symbols off the axis (along it its
 * extent is static, or data-dependent for a runtime `split`). */
static int split_infer_sym(Graph *g, Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int ax = ir_norm_axis(n->attrs[SPLIT_AXIS].i, xs->rank);
    if (xs->sym[ax]) {
        char b[160];
        return diag_node_error(d, n, "splits along runtime dim %s of input '%s' %s; runtime shapes need a static axis",
                               ir_sym(g, xs->sym[ax])->name, n->in[0]->name, ir_shape_str_g(g, xs, b, sizeof b));
    }
    if (n->n_in > 1 && n->in[1] && n->in[1]->kind != VK_CONST)
        return diag_node_error(d, n, "input 'split' known only at run time needs input '%s' of a static shape", n->in[0]->name);
    for (int i = 0; i < n->n_out; i++)
        for (int k = 0; k < xs->rank; k++)
            if (k != ax) n->out[i]->shape.sym[k] = xs->sym[k];
    return 0;
}

const OpDesc op_Split = {
    .name = "Split", .min_in = 1, .max_in = 2, .in_names = split_in,
    .min_out = 1, .max_out = -1, .out_names = out_outputs,
    OP_ATTRS(split_attrs), .infer = split_infer, .infer_sym = split_infer_sym, .eval = split_eval,
    .gradient = split_grad, .backward_reads = ir_bw_none,
    .shape_inputs = 1u << 1,
};

/* ---- Slice ---------------------------------------------------------------- */

static const char *const slice_in[] = {"data", "starts", "ends", "axes", "steps"};

/* Per output axis: first input index and step (1 / 0 on untouched axes). */
typedef struct SlicePlan {
    int64_t start[IR_MAX_RANK], step[IR_MAX_RANK];
    Shape out;
} SlicePlan;

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* ONNX Slice: negative starts/ends count from the end; then clamp to
 * [0, dim] for positive steps and to [0, dim-1] / [-1, dim-1] for negative. */
static int slice_plan(const Node *n, SlicePlan *p, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int r = xs->rank;
    int64_t starts[MAX_LIST], ends[MAX_LIST], axes[MAX_LIST], steps[MAX_LIST];
    int ns = const_list(n, 1, "starts", starts, d);
    if (ns < 0) return -1;
    int ne = const_list(n, 2, "ends", ends, d);
    if (ne < 0) return -1;
    if (ns != ne) return diag_node_error(d, n, "inputs 'starts' and 'ends' have different lengths (%d and %d)", ns, ne);
    if (n->n_in > 3 && n->in[3]) {
        int na = const_list(n, 3, "axes", axes, d);
        if (na < 0) return -1;
        if (na != ns) return diag_node_error(d, n, "input 'axes' has %d values, but 'starts' has %d", na, ns);
    } else {
        if (ns > r) return diag_node_error(d, n, "input 'starts' has %d values, but input 'data' has rank %d", ns, r);
        for (int i = 0; i < ns; i++) axes[i] = i;
    }
    if (n->n_in > 4 && n->in[4]) {
        int nt = const_list(n, 4, "steps", steps, d);
        if (nt < 0) return -1;
        if (nt != ns) return diag_node_error(d, n, "input 'steps' has %d values, but 'starts' has %d", nt, ns);
    } else {
        for (int i = 0; i < ns; i++) steps[i] = 1;
    }
    p->out = *xs;
    int seen[IR_MAX_RANK] = {0};
    for (int k = 0; k < r; k++) {
        p->start[k] = 0;
        p->step[k] = 1;
    }
    for (int i = 0; i < ns; i++) {
        int ax = ir_norm_axis(axes[i], r);
        if (ax < 0) return diag_node_error(d, n, "input 'axes' value %lld is out of range for rank %d", (long long)axes[i], r);
        if (seen[ax]) return diag_node_error(d, n, "input 'axes' lists axis %d twice", ax);
        seen[ax] = 1;
        int64_t step = steps[i], dim = xs->dims[ax];
        if (step == 0) return diag_node_error(d, n, "input 'steps' value at index %d is 0", i);
        if (step < -INT64_MAX) step = -INT64_MAX;
        int64_t s = starts[i], e = ends[i], len;
        if (s < 0) s += dim;
        if (e < 0) e += dim;
        if (step > 0) {
            s = clamp64(s, 0, dim);
            e = clamp64(e, 0, dim);
            len = e > s ? (e - s - 1) / step + 1 : 0;
        } else {
            s = clamp64(s, 0, dim - 1);
            e = clamp64(e, -1, dim - 1);
            len = s > e ? (s - e - 1) / (-step) + 1 : 0;
        }
        p->start[ax] = len ? s : 0;
        p->step[ax] = step;
        p->out.dims[ax] = len;
    }
    return 0;
}

int ir_slice_plan(const Node *n, int64_t *start, int64_t *step, Shape *out, Diag *d)
{
    SlicePlan p;
    if (slice_plan(n, &p, d)) return -1;
    for (int k = 0; k < p.out.rank; k++) { start[k] = p.start[k]; step[k] = p.step[k]; }
    *out = p.out;
    return 0;
}

/* Slice whose starts, ends, axes or steps are known only at run time: each
 * axis it may slice (those of a constant `axes`, else the first len(starts)
 * without `axes`, else every axis) gets a data-dependent extent bounded by
 * the input's; the kernel resolves the ranges at run time
 * (gcrt_slice_resolve, the same rules as slice_plan). */
static int slice_infer_dyn(Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int r = xs->rank;
    int64_t ns = -1;
    for (int j = 1; j < n->n_in && j <= 4; j++) {
        const Value *v = n->in[j];
        if (!v) continue;
        if (!ir_dtype_is_int(v->dtype))
            return diag_node_error(d, n, "input '%s' must be an integer tensor, got %s", slice_in[j], ir_dtype_name(v->dtype));
        if (v->shape.rank != 1) return diag_node_error(d, n, "input '%s' must be 1-D", slice_in[j]);
        if (ns < 0) ns = v->shape.dims[0];
        else if (v->shape.dims[0] != ns)
            return diag_node_error(d, n, "input '%s' has %lld values, but 'starts' has %lld", slice_in[j],
                                   (long long)v->shape.dims[0], (long long)ns);
    }
    if (ns > r) return diag_node_error(d, n, "input 'starts' has %lld values, but input 'data' has rank %d", (long long)ns, r);
    int sliced[IR_MAX_RANK] = {0};
    if (operand_at_run_time(n, 3)) {
        for (int k = 0; k < r; k++) sliced[k] = ns > 0;
    } else if (n->n_in > 3 && n->in[3]) {
        int64_t axes[MAX_LIST];
        int na = const_list(n, 3, "axes", axes, d);
        if (na < 0) return -1;
        for (int i = 0; i < na; i++) {
            int ax = ir_norm_axis(axes[i], r);
            if (ax < 0) return diag_node_error(d, n, "input 'axes' value %lld is out of range for rank %d", (long long)axes[i], r);
            if (sliced[ax]) return diag_node_error(d, n, "input 'axes' lists axis %d twice", ax);
            sliced[ax] = 1;
        }
    } else {
        for (int i = 0; i < ns; i++) sliced[i] = 1;
    }
    Shape s = *xs;
    for (int k = 0; k < r; k++)
        if (sliced[k]) s.sym[k] = IR_SYM_NEW;
    ir_set_out(n, 0, n->in[0]->dtype, &s);
    return 0;
}

static int slice_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    for (int j = 1; j <= 4; j++)
        if (operand_at_run_time(n, j)) return slice_infer_dyn(n, d);
    SlicePlan p;
    if (slice_plan(n, &p, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &p.out);
    return 0;
}

static int slice_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    SlicePlan p;
    if (slice_plan(n, &p, d)) return -1;
    int64_t ist[IR_MAX_RANK], st[IR_MAX_RANK], off = 0;
    ir_row_strides(&n->in[0]->shape, ist);
    for (int k = 0; k < p.out.rank; k++) {
        st[k] = ist[k] * p.step[k];
        off += ist[k] * p.start[k];
    }
    if (ir_numel(&p.out) > 0) strided_copy(out[0], in[0], &p.out, st, off);
    return 0;
}

/* Pad(g, pads) in constant mode (zeros); g itself when every pad is 0. */
static Value *pad_zeros(GradCtx *gc, Value *g, const int64_t *pads)
{
    int r = g->shape.rank, any = 0;
    for (int k = 0; k < 2 * r; k++) any |= pads[k] != 0;
    return any ? gb2(gc, OP_Pad, NULL, g, gb_ints(gc, pads, 2 * r)) : g;
}

/* Slice's gradient puts dY back where the slice read it, zeros elsewhere.
 * Per sliced axis with step s: a negative step first reverses dY along the
 * axis (a Slice with step -1), so the elements lie in increasing input
 * order from `first`, the lowest index read; |s| > 1 then spreads them
 * |s| apart by interleaving |s|-1 zeros (reshape to [.., len, 1, ..], pad
 * the new axis to |s|, reshape to [.., len*|s|, ..]). One final Pad places
 * each axis at `first`; its end pad is negative when the spread overshoots
 * the input (at most |s|-1 trailing zeros are cut). An empty slice gives
 * zeros. */
static int slice_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    const Shape *xs = &n->in[0]->shape;
    SlicePlan p;
    if (slice_plan(n, &p, gc->d)) return -1;
    if (ir_numel(&p.out) == 0) {
        gb_set(gc, 0, gb_zeros_like(gc, n->in[0]));
        return gb_done(gc);
    }
    int r = xs->rank;
    int64_t pads[2 * IR_MAX_RANK];
    Value *g = gb_dy(gc, 0);
    for (int k = 0; k < r; k++) {
        int64_t len = p.out.dims[k], step = p.step[k], first = p.start[k], ext = len;
        if (step < 0) {
            int64_t st = -1, en = -INT64_MAX, ax = k, m1 = -1;
            g = gb_node(gc, OP_Slice, NULL, 5,
                        (Value *[]){g, gb_ints(gc, &st, 1), gb_ints(gc, &en, 1), gb_ints(gc, &ax, 1), gb_ints(gc, &m1, 1)}, 1, NULL);
            first = p.start[k] + (len - 1) * step;
            step = -step;
        }
        if (step > 1 && len > 1) {
            if (!g) return gb_done(gc);
            Shape sp, back = g->shape;
            memset(&sp, 0, sizeof sp);
            for (int j = 0; j < r; j++) {
                sp.dims[sp.rank++] = g->shape.dims[j];
                if (j == k) sp.dims[sp.rank++] = 1;
            }
            int64_t ip[2 * IR_MAX_RANK + 2] = {0};
            ip[sp.rank + k + 1] = step - 1;
            g = gb_reshape(gc, g, &sp);
            g = gb2(gc, OP_Pad, NULL, g, gb_ints(gc, ip, 2 * sp.rank));
            ext = len * step;
            back.dims[k] = ext;
            g = gb_reshape(gc, g, &back);
        }
        pads[k] = first;
        pads[r + k] = xs->dims[k] - first - ext;
    }
    gb_set(gc, 0, pad_zeros(gc, g, pads));
    return gb_done(gc);
}

/* Runtime shapes: ir_sym_slice (slice_sym.c). */
const OpDesc op_Slice = {
    .name = "Slice", .min_in = 3, .max_in = 5, .in_names = slice_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    .infer = slice_infer, .eval = slice_eval, .gradient = slice_grad, .backward_reads = ir_bw_none,
    .shape_inputs = 1u << 1 | 1u << 2 | 1u << 3 | 1u << 4,
    .infer_sym = ir_sym_slice,
};

/* ---- Gather --------------------------------------------------------------- */

static const AttrSpec gather_attrs[] = {[GATHER_AXIS] = {"axis", ATTR_INT, "0", 0}};
OP_ATTRS_CHECK(gather_attrs, GATHER_COUNT);
static const char *const gather_in[] = {"data", "indices"};

static int gather_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0], *ind = n->in[1];
    int r = x->shape.rank, q = ind->shape.rank;
    if (ind->dtype != DT_I32 && ind->dtype != DT_I64)
        return diag_node_error(d, n, "input 'indices' must be i32 or i64, got %s", ir_dtype_name(ind->dtype));
    if (r < 1) return diag_node_error(d, n, "input 'data' must have rank >= 1, got a scalar");
    int64_t a = n->attrs[GATHER_AXIS].i;
    int ax = ir_norm_axis(a, r);
    if (ax < 0) return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for rank %d", (long long)a, r);
    if (r - 1 + q > IR_MAX_RANK) return diag_node_error(d, n, "output rank %d exceeds the maximum %d", r - 1 + q, IR_MAX_RANK);
    int64_t dim = x->shape.dims[ax];
    if (ind->kind == VK_CONST) {
        int64_t cnt = ir_numel(&ind->shape);
        for (int64_t i = 0; i < cnt; i++) {
            int64_t v = (int64_t)ir_load_f64(ind->dtype, ind->data, (size_t)i);
            if (ind->dtype == DT_I64) memcpy(&v, (const char *)ind->data + 8 * i, 8);
            if (v < -dim || v >= dim)
                return diag_node_error(d, n, "input 'indices' value %lld is out of range for axis %d of size %lld", (long long)v, ax,
                                       (long long)dim);
        }
    }
    Shape s = {0};
    memset(&s, 0, sizeof s);
    for (int k = 0; k < ax; k++) s.dims[s.rank++] = x->shape.dims[k];
    for (int k = 0; k < q; k++) s.dims[s.rank++] = ind->shape.dims[k];
    for (int k = ax + 1; k < r; k++) s.dims[s.rank++] = x->shape.dims[k];
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

static int gather_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    int ax = ir_norm_axis(n->attrs[GATHER_AXIS].i, xs->rank);
    int64_t outer = 1, inner = 1, dim = xs->dims[ax], ni = ir_numel(&n->in[1]->shape);
    for (int k = 0; k < ax; k++) outer *= xs->dims[k];
    for (int k = ax + 1; k < xs->rank; k++) inner *= xs->dims[k];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < ni; j++) {
            int64_t v = (int64_t)in[1][j];
            if (v < -dim || v >= dim)
                return diag_node_error(d, n, "input 'indices' value %lld is out of range for axis %d of size %lld", (long long)v, ax,
                                       (long long)dim);
            if (v < 0) v += dim;
            memcpy(out[0] + (o * ni + j) * inner, in[0] + (o * dim + v) * inner, sizeof(double) * (size_t)inner);
        }
    return 0;
}

/* A constant of zeros of dtype t and shape s. */
static Value *zeros_of(GradCtx *gc, DType t, const Shape *s)
{
    Value v = {.dtype = t, .shape = *s};
    return gb_zeros_like(gc, &v);
}

/* The data gradient scatter-adds dY into zeros: dY viewed as [outer, ni,
 * inner] lands in [outer, dim, inner] along axis 1, with the indices
 * broadcast to that view (ScatterElements reduction=add, so a repeated
 * index sums its rows; negative indices wrap as in the forward). */
static int gather_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    const Value *x = n->in[0];
    int ax = ir_norm_axis(n->attrs[GATHER_AXIS].i, x->shape.rank);
    int64_t outer = 1, inner = 1;
    for (int k = 0; k < ax; k++) outer *= x->shape.dims[k];
    for (int k = ax + 1; k < x->shape.rank; k++) inner *= x->shape.dims[k];
    int64_t v3[3] = {outer, ir_numel(&n->in[1]->shape), inner}, i3[3] = {1, v3[1], 1}, z3[3] = {outer, x->shape.dims[ax], inner};
    Shape sv = ir_shape(3, v3), si = ir_shape(3, i3), sz = ir_shape(3, z3);
    Value *g = gb_reshape(gc, gb_dy(gc, 0), &sv);
    Value *ind = gb_expand(gc, gb_reshape(gc, n->in[1], &si), &sv);
    Value *s = gb3(gc, OP_ScatterElements, "axis=1 reduction=\"add\"", zeros_of(gc, x->dtype, &sz), ind, g);
    gb_set(gc, 0, gb_reshape(gc, s, &x->shape));
    return gb_done(gc);
}

/* Gather's gradient reads the indices. */
static int gather_bw_reads(const Node *n, int is_output, int i) { (void)n; return !is_output && i == 1; }

/* Runtime shapes: runtime dims of the indices (an embedding lookup of a
 * runtime sequence) and of data off the axis carry into the output. The
 * gathered axis may be runtime too (the detectors gather the TopK of a
 * NonZero's selection): the kernel wraps and checks each index against its
 * actual extent. */
static int gather_infer_sym(Graph *g, Node *n, Diag *d)
{
    (void)g;
    (void)d;
    const Shape *xs = &n->in[0]->shape, *is = &n->in[1]->shape;
    Shape *ys = &n->out[0]->shape;
    int ax = ir_norm_axis(n->attrs[GATHER_AXIS].i, xs->rank);
    int j = 0;
    for (int k = 0; k < ax; k++) ys->sym[j++] = xs->sym[k];
    for (int k = 0; k < is->rank; k++) ys->sym[j++] = is->sym[k];
    for (int k = ax + 1; k < xs->rank; k++) ys->sym[j++] = xs->sym[k];
    return 0;
}

const OpDesc op_Gather = {
    .name = "Gather", .min_in = 2, .max_in = 2, .in_names = gather_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(gather_attrs), .infer = gather_infer, .eval = gather_eval,
    .gradient = gather_grad, .backward_reads = gather_bw_reads,
    .infer_sym = gather_infer_sym, .infer_value = ir_value_gather,
};

/* ---- Squeeze / Unsqueeze -------------------------------------------------- */

static const char *const squeeze_in[] = {"data", "axes"};

static int squeeze_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    int r = x->shape.rank;
    int drop[IR_MAX_RANK] = {0};
    if (n->n_in > 1 && n->in[1] && n->in[1]->kind != VK_CONST) {
        /* runtime shapes: the axes arrive at run time; the output keeps
         * r - len(axes) of the input dims, which ones decided then */
        int k = runtime_list_len(n, 1, "axes", d);
        if (k < 0) return -1;
        if (k > r) return diag_node_error(d, n, "input 'axes' has %d values for rank %d", k, r);
        set_data_out(n, x->dtype, r - k, max_dim_of(&x->shape));
        return 0;
    }
    if (n->n_in > 1 && n->in[1]) {
        int64_t axes[MAX_LIST];
        int k = const_list(n, 1, "axes", axes, d);
        if (k < 0) return -1;
        for (int i = 0; i < k; i++) {
            int ax = ir_norm_axis(axes[i], r);
            if (ax < 0) return diag_node_error(d, n, "input 'axes' value %lld is out of range for rank %d", (long long)axes[i], r);
            if (drop[ax]) return diag_node_error(d, n, "input 'axes' lists axis %d twice", ax);
            if (x->shape.dims[ax] != 1)
                return diag_node_error(d, n, "cannot squeeze axis %d of size %lld (must be 1)", ax, (long long)x->shape.dims[ax]);
            drop[ax] = 1;
        }
    } else {
        for (int i = 0; i < r; i++) drop[i] = x->shape.dims[i] == 1;
    }
    Shape s = {0};
    memset(&s, 0, sizeof s);
    for (int i = 0; i < r; i++)
        if (!drop[i]) s.dims[s.rank++] = x->shape.dims[i];
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

/* Runtime shapes: with runtime axes every output dim is data-dependent;
 * otherwise each symbolic dim stays one output dim (ir_sym_view). */
static int squeeze_infer_sym(Graph *g, Node *n, Diag *d)
{
    if (n->n_in > 1 && n->in[1] && n->in[1]->kind != VK_CONST) return 0;
    return ir_sym_view(g, n, d);
}

const OpDesc op_Squeeze = {
    .name = "Squeeze", .min_in = 1, .max_in = 2, .in_names = squeeze_in,
    .min_out = 1, .max_out = 1, .out_names = out_squeezed,
    .infer = squeeze_infer, .infer_sym = squeeze_infer_sym, .shape_inputs = 1u << 1, .inplace = ir_inplace_00, .n_inplace = 1, .eval = eval_copy, .view = 1,
    .gradient = view_grad, .backward_reads = ir_bw_none,
    .infer_value = ir_value_copy,
};

static int unsqueeze_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    if (n->in[1]->kind != VK_CONST) {
        /* runtime shapes: the axes arrive at run time (each output dim is 1
         * or an input dim, which decided then) */
        int k = runtime_list_len(n, 1, "axes", d);
        if (k < 0) return -1;
        if (x->shape.rank + k > IR_MAX_RANK)
            return diag_node_error(d, n, "output rank %d exceeds the maximum %d", x->shape.rank + k, IR_MAX_RANK);
        set_data_out(n, x->dtype, x->shape.rank + k, max_dim_of(&x->shape));
        return 0;
    }
    int64_t axes[MAX_LIST];
    int k = const_list(n, 1, "axes", axes, d);
    if (k < 0) return -1;
    int r = x->shape.rank + k;
    if (r > IR_MAX_RANK) return diag_node_error(d, n, "output rank %d exceeds the maximum %d", r, IR_MAX_RANK);
    int ins[IR_MAX_RANK] = {0};
    for (int i = 0; i < k; i++) {
        int ax = ir_norm_axis(axes[i], r);
        if (ax < 0) return diag_node_error(d, n, "input 'axes' value %lld is out of range for output rank %d", (long long)axes[i], r);
        if (ins[ax]) return diag_node_error(d, n, "input 'axes' lists axis %d twice", ax);
        ins[ax] = 1;
    }
    Shape s = {0};
    memset(&s, 0, sizeof s);
    s.rank = r;
    for (int i = 0, j = 0; i < r; i++) s.dims[i] = ins[i] ? 1 : x->shape.dims[j++];
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

const OpDesc op_Unsqueeze = {
    .name = "Unsqueeze", .min_in = 2, .max_in = 2, .in_names = squeeze_in,
    .min_out = 1, .max_out = 1, .out_names = out_unsqueezed,
    .infer = unsqueeze_infer, .infer_sym = squeeze_infer_sym, .shape_inputs = 1u << 1, .inplace = ir_inplace_00, .n_inplace = 1, .eval = eval_copy, .view = 1,
    .gradient = view_grad, .backward_reads = ir_bw_none,
    .infer_value = ir_value_copy,
};

/* ---- Pad ------------------------------------------------------------------ */

static const AttrSpec pad_attrs[] = {[PAD_MODE] = {"mode", ATTR_STRING, "constant", 0}};
OP_ATTRS_CHECK(pad_attrs, PAD_COUNT);
static const char *const pad_in[] = {"data", "pads", "constant_value"};

/* 0 constant, 1 reflect, 2 edge (the runtime's gcrt_pad uses the same). */
static int pad_mode(const char *s)
{
    if (strcmp(s, "constant") == 0) return 0;
    if (strcmp(s, "reflect") == 0) return 1;
    if (strcmp(s, "edge") == 0) return 2;
    return -1;
}

/* Reads pads (begins then ends); sets *mode; -1 with a diagnostic. */
static int pad_read(const Node *n, int64_t *pads, int *mode, Diag *d)
{
    const Value *x = n->in[0];
    int r = x->shape.rank;
    *mode = pad_mode(n->attrs[PAD_MODE].s);
    if (*mode < 0) return diag_node_error(d, n, "attribute 'mode' must be constant, reflect or edge, got '%s'", n->attrs[PAD_MODE].s);
    int k = const_list(n, 1, "pads", pads, d);
    if (k < 0) return -1;
    if (k != 2 * r) return diag_node_error(d, n, "input 'pads' has %d values, expected %d (2 * rank %d)", k, 2 * r, r);
    return 0;
}

static int pad_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    int r = x->shape.rank, mode;
    int64_t pads[MAX_LIST];
    int runtime = n->in[1]->kind != VK_CONST; /* pads read at run time: every dim bounded by --max-dim */
    if (runtime) {
        mode = pad_mode(n->attrs[PAD_MODE].s);
        if (mode < 0) return diag_node_error(d, n, "attribute 'mode' must be constant, reflect or edge, got '%s'", n->attrs[PAD_MODE].s);
        int k = runtime_list_len(n, 1, "pads", d);
        if (k < 0) return -1;
        if (k != 2 * r) return diag_node_error(d, n, "input 'pads' has %d values, expected %d (2 * rank %d)", k, 2 * r, r);
        memset(pads, 0, sizeof(int64_t) * (size_t)(2 * r));
    } else if (pad_read(n, pads, &mode, d)) {
        return -1;
    }
    if (n->n_in > 2 && n->in[2]) {
        const Value *c = n->in[2];
        if (c->dtype != x->dtype)
            return diag_node_error(d, n, "input 'constant_value' has dtype %s, but input 'data' has dtype %s", ir_dtype_name(c->dtype),
                                   ir_dtype_name(x->dtype));
        if (ir_numel(&c->shape) != 1) return diag_node_error(d, n, "input 'constant_value' must hold exactly one value");
    }
    Shape s = x->shape;
    for (int i = 0; i < r; i++) {
        int64_t dim = x->shape.dims[i], b = pads[i], e = pads[r + i];
        if (b < -dim || e < -dim || dim + b + e < 0)
            return diag_node_error(d, n, "input 'pads' (%lld, %lld) make axis %d of size %lld negative", (long long)b, (long long)e, i,
                                   (long long)dim);
        if (mode != 0 && dim == 0 && (b > 0 || e > 0))
            return diag_node_error(d, n, "mode '%s' cannot pad axis %d of size 0", n->attrs[PAD_MODE].s, i);
        s.dims[i] = dim + b + e;
        if (runtime) {
            s.dims[i] = IR_DIM_UNBOUNDED;
            s.sym[i] = IR_SYM_NEW;
        }
    }
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

/* Source index along an axis of size dim for output position i - begin,
 * or -1 (constant mode, outside). numpy's reflect repeats for big pads. */
static int64_t pad_src(int64_t j, int64_t dim, int mode)
{
    if (j >= 0 && j < dim) return j;
    if (mode == 0) return -1;
    if (mode == 2 || dim == 1) return j < 0 ? 0 : dim - 1;
    int64_t period = 2 * (dim - 1), m = j % period;
    if (m < 0) m += period;
    return m < dim ? m : period - m;
}

static int pad_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const Shape *xs = &n->in[0]->shape, *os = &n->out[0]->shape;
    int r = xs->rank, mode;
    int64_t pads[MAX_LIST], ist[IR_MAX_RANK];
    if (pad_read(n, pads, &mode, d)) return -1;
    double cval = n->n_in > 2 && in[2] ? in[2][0] : 0.0;
    ir_row_strides(xs, ist);
    int64_t total = ir_numel(os), idx[IR_MAX_RANK] = {0};
    for (int64_t e = 0; e < total; e++) {
        int64_t off = 0;
        for (int k = 0; k < r && off >= 0; k++) {
            int64_t s = pad_src(idx[k] - pads[k], xs->dims[k], mode);
            off = s < 0 ? -1 : off + s * ist[k];
        }
        out[0][e] = off < 0 ? cval : in[0][off];
        for (int k = r - 1; k >= 0; k--) {
            if (++idx[k] < os->dims[k]) break;
            idx[k] = 0;
        }
    }
    return 0;
}

/* See geometry.h: g's axis k (length rows) folded by the rows x cols matrix
 * m, as a MatMul with axis k moved last by a Transpose (its own inverse). */
Value *ir_grad_fold_axis(GradCtx *gc, Value *g, int k, const double *m, int64_t rows, int64_t cols)
{
    if (!g || gc->err) return NULL;
    int r = g->shape.rank;
    GC_ASSERT(k >= 0 && k < r && g->shape.dims[k] == rows);
    int64_t md[2] = {rows, cols};
    Shape ms = ir_shape(2, md);
    void *buf = ir_alloc(gc->g, (size_t)(rows * cols) * ir_dtype_size(g->dtype) + 1);
    for (int64_t e = 0; e < rows * cols; e++) ir_store_f64(g->dtype, buf, (size_t)e, m[e]);
    Value *mv = ir_add_const(gc->g, NULL, g->dtype, &ms, buf, 0);
    if (k == r - 1) return gb2(gc, OP_MatMul, NULL, g, mv);
    int64_t perm[IR_MAX_RANK];
    for (int j = 0; j < r; j++) perm[j] = j;
    perm[k] = r - 1;
    perm[r - 1] = k;
    char b[SHP_BUF];
    const char *pa = gb_fmt(gc, "perm=%s", list_str(perm, r, b, sizeof b));
    return gb1(gc, OP_Transpose, pa, gb2(gc, OP_MatMul, NULL, gb1(gc, OP_Transpose, pa, g), mv));
}

/* Constant mode: dX = Pad(dY, -pads) (negative pads crop, positive ones
 * restore what the forward cropped, as zeros), and the constant's gradient
 * is the sum of dY over the padded positions, sum(dY) - sum(dX). Reflect
 * and edge read some inputs more than once; the map is a product of per-axis
 * maps, so each padded axis is folded back by its 0/1 matrix
 * m[i][pad_src(i - begin)] (ir_grad_fold_axis), summing the copies. */
static int pad_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    const Value *x = n->in[0];
    int r = x->shape.rank, mode;
    int64_t pads[MAX_LIST];
    if (pad_read(n, pads, &mode, gc->d)) return -1;
    Value *dy = gb_dy(gc, 0), *g = dy;
    if (mode == 0) {
        int64_t neg[MAX_LIST];
        for (int k = 0; k < 2 * r; k++) neg[k] = -pads[k];
        g = pad_zeros(gc, dy, neg);
    } else {
        for (int k = 0; k < r && g; k++) {
            int64_t rows = dy->shape.dims[k], cols = x->shape.dims[k];
            if (pads[k] == 0 && pads[r + k] == 0) continue;
            double *m = calloc((size_t)(rows * cols) + 1, sizeof *m);
            GC_ASSERT(m);
            for (int64_t i = 0; i < rows; i++) m[i * cols + pad_src(i - pads[k], cols, mode)] += 1;
            g = ir_grad_fold_axis(gc, g, k, m, rows, cols);
            free(m);
        }
    }
    gb_set(gc, 0, g);
    if (ir_has_input(n, 2) && gc->need[2]) {
        Value *all = gb2(gc, OP_Sub, NULL, gb1(gc, OP_ReduceSum, "keepdims=0", dy), gb1(gc, OP_ReduceSum, "keepdims=0", g));
        gb_set(gc, 2, gb_reshape(gc, all, &n->in[2]->shape));
    }
    return gb_done(gc);
}

const OpDesc op_Pad = {
    .name = "Pad", .min_in = 2, .max_in = 3, .in_names = pad_in,
    .min_out = 1, .max_out = 1, .out_names = out_output,
    OP_ATTRS(pad_attrs), .infer = pad_infer, .eval = pad_eval,
    .gradient = pad_grad, .backward_reads = ir_bw_none,
    .shape_inputs = 1u << 1,
};

/* ---- Expand --------------------------------------------------------------- */

static const char *const expand_in[] = {"input", "shape"};

static int expand_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    int64_t req[MAX_LIST];
    Shape t = {0}, s = {0};
    if (n->in[1]->kind != VK_CONST) {
        /* shape read at run time: a dim the input fixes (not 1) keeps that
         * bound, the others are bounded by --max-dim */
        int k = runtime_list_len(n, 1, "shape", d), r = x->shape.rank;
        if (k < 0) return -1;
        if (k > IR_MAX_RANK) return diag_node_error(d, n, "input 'shape' has %d values; the maximum rank is %d", k, IR_MAX_RANK);
        memset(&s, 0, sizeof s);
        s.rank = k > r ? k : r;
        for (int i = 0; i < s.rank; i++) {
            int j = i - (s.rank - r);
            s.dims[i] = j >= 0 && x->shape.dims[j] != 1 && !x->shape.sym[j] ? x->shape.dims[j] : IR_DIM_UNBOUNDED;
            s.sym[i] = IR_SYM_NEW;
        }
        ir_set_out(n, 0, x->dtype, &s);
        return 0;
    }
    int k = const_list(n, 1, "shape", req, d);
    if (k < 0) return -1;
    if (k > IR_MAX_RANK) return diag_node_error(d, n, "input 'shape' has %d values; the maximum rank is %d", k, IR_MAX_RANK);
    memset(&t, 0, sizeof t);
    t.rank = k;
    for (int i = 0; i < k; i++) {
        if (req[i] < 0) return diag_node_error(d, n, "input 'shape' value %lld at index %d is negative", (long long)req[i], i);
        t.dims[i] = req[i];
    }
    char b1[SHP_BUF], b2[SHP_BUF];
    if (ir_broadcast(&x->shape, &t, &s))
        return diag_node_error(d, n, "input 'input' shape %s does not broadcast with input 'shape' %s",
                               ir_shape_str(&x->shape, b1, sizeof b1), ir_shape_str(&t, b2, sizeof b2));
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

static int expand_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *xs = &n->in[0]->shape, *os = &n->out[0]->shape;
    int64_t ist[IR_MAX_RANK], st[IR_MAX_RANK];
    ir_row_strides(xs, ist);
    for (int k = 0; k < os->rank; k++) {
        int j = k - (os->rank - xs->rank);
        st[k] = j < 0 || xs->dims[j] == 1 ? 0 : ist[j];
    }
    strided_copy(out[0], in[0], os, st, 0);
    return 0;
}

static int expand_grad(GradCtx *gc)
{
    gb_set(gc, 0, gb_reduce_to(gc, gb_dy(gc, 0), &gc->n->in[0]->shape));
    return gb_done(gc);
}

const OpDesc op_Expand = {
    .name = "Expand", .min_in = 2, .max_in = 2, .in_names = expand_in,
    .min_out = 1, .max_out = 1, .out_names = out_expanded,
    .infer = expand_infer, .infer_sym = ir_sym_expand, .eval = expand_eval, .gradient = expand_grad, .backward_reads = ir_bw_none,
    .shape_inputs = 1u << 1,
};

/* ---- Shape ---------------------------------------------------------------- */

static const AttrSpec shape_attrs[] = {
    [SHAPE_START] = {"start", ATTR_INT, "0", 0},
    [SHAPE_END] = {"end", ATTR_INT, NULL, 0},
};
OP_ATTRS_CHECK(shape_attrs, SHAPE_COUNT);
static const char *const shape_in[] = {"data"};

/* See geometry.h. */
void ir_shape_range(const Node *n, int *start, int *end)
{
    int r = n->in[0]->shape.rank;
    int64_t s = n->attrs[SHAPE_START].i, e = n->attrs[SHAPE_END].set ? n->attrs[SHAPE_END].i : r;
    if (s < 0) s += r;
    if (e < 0) e += r;
    *start = (int)clamp64(s, 0, r);
    *end = (int)clamp64(e, 0, r);
    if (*end < *start) *end = *start;
}

static int shape_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    (void)d;
    int s, e;
    ir_shape_range(n, &s, &e);
    Shape o = {0};
    memset(&o, 0, sizeof o);
    o.rank = 1;
    o.dims[0] = e - s;
    ir_set_out(n, 0, DT_I64, &o);
    return 0;
}

static int shape_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)in;
    (void)d;
    int s, e;
    ir_shape_range(n, &s, &e);
    for (int i = s; i < e; i++) out[0][i - s] = (double)n->in[0]->shape.dims[i];
    return 0;
}

/* Runtime shapes: Shape of a tensor with runtime dims is a list of static
 * length; its values are a shape value (ir_value_shape), computed at run
 * time (never folded). */
static int shape_infer_sym(Graph *g, Node *n, Diag *d)
{
    (void)g;
    (void)n;
    (void)d;
    return 0;
}

const OpDesc op_Shape = {
    .name = "Shape", .min_in = 1, .max_in = 1, .in_names = shape_in,
    .min_out = 1, .max_out = 1, .out_names = out_shape,
    OP_ATTRS(shape_attrs), .infer = shape_infer, .eval = shape_eval, .shape_only = 1,
    .infer_sym = shape_infer_sym, .infer_value = ir_value_shape,
};
