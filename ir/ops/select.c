/* select.c — operator descriptions of the data-dependent selections:
 * NonZero, Unique and NonMaxSuppression, whose output extents are counts
 * of what the data holds (ONNX opset-17 semantics).
 *
 * Shapes. When the inputs that decide the count (OpDesc.shape_inputs) are
 * constants, `infer` runs the selection and gives the exact static shape.
 * Otherwise the counted dim is a data-dependent symbol (IR_SYM_NEW) bounded
 * by what the input shapes allow: NonZero's count by numel(X), Unique's by
 * the extent along the axis (numel without one), NonMaxSuppression's by
 * B * C * min(N, max_output_boxes_per_class when constant). The C kernel
 * sets it at run time (backend/c/emit_select.c); the interpreter infers the
 * node again once the inputs are computed, so `eval` runs at exact extents.
 *
 * The selections are shared by infer and eval through one function per op
 * on doubles (unique_scan, nms_run), so the two never disagree. None of
 * these ops has a gradient (their outputs are indices, or a selection whose
 * gradient ONNX does not define).
 *
 * IfSelect (graphc's own op) is how an ONNX If whose condition is known
 * only at run time and whose branches give differently shaped outputs
 * arrives (frontend/onnx_control.c): both branches are computed and
 * IfSelect(cond, then, else) is the one the condition picks, a dim where
 * the two differ being data-dependent (bounded by the larger).
 */
#include "../op.h"
#include "select_attrs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The elements of constant v as doubles (malloc'ed; caller frees). */
static double *const_f64(const Value *v)
{
    int64_t cnt = ir_numel(&v->shape);
    double *p = malloc(sizeof(double) * (size_t)(cnt ? cnt : 1));
    GC_ASSERT(p);
    for (int64_t i = 0; i < cnt; i++) p[i] = ir_load_f64(v->dtype, v->data, (size_t)i);
    return p;
}

/* Whether every present input of n whose bit is set in mask is a constant. */
static int consts_present(const Node *n, uint32_t mask)
{
    for (int j = 0; j < n->n_in && j < 32; j++)
        if ((mask >> j & 1) && n->in[j] && n->in[j]->kind != VK_CONST) return 0;
    return 1;
}

/* ---- NonZero ------------------------------------------------------------------ */

/* NonZero: the row-major coordinates of X's nonzero elements, one column
 * per element: int64 [rank, count]. */
static const char *const nonzero_in[] = {"X"};
static const char *const nonzero_out[] = {"Y"};

static int nonzero_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    if (x->shape.rank < 1) return diag_node_error(d, n, "input 'X' must have rank >= 1 (a scalar has no coordinates)");
    int64_t dims[2] = {x->shape.rank, ir_numel(&x->shape)};
    int data_dim = x->kind != VK_CONST && dims[1] > 0;
    if (x->kind == VK_CONST) {
        int64_t cnt = 0;
        for (int64_t i = 0; i < dims[1]; i++) cnt += ir_load_f64(x->dtype, x->data, (size_t)i) != 0.0;
        dims[1] = cnt;
    }
    Shape s = ir_shape(2, dims);
    if (data_dim) s.sym[1] = IR_SYM_NEW;
    ir_set_out(n, 0, DT_I64, &s);
    return 0;
}

static int nonzero_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *xs = &n->in[0]->shape;
    int64_t total = ir_numel(xs), cnt = n->out[0]->shape.dims[1], j = 0;
    for (int64_t e = 0; e < total; e++) {
        if (in[0][e] == 0.0) continue;
        int64_t r = e;
        for (int k = xs->rank - 1; k >= 0; k--) {
            out[0][k * cnt + j] = (double)(r % xs->dims[k]);
            r /= xs->dims[k];
        }
        j++;
    }
    return 0;
}

/* Runtime shapes: X's runtime dims only change how many elements are
 * scanned; the count is data-dependent anyway (bounded by numel at the
 * bounds), and the rank stays static. */
static int nonzero_infer_sym(Graph *g, Node *n, Diag *d)
{
    (void)g;
    (void)n;
    (void)d;
    return 0;
}

const OpDesc op_NonZero = {
    .name = "NonZero", .min_in = 1, .max_in = 1, .in_names = nonzero_in,
    .min_out = 1, .max_out = 1, .out_names = nonzero_out,
    .infer = nonzero_infer, .infer_sym = nonzero_infer_sym, .eval = nonzero_eval, .shape_inputs = 1u,
};

/* ---- Unique ------------------------------------------------------------------- */

/* Unique: the distinct slices of X along `axis` (the distinct elements of
 * the flattened X without one), sorted ascending (slices lexicographically,
 * in row-major order) or in order of first occurrence when sorted = 0;
 * with each one's first index, each position's index into Y
 * (inverse_indices) and each one's count, as numpy.unique does. */
static const AttrSpec unique_attrs[] = {
    [UNIQUE_AXIS] = {"axis", ATTR_INT, NULL, 0},
    [UNIQUE_SORTED] = {"sorted", ATTR_INT, "1", 0},
};
OP_ATTRS_CHECK(unique_attrs, UNIQUE_COUNT);
static const char *const unique_in[] = {"X"};
static const char *const unique_out[] = {"Y", "indices", "inverse_indices", "counts"};

/* outer x dim x inner view of X for n's axis (no axis: 1 x numel x 1). */
static void unique_split(const Node *n, int64_t *outer, int64_t *dim, int64_t *inner)
{
    const Shape *xs = &n->in[0]->shape;
    *outer = *inner = 1;
    if (!n->attrs[UNIQUE_AXIS].set) {
        *dim = ir_numel(xs);
        return;
    }
    int ax = ir_norm_axis(n->attrs[UNIQUE_AXIS].i, xs->rank);
    for (int k = 0; k < ax; k++) *outer *= xs->dims[k];
    *dim = xs->dims[ax];
    for (int k = ax + 1; k < xs->rank; k++) *inner *= xs->dims[k];
}

/* -1, 0, 1: slice a of x against slice b, row-major lexicographic. */
static int unique_cmp(const double *x, int64_t outer, int64_t dim, int64_t inner, int64_t a, int64_t b)
{
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
            double va = x[(o * dim + a) * inner + i], vb = x[(o * dim + b) * inner + i];
            if (va < vb) return -1;
            if (va > vb) return 1;
        }
    return 0;
}

/* The distinct slices: first[0..U) holds each one's first position (in
 * output order), rep[t] the first position of slice t's value; returns U. */
static int64_t unique_scan(const double *x, int64_t outer, int64_t dim, int64_t inner, int sorted, int64_t *first, int64_t *rep)
{
    int64_t u = 0;
    for (int64_t t = 0; t < dim; t++) {
        rep[t] = t;
        for (int64_t q = 0; q < u; q++)
            if (unique_cmp(x, outer, dim, inner, first[q], t) == 0) {
                rep[t] = first[q];
                break;
            }
        if (rep[t] == t) first[u++] = t;
    }
    if (sorted)
        for (int64_t q = 1; q < u; q++) {
            int64_t v = first[q], p = q;
            for (; p > 0 && unique_cmp(x, outer, dim, inner, first[p - 1], v) > 0; p--) first[p] = first[p - 1];
            first[p] = v;
        }
    return u;
}

static int unique_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    const AttrVal *axis = &n->attrs[UNIQUE_AXIS];
    int ax = -1;
    if (axis->set) {
        ax = ir_norm_axis(axis->i, x->shape.rank);
        if (ax < 0) return diag_node_error(d, n, "attribute 'axis' = %lld is out of range for rank %d", (long long)axis->i, x->shape.rank);
    }
    int64_t outer, dim, inner, u = 0;
    unique_split(n, &outer, &dim, &inner);
    int data_dim = x->kind != VK_CONST;
    if (data_dim) {
        u = dim;
    } else if (dim > 0) {
        double *xv = const_f64(x);
        int64_t *tmp = malloc(sizeof(int64_t) * 2 * (size_t)dim);
        GC_ASSERT(tmp);
        u = unique_scan(xv, outer, dim, inner, n->attrs[UNIQUE_SORTED].i != 0, tmp, tmp + dim);
        free(tmp);
        free(xv);
    }
    data_dim = data_dim && u > 0;
    Shape s = x->shape;
    if (ax < 0) s = ir_shape(1, &u);
    else s.dims[ax] = u;
    if (data_dim) s.sym[ax < 0 ? 0 : ax] = IR_SYM_NEW;
    ir_set_out(n, 0, x->dtype, &s);
    Shape su = ir_shape(1, &u), sd = ir_shape(1, &dim);
    if (data_dim) su.sym[0] = IR_SYM_NEW;
    if (n->n_out > 1) ir_set_out(n, 1, DT_I64, &su);
    if (n->n_out > 2) ir_set_out(n, 2, DT_I64, &sd);
    if (n->n_out > 3) ir_set_out(n, 3, DT_I64, &su);
    return 0;
}

static int unique_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    int64_t outer, dim, inner;
    unique_split(n, &outer, &dim, &inner);
    int64_t *tmp = malloc(sizeof(int64_t) * 3 * (size_t)(dim ? dim : 1));
    GC_ASSERT(tmp);
    int64_t *first = tmp, *rep = tmp + dim, *pos = tmp + 2 * dim;
    int64_t u = unique_scan(in[0], outer, dim, inner, n->attrs[UNIQUE_SORTED].i != 0, first, rep);
    for (int64_t j = 0; j < u; j++) {
        pos[first[j]] = j;
        for (int64_t o = 0; o < outer; o++)
            memcpy(out[0] + (o * u + j) * inner, in[0] + (o * dim + first[j]) * inner, sizeof(double) * (size_t)inner);
        if (n->n_out > 1) out[1][j] = (double)first[j];
        if (n->n_out > 3) out[3][j] = 0.0;
    }
    for (int64_t t = 0; t < dim; t++) {
        if (n->n_out > 2) out[2][t] = (double)pos[rep[t]];
        if (n->n_out > 3) out[3][pos[rep[t]]] += 1.0;
    }
    free(tmp);
    return 0;
}

const OpDesc op_Unique = {
    .name = "Unique", .min_in = 1, .max_in = 1, .in_names = unique_in,
    .min_out = 1, .max_out = 4, .out_names = unique_out,
    OP_ATTRS(unique_attrs), .infer = unique_infer, .eval = unique_eval, .shape_inputs = 1u,
};

/* ---- NonMaxSuppression -------------------------------------------------------- */

/* NonMaxSuppression: per batch and class, the boxes with a score above
 * score_threshold (when given) taken by descending score (ties: the lower
 * index first), each kept unless its IoU with a box kept before exceeds
 * iou_threshold, at most max_output_boxes_per_class of them (absent or
 * <= 0: none). Boxes are [y1, x1, y2, x2] with either corner first
 * (center_point_box = 0) or [x_center, y_center, width, height]. Output:
 * int64 [selected, 3] rows (batch, class, box), by batch, class, then the
 * order of selection. */
static const AttrSpec nms_attrs[] = {[NMS_CENTER_POINT_BOX] = {"center_point_box", ATTR_INT, "0", 0}};
OP_ATTRS_CHECK(nms_attrs, NMS_COUNT);
static const char *const nms_in[] = {"boxes", "scores", "max_output_boxes_per_class", "iou_threshold", "score_threshold"};
static const char *const nms_out[] = {"selected_indices"};

typedef struct NmsArgs {
    int64_t batches, classes, boxes, max_out;
    double iou, score;
    int has_score, center;
} NmsArgs;

/* Box b as (ymin, xmin, ymax, xmax). */
static void nms_box(const double *p, int center, double *r)
{
    if (center) {
        r[0] = p[1] - p[3] / 2.0;
        r[2] = p[1] + p[3] / 2.0;
        r[1] = p[0] - p[2] / 2.0;
        r[3] = p[0] + p[2] / 2.0;
    } else {
        r[0] = fmin(p[0], p[2]);
        r[2] = fmax(p[0], p[2]);
        r[1] = fmin(p[1], p[3]);
        r[3] = fmax(p[1], p[3]);
    }
}

/* Whether boxes a and b overlap with IoU > thr. */
static int nms_suppress(const double *a, const double *b, int center, double thr)
{
    double ra[4], rb[4];
    nms_box(a, center, ra);
    nms_box(b, center, rb);
    double ih = fmin(ra[2], rb[2]) - fmax(ra[0], rb[0]), iw = fmin(ra[3], rb[3]) - fmax(ra[1], rb[1]);
    if (ih <= 0.0 || iw <= 0.0) return 0;
    double inter = ih * iw, aa = (ra[2] - ra[0]) * (ra[3] - ra[1]), ab = (rb[2] - rb[0]) * (rb[3] - rb[1]);
    double uni = aa + ab - inter;
    if (aa <= 0.0 || ab <= 0.0 || uni <= 0.0) return 0;
    return inter / uni > thr;
}

/* Runs the selection; writes the triples into out (NULL: counts only) and
 * returns their number. */
static int64_t nms_run(const NmsArgs *p, const double *boxes, const double *scores, int64_t *out)
{
    int64_t nb = p->boxes, cnt = 0;
    if (p->max_out <= 0 || nb == 0) return 0;
    int64_t *ord = malloc(sizeof(int64_t) * 2 * (size_t)nb), *sel = ord + nb;
    GC_ASSERT(ord);
    for (int64_t b = 0; b < p->batches; b++)
        for (int64_t c = 0; c < p->classes; c++) {
            const double *sc = scores + (b * p->classes + c) * nb, *bx = boxes + b * nb * 4;
            int64_t m = 0, ns = 0;
            for (int64_t i = 0; i < nb; i++)
                if (!p->has_score || sc[i] > p->score) ord[m++] = i;
            for (int64_t q = 1; q < m; q++) {
                int64_t v = ord[q], t = q;
                for (; t > 0 && sc[ord[t - 1]] < sc[v]; t--) ord[t] = ord[t - 1];
                ord[t] = v;
            }
            for (int64_t t = 0; t < m && ns < p->max_out; t++) {
                int keep = 1;
                for (int64_t q = 0; q < ns && keep; q++) keep = !nms_suppress(bx + ord[t] * 4, bx + sel[q] * 4, p->center, p->iou);
                if (!keep) continue;
                sel[ns++] = ord[t];
                if (out) {
                    out[cnt * 3] = b;
                    out[cnt * 3 + 1] = c;
                    out[cnt * 3 + 2] = ord[t];
                }
                cnt++;
            }
        }
    free(ord);
    return cnt;
}

/* The scalar in input j (absent: dflt); in: the inputs' values (n_in of
 * them), NULL to read the constant. */
static double nms_scalar(const Node *n, int j, const double *const *in, double dflt)
{
    if (!ir_has_input(n, j)) return dflt;
    if (in) return in[j][0];
    return ir_load_f64(n->in[j]->dtype, n->in[j]->data, 0);
}

/* max_output_boxes_per_class as an int64: read from the constant's bytes
 * (INT64_MAX, PyTorch's "no limit", does not survive a double) or, from
 * the interpreter's doubles, clamped to [0, INT64_MAX]. */
static int64_t nms_max_out(const Node *n, const double *const *in)
{
    if (!ir_has_input(n, 2)) return 0;
    if (!in) {
        int64_t m;
        memcpy(&m, n->in[2]->data, sizeof m);
        return m;
    }
    double v = in[2][0];
    return v >= 9223372036854775807.0 ? INT64_MAX : v > 0 ? (int64_t)v : 0;
}

static void nms_args(const Node *n, const double *const *in, NmsArgs *p)
{
    const Shape *bs = &n->in[0]->shape, *ss = &n->in[1]->shape;
    p->batches = bs->dims[0];
    p->boxes = bs->dims[1];
    p->classes = ss->dims[1];
    p->max_out = nms_max_out(n, in);
    p->iou = nms_scalar(n, 3, in, 0.0);
    p->has_score = ir_has_input(n, 4);
    p->score = nms_scalar(n, 4, in, 0.0);
    p->center = n->attrs[NMS_CENTER_POINT_BOX].i != 0;
}

static int nms_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Shape *bs = &n->in[0]->shape, *ss = &n->in[1]->shape;
    char b1[128], b2[128];
    if (bs->rank != 3 || bs->dims[2] != 4 || ss->rank != 3 || ss->dims[0] != bs->dims[0] || ss->dims[2] != bs->dims[1])
        return diag_node_error(d, n, "inputs 'boxes' [B, N, 4] and 'scores' [B, C, N] disagree: %s and %s", ir_shape_str(bs, b1, sizeof b1),
                               ir_shape_str(ss, b2, sizeof b2));
    for (int j = 0; j < 2; j++)
        if (n->in[j]->dtype != DT_F32 && n->in[j]->dtype != DT_F64)
            return diag_node_error(d, n, "input '%s' must be float or double, got %s", nms_in[j], ir_dtype_name(n->in[j]->dtype));
    for (int j = 2; j < 5; j++) {
        if (!ir_has_input(n, j)) continue;
        if (ir_numel(&n->in[j]->shape) != 1)
            return diag_node_error(d, n, "input '%s' must hold one value, got shape %s", nms_in[j], ir_shape_str(&n->in[j]->shape, b1, sizeof b1));
        if (j == 2 && n->in[j]->dtype != DT_I64)
            return diag_node_error(d, n, "input 'max_output_boxes_per_class' must be int64, got %s", ir_dtype_name(n->in[j]->dtype));
    }
    NmsArgs p;
    int64_t rows, dims[2];
    if (consts_present(n, 0x1fu)) {
        nms_args(n, NULL, &p);
        double *bx = const_f64(n->in[0]), *sc = const_f64(n->in[1]);
        rows = nms_run(&p, bx, sc, NULL);
        free(bx);
        free(sc);
        dims[0] = rows;
        dims[1] = 3;
        Shape s = ir_shape(2, dims);
        ir_set_out(n, 0, DT_I64, &s);
        return 0;
    }
    /* the bound: every box of every batch and class, fewer when the
     * per-class limit is a constant */
    int64_t per = bs->dims[1];
    if (!ir_has_input(n, 2)) per = 0;
    else if (n->in[2]->kind == VK_CONST) {
        int64_t m = nms_max_out(n, NULL);
        per = m <= 0 ? 0 : m < per ? m : per;
    }
    dims[0] = bs->dims[0] * ss->dims[1] * per;
    dims[1] = 3;
    Shape s = ir_shape(2, dims);
    if (dims[0] > 0) s.sym[0] = IR_SYM_NEW;
    ir_set_out(n, 0, DT_I64, &s);
    return 0;
}

static int nms_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    NmsArgs p;
    nms_args(n, in, &p);
    int64_t rows = n->out[0]->shape.dims[0];
    int64_t *sel = malloc(sizeof(int64_t) * 3 * (size_t)(p.batches * p.classes * p.boxes + 1));
    GC_ASSERT(sel);
    int64_t cnt = nms_run(&p, in[0], in[1], sel);
    GC_ASSERT(cnt == rows);
    for (int64_t i = 0; i < 3 * rows; i++) out[0][i] = (double)sel[i];
    free(sel);
    return 0;
}

/* Runtime shapes: a runtime box count N (the detectors' batched NMS over
 * what a score threshold kept); the batch and class counts stay static.
 * boxes' N and scores' N are the same, or two counts (runtime or static,
 * of one bound) that the run compares (the compiled code returns NAME_ERR_SHAPE when they
 * differ; the interpreter's nms_infer at the actual extents refuses them).
 * The selected rows are data-dependent anyway, bounded at N's bound. */
static int nms_infer_sym(Graph *g, Node *n, Diag *d)
{
    const Shape *bs = &n->in[0]->shape, *ss = &n->in[1]->shape;
    char b1[160], b2[160];
    if (bs->sym[0] || bs->sym[2] || ss->sym[0] || ss->sym[1])
        return diag_node_error(d, n, "runtime shapes support a runtime box count only: 'boxes' is %s and 'scores' %s",
                               ir_shape_str_g(g, bs, b1, sizeof b1), ir_shape_str_g(g, ss, b2, sizeof b2));
    for (int j = 2; j < 5; j++)
        if (ir_has_input(n, j) && ir_shape_has_sym(&n->in[j]->shape))
            return diag_node_error(d, n, "input '%s' must have a static shape", nms_in[j]);
    return 0;
}

const OpDesc op_NonMaxSuppression = {
    .name = "NonMaxSuppression", .min_in = 2, .max_in = 5, .in_names = nms_in,
    .min_out = 1, .max_out = 1, .out_names = nms_out,
    OP_ATTRS(nms_attrs), .infer = nms_infer, .infer_sym = nms_infer_sym, .eval = nms_eval, .shape_inputs = 0x1fu,
};

/* ---- IfSelect ----------------------------------------------------------------- */

/* IfSelect(cond, then, else): `then` when the scalar cond is nonzero, else
 * `else`, shape included. When cond is a constant (shape inference folded
 * it), the output is the chosen input exactly, whatever the other's shape;
 * otherwise both must have one dtype and rank, and each dim where they
 * differ is data-dependent, bounded by the larger extent. */
static const char *const ifsel_in[] = {"cond", "then", "else"};
static const char *const ifsel_out[] = {"Y"};

static int ifsel_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *c = n->in[0], *a = n->in[1], *b = n->in[2];
    char b1[128], b2[128];
    if (ir_numel(&c->shape) != 1) return diag_node_error(d, n, "input 'cond' must hold one value, got shape %s", ir_shape_str(&c->shape, b1, sizeof b1));
    if (a->dtype != b->dtype)
        return diag_node_error(d, n, "the If's branches give %s and %s; they must give one element type", ir_dtype_name(a->dtype),
                               ir_dtype_name(b->dtype));
    if (c->kind == VK_CONST) {
        const Value *v = ir_load_f64(c->dtype, c->data, 0) != 0.0 ? a : b;
        ir_set_out(n, 0, v->dtype, &v->shape);
        return 0;
    }
    if (a->shape.rank != b->shape.rank)
        return diag_node_error(d, n, "the If's condition is known only at run time and its branches give ranks %d (%s) and %d (%s); "
                               "they must have one rank", a->shape.rank, ir_shape_str(&a->shape, b1, sizeof b1), b->shape.rank,
                               ir_shape_str(&b->shape, b2, sizeof b2));
    Shape s = a->shape;
    for (int k = 0; k < s.rank; k++) {
        s.sym[k] = 0;
        if (a->shape.dims[k] == b->shape.dims[k] && a->shape.sym[k] == b->shape.sym[k]) continue; /* the rule copies a symbol */
        if (b->shape.dims[k] > s.dims[k]) s.dims[k] = b->shape.dims[k];
        s.sym[k] = IR_SYM_NEW;
    }
    ir_set_out(n, 0, a->dtype, &s);
    return 0;
}

/* The symbols the output shares with its inputs: the chosen input's (a
 * constant cond), or those the two branches have in common. */
static int ifsel_infer_sym(Graph *g, Node *n, Diag *d)
{
    (void)g;
    (void)d;
    const Value *c = n->in[0], *a = n->in[1], *b = n->in[2];
    Shape *s = &n->out[0]->shape;
    if (c->kind == VK_CONST) {
        memcpy(s->sym, (ir_load_f64(c->dtype, c->data, 0) != 0.0 ? a : b)->shape.sym, sizeof s->sym);
        return 0;
    }
    for (int k = 0; k < s->rank; k++)
        if (a->shape.sym[k] && a->shape.sym[k] == b->shape.sym[k] && a->shape.dims[k] == b->shape.dims[k]) s->sym[k] = a->shape.sym[k];
    return 0;
}

static int ifsel_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    int pick = in[0][0] != 0.0 ? 1 : 2;
    int64_t cnt = ir_numel(&n->out[0]->shape);
    GC_ASSERT(cnt == ir_numel(&n->in[pick]->shape));
    memcpy(out[0], in[pick], sizeof(double) * (size_t)cnt);
    return 0;
}

const OpDesc op_IfSelect = {
    .name = "IfSelect", .min_in = 3, .max_in = 3, .in_names = ifsel_in,
    .min_out = 1, .max_out = 1, .out_names = ifsel_out,
    .infer = ifsel_infer, .infer_sym = ifsel_infer_sym, .eval = ifsel_eval, .shape_inputs = 1u,
};
