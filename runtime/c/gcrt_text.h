/* gcrt_text.h — the n-gram counter of TfIdfVectorizer over integer tokens.
 * Plain C99; every size is an explicit argument; no allocation, no I/O, no
 * global state.
 */
#ifndef GCRT_TEXT_H
#define GCRT_TEXT_H

#include <stdint.h>

#include "gcrt_base.h"

enum { GCRT_TFIDF_TF = 0, GCRT_TFIDF_IDF = 1, GCRT_TFIDF_TFIDF = 2 };

/* For each of `rows` rows of X (C tokens each) and each of n_grams grams
 * (gram g: len[g] tokens at pool + off[g]), counts the (start, distance)
 * pairs with X[start + k*distance] == gram[k] for every k, distance 1 ..
 * max_skip + 1 (1 only for unigrams); then Y[row, col[g]] = count (TF),
 * weight[g] if count > 0 (IDF) or count * weight[g] (TFIDF). Y rows have W
 * columns; columns no gram maps to are 0. */
GCRT_FN void gcrt_tfidf_i32(int64_t rows, int64_t C, const int32_t *X, int64_t n_grams, const int64_t *off,
                    const int64_t *len, const int64_t *pool, const int64_t *col, const float *weight,
                    int mode, int64_t max_skip, int64_t W, float *Y);
GCRT_FN void gcrt_tfidf_i64(int64_t rows, int64_t C, const int64_t *X, int64_t n_grams, const int64_t *off,
                    const int64_t *len, const int64_t *pool, const int64_t *col, const float *weight,
                    int mode, int64_t max_skip, int64_t W, float *Y);

#endif
