/* emit_optim.c — C emitters for the training-domain optimizers Adagrad, Adam
 * and Momentum (formulas in ir/ops/optim.c).
 *
 * Every op becomes one block: the scalars R and T are read once and the
 * step-dependent factor (Adagrad's decayed rate, Adam's bias-corrected rate,
 * Momentum's first-step beta) is computed from them; then one flat loop per
 * optimized tensor reads x, its gradient and its state, and writes X_new and
 * the new state. Arithmetic is in double for every float dtype (the values
 * are loaded and stored through cgen_load / cgen_store, so f16 and bf16 work
 * too), matching the double reference evaluation. No runtime kernel and no
 * workspace; absent outputs are not written.
 */
#include "cgen.h"
#include "emit_common.h"
#include "../../ir/ops/optim_attrs.h"

#include <stdio.h>
#include <string.h>

typedef enum OptimKind { OPT_ADAGRAD, OPT_MOMENTUM, OPT_ADAM } OptimKind;

/* Index of norm_coefficient in each optimizer's schema. */
static const int norm_coefficient_attr[] = {
    [OPT_ADAGRAD] = ADAGRAD_NORM_COEFFICIENT,
    [OPT_MOMENTUM] = MOMENTUM_NORM_COEFFICIENT,
    [OPT_ADAM] = ADAM_NORM_COEFFICIENT,
};

/* A double literal of float attribute `ai` (an index of n's schema). */
static const char *attr_lit(char *buf, size_t cap, const Node *n, int ai)
{
    return emit_float_lit(buf, cap, n->attrs[ai].f, DT_F64);
}

/* Writes `(double)<element e of v>` into buf. */
static void load_double(Cgen *c, const Value *v, const char *e, char *buf, size_t cap)
{
    char p[EMIT_EXPR_CAP];
    Writer lw;
    w_init(&lw);
    w_printf(&lw, "(double)");
    cgen_load(&lw, v->dtype, emit_ptr_name(c, v, p), e);
    snprintf(buf, cap, "%s", lw.buf ? lw.buf : "");
    w_free(&lw);
}

/* Stores the double expression `val` into element e of v (if v exists). */
static void store_double(Cgen *c, const Value *v, const char *e, const char *val)
{
    if (!v) return;
    char p[EMIT_EXPR_CAP];
    cgen_store(cgen_w(c), v->dtype, emit_ptr_name(c, v, p), e, val);
}

static int emit_optim(Cgen *c, const Node *n, Diag *d, OptimKind kind)
{
    (void)d;
    Writer *w = cgen_w(c);
    int S = kind == OPT_ADAM ? 2 : 1, nt = (n->n_in - 2) / (2 + S);
    char r[64], t[64], f[64], e[64], x[64], g[64], s0[64], s1[64], ld[EMIT_EXPR_CAP + 16];
    char a1[48], a2[48], a3[48], a4[48];
    snprintf(r, sizeof r, "%s", cgen_tmp(c, "r"));
    snprintf(t, sizeof t, "%s", cgen_tmp(c, "t"));
    snprintf(f, sizeof f, "%s", cgen_tmp(c, "rate"));
    w_line(w, "{");
    w->indent++;
    load_double(c, n->in[0], "0", ld, sizeof ld);
    w_line(w, "const double %s = %s;", r, ld);
    load_double(c, n->in[1], "0", ld, sizeof ld);
    w_line(w, "const double %s = %s;", t, ld);
    if (kind == OPT_ADAGRAD)
        w_line(w, "const double %s = %s / (1.0 + %s * %s);", f, r, t, attr_lit(a1, sizeof a1, n, ADAGRAD_DECAY_FACTOR));
    else if (kind == OPT_MOMENTUM)
        w_line(w, "const double %s = %s > 0 ? %s : 1.0; /* beta, 1 on the first step */", f, t,
               attr_lit(a1, sizeof a1, n, MOMENTUM_BETA));
    else
        w_line(w, "const double %s = %s > 0 ? %s * sqrt(1.0 - pow(%s, %s)) / (1.0 - pow(%s, %s)) : %s;", f, t, r,
               attr_lit(a1, sizeof a1, n, ADAM_BETA), t, attr_lit(a2, sizeof a2, n, ADAM_ALPHA), t, r);
    int nesterov = kind == OPT_MOMENTUM && !strcmp(n->attrs[MOMENTUM_MODE].s, "nesterov");
    for (int j = 0; j < nt; j++) {
        const Value *X = n->in[2 + j], *G = n->in[2 + nt + j];
        const Value *st0 = n->in[2 + 2 * nt + j], *st1 = S > 1 ? n->in[2 + 3 * nt + j] : NULL;
        const Value *Xn = n->out[j], *st0n = n->out[nt + j], *st1n = S > 1 ? n->out[2 * nt + j] : NULL;
        int64_t ne = ir_numel(&X->shape);
        if (ne == 0) continue;
        snprintf(e, sizeof e, "%s", cgen_tmp(c, "e"));
        snprintf(x, sizeof x, "%s", cgen_tmp(c, "x"));
        snprintf(g, sizeof g, "%s", cgen_tmp(c, "g"));
        snprintf(s0, sizeof s0, "%s", cgen_tmp(c, kind == OPT_ADAGRAD ? "h" : "v"));
        snprintf(s1, sizeof s1, "%s", cgen_tmp(c, "h"));
        w_line(w, "for (int64_t %s = 0; %s < %lld; %s++) {", e, e, (long long)ne, e);
        w->indent++;
        load_double(c, X, e, ld, sizeof ld);
        w_line(w, "const double %s = %s;", x, ld);
        load_double(c, G, e, ld, sizeof ld);
        w_line(w, "const double %s = %s * %s + %s;", g, attr_lit(a1, sizeof a1, n, norm_coefficient_attr[kind]), x, ld);
        load_double(c, st0, e, ld, sizeof ld);
        char xv[512];
        if (kind == OPT_ADAGRAD) {
            w_line(w, "const double %s = %s + %s * %s;", s0, ld, g, g);
            snprintf(xv, sizeof xv, "%s - %s * %s / (sqrt(%s) + %s)", x, f, g, s0,
                     attr_lit(a2, sizeof a2, n, ADAGRAD_EPSILON));
        } else if (kind == OPT_MOMENTUM) {
            attr_lit(a2, sizeof a2, n, MOMENTUM_ALPHA);
            w_line(w, "const double %s = %s * %s + %s * %s;", s0, a2, ld, f, g);
            if (nesterov) snprintf(xv, sizeof xv, "%s - %s * (%s + %s * %s)", x, r, g, a2, s0);
            else snprintf(xv, sizeof xv, "%s - %s * %s", x, r, s0);
        } else {
            double al = n->attrs[ADAM_ALPHA].f, be = n->attrs[ADAM_BETA].f;
            w_line(w, "const double %s = %s * %s + %s * %s;", s0, emit_float_lit(a2, sizeof a2, al, DT_F64), ld,
                   emit_float_lit(a3, sizeof a3, 1.0 - al, DT_F64), g);
            load_double(c, st1, e, ld, sizeof ld);
            w_line(w, "const double %s = %s * %s + %s * %s * %s;", s1, emit_float_lit(a2, sizeof a2, be, DT_F64), ld,
                   emit_float_lit(a3, sizeof a3, 1.0 - be, DT_F64), g, g);
            snprintf(xv, sizeof xv, "%s * (%s - %s * %s / (sqrt(%s) + %s))",
                     emit_float_lit(a4, sizeof a4, 1.0 - n->attrs[ADAM_NORM_COEFFICIENT_POST].f, DT_F64), x, f,
                     s0, s1, attr_lit(a2, sizeof a2, n, ADAM_EPSILON));
        }
        store_double(c, Xn, e, xv);
        store_double(c, st0n, e, s0);
        store_double(c, st1n, e, s1);
        w->indent--;
        w_line(w, "}");
    }
    w->indent--;
    w_line(w, "}");
    return 0;
}

static int emit_adagrad(Cgen *c, const Node *n, Diag *d) { return emit_optim(c, n, d, OPT_ADAGRAD); }
static int emit_momentum(Cgen *c, const Node *n, Diag *d) { return emit_optim(c, n, d, OPT_MOMENTUM); }
static int emit_adam(Cgen *c, const Node *n, Diag *d) { return emit_optim(c, n, d, OPT_ADAM); }

const CgenEntry cgen_optim_entries[] = {
    {OP_Adagrad, emit_adagrad, 0, NULL, 0},
    {OP_Momentum, emit_momentum, 0, NULL, 0},
    {OP_Adam, emit_adam, 0, NULL, 0},
    {-1, NULL, 0, NULL, 0},
};
