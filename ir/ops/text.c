/* text.c — operator descriptions of the text family: TfIdfVectorizer (ONNX
 * opset 9), the n-gram counter over integer token sequences.
 *
 * The pool of n-grams is the attribute pool_int64s, grouped by length:
 * ngram_counts[l] is the pool position where the (l+1)-grams start (they
 * run to the next level's start, or to the end of the pool), so level l
 * holds (end - start) / (l+1) grams. Grams are numbered across levels in
 * pool order; gram i is counted into output column ngram_indexes[i].
 *
 * Per row of X ([C], or each of [N, C]) and per gram of length n with
 * min_gram_length <= n <= max_gram_length, the count is the number of
 * (start, d) with X[start + k*d] == gram[k] for k < n, all inside the row,
 * for skip distances d = 1 .. max_skip_count + 1 (d = 1 only for unigrams,
 * which skipping cannot change). The output value is the count (TF), the
 * gram's weight when the count is positive (IDF) or count * weight (TFIDF);
 * weights default to 1. Y is f32, [max(ngram_indexes) + 1] per row.
 *
 * tfidf_layout() lays out the grams once for the reference evaluation
 * here and, through ir_tfidf_selected(), for the backends' emitters. String pools
 * (pool_strings) are not supported: graphc has no string tensors.
 */
#include "../op.h"
#include "text_attrs.h"
#include "geometry.h"

#include <stdlib.h>
#include <string.h>

static const char *const tfidf_in[] = {"X"};
static const char *const tfidf_out[] = {"Y"};
static const AttrSpec tfidf_attrs[] = {
    [TFIDF_MAX_GRAM_LENGTH] = {"max_gram_length", ATTR_INT, NULL, 1},
    [TFIDF_MAX_SKIP_COUNT] = {"max_skip_count", ATTR_INT, NULL, 1},
    [TFIDF_MIN_GRAM_LENGTH] = {"min_gram_length", ATTR_INT, NULL, 1},
    [TFIDF_MODE] = {"mode", ATTR_STRING, NULL, 1},
    [TFIDF_NGRAM_COUNTS] = {"ngram_counts", ATTR_INTS, NULL, 1},
    [TFIDF_NGRAM_INDEXES] = {"ngram_indexes", ATTR_INTS, NULL, 1},
    [TFIDF_POOL_INT64S] = {"pool_int64s", ATTR_INTS, NULL, 0},
    [TFIDF_WEIGHTS] = {"weights", ATTR_FLOATS, NULL, 0},
};
OP_ATTRS_CHECK(tfidf_attrs, TFIDF_COUNT);

/* Checks the pool layout; the number of grams, or -1 with a diagnostic.
 * off/len (room for the pool's size) receive each gram's pool position and
 * length when not NULL. */
static int tfidf_layout(const Node *n, int64_t *off, int64_t *len, Diag *d)
{
    const AttrVal *pool = &n->attrs[TFIDF_POOL_INT64S], *cnt = &n->attrs[TFIDF_NGRAM_COUNTS];
    if (!pool->set) return diag_node_error(d, n, "attribute 'pool_int64s' is required (string pools are not supported)");
    int64_t np = pool->n, ng = 0;
    for (int l = 0; l < cnt->n; l++) {
        int64_t s = cnt->ints[l], e = l + 1 < cnt->n ? cnt->ints[l + 1] : np;
        if (s < 0 || e < s || e > np || (e - s) % (l + 1) != 0)
            return diag_node_error(d, n,
                                   "attribute 'ngram_counts' level %d spans pool positions [%lld, %lld), which is not a whole number of %d-grams inside the pool of %lld",
                                   l + 1, (long long)s, (long long)e, l + 1, (long long)np);
        for (int64_t p = s; p < e; p += l + 1, ng++)
            if (off) {
                off[ng] = p;
                len[ng] = l + 1;
            }
    }
    return (int)ng;
}

int ir_tfidf_selected(const Node *n, int64_t *off, int64_t *len, int64_t *col, double *wt)
{
    const AttrVal *a = n->attrs;
    int ng = tfidf_layout(n, off, len, NULL), nf = 0;
    for (int g = 0; g < ng; g++) /* compacted in place: nf <= g */
        if (len[g] >= a[TFIDF_MIN_GRAM_LENGTH].i && len[g] <= a[TFIDF_MAX_GRAM_LENGTH].i) {
            off[nf] = off[g];
            len[nf] = len[g];
            col[nf] = a[TFIDF_NGRAM_INDEXES].ints[g];
            wt[nf++] = a[TFIDF_WEIGHTS].set ? (double)(float)a[TFIDF_WEIGHTS].floats[g] : 1.0;
        }
    return ng < 0 ? -1 : nf;
}

static int tfidf_infer(Node *n, Diag *d)
{
    const Value *x = n->in[0];
    const AttrVal *a = n->attrs;
    char b[160];
    if (x->dtype != DT_I32 && x->dtype != DT_I64)
        return diag_node_error(d, n, "input 'X' has dtype %s; expected i32 or i64 (string inputs are not supported)",
                               ir_dtype_name(x->dtype));
    if (x->shape.rank != 1 && x->shape.rank != 2)
        return diag_node_error(d, n, "input 'X' shape %s must be [C] or [N, C]", ir_shape_str(&x->shape, b, sizeof b));
    const char *m = a[TFIDF_MODE].s;
    if (strcmp(m, "TF") && strcmp(m, "IDF") && strcmp(m, "TFIDF"))
        return diag_node_error(d, n, "attribute 'mode' is \"%s\"; expected \"TF\", \"IDF\" or \"TFIDF\"", m);
    if (a[TFIDF_MIN_GRAM_LENGTH].i < 1 || a[TFIDF_MAX_GRAM_LENGTH].i < a[TFIDF_MIN_GRAM_LENGTH].i ||
        a[TFIDF_MAX_SKIP_COUNT].i < 0)
        return diag_node_error(d, n,
                               "attributes need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0, got %lld, %lld, %lld",
                               (long long)a[TFIDF_MIN_GRAM_LENGTH].i, (long long)a[TFIDF_MAX_GRAM_LENGTH].i,
                               (long long)a[TFIDF_MAX_SKIP_COUNT].i);
    int ng = tfidf_layout(n, NULL, NULL, d);
    if (ng < 0) return -1;
    const AttrVal *ix = &a[TFIDF_NGRAM_INDEXES];
    if (ix->n != ng)
        return diag_node_error(d, n, "attribute 'ngram_indexes' has %d values; the pool holds %d n-grams", ix->n, ng);
    if (a[TFIDF_WEIGHTS].set && a[TFIDF_WEIGHTS].n != ng)
        return diag_node_error(d, n, "attribute 'weights' has %d values; the pool holds %d n-grams",
                               a[TFIDF_WEIGHTS].n, ng);
    int64_t width = 0;
    for (int i = 0; i < ng; i++) {
        if (ix->ints[i] < 0)
            return diag_node_error(d, n, "attribute 'ngram_indexes' value %lld is negative", (long long)ix->ints[i]);
        if (ix->ints[i] + 1 > width) width = ix->ints[i] + 1;
    }
    Shape os = x->shape;
    os.dims[os.rank - 1] = width;
    ir_set_out(n, 0, DT_F32, &os);
    return 0;
}

static int tfidf_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const AttrVal *a = n->attrs;
    const Shape *xs = &n->in[0]->shape;
    int64_t rows = xs->rank == 2 ? xs->dims[0] : 1, C = xs->dims[xs->rank - 1];
    int64_t W = n->out[0]->shape.dims[n->out[0]->shape.rank - 1];
    int64_t np = a[TFIDF_POOL_INT64S].n;
    int64_t *off = malloc(sizeof(int64_t) * (size_t)(2 * np + 2));
    if (!off) return diag_node_error(d, n, "out of memory");
    int64_t *len = off + np + 1;
    int ng = tfidf_layout(n, off, len, d);
    const char *mode = a[TFIDF_MODE].s;
    for (int64_t r = 0; r < rows; r++) {
        const double *x = in[0] + r * C;
        double *y = out[0] + r * W;
        for (int64_t j = 0; j < W; j++) y[j] = 0.0;
        for (int g = 0; g < ng; g++) {
            int64_t gl = len[g], count = 0;
            if (gl < a[TFIDF_MIN_GRAM_LENGTH].i || gl > a[TFIDF_MAX_GRAM_LENGTH].i) continue;
            int64_t dmax = gl == 1 ? 1 : a[TFIDF_MAX_SKIP_COUNT].i + 1;
            for (int64_t dist = 1; dist <= dmax; dist++)
                for (int64_t s = 0; s + dist * (gl - 1) < C; s++) {
                    int64_t k = 0;
                    while (k < gl && x[s + k * dist] == (double)a[TFIDF_POOL_INT64S].ints[off[g] + k]) k++;
                    count += k == gl;
                }
            double wt = a[TFIDF_WEIGHTS].set ? a[TFIDF_WEIGHTS].floats[g] : 1.0;
            double v = !strcmp(mode, "TF") ? (double)count : !strcmp(mode, "IDF") ? (count > 0 ? wt : 0.0)
                                                                                 : (double)count * wt;
            y[a[TFIDF_NGRAM_INDEXES].ints[g]] = v;
        }
    }
    free(off);
    return 0;
}

const OpDesc op_TfIdfVectorizer = {
    .name = "TfIdfVectorizer",
    .min_in = 1, .max_in = 1, .in_names = tfidf_in,
    .min_out = 1, .max_out = 1, .out_names = tfidf_out,
    OP_ATTRS(tfidf_attrs),
    .infer = tfidf_infer,
    .eval = tfidf_eval,
};
