/* emit_cpu.c — the C backend's fast CPU path for Conv, Gemm and MatMul.
 *
 * For each such node the backend picks a kernel of runtime/cpu from the
 * shapes alone (cpu_plan), the same choice every time it asks: the
 * workspace policy, the emitter and the kernel note printed by
 * --print-after all call cpu_plan, so they cannot disagree.
 *
 *   conv-gemm   Conv with 1 or 2 spatial dims (any groups, strides,
 *               dilations, pads): Y = W * im2col(X) per image and group on
 *               the packed micro-kernel; 32 output positions per panel,
 *               8 channels x 32 positions per tile, or (small maps, many
 *               channels: conv_positions_as_rows) 8 positions x 32
 *               channels with W^T packed.
 *   conv-slide  Conv-gemm's G == 1 convs with packed weights, a kernel
 *               larger than 1x1 and rows of at least 8 outputs, except
 *               W^T tiles: the same 8 x 32 tiles along one output row,
 *               read from a zero-padded copy of X (conv_slide).
 *   depthwise   Conv with one input and one output channel per group
 *               (MobileNet's 3x3/5x5): a direct kernel (gcrt_dwconv.c).
 *   winograd    Conv 3x3, stride 1, dilation 1, group 1 with enough
 *               channels and positions: F(4x4, 3x3) (gcrt_winograd.c).
 *   gemm        Gemm (transA 0, alpha 1, beta 1 or no C) and MatMul whose
 *               batch is dense or shared: Y = A * B on the micro-kernel.
 *   depthwise + conv-gemm
 *               at -O2, a depthwise conv whose output only a 1x1 conv-gemm
 *               with W^T tiles on a map of more than 64 positions reads
 *               (MobileNetV2's 14x14 blocks): the 1x1 conv's node computes
 *               both by bands of output rows, the depthwise rows of a band
 *               into its task's slot (gcrt_dwconv_pw_f32; dwpw_source),
 *               and the depthwise node emits no code.
 *
 * Weights are packed at compile time, never at run time: a constant W
 * (VK_CONST; training's state is read in place) is rewritten into the
 * kernel's layout here and put in the weights blob as a derived constant
 * (cgen_derived_const) in place of the original. Packing is a pure
 * function of the data, so the output stays byte-identical.
 *
 * The node's `epilogue` (ir/fused.h) is mapped onto the kernels' own
 * (bias, residual add, Relu or Clip with constant bounds, applied on the
 * tile as it is stored) when its expression is a chain of those from y;
 * any other epilogue runs as the generic loop after the kernel, as before.
 * Nodes outside these cases (f64, 3-D convs, transposed A, ...) keep the
 * portable kernels of runtime/c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgen.h"
#include "cpu_wino_pack.h"
#include "emit_common.h"
#include "../../ir/fused.h"
#include "../../ir/ops/linalg_attrs.h"
#include "../../ir/ops/nn_attrs.h"

/* The layouts of runtime/cpu/gcrt_cpu.h. */
#define CPU_PACK_MR 8
#define CPU_PACK_NR 32
#define CPU_CONV_KC 512
#define CPU_CONV_MB 64
#define CPU_CONV_MB_DIRECT 16
#define CPU_CONV_MB_DIRECT_T 32
#define CPU_CONV_WHOLE_MB 32

typedef enum CpuKind { CPUK_NONE, CPUK_CONV_GEMM, CPUK_DWCONV, CPUK_WINO, CPUK_GEMM } CpuKind;

/* act(y + bias + res) as the kernels apply it; act 0 none, 1 Relu, 2 Clip,
 * 3 Tanh, 4 Sigmoid (GCRT_ACT_*). */
typedef struct CpuEpi {
    int ok; /* the node's whole epilogue (if any) maps onto the kernel's */
    const Value *bias, *res;
    int act;
    double lo, hi;
} CpuEpi;

typedef struct CpuPlan {
    CpuKind kind;
    const Value *W; /* the weights operand (Conv W, Gemm/MatMul B) */
    int packed;     /* W is packed at compile time */
    int w_trans;    /* conv-gemm: W^T in 32-column panels, positions as the tile's rows */
    int slide;      /* conv-gemm: the sliding-window kernel, no im2col (conv_slide) */
    /* conv */
    int64_t N, C, H, Wd, M, G, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl;
    /* gemm: Y[b] (Mm x Nn) = A[b] (Mm x Kk) * B[b] */
    int64_t batch, Mm, Nn, Kk, a_bs, b_bs, trans_b;
    /* gemm with runtime shapes: the sizes as products of runtime dims; conv:
     * d_N the runtime batch (dyn set; workspaces are planned at N, its bound) */
    int dyn;
    CgenProd d_batch, d_M, d_N, d_K, d_a_bs, d_b_bs, d_c_bs;
    const Value *own_bias; /* Conv's B or Gemm's C (per channel / column) */
    CpuEpi epi;
} CpuPlan;

static int is_f32(const Value *v) { return v && v->dtype == DT_F32; }

/* Whether v is a constant f32 scalar; its value in *x. */
static int const_scalar(const Value *v, double *x)
{
    if (!v || v->kind != VK_CONST || !v->data || v->dtype != DT_F32 || ir_numel(&v->shape) != 1) return 0;
    float f;
    memcpy(&f, v->data, sizeof f);
    *x = f;
    return 1;
}

/* Whether s holds one value per index of axis `axis` of out (numpy
 * broadcast against out, every other dim 1). */
static int per_axis(const Shape *s, const Shape *out, int axis)
{
    int off = out->rank - s->rank;
    if (off < 0) return 0;
    for (int i = 0; i < s->rank; i++) {
        int64_t want = i + off == axis ? out->dims[axis] : 1;
        if (s->dims[i] != want) return 0;
    }
    return ir_numel(s) == out->dims[axis];
}

/* Maps n's epilogue onto bias (per axis `axis` of Y; allowed only when the
 * op has no bias of its own) + residual + Relu/Clip (and Tanh/Sigmoid
 * unless no_exp: the depthwise kernel has no exp). */
static void match_epilogue(const Node *n, int axis, int has_own_bias, int no_exp, CpuEpi *e)
{
    memset(e, 0, sizeof *e);
    const char *epi = ir_epilogue(n);
    if (!epi) {
        e->ok = 1;
        return;
    }
    FusedExpr fx;
    Diag d = {0};
    int rc = ir_fused_parse_node(n, &fx, &d);
    if (rc) return;
    const Value *Y = n->out[0];
    int ok = 1, cur_is_y = 1; /* the chain so far is y (then: member m-1) */
    for (int m = 0; m < fx.n_members && ok; m++) {
        const Node *mb = fx.members[m];
        const FxSrc *src = fx.src[m];
        int last = m == fx.n_members - 1;
        /* operand 0 or 1 must be the chain so far */
        int chain_at = -1;
        for (int j = 0; j < mb->n_in && chain_at < 0; j++) {
            int is_chain = cur_is_y ? (src[j].kind == FX_SLOT && src[j].idx == n->n_in)
                                    : (src[j].kind == FX_MEMBER && src[j].idx == m - 1);
            if (is_chain) chain_at = j;
        }
        if (!is_f32(mb->out[0]) || chain_at < 0) {
            ok = 0;
            break;
        }
        if (mb->op == OP_Add && mb->n_in == 2 && !e->act) {
            const FxSrc *o = &src[1 - chain_at];
            if (o->kind != FX_SLOT || o->idx >= n->n_in) {
                ok = 0;
                break;
            }
            const Value *v = n->in[o->idx];
            if (!is_f32(v)) ok = 0;
            else if (ir_shape_eq(&v->shape, &Y->shape) && !e->res) e->res = v;
            else if (!has_own_bias && !e->bias && per_axis(&v->shape, &Y->shape, axis)) e->bias = v;
            else ok = 0;
        } else if (mb->op == OP_Relu && chain_at == 0 && last) {
            e->act = 1;
        } else if ((mb->op == OP_Tanh || mb->op == OP_Sigmoid) && chain_at == 0 && last && !no_exp) {
            e->act = mb->op == OP_Tanh ? 3 : 4;
        } else if (mb->op == OP_Clip && chain_at == 0 && last) {
            double lo = -INFINITY, hi = INFINITY;
            for (int j = 1; j < mb->n_in && ok; j++) {
                if (src[j].kind == FX_ABSENT) continue;
                double x;
                if (src[j].kind != FX_SLOT || src[j].idx >= n->n_in || !const_scalar(n->in[src[j].idx], &x)) ok = 0;
                else if (j == 1) lo = x;
                else hi = x;
            }
            e->act = 2;
            e->lo = lo;
            e->hi = hi;
        } else {
            ok = 0;
        }
        cur_is_y = 0;
    }
    ir_fused_free(&fx);
    e->ok = ok;
    if (!ok) e->bias = e->res = NULL, e->act = 0;
}

/* Micro-tile rows for n rows of 8-row tiles: a tail of 4 rows or fewer
 * runs the kernel's 4-row loop at half the cost. */
static double tile_rows8(int64_t n)
{
    return (double)(n / CPU_PACK_MR) + (n % CPU_PACK_MR == 0 ? 0.0 : n % CPU_PACK_MR <= 4 ? 0.5 : 1.0);
}

/* The cost model of a conv-gemm's tile orientation, in k steps of the
 * micro-kernel (8 rows x 2 vectors of 16, as on AVX-512; the orientation
 * is chosen for every ISA alike). Channels as rows: ceil(P/32) panels of
 * 8-channel tiles, lanes idle past the last position. Positions as rows
 * (w_trans): ceil(M/32) panels of 8-position tiles in 32-position panels,
 * each tile paying its transposed store (about 20 steps against 4). It
 * wins on 7x7 and 14x14 maps with many channels and a long K (measured on
 * ResNet-50's and MobileNetV2's layers: 8% to 24% faster). */
static int conv_positions_as_rows(const CpuPlan *p)
{
    if (p->G != 1 || !p->packed) return 0;
    const int64_t P = p->OH * p->OW, K = p->C * p->KH * p->KW;
    const double rows_n = (double)((P + CPU_PACK_NR - 1) / CPU_PACK_NR) * tile_rows8(p->M);
    const double rows_t = (double)((p->M + CPU_PACK_NR - 1) / CPU_PACK_NR) *
                          ((double)(P / CPU_PACK_NR) * (CPU_PACK_NR / CPU_PACK_MR) + tile_rows8(P % CPU_PACK_NR));
    return rows_t * (double)(K + 20) < 0.93 * rows_n * (double)(K + 4);
}

static int conv_direct(const CpuPlan *p);

/* The sliding-window kernel (gcrt_cpu.h's slide: 8 channels x 32 columns
 * of one output row per tile, the input read from a zero-padded copy) in
 * place of im2col + GEMM: measured per shape on AVX-512 against the
 * im2col path, it takes 0.23x to 0.85x the time wherever a row fills
 * its vectors (LeNet's 5x5 convs 0.23x and 0.35x, ResNet's 7x7 stride-2
 * stem 0.66x to 0.73x, 3x3 stride-2 convs 0.8x), ties at 14 columns
 * with 256 channels, and loses below 8 columns (4x4 maps: 1.6x), where
 * most lanes idle. 1x1 convs keep im2col + GEMM (read in place at stride
 * 1; at stride 2 the padded copy holds 4 times the inputs used: 1.35x to
 * 1.9x slower), and so do W^T tiles. */
static int conv_slide(const CpuPlan *p)
{
    return p->G == 1 && p->packed && !p->w_trans && p->KH * p->KW > 1 && p->OW >= 8 && p->KW <= 32;
}

static int plan_conv(const Node *n, CpuPlan *p)
{
    const Value *X = n->in[0], *W = n->in[1], *B = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    if (!is_f32(X) || !is_f32(W) || !is_f32(Y) || (B && !is_f32(B))) return 0;
    int64_t k[IR_MAX_RANK], s[IR_MAX_RANK], dl[IR_MAX_RANK], pb[IR_MAX_RANK], pe[IR_MAX_RANK];
    int sr = ir_nn_window_geometry(n, k, s, dl, pb, pe);
    if (sr < 1 || sr > 2 || X->shape.rank != sr + 2) return 0;
    p->N = X->shape.dims[0];
    p->C = X->shape.dims[1];
    p->M = W->shape.dims[0];
    p->G = n->attrs[CONV_GROUP].i;
    int two = sr == 2;
    p->H = two ? X->shape.dims[2] : 1;
    p->Wd = X->shape.dims[1 + sr];
    p->OH = two ? Y->shape.dims[2] : 1;
    p->OW = Y->shape.dims[1 + sr];
    p->KH = two ? k[0] : 1;
    p->KW = k[sr - 1];
    p->sh = two ? s[0] : 1;
    p->sw = s[sr - 1];
    p->dh = two ? dl[0] : 1;
    p->dw = dl[sr - 1];
    p->pt = two ? pb[0] : 0;
    p->pl = pb[sr - 1];
    if (p->G < 1 || p->C % p->G || p->M % p->G) return 0;
    p->W = W;
    p->own_bias = B;
    p->packed = W->kind == VK_CONST && W->data != NULL;
    int64_t Cg = p->C / p->G, Mg = p->M / p->G;
    if (Cg == 1 && Mg == 1) p->kind = CPUK_DWCONV;
    else if (p->G == 1 && p->packed && p->KH == 3 && p->KW == 3 && p->sh == 1 && p->sw == 1 && p->dh == 1 &&
             p->dw == 1 && p->C >= 32 && p->M >= 32 && p->OH >= 8 && p->OW >= 8)
        p->kind = CPUK_WINO;
    else p->kind = CPUK_CONV_GEMM;
    p->w_trans = p->kind == CPUK_CONV_GEMM && conv_positions_as_rows(p);
    p->slide = p->kind == CPUK_CONV_GEMM && conv_slide(p);
    match_epilogue(n, 1, B != NULL, p->kind == CPUK_DWCONV, &p->epi);
    return 1;
}

static int plan_gemm(const Node *n, CpuPlan *p)
{
    const Value *A = n->in[0], *B = n->in[1], *C = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    if (!is_f32(A) || !is_f32(B) || !is_f32(Y) || (C && !is_f32(C))) return 0;
    if (n->attrs[GEMM_TRANS_A].i || n->attrs[GEMM_ALPHA].f != 1.0) return 0;
    p->trans_b = n->attrs[GEMM_TRANS_B].i != 0;
    p->Mm = Y->shape.dims[0];
    p->Nn = Y->shape.dims[1];
    p->Kk = A->shape.dims[1];
    p->batch = 1;
    if (C) {
        if (n->attrs[GEMM_BETA].f != 1.0 || !per_axis(&C->shape, &Y->shape, 1)) return 0;
        p->own_bias = C;
    }
    p->W = B;
    p->packed = B->kind == VK_CONST && B->data != NULL;
    if (!p->packed && p->trans_b) return 0;
    p->kind = CPUK_GEMM;
    match_epilogue(n, 1, C != NULL, 0, &p->epi);
    return 1;
}

static int plan_matmul(const Node *n, CpuPlan *p)
{
    const Value *A = n->in[0], *B = n->in[1], *Y = n->out[0];
    if (!is_f32(A) || !is_f32(B) || !is_f32(Y) || A->shape.rank < 1 || B->shape.rank < 1 || Y->shape.rank < 1) return 0;
    IrMatMulGeom g;
    if (ir_matmul_geometry(n, 0, 1, &g, NULL)) return 0;
    int64_t nbatch = ir_numel(&g.batch);
    p->Mm = g.M;
    p->Nn = g.N;
    p->Kk = g.K;
    p->W = B;
    p->packed = B->kind == VK_CONST && B->data != NULL && g.nb == 1;
    if (g.nb == 1 && g.na == nbatch) { /* one B: fold the batch into M */
        p->batch = 1;
        p->Mm = nbatch * g.M;
    } else if (g.na == nbatch && g.nb == nbatch) {
        p->batch = nbatch;
        p->a_bs = g.M * g.K;
        p->b_bs = g.K * g.N;
    } else {
        return 0;
    }
    p->kind = CPUK_GEMM;
    match_epilogue(n, Y->shape.rank - 1, 0, 0, &p->epi);
    return 1;
}

/* Runtime shapes: Gemm (M runtime) and MatMul with one shared B (the batch
 * folded into M) or operands batched alike; every size a product of
 * runtime dims. Packed weights have static shapes by nature. */
static int plan_gemm_dyn(const Node *n, CpuPlan *p)
{
    const Value *A = n->in[0], *B = n->in[1], *Y = n->out[0];
    const Shape *as = &A->shape, *bs = &B->shape, *ys = &Y->shape;
    if (n->op == OP_Gemm) {
        if (!plan_gemm(n, p)) return 0;
        p->d_M = cgen_dims_prod(ys, 0, 1);
        p->d_N = cgen_dims_prod(ys, 1, 2);
        p->d_K = cgen_dims_prod(as, 1, 2);
        p->d_batch = cgen_prod(1);
        p->d_a_bs = p->d_b_bs = p->d_c_bs = cgen_prod(0);
        p->dyn = 1;
        return 1;
    }
    int ra = as->rank, rb = bs->rank, ry = ys->rank;
    if (!is_f32(A) || !is_f32(B) || !is_f32(Y) || ra < 2 || rb < 2) return 0;
    int b_shared = 1, a_full = ra == ry, b_full = rb == ry;
    for (int k = 0; k < rb - 2; k++)
        if (bs->dims[k] != 1 || bs->sym[k]) b_shared = 0;
    for (int k = 0; k < ry - 2; k++) {
        if (a_full && (as->dims[k] != ys->dims[k] || as->sym[k] != ys->sym[k])) a_full = 0;
        if (b_full && (bs->dims[k] != ys->dims[k] || bs->sym[k] != ys->sym[k])) b_full = 0;
    }
    CgenProd M = cgen_dims_prod(as, ra - 2, ra - 1);
    p->d_K = cgen_dims_prod(as, ra - 1, ra);
    p->d_N = cgen_dims_prod(bs, rb - 1, rb);
    if (b_shared && a_full) {
        p->d_batch = cgen_prod(1);
        p->d_M = cgen_dims_prod(as, 0, ra - 1);
        p->d_a_bs = p->d_b_bs = p->d_c_bs = cgen_prod(0);
    } else if (a_full && b_full) {
        p->d_batch = cgen_dims_prod(ys, 0, ry - 2);
        p->d_M = M;
        p->d_a_bs = cgen_prod_mul(&M, &p->d_K);
        p->d_b_bs = cgen_prod_mul(&p->d_K, &p->d_N);
        p->d_c_bs = cgen_prod_mul(&M, &p->d_N);
    } else {
        return 0;
    }
    p->Mm = as->dims[ra - 2];
    p->Kk = as->dims[ra - 1];
    p->Nn = bs->dims[rb - 1];
    p->batch = 1;
    p->W = B;
    p->packed = B->kind == VK_CONST && B->data != NULL && b_shared;
    p->kind = CPUK_GEMM;
    p->dyn = 1;
    match_epilogue(n, ry - 1, 0, 0, &p->epi);
    return 1;
}

/* The fast kernel for n, or 0. */
static int cpu_plan(const Node *n, CpuPlan *p)
{
    memset(p, 0, sizeof *p);
    if (n->n_out < 1 || !n->out[0]->shape_known || ir_numel(&n->out[0]->shape) == 0) return 0;
    if (cgen_node_has_sym(n)) {
        if (n->op == OP_Conv) {
            /* a runtime batch only (ir_sym_batch): the kernels take N at run time */
            if (!plan_conv(n, p)) return 0;
            p->dyn = 1;
            p->d_N = cgen_dims_prod(&n->in[0]->shape, 0, 1);
            return 1;
        }
        return n->op == OP_Gemm || n->op == OP_MatMul ? plan_gemm_dyn(n, p) : 0;
    }
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] && !n->in[i]->shape_known) return 0;
    if (n->op == OP_Conv) return plan_conv(n, p);
    if (n->op == OP_Gemm) return plan_gemm(n, p);
    if (n->op == OP_MatMul) return plan_matmul(n, p);
    return 0;
}

/* ---- a depthwise conv computed inside the 1x1 conv that reads it ---- */

static int conv_whole(const CpuPlan *p);

/* The first node (in schedule order) that reads v, or NULL. */
static const Node *first_reader(const Graph *g, const Value *v)
{
    for (int s = 0; s < g->n_nodes; s++)
        for (int j = 0; j < g->nodes[s]->n_in; j++)
            if (g->nodes[s]->in[j] == v) return g->nodes[s];
    return NULL;
}

/* Whether node n alone reads v, and once (v is not a graph output). */
static int sole_reader(const Graph *g, const Value *v, const Node *n)
{
    int reads = 0;
    if (v->is_output) return 0;
    for (int s = 0; s < g->n_nodes; s++)
        for (int j = 0; j < g->nodes[s]->n_in; j++)
            if (g->nodes[s]->in[j] == v && (g->nodes[s] != n || ++reads > 1)) return 0;
    return reads == 1;
}

/* The depthwise conv that node pw computes with its own kernel (gcrt_dwconv_pw_f32), or NULL;
 * *pp and *dp get both plans. At -O2: pw a 1x1 conv-gemm of one image, stride 1, no padding,
 * W^T tiles on more than CPU_CONV_WHOLE_P_DIRECT positions, its input the output of a depthwise
 * conv (dilation 1, no residual) that no other node reads, both epilogues on the tile. Measured
 * with bench/layer_profile.py on MobileNetV2, where that is six of its seven 14x14 pairs (the
 * seventh 1x1 conv has W in 8-row panels): at 2 threads the 1x1 convs had taken 1.3 to 1.5 times
 * their one-thread work reading a depthwise output that the two cores had written by channels;
 * fused, the model's 2-thread time fell 2 to 3.5% and its 1-thread time stayed within noise. Its 28x28 pairs (W in 8-row panels) and 7x7 pairs
 * (GCRT_CONV_WHOLE) ran 2 to 11% slower fused, so they stay apart. */
static const Node *dwpw_source(const Graph *g, const Node *pw, CpuPlan *pp, CpuPlan *dp)
{
    if (g->opt_level < 2 || pw->op != OP_Conv || pw->n_in < 2 || !pw->in[0] || !cpu_plan(pw, pp)) return NULL;
    if (pp->kind != CPUK_CONV_GEMM || pp->dyn || pp->N != 1 || pp->G != 1 || !pp->packed || !pp->w_trans ||
        !conv_direct(pp) || conv_whole(pp) || !pp->epi.ok)
        return NULL;
    const Value *x = pw->in[0];
    const Node *d = x->producer;
    if (!d || d->op != OP_Conv || d->n_out != 1 || d->out[0] != x || !cpu_plan(d, dp)) return NULL;
    if (dp->kind != CPUK_DWCONV || dp->dyn || dp->N != 1 || dp->dh != 1 || dp->dw != 1 || !dp->epi.ok ||
        dp->epi.res || dp->OH != pp->H || dp->OW != pp->Wd || dp->C != pp->C)
        return NULL;
    return sole_reader(g, x, pw) ? d : NULL;
}

/* The node that computes depthwise conv d inside its own kernel (dwpw_source), or NULL. */
static const Node *dwpw_target(const Graph *g, const Node *d)
{
    if (g->opt_level < 2 || d->op != OP_Conv || d->n_out != 1) return NULL;
    const Node *n = first_reader(g, d->out[0]); /* dwpw_source checks it is the only one */
    CpuPlan pp, dp;
    return n && dwpw_source(g, n, &pp, &dp) == d ? n : NULL;
}

/* Mirrors of gcrt_dwconv.c: a depthwise conv of at least CPU_DW_MIN_TILES planes with fewer than
 * CPU_DW_SPLIT_ROWS output rows gives each of a pool's threads whole planes (its channels). */
#define CPU_DW_MIN_TILES 64
#define CPU_DW_SPLIT_ROWS 32

/* Mirrors of gcrt_dwconv.h: the output rows of a band of gcrt_pw_dwconv_f32, and the input rows
 * a slot holds. */
#define CPU_PWDW_ROWS 8
#define CPU_PWDW_SLOT_ROWS(KH, sh) ((CPU_PWDW_ROWS - 1) * (sh) + (KH))
static int64_t pwdw_slot_rows(const CpuPlan *dp)
{
    const int64_t r = CPU_PWDW_SLOT_ROWS(dp->KH, dp->sh);
    return r < dp->H ? r : dp->H;
}

/* The 1x1 conv that depthwise conv d computes inside its own kernel (gcrt_pw_dwconv_f32), or
 * NULL; *dp and *pp get both plans. At -O2: d a depthwise conv of one image, dilation 1, its
 * epilogue on the tile, not itself computed inside a 1x1 conv (dwpw_source), its input the output
 * of a 1x1 conv-gemm read in place (stride 1, no padding, one image, G == 1, W in 8-row panels,
 * its epilogue on the tile, no residual) that no other node reads, on a map of at least
 * CPU_DW_SPLIT_ROWS rows that holds two slots' rows (smaller maps split by channels instead,
 * conv_by_channels). Measured on MobileNetV2, where that is its 112x112 expansion into a stride-2
 * depthwise conv and its two 56x56 ones (strides 1 and 2): the 1x1 output, 1.8 to 4.8 MB, no
 * longer went to memory and back; see the note in bench/README.md. */
static const Node *pwdw_source(const Graph *g, const Node *d, CpuPlan *dp, CpuPlan *pp)
{
    if (g->opt_level < 2 || d->op != OP_Conv || d->n_in < 2 || !d->in[0] || !cpu_plan(d, dp)) return NULL;
    if (dp->kind != CPUK_DWCONV || dp->dyn || dp->N != 1 || dp->dh != 1 || dp->dw != 1 || !dp->epi.ok ||
        dwpw_target(g, d))
        return NULL;
    const Value *x = d->in[0];
    const Node *pw = x->producer;
    if (!pw || pw->op != OP_Conv || pw->n_out != 1 || pw->out[0] != x || !cpu_plan(pw, pp)) return NULL;
    if (pp->kind != CPUK_CONV_GEMM || pp->dyn || pp->N != 1 || pp->G != 1 || !pp->packed || pp->w_trans ||
        pp->slide || !conv_direct(pp) || conv_whole(pp) || !pp->epi.ok || pp->epi.res || pp->M != dp->C ||
        pp->OH != dp->H || pp->OW != dp->Wd || pp->OH < CPU_DW_SPLIT_ROWS || pp->OH < 2 * pwdw_slot_rows(dp))
        return NULL;
    return sole_reader(g, x, d) ? pw : NULL;
}

/* The slots of gcrt_pw_dwconv_f32 for the pair (dp, pp): a task each, as many as the map holds,
 * at most the parallel kernels' tasks. */
static int64_t pwdw_slots(const Graph *g, const CpuPlan *dp, const CpuPlan *pp)
{
    const int64_t slots = pp->OH / pwdw_slot_rows(dp);
    return slots < cgen_max_threads(g) ? slots : cgen_max_threads(g);
}

/* The depthwise conv that computes 1x1 conv pw inside its own kernel (pwdw_source), or NULL. */
static const Node *pwdw_target(const Graph *g, const Node *pw)
{
    if (g->opt_level < 2 || pw->op != OP_Conv || pw->n_out != 1) return NULL;
    const Node *n = first_reader(g, pw->out[0]); /* pwdw_source checks it is the only one */
    CpuPlan dp, pp;
    return n && pwdw_source(g, n, &dp, &pp) == pw ? n : NULL;
}

/* Backend.extra_reads of the C backend: a fused 1x1 conv at step s reads its depthwise
 * conv's input there, and a depthwise conv that computes its 1x1 conv that conv's input. */
void cgen_cpu_extra_reads(const Graph *g, int *last)
{
    for (int s = 0; s < g->n_nodes; s++) {
        CpuPlan pp, dp;
        if (g->nodes[s]->op != OP_Conv) continue;
        /* a fused 1x1 conv reads its depthwise conv's input; a depthwise conv, its 1x1 conv's */
        const Node *d = dwpw_source(g, g->nodes[s], &pp, &dp);
        if (!d) d = pwdw_source(g, g->nodes[s], &dp, &pp);
        if (!d) continue;
        const Value *x = d->in[0]->alias ? d->in[0]->alias : d->in[0];
        if (last[x->id] < s) last[x->id] = s;
    }
}

/* Whether conv-gemm n (plan p) splits its output channels over the threads, each thread's share
 * panel by panel (GcrtConv.by_channels), instead of its positions: a 1x1 conv read in place on a
 * map of fewer than CPU_DW_SPLIT_ROWS rows whose output only a depthwise conv reads, one that the
 * runtime splits by channels and that is not computed inside a 1x1 conv (dwpw_source). Each
 * thread then reads the planes it wrote, where a split by positions had each thread write half of
 * every plane, whose other half came from the other core. Measured with bench/layer_profile.py on
 * MobileNetV2 at 2 threads (three runs), its four such pairs (three 28x28 expansions, a 14x14 one
 * into a stride-2 depthwise conv): the depthwise convs went from 1.14 to 1.73 times their
 * one-thread work to 1.07 to 1.11, the 1x1 convs from 5% slower to 6% faster, the eight nodes
 * together from 0.375 to 0.349 ms. Its 56x56 expansion into a stride-2 depthwise conv ran 21%
 * slower split by channels (a 300 KB input that every thread reads whole, 9 channel blocks
 * shared 4:5), so larger maps keep the split by positions. The outputs are the same bits either
 * way. */
static int conv_by_channels(const Graph *g, const Node *n, const CpuPlan *p)
{
    if (p->kind != CPUK_CONV_GEMM || !conv_direct(p) || conv_whole(p) || p->OH >= CPU_DW_SPLIT_ROWS) return 0;
    const Value *y = n->out[0];
    const Node *d = first_reader(g, y);
    CpuPlan dp;
    if (!d || d->op != OP_Conv || d->in[0] != y || !sole_reader(g, y, d) || !cpu_plan(d, &dp) ||
        dp.kind != CPUK_DWCONV || dwpw_target(g, d))
        return 0;
    return dp.C * (dp.dyn ? 1 : dp.N) >= CPU_DW_MIN_TILES && dp.OH < CPU_DW_SPLIT_ROWS;
}

/* Backend.stored_bytes of the C backend: a 1x1 conv's output that its depthwise conv computes band
 * by band holds only the slots (at most max_threads x C x slot rows x W floats, where the whole
 * output is C x H x W: MobileNetV2's 112x112 expansion 4.8 MB, its slots 2.9 MB). */
int64_t cgen_cpu_stored_bytes(const Graph *g, const Value *v)
{
    const Node *pw = v->producer, *d;
    CpuPlan dp, pp;
    if (!pw || pw->op != OP_Conv || pw->n_out != 1 || !(d = pwdw_target(g, pw)) || !pwdw_source(g, d, &dp, &pp))
        return -1;
    return pwdw_slots(g, &dp, &pp) * pp.M * pwdw_slot_rows(&dp) * pp.OW * (int64_t)sizeof(float);
}

/* ---- workspace ---- */

/* The rows and columns of the zero-padded input the outputs read (the
 * slide kernel's and GCRT_CONV_WHOLE's copies). */
static int64_t padded_rows(const CpuPlan *p) { return (p->OH - 1) * p->sh + (p->KH - 1) * p->dh + 1; }
static int64_t padded_cols(const CpuPlan *p) { return (p->OW - 1) * p->sw + (p->KW - 1) * p->dw + 1; }

/* GCRT_CONV_WHOLE of gcrt_cpu.h: W^T packed, a map of at most 1024
 * positions (32x32; 64 for a conv read in place) and a padded image of
 * fewer than 2^31 floats; the threads share one slot: the padded image,
 * then an int32_t offset per row of W^T. */
#define CPU_CONV_WHOLE_P 1024
#define CPU_CONV_WHOLE_P_DIRECT 64
static int conv_whole(const CpuPlan *p)
{
    return p->w_trans && p->OH * p->OW <= (conv_direct(p) ? CPU_CONV_WHOLE_P_DIRECT : CPU_CONV_WHOLE_P) &&
           p->C * padded_rows(p) * padded_cols(p) < 2147483647;
}

static int64_t conv_tiles(const CpuPlan *p)
{
    int64_t Mg = p->M / p->G, P = p->OH * p->OW;
    if (conv_whole(p)) return p->N * ((Mg + CPU_CONV_WHOLE_MB - 1) / CPU_CONV_WHOLE_MB);
    const int64_t mb = conv_direct(p) ? (p->w_trans ? CPU_CONV_MB_DIRECT_T : CPU_CONV_MB_DIRECT) : CPU_CONV_MB;
    return p->N * p->G * ((P + CPU_PACK_NR - 1) / CPU_PACK_NR) * ((Mg + mb - 1) / mb);
}

static int conv_direct(const CpuPlan *p)
{
    return p->KH == 1 && p->KW == 1 && p->sh == 1 && p->sw == 1 && p->pt == 0 && p->pl == 0 && p->OH == p->H &&
           p->OW == p->Wd;
}

/* Task slots of a conv-gemm node and floats per slot (0 when direct; the
 * slide kernel: one slot, GCRT_SLIDE_FLOATS, the padded input). */
static int64_t conv_slots(const CpuPlan *p, int max_threads, int64_t *slot_floats)
{
    if (p->slide) {
        const int64_t Hp = padded_rows(p), Wh = (padded_cols(p) + p->sw - 1) / p->sw;
        *slot_floats = p->C * Hp * p->sw * Wh + 32;
        return 1;
    }
    int64_t K = p->C / p->G * p->KH * p->KW;
    if (conv_whole(p)) { /* GCRT_CONV_WHOLE_SLOT_FLOATS: the padded image, an offset per row of W^T */
        *slot_floats = conv_direct(p) ? 0 : p->C * padded_rows(p) * padded_cols(p) + K;
        return 1;
    }
    *slot_floats = conv_direct(p) ? 0 : (K < CPU_CONV_KC ? K : CPU_CONV_KC) * CPU_PACK_NR;
    int64_t t = conv_tiles(p);
    return t < max_threads ? t : max_threads;
}

int cgen_cpu_workspace(const Graph *g, const Node *n, int max_threads, size_t *bytes)
{
    CpuPlan p, dp;
    if (!cpu_plan(n, &p)) return 0;
    *bytes = 0;
    if (n->op == OP_Conv && dwpw_source(g, n, &p, &dp)) return 1; /* its slots: the depthwise output's buffer */
    if (p.kind == CPUK_CONV_GEMM) {
        int64_t sf, slots = conv_slots(&p, max_threads, &sf);
        *bytes = (size_t)(slots * sf) * sizeof(float);
    }
    if (p.kind == CPUK_WINO) *bytes = cgen_cpu_wino_workspace(p.N, p.C, p.M, p.OH, p.OW, max_threads);
    return 1;
}

/* ---- packing ---- */

static float *weights_f32(const Value *v)
{
    size_t n = (size_t)ir_numel(&v->shape);
    float *w = malloc((n ? n : 1) * sizeof *w);
    GC_ASSERT(w && v->nbytes == n * sizeof *w);
    memcpy(w, v->data, n * sizeof *w);
    return w;
}

/* The A panels of G groups of [Mg, K] row-major matrices (gcrt_cpu.h). */
static float *pack_a_panels(const float *W, int64_t G, int64_t Mg, int64_t K, size_t *nbytes)
{
    int64_t mp = (Mg + CPU_PACK_MR - 1) / CPU_PACK_MR * CPU_PACK_MR;
    size_t n = (size_t)(G * mp * K);
    float *p = calloc(n ? n : 1, sizeof *p);
    GC_ASSERT(p);
    for (int64_t g = 0; g < G; g++)
        for (int64_t m = 0; m < Mg; m++)
            for (int64_t k = 0; k < K; k++)
                p[g * mp * K + m / CPU_PACK_MR * CPU_PACK_MR * K + k * CPU_PACK_MR + m % CPU_PACK_MR] =
                    W[(g * Mg + m) * K + k];
    *nbytes = n * sizeof *p;
    return p;
}

/* The B panels of a [K, N] matrix (trans: W is stored [N, K]). */
static float *pack_b_panels(const float *W, int64_t K, int64_t N, int trans, size_t *nbytes)
{
    int64_t np = (N + CPU_PACK_NR - 1) / CPU_PACK_NR * CPU_PACK_NR;
    size_t n = (size_t)(np * K);
    float *p = calloc(n ? n : 1, sizeof *p);
    GC_ASSERT(p);
    for (int64_t k = 0; k < K; k++)
        for (int64_t j = 0; j < N; j++)
            p[j / CPU_PACK_NR * CPU_PACK_NR * K + k * CPU_PACK_NR + j % CPU_PACK_NR] = trans ? W[j * K + k] : W[k * N + j];
    *nbytes = n * sizeof *p;
    return p;
}

/* ---- emission ---- */

static void emit_epi_fields(Cgen *c, Writer *w, const CpuPlan *p, const char *bias_field)
{
    const Value *bias = p->own_bias ? p->own_bias : p->epi.bias;
    w_printf(w, ".%s = %s, .res = %s, ", bias_field, bias ? cgen_ptr(c, bias) : "0",
             p->epi.res ? cgen_ptr(c, p->epi.res) : "0");
    char lo[48], hi[48];
    emit_float_lit(lo, sizeof lo, p->epi.act == 2 ? p->epi.lo : 0.0, DT_F32);
    emit_float_lit(hi, sizeof hi, p->epi.act == 2 ? p->epi.hi : 0.0, DT_F32);
    static const char *const acts[] = {"GCRT_ACT_NONE", "GCRT_ACT_RELU", "GCRT_ACT_CLIP", "GCRT_ACT_TANH",
                                       "GCRT_ACT_SIGMOID"};
    w_printf(w, ".act = %s, .lo = %s, .hi = %s", acts[p->epi.act], lo, hi);
}

/* The packed form of p's weights as a derived constant, named by its layout
 * (one weight used by two nodes that pack it alike is packed once). */
static const char *packed_weights(Cgen *c, const CpuPlan *p)
{
    char tag[32];
    if (p->kind == CPUK_GEMM) snprintf(tag, sizeof tag, "%s", p->trans_b ? "bpanels_t" : "bpanels");
    else if (p->kind == CPUK_WINO) snprintf(tag, sizeof tag, "winograd");
    else if (p->w_trans) snprintf(tag, sizeof tag, "bpanels_t");
    else if (p->G > 1) snprintf(tag, sizeof tag, "apanels_g%lld", (long long)p->G);
    else snprintf(tag, sizeof tag, "apanels");
    float *w = weights_f32(p->W);
    size_t nb = 0;
    float *pk;
    if (p->kind == CPUK_GEMM) {
        pk = pack_b_panels(w, p->Kk, p->Nn, (int)p->trans_b, &nb);
    } else if (p->kind == CPUK_WINO) {
        nb = (size_t)cgen_wino_packed_floats(p->M, p->C) * sizeof(float);
        pk = malloc(nb);
        GC_ASSERT(pk);
        cgen_wino_pack(p->M, p->C, w, pk);
    } else if (p->w_trans) {
        pk = pack_b_panels(w, p->C * p->KH * p->KW, p->M, 1, &nb);
    } else {
        pk = pack_a_panels(w, p->G, p->M / p->G, p->C / p->G * p->KH * p->KW, &nb);
    }
    free(w);
    return cgen_derived_const(c, p->W, tag, pk, nb);
}

/* The conv's batch as C text: the literal, or the runtime batch. */
static const char *conv_n_str(const CpuPlan *p, char *buf, size_t cap)
{
    if (p->dyn) return cgen_prod_str(&p->d_N, buf, cap);
    snprintf(buf, cap, "%lld", (long long)p->N);
    return buf;
}

static void emit_conv_fields(Cgen *c, Writer *w, const Node *n, const CpuPlan *p)
{
    char nb[160];
    w_printf(w, ".N = %s, .C = %lld, .H = %lld, .W = %lld, .M = %lld, .OH = %lld, .OW = %lld,\n", conv_n_str(p, nb, sizeof nb),
             (long long)p->C, (long long)p->H, (long long)p->Wd, (long long)p->M, (long long)p->OH, (long long)p->OW);
    w_printf(w, ".pt = %lld, .pl = %lld, .X = %s, ", (long long)p->pt, (long long)p->pl, cgen_ptr(c, n->in[0]));
}

/* Node n (dwpw_source: d) computes the depthwise conv d and itself: gcrt_dwconv_pw_f32. */
static void emit_dwpw(Cgen *c, const Node *n, const CpuPlan *p, const Node *d, const CpuPlan *dp)
{
    Writer *w = cgen_w(c);
    const int max_threads = cgen_max_threads(cgen_graph(c));
    w_line(w, "const GcrtEpi dw_epi = {");
    w->indent++;
    emit_epi_fields(c, w, dp, "bias");
    w_puts(w, "};\n");
    w->indent--;
    w_line(w, "const GcrtConv cv = {");
    w->indent++;
    emit_conv_fields(c, w, n, p);
    w_printf(w, ".Wt = %s,\n", packed_weights(c, p));
    w_puts(w, ".KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,\n");
    w_printf(w, ".G = 1, .w_packed = 1, .w_trans = 1, .ws = %s, .max_slots = %d,\n", cgen_ptr(c, n->in[0]),
             max_threads);
    emit_epi_fields(c, w, p, "bias");
    w_printf(w, ", .Y = %s};\n", cgen_ptr(c, n->out[0]));
    w->indent--;
    w_line(w, "gcrt_dwconv_pw_f32(%lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld,", (long long)dp->C,
           (long long)dp->H, (long long)dp->Wd, (long long)dp->OH, (long long)dp->OW, (long long)dp->KH,
           (long long)dp->KW, (long long)dp->sh, (long long)dp->sw, (long long)dp->pt, (long long)dp->pl);
    w_line(w, "    %s, %s, &dw_epi, &cv, pool);", cgen_ptr(c, d->in[0]), cgen_ptr(c, dp->W));
    cgen_use_runtime(c, CGEN_RT_cpu);
    cgen_use_runtime(c, CGEN_RT_dwconv);
    cgen_use_dwconv(c, dp->KH, dp->KW, 1, dp->sw);
}

/* Depthwise conv n (plan dp) computes its 1x1 conv pw (pwdw_source) and itself: gcrt_pw_dwconv_f32,
 * its slots in pw's output buffer (pwdw_slots of them, all that buffer holds: cgen_cpu_stored_bytes). */
static void emit_pwdw(Cgen *c, const Node *n, const CpuPlan *dp, const Node *pw, const CpuPlan *pp)
{
    Writer *w = cgen_w(c);
    const int64_t slots = pwdw_slots(cgen_graph(c), dp, pp);
    w_line(w, "const GcrtConv cv = {");
    w->indent++;
    emit_conv_fields(c, w, pw, pp);
    w_printf(w, ".Wt = %s,\n", packed_weights(c, pp));
    w_puts(w, ".KH = 1, .KW = 1, .sh = 1, .sw = 1, .dh = 1, .dw = 1,\n");
    w_printf(w, ".G = 1, .w_packed = 1, .ws = %s, .max_slots = %lld,\n", cgen_ptr(c, pw->out[0]), (long long)slots);
    emit_epi_fields(c, w, pp, "bias");
    w_printf(w, ", .Y = %s};\n", cgen_ptr(c, pw->out[0]));
    w->indent--;
    w_line(w, "const GcrtEpi epi = {");
    w->indent++;
    emit_epi_fields(c, w, dp, "bias");
    w_puts(w, "};\n");
    w->indent--;
    w_line(w, "gcrt_pw_dwconv_f32(&cv, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld,", (long long)dp->OH,
           (long long)dp->OW, (long long)dp->KH, (long long)dp->KW, (long long)dp->sh, (long long)dp->sw,
           (long long)dp->pt, (long long)dp->pl);
    w_line(w, "    %s, &epi, %s, pool);", cgen_ptr(c, dp->W), cgen_ptr(c, n->out[0]));
    cgen_use_runtime(c, CGEN_RT_cpu);
    cgen_use_runtime(c, CGEN_RT_dwconv);
    cgen_use_dwconv(c, dp->KH, dp->KW, 1, dp->sw);
}

int cgen_cpu_emit(Cgen *c, const Node *n, Diag *d)
{
    CpuPlan p, dp;
    if (!cpu_plan(n, &p)) return 0;
    Writer *w = cgen_w(c);
    const Graph *g = cgen_graph(c);
    const Node *fused = p.kind == CPUK_DWCONV ? dwpw_target(g, n) : NULL;
    if (fused) {
        w_puts(w, "/* computed band by band inside Conv '");
        cgen_comment_text(w, fused->name);
        w_puts(w, "' below (gcrt_dwconv_pw_f32), never stored */\n");
        return 1;
    }
    const Node *src = n->op == OP_Conv ? dwpw_source(g, n, &p, &dp) : NULL;
    if (src) {
        emit_dwpw(c, n, &p, src, &dp);
        return 1;
    }
    const Node *into = p.kind == CPUK_CONV_GEMM ? pwdw_target(g, n) : NULL;
    if (into) {
        w_puts(w, "/* computed band by band inside Conv '");
        cgen_comment_text(w, into->name);
        w_puts(w, "' below (gcrt_pw_dwconv_f32), never stored */\n");
        return 1;
    }
    CpuPlan pp;
    const Node *pw = p.kind == CPUK_DWCONV ? pwdw_source(g, n, &dp, &pp) : NULL;
    if (pw) {
        emit_pwdw(c, n, &dp, pw, &pp);
        return 1;
    }
    const char *py = cgen_ptr(c, n->out[0]);
    if (p.kind == CPUK_CONV_GEMM) {
        const char *pw = p.packed ? packed_weights(c, &p) : cgen_ptr(c, p.W);
        int64_t sf, slots = conv_slots(&p, cgen_max_threads(cgen_graph(c)), &sf);
        w_line(w, "const GcrtConv cv = {");
        w->indent++;
        emit_conv_fields(c, w, n, &p);
        w_printf(w, ".Wt = %s,\n", pw);
        w_printf(w, ".KH = %lld, .KW = %lld, .sh = %lld, .sw = %lld, .dh = %lld, .dw = %lld,\n", (long long)p.KH,
                 (long long)p.KW, (long long)p.sh, (long long)p.sw, (long long)p.dh, (long long)p.dw);
        w_printf(w, ".G = %lld, .w_packed = %d, ", (long long)p.G, p.packed);
        if (p.w_trans) w_puts(w, ".w_trans = 1, ");
        if (p.slide) w_puts(w, ".slide = 1, ");
        if (conv_by_channels(g, n, &p)) w_puts(w, ".by_channels = 1, ");
        if (sf) w_printf(w, ".ws = (float *)(void *)%s, .max_slots = %lld,\n", cgen_workspace(c, n), (long long)slots);
        else w_puts(w, ".ws = 0, .max_slots = 1,\n");
        emit_epi_fields(c, w, &p, "bias");
        w_printf(w, ", .Y = %s};\n", py);
        w->indent--;
        w_line(w, "gcrt_conv_gemm_f32(&cv, pool);");
        cgen_use_runtime(c, CGEN_RT_cpu);
    } else if (p.kind == CPUK_DWCONV) {
        w_line(w, "const GcrtEpi epi = {");
        w->indent++;
        emit_epi_fields(c, w, &p, "bias");
        w_puts(w, "};\n");
        w->indent--;
        char nb[160];
        w_line(w, "gcrt_dwconv2d_f32(%s, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld, %lld,",
               conv_n_str(&p, nb, sizeof nb), (long long)p.C, (long long)p.H, (long long)p.Wd, (long long)p.OH, (long long)p.OW,
               (long long)p.KH, (long long)p.KW, (long long)p.sh, (long long)p.sw, (long long)p.dh, (long long)p.dw,
               (long long)p.pt, (long long)p.pl);
        w_line(w, "    %s, %s, &epi, %s, pool);", cgen_ptr(c, n->in[0]), cgen_ptr(c, p.W), py);
        cgen_use_runtime(c, CGEN_RT_dwconv);
        cgen_use_dwconv(c, p.KH, p.KW, p.dw, p.sw);
    } else if (p.kind == CPUK_WINO) {
        const char *pw = packed_weights(c, &p);
        w_line(w, "const GcrtWino cv = {");
        w->indent++;
        emit_conv_fields(c, w, n, &p);
        w_printf(w, ".U = %s, .ws = (float *)(void *)%s, .max_slots = %d,\n", pw, cgen_workspace(c, n),
                 cgen_max_threads(cgen_graph(c)));
        emit_epi_fields(c, w, &p, "bias");
        w_printf(w, ", .Y = %s};\n", py);
        w->indent--;
        w_line(w, "gcrt_wino_conv_f32(&cv, pool);");
        cgen_use_runtime(c, CGEN_RT_winograd);
    } else {
        const char *pb = p.packed ? packed_weights(c, &p) : cgen_ptr(c, p.W);
        w_line(w, "const GcrtGemm gm = {");
        w->indent++;
        if (p.dyn) {
            char b[7][160];
            w_printf(w, ".batch = %s, .a_bs = %s, .b_bs = %s, .c_bs = %s, .M = %s, .N = %s, .K = %s,\n",
                     cgen_prod_str(&p.d_batch, b[0], sizeof b[0]), cgen_prod_str(&p.d_a_bs, b[1], sizeof b[1]),
                     cgen_prod_str(&p.d_b_bs, b[2], sizeof b[2]), cgen_prod_str(&p.d_c_bs, b[3], sizeof b[3]),
                     cgen_prod_str(&p.d_M, b[4], sizeof b[4]), cgen_prod_str(&p.d_N, b[5], sizeof b[5]),
                     cgen_prod_str(&p.d_K, b[6], sizeof b[6]));
            w_printf(w, ".A = %s, .a_rs = %s, .a_ks = 1, .B = %s, .b_packed = %d, .ldb = %s, .C = %s, .ldc = %s,\n",
                     cgen_ptr(c, n->in[0]), b[6], pb, p.packed, b[5], py, b[5]);
        } else {
        w_printf(w, ".batch = %lld, .a_bs = %lld, .b_bs = %lld, .c_bs = %lld, .M = %lld, .N = %lld, .K = %lld,\n",
                 (long long)p.batch, (long long)p.a_bs, (long long)p.b_bs, (long long)(p.batch > 1 ? p.Mm * p.Nn : 0),
                 (long long)p.Mm, (long long)p.Nn, (long long)p.Kk);
        w_printf(w, ".A = %s, .a_rs = %lld, .a_ks = 1, .B = %s, .b_packed = %d, .ldb = %lld, .C = %s, .ldc = %lld,\n",
                 cgen_ptr(c, n->in[0]), (long long)p.Kk, pb, p.packed, (long long)p.Nn, py, (long long)p.Nn);
        }
        emit_epi_fields(c, w, &p, "bias_col");
        w_puts(w, "};\n");
        w->indent--;
        w_line(w, "gcrt_gemm_f32(&gm, pool);");
        cgen_use_runtime(c, CGEN_RT_cpu);
    }
    if (!p.epi.ok && cgen_emit_epilogue(c, n, d)) return -1;
    return 1;
}

/* ---- the note --dump/--print-after shows ---- */

/* The note's account of plan p's on-tile epilogue (", on the tile: bias residual relu"), or "". */
static const char *epi_note(const CpuPlan *p, char *buf, size_t cap)
{
    buf[0] = '\0';
    if (p->own_bias || p->epi.bias || p->epi.res || p->epi.act)
        snprintf(buf, cap, ", on the tile:%s%s%s", p->own_bias || p->epi.bias ? " bias" : "", p->epi.res ? " residual" : "",
                 (const char *const[]){"", " relu", " clip", " tanh", " sigmoid"}[p->epi.act]);
    return buf;
}

int cgen_cpu_kernel_note(const Graph *g, const Node *n, char *buf, size_t cap)
{
    CpuPlan p, dp;
    char epi[96];
    if (!cpu_plan(n, &p)) return 0;
    const Node *fused = p.kind == CPUK_DWCONV ? dwpw_target(g, n) : NULL;
    if (fused) {
        int k = snprintf(buf, cap, "depthwise direct, computed band by band inside the 1x1 conv %s below, never stored",
                         fused->name);
        return k < 0 ? 0 : k;
    }
    const Node *src = n->op == OP_Conv ? dwpw_source(g, n, &p, &dp) : NULL;
    if (src) {
        int k = snprintf(buf, cap,
                         "depthwise + conv-gemm by row bands (the depthwise conv %s's rows of a band into the "
                         "task's slot, then W^T packed in 32-column panels, positions as the tile's rows)%s",
                         src->name, epi_note(&p, epi, sizeof epi));
        return k < 0 ? 0 : k;
    }
    const Node *into = p.kind == CPUK_CONV_GEMM ? pwdw_target(g, n) : NULL;
    if (into) {
        int k = snprintf(buf, cap, "conv-gemm (W packed in 8-row panels), computed band by band inside the depthwise "
                         "conv %s below, never stored", into->name);
        return k < 0 ? 0 : k;
    }
    CpuPlan pp;
    const Node *pwn = p.kind == CPUK_DWCONV ? pwdw_source(g, n, &dp, &pp) : NULL;
    if (pwn) {
        int k = snprintf(buf, cap,
                         "conv-gemm + depthwise by row bands (the 1x1 conv %s's rows of a band into the task's "
                         "slot, then the depthwise rows from there)%s",
                         pwn->name, epi_note(&p, epi, sizeof epi));
        return k < 0 ? 0 : k;
    }
    const char *what = p.kind == CPUK_GEMM ? "gemm" : p.kind == CPUK_WINO ? "winograd F(4x4,3x3)"
                     : p.kind == CPUK_DWCONV ? "depthwise direct" : p.slide ? "conv-slide" : "conv-gemm";
    char detail[128] = "";
    if (p.kind == CPUK_CONV_GEMM) {
        int64_t sf, slots = conv_slots(&p, cgen_max_threads(g), &sf);
        const int64_t K = p.C / p.G * p.KH * p.KW;
        if (p.slide) snprintf(detail, sizeof detail, ", over a zero-padded copy of X, no im2col");
        else if (conv_whole(&p))
            snprintf(detail, sizeof detail, ", %lld-row K blocks, %s, channel blocks (by row bands when few) per task",
                     (long long)(K < CPU_CONV_KC ? K : CPU_CONV_KC),
                     sf ? "rows read from a zero-padded copy of X" : "X read in place");
        else if (sf) snprintf(detail, sizeof detail, ", im2col %lldx32 panels in %lld slots", (long long)(sf / CPU_PACK_NR), (long long)slots);
        else snprintf(detail, sizeof detail, ", X read in place%s",
                      conv_by_channels(g, n, &p) ? ", the threads split the channels" : "");
    }
    char dims[80] = "";
    if (p.kind == CPUK_GEMM)
        snprintf(dims, sizeof dims, " M=%lld N=%lld K=%lld%s", (long long)p.Mm, (long long)p.Nn, (long long)p.Kk,
                 p.batch > 1 ? " batched" : "");
    epi_note(&p, epi, sizeof epi);
    int k = snprintf(buf, cap, "%s%s (%s%s)%s%s", what, dims,
                     p.kind == CPUK_DWCONV ? "W as stored"
                     : p.packed ? (p.kind == CPUK_GEMM ? "B packed in 32-column panels"
                                  : p.kind == CPUK_WINO ? "W transformed"
                                  : p.w_trans ? "W^T packed in 32-column panels, positions as the tile's rows"
                                              : "W packed in 8-row panels")
                     : p.kind == CPUK_GEMM ? "B read in place" : "W read in place",
                     detail, epi, p.epi.ok ? "" : ", epilogue as a loop");
    return k < 0 ? 0 : k;
}
