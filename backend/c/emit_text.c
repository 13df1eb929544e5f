/* emit_text.c — C emitter for TfIdfVectorizer (ir/ops/text.c).
 *
 * The grams that can count (ir_tfidf_selected(): length in
 * [min_gram_length, max_gram_length]) are written as static tables next to the call: pool positions,
 * lengths, output columns and weights (1 when the model gives none), plus
 * the pool itself. One call of gcrt_tfidf_i32 / _i64 (runtime/gcrt_text.h)
 * then fills Y, zeroing columns no counted gram maps to.
 */
#include "cgen.h"
#include "emit_common.h"
#include "../../ir/ops/text_attrs.h"
#include "../../ir/ops/geometry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int emit_tfidf(Cgen *c, const Node *n, Diag *d)
{
    Writer *w = cgen_w(c);
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
    int nf = ir_tfidf_selected(n, foff, flen, fcol, wt);
    GC_ASSERT(nf >= 0);
    char name[5][64];
    static const char *const base[5] = {"tfidf_pool", "tfidf_off", "tfidf_len", "tfidf_col", "tfidf_weight"};
    for (int i = 0; i < 5; i++) snprintf(name[i], sizeof name[i], "%s", cgen_tmp(c, base[i]));
    w_line(w, "{");
    w->indent++;
    emit_i64_array(w, name[0], pool->ints, pool->n);
    emit_i64_array(w, name[1], foff, nf);
    emit_i64_array(w, name[2], flen, nf);
    emit_i64_array(w, name[3], fcol, nf);
    w_printf(w, "static const float %s[%d] = {", name[4], nf > 0 ? nf : 1);
    for (int i = 0; i < nf; i++) {
        char lit[48];
        w_printf(w, "%s%s", i ? ", " : "", emit_float_lit(lit, sizeof lit, wt[i], DT_F32));
    }
    w_printf(w, "%s};\n", nf ? "" : "0.0f");
    const Shape *xs = &X->shape;
    int64_t rows = xs->rank == 2 ? xs->dims[0] : 1;
    char px[EMIT_EXPR_CAP], py[EMIT_EXPR_CAP];
    w_line(w, "gcrt_tfidf_%s(%lld, %lld, %s, %d, %s, %s, %s, %s, %s, %s, %lld, %lld, %s);",
           X->dtype == DT_I32 ? "i32" : "i64", (long long)rows, (long long)xs->dims[xs->rank - 1],
           emit_ptr_name(c, X, px), nf, name[1], name[2], name[0], name[3], name[4],
           !strcmp(mode, "TF") ? "GCRT_TFIDF_TF" : !strcmp(mode, "IDF") ? "GCRT_TFIDF_IDF" : "GCRT_TFIDF_TFIDF",
           (long long)n->attrs[TFIDF_MAX_SKIP_COUNT].i, (long long)Y->shape.dims[Y->shape.rank - 1],
           emit_ptr_name(c, Y, py));
    w->indent--;
    w_line(w, "}");
    free(foff);
    free(wt);
    return 0;
}

const CgenEntry cgen_text_entries[] = {
    {OP_TfIdfVectorizer, emit_tfidf, CGEN_RT_text, NULL, 0},
    {-1, NULL, 0, NULL, 0},
};
