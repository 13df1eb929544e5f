/* emit_rnn.c — C emitters for the rnn family: RNN, GRU and LSTM.
 *
 * Each node becomes one call of gcrt_rnn_seq_{f32,f64} (runtime/gcrt_rnn.h)
 * with every size a literal, the cell kind, the direction, the layout, the
 * op's flag (GRU linear_before_reset, LSTM input_forget) and the clip
 * threshold (0 for none). Absent optional inputs and outputs are passed as
 * null pointers; sequence_lens is passed through the pointer of its dtype
 * (i32 or i64), so constant and runtime lengths take the same path. The
 * gate scratch is the node's workspace (rnn_workspace below).
 * f32 and f64 are supported; other dtypes are refused with a diagnostic.
 */
#include "cgen.h"
#include "../../ir/ops/rnn_attrs.h"

#include <stdio.h>
#include <string.h>

static const char *opt_ptr(Cgen *c, const Node *n, int i)
{
    return i < n->n_in && n->in[i] ? cgen_ptr(c, n->in[i]) : "0";
}

static int emit_rnn_any(Cgen *c, const Node *n, Diag *d, int cell)
{
    Writer *w = cgen_w(c);
    const Value *X = n->in[0], *Y = n->out[0];
    const char *sfx = X->dtype == DT_F32 ? "f32" : X->dtype == DT_F64 ? "f64" : NULL;
    if (!sfx)
        return diag_node_error(d, n, "the C backend implements %s only for f32 and f64, got %s", ir_op(n->op)->name,
                               ir_dtype_name(X->dtype));
    int layout = (int)n->attrs[RNN_LAYOUT].i;
    const char *dir = n->attrs[RNN_DIRECTION].s;
    int direction = strcmp(dir, "reverse") == 0 ? 1 : strcmp(dir, "bidirectional") == 0 ? 2 : 0;
    int64_t S = X->shape.dims[layout ? 1 : 0], N = X->shape.dims[layout ? 0 : 1], I = X->shape.dims[2];
    int64_t H = Y->shape.dims[3];
    int flag = 0;
    if (cell == 1) flag = (int)n->attrs[GRU_LINEAR_BEFORE_RESET].i;
    if (cell == 2) flag = (int)n->attrs[LSTM_INPUT_FORGET].i;
    const AttrVal *clip = &n->attrs[RNN_CLIP];
    char clip_lit[48];
    snprintf(clip_lit, sizeof clip_lit, X->dtype == DT_F32 ? "%.9gf" : "%.17g", clip->set ? clip->f : 0.0);
    if (!strpbrk(clip_lit, ".eEn")) {
        size_t len = strlen(clip_lit) - (X->dtype == DT_F32);
        snprintf(clip_lit + len, sizeof clip_lit - len, ".0%s", X->dtype == DT_F32 ? "f" : "");
    }
    if (N == 0 || H == 0) return 0;
    GC_ASSERT(n->ws_bytes > 0);
    const Value *sl = n->n_in > 4 ? n->in[4] : NULL;
    const char *ct = cgen_ctype(X->dtype);
    w_printf(w, "gcrt_rnn_seq_%s(%d, %lld, %lld, %lld, %lld, %d, %d, %d, %s,\n", sfx, cell, (long long)S,
             (long long)N, (long long)I, (long long)H, direction, layout, flag, clip_lit);
    w->indent++;
    w_printf(w, "%s, %s, %s, %s,\n", cgen_ptr(c, X), cgen_ptr(c, n->in[1]), cgen_ptr(c, n->in[2]), opt_ptr(c, n, 3));
    w_printf(w, "%s, %s,\n", sl && sl->dtype == DT_I32 ? cgen_ptr(c, sl) : "0",
             sl && sl->dtype == DT_I64 ? cgen_ptr(c, sl) : "0");
    w_printf(w, "%s, %s, %s,\n", opt_ptr(c, n, 5), opt_ptr(c, n, 6), opt_ptr(c, n, 7));
    w_printf(w, "%s, %s, %s, (%s *)(void *)%s);\n", cgen_ptr(c, Y), n->n_out > 1 ? cgen_ptr(c, n->out[1]) : "0",
             n->n_out > 2 ? cgen_ptr(c, n->out[2]) : "0", ct, cgen_workspace(c, n));
    w->indent--;
    return 0;
}

static int emit_rnn(Cgen *c, const Node *n, Diag *d) { return emit_rnn_any(c, n, d, 0); }
static int emit_gru(Cgen *c, const Node *n, Diag *d) { return emit_rnn_any(c, n, d, 1); }
static int emit_lstm(Cgen *c, const Node *n, Diag *d) { return emit_rnn_any(c, n, d, 2); }

/* The gate scratch of gcrt_rnn_seq_*: per step the input and recurrent gate
 * products [N,G*H] each, the state h and c [N,H] and one [N,H] temporary
 * (W is [D, G*H, I] and R is [D, G*H, H]). */
static size_t rnn_workspace(const Node *n)
{
    const Shape *xs = &n->in[0]->shape, *rs = &n->in[2]->shape;
    int64_t N = xs->dims[n->attrs[RNN_LAYOUT].i ? 0 : 1], H = rs->dims[2], G = H ? rs->dims[1] / H : 0;
    return (size_t)(N * H * (2 * G + 3)) * ir_dtype_size(n->in[0]->dtype);
}

const CgenEntry cgen_rnn_entries[] = {
    {OP_RNN, emit_rnn, CGEN_RT_rnn, rnn_workspace, 0},
    {OP_GRU, emit_gru, CGEN_RT_rnn, rnn_workspace, 0},
    {OP_LSTM, emit_lstm, CGEN_RT_rnn, rnn_workspace, 0},
    {-1, NULL, 0, NULL, 0},
};
