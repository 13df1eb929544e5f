/* cuda_signal.c — the CUDA backend's generated kernels for the signal
 * family (see cuda_emit.h): Einsum, one thread per output element over the
 * op's EinsumPlan (ir/ops/signal.h): the output labels decoded from the
 * element's index, the summed labels one flat loop, every operand
 * addressed by the plan's strides; the sum in double for float dtypes and
 * in int64_t for integers (the C backend's rules, backend/c/emit_signal.c).
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/signal.h"

#include <stdio.h>
#include <string.h>

static int einsum_check(const Node *n, Diag *d)
{
    EinsumPlan p;
    if (signal_einsum_plan(n, &p, d)) return -1;
    return n->out[0]->dtype == DT_BOOL ? diag_node_error(d, n, "the CUDA backend's Einsum takes numbers only") : 0;
}

static int emit_einsum(Cu *c, const Node *n, Diag *d)
{
    EinsumPlan p;
    if (signal_einsum_plan(n, &p, d)) return -1;
    const Value *Y = n->out[0];
    const int64_t total = ir_numel(&Y->shape);
    if (total == 0) return 0;
    const DType t = Y->dtype;
    const char *at = ir_dtype_is_float(t) ? "double" : "int64_t";
    int64_t nsum = 1;
    for (int l = p.n_out; l < p.n_loops; l++) nsum *= p.size[l];
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y", kn, cfam_ctype(t));
    for (int op = 0; op < p.n_ops; op++) w_printf(w, ", const %s *a%d", cfam_ctype(n->in[op]->dtype), op);
    w_printf(w, ")\n{\n    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    /* each label's index by one / and one %, added into each operand's offset */
    int64_t inner[EINSUM_MAX_LABELS];
    int64_t acc_in = 1;
    for (int l = p.n_out - 1; l >= 0; l--) inner[l] = acc_in, acc_in *= p.size[l];
    acc_in = 1;
    for (int l = p.n_loops - 1; l >= p.n_out; l--) inner[l] = acc_in, acc_in *= p.size[l];
    w_printf(w, "        %s acc = 0;\n", at);
    if (nsum == 0) { /* an empty summed label: the sum of nothing */
        for (int op = 0; op < p.n_ops; op++) w_printf(w, "        (void)a%d;\n", op);
    } else {
        for (int op = 0; op < p.n_ops; op++) {
            w_printf(w, "        const int64_t o%d = 0", op);
            for (int l = 0; l < p.n_out; l++)
                if (p.stride[op][l])
                    w_printf(w, " + i / %lld %% %lld * %lld", (long long)inner[l], (long long)p.size[l], (long long)p.stride[op][l]);
            w_puts(w, ";\n");
        }
        w_printf(w, "        for (int64_t s = 0; s < %lld; s++) {\n            acc += ", (long long)nsum);
        for (int op = 0; op < p.n_ops; op++) {
            Writer e;
            w_init(&e);
            w_printf(&e, "a%d[o%d", op, op);
            for (int l = p.n_out; l < p.n_loops; l++)
                if (p.stride[op][l])
                    w_printf(&e, " + s / %lld %% %lld * %lld", (long long)inner[l], (long long)p.size[l], (long long)p.stride[op][l]);
            w_puts(&e, "]");
            w_printf(w, "%s(%s)(", op ? " * " : "", at);
            cu_load(w, n->in[op]->dtype, cu_wtext(&e));
            w_puts(w, ")");
            w_free(&e);
        }
        w_puts(w, ";\n        }\n");
    }
    w_puts(w, "        ");
    char val[64];
    snprintf(val, sizeof val, "(%s)acc", cfam_ctype(cu_compute_type(t)));
    cu_store(w, t, "y[i]", val);
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s", kn, (long long)total, cu_ptr(c, Y));
    for (int op = 0; op < p.n_ops; op++) w_printf(&c->body, ", %s", cu_ptr(c, n->in[op]));
    w_puts(&c->body, "));\n");
    return 0;
}

const CudaEntry cuda_signal_entries[] = {
    {OP_Einsum, einsum_check, emit_einsum, NULL, "a generated kernel, one thread per output element", 1},
    {-1, NULL, NULL, NULL, NULL, 0},
};
