/* gcrt_linalg.c — GEMM for generated code.
 *
 * The portable GEMM is one loop nest instantiated for float and double by a
 * macro (the two bodies must not drift apart). It first applies beta to C,
 * then accumulates alpha * op(A) * op(B):
 *   - B not transposed: "axpy" form, C[i,:] += (alpha*A(i,k)) * B[k,:], four
 *     rows of C at a time, blocked over k and j so a B panel stays in cache;
 *     the inner loop is contiguous and vectorizes without -ffast-math.
 *   - B transposed: dot form, each C[i,j] is a dot product of a row of A
 *     and a row of B (contiguous in k when A is not transposed), four
 *     columns at a time.
 * Determinants factor each matrix (copied to double) by LU with partial
 * pivoting.
 * Under GCRT_USE_BLAS, gcrt_sgemm calls cblas_sgemm for every shape BLAS
 * accepts (non-empty, sizes fitting an int) and the loops otherwise.
 */
#include "gcrt_linalg.h"

#ifdef GCRT_USE_BLAS
#include <cblas.h>
#include <limits.h>
#endif

#include <math.h>

#define GCRT_KB 256
#define GCRT_NB 512

#define GCRT_DEFINE_GEMM(NAME, T)                                                             \
    static void NAME(int ta, int tb, int64_t M, int64_t N, int64_t K, T alpha, const T *A,    \
                     int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc)         \
    {                                                                                         \
        int64_t i, j, k, j0, k0;                                                              \
        for (i = 0; i < M; i++) {                                                             \
            T *c = C + i * ldc;                                                               \
            if (beta == (T)0)                                                                 \
                for (j = 0; j < N; j++) c[j] = (T)0;                                          \
            else if (beta != (T)1)                                                            \
                for (j = 0; j < N; j++) c[j] *= beta;                                         \
        }                                                                                     \
        if (K == 0) return;                                                                   \
        if (!tb) {                                                                            \
            for (j0 = 0; j0 < N; j0 += GCRT_NB) {                                             \
                int64_t j1 = j0 + GCRT_NB < N ? j0 + GCRT_NB : N;                             \
                for (k0 = 0; k0 < K; k0 += GCRT_KB) {                                         \
                    int64_t k1 = k0 + GCRT_KB < K ? k0 + GCRT_KB : K;                         \
                    for (i = 0; i + 4 <= M; i += 4) {                                         \
                        T *restrict c0 = C + i * ldc, *restrict c1 = c0 + ldc;              \
                        T *restrict c2 = c1 + ldc, *restrict c3 = c2 + ldc;                   \
                        for (k = k0; k < k1; k++) {                                           \
                            const T *restrict b = B + k * ldb;                                \
                            T a0, a1, a2, a3;                                                 \
                            if (ta) {                                                         \
                                const T *ap = A + k * lda + i;                                \
                                a0 = alpha * ap[0]; a1 = alpha * ap[1];                       \
                                a2 = alpha * ap[2]; a3 = alpha * ap[3];                       \
                            } else {                                                          \
                                const T *ap = A + i * lda + k;                                \
                                a0 = alpha * ap[0]; a1 = alpha * ap[lda];                     \
                                a2 = alpha * ap[2 * lda]; a3 = alpha * ap[3 * lda];           \
                            }                                                                 \
                            for (j = j0; j + 8 <= j1; j += 8) {                               \
                                int u; /* fixed trip count: vectorized even at -O2 */         \
                                for (u = 0; u < 8; u++) {                                     \
                                    T bv = b[j + u];                                          \
                                    c0[j + u] += a0 * bv; c1[j + u] += a1 * bv;               \
                                    c2[j + u] += a2 * bv; c3[j + u] += a3 * bv;               \
                                }                                                             \
                            }                                                                 \
                            for (; j < j1; j++) {                                             \
                                T bv = b[j];                                                  \
                                c0[j] += a0 * bv; c1[j] += a1 * bv;                           \
                                c2[j] += a2 * bv; c3[j] += a3 * bv;                           \
                            }                                                                 \
                        }                                                                     \
                    }                                                                         \
                    for (; i < M; i++) {                                                      \
                        T *restrict c0 = C + i * ldc;                                         \
                        for (k = k0; k < k1; k++) {                                           \
                            const T *restrict b = B + k * ldb;                                         \
                            T a0 = alpha * (ta ? A[k * lda + i] : A[i * lda + k]);            \
                            for (j = j0; j < j1; j++) c0[j] += a0 * b[j];                     \
                        }                                                                     \
                    }                                                                         \
                }                                                                             \
            }                                                                                 \
            return;                                                                           \
        }                                                                                     \
        for (i = 0; i < M; i++) {                                                             \
            T *c = C + i * ldc;                                                               \
            int64_t as = ta ? lda : 1;                                                        \
            const T *a = ta ? A + i : A + i * lda;                                            \
            for (j = 0; j + 4 <= N; j += 4) {                                                 \
                const T *b0 = B + j * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;    \
                T s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                             \
                for (k = 0; k < K; k++) {                                                     \
                    T av = a[k * as];                                                         \
                    s0 += av * b0[k]; s1 += av * b1[k];                                       \
                    s2 += av * b2[k]; s3 += av * b3[k];                                       \
                }                                                                             \
                c[j] += alpha * s0; c[j + 1] += alpha * s1;                                   \
                c[j + 2] += alpha * s2; c[j + 3] += alpha * s3;                               \
            }                                                                                 \
            for (; j < N; j++) {                                                              \
                const T *b0 = B + j * ldb;                                                    \
                T s0 = 0;                                                                     \
                for (k = 0; k < K; k++) s0 += a[k * as] * b0[k];                              \
                c[j] += alpha * s0;                                                           \
            }                                                                                 \
        }                                                                                     \
    }

GCRT_DEFINE_GEMM(gemm_loops_f32, float)
GCRT_DEFINE_GEMM(gemm_loops_f64, double)

GCRT_FN void gcrt_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                int64_t ldc)
{
    if (M <= 0 || N <= 0) return;
#ifdef GCRT_USE_BLAS
    if (K > 0 && M < INT_MAX && N < INT_MAX && K < INT_MAX && lda < INT_MAX && ldb < INT_MAX &&
        ldc < INT_MAX) {
        cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
                    trans_b ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K, alpha, A,
                    (int)lda, B, (int)ldb, beta, C, (int)ldc);
        return;
    }
#endif
    gemm_loops_f32(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

GCRT_FN void gcrt_dgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K, double alpha,
                const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                double *C, int64_t ldc)
{
    if (M <= 0 || N <= 0) return;
    gemm_loops_f64(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

GCRT_FN void gcrt_fill_bias2d_f32(int64_t M, int64_t N, const float *C, int64_t c_rs, int64_t c_cs,
                          float beta, float *Y)
{
    int64_t i, j;
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) Y[i * N + j] = beta * C[i * c_rs + j * c_cs];
}

GCRT_FN void gcrt_fill_bias2d_f64(int64_t M, int64_t N, const double *C, int64_t c_rs, int64_t c_cs,
                          double beta, double *Y)
{
    int64_t i, j;
    for (i = 0; i < M; i++)
        for (j = 0; j < N; j++) Y[i * N + j] = beta * C[i * c_rs + j * c_cs];
}

/* Determinant of the m x m row-major matrix a, overwritten by its LU
 * factors (partial pivoting: row swaps flip the sign; a zero pivot column
 * makes the determinant 0). */
static double det_lu(double *a, int64_t m)
{
    double det = 1.0, piv, f, t;
    int64_t i, j, k, p;
    for (k = 0; k < m; k++) {
        p = k;
        for (i = k + 1; i < m; i++)
            if (fabs(a[i * m + k]) > fabs(a[p * m + k])) p = i;
        if (a[p * m + k] == 0.0) return 0.0;
        if (p != k) {
            for (j = 0; j < m; j++) {
                t = a[k * m + j];
                a[k * m + j] = a[p * m + j];
                a[p * m + j] = t;
            }
            det = -det;
        }
        piv = a[k * m + k];
        det *= piv;
        for (i = k + 1; i < m; i++) {
            f = a[i * m + k] / piv;
            for (j = k + 1; j < m; j++) a[i * m + j] -= f * a[k * m + j];
        }
    }
    return det;
}

GCRT_FN void gcrt_det_f32(int64_t batch, int64_t m, const float *X, float *Y, double *work)
{
    int64_t b, i;
    for (b = 0; b < batch; b++) {
        for (i = 0; i < m * m; i++) work[i] = (double)X[b * m * m + i];
        Y[b] = (float)det_lu(work, m);
    }
}

GCRT_FN void gcrt_det_f64(int64_t batch, int64_t m, const double *X, double *Y, double *work)
{
    int64_t b, i;
    for (b = 0; b < batch; b++) {
        for (i = 0; i < m * m; i++) work[i] = X[b * m * m + i];
        Y[b] = det_lu(work, m);
    }
}
