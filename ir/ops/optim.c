/* optim.c — operator descriptions of the optimizer family: Adagrad, Adam and
 * Momentum of the ONNX training domain "ai.onnx.preview.training" (version 1).
 *
 * Each op updates one or more tensors in one call. Its inputs are the scalar
 * learning rate R (float), the scalar update count T (i64), then the tensors
 * X_1..X_n, their gradients G_1..G_n and the optimizer state: H_1..H_n
 * (Adagrad), V_1..V_n (Momentum) or V_1..V_n, H_1..H_n (Adam). The outputs
 * are X_new_1..X_new_n followed by the new states in the same order. With
 * S states per tensor the op has 2 + (2 + S) * n inputs and (1 + S) * n
 * outputs; every G and state has exactly X's dtype and shape (the spec's
 * broadcasting never arises between a tensor and its own gradient).
 *
 * Per element, with g = norm_coefficient * x + gradient (the L2 term):
 *
 *   Adagrad:  h' = h + g*g
 *             x' = x - R / (1 + T * decay_factor) * g / (sqrt(h') + epsilon)
 *   Momentum: b  = T > 0 ? beta : 1;  v' = alpha * v + b * g
 *             x' = x - R * v'                  (mode "standard")
 *             x' = x - R * (g + alpha * v')    (mode "nesterov")
 *   Adam:     v' = alpha * v + (1 - alpha) * g
 *             h' = beta * h + (1 - beta) * g*g
 *             r  = T > 0 ? R * sqrt(1 - beta^T) / (1 - alpha^T) : R
 *             x' = (1 - norm_coefficient_post) * (x - r * v' / (sqrt(h') + epsilon))
 *
 * optim_step() is that arithmetic on doubles: the reference evaluation;
 * backend/c/emit_optim.c writes the same formulas as C.
 */
#include "../op.h"
#include "optim_attrs.h"

#include <math.h>
#include <string.h>

static const char *const optim_out[] = {"X_new"};
static const char *const adagrad_in[] = {"R", "T", "X", "G", "H"};
static const char *const momentum_in[] = {"R", "T", "X", "G", "V"};
static const char *const adam_in[] = {"R", "T", "X", "G", "V", "H"};

static const AttrSpec adagrad_attrs[] = {
    [ADAGRAD_DECAY_FACTOR] = {"decay_factor", ATTR_FLOAT, "0.0", 0},
    [ADAGRAD_EPSILON] = {"epsilon", ATTR_FLOAT, "1e-06", 0},
    [ADAGRAD_NORM_COEFFICIENT] = {"norm_coefficient", ATTR_FLOAT, "0.0", 0},
};
OP_ATTRS_CHECK(adagrad_attrs, ADAGRAD_COUNT);

static const AttrSpec momentum_attrs[] = {
    [MOMENTUM_ALPHA] = {"alpha", ATTR_FLOAT, NULL, 1},
    [MOMENTUM_BETA] = {"beta", ATTR_FLOAT, NULL, 1},
    [MOMENTUM_MODE] = {"mode", ATTR_STRING, NULL, 1},
    [MOMENTUM_NORM_COEFFICIENT] = {"norm_coefficient", ATTR_FLOAT, NULL, 1},
};
OP_ATTRS_CHECK(momentum_attrs, MOMENTUM_COUNT);

static const AttrSpec adam_attrs[] = {
    [ADAM_ALPHA] = {"alpha", ATTR_FLOAT, "0.9", 0},
    [ADAM_BETA] = {"beta", ATTR_FLOAT, "0.999", 0},
    [ADAM_EPSILON] = {"epsilon", ATTR_FLOAT, "1e-06", 0},
    [ADAM_NORM_COEFFICIENT] = {"norm_coefficient", ATTR_FLOAT, "0.0", 0},
    [ADAM_NORM_COEFFICIENT_POST] = {"norm_coefficient_post", ATTR_FLOAT, "0.0", 0},
};
OP_ATTRS_CHECK(adam_attrs, ADAM_COUNT);

static int optim_float(DType t)
{
    return t == DT_F32 || t == DT_F64 || t == DT_F16 || t == DT_BF16;
}

/* Number of state tensors per optimized tensor: 2 for Adam, else 1. */
static int optim_states(const Node *n)
{
    return !strcmp(ir_op(n->op)->name, "Adam") ? 2 : 1;
}

/* Checks the input/output layout and dtypes; sets the outputs. */
static int optim_infer(Node *n, Diag *d)
{
    const OpDesc *od = ir_op(n->op);
    int S = optim_states(n), k = 2 + S;
    if (n->n_in < 2 + k || (n->n_in - 2) % k != 0)
        return diag_node_error(d, n, "has %d inputs; expected R, T, then %d equally long lists (%s, ...)", n->n_in,
                               k, S == 2 ? "X, G, V, H" : od->in_names[4][0] == 'H' ? "X, G, H" : "X, G, V");
    int nt = (n->n_in - 2) / k;
    if (n->n_out != (1 + S) * nt)
        return diag_node_error(d, n, "has %d outputs; expected %d (X_new and %d state%s for each of %d tensors)",
                               n->n_out, (1 + S) * nt, S, S > 1 ? "s" : "", nt);
    for (int i = 0; i < n->n_in; i++)
        if (!n->in[i]) return diag_node_error(d, n, "input %d is absent; every input is required", i);
    const Value *r = n->in[0], *t = n->in[1];
    if (r->dtype != DT_F32 && r->dtype != DT_F64)
        return diag_node_error(d, n, "input 'R' has dtype %s; expected f32 or f64", ir_dtype_name(r->dtype));
    if (ir_numel(&r->shape) != 1) return diag_node_error(d, n, "input 'R' must be a scalar (one element)");
    if (t->dtype != DT_I64)
        return diag_node_error(d, n, "input 'T' has dtype %s; expected i64", ir_dtype_name(t->dtype));
    if (ir_numel(&t->shape) != 1) return diag_node_error(d, n, "input 'T' must be a scalar (one element)");
    for (int j = 0; j < nt; j++) {
        const Value *x = n->in[2 + j];
        char b1[160], b2[160];
        if (!optim_float(x->dtype))
            return diag_node_error(d, n, "input %d ('%s') has dtype %s; expected f32, f64, f16 or bf16", 2 + j,
                                   x->name, ir_dtype_name(x->dtype));
        for (int g = 1; g < k; g++) {
            const Value *v = n->in[2 + g * nt + j];
            if (v->dtype != x->dtype || !ir_shape_eq(&v->shape, &x->shape))
                return diag_node_error(d, n, "input %d ('%s') is %s%s but tensor '%s' is %s%s", 2 + g * nt + j,
                                       v->name, ir_dtype_name(v->dtype), ir_shape_str(&v->shape, b1, sizeof b1),
                                       x->name, ir_dtype_name(x->dtype), ir_shape_str(&x->shape, b2, sizeof b2));
        }
        for (int o = 0; o <= S; o++)
            if (n->out[o * nt + j]) ir_set_out(n, o * nt + j, x->dtype, &x->shape);
    }
    return 0;
}

static int momentum_infer(Node *n, Diag *d)
{
    const char *m = n->attrs[MOMENTUM_MODE].s;
    if (!m || (strcmp(m, "standard") && strcmp(m, "nesterov")))
        return diag_node_error(d, n, "attribute 'mode' is \"%s\"; expected \"standard\" or \"nesterov\"", m ? m : "");
    return optim_infer(n, d);
}

/* The update of element e of tensor j (see the file comment); st[s] points
 * at state s of that element, updated in place, x at the element of X. */
static double optim_step(const Node *n, double R, double T, double x, double grad, double *st)
{
    const char *op = ir_op(n->op)->name;
    const AttrVal *a = n->attrs;
    if (!strcmp(op, "Adagrad")) {
        double g = a[ADAGRAD_NORM_COEFFICIENT].f * x + grad, r = R / (1.0 + T * a[ADAGRAD_DECAY_FACTOR].f);
        st[0] += g * g;
        return x - r * g / (sqrt(st[0]) + a[ADAGRAD_EPSILON].f);
    }
    if (!strcmp(op, "Momentum")) {
        double g = a[MOMENTUM_NORM_COEFFICIENT].f * x + grad, b = T > 0 ? a[MOMENTUM_BETA].f : 1.0;
        st[0] = a[MOMENTUM_ALPHA].f * st[0] + b * g;
        if (!strcmp(a[MOMENTUM_MODE].s, "nesterov")) return x - R * (g + a[MOMENTUM_ALPHA].f * st[0]);
        return x - R * st[0];
    }
    double al = a[ADAM_ALPHA].f, be = a[ADAM_BETA].f;
    double g = a[ADAM_NORM_COEFFICIENT].f * x + grad;
    st[0] = al * st[0] + (1.0 - al) * g;
    st[1] = be * st[1] + (1.0 - be) * g * g;
    double r = T > 0 ? R * sqrt(1.0 - pow(be, T)) / (1.0 - pow(al, T)) : R;
    return (1.0 - a[ADAM_NORM_COEFFICIENT_POST].f) * (x - r * st[0] / (sqrt(st[1]) + a[ADAM_EPSILON].f));
}

static int optim_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    int S = optim_states(n), nt = (n->n_in - 2) / (2 + S);
    double R = in[0][0], T = in[1][0];
    for (int j = 0; j < nt; j++) {
        int64_t ne = ir_numel(&n->in[2 + j]->shape);
        for (int64_t e = 0; e < ne; e++) {
            double st[2];
            for (int s = 0; s < S; s++) st[s] = in[2 + (2 + s) * nt + j][e];
            double xn = optim_step(n, R, T, in[2 + j][e], in[2 + nt + j][e], st);
            if (out[j]) out[j][e] = xn;
            for (int s = 0; s < S; s++)
                if (out[(1 + s) * nt + j]) out[(1 + s) * nt + j][e] = st[s];
        }
    }
    return 0;
}

const OpDesc op_Adagrad = {
    .name = "Adagrad",
    .min_in = 5, .max_in = -1, .in_names = adagrad_in,
    .min_out = 2, .max_out = -1, .out_names = optim_out,
    OP_ATTRS(adagrad_attrs),
    .infer = optim_infer,
    .eval = optim_eval,
};

const OpDesc op_Momentum = {
    .name = "Momentum",
    .min_in = 5, .max_in = -1, .in_names = momentum_in,
    .min_out = 2, .max_out = -1, .out_names = optim_out,
    OP_ATTRS(momentum_attrs),
    .infer = momentum_infer,
    .eval = optim_eval,
};

const OpDesc op_Adam = {
    .name = "Adam",
    .min_in = 6, .max_in = -1, .in_names = adam_in,
    .min_out = 3, .max_out = -1, .out_names = optim_out,
    OP_ATTRS(adam_attrs),
    .infer = optim_infer,
    .eval = optim_eval,
};
