/* signal.c — operator descriptions of the signal family: Einsum,
 * GridSample and the window generators HannWindow, HammingWindow and
 * BlackmanWindow (ONNX opset-17 semantics). DFT, STFT and MelWeightMatrix
 * keep placeholder descriptions (not implemented yet).
 *
 * Einsum is lowered to one loop nest over its labels (signal.h's
 * EinsumPlan): the output labels index the result, the others are summed,
 * and a label repeated inside one operand walks its diagonal (the strides
 * of its dims add up). "..." stands for the broadcast leading dims of each
 * operand, right-aligned across operands as numpy does. Without "->" the
 * output is the ellipsis dims followed by the labels that occur exactly
 * once, in ASCII order (numpy's implicit mode).
 *
 * GridSample follows PyTorch's grid_sample for 4-D inputs (the ONNX
 * reference data come from it): grid (x, y) in [-1, 1] is unnormalized
 * with or without align_corners, then bilinear / nearest (round half to
 * even) / bicubic (A = -0.75) sampling with zeros, border or reflection
 * padding. Bicubic applies the padding to each of its 4x4 taps.
 *
 * The windows' size input must be a constant (it fixes the output shape).
 */
#include "../op.h"
#include "signal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SHP_BUF 160

/* ---- Einsum ------------------------------------------------------------- */

enum { EIN_EQUATION };
static const AttrSpec einsum_attrs[] = {{"equation", ATTR_STRING, NULL, 1}};
static const char *const einsum_in[] = {"Inputs"};
static const char *const einsum_out[] = {"Output"};

/* Label id of a letter (0..51), -1 otherwise; ellipsis dim j is 52 + j
 * counted from the left of the broadcast ellipsis shape. */
static int letter_id(char ch)
{
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + ch - 'A';
    return -1;
}

static char label_char(int id) { return id < 26 ? (char)('a' + id) : (char)('A' + id - 26); }

/* One term of the equation as label ids; ellipsis position or -1. */
typedef struct Term {
    int lab[IR_MAX_RANK + 1];
    int n, ell;
} Term;

static int parse_term(const Node *n, const char *s, size_t len, Term *t, const char *what, Diag *d)
{
    t->n = 0;
    t->ell = -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == '.') {
            if (t->ell >= 0 || i + 2 >= len + 0 || s[i + 1] != '.' || s[i + 2] != '.')
                return diag_node_error(d, n, "attribute 'equation': malformed '...' in %s", what);
            t->ell = t->n;
            i += 2;
            continue;
        }
        int id = letter_id(s[i]);
        if (id < 0) return diag_node_error(d, n, "attribute 'equation': invalid character '%c' in %s", s[i], what);
        if (t->n > IR_MAX_RANK) return diag_node_error(d, n, "attribute 'equation': %s has too many labels", what);
        t->lab[t->n++] = id;
    }
    return 0;
}

int signal_einsum_plan(const Node *n, EinsumPlan *p, Diag *d)
{
    char eq[512];
    size_t k = 0;
    const char *src = n->attrs[EIN_EQUATION].s;
    for (; *src && k + 1 < sizeof eq; src++)
        if (*src != ' ') eq[k++] = *src;
    eq[k] = 0;
    memset(p, 0, sizeof *p);
    if (n->n_in > EINSUM_MAX_OPS) return diag_node_error(d, n, "at most %d inputs are supported, got %d", EINSUM_MAX_OPS, n->n_in);
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
    Term terms[EINSUM_MAX_OPS];
    int nt = 0;
    size_t start = 0;
    for (size_t i = 0; i <= lhs_len; i++) {
        if (i < lhs_len && eq[i] != ',') continue;
        char what[32];
        snprintf(what, sizeof what, "input %d", nt);
        if (nt >= n->n_in)
            return diag_node_error(d, n, "attribute 'equation' '%s' has more terms than the %d inputs", n->attrs[EIN_EQUATION].s, n->n_in);
        if (parse_term(n, eq + start, i - start, &terms[nt], what, d)) return -1;
        nt++;
        start = i + 1;
    }
    if (nt != n->n_in)
        return diag_node_error(d, n, "attribute 'equation' '%s' has %d terms but the node has %d inputs", n->attrs[EIN_EQUATION].s, nt, n->n_in);
    /* sizes of letters and of the broadcast ellipsis dims */
    int64_t lsize[EINSUM_MAX_LABELS];
    int count[52] = {0}, ell_rank = 0, any_ell = 0;
    for (int i = 0; i < EINSUM_MAX_LABELS; i++) lsize[i] = -1;
    int64_t ell_dims[IR_MAX_RANK];
    for (int op = 0; op < nt; op++) {
        const Shape *s = &n->in[op]->shape;
        int er = s->rank - terms[op].n;
        if (terms[op].ell < 0 ? er != 0 : er < 0)
            return diag_node_error(d, n, "input %d has rank %d but its equation term has %d labels%s", op, s->rank, terms[op].n,
                                   terms[op].ell >= 0 ? " plus '...'" : "");
        if (terms[op].ell >= 0) any_ell = 1;
        if (er > ell_rank) ell_rank = er;
    }
    for (int j = 0; j < ell_rank; j++) ell_dims[j] = 1;
    for (int op = 0; op < nt; op++) {
        const Shape *s = &n->in[op]->shape;
        const Term *t = &terms[op];
        int er = s->rank - t->n;
        for (int dim = 0, li = 0; dim < s->rank; dim++) {
            int64_t sz = s->dims[dim];
            if (t->ell >= 0 && dim >= t->ell && dim < t->ell + er) {
                int j = ell_rank - er + (dim - t->ell);
                if (ell_dims[j] != sz && ell_dims[j] != 1 && sz != 1)
                    return diag_node_error(d, n, "the '...' dims of input %d do not broadcast with the other inputs' (size %lld vs %lld)",
                                           op, (long long)sz, (long long)ell_dims[j]);
                if (sz != 1) ell_dims[j] = sz;
                continue;
            }
            int id = t->lab[li++];
            count[id]++;
            if (lsize[id] >= 0 && lsize[id] != sz)
                return diag_node_error(d, n, "label '%c' has size %lld in input %d but size %lld elsewhere", label_char(id),
                                       (long long)sz, op, (long long)lsize[id]);
            lsize[id] = sz;
        }
    }
    for (int j = 0; j < ell_rank; j++) lsize[52 + j] = ell_dims[j];
    /* output labels */
    int out_lab[IR_MAX_RANK + 1], n_outl = 0;
    if (arrow) {
        Term ot;
        if (parse_term(n, arrow + 2, strlen(arrow + 2), &ot, "the output", d)) return -1;
        if (ot.ell >= 0 && !any_ell) return diag_node_error(d, n, "attribute 'equation': the output has '...' but no input does");
        for (int i = 0; i <= ot.n; i++) {
            if (i == ot.ell)
                for (int j = 0; j < ell_rank; j++) out_lab[n_outl++] = 52 + j;
            if (i == ot.n) break;
            int id = ot.lab[i];
            if (lsize[id] < 0) return diag_node_error(d, n, "output label '%c' does not occur in any input", label_char(id));
            for (int q = 0; q < i; q++)
                if (ot.lab[q] == id) return diag_node_error(d, n, "output label '%c' occurs more than once", label_char(id));
            if (n_outl >= IR_MAX_RANK) return diag_node_error(d, n, "the output rank exceeds %d", IR_MAX_RANK);
            out_lab[n_outl++] = id;
        }
    } else {
        for (int j = 0; j < ell_rank; j++) out_lab[n_outl++] = 52 + j;
        for (int id = 26; id < 52; id++)
            if (count[id] == 1 && n_outl < IR_MAX_RANK) out_lab[n_outl++] = id;
        for (int id = 0; id < 26; id++)
            if (count[id] == 1 && n_outl < IR_MAX_RANK) out_lab[n_outl++] = id;
    }
    /* loops: output labels, then every other label that occurs */
    int loop_of[EINSUM_MAX_LABELS];
    for (int i = 0; i < EINSUM_MAX_LABELS; i++) loop_of[i] = -1;
    p->n_ops = nt;
    for (int i = 0; i < n_outl; i++) {
        loop_of[out_lab[i]] = p->n_loops;
        p->size[p->n_loops++] = lsize[out_lab[i]];
    }
    p->n_out = n_outl;
    for (int id = 0; id < EINSUM_MAX_LABELS; id++)
        if (lsize[id] >= 0 && loop_of[id] < 0) {
            loop_of[id] = p->n_loops;
            p->size[p->n_loops++] = lsize[id];
        }
    p->out = ir_shape(n_outl, p->size);
    for (int op = 0; op < nt; op++) {
        const Shape *s = &n->in[op]->shape;
        const Term *t = &terms[op];
        int er = s->rank - t->n;
        int64_t st = 1;
        for (int dim = s->rank - 1, li = t->n - 1; dim >= 0; dim--) {
            int id;
            if (t->ell >= 0 && dim >= t->ell && dim < t->ell + er) id = 52 + ell_rank - er + (dim - t->ell);
            else id = t->lab[li--];
            if (s->dims[dim] != 1 || lsize[id] == 1) p->stride[op][loop_of[id]] += st;
            st *= s->dims[dim];
        }
    }
    return 0;
}

static int einsum_infer(Node *n, Diag *d)
{
    EinsumPlan p;
    if (n->n_in < 1) return diag_node_error(d, n, "needs at least one input");
    for (int i = 0; i < n->n_in; i++) {
        if (!n->in[i]) return diag_node_error(d, n, "input %d is absent", i);
        DType t = n->in[i]->dtype;
        if (t == DT_BOOL) return diag_node_error(d, n, "input %d has dtype bool; expected a numeric type", i);
        if (t != n->in[0]->dtype)
            return diag_node_error(d, n, "input %d has dtype %s but input 0 has %s", i, ir_dtype_name(t), ir_dtype_name(n->in[0]->dtype));
    }
    if (signal_einsum_plan(n, &p, d)) return -1;
    ir_set_out(n, 0, n->in[0]->dtype, &p.out);
    return 0;
}

static int einsum_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    EinsumPlan p;
    if (signal_einsum_plan(n, &p, d)) return -1;
    int64_t nout = ir_numel(&p.out), nsum = 1;
    for (int k = p.n_out; k < p.n_loops; k++) nsum *= p.size[k];
    for (int64_t o = 0; o < nout; o++) {
        int64_t idx[EINSUM_MAX_LABELS] = {0}, base[EINSUM_MAX_OPS] = {0}, rem = o;
        for (int k = p.n_out - 1; k >= 0; k--) {
            idx[k] = rem % p.size[k];
            rem /= p.size[k];
            for (int op = 0; op < p.n_ops; op++) base[op] += idx[k] * p.stride[op][k];
        }
        double acc = 0;
        for (int64_t s = 0; s < nsum; s++) {
            int64_t r = s;
            double prod = 1;
            int64_t off[EINSUM_MAX_OPS];
            for (int op = 0; op < p.n_ops; op++) off[op] = base[op];
            for (int k = p.n_loops - 1; k >= p.n_out; k--) {
                int64_t v = r % p.size[k];
                r /= p.size[k];
                for (int op = 0; op < p.n_ops; op++) off[op] += v * p.stride[op][k];
            }
            for (int op = 0; op < p.n_ops; op++) prod *= in[op][off[op]];
            acc += prod;
        }
        out[0][o] = acc;
    }
    return 0;
}

const OpDesc op_Einsum = {
    .name = "Einsum",
    .min_in = 1, .max_in = -1, .in_names = einsum_in,
    .min_out = 1, .max_out = 1, .out_names = einsum_out,
    .attrs = einsum_attrs, .n_attrs = 1,
    .infer = einsum_infer, .eval = einsum_eval,
};

/* ---- GridSample ---------------------------------------------------------- */

enum { GS_ALIGN, GS_MODE, GS_PAD };
static const AttrSpec gs_attrs[] = {
    {"align_corners", ATTR_INT, "0", 0},
    {"mode", ATTR_STRING, "bilinear", 0},
    {"padding_mode", ATTR_STRING, "zeros", 0},
};
static const char *const gs_in[] = {"X", "grid"};
static const char *const gs_out[] = {"Y"};

static int gs_mode(const char *s) { return !strcmp(s, "bilinear") ? 0 : !strcmp(s, "nearest") ? 1 : !strcmp(s, "bicubic") ? 2 : -1; }
static int gs_pad(const char *s) { return !strcmp(s, "zeros") ? 0 : !strcmp(s, "border") ? 1 : !strcmp(s, "reflection") ? 2 : -1; }

static int gs_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0], *g = n->in[1];
    char b1[SHP_BUF], b2[SHP_BUF];
    if (!ir_dtype_is_float(x->dtype))
        return diag_node_error(d, n, "input 'X' must be a float tensor, got %s", ir_dtype_name(x->dtype));
    if (g->dtype != x->dtype)
        return diag_node_error(d, n, "input 'grid' has dtype %s but input 'X' has %s", ir_dtype_name(g->dtype), ir_dtype_name(x->dtype));
    if (x->shape.rank != 4)
        return diag_node_error(d, n, "input 'X' must be 4-D (N,C,H,W), got shape %s", ir_shape_str(&x->shape, b1, sizeof b1));
    if (g->shape.rank != 4 || g->shape.dims[3] != 2 || g->shape.dims[0] != x->shape.dims[0])
        return diag_node_error(d, n, "input 'grid' shape %s must be [N,H_out,W_out,2] with N = %lld (input 'X' shape %s)",
                               ir_shape_str(&g->shape, b1, sizeof b1), (long long)x->shape.dims[0],
                               ir_shape_str(&x->shape, b2, sizeof b2));
    if (gs_mode(n->attrs[GS_MODE].s) < 0)
        return diag_node_error(d, n, "attribute 'mode' must be bilinear, nearest or bicubic, got '%s'", n->attrs[GS_MODE].s);
    if (gs_pad(n->attrs[GS_PAD].s) < 0)
        return diag_node_error(d, n, "attribute 'padding_mode' must be zeros, border or reflection, got '%s'", n->attrs[GS_PAD].s);
    int64_t dims[4] = {x->shape.dims[0], x->shape.dims[1], g->shape.dims[1], g->shape.dims[2]};
    Shape s = ir_shape(4, dims);
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

/* Reflects v into [lo2/2, hi2/2] (bounds given doubled, as PyTorch does). */
static double gs_reflect(double v, double lo2, double hi2)
{
    if (lo2 == hi2) return 0;
    double mn = lo2 / 2, span = (hi2 - lo2) / 2;
    v = fabs(v - mn);
    double extra = fmod(v, span);
    int flips = (int)floor(v / span);
    return flips % 2 == 0 ? extra + mn : span - extra + mn;
}

/* Applies the padding mode to a source coordinate along an axis of size sz. */
static double gs_pad_coord(double v, int64_t sz, int pad, int align)
{
    if (pad == 1) return fmin(fmax(v, 0), (double)(sz - 1));
    if (pad == 2) {
        v = align ? gs_reflect(v, 0, 2.0 * (double)(sz - 1)) : gs_reflect(v, -1, 2.0 * (double)sz - 1);
        return fmin(fmax(v, 0), (double)(sz - 1));
    }
    return v;
}

static double gs_at(const double *img, int64_t H, int64_t W, int64_t y, int64_t x)
{
    return y < 0 || y >= H || x < 0 || x >= W ? 0 : img[y * W + x];
}

static double gs_cubic(double x0, double x1, double x2, double x3, double t)
{
    const double A = -0.75;
    double u = t + 1, c0 = ((A * u - 5 * A) * u + 8 * A) * u - 4 * A;
    double c1 = ((A + 2) * t - (A + 3)) * t * t + 1;
    double v = 1 - t, c2 = ((A + 2) * v - (A + 3)) * v * v + 1;
    u = v + 1;
    double c3 = ((A * u - 5 * A) * u + 8 * A) * u - 4 * A;
    return x0 * c0 + x1 * c1 + x2 * c2 + x3 * c3;
}

static int gs_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const Shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
    int64_t N = xs->dims[0], C = xs->dims[1], H = xs->dims[2], W = xs->dims[3], OH = ys->dims[2], OW = ys->dims[3];
    int mode = gs_mode(n->attrs[GS_MODE].s), pad = gs_pad(n->attrs[GS_PAD].s), align = n->attrs[GS_ALIGN].i != 0;
    for (int64_t b = 0; b < N; b++)
        for (int64_t i = 0; i < OH; i++)
            for (int64_t j = 0; j < OW; j++) {
                const double *g = in[1] + ((b * OH + i) * OW + j) * 2;
                double gx = align ? (g[0] + 1) / 2 * (double)(W - 1) : ((g[0] + 1) * (double)W - 1) / 2;
                double gy = align ? (g[1] + 1) / 2 * (double)(H - 1) : ((g[1] + 1) * (double)H - 1) / 2;
                for (int64_t c = 0; c < C; c++) {
                    const double *img = in[0] + (b * C + c) * H * W;
                    double v;
                    if (mode == 2) {
                        double fx = floor(gx), fy = floor(gy), r[4];
                        for (int p = 0; p < 4; p++) {
                            double q[4];
                            for (int s = 0; s < 4; s++) {
                                double yy = gs_pad_coord(fy - 1 + p, H, pad, align), xx = gs_pad_coord(fx - 1 + s, W, pad, align);
                                q[s] = gs_at(img, H, W, (int64_t)floor(yy), (int64_t)floor(xx));
                            }
                            r[p] = gs_cubic(q[0], q[1], q[2], q[3], gx - fx);
                        }
                        v = gs_cubic(r[0], r[1], r[2], r[3], gy - fy);
                    } else {
                        double x = gs_pad_coord(gx, W, pad, align), y = gs_pad_coord(gy, H, pad, align);
                        if (mode == 1) {
                            v = gs_at(img, H, W, (int64_t)nearbyint(y), (int64_t)nearbyint(x));
                        } else {
                            double x0 = floor(x), y0 = floor(y), tx = x - x0, ty = y - y0;
                            int64_t ix = (int64_t)x0, iy = (int64_t)y0;
                            v = gs_at(img, H, W, iy, ix) * (1 - tx) * (1 - ty) + gs_at(img, H, W, iy, ix + 1) * tx * (1 - ty) +
                                gs_at(img, H, W, iy + 1, ix) * (1 - tx) * ty + gs_at(img, H, W, iy + 1, ix + 1) * tx * ty;
                        }
                    }
                    out[0][((b * C + c) * OH + i) * OW + j] = v;
                }
            }
    return 0;
}

const OpDesc op_GridSample = {
    .name = "GridSample",
    .min_in = 2, .max_in = 2, .in_names = gs_in,
    .min_out = 1, .max_out = 1, .out_names = gs_out,
    .attrs = gs_attrs, .n_attrs = 3,
    .infer = gs_infer, .eval = gs_eval,
};

/* ---- HannWindow / HammingWindow / BlackmanWindow --------------------------- */

enum { WIN_DTYPE, WIN_PERIODIC };
static const AttrSpec win_attrs[] = {
    {"output_datatype", ATTR_INT, "1", 0},
    {"periodic", ATTR_INT, "1", 0},
};
static const char *const win_in[] = {"size"};
static const char *const win_out[] = {"output"};

/* ONNX TensorProto.DataType codes graphc supports. */
static DType onnx_dtype(int64_t code)
{
    static const struct { int code; DType t; } codes[] = {
        {1, DT_F32}, {2, DT_U8}, {3, DT_I8}, {5, DT_I16}, {6, DT_I32},
        {7, DT_I64}, {10, DT_F16}, {11, DT_F64}, {16, DT_BF16},
    };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++)
        if (codes[i].code == code) return codes[i].t;
    return DT_UNDEF;
}

static int win_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *v = n->in[0];
    int64_t size;
    char b[SHP_BUF];
    if (v->dtype != DT_I32 && v->dtype != DT_I64)
        return diag_node_error(d, n, "input 'size' must be i32 or i64, got %s", ir_dtype_name(v->dtype));
    if (ir_numel(&v->shape) != 1)
        return diag_node_error(d, n, "input 'size' must hold one value, got shape %s", ir_shape_str(&v->shape, b, sizeof b));
    if (v->kind != VK_CONST || ir_const_ints(v, &size, 1) != 1) return diag_node_error(d, n, "input 'size' must be a constant");
    if (size < 0) return diag_node_error(d, n, "input 'size' value %lld must be >= 0", (long long)size);
    DType t = onnx_dtype(n->attrs[WIN_DTYPE].i);
    if (t == DT_UNDEF)
        return diag_node_error(d, n, "attribute 'output_datatype' %lld is not a supported numeric type", (long long)n->attrs[WIN_DTYPE].i);
    Shape s = ir_shape(1, &size);
    ir_set_out(n, 0, t, &s);
    return 0;
}

/* a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N), N = size (periodic) or
 * size - 1 (symmetric). */
static int win_eval_coeffs(const Node *n, double *out, double a0, double a1, double a2)
{
    int64_t size = n->out[0]->shape.dims[0];
    double N = n->attrs[WIN_PERIODIC].i ? (double)size : (double)(size - 1);
    const double pi = 3.14159265358979323846;
    for (int64_t i = 0; i < size; i++) {
        double r = N > 0 ? (double)i / N : 0;
        out[i] = a0 - a1 * cos(2 * pi * r) + a2 * cos(4 * pi * r);
    }
    return 0;
}

static int hann_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)in;
    (void)d;
    return win_eval_coeffs(n, out[0], 0.5, 0.5, 0);
}

static int hamming_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)in;
    (void)d;
    return win_eval_coeffs(n, out[0], 25.0 / 46.0, 21.0 / 46.0, 0);
}

static int blackman_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)in;
    (void)d;
    return win_eval_coeffs(n, out[0], 0.42, 0.5, 0.08);
}

const OpDesc op_HannWindow = {
    .name = "HannWindow",
    .min_in = 1, .max_in = 1, .in_names = win_in,
    .min_out = 1, .max_out = 1, .out_names = win_out,
    .attrs = win_attrs, .n_attrs = 2,
    .infer = win_infer, .eval = hann_eval,
};

const OpDesc op_HammingWindow = {
    .name = "HammingWindow",
    .min_in = 1, .max_in = 1, .in_names = win_in,
    .min_out = 1, .max_out = 1, .out_names = win_out,
    .attrs = win_attrs, .n_attrs = 2,
    .infer = win_infer, .eval = hamming_eval,
};

const OpDesc op_BlackmanWindow = {
    .name = "BlackmanWindow",
    .min_in = 1, .max_in = 1, .in_names = win_in,
    .min_out = 1, .max_out = 1, .out_names = win_out,
    .attrs = win_attrs, .n_attrs = 2,
    .infer = win_infer, .eval = blackman_eval,
};

