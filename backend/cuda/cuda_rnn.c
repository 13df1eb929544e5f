/* cuda_rnn.c — the CUDA backend's generated kernel for RNN, GRU and LSTM
 * (see cuda_emit.h): one thread per (direction, batch entry) runs the
 * whole sequence, the C runtime's cell (runtime/c/gcrt_rnn.c): per step
 * each gate's pre-activation is the dot product of X_t with its row of W
 * plus that of the previous state with its row of R, plus the biases (and
 * LSTM peepholes), clipped, through the default activations (Sigmoid for
 * gates, Tanh otherwise). GRU without linear_before_reset first computes
 * r .* H for the whole row, whose product with R_h feeds the h gate.
 * Entries whose sequence is shorter than the step are left untouched and
 * get zeros in Y; the reverse direction walks t = S-1 down to 0; Y_h/Y_c
 * are the final states, zero for a length-0 entry. The state (previous and
 * current h, c, the GRU temporary) lives in the node's workspace, four
 * rows of H doubles per thread; arithmetic in double.
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/rnn_attrs.h"

#include <stdio.h>
#include <string.h>

/* The batch size N and the hidden size H of an RNN node. */
static void rnn_sizes(const Node *n, int64_t *N, int64_t *H)
{
    const Shape *xs = &n->in[0]->shape, *rs = &n->in[2]->shape;
    *N = xs->dims[n->attrs[RNN_LAYOUT].i ? 0 : 1];
    *H = rs->dims[2];
}

static int rnn_dirs(const Node *n) { return strcmp(n->attrs[RNN_DIRECTION].s, "bidirectional") == 0 ? 2 : 1; }

static size_t rnn_workspace(const Node *n)
{
    int64_t N, H;
    rnn_sizes(n, &N, &H);
    return sizeof(double) * (size_t)(rnn_dirs(n) * N * 4 * H);
}

static int rnn_check(const Node *n, Diag *d)
{
    for (int i = 0; i < n->n_in; i++)
        if (n->in[i] && i != 4 && n->in[i]->dtype != n->in[0]->dtype)
            return diag_node_error(d, n, "the CUDA backend's %s takes one dtype for its tensors", ir_op(n->op)->name);
    if (!cu_is_float(n->in[0]->dtype))
        return diag_node_error(d, n, "the CUDA backend computes %s in f32 and f64 only", ir_op(n->op)->name);
    return 0;
}

static int emit_rnn(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *Wv = n->in[1], *Rv = n->in[2];
    const Value *Bv = n->n_in > 3 ? n->in[3] : NULL, *SL = n->n_in > 4 ? n->in[4] : NULL;
    const Value *H0 = n->n_in > 5 ? n->in[5] : NULL, *C0 = n->n_in > 6 ? n->in[6] : NULL, *Pv = n->n_in > 7 ? n->in[7] : NULL;
    const Value *Y = n->out[0], *Yh = n->n_out > 1 ? n->out[1] : NULL, *Yc = n->n_out > 2 ? n->out[2] : NULL;
    const int cell = n->op == OP_LSTM ? 2 : n->op == OP_GRU ? 1 : 0, layout = (int)n->attrs[RNN_LAYOUT].i;
    const int D = rnn_dirs(n), rev_only = strcmp(n->attrs[RNN_DIRECTION].s, "reverse") == 0;
    const int flag = cell == 1 ? (int)n->attrs[GRU_LINEAR_BEFORE_RESET].i : cell == 2 ? (int)n->attrs[LSTM_INPUT_FORGET].i : 0;
    const int reset_first = cell == 1 && !flag;
    int64_t N, H;
    rnn_sizes(n, &N, &H);
    const int64_t S = X->shape.dims[layout ? 1 : 0], In = X->shape.dims[2], G = cell == 2 ? 4 : cell == 1 ? 3 : 1, GH = G * H;
    if (N == 0 || H == 0) return 0;
    const AttrVal *clip = &n->attrs[RNN_CLIP];
    char cl[48];
    cfam_lit(cl, sizeof cl, DT_F64, clip->set ? clip->f : 0.0); /* <= 0: no clipping */
    const char *T = cfam_ctype(X->dtype);
    GC_ASSERT(n->ws_offset >= 0);
    const int kn = cu_kernel_begin(c, n);
    Writer kw, *w = &kw;
    w_init(&kw);
    w_printf(w, "GC_KERNEL k%d(%s *y, %s *yh, %s *yc, double *ws, const %s *x, const %s *W, const %s *R, const %s *B,\n", kn, T, T, T,
             T, T, T, T);
    w_printf(w, "                const %s *sl, const %s *h0, const %s *c0, const %s *P)\n{\n", SL ? cfam_ctype(SL->dtype) : "int64_t", T,
             T, T);
    w_printf(w, "    GC_FOR_EACH(q, %lld) {\n", (long long)(D * N));
    w_printf(w, "        const int64_t dir = q / %lld, b = q %% %lld;\n", (long long)N, (long long)N);
    w_printf(w, "        const int rev = %s;\n", rev_only ? "1" : D == 2 ? "dir == 1" : "0");
    w_printf(w, "        const %s *Wd = W + dir * %lld, *Rd = R + dir * %lld;\n", T, (long long)(GH * In), (long long)(GH * H));
    w_printf(w, "        const %s *Bd = B ? B + dir * %lld : NULL;\n", T, (long long)(2 * GH));
    if (cell == 2) w_printf(w, "        const %s *Pd = P ? P + dir * %lld : NULL;\n", T, (long long)(3 * H));
    else w_puts(w, "        (void)P;\n");
    w_printf(w, "        double *hp = ws + q * %lld, *h = hp + %lld, *cs = h + %lld;\n", (long long)(4 * H), (long long)H, (long long)H);
    if (reset_first) w_printf(w, "        double *tmp = cs + %lld;\n", (long long)H);
    w_printf(w, "        const int64_t L = sl ? (int64_t)sl[b] : %lld;\n", (long long)S);
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)H);
    w_printf(w, "            const int64_t so = (%s) * %lld + j;\n", layout ? "b * D_ + dir" : "dir * N_ + b", (long long)H);
    w_puts(w, "            h[j] = h0 ? (double)h0[so] : 0.0;\n            cs[j] = c0 ? (double)c0[so] : 0.0;\n        }\n");
    w_printf(w, "        for (int64_t s = 0; s < %lld; s++) {\n", (long long)S);
    w_printf(w, "            const int64_t t = rev ? %lld - s : s;\n", (long long)(S - 1));
    w_printf(w, "            %s *yt = y ? y + (%s) * %lld : NULL;\n", T, layout ? "(b * S_ + t) * D_ + dir" : "(t * D_ + dir) * N_ + b",
             (long long)H);
    w_printf(w, "            const %s *xt = x + (%s) * %lld;\n", T, layout ? "b * S_ + t" : "t * N_ + b", (long long)In);
    w_puts(w, "            if (t >= L) {\n");
    w_printf(w, "                if (yt) for (int64_t j = 0; j < %lld; j++) yt[j] = 0;\n                continue;\n            }\n", (long long)H);
    w_printf(w, "            for (int64_t j = 0; j < %lld; j++) hp[j] = h[j];\n", (long long)H);
    if (reset_first) {
        w_printf(w, "            for (int64_t j = 0; j < %lld; j++) {\n                double a = 0;\n", (long long)H);
        w_printf(w, "                for (int64_t u = 0; u < %lld; u++) a += (double)xt[u] * Wd[(%lld + j) * %lld + u] + 0.0;\n",
                 (long long)In, (long long)H, (long long)In);
        w_printf(w, "                for (int64_t u = 0; u < %lld; u++) a += hp[u] * Rd[(%lld + j) * %lld + u];\n", (long long)H,
                 (long long)H, (long long)H);
        w_printf(w, "                if (Bd) a += (double)Bd[%lld + j] + (double)Bd[%lld + j];\n", (long long)H, (long long)(GH + H));
        w_puts(w, "                tmp[j] = GC_SIGMOID(GC_CLIP(a)) * hp[j];\n            }\n");
    }
    w_printf(w, "            for (int64_t j = 0; j < %lld; j++) {\n", (long long)H);
    w_printf(w, "                double pre[%lld];\n", (long long)G);
    w_printf(w, "                for (int64_t k = 0; k < %lld; k++) {\n", (long long)G);
    w_puts(w, "                    double a = 0;\n");
    w_printf(w, "                    for (int64_t u = 0; u < %lld; u++) a += (double)xt[u] * Wd[(k * %lld + j) * %lld + u];\n", (long long)In,
             (long long)H, (long long)In);
    w_printf(w, "                    if (Bd) a += (double)Bd[k * %lld + j];\n", (long long)H);
    w_puts(w, cell == 1 ? "                    if (k != 2) { /* the h gate's recurrent part comes below */\n" : "                    {\n");
    w_printf(w, "                        for (int64_t u = 0; u < %lld; u++) a += hp[u] * Rd[(k * %lld + j) * %lld + u];\n", (long long)H,
             (long long)H, (long long)H);
    w_printf(w, "                        if (Bd) a += (double)Bd[%lld + k * %lld + j];\n", (long long)GH, (long long)H);
    w_puts(w, "                    }\n                    pre[k] = a;\n                }\n");
    if (cell == 0) {
        w_puts(w, "                h[j] = tanh(GC_CLIP(pre[0]));\n");
    } else if (cell == 1) {
        w_puts(w, "                const double z = GC_SIGMOID(GC_CLIP(pre[0]));\n");
        w_printf(w, "                double rh = Bd ? (double)Bd[%lld + j] : 0.0;\n", (long long)(GH + 2 * H));
        w_printf(w, "                for (int64_t u = 0; u < %lld; u++) rh += %s[u] * Rd[(%lld + j) * %lld + u];\n", (long long)H,
                 flag ? "hp" : "tmp", (long long)(2 * H), (long long)H);
        if (flag) w_puts(w, "                rh *= GC_SIGMOID(GC_CLIP(pre[1]));\n");
        w_puts(w, "                const double ht = tanh(GC_CLIP(pre[2] + rh));\n");
        w_puts(w, "                h[j] = (1.0 - z) * ht + z * hp[j];\n");
    } else {
        w_puts(w, "                const double ig = GC_SIGMOID(GC_CLIP(pre[0] + (Pd ? (double)Pd[j] * cs[j] : 0.0)));\n");
        if (flag) w_puts(w, "                const double fg = 1.0 - ig;\n");
        else w_printf(w, "                const double fg = GC_SIGMOID(GC_CLIP(pre[2] + (Pd ? (double)Pd[%lld + j] * cs[j] : 0.0)));\n", (long long)(2 * H));
        w_puts(w, "                const double cc = tanh(GC_CLIP(pre[3]));\n");
        w_puts(w, "                cs[j] = fg * cs[j] + ig * cc;\n");
        w_printf(w, "                const double og = GC_SIGMOID(GC_CLIP(pre[1] + (Pd ? (double)Pd[%lld + j] * cs[j] : 0.0)));\n", (long long)H);
        w_puts(w, "                h[j] = og * tanh(cs[j]);\n");
    }
    w_printf(w, "                if (yt) yt[j] = (%s)h[j];\n            }\n        }\n", T);
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) {\n", (long long)H);
    w_printf(w, "            const int64_t so = (%s) * %lld + j;\n", layout ? "b * D_ + dir" : "dir * N_ + b", (long long)H);
    w_printf(w, "            if (yh) yh[so] = L > 0 ? (%s)h[j] : 0;\n            if (yc) yc[so] = L > 0 ? (%s)cs[j] : 0;\n        }\n", T, T);
    w_puts(w, "    }\n}\n\n");
    /* the cell's helpers, named after the kernel, then the kernel with its tokens spelled out */
    char num[3][24], fn[2][24];
    snprintf(num[0], sizeof num[0], "%d", D);
    snprintf(num[1], sizeof num[1], "%lld", (long long)N);
    snprintf(num[2], sizeof num[2], "%lld", (long long)S);
    snprintf(fn[0], sizeof fn[0], "k%d_sigmoid", kn);
    snprintf(fn[1], sizeof fn[1], "k%d_clip", kn);
    if (clip->set && clip->f > 0)
        w_printf(&c->kern, "GC_DEVICE double %s(double v) { return v < -%s ? -%s : v > %s ? %s : v; }\n", fn[1], cl, cl, cl, cl);
    else w_printf(&c->kern, "GC_DEVICE double %s(double v) { return v; }\n", fn[1]);
    if (cell) w_printf(&c->kern, "GC_DEVICE double %s(double v) { return 1.0 / (1.0 + exp(-v)); }\n", fn[0]);
    static const char *const tok[] = {"D_", "N_", "S_", "GC_SIGMOID", "GC_CLIP"};
    const char *rep[] = {num[0], num[1], num[2], fn[0], fn[1]};
    for (const char *p = cu_wtext(&kw); *p;) {
        int hit = -1;
        const int word = p == cu_wtext(&kw) || !((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
                                                (p[-1] >= '0' && p[-1] <= '9') || p[-1] == '_');
        for (int t = 0; word && hit < 0 && t < 5; t++)
            if (strncmp(p, tok[t], strlen(tok[t])) == 0) hit = t;
        if (hit >= 0) {
            w_puts(&c->kern, rep[hit]);
            p += strlen(tok[hit]);
        } else {
            w_printf(&c->kern, "%c", *p++);
        }
    }
    w_free(&kw);
    Writer *b = &c->body;
    w_printf(b, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s, (double *)(void *)(arena + %lld), %s, %s, %s, %s,\n", kn,
             (long long)(D * N), Y && ir_numel(&Y->shape) ? cu_ptr(c, Y) : "NULL", Yh ? cu_ptr(c, Yh) : "NULL",
             Yc ? cu_ptr(c, Yc) : "NULL", (long long)n->ws_offset, cu_ptr(c, X), cu_ptr(c, Wv), cu_ptr(c, Rv),
             Bv ? cu_ptr(c, Bv) : "NULL");
    w_printf(b, "                                 %s, %s, %s, %s));\n", SL ? cu_ptr(c, SL) : "NULL", H0 ? cu_ptr(c, H0) : "NULL",
             C0 ? cu_ptr(c, C0) : "NULL", Pv ? cu_ptr(c, Pv) : "NULL");
    return 0;
}

#define NOTE "a generated kernel, one thread per direction and batch entry over the whole sequence (state in the workspace)"

const CudaEntry cuda_rnn_entries[] = {
    {OP_RNN, rnn_check, emit_rnn, rnn_workspace, NOTE, 0, 0},
    {OP_GRU, rnn_check, emit_rnn, rnn_workspace, NOTE, 0, 0},
    {OP_LSTM, rnn_check, emit_rnn, rnn_workspace, NOTE, 0, 0},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};
