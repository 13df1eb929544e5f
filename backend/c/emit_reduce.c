/* emit_reduce.c — C emitters for ReduceSum, ReduceMean, ReduceMax,
 * ReduceMin, ReduceL1, ReduceL2, ReduceLogSum, ReduceLogSumExp, ReduceProd
 * and ReduceSumSquare.
 *
 * A reduction is emitted as plain nested loops with no workspace: the
 * input's axes are split into kept and reduced axes (any set, contiguous or
 * not), size-1 axes are dropped and neighbouring axes of the same class are
 * merged. Sizes and strides are CgenProd products (cgen.h): constants for a
 * static shape, which prints the literals it always did, and products of
 * shape-table entries for runtime dims (never dropped: one may be 1). An
 * integer max/min over a runtime dim that can be 0 first returns
 * NAME_ERR_SHAPE when the reduced count is 0 and the output is not empty
 * (reduce.c); a float one gives its initial -inf/+inf.
 *
 * The outer loops run over the kept axes in order, which is exactly row-major order of the output, so
 * the output index is a running counter; the inner loops run over the
 * reduced axes. Each output element accumulates in float for the float
 * dtypes (f32, f16, bf16) and in double for f64 and the integers (loaded and
 * stored with cgen_load / cgen_store); sums are compensated
 * (gcrt_ksum_add_*, gcrt_base.h), so float results stay within a few ulps
 * of the double reference evaluation without double arithmetic, which a
 * single-precision FPU would run in software. Max/min propagate NaN like numpy; the mean
 * of nothing is 0/0 = NaN, the sum of nothing is 0, the product 1.
 * ReduceLogSumExp runs the reduced loops twice: the maximum m first, then
 * m + log(sum exp(x - m)) (m itself when it is infinite or NaN), as the
 * reference does.
 */
#include "cgen.h"
#include "emit_dynshape.h"
#include "../../ir/ops/geometry.h"
#include "../../ir/ops/reduce_attrs.h"

#include <stdio.h>
#include <string.h>

#define IDX_CAP 1024


/* Appends " + var * stride" (or the first term) to an index expression;
 * a runtime stride prints as its product of shape-table entries. */
static void idx_term(char *buf, const char *var, const CgenProd *stride)
{
    size_t k = strlen(buf);
    const char *sep = k ? " + " : "";
    char b[160];
    if (cgen_prod_is(stride, 1)) snprintf(buf + k, IDX_CAP - k, "%s%s", sep, var);
    else snprintf(buf + k, IDX_CAP - k, "%s%s * %s", sep, var, cgen_prod_str(stride, b, sizeof b));
}

/* The accumulator of a reduction over dtype t: its C type, the suffix of its
 * compensated sum, and its math functions. */
typedef struct RedAcc {
    const char *type, *sfx, *fabs, *exp, *log, *sqrt;
} RedAcc;

static RedAcc red_acc(DType t)
{
    static const RedAcc f = {"float", "f32", "fabsf", "gcrt_expf", "gcrt_logf", "sqrtf"};
    static const RedAcc d = {"double", "f64", "fabs", "exp", "log", "sqrt"};
    return t == DT_F32 || t == DT_F16 || t == DT_BF16 ? f : d;
}

typedef enum RedStep { RED_STEP_SUM, RED_STEP_MAX, RED_STEP_MIN, RED_STEP_ABS, RED_STEP_SQ,
                       RED_STEP_MUL, RED_STEP_EXP } RedStep;

static RedStep red_step_of(const Node *n)
{
    if (n->op == OP_ReduceMax) return RED_STEP_MAX;
    if (n->op == OP_ReduceMin) return RED_STEP_MIN;
    if (n->op == OP_ReduceL1) return RED_STEP_ABS;
    if (n->op == OP_ReduceL2 || n->op == OP_ReduceSumSquare) return RED_STEP_SQ;
    if (n->op == OP_ReduceProd) return RED_STEP_MUL;
    return RED_STEP_SUM; /* sum, mean, log-sum */
}

/* Writes the reduced loop nest folding every element of the current output
 * element into `acc` with `step` (sums into acc + acc_c, compensated; `mx`:
 * the maximum, for RED_STEP_EXP). `kept_idx` is the index expression of the
 * kept axes. */
static void reduce_loops(Cgen *c, const Node *n, const int *cls, const CgenProd *size, const CgenProd *stride,
                         int m, const char *kept_idx, const char *bx, const char *v, RedStep step,
                         const char *acc, const char *mx)
{
    RedAcc a = red_acc(n->in[0]->dtype);
    Writer *w = cgen_w(c);
    char idx[IDX_CAP];
    snprintf(idx, sizeof idx, "%s", kept_idx);
    w_line(w, "{");
    w->indent++;
    int open = 1;
    for (int j = m - 1; j >= 0; j--) {
        if (!cls[j]) continue;
        const char *r = cgen_tmp(c, "r");
        char b[160];
        w_line(w, "for (int64_t %s = 0; %s < %s; %s++) {", r, r, cgen_prod_str(&size[j], b, sizeof b), r);
        w->indent++;
        open++;
        idx_term(idx, r, &stride[j]);
    }
    if (!idx[0]) snprintf(idx, sizeof idx, "0");
    w_printf(w, "%s %s = (%s)(", a.type, v, a.type);
    cgen_load(w, n->in[0]->dtype, bx, idx);
    w_printf(w, ");\n");
    switch (step) {
    case RED_STEP_MAX: w_line(w, "if (%s != %s || %s > %s) %s = %s;", v, v, v, acc, acc, v); break;
    case RED_STEP_MIN: w_line(w, "if (%s != %s || %s < %s) %s = %s;", v, v, v, acc, acc, v); break;
    case RED_STEP_ABS: w_line(w, "gcrt_ksum_add_%s(&%s, &%s_c, %s(%s));", a.sfx, acc, acc, a.fabs, v); break;
    case RED_STEP_SQ: w_line(w, "gcrt_ksum_add_%s(&%s, &%s_c, %s * %s);", a.sfx, acc, acc, v, v); break;
    case RED_STEP_MUL: w_line(w, "%s *= %s;", acc, v); break;
    case RED_STEP_EXP: w_line(w, "gcrt_ksum_add_%s(&%s, &%s_c, %s(%s - %s));", a.sfx, acc, acc, a.exp, v, mx); break;
    default: w_line(w, "gcrt_ksum_add_%s(&%s, &%s_c, %s);", a.sfx, acc, acc, v); break;
    }
    for (int j = 0; j < open; j++) {
        w->indent--;
        w_line(w, "}");
    }
}

static int emit_reduce(Cgen *c, const Node *n, Diag *d)
{
    if (n->op == OP_ReduceSum && cgen_operand_at_run_time(n, 1) && ir_numel(&n->in[1]->shape) != 0)
        return cgen_emit_reduce_sum_dyn(c, n, d);
    Writer *w = cgen_w(c);
    const Value *x = n->in[0], *y = n->out[0];
    const Shape *xs = &x->shape;
    int mask[IR_MAX_RANK];
    int rc = ir_reduce_mask(n, mask, NULL);
    if (rc < 0) return diag_node_error(d, n, "reduction axes must be constant and valid (run shape inference first)");
    int64_t on = ir_numel(&y->shape);
    if (on == 0) {
        w_line(w, "/* empty reduction output */");
        return 0;
    }
    char bx[256], by[256], pb[160], qb[160];
    snprintf(bx, sizeof bx, "%s", cgen_ptr(c, x));
    snprintf(by, sizeof by, "%s", cgen_ptr(c, y));
    size_t es = ir_dtype_size(x->dtype);
    CgenProd onp = cgen_dims_prod(&y->shape, 0, y->shape.rank);
    if (rc == 1) {
        CgenProd esp = cgen_prod((int64_t)es), bytes = cgen_prod_mul(&onp, &esp);
        w_line(w, "if ((const void *)%s != (const void *)%s) memcpy(%s, %s, %s);", by, bx, by, bx,
               cgen_prod_str(&bytes, pb, sizeof pb));
        return 0;
    }
    /* merged axes, innermost first: class (1 = reduced), size, input stride
     * (neighbours of one class merge; a static 1 drops out, a runtime dim
     * never does) */
    int cls[IR_MAX_RANK], m = 0;
    CgenProd size[IR_MAX_RANK], stride[IR_MAX_RANK], st = cgen_prod(1), count = cgen_prod(1);
    int empty_in = ir_numel(xs) == 0; /* then a reduced dim is 0: no loop body runs */
    for (int k = xs->rank - 1; k >= 0; k--) {
        /* an empty input's other reduced dims may be huge: as 1 their products cannot overflow */
        CgenProd dk = cgen_prod(1);
        if (!(empty_in && mask[k] && !xs->sym[k] && xs->dims[k])) cgen_prod_mul_dim(&dk, xs, k);
        if (mask[k]) count = cgen_prod_mul(&count, &dk);
        if (!cgen_prod_is(&dk, 1)) {
            if (m > 0 && cls[m - 1] == mask[k]) {
                size[m - 1] = cgen_prod_mul(&size[m - 1], &dk);
            } else {
                cls[m] = mask[k];
                size[m] = dk;
                stride[m] = st;
                m++;
            }
        }
        st = cgen_prod_mul(&st, &dk);
    }
    int is_max = n->op == OP_ReduceMax, is_min = n->op == OP_ReduceMin, may_be_empty = 0;
    for (int k = 0; k < xs->rank; k++) may_be_empty |= mask[k] && xs->sym[k] && ir_sym(cgen_graph(c), xs->sym[k])->lo == 0;
    if ((is_max || is_min) && may_be_empty && !ir_dtype_is_float(x->dtype))
        /* an integer max/min over nothing has no value (reduce.c): a runtime count of 0 stops the run */
        w_line(w, "if (%s == 0%s%s%s) return %s;", cgen_prod_str(&count, pb, sizeof pb), onp.n ? " && " : "",
               onp.n ? cgen_prod_str(&onp, qb, sizeof qb) : "", onp.n ? " != 0" : "", cgen_err_shape(c));
    /* cls/size/stride were built innermost first; loops go outermost first */
    int is_lse = n->op == OP_ReduceLogSumExp, is_prod = n->op == OP_ReduceProd;
    RedAcc a = red_acc(x->dtype);
    const char *init = is_max ? "-INFINITY" : is_min ? "INFINITY" : "1";
    char idx[IDX_CAP] = "", o[64], acc[64], mx[64], v[64];
    snprintf(o, sizeof o, "%s", cgen_tmp(c, "o"));
    snprintf(acc, sizeof acc, "%s", cgen_tmp(c, "acc"));
    snprintf(mx, sizeof mx, "%s", cgen_tmp(c, "mx"));
    snprintf(v, sizeof v, "%s", cgen_tmp(c, "v"));
    w_line(w, "{");
    w->indent++;
    w_line(w, "int64_t %s = 0;", o);
    int n_kept = 0;
    for (int j = m - 1; j >= 0; j--) {
        if (cls[j]) continue;
        const char *k = cgen_tmp(c, "k");
        w_line(w, "for (int64_t %s = 0; %s < %s; %s++) {", k, k, cgen_prod_str(&size[j], pb, sizeof pb), k);
        w->indent++;
        n_kept++;
        idx_term(idx, k, &stride[j]);
    }
    if (is_lse) {
        w_line(w, "%s %s = -INFINITY;", a.type, mx);
        reduce_loops(c, n, cls, size, stride, m, idx, bx, v, RED_STEP_MAX, mx, NULL);
        w_line(w, "%s %s = 0, %s_c = 0;", a.type, acc, acc);
        reduce_loops(c, n, cls, size, stride, m, idx, bx, v, RED_STEP_EXP, acc, mx);
    } else {
        if (is_max || is_min || is_prod) w_line(w, "%s %s = %s;", a.type, acc, init);
        else w_line(w, "%s %s = 0, %s_c = 0;", a.type, acc, acc);
        reduce_loops(c, n, cls, size, stride, m, idx, bx, v, red_step_of(n), acc, NULL);
    }
    char val[512];
    if (n->op == OP_ReduceMean && count.n == 0)
        snprintf(val, sizeof val, "(%s + %s_c) / (%s)%lld", acc, acc, a.type, (long long)count.c);
    else if (n->op == OP_ReduceMean) /* a runtime count, 0 included: 0 / 0 is NaN, numpy's mean of nothing */
        snprintf(val, sizeof val, "(%s + %s_c) / (%s)(%s)", acc, acc, a.type, cgen_prod_str(&count, pb, sizeof pb));
    else if (n->op == OP_ReduceL2) snprintf(val, sizeof val, "%s(%s + %s_c)", a.sqrt, acc, acc);
    else if (n->op == OP_ReduceLogSum) snprintf(val, sizeof val, "%s(%s + %s_c)", a.log, acc, acc);
    else if (is_lse)
        snprintf(val, sizeof val, "(%s - %s == 0) ? %s + %s(%s + %s_c) : %s", mx, mx, mx, a.log, acc, acc, mx);
    else if (is_max || is_min || is_prod) snprintf(val, sizeof val, "%s", acc);
    else snprintf(val, sizeof val, "%s + %s_c", acc, acc);
    cgen_store(w, y->dtype, by, o, val);
    w_line(w, "%s++;", o);
    for (int j = 0; j < n_kept; j++) {
        w->indent--;
        w_line(w, "}");
    }
    w->indent--;
    w_line(w, "}");
    return 0;
}

const CgenEntry cgen_reduce_entries[] = {
    {OP_ReduceMean, emit_reduce, 0, NULL, 1},
    {OP_ReduceSum, emit_reduce, 0, NULL, 1},
    {OP_ReduceMax, emit_reduce, 0, NULL, 1},
    {OP_ReduceMin, emit_reduce, 0, NULL, 1},
    {OP_ReduceL1, emit_reduce, 0, NULL, 1},
    {OP_ReduceL2, emit_reduce, 0, NULL, 1},
    {OP_ReduceLogSum, emit_reduce, 0, NULL, 1},
    {OP_ReduceLogSumExp, emit_reduce, 0, NULL, 1},
    {OP_ReduceProd, emit_reduce, 0, NULL, 1},
    {OP_ReduceSumSquare, emit_reduce, 0, NULL, 1},
    {-1, NULL, 0, NULL, 0},
};
