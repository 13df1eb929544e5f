/* emit_vision.c — C emitters for the vision family: ConvTranspose,
 * GlobalMaxPool, InstanceNormalization, LRN, DepthToSpace, SpaceToDepth,
 * Resize, Upsample, Hardmax, Dropout, MeanVarianceNormalization and RoiAlign.
 *
 * Each op becomes one call of a runtime kernel (runtime/gcrt_vision.h) with
 * every size a literal, or a memcpy/memset (Dropout). Geometry comes from
 * ir/ops/vision.c through ir/ops/geometry.h, so the generated code and the
 * reference read the same numbers: ConvTranspose's resolved pads, and
 * Resize's per-axis tap tables (input index and weight of every tap of every
 * output index), which are written as static const arrays next to the call.
 * Numeric kernels exist for f32 and f64; other dtypes are refused with a
 * diagnostic. DepthToSpace, SpaceToDepth and Dropout move elements of any
 * dtype.
 */
#include "cgen.h"
#include "emit_common.h"
#include "emit_dynfill.h"
#include "../../ir/ops/vision_attrs.h"
#include "../../ir/ops/geometry.h"

#include <stdlib.h>
#include <string.h>

/* Writes "(const int64_t[n]){v0, ...}". */
static void w_ints(Writer *w, const int64_t *v, int n)
{
    w_printf(w, "(const int64_t[%d]){", n);
    for (int i = 0; i < n; i++) w_printf(w, "%s%lld", i ? ", " : "", (long long)v[i]);
    w_puts(w, "}");
}

static int emit_convtranspose(Cgen *c, const Node *n, Diag *d)
{
    Writer *w = cgen_w(c);
    const Value *X = n->in[0], *W = n->in[1], *B = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    int64_t k[IR_MAX_RANK], s[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], in[IR_MAX_RANK], out[IR_MAX_RANK];
    int sr = ir_convtranspose_geometry(n, k, s, dl, pb);
    GC_ASSERT(sr >= 1);
    if (sr > 3)
        return diag_node_error(d, n, "the C backend implements ConvTranspose for 1 to 3 spatial dims, got %d", sr);
    for (int i = 0; i < sr; i++) {
        in[i] = X->shape.dims[2 + i];
        out[i] = Y->shape.dims[2 + i];
    }
    if (ir_numel(&Y->shape) == 0) return 0;
    w_printf(w, "gcrt_convtranspose_%s(%lld, %lld, %lld, %lld,\n", sfx, (long long)X->shape.dims[0],
             (long long)X->shape.dims[1], (long long)Y->shape.dims[1], (long long)n->attrs[CONV_TRANSPOSE_GROUP].i);
    w->indent++;
    emit_dims3(w, in, sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, k, sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, out, sr, 1);
    w_puts(w, ",\n");
    emit_dims3(w, s, sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, dl, sr, 1);
    w_puts(w, ", ");
    emit_dims3(w, pb, sr, 0);
    w_printf(w, ",\n%s, %s, %s, %s);\n", cgen_ptr(c, X), cgen_ptr(c, W), B ? cgen_ptr(c, B) : "0",
             cgen_ptr(c, Y));
    w->indent--;
    return 0;
}

static int emit_globalmaxpool(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    const Shape *xs = &X->shape;
    int64_t NC = xs->dims[0] * xs->dims[1], S = emit_dims_prod(xs, 2, xs->rank);
    if (NC == 0) return 0;
    if (S == 0) return diag_node_error(d, n, "input 'X' has empty spatial dims: the maximum is undefined");
    w_line(cgen_w(c), "gcrt_global_maxpool_%s(%lld, %lld, %s, %s);", sfx, (long long)NC, (long long)S,
           cgen_ptr(c, X), cgen_ptr(c, Y));
    return 0;
}

static int emit_instancenorm(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    const Shape *xs = &X->shape;
    char eps[48];
    w_line(cgen_w(c), "gcrt_instancenorm_%s(%lld, %lld, %lld, %s, %s, %s, %s, %s);", sfx, (long long)xs->dims[0],
           (long long)xs->dims[1], (long long)emit_dims_prod(xs, 2, xs->rank), cgen_ptr(c, X), cgen_ptr(c, n->in[1]),
           cgen_ptr(c, n->in[2]), emit_float_lit(eps, sizeof eps, n->attrs[INSTANCE_NORM_EPSILON].f, Y->dtype),
           cgen_ptr(c, Y));
    return 0;
}

static int emit_lrn(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    const Shape *xs = &X->shape;
    char a[48], b[48], bi[48];
    w_line(cgen_w(c), "gcrt_lrn_%s(%lld, %lld, %lld, %lld, %s, %s, %s, %s, %s);", sfx, (long long)xs->dims[0],
           (long long)xs->dims[1], (long long)emit_dims_prod(xs, 2, xs->rank), (long long)n->attrs[LRN_SIZE].i,
           emit_float_lit(a, sizeof a, n->attrs[LRN_ALPHA].f, DT_F64),
           emit_float_lit(b, sizeof b, n->attrs[LRN_BETA].f, DT_F64),
           emit_float_lit(bi, sizeof bi, n->attrs[LRN_BIAS].f, DT_F64), cgen_ptr(c, X), cgen_ptr(c, Y));
    return 0;
}

/* DepthToSpace (d2s) or SpaceToDepth: any dtype, moved by element size. */
static int emit_block(Cgen *c, const Node *n, int d2s)
{
    const Value *X = n->in[0], *Y = n->out[0];
    if (ir_numel(&Y->shape) == 0) return 0;
    const int64_t *xd = X->shape.dims;
    long long b = (long long)n->attrs[d2s ? DEPTH_TO_SPACE_BLOCKSIZE : SPACE_TO_DEPTH_BLOCKSIZE].i;
    Writer *w = cgen_w(c);
    if (d2s)
        w_line(w, "gcrt_depth_to_space(%zu, %lld, %lld, %lld, %lld, %lld, %d, %s, %s);", ir_dtype_size(X->dtype),
               (long long)xd[0], (long long)xd[1], (long long)xd[2], (long long)xd[3], b,
               strcmp(n->attrs[DEPTH_TO_SPACE_MODE].s, "CRD") == 0, cgen_ptr(c, X), cgen_ptr(c, Y));
    else
        w_line(w, "gcrt_space_to_depth(%zu, %lld, %lld, %lld, %lld, %lld, %s, %s);", ir_dtype_size(X->dtype),
               (long long)xd[0], (long long)xd[1], (long long)xd[2], (long long)xd[3], b, cgen_ptr(c, X),
               cgen_ptr(c, Y));
    return 0;
}

static int emit_d2s(Cgen *c, const Node *n, Diag *d) { (void)d; return emit_block(c, n, 1); }
static int emit_s2d(Cgen *c, const Node *n, Diag *d) { (void)d; return emit_block(c, n, 0); }

/* Resize and Upsample: per-axis tap tables compacted to K[a] taps per output
 * index, as static const arrays, then one gcrt_resize call. */
static int emit_resize(Cgen *c, const Node *n, Diag *d)
{
    if (emit_dyn_resize_needed(n)) return emit_dyn_resize(c, n, d);
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    int r = X->shape.rank;
    int64_t K[IR_MAX_RANK] = {0}, total = 0;
    int64_t *idx[IR_MAX_RANK] = {0};
    double *wt[IR_MAX_RANK] = {0};
    for (int a = 0; a < r; a++) {
        int64_t o = Y->shape.dims[a];
        idx[a] = malloc(sizeof(int64_t) * (size_t)(4 * o));
        wt[a] = malloc(sizeof(double) * (size_t)(4 * o));
        GC_ASSERT(idx[a] && wt[a]);
        int k = ir_resize_axis_taps(n, a, idx[a], wt[a]);
        GC_ASSERT(k >= 1);
        K[a] = k;
        total += o * k;
    }
    Writer *w = cgen_w(c);
    const char *ti = cgen_tmp(c, "resize_idx"), *tw = cgen_tmp(c, "resize_w");
    char buf[48];
    w_printf(w, "static const int64_t %s[%lld] = {", ti, (long long)total);
    int64_t col = 0;
    for (int a = 0; a < r; a++)
        for (int64_t o = 0; o < Y->shape.dims[a]; o++)
            for (int j = 0; j < K[a]; j++, col++)
                w_printf(w, "%s%lld", col == 0 ? "" : (col % 16 == 0 ? ",\n    " : ", "), (long long)idx[a][4 * o + j]);
    w_puts(w, "};\n");
    w_printf(w, "static const %s %s[%lld] = {", cgen_ctype(Y->dtype), tw, (long long)total);
    col = 0;
    for (int a = 0; a < r; a++)
        for (int64_t o = 0; o < Y->shape.dims[a]; o++)
            for (int j = 0; j < K[a]; j++, col++)
                w_printf(w, "%s%s", col == 0 ? "" : (col % 8 == 0 ? ",\n    " : ", "),
                         emit_float_lit(buf, sizeof buf, wt[a][4 * o + j], Y->dtype));
    w_puts(w, "};\n");
    w_printf(w, "gcrt_resize_%s(%d, ", sfx, r);
    w_ints(w, X->shape.dims, r);
    w_puts(w, ", ");
    w_ints(w, Y->shape.dims, r);
    w_puts(w, ", ");
    w_ints(w, K, r);
    w_printf(w, ",\n    %s, %s, %s, %s, %s);\n", ti, tw,
             emit_float_lit(buf, sizeof buf, ir_resize_extrapolation(n), Y->dtype), cgen_ptr(c, X), cgen_ptr(c, Y));
    for (int a = 0; a < r; a++) {
        free(idx[a]);
        free(wt[a]);
    }
    return 0;
}

static int emit_hardmax(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    int64_t outer, len, inner;
    GC_ASSERT(ir_hardmax_split(n, &outer, &len, &inner) == 0);
    w_line(cgen_w(c), "gcrt_hardmax_%s(%lld, %lld, %lld, %s, %s);", sfx, (long long)outer, (long long)len,
           (long long)inner, cgen_ptr(c, X), cgen_ptr(c, Y));
    return 0;
}

/* Inference Dropout: output = data (skipped when planned in place), mask =
 * all true. */
static int emit_dropout(Cgen *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Y = n->out[0];
    int64_t cnt = ir_numel(&Y->shape);
    if (cnt == 0) return 0;
    Writer *w = cgen_w(c);
    const char *px = cgen_ptr(c, X), *py = cgen_ptr(c, Y);
    w_line(w, "if ((const void *)%s != (const void *)%s) memcpy(%s, %s, %lld);", py, px, py, px,
           (long long)(cnt * (int64_t)ir_dtype_size(X->dtype)));
    if (n->n_out > 1 && n->out[1]) w_line(w, "memset(%s, 1, %lld);", cgen_ptr(c, n->out[1]), (long long)cnt);
    return 0;
}

static int emit_mvn(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    int mask[IR_MAX_RANK];
    GC_ASSERT(ir_mvn_axes(n, mask, NULL) == 0);
    int r = X->shape.rank;
    Writer *w = cgen_w(c);
    if (r == 0) { /* a scalar normalizes to 0 */
        w_line(w, "%s[0] = 0;", cgen_ptr(c, Y));
        return 0;
    }
    w_printf(w, "gcrt_mvn_%s(%d, ", sfx, r);
    w_ints(w, X->shape.dims, r);
    w_printf(w, ", (const int[%d]){", r);
    for (int a = 0; a < r; a++) w_printf(w, "%s%d", a ? ", " : "", mask[a]);
    w_printf(w, "}, %s, %s);\n", cgen_ptr(c, X), cgen_ptr(c, Y));
    return 0;
}

static int emit_roialign(Cgen *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = emit_kernel_suffix(n, Y->dtype, d);
    if (!sfx) return -1;
    if (ir_numel(&Y->shape) == 0) return 0;
    const int64_t *yd = Y->shape.dims;
    /* runtime extents (X's dims, the roi count) from the shape table */
    char scale[48], xd[4][64], r[64], r2[64];
    for (int k = 0; k < 4; k++) cgen_dim_str(&X->shape, k, xd[k], sizeof xd[k]);
    cgen_dim_str(&n->in[1]->shape, 0, r, sizeof r);
    cgen_dim_str(&n->in[2]->shape, 0, r2, sizeof r2);
    if (strcmp(r, r2) != 0) /* two runtime counts that only the run can compare (vision.c, roi_infer_sym) */
        w_line(cgen_w(c), "if (%s != %s) return %s;", r, r2, cgen_err_shape(c));
    w_line(cgen_w(c), "gcrt_roialign_%s(%s, %s, %s, %s, %s, %lld, %lld, %lld, %s, %d, %d, %s, %s, %s, %s);", sfx,
           xd[0], xd[1], xd[2], xd[3], r, (long long)yd[2],
           (long long)yd[3], (long long)n->attrs[ROI_ALIGN_SAMPLING_RATIO].i,
           emit_float_lit(scale, sizeof scale, n->attrs[ROI_ALIGN_SPATIAL_SCALE].f, DT_F64),
           strcmp(n->attrs[ROI_ALIGN_COORDINATE_TRANSFORMATION_MODE].s, "half_pixel") == 0,
           strcmp(n->attrs[ROI_ALIGN_MODE].s, "max") == 0, cgen_ptr(c, X), cgen_ptr(c, n->in[1]), cgen_ptr(c, n->in[2]),
           cgen_ptr(c, Y));
    return 0;
}

const CgenEntry cgen_vision_entries[] = {
    {OP_ConvTranspose, emit_convtranspose, CGEN_RT_vision, NULL, 0},
    {OP_GlobalMaxPool, emit_globalmaxpool, CGEN_RT_vision, NULL, 0},
    {OP_InstanceNormalization, emit_instancenorm, CGEN_RT_vision, NULL, 0},
    {OP_LRN, emit_lrn, CGEN_RT_vision, NULL, 0},
    {OP_DepthToSpace, emit_d2s, CGEN_RT_vision, NULL, 0},
    {OP_SpaceToDepth, emit_s2d, CGEN_RT_vision, NULL, 0},
    {OP_Resize, emit_resize, CGEN_RT_vision, emit_dyn_resize_workspace, 1},
    {OP_Upsample, emit_resize, CGEN_RT_vision, emit_dyn_resize_workspace, 1},
    {OP_Hardmax, emit_hardmax, CGEN_RT_vision, NULL, 0},
    {OP_Dropout, emit_dropout, 0, NULL, 0},
    {OP_MeanVarianceNormalization, emit_mvn, CGEN_RT_vision, NULL, 0},
    {OP_RoiAlign, emit_roialign, CGEN_RT_vision, NULL, 1},
    {-1, NULL, 0, NULL, 0},
};
