/* cuda_text.c — the CUDA backend's generated kernel for TfIdfVectorizer
 * (see cuda_emit.h): the grams that can count (ir_tfidf_selected():
 * length in [min_gram_length, max_gram_length]) as GC_TABLE constants
 * (pool, positions, lengths, output columns, weights); one thread per row zeroes its output row and
 * counts each gram in order with up to max_skip skips (the C runtime's
 * rules, runtime/c/gcrt_text.c: a later gram mapped to the same column
 * wins).
 */
#include "cuda_emit.h"
#include "../cfamily/cfam_expr.h"
#include "../../ir/ops/geometry.h"
#include "../../ir/ops/text_attrs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void table(Writer *w, const char *type, int kn, const char *name, const int64_t *v, int n)
{
    w_printf(w, "GC_TABLE %s k%d_%s[%d] = {", type, kn, name, n > 0 ? n : 1);
    for (int i = 0; i < n; i++) w_printf(w, "%s%lld", i ? ", " : "", (long long)v[i]);
    w_puts(w, n ? "};\n" : "0};\n");
}

static int tfidf_check(const Node *n, Diag *d)
{
    DType t = n->in[0]->dtype;
    return t == DT_I32 || t == DT_I64 ? 0 : diag_node_error(d, n, "the CUDA backend's TfIdfVectorizer takes i32 or i64 input");
}

static int emit_tfidf(Cu *c, const Node *n, Diag *d)
{
    const Value *X = n->in[0], *Y = n->out[0];
    const AttrVal *pool = &n->attrs[TFIDF_POOL_INT64S];
    const char *mode = n->attrs[TFIDF_MODE].s;
    if (ir_numel(&Y->shape) == 0) return 0;
    int64_t *foff = calloc((size_t)(3 * pool->n + 3), sizeof(int64_t));
    double *wt = calloc((size_t)(pool->n + 1), sizeof(double));
    if (!foff || !wt) {
        free(foff);
        free(wt);
        return diag_node_error(d, n, "out of memory");
    }
    int64_t *flen = foff + pool->n + 1, *fcol = flen + pool->n + 1;
    const int nf = ir_tfidf_selected(n, foff, flen, fcol, wt);
    GC_ASSERT(nf >= 0);
    const Shape *xs = &X->shape;
    const int64_t rows = xs->rank == 2 ? xs->dims[0] : 1, C = xs->dims[xs->rank - 1], Wd = Y->shape.dims[Y->shape.rank - 1];
    const int64_t max_skip = n->attrs[TFIDF_MAX_SKIP_COUNT].i;
    Writer *w = &c->kern;
    const int kn = cu_kernel_begin(c, n);
    if (nf > 0) {
        table(w, "int64_t", kn, "pool", pool->ints, pool->n);
        table(w, "int64_t", kn, "off", foff, nf);
        table(w, "int64_t", kn, "len", flen, nf);
        table(w, "int64_t", kn, "col", fcol, nf);
        if (strcmp(mode, "TF") != 0) { /* TF counts only */
            w_printf(w, "GC_TABLE float k%d_weight[%d] = {", kn, nf);
            for (int i = 0; i < nf; i++) {
                char lit[48];
                w_printf(w, "%s%s", i ? ", " : "", cfam_lit(lit, sizeof lit, DT_F32, wt[i]));
            }
            w_puts(w, "};\n");
        }
    }
    w_printf(w, "GC_KERNEL k%d(float *y, const %s *x)\n{\n    GC_FOR_EACH(r, %lld) {\n", kn, cfam_ctype(X->dtype), (long long)rows);
    w_printf(w, "        float *yr = y + r * %lld;\n", (long long)Wd);
    w_printf(w, "        for (int64_t j = 0; j < %lld; j++) yr[j] = 0.0f;\n", (long long)Wd);
    if (nf > 0) {
        w_printf(w, "        const %s *xr = x + r * %lld;\n", cfam_ctype(X->dtype), (long long)C);
        w_printf(w, "        for (int64_t g = 0; g < %d; g++) {\n", nf);
        w_printf(w, "            const int64_t n = k%d_len[g], dmax = n == 1 ? 1 : %lld;\n            int64_t count = 0;\n", kn,
                 (long long)(max_skip + 1));
        w_printf(w, "            const int64_t *gram = k%d_pool + k%d_off[g];\n", kn, kn);
        w_puts(w, "            for (int64_t dist = 1; dist <= dmax; dist++)\n");
        w_printf(w, "                for (int64_t s = 0; s + dist * (n - 1) < %lld; s++) {\n", (long long)C);
        w_puts(w, "                    int64_t k = 0;\n");
        w_puts(w, "                    while (k < n && (int64_t)xr[s + k * dist] == gram[k]) k++;\n");
        w_puts(w, "                    count += k == n;\n                }\n");
        if (!strcmp(mode, "TF")) w_printf(w, "            yr[k%d_col[g]] = (float)count;\n", kn);
        else if (!strcmp(mode, "IDF")) w_printf(w, "            yr[k%d_col[g]] = count > 0 ? k%d_weight[g] : 0.0f;\n", kn, kn);
        else w_printf(w, "            yr[k%d_col[g]] = (float)count * k%d_weight[g];\n", kn, kn);
        w_puts(w, "        }\n");
    } else {
        w_puts(w, "        (void)x;\n");
    }
    w_puts(w, "    }\n}\n\n");
    w_printf(&c->body, "    GC_LAUNCH(k%d, %lld, stream, (%s, %s));\n", kn, (long long)rows, cu_ptr(c, Y), cu_ptr(c, X));
    free(foff);
    free(wt);
    return 0;
}

const CudaEntry cuda_text_entries[] = {
    {OP_TfIdfVectorizer, tfidf_check, emit_tfidf, NULL, "a generated kernel, one thread per row (the gram tables as device constants)", 0, 0},
    {-1, NULL, NULL, NULL, NULL, 0, 0},
};
