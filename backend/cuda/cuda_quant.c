/* cuda_quant.c — the CUDA backend's generated kernels for QuantizeLinear
 * and DequantizeLinear (see cuda_emit.h): one thread per element, the
 * arithmetic of the C backend (backend/c/emit_quant.c) and the reference
 * (ir/ops/quant.c), so all give the same integers: x / scale divided in
 * float for float32 tensors and in double otherwise, rounded half to even
 * (rint), plus the zero point, saturated to the output's range; per-axis
 * parameters indexed by ir_quant_axis_geometry.
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/geometry.h"

#include <stdio.h>
#include <string.h>

static int quant_check(const Node *n, Diag *d)
{
    int64_t nch, inner;
    if (ir_quant_axis_geometry(n, &nch, &inner)) return diag_node_error(d, n, "invalid quantization axis");
    DType q = n->op == OP_QuantizeLinear ? n->out[0]->dtype : n->in[0]->dtype;
    if (q != DT_U8 && q != DT_I8 && q != DT_I32)
        return diag_node_error(d, n, "the CUDA backend quantizes to u8, i8 and i32 only, got %s", ir_dtype_name(q));
    return 0;
}

/* Into a kernel over elements i: `const int64_t ch` the parameters' element
 * of element i (0 when per tensor); written only when a parameter has
 * more than one element. */
static void param_index(Writer *w, const Node *n)
{
    int64_t nch, inner;
    GC_ASSERT(ir_quant_axis_geometry(n, &nch, &inner) == 0);
    if (nch == 1) w_puts(w, "        const int64_t ch = 0;\n");
    else w_printf(w, "        const int64_t ch = i / %lld %% %lld;\n", (long long)inner, (long long)nch);
}

/* v[ch], or v[0] when v holds one value. */
static const char *param(char *buf, size_t cap, const char *name, const Value *v)
{
    snprintf(buf, cap, "%s[%s]", name, ir_numel(&v->shape) == 1 ? "0" : "ch");
    return buf;
}

static int emit_quant(Cu *c, const Node *n, Diag *d)
{
    (void)d;
    const Value *X = n->in[0], *S = n->in[1], *Z = n->n_in > 2 ? n->in[2] : NULL, *Y = n->out[0];
    const int64_t total = ir_numel(&X->shape);
    if (total == 0) return 0;
    const int q = n->op == OP_QuantizeLinear;
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    w_printf(w, "GC_KERNEL k%d(%s *y, const %s *x, const %s *sc", kn, cfam_ctype(Y->dtype), cfam_ctype(X->dtype), cfam_ctype(S->dtype));
    if (Z) w_printf(w, ", const %s *zp", cfam_ctype(Z->dtype));
    w_printf(w, ")\n{\n    GC_FOR_EACH(i, %lld) {\n", (long long)total);
    if (ir_numel(&S->shape) > 1 || (Z && ir_numel(&Z->shape) > 1)) param_index(w, n);
    char ps[32], pz[32];
    param(ps, sizeof ps, "sc", S);
    if (Z) param(pz, sizeof pz, "zp", Z);
    if (q) {
        const int dbl = X->dtype == DT_F64 || S->dtype == DT_F64 || ir_dtype_is_int(X->dtype);
        const DType t = Y->dtype;
        const char *lo = t == DT_I8 ? "-128.0" : t == DT_U8 ? "0.0" : "-2147483648.0";
        const char *hi = t == DT_I8 ? "127.0" : t == DT_U8 ? "255.0" : "2147483647.0";
        w_puts(w, "        const double v = ");
        cu_load(w, X->dtype, "x[i]");
        w_puts(w, ";\n");
        if (dbl) w_printf(w, "        const double q = rint(v / (double)%s)", ps);
        else w_printf(w, "        const double q = rint((double)((float)v / (float)%s))", ps);
        w_printf(w, " + %s%s;\n", Z ? "(double)" : "0.0", Z ? pz : "");
        w_printf(w, "        y[i] = (%s)(q < %s ? %s : q > %s ? %s : q);\n", cfam_ctype(t), lo, lo, hi, hi);
    } else {
        const char *ct = S->dtype == DT_F64 ? "double" : "float";
        char val[160];
        snprintf(val, sizeof val, "(%s)((int64_t)x[i] - %s%s) * %s", ct, Z ? "(int64_t)" : "0", Z ? pz : "", ps);
        w_puts(w, "        ");
        cu_store(w, Y->dtype, "y[i]", val);
    }
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s, %s", kn, (long long)total, cu_ptr(c, Y), cu_ptr(c, X), cu_ptr(c, S));
    if (Z) w_printf(&c->body, ", %s", cu_ptr(c, Z));
    w_puts(&c->body, "));\n");
    return 0;
}

const CudaEntry cuda_quant_entries[] = {
    {OP_QuantizeLinear, quant_check, emit_quant, NULL, "a generated kernel, one thread per element", 1},
    {OP_DequantizeLinear, quant_check, emit_quant, NULL, "a generated kernel, one thread per element", 1},
    {-1, NULL, NULL, NULL, NULL, 0},
};
