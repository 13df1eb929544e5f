/* emit_text.c — C emitter for TfIdfVectorizer (ir/ops/text.c).
 *
 * The gram layout from ir_tfidf_grams() is filtered to the grams whose
 * length lies in [min_gram_length, max_gram_length] (the others never
 * count) and written as static tables next to the call: pool positions,
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
    const AttrVal *pool = &n->attrs[TFIDF_POOL_INT64S], *cols = &n->attrs[TFIDF_NGRAM_INDEXES];
    const AttrVal *wts = &n->attrs[TFIDF_WEIGHTS];
    int64_t lo = n->attrs[TFIDF_MIN_GRAM_LENGTH].i, hi = n->attrs[TFIDF_MAX_GRAM_LENGTH].i;
    const char *mode = n->attrs[TFIDF_MODE].s;
    if (ir_numel(&Y->shape) == 0) return 0;
    int64_t *tab = calloc((size_t)(5 * pool->n + 5), sizeof(int64_t));
    float *wt = calloc((size_t)(pool->n + 1), sizeof(float));
    if (!tab || !wt) {
        free(tab);
        free(wt);
        return diag_node_error(d, n, "out of memory");
    }
    int64_t *off = tab, *len = tab + pool->n + 1, *foff = len + pool->n + 1, *flen = foff + pool->n + 1;
    int64_t *fcol = flen + pool->n + 1;
    int ng = ir_tfidf_grams(n, off, len), nf = 0;
    GC_ASSERT(ng >= 0);
    for (int g = 0; g < ng; g++)
        if (len[g] >= lo && len[g] <= hi) {
            foff[nf] = off[g];
            flen[nf] = len[g];
            fcol[nf] = cols->ints[g];
            wt[nf++] = wts->set ? (float)wts->floats[g] : 1.0f;
        }
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
    free(tab);
    free(wt);
    return 0;
}

const CgenEntry cgen_text_entries[] = {
    {OP_TfIdfVectorizer, emit_tfidf, CGEN_RT_text, NULL, 0},
    {-1, NULL, 0, NULL, 0},
};
