/* cfam_eval.c — compile-time evaluation of a node (see cfam_eval.h). */
#include "cfam_eval.h"
#include "../../ir/op.h"

#include <stdlib.h>

unsigned char *cfam_eval_bytes(const Node *n, const char *backend, size_t *nb, Diag *d)
{
    const Value *y = n->out[0];
    int64_t cnt = ir_numel(&y->shape);
    size_t es = ir_dtype_size(y->dtype);
    if (ir_value_bytes(y) > CFAM_EVAL_MAX_BYTES) {
        /* Its inputs are constant (or folding was off): the size is what stops it, so say so. */
        char s[256];
        diag_node_error(d, n,
                        "output '%s' would be %lld bytes (%s %s): the %s backend evaluates %s at compile time and "
                        "embeds the result, at most %lld bytes",
                        y->name, (long long)ir_value_bytes(y), ir_dtype_name(y->dtype), ir_shape_str(&y->shape, s, sizeof s),
                        backend, ir_op(n->op)->name, (long long)CFAM_EVAL_MAX_BYTES);
        return NULL;
    }
    double *ins[8] = {0};
    double *vals = calloc((size_t)(cnt ? cnt : 1), sizeof(double));
    unsigned char *bytes = calloc((size_t)(cnt ? cnt : 1), es);
    if (!vals || !bytes) {
        free(vals);
        free(bytes);
        diag_node_error(d, n, "out of memory evaluating output '%s' (%lld bytes) at compile time", y->name,
                        (long long)ir_value_bytes(y));
        return NULL;
    }
    int rc = n->n_in > 8;
    for (int i = 0; !rc && i < n->n_in; i++) {
        const Value *v = n->in[i];
        if (!v) continue;
        if (v->kind != VK_CONST) {
            rc = 1;
            break;
        }
        int64_t k = ir_numel(&v->shape);
        ins[i] = calloc((size_t)(k ? k : 1), sizeof(double));
        if (!ins[i]) rc = 3;
        for (int64_t j = 0; !rc && j < k; j++) ins[i][j] = ir_load_f64(v->dtype, v->data, (size_t)j);
    }
    if (!rc) {
        double *outs[1] = {vals};
        rc = !ir_outputs_empty(n) && ir_op(n->op)->eval(n, (const double *const *)ins, outs, d) ? 2 : 0;
    }
    for (int i = 0; i < 8; i++) free(ins[i]);
    if (rc) {
        free(vals);
        free(bytes);
        if (rc == 1) diag_node_error(d, n, "the %s backend needs constant inputs to evaluate %s", backend, ir_op(n->op)->name);
        if (rc == 3) diag_node_error(d, n, "out of memory reading the constant inputs of %s at compile time", ir_op(n->op)->name);
        return NULL;
    }
    for (int64_t i = 0; i < cnt; i++) ir_store_f64(y->dtype, bytes, (size_t)i, vals[i]);
    free(vals);
    *nb = (size_t)cnt * es;
    return bytes;
}
