/* rnn.c — operator descriptions of the recurrent family: RNN, GRU and LSTM
 * with ONNX opset-14 semantics (layout attribute included).
 *
 * The three ops share one input list (X, W, R, B, sequence_lens, initial_h,
 * then initial_c and P for LSTM), one attribute prefix (activation_alpha,
 * activation_beta, activations, clip, direction, hidden_size, layout) and
 * one validator (rnn_check), parameterised by the gate count G (RNN 1,
 * GRU 3 in z r h order, LSTM 4 in i o f c order). Shapes, with D the number
 * of directions (2 for "bidirectional") and H the hidden size:
 *   X [S,N,I] (layout 1: [N,S,I]); W [D,G*H,I]; R [D,G*H,H]; B [D,2*G*H];
 *   sequence_lens [N] (i32 or i64); initial_h/initial_c [D,N,H] (layout 1:
 *   [N,D,H]); P [D,3*H];  Y [S,D,N,H] (layout 1: [N,S,D,H]); Y_h/Y_c like
 *   initial_h.
 * Only the default activations (Sigmoid/Tanh) are implemented. graphc has
 * no string-list attribute kind, so `activations` is a string holding the
 * comma-separated list; any value other than the default list (repeated per
 * direction) is refused. activation_alpha/beta are accepted and unused:
 * the default activations take no parameters.
 *
 * sequence_lens: batch entry b runs only its first L_b steps (the reverse
 * direction runs t = L_b-1 down to 0); Y is zero at t >= L_b, and Y_h/Y_c
 * hold the state after the last step run (zero when L_b == 0, the
 * onnxruntime convention). The C kernel (runtime/gcrt_rnn.c) follows the
 * same algorithm; the reference here is plain loops in double.
 */
#include "../op.h"
#include "rnn_attrs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Input indices (the attribute indices are in rnn_attrs.h). */
enum { RNN_X, RNN_W, RNN_R, RNN_B, RNN_SEQ_LENS, RNN_INITIAL_H, RNN_INITIAL_C, RNN_P };

static const char *const rnn_in[] = {"X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"};
static const char *const rnn_out[] = {"Y", "Y_h", "Y_c"};

#define RNN_COMMON_ATTRS                                                  \
    [RNN_ACTIVATION_ALPHA] = {"activation_alpha", ATTR_FLOATS, NULL, 0},  \
    [RNN_ACTIVATION_BETA] = {"activation_beta", ATTR_FLOATS, NULL, 0},    \
    [RNN_ACTIVATIONS] = {"activations", ATTR_STRING, NULL, 0},            \
    [RNN_CLIP] = {"clip", ATTR_FLOAT, NULL, 0},                           \
    [RNN_DIRECTION] = {"direction", ATTR_STRING, "forward", 0},           \
    [RNN_HIDDEN_SIZE] = {"hidden_size", ATTR_INT, NULL, 0},               \
    [RNN_LAYOUT] = {"layout", ATTR_INT, "0", 0}

static const AttrSpec rnn_attrs[] = {RNN_COMMON_ATTRS};
OP_ATTRS_CHECK(rnn_attrs, RNN_COUNT);
static const AttrSpec gru_attrs[] = {
    RNN_COMMON_ATTRS,
    [GRU_LINEAR_BEFORE_RESET] = {"linear_before_reset", ATTR_INT, "0", 0},
};
OP_ATTRS_CHECK(gru_attrs, GRU_COUNT);
static const AttrSpec lstm_attrs[] = {
    RNN_COMMON_ATTRS,
    [LSTM_INPUT_FORGET] = {"input_forget", ATTR_INT, "0", 0},
};
OP_ATTRS_CHECK(lstm_attrs, LSTM_COUNT);

/* Everything rnn_check derives from a valid node. */
typedef struct RnnGeo {
    int G, D, layout, rev_only, flag;
    int64_t S, N, I, H;
    double clip; /* 0 = none */
} RnnGeo;

static int rnn_gates(const Node *n) { return n->op == OP_LSTM ? 4 : n->op == OP_GRU ? 3 : 1; }

static const Value *opt_in(const Node *n, int i) { return i < n->n_in ? n->in[i] : NULL; }

/* Checks that input i (when present) has rank `rank`, dims `want` and X's dtype. */
static int check_in(const Node *n, int i, int rank, const int64_t *want, Diag *d)
{
    const Value *v = opt_in(n, i);
    if (!v) return 0;
    char b1[160], b2[160];
    if (v->dtype != n->in[0]->dtype)
        return diag_node_error(d, n, "input '%s' has dtype %s but X has %s", rnn_in[i], ir_dtype_name(v->dtype),
                               ir_dtype_name(n->in[0]->dtype));
    Shape ws = ir_shape(rank, want);
    if (!ir_shape_eq(&v->shape, &ws))
        return diag_node_error(d, n, "input '%s' shape %s does not match the expected %s", rnn_in[i],
                               ir_shape_str(&v->shape, b1, sizeof b1), ir_shape_str(&ws, b2, sizeof b2));
    return 0;
}

/* Validates n and fills g; d may be NULL (facets called after inference). */
static int rnn_check(const Node *n, RnnGeo *g, Diag *d)
{
    const char *op = ir_op(n->op)->name;
    const AttrVal *a = n->attrs;
    char b1[160];
    memset(g, 0, sizeof *g);
    g->G = rnn_gates(n);
    const Value *X = n->in[RNN_X], *W = n->in[RNN_W], *R = n->in[RNN_R];
    if (!X || !W || !R) return diag_node_error(d, n, "inputs 'X', 'W' and 'R' are required");
    if (X->dtype != DT_F32 && X->dtype != DT_F64 && X->dtype != DT_F16 && X->dtype != DT_BF16)
        return diag_node_error(d, n, "input 'X' must be a floating-point tensor, got %s", ir_dtype_name(X->dtype));
    const char *dir = a[RNN_DIRECTION].s;
    if (strcmp(dir, "forward") == 0) g->D = 1;
    else if (strcmp(dir, "reverse") == 0) g->D = 1, g->rev_only = 1;
    else if (strcmp(dir, "bidirectional") == 0) g->D = 2;
    else
        return diag_node_error(d, n, "attribute 'direction' must be forward, reverse or bidirectional, got '%s'", dir);
    if (a[RNN_LAYOUT].i != 0 && a[RNN_LAYOUT].i != 1)
        return diag_node_error(d, n, "attribute 'layout' must be 0 or 1, got %lld", (long long)a[RNN_LAYOUT].i);
    g->layout = (int)a[RNN_LAYOUT].i;
    if (n->op != OP_RNN) {
        const char *fname = n->op == OP_GRU ? "linear_before_reset" : "input_forget";
        int64_t flag = a[n->op == OP_GRU ? GRU_LINEAR_BEFORE_RESET : LSTM_INPUT_FORGET].i;
        if (flag != 0 && flag != 1)
            return diag_node_error(d, n, "attribute '%s' must be 0 or 1, got %lld", fname, (long long)flag);
        g->flag = (int)flag;
    }
    if (a[RNN_CLIP].set) {
        if (!(a[RNN_CLIP].f > 0))
            return diag_node_error(d, n, "attribute 'clip' must be positive, got %g", a[RNN_CLIP].f);
        g->clip = a[RNN_CLIP].f;
    }
    if (a[RNN_ACTIVATIONS].set) {
        const char *one = g->G == 1 ? "Tanh" : g->G == 3 ? "Sigmoid,Tanh" : "Sigmoid,Tanh,Tanh";
        char want[64];
        strcpy(want, one);
        if (g->D == 2) { strcat(want, ","); strcat(want, one); }
        if (strcmp(a[RNN_ACTIVATIONS].s, want) != 0)
            return diag_node_error(d, n, "attribute 'activations' '%s' is not supported: graphc implements %s only with the default activations (%s)",
                                   a[RNN_ACTIVATIONS].s, op, want);
    }
    if (X->shape.rank != 3)
        return diag_node_error(d, n, "input 'X' must have rank 3 (%s), got shape %s",
                               g->layout ? "[batch,seq_length,input_size]" : "[seq_length,batch,input_size]",
                               ir_shape_str(&X->shape, b1, sizeof b1));
    g->S = X->shape.dims[g->layout ? 1 : 0];
    g->N = X->shape.dims[g->layout ? 0 : 1];
    g->I = X->shape.dims[2];
    if (W->shape.rank != 3)
        return diag_node_error(d, n, "input 'W' must have rank 3 ([num_directions,%d*hidden_size,input_size]), got shape %s",
                               g->G, ir_shape_str(&W->shape, b1, sizeof b1));
    if (a[RNN_HIDDEN_SIZE].set) {
        g->H = a[RNN_HIDDEN_SIZE].i;
        if (g->H <= 0)
            return diag_node_error(d, n, "attribute 'hidden_size' must be positive, got %lld", (long long)g->H);
    } else {
        if (W->shape.dims[1] % g->G != 0)
            return diag_node_error(d, n, "input 'W' dim 1 (%lld) is not a multiple of the %d gates of %s",
                                   (long long)W->shape.dims[1], g->G, op);
        g->H = W->shape.dims[1] / g->G;
    }
    int64_t GH = g->G * g->H, D = g->D;
    if (check_in(n, RNN_W, 3, (const int64_t[]){D, GH, g->I}, d) ||
        check_in(n, RNN_R, 3, (const int64_t[]){D, GH, g->H}, d) ||
        check_in(n, RNN_B, 2, (const int64_t[]){D, 2 * GH}, d))
        return -1;
    const Value *sl = opt_in(n, RNN_SEQ_LENS);
    if (sl) {
        if (sl->dtype != DT_I32 && sl->dtype != DT_I64)
            return diag_node_error(d, n, "input 'sequence_lens' must be i32 (or i64), got %s", ir_dtype_name(sl->dtype));
        if (sl->shape.rank != 1 || sl->shape.dims[0] != g->N)
            return diag_node_error(d, n, "input 'sequence_lens' shape %s does not match the expected [%lld]",
                                   ir_shape_str(&sl->shape, b1, sizeof b1), (long long)g->N);
        if (sl->kind == VK_CONST && sl->data)
            for (int64_t b = 0; b < g->N; b++) {
                double v = ir_load_f64(sl->dtype, sl->data, (size_t)b);
                if (v < 0 || v > (double)g->S)
                    return diag_node_error(d, n, "input 'sequence_lens' value %lld at batch %lld is outside [0,%lld]",
                                           (long long)v, (long long)b, (long long)g->S);
            }
    }
    const int64_t *hs = g->layout ? (const int64_t[]){g->N, D, g->H} : (const int64_t[]){D, g->N, g->H};
    if (check_in(n, RNN_INITIAL_H, 3, hs, d)) return -1;
    if (n->op == OP_LSTM &&
        (check_in(n, RNN_INITIAL_C, 3, hs, d) || check_in(n, RNN_P, 2, (const int64_t[]){D, 3 * g->H}, d)))
        return -1;
    return 0;
}

static int rnn_infer(Node *n, Diag *d)
{
    RnnGeo g;
    if (rnn_check(n, &g, d)) return -1;
    DType t = n->in[0]->dtype;
    Shape ys = g.layout ? ir_shape(4, (const int64_t[]){g.N, g.S, g.D, g.H})
                        : ir_shape(4, (const int64_t[]){g.S, g.D, g.N, g.H});
    Shape hs = g.layout ? ir_shape(3, (const int64_t[]){g.N, g.D, g.H}) : ir_shape(3, (const int64_t[]){g.D, g.N, g.H});
    ir_set_out(n, 0, t, &ys);
    for (int i = 1; i < n->n_out; i++) ir_set_out(n, i, t, &hs);
    return 0;
}

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }
static double clipv(double x, double c) { return c > 0 ? (x < -c ? -c : x > c ? c : x) : x; }

/* Offset of state element (dir, b, j) in initial_h/Y_h-shaped tensors. */
static int64_t st_off(const RnnGeo *g, int64_t dir, int64_t b, int64_t j)
{
    return (g->layout ? (b * g->D + dir) : (dir * g->N + b)) * g->H + j;
}

/* Reference: per direction, per step, per batch row, gate pre-activations
 * by direct dot products, then the cell update of the op. */
static int rnn_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    RnnGeo g;
    if (rnn_check(n, &g, d)) return -1;
    int64_t S = g.S, N = g.N, I = g.I, H = g.H, G = g.G, GH = G * H;
    const double *X = in[RNN_X], *Wa = in[RNN_W], *Ra = in[RNN_R];
    const double *Ba = opt_in(n, RNN_B) ? in[RNN_B] : NULL, *SL = opt_in(n, RNN_SEQ_LENS) ? in[RNN_SEQ_LENS] : NULL;
    const double *H0 = opt_in(n, RNN_INITIAL_H) ? in[RNN_INITIAL_H] : NULL;
    const double *C0 = opt_in(n, RNN_INITIAL_C) ? in[RNN_INITIAL_C] : NULL, *Pa = opt_in(n, RNN_P) ? in[RNN_P] : NULL;
    double *Y = out[0], *Yh = n->n_out > 1 ? out[1] : NULL, *Yc = n->n_out > 2 ? out[2] : NULL;
    double *h = malloc(sizeof(double) * (size_t)(2 * GH + 3 * H + 1));
    if (!h) return diag_node_error(d, n, "out of memory for the reference evaluation");
    double *c = h + H, *hn = c + H, *gx = hn + H, *gh = gx + GH;
    int rc = 0;
    for (int64_t dir = 0; dir < g.D; dir++) {
        int rev = g.rev_only || dir == 1;
        const double *W = Wa + dir * GH * I, *R = Ra + dir * GH * H;
        const double *B = Ba ? Ba + dir * 2 * GH : NULL, *P = Pa ? Pa + dir * 3 * H : NULL;
        for (int64_t b = 0; b < N; b++) {
            int64_t L = SL ? (int64_t)SL[b] : S;
            if (L < 0 || L > S) {
                rc = diag_node_error(d, n, "input 'sequence_lens' value %lld at batch %lld is outside [0,%lld]",
                                     (long long)L, (long long)b, (long long)S);
                goto done;
            }
            for (int64_t j = 0; j < H; j++) {
                h[j] = H0 ? H0[st_off(&g, dir, b, j)] : 0;
                c[j] = C0 ? C0[st_off(&g, dir, b, j)] : 0;
            }
            for (int64_t s = 0; s < S; s++) {
                int64_t t = rev ? S - 1 - s : s;
                int64_t yo = g.layout ? ((b * S + t) * g.D + dir) * H : ((t * g.D + dir) * N + b) * H;
                if (t >= L) {
                    for (int64_t j = 0; j < H; j++) Y[yo + j] = 0;
                    continue;
                }
                const double *x = X + (g.layout ? b * S + t : t * N + b) * I;
                for (int64_t k = 0; k < GH; k++) {
                    double ax = B ? B[k] : 0, ah = B ? B[GH + k] : 0;
                    for (int64_t i = 0; i < I; i++) ax += x[i] * W[k * I + i];
                    for (int64_t i = 0; i < H; i++) ah += h[i] * R[k * H + i];
                    gx[k] = ax;
                    gh[k] = ah;
                }
                for (int64_t j = 0; j < H; j++) {
                    if (G == 1) {
                        hn[j] = tanh(clipv(gx[j] + gh[j], g.clip));
                    } else if (G == 3) {
                        double z = sigm(clipv(gx[j] + gh[j], g.clip));
                        double r = sigm(clipv(gx[H + j] + gh[H + j], g.clip));
                        double ah;
                        if (g.flag) {
                            ah = gx[2 * H + j] + r * gh[2 * H + j];
                        } else { /* (r .* h) R_h^T + Rb_h */
                            ah = gx[2 * H + j] + (B ? B[GH + 2 * H + j] : 0);
                            for (int64_t i = 0; i < H; i++) {
                                double ri = sigm(clipv(gx[H + i] + gh[H + i], g.clip));
                                ah += ri * h[i] * R[(2 * H + j) * H + i];
                            }
                        }
                        double ht = tanh(clipv(ah, g.clip));
                        hn[j] = (1 - z) * ht + z * h[j];
                    } else {
                        double pi = P ? P[j] : 0, po = P ? P[H + j] : 0, pf = P ? P[2 * H + j] : 0;
                        double ig = sigm(clipv(gx[j] + gh[j] + pi * c[j], g.clip));
                        double fg = g.flag ? 1 - ig : sigm(clipv(gx[2 * H + j] + gh[2 * H + j] + pf * c[j], g.clip));
                        double cc = tanh(clipv(gx[3 * H + j] + gh[3 * H + j], g.clip));
                        double cn = fg * c[j] + ig * cc;
                        double og = sigm(clipv(gx[H + j] + gh[H + j] + po * cn, g.clip));
                        hn[j] = og * tanh(cn);
                        gx[3 * H + j] = cn; /* c is read above only at index j */
                    }
                }
                for (int64_t j = 0; j < H; j++) {
                    h[j] = hn[j];
                    if (G == 4) c[j] = gx[3 * H + j];
                    Y[yo + j] = h[j];
                }
            }
            for (int64_t j = 0; j < H; j++) {
                if (Yh) Yh[st_off(&g, dir, b, j)] = L ? h[j] : 0;
                if (Yc) Yc[st_off(&g, dir, b, j)] = L ? c[j] : 0;
            }
        }
    }
done:
    free(h);
    return rc;
}

/* See the file comment; used by backend/c/emit_rnn.c through the schema. */
const OpDesc op_RNN = {
    .name = "RNN",
    .min_in = 3, .max_in = 6, .in_names = rnn_in,
    .min_out = 1, .max_out = 2, .out_names = rnn_out,
    OP_ATTRS(rnn_attrs),
    .infer = rnn_infer,
    .eval = rnn_eval,
};

const OpDesc op_GRU = {
    .name = "GRU",
    .min_in = 3, .max_in = 6, .in_names = rnn_in,
    .min_out = 1, .max_out = 2, .out_names = rnn_out,
    OP_ATTRS(gru_attrs),
    .infer = rnn_infer,
    .eval = rnn_eval,
};

const OpDesc op_LSTM = {
    .name = "LSTM",
    .min_in = 3, .max_in = 8, .in_names = rnn_in,
    .min_out = 1, .max_out = 3, .out_names = rnn_out,
    OP_ATTRS(lstm_attrs),
    .infer = rnn_infer,
    .eval = rnn_eval,
};
