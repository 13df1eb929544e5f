/* gcrt_text.c — TfIdfVectorizer's n-gram counter (gcrt_text.h).
 *
 * A direct count: per row, gram and skip distance, every start position
 * whose strided window fits in the row is compared with the gram. The pool
 * is small in practice (the model's vocabulary of n-grams), so no trie is
 * built; the result equals the ONNX reference's trie walk. Written once
 * over the token type T with a name suffix S, the file including itself for
 * int32_t and int64_t.
 */
#ifndef GCRT_TEXT_TEMPLATE

#include "gcrt_text.h"

#define GCRT_TEXT_TEMPLATE
#define T int32_t
#define S(name) name##_i32
#include "gcrt_text.c"
#undef T
#undef S

#define T int64_t
#define S(name) name##_i64
#include "gcrt_text.c"
#undef T
#undef S

#else /* GCRT_TEXT_TEMPLATE */

GCRT_FN void S(gcrt_tfidf)(int64_t rows, int64_t C, const T *X, int64_t n_grams, const int64_t *off,
                   const int64_t *len, const int64_t *pool, const int64_t *col, const float *weight,
                   int mode, int64_t max_skip, int64_t W, float *Y)
{
    int64_t r, g, dist, s, k, j;
    for (r = 0; r < rows; r++) {
        const T *x = X + r * C;
        float *y = Y + r * W;
        for (j = 0; j < W; j++) y[j] = 0.0f;
        for (g = 0; g < n_grams; g++) {
            int64_t n = len[g], count = 0, dmax = n == 1 ? 1 : max_skip + 1;
            const int64_t *gram = pool + off[g];
            for (dist = 1; dist <= dmax; dist++)
                for (s = 0; s + dist * (n - 1) < C; s++) {
                    for (k = 0; k < n && (int64_t)x[s + k * dist] == gram[k]; k++) continue;
                    count += k == n;
                }
            if (mode == GCRT_TFIDF_TF) y[col[g]] = (float)count;
            else if (mode == GCRT_TFIDF_IDF) y[col[g]] = count > 0 ? weight[g] : 0.0f;
            else y[col[g]] = (float)count * weight[g];
        }
    }
}

#endif /* GCRT_TEXT_TEMPLATE */
