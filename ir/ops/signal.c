/* signal.c — operator descriptions of the signal family: Einsum,
 * GridSample and the window generators HannWindow, HammingWindow and
 * BlackmanWindow, DFT, STFT and MelWeightMatrix (ONNX opset-17 semantics).
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
 * The windows' size input fixes the output shape: a constant gives a static
 * shape, a runtime size a data-dependent dim (bounded by --max-dim) that the
 * C kernel sets from the value.
 *
 * DFT and STFT share one transform line (dft_line): a plain O(n^2) sum with
 * the twiddle angle reduced as (k * j) mod L so it stays exact for long
 * signals. Inputs are [.., 1] (real) or [.., 2] (complex); outputs are
 * always complex. dft_length zero-pads or truncates the signal axis;
 * onesided keeps the first L/2 + 1 bins of a real input. The inputs that fix
 * a shape (dft_length, frame_step, frame_length) must be constants.
 *
 * Einsum's gradient (einsum_grad) is an Einsum too; the other ops of the
 * family have none.
 * MelWeightMatrix takes only constants, so constant folding evaluates it
 * (its C emitter reuses the same eval when folding is off).
 */
#include "../grad.h"
#include "../op.h"
#include "signal.h"
#include "signal_attrs.h"

#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define SHP_BUF 160

/* ---- Einsum ------------------------------------------------------------- */

static const AttrSpec einsum_attrs[] = {[EINSUM_EQUATION] = {"equation", ATTR_STRING, NULL, 1}};
OP_ATTRS_CHECK(einsum_attrs, EINSUM_COUNT);
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
    const char *src = n->attrs[EINSUM_EQUATION].s;
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
            return diag_node_error(d, n, "attribute 'equation' '%s' has more terms than the %d inputs", n->attrs[EINSUM_EQUATION].s, n->n_in);
        if (parse_term(n, eq + start, i - start, &terms[nt], what, d)) return -1;
        nt++;
        start = i + 1;
    }
    if (nt != n->n_in)
        return diag_node_error(d, n, "attribute 'equation' '%s' has %d terms but the node has %d inputs", n->attrs[EINSUM_EQUATION].s, nt, n->n_in);
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

/* Operand i's gradient is the Einsum of dY (the output term) with the other
 * operands onto operand i's term; labels that only operand i has (summed
 * within it in the forward) are left out of that Einsum and broadcast back
 * with Expand. Supported without '...' and without a label repeated inside
 * one term (a diagonal); other equations report no gradient. */
static int einsum_grad(GradCtx *gc)
{
    const Node *n = gc->n;
    char eq[512], term[EINSUM_MAX_OPS + 1][IR_MAX_RANK + 1];
    size_t k = 0;
    for (const char *c = n->attrs[EINSUM_EQUATION].s; *c && k + 1 < sizeof eq; c++)
        if (*c != ' ') eq[k++] = *c;
    eq[k] = 0;
    const char *arrow = strstr(eq, "->");
    if (strchr(eq, '.') || n->n_in > EINSUM_MAX_OPS)
        return diag_node_error(gc->d, n, "op 'Einsum' has no gradient for equation '%s' ('...' is not supported)", eq);
    int count[128] = {0};
    for (int t = 0, at = 0; t < n->n_in; t++) { /* term t of the inputs */
        int len = 0;
        while (eq[at] && eq[at] != ',' && eq[at] != '-') {
            unsigned char ch = (unsigned char)eq[at++];
            for (int q = 0; q < len; q++)
                if (term[t][q] == (char)ch)
                    return diag_node_error(gc->d, n, "op 'Einsum' has no gradient for equation '%s' (label '%c' repeats in a term)",
                                           eq, ch);
            GC_ASSERT(len < IR_MAX_RANK && ch < 128);
            term[t][len++] = (char)ch;
            count[ch]++;
        }
        term[t][len] = 0;
        if (eq[at] == ',') at++;
    }
    char *out = term[EINSUM_MAX_OPS];
    if (arrow) {
        snprintf(out, IR_MAX_RANK + 1, "%s", arrow + 2);
    } else { /* numpy's implicit output: the labels seen once, in ASCII order */
        int len = 0;
        for (int ch = 0; ch < 128; ch++)
            if (count[ch] == 1) out[len++] = (char)ch;
        out[len] = 0;
    }
    Value *dy = gb_dy(gc, 0);
    for (int i = 0; i < n->n_in; i++) {
        if (!gc->need[i]) continue;
        const Value *x = n->in[i];
        char geq[512], keep[IR_MAX_RANK + 1];
        Value *in[EINSUM_MAX_OPS];
        int m = 0, nk = 0;
        size_t len = (size_t)snprintf(geq, sizeof geq, "%s", out);
        in[m++] = dy;
        for (int j = 0; j < n->n_in; j++)
            if (j != i) {
                len += (size_t)snprintf(geq + len, sizeof geq - len, ",%s", term[j]);
                in[m++] = n->in[j];
            }
        Shape ks = x->shape;
        for (int q = 0; term[i][q]; q++) {
            int elsewhere = strchr(out, term[i][q]) != NULL;
            for (int j = 0; j < n->n_in && !elsewhere; j++) elsewhere = j != i && strchr(term[j], term[i][q]);
            if (elsewhere) keep[nk++] = term[i][q];
            else ks.dims[q] = 1;
        }
        keep[nk] = 0;
        snprintf(geq + len, sizeof geq - len, "->%s", keep);
        Value *g = gb_node(gc, OP_Einsum, gb_fmt(gc, "equation=\"%s\"", geq), m, in, 1, NULL);
        gb_set(gc, i, gb_expand(gc, gb_reshape(gc, g, &ks), &x->shape));
    }
    return gb_done(gc);
}

const OpDesc op_Einsum = {
    .name = "Einsum",
    .min_in = 1, .max_in = -1, .in_names = einsum_in,
    .min_out = 1, .max_out = 1, .out_names = einsum_out,
    OP_ATTRS(einsum_attrs),
    .infer = einsum_infer, .eval = einsum_eval, .gradient = einsum_grad, .backward_reads = ir_bw_inputs,
};

/* ---- GridSample ---------------------------------------------------------- */

static const AttrSpec gs_attrs[] = {
    [GRID_SAMPLE_ALIGN_CORNERS] = {"align_corners", ATTR_INT, "0", 0},
    [GRID_SAMPLE_MODE] = {"mode", ATTR_STRING, "bilinear", 0},
    [GRID_SAMPLE_PADDING_MODE] = {"padding_mode", ATTR_STRING, "zeros", 0},
};
OP_ATTRS_CHECK(gs_attrs, GRID_SAMPLE_COUNT);
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
    if (gs_mode(n->attrs[GRID_SAMPLE_MODE].s) < 0)
        return diag_node_error(d, n, "attribute 'mode' must be bilinear, nearest or bicubic, got '%s'", n->attrs[GRID_SAMPLE_MODE].s);
    if (gs_pad(n->attrs[GRID_SAMPLE_PADDING_MODE].s) < 0)
        return diag_node_error(d, n, "attribute 'padding_mode' must be zeros, border or reflection, got '%s'", n->attrs[GRID_SAMPLE_PADDING_MODE].s);
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
    int even = fmod(floor(v / span), 2) == 0; /* no integer cast: v may be huge */
    return even ? extra + mn : span - extra + mn;
}

/* A sample index from a coordinate: huge, infinite or NaN coordinates (the
 * grid is data) become an index outside every image rather than an
 * out-of-range conversion. */
static int64_t gs_idx(double v)
{
    if (!(v > -2)) return -2;
    return v < 0x1p62 ? (int64_t)v : (int64_t)0x1p62;
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
    int mode = gs_mode(n->attrs[GRID_SAMPLE_MODE].s), pad = gs_pad(n->attrs[GRID_SAMPLE_PADDING_MODE].s);
    int align = n->attrs[GRID_SAMPLE_ALIGN_CORNERS].i != 0;
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
                                q[s] = gs_at(img, H, W, gs_idx(floor(yy)), gs_idx(floor(xx)));
                            }
                            r[p] = gs_cubic(q[0], q[1], q[2], q[3], gx - fx);
                        }
                        v = gs_cubic(r[0], r[1], r[2], r[3], gy - fy);
                    } else {
                        double x = gs_pad_coord(gx, W, pad, align), y = gs_pad_coord(gy, H, pad, align);
                        if (mode == 1) {
                            v = gs_at(img, H, W, gs_idx(nearbyint(y)), gs_idx(nearbyint(x)));
                        } else {
                            double x0 = floor(x), y0 = floor(y), tx = x - x0, ty = y - y0;
                            int64_t ix = gs_idx(x0), iy = gs_idx(y0);
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
    OP_ATTRS(gs_attrs),
    .infer = gs_infer, .eval = gs_eval,
};

/* ---- HannWindow / HammingWindow / BlackmanWindow --------------------------- */

static const AttrSpec win_attrs[] = {
    [WINDOW_OUTPUT_DATATYPE] = {"output_datatype", ATTR_INT, "1", 0},
    [WINDOW_PERIODIC] = {"periodic", ATTR_INT, "1", 0},
};
OP_ATTRS_CHECK(win_attrs, WINDOW_COUNT);
static const char *const win_in[] = {"size"};
static const char *const win_out[] = {"output"};

/* Output dtype of the window and mel ops from an ONNX code: any numeric
 * dtype (bool is not numeric); DT_UNDEF otherwise. */
static DType onnx_dtype(int64_t code)
{
    DType t;
    if (ir_dtype_from_onnx(code, &t) || t == DT_BOOL) return DT_UNDEF;
    return t;
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
    DType t = onnx_dtype(n->attrs[WINDOW_OUTPUT_DATATYPE].i);
    if (t == DT_UNDEF)
        return diag_node_error(d, n, "attribute 'output_datatype' %lld is not a supported numeric type", (long long)n->attrs[WINDOW_OUTPUT_DATATYPE].i);
    if (v->kind != VK_CONST) {
        /* the size is read at run time: a data-dependent dim bounded by --max-dim */
        size = IR_DIM_UNBOUNDED;
        Shape s = ir_shape(1, &size);
        s.sym[0] = IR_SYM_NEW;
        ir_set_out(n, 0, t, &s);
        return 0;
    }
    if (ir_const_ints(v, &size, 1) != 1) return diag_node_error(d, n, "input 'size' must be a constant");
    if (size < 0) return diag_node_error(d, n, "input 'size' value %lld must be >= 0", (long long)size);
    Shape s = ir_shape(1, &size);
    ir_set_out(n, 0, t, &s);
    return 0;
}

/* a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N), N = size (periodic) or
 * size - 1 (symmetric). */
static int win_eval_coeffs(const Node *n, double *out, double a0, double a1, double a2)
{
    int64_t size = n->out[0]->shape.dims[0];
    double N = n->attrs[WINDOW_PERIODIC].i ? (double)size : (double)(size - 1);
    const double pi = 3.14159265358979323846;
    for (int64_t i = 0; i < size; i++) {
        double r = N > 0 ? (double)i / N : 0;
        out[i] = a0 - a1 * cos(2 * pi * r) + a2 * cos(4 * pi * r);
    }
    return 0;
}

void signal_window_coeffs(const Node *n, double a[3])
{
    a[0] = n->op == OP_HannWindow ? 0.5 : n->op == OP_HammingWindow ? 25.0 / 46.0 : 0.42;
    a[1] = n->op == OP_HammingWindow ? 21.0 / 46.0 : 0.5;
    a[2] = n->op == OP_BlackmanWindow ? 0.08 : 0.0;
}

static int window_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)in;
    (void)d;
    double a[3];
    signal_window_coeffs(n, a);
    return win_eval_coeffs(n, out[0], a[0], a[1], a[2]);
}

const OpDesc op_HannWindow = {
    .name = "HannWindow",
    .min_in = 1, .max_in = 1, .in_names = win_in,
    .min_out = 1, .max_out = 1, .out_names = win_out,
    OP_ATTRS(win_attrs),
    .infer = win_infer, .eval = window_eval,
    .shape_inputs = 1u << 0,
};

const OpDesc op_HammingWindow = {
    .name = "HammingWindow",
    .min_in = 1, .max_in = 1, .in_names = win_in,
    .min_out = 1, .max_out = 1, .out_names = win_out,
    OP_ATTRS(win_attrs),
    .infer = win_infer, .eval = window_eval,
    .shape_inputs = 1u << 0,
};

const OpDesc op_BlackmanWindow = {
    .name = "BlackmanWindow",
    .min_in = 1, .max_in = 1, .in_names = win_in,
    .min_out = 1, .max_out = 1, .out_names = win_out,
    OP_ATTRS(win_attrs),
    .infer = win_infer, .eval = window_eval,
    .shape_inputs = 1u << 0,
};


/* ---- DFT / STFT ------------------------------------------------------------ */

/* Reads a one-value integer input that must be a constant (it fixes a
 * shape); names it in every error. */
static int const_scalar(const Node *n, int i, const char *name, int64_t *v, Diag *d)
{
    const Value *x = n->in[i];
    char b[SHP_BUF];
    if (x->dtype != DT_I32 && x->dtype != DT_I64)
        return diag_node_error(d, n, "input '%s' must be i32 or i64, got %s", name, ir_dtype_name(x->dtype));
    if (ir_numel(&x->shape) != 1)
        return diag_node_error(d, n, "input '%s' must hold one value, got shape %s", name, ir_shape_str(&x->shape, b, sizeof b));
    if (x->kind != VK_CONST || ir_const_ints(x, v, 1) != 1) return diag_node_error(d, n, "input '%s' must be a constant", name);
    return 0;
}

/* One transform line: y[k] = scale * sum_{j < n_in} w[j] x[j] e^{sign 2 pi i k j / L}
 * for k < K. x has `xc` (1 or 2) components per element, elements xs apart;
 * y elements (re, im) are ys apart. w may be NULL. */
static void dft_line(const double *x, int64_t xs, int xc, int64_t n_in, const double *w, int64_t L, int64_t K, int inverse,
                     double *y, int64_t ys)
{
    const double two_pi = 6.283185307179586476925;
    double sign = inverse ? 1.0 : -1.0, scale = inverse ? 1.0 / (double)L : 1.0;
    if (n_in > L) n_in = L;
    for (int64_t k = 0; k < K; k++) {
        double re = 0, im = 0;
        for (int64_t j = 0; j < n_in; j++) {
            double a = two_pi * (double)((k * j) % L) / (double)L, c = cos(a), s = sign * sin(a);
            double xr = x[j * xs], xi = xc == 2 ? x[j * xs + 1] : 0, wj = w ? w[j] : 1.0;
            re += wj * (xr * c - xi * s);
            im += wj * (xr * s + xi * c);
        }
        y[k * ys] = re * scale;
        y[k * ys + 1] = im * scale;
    }
}

static const AttrSpec dft_attrs[] = {
    [DFT_AXIS] = {"axis", ATTR_INT, "1", 0},
    [DFT_INVERSE] = {"inverse", ATTR_INT, "0", 0},
    [DFT_ONESIDED] = {"onesided", ATTR_INT, "0", 0},
};
OP_ATTRS_CHECK(dft_attrs, DFT_COUNT);
static const char *const dft_in[] = {"input", "dft_length"};
static const char *const dft_out[] = {"output"};

static int signal_dft_axis(const Node *n)
{
    int64_t a = n->attrs[DFT_AXIS].i;
    return (int)(a < 0 ? a + n->in[0]->shape.rank : a);
}

static int dft_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    char b[SHP_BUF];
    int r = x->shape.rank;
    if (!ir_dtype_is_float(x->dtype))
        return diag_node_error(d, n, "input 'input' must be a float tensor, got %s", ir_dtype_name(x->dtype));
    if (r < 3 || (x->shape.dims[r - 1] != 1 && x->shape.dims[r - 1] != 2))
        return diag_node_error(d, n, "input 'input' shape %s must be [batch, signal..., 1 or 2] with rank >= 3",
                               ir_shape_str(&x->shape, b, sizeof b));
    int axis = signal_dft_axis(n);
    if (axis < 1 || axis > r - 2)
        return diag_node_error(d, n, "attribute 'axis' %lld is out of range [1, %d] for input shape %s", (long long)n->attrs[DFT_AXIS].i,
                               r - 2, ir_shape_str(&x->shape, b, sizeof b));
    int64_t L = x->shape.dims[axis];
    if (ir_has_input(n, 1)) {
        if (const_scalar(n, 1, "dft_length", &L, d)) return -1;
        if (L < 1) return diag_node_error(d, n, "input 'dft_length' value %lld must be >= 1", (long long)L);
    }
    if (L < 1) return diag_node_error(d, n, "the signal axis %d has size 0", axis);
    int onesided = n->attrs[DFT_ONESIDED].i != 0;
    if (onesided && x->shape.dims[r - 1] == 2)
        return diag_node_error(d, n, "attribute 'onesided' = 1 needs a real input (last dim 1), got shape %s",
                               ir_shape_str(&x->shape, b, sizeof b));
    if (onesided && n->attrs[DFT_INVERSE].i)
        return diag_node_error(d, n, "attributes 'onesided' = 1 and 'inverse' = 1 cannot be combined");
    Shape s = x->shape;
    s.dims[axis] = onesided ? L / 2 + 1 : L;
    s.dims[r - 1] = 2;
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

void signal_dft_geom(const Node *n, DftGeom *g)
{
    const Shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
    int axis = signal_dft_axis(n), r = xs->rank;
    g->outer = 1;
    g->inner = 1;
    for (int i = 0; i < axis; i++) g->outer *= xs->dims[i];
    for (int i = axis + 1; i < r - 1; i++) g->inner *= xs->dims[i];
    g->n_in = xs->dims[axis];
    g->comps = (int)xs->dims[r - 1];
    g->K = ys->dims[axis];
    g->inverse = n->attrs[DFT_INVERSE].i != 0;
    g->L = g->n_in;
    if (ir_has_input(n, 1)) ir_const_ints(n->in[1], &g->L, 1);
}

static int dft_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    DftGeom g;
    signal_dft_geom(n, &g);
    if (ir_has_input(n, 1) && in[1]) g.L = (int64_t)in[1][0];
    for (int64_t o = 0; o < g.outer; o++)
        for (int64_t i = 0; i < g.inner; i++)
            dft_line(in[0] + (o * g.n_in * g.inner + i) * g.comps, g.inner * g.comps, g.comps, g.n_in, NULL, g.L, g.K, g.inverse,
                     out[0] + (o * g.K * g.inner + i) * 2, g.inner * 2);
    return 0;
}

const OpDesc op_DFT = {
    .name = "DFT",
    .min_in = 1, .max_in = 2, .in_names = dft_in,
    .min_out = 1, .max_out = 1, .out_names = dft_out,
    OP_ATTRS(dft_attrs),
    .infer = dft_infer, .eval = dft_eval,
};

static const AttrSpec stft_attrs[] = {[STFT_ONESIDED] = {"onesided", ATTR_INT, "1", 0}};
OP_ATTRS_CHECK(stft_attrs, STFT_COUNT);
static const char *const stft_in[] = {"signal", "frame_step", "window", "frame_length"};
static const char *const stft_out[] = {"output"};

/* Input i is an integer scalar whose value arrives at run time. */
static int runtime_scalar(const Node *n, int i, const char *name, Diag *d)
{
    const Value *x = n->in[i];
    char b[SHP_BUF];
    if (x->dtype != DT_I32 && x->dtype != DT_I64)
        return diag_node_error(d, n, "input '%s' must be i32 or i64, got %s", name, ir_dtype_name(x->dtype));
    if (ir_numel(&x->shape) != 1 || ir_shape_has_sym(&x->shape))
        return diag_node_error(d, n, "input '%s' must hold one value, got shape %s", name, ir_shape_str(&x->shape, b, sizeof b));
    return 0;
}

static int stft_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    const Value *x = n->in[0];
    char b[SHP_BUF], b2[SHP_BUF];
    if (!ir_dtype_is_float(x->dtype))
        return diag_node_error(d, n, "input 'signal' must be a float tensor, got %s", ir_dtype_name(x->dtype));
    if (x->shape.rank != 3 || (x->shape.dims[2] != 1 && x->shape.dims[2] != 2))
        return diag_node_error(d, n, "input 'signal' shape %s must be [batch, signal_length, 1 or 2]", ir_shape_str(&x->shape, b, sizeof b));
    int64_t step = 1, L = -1;
    /* runtime shapes: frame_step or frame_length may arrive at run time (the
     * frame count, and the bin count for a runtime length, are then
     * data-dependent, at most the signal length) */
    int rt_step = n->in[1]->kind != VK_CONST, rt_len = ir_has_input(n, 3) && n->in[3]->kind != VK_CONST;
    if (rt_step ? runtime_scalar(n, 1, "frame_step", d) : const_scalar(n, 1, "frame_step", &step, d)) return -1;
    if (step < 1) return diag_node_error(d, n, "input 'frame_step' value %lld must be >= 1", (long long)step);
    if (ir_has_input(n, 3)) {
        if (rt_len ? runtime_scalar(n, 3, "frame_length", d) : const_scalar(n, 3, "frame_length", &L, d)) return -1;
        if (rt_len) L = -1;
        else if (L < 1) return diag_node_error(d, n, "input 'frame_length' value %lld must be >= 1", (long long)L);
    }
    if (ir_has_input(n, 2)) {
        const Value *w = n->in[2];
        if (w->dtype != x->dtype)
            return diag_node_error(d, n, "input 'window' has dtype %s but input 'signal' has %s", ir_dtype_name(w->dtype),
                                   ir_dtype_name(x->dtype));
        if (w->shape.rank != 1 || (L >= 0 && w->shape.dims[0] != L))
            return diag_node_error(d, n, "input 'window' shape %s must be [frame_length]%s", ir_shape_str(&w->shape, b, sizeof b),
                                   L >= 0 ? " with the 'frame_length' value" : "");
        L = w->shape.dims[0];
        if (L < 1) return diag_node_error(d, n, "input 'window' is empty");
    }
    if (L < 0 && !rt_len) return diag_node_error(d, n, "needs input 'window' or input 'frame_length' to fix the frame length");
    if (L > x->shape.dims[1])
        return diag_node_error(d, n, "frame length %lld exceeds the signal length of input 'signal' shape %s", (long long)L,
                               ir_shape_str(&x->shape, b2, sizeof b2));
    int onesided = n->attrs[STFT_ONESIDED].i != 0;
    if (onesided && x->shape.dims[2] == 2)
        return diag_node_error(d, n, "attribute 'onesided' = 1 needs a real signal (last dim 1), got shape %s",
                               ir_shape_str(&x->shape, b, sizeof b));
    if (L < 0) L = 1; /* a runtime length: the bounds below are the shortest frame's */
    int64_t len = x->shape.dims[1], dims[4] = {x->shape.dims[0], (len - L) / step + 1, onesided ? L / 2 + 1 : L, 2};
    Shape s = ir_shape(4, dims);
    if (rt_step || rt_len) s.sym[1] = IR_SYM_NEW;
    if (rt_len && !ir_has_input(n, 2)) {
        s.sym[2] = IR_SYM_NEW;
        s.dims[2] = onesided ? len / 2 + 1 : len;
    }
    ir_set_out(n, 0, x->dtype, &s);
    return 0;
}

void signal_stft_geom(const Node *n, StftGeom *g)
{
    const Shape *xs = &n->in[0]->shape, *ys = &n->out[0]->shape;
    g->batch = xs->dims[0];
    g->sig_len = xs->dims[1];
    g->comps = (int)xs->dims[2];
    g->frames = ys->dims[1];
    g->K = ys->dims[2];
    g->step = 1;
    ir_const_ints(n->in[1], &g->step, 1);
    if (ir_has_input(n, 2)) g->L = n->in[2]->shape.dims[0];
    else ir_const_ints(n->in[3], &g->L, 1);
}

static int stft_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    StftGeom g;
    signal_stft_geom(n, &g);
    g.step = (int64_t)in[1][0];
    const double *w = ir_has_input(n, 2) ? in[2] : NULL;
    for (int64_t b = 0; b < g.batch; b++)
        for (int64_t f = 0; f < g.frames; f++)
            dft_line(in[0] + (b * g.sig_len + f * g.step) * g.comps, g.comps, g.comps, g.L, w, g.L, g.K, 0,
                     out[0] + (b * g.frames + f) * g.K * 2, 2);
    return 0;
}

const OpDesc op_STFT = {
    .name = "STFT",
    .min_in = 2, .max_in = 4, .in_names = stft_in,
    .min_out = 1, .max_out = 1, .out_names = stft_out,
    OP_ATTRS(stft_attrs),
    .infer = stft_infer, .eval = stft_eval, .shape_inputs = 1u << 1 | 1u << 3,
};

/* ---- MelWeightMatrix --------------------------------------------------------- */

static const AttrSpec mel_attrs[] = {[MEL_OUTPUT_DATATYPE] = {"output_datatype", ATTR_INT, "1", 0}};
OP_ATTRS_CHECK(mel_attrs, MEL_COUNT);
static const char *const mel_in[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
static const char *const mel_out[] = {"output"};

static int mel_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    int64_t bins, len, rate;
    char b[SHP_BUF];
    if (const_scalar(n, 0, "num_mel_bins", &bins, d) || const_scalar(n, 1, "dft_length", &len, d) ||
        const_scalar(n, 2, "sample_rate", &rate, d))
        return -1;
    if (bins < 1) return diag_node_error(d, n, "input 'num_mel_bins' value %lld must be >= 1", (long long)bins);
    if (len < 1) return diag_node_error(d, n, "input 'dft_length' value %lld must be >= 1", (long long)len);
    if (rate < 1) return diag_node_error(d, n, "input 'sample_rate' value %lld must be >= 1", (long long)rate);
    for (int i = 3; i < 5; i++) {
        const Value *v = n->in[i];
        if (!ir_dtype_is_float(v->dtype))
            return diag_node_error(d, n, "input '%s' must be a float scalar, got %s", mel_in[i], ir_dtype_name(v->dtype));
        if (ir_numel(&v->shape) != 1)
            return diag_node_error(d, n, "input '%s' must hold one value, got shape %s", mel_in[i], ir_shape_str(&v->shape, b, sizeof b));
        if (v->kind != VK_CONST) return diag_node_error(d, n, "input '%s' must be a constant", mel_in[i]);
    }
    DType t = onnx_dtype(n->attrs[MEL_OUTPUT_DATATYPE].i);
    if (t == DT_UNDEF)
        return diag_node_error(d, n, "attribute 'output_datatype' %lld is not a supported numeric type", (long long)n->attrs[MEL_OUTPUT_DATATYPE].i);
    int64_t dims[2] = {len / 2 + 1, bins};
    Shape s = ir_shape(2, dims);
    ir_set_out(n, 0, t, &s);
    return 0;
}

static double hz_to_mel(double hz) { return 2595.0 * log10(1.0 + hz / 700.0); }

/* Triangular filters between num_mel_bins + 2 points spaced evenly in mel,
 * snapped to the FFT bins floor((dft_length + 1) * hz / sample_rate). */
static int mel_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    int64_t bins = (int64_t)in[0][0], len = (int64_t)in[1][0], nspec = len / 2 + 1;
    double rate = in[2][0], lo = in[3][0], hi = in[4][0];
    if (!(lo >= 0 && lo < hi))
        return diag_node_error(d, n, "needs 0 <= lower_edge_hertz < upper_edge_hertz, got %g and %g", lo, hi);
    double mlo = hz_to_mel(lo), step = (hz_to_mel(hi) - mlo) / (double)(bins + 2);
    int64_t fb[IR_MAX_RANK + 2], *f = fb;
    int64_t *heap = NULL;
    if (bins + 2 > (int64_t)(sizeof fb / sizeof fb[0])) {
        heap = malloc((size_t)(bins + 2) * sizeof *heap);
        if (!heap) return diag_node_error(d, n, "out of memory");
        f = heap;
    }
    for (int64_t i = 0; i < bins + 2; i++) {
        double hz = 700.0 * (pow(10.0, ((double)i * step + mlo) / 2595.0) - 1.0);
        f[i] = (int64_t)floor((double)(len + 1) * hz / rate);
    }
    double *y = out[0];
    for (int64_t i = 0; i < nspec * bins; i++) y[i] = 0;
    for (int64_t m = 0; m < bins; m++) {
        int64_t l = f[m], c = f[m + 1], r = f[m + 2];
        if (c == l) {
            if (c >= 0 && c < nspec) y[c * bins + m] = 1;
        } else {
            for (int64_t j = l; j <= c; j++)
                if (j >= 0 && j < nspec) y[j * bins + m] = (double)(j - l) / (double)(c - l);
        }
        for (int64_t j = c; j < r; j++)
            if (j >= 0 && j < nspec) y[j * bins + m] = (double)(r - j) / (double)(r - c);
    }
    free(heap);
    return 0;
}

const OpDesc op_MelWeightMatrix = {
    .name = "MelWeightMatrix",
    .min_in = 5, .max_in = 5, .in_names = mel_in,
    .min_out = 1, .max_out = 1, .out_names = mel_out,
    OP_ATTRS(mel_attrs),
    .infer = mel_infer, .eval = mel_eval,
};
