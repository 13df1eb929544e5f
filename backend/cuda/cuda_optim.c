/* cuda_optim.c — the CUDA backend's generated kernels for the optimizers
 * Adagrad, Momentum and Adam (formulas in ir/ops/optim.c; see cuda_emit.h):
 * one kernel per optimized tensor, one thread per element, which reads the
 * scalars R and T, computes the step's factor (Adagrad's decayed rate,
 * Adam's bias-corrected rate, Momentum's first-step beta) and writes
 * X_new and the new state, in double for every float dtype (the C
 * backend's arithmetic, backend/c/emit_optim.c). Absent outputs are not
 * written.
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/optim_attrs.h"

#include <stdio.h>
#include <string.h>

/* A double literal of float attribute ai of n. */
static const char *lit(char *buf, size_t cap, const Node *n, int ai)
{
    return cfam_lit(buf, cap, DT_F64, n->attrs[ai].f);
}

static const char *dlit(char *buf, size_t cap, double v) { return cfam_lit(buf, cap, DT_F64, v); }

/* `const double NAME = (double)P[E];` (f16/bf16 converted). */
static void load_d(Writer *w, const char *name, DType t, const char *elem)
{
    w_printf(w, "        const double %s = (double)", name);
    cu_load(w, t, elem);
    w_puts(w, ";\n");
}

static int emit_optim(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const int adam = n->op == OP_Adam, adagrad = n->op == OP_Adagrad, S = adam ? 2 : 1, nt = (n->n_in - 2) / (2 + S);
    const int ncoef = adagrad ? ADAGRAD_NORM_COEFFICIENT : adam ? ADAM_NORM_COEFFICIENT : MOMENTUM_NORM_COEFFICIENT;
    const int nesterov = n->op == OP_Momentum && !strcmp(n->attrs[MOMENTUM_MODE].s, "nesterov");
    const Value *R = n->in[0], *Tv = n->in[1];
    char a1[48], a2[48], a3[48], a4[48];
    for (int j = 0; j < nt; j++) {
        const Value *X = n->in[2 + j], *G = n->in[2 + nt + j], *S0 = n->in[2 + 2 * nt + j], *S1 = S > 1 ? n->in[2 + 3 * nt + j] : NULL;
        const Value *Xn = n->out[j], *S0n = n->out[nt + j], *S1n = S > 1 ? n->out[2 * nt + j] : NULL;
        const int64_t ne = ir_numel(&X->shape);
        if (ne == 0) continue;
        Writer *w = &c->kern;
        const int kn = cu_kernel_begin(c, n);
        w_printf(w, "/* tensor %d */\n", j);
        w_printf(w, "GC_KERNEL k%d(const %s *rr, const %s *tt, const %s *x, const %s *g, const %s *s0", kn, cfam_ctype(R->dtype),
                 cfam_ctype(Tv->dtype), cfam_ctype(X->dtype), cfam_ctype(G->dtype), cfam_ctype(S0->dtype));
        if (S1) w_printf(w, ", const %s *s1", cfam_ctype(S1->dtype));
        w_printf(w, ", %s *xn, %s *s0n", Xn ? cfam_ctype(Xn->dtype) : "double", S0n ? cfam_ctype(S0n->dtype) : "double");
        if (S1) w_printf(w, ", %s *s1n", S1n ? cfam_ctype(S1n->dtype) : "double");
        w_printf(w, ")\n{\n    GC_FOR_EACH(e, %lld) {\n", (long long)ne);
        load_d(w, "r", R->dtype, "rr[0]");
        load_d(w, "t", Tv->dtype, "tt[0]");
        if (adagrad) w_printf(w, "        const double rate = r / (1.0 + t * %s);\n", lit(a1, sizeof a1, n, ADAGRAD_DECAY_FACTOR));
        else if (!adam) w_printf(w, "        const double rate = t > 0 ? %s : 1.0; /* beta, 1 on the first step */\n", lit(a1, sizeof a1, n, MOMENTUM_BETA));
        else
            w_printf(w, "        const double rate = t > 0 ? r * sqrt(1.0 - pow(%s, t)) / (1.0 - pow(%s, t)) : r;\n",
                     lit(a1, sizeof a1, n, ADAM_BETA), lit(a2, sizeof a2, n, ADAM_ALPHA));
        load_d(w, "xv", X->dtype, "x[e]");
        load_d(w, "gv", G->dtype, "g[e]");
        load_d(w, "o0", S0->dtype, "s0[e]");
        w_printf(w, "        const double gg = %s * xv + gv;\n", lit(a1, sizeof a1, n, ncoef));
        char xv[256];
        if (adagrad) {
            w_puts(w, "        const double v0 = o0 + gg * gg;\n");
            snprintf(xv, sizeof xv, "xv - rate * gg / (sqrt(v0) + %s)", lit(a2, sizeof a2, n, ADAGRAD_EPSILON));
        } else if (!adam) {
            lit(a2, sizeof a2, n, MOMENTUM_ALPHA);
            w_printf(w, "        const double v0 = %s * o0 + rate * gg;\n", a2);
            if (nesterov) snprintf(xv, sizeof xv, "xv - r * (gg + %s * v0)", a2);
            else snprintf(xv, sizeof xv, "xv - r * v0");
        } else {
            const double al = n->attrs[ADAM_ALPHA].f, be = n->attrs[ADAM_BETA].f;
            w_printf(w, "        const double v0 = %s * o0 + %s * gg;\n", dlit(a2, sizeof a2, al), dlit(a3, sizeof a3, 1.0 - al));
            load_d(w, "o1", S1->dtype, "s1[e]");
            w_printf(w, "        const double v1 = %s * o1 + %s * gg * gg;\n", dlit(a2, sizeof a2, be), dlit(a3, sizeof a3, 1.0 - be));
            snprintf(xv, sizeof xv, "%s * (xv - rate * v0 / (sqrt(v1) + %s))",
                     dlit(a4, sizeof a4, 1.0 - n->attrs[ADAM_NORM_COEFFICIENT_POST].f), lit(a2, sizeof a2, n, ADAM_EPSILON));
        }
        if (Xn) {
            w_puts(w, "        ");
            cu_store(w, Xn->dtype, "xn[e]", xv);
        }
        if (S0n) {
            w_puts(w, "        ");
            cu_store(w, S0n->dtype, "s0n[e]", "v0");
        }
        if (S1n) {
            w_puts(w, "        ");
            cu_store(w, S1n->dtype, "s1n[e]", "v1");
        }
        if (!Xn) w_puts(w, "        (void)xn;\n");
        if (!S0n) w_puts(w, "        (void)s0n;\n");
        if (S1 && !S1n) w_puts(w, "        (void)s1n;\n");
        w_puts(w, "    }\n}\n\n");
        Writer *b = &c->body;
        w_printf(b, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s, %s, %s", kn, (long long)ne, cu_ptr(c, R), cu_ptr(c, Tv), cu_ptr(c, X),
                 cu_ptr(c, G), cu_ptr(c, S0));
        if (S1) w_printf(b, ", %s", cu_ptr(c, S1));
        w_printf(b, ", %s, %s", Xn ? cu_ptr(c, Xn) : "NULL", S0n ? cu_ptr(c, S0n) : "NULL");
        if (S1) w_printf(b, ", %s", S1n ? cu_ptr(c, S1n) : "NULL");
        w_puts(b, "));\n");
    }
    return 0;
}

#define NOTE "generated kernels, one per optimized tensor, one thread per element"

const CudaEntry cuda_optim_entries[] = {
    {OP_Adagrad, NULL, emit_optim, NULL, NOTE, 1, 0},
    {OP_Momentum, NULL, emit_optim, NULL, NOTE, 1, 0},
    {OP_Adam, NULL, emit_optim, NULL, NOTE, 1, 0},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};
