/* fold_batchnorm.c — folds an inference BatchNormalization into the linear
 * layer (Conv, ConvTranspose, Gemm) that feeds it.
 *
 * BN computes y = (x - mean) * s + beta per channel, s = scale / sqrt(var +
 * eps). When x is the only-read output of a layer whose weight W and bias B
 * are constants, and every BN operand is a constant, the same y comes out
 * of the layer with
 *     W'[e] = W[e] * s[channel(e)],    B'[m] = (B[m] - mean[m]) * s[m] + beta[m]
 * (B = 0 when the layer has none). Which output channel a weight element
 * belongs to depends on the layer's weight layout; the table `layers` says
 * it per op:
 *   Conv           W [M, C/g, k...]             channel = index along axis 0
 *   ConvTranspose  W [C, M/g, k...]             channel = (c / (C/g)) * M/g + j
 *   Gemm           B [K, N], or [N, K] with transB=1: the column n
 * Gemm's bias is beta * C; it folds when C is absent or the same for every
 * row (a scalar, [N] or [1, N]); the new C is [N] and beta becomes 1.
 *
 * The arithmetic is done in double and stored in the weights' dtype; only
 * f32 and f64 layers fold. The layer then produces the BN's output value
 * (its name survives, graph output or not) and the BN node dies. The old
 * weights stay only if something else reads them.
 */
#include "passes.h"
#include "rewrite.h"
#include "../ir/op.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { BN_X, BN_SCALE, BN_B, BN_MEAN, BN_VAR };

/* The output channel of weight element e of layer p (weight shape ws). */
typedef int64_t (*ChannelFn)(const Node *p, const Shape *ws, int64_t e);

static int64_t inner_size(const Shape *s, int from)
{
    int64_t k = 1;
    for (int i = from; i < s->rank; i++) k *= s->dims[i];
    return k;
}

static int64_t conv_channel(const Node *p, const Shape *ws, int64_t e)
{
    (void)p;
    return e / inner_size(ws, 1);
}

static int64_t convt_channel(const Node *p, const Shape *ws, int64_t e)
{
    int64_t group = p->attrs[ir_attr_index(p, "group")].i;
    int64_t cg = ws->dims[0] / group, mg = ws->dims[1];
    int64_t c = e / inner_size(ws, 1), j = e / inner_size(ws, 2) % mg;
    return c / cg * mg + j;
}

static int64_t gemm_channel(const Node *p, const Shape *ws, int64_t e)
{
    int tb = p->attrs[ir_attr_index(p, "transB")].i != 0;
    return tb ? e / ws->dims[1] : e % ws->dims[1];
}

static const struct {
    OpKind op;
    ChannelFn channel;
    int bias_scaled_by_beta; /* Gemm: the bias is beta * C */
} layers[] = {
    {OP_Conv, conv_channel, 0},
    {OP_ConvTranspose, convt_channel, 0},
    {OP_Gemm, gemm_channel, 1},
};

#define N_LAYERS ((int)(sizeof layers / sizeof layers[0]))

static int layer_index(const Node *p)
{
    for (int i = 0; i < N_LAYERS; i++)
        if (p->op == layers[i].op) return i;
    return -1;
}

static int is_float_const(const Value *v, DType t)
{
    return v && v->kind == VK_CONST && v->dtype == t;
}

/* Whether bias b (or none) of layer p is one value per output channel. */
static int bias_per_channel(const Node *p, const Value *b, int64_t m)
{
    if (!b) return 1;
    int64_t n = ir_numel(&b->shape);
    if (p->op != OP_Gemm) return n == m;
    /* Gemm's C broadcasts to [rows, m]: fine when no dim but the last is > 1 */
    for (int i = 0; i + 1 < b->shape.rank; i++)
        if (b->shape.dims[i] != 1) return 0;
    return n == 1 || n == m;
}

/* Folds bn into p when every condition holds; 1 if folded. */
static int fold(Graph *g, Node *bn, const RwUses *uses)
{
    Value *x = bn->in[BN_X], *y = bn->out[0];
    Node *p = x->producer;
    int li = p ? layer_index(p) : -1;
    if (li < 0 || bn->n_out != 1 || bn->attrs[ir_attr_index(bn, "training_mode")].i != 0) return 0;
    if (!rw_single_use(uses, x) || p->n_out != 1) return 0;
    DType t = x->dtype;
    if (t != DT_F32 && t != DT_F64) return 0;
    Value *w = p->in[1], *b = p->n_in > 2 ? p->in[2] : NULL;
    if (!is_float_const(w, t) || (b && !is_float_const(b, t))) return 0;
    for (int i = BN_SCALE; i <= BN_VAR; i++)
        if (!is_float_const(bn->in[i], t)) return 0;
    int64_t m = x->shape.dims[1];
    if (!bias_per_channel(p, b, m)) return 0;

    double eps = bn->attrs[ir_attr_index(bn, "epsilon")].f;
    double *s = malloc(sizeof(double) * (size_t)m);
    GC_ASSERT(s);
    for (int64_t c = 0; c < m; c++) {
        double var = ir_load_f64(t, bn->in[BN_VAR]->data, (size_t)c);
        s[c] = ir_load_f64(t, bn->in[BN_SCALE]->data, (size_t)c) / sqrt(var + eps);
    }
    int64_t nw = ir_numel(&w->shape);
    void *wd = ir_alloc(g, w->nbytes ? w->nbytes : 1);
    for (int64_t e = 0; e < nw; e++) {
        int64_t c = layers[li].channel(p, &w->shape, e);
        GC_ASSERT(c >= 0 && c < m);
        ir_store_f64(t, wd, (size_t)e, ir_load_f64(t, w->data, (size_t)e) * s[c]);
    }
    double bscale = layers[li].bias_scaled_by_beta ? p->attrs[ir_attr_index(p, "beta")].f : 1.0;
    int64_t nb = b ? ir_numel(&b->shape) : 0;
    void *bd = ir_alloc(g, (size_t)m * ir_dtype_size(t));
    for (int64_t c = 0; c < m; c++) {
        double b0 = nb ? bscale * ir_load_f64(t, b->data, (size_t)(nb == 1 ? 0 : c)) : 0;
        double mean = ir_load_f64(t, bn->in[BN_MEAN]->data, (size_t)c);
        ir_store_f64(t, bd, (size_t)c, (b0 - mean) * s[c] + ir_load_f64(t, bn->in[BN_B]->data, (size_t)c));
    }
    free(s);

    char name[512];
    snprintf(name, sizeof name, "%s_bn", w->name);
    Value *nwv = ir_add_const(g, name, t, &w->shape, wd, 0);
    snprintf(name, sizeof name, "%s_bn", b ? b->name : y->name);
    Shape bs = ir_shape(1, &m);
    Value *nbv = ir_add_const(g, name, t, &bs, bd, 0);
    if (p->n_in < 3) {
        Value **in = ir_alloc(g, sizeof(Value *) * 3);
        in[0] = p->in[0];
        p->in = in;
        p->n_in = 3;
    }
    p->in[1] = nwv;
    p->in[2] = nbv;
    if (layers[li].bias_scaled_by_beta) p->attrs[ir_attr_index(p, "beta")].f = 1.0;
    rw_swap_producers(g, y, x); /* p now produces y; bn reads y, writes x: dead */
    rw_check_node(p);
    return 1;
}

int pass_fold_batchnorm(Graph *g, Diag *d)
{
    (void)d;
    rw_rewrite_each(g, OP_BatchNormalization, fold);
    return 0;
}
