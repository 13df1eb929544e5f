/* General user operators (GRAPHC_GENERAL): a row-wise normalisation with an
 * attribute, a workspace and an in-place option, its gradient, and a
 * row-wise argmax whose output has another shape and dtype. */
#include <math.h>
#include <stdint.h>
#include <graphc/custom_op.h>

static int64_t row_len(const graphc_tensor *t) { return t->dims[t->rank - 1]; }

/* y = (x - mean) / sqrt(var + eps) over the last axis; each row's mean and
 * 1/std go to the workspace first, so y may overwrite x. */
GRAPHC_OP("com.example", "RowNorm", GRAPHC_GENERAL)
void row_norm(const graphc_tensor *x, graphc_tensor *y, void *work, float eps)
{
    int64_t d = row_len(x), rows = graphc_numel(x) / d;
    const float *xs = (const float *)x->data;
    float *ys = (float *)y->data, *stat = (float *)work;
    for (int64_t r = 0; r < rows; r++) {
        float m = 0, v = 0;
        for (int64_t i = 0; i < d; i++) m += xs[r * d + i];
        m /= (float)d;
        for (int64_t i = 0; i < d; i++) v += (xs[r * d + i] - m) * (xs[r * d + i] - m);
        stat[2 * r] = m;
        stat[2 * r + 1] = 1.0f / sqrtf(v / (float)d + eps);
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t i = 0; i < d; i++) ys[r * d + i] = (xs[r * d + i] - stat[2 * r]) * stat[2 * r + 1];
}

GRAPHC_SHAPE("com.example", "RowNorm")
const char *row_norm_shape(const graphc_tensor *x, graphc_tensor *y, float eps)
{
    if (x->dtype != GRAPHC_FLOAT) return "RowNorm takes float tensors";
    if (x->rank < 1 || x->dims[x->rank - 1] < 1) return "RowNorm needs a non-empty last axis";
    if (!(eps > 0)) return "RowNorm's eps must be positive";
    *y = *x;
    return NULL;
}

GRAPHC_WORKSPACE("com.example", "RowNorm")
int64_t row_norm_workspace(const graphc_tensor *x, const graphc_tensor *y)
{
    (void)y;
    return 2 * (graphc_numel(x) / row_len(x)) * (int64_t)sizeof(float);
}

GRAPHC_INPLACE("com.example", "RowNorm", "y", "x")

/* dx = (dy - mean(dy) - y * mean(dy * y)) / std, row by row. */
GRAPHC_GRAD("com.example", "RowNorm")
void row_norm_grad(const graphc_tensor *x, const graphc_tensor *y, const graphc_tensor *dy, graphc_tensor *dx, float eps)
{
    int64_t d = row_len(x), rows = graphc_numel(x) / d;
    const float *xs = (const float *)x->data, *ys = (const float *)y->data, *g = (const float *)dy->data;
    float *o = (float *)dx->data;
    for (int64_t r = 0; r < rows; r++) {
        float m = 0, v = 0, mg = 0, mgy = 0;
        for (int64_t i = 0; i < d; i++) m += xs[r * d + i];
        m /= (float)d;
        for (int64_t i = 0; i < d; i++) v += (xs[r * d + i] - m) * (xs[r * d + i] - m);
        float rstd = 1.0f / sqrtf(v / (float)d + eps);
        for (int64_t i = 0; i < d; i++) {
            mg += g[r * d + i];
            mgy += g[r * d + i] * ys[r * d + i];
        }
        mg /= (float)d;
        mgy /= (float)d;
        for (int64_t i = 0; i < d; i++) o[r * d + i] = rstd * (g[r * d + i] - mg - ys[r * d + i] * mgy);
    }
}

/* The index of each row's largest element (int64, the last axis dropped). */
GRAPHC_OP("com.example", "RowArgMax", GRAPHC_GENERAL)
void row_argmax(const graphc_tensor *x, graphc_tensor *idx)
{
    int64_t d = row_len(x), rows = graphc_numel(x) / d;
    const float *xs = (const float *)x->data;
    int64_t *out = (int64_t *)idx->data;
    for (int64_t r = 0; r < rows; r++) {
        int64_t best = 0;
        for (int64_t i = 1; i < d; i++)
            if (xs[r * d + i] > xs[r * d + best]) best = i;
        out[r] = best;
    }
}

GRAPHC_SHAPE("com.example", "RowArgMax")
const char *row_argmax_shape(const graphc_tensor *x, graphc_tensor *idx)
{
    if (x->dtype != GRAPHC_FLOAT || x->rank < 1 || x->dims[x->rank - 1] < 1)
        return "RowArgMax takes a float tensor with a non-empty last axis";
    idx->dtype = GRAPHC_INT64;
    idx->rank = x->rank - 1;
    for (int32_t i = 0; i + 1 < x->rank; i++) idx->dims[i] = x->dims[i];
    return NULL;
}
