/* gcrt_linalg.h — matrix kernels the generated code calls (GEMM,
 * broadcast helpers, determinants). Plain C99; every size is an explicit argument; no
 * allocation, no I/O, no global state. Row-major storage throughout.
 * With GCRT_USE_BLAS defined, gcrt_sgemm forwards to cblas_sgemm. */
#ifndef GCRT_LINALG_H
#define GCRT_LINALG_H

#include <stdint.h>

#include "gcrt_base.h"

/* C[M,N] = alpha * op(A)[M,K] * op(B)[K,N] + beta * C, where op(X) is X or
 * its transpose (trans_a / trans_b nonzero). lda/ldb/ldc are row strides of
 * the stored matrices. beta == 0 overwrites C without reading it. */
GCRT_FN void gcrt_sgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                float alpha, const float *A, int64_t lda, const float *B,
                int64_t ldb, float beta, float *C, int64_t ldc);

/* The same in double precision (portable loops only). */
GCRT_FN void gcrt_dgemm(int trans_a, int trans_b, int64_t M, int64_t N, int64_t K,
                double alpha, const double *A, int64_t lda, const double *B,
                int64_t ldb, double beta, double *C, int64_t ldc);

/* Y[i,j] = beta * C[i*c_rs + j*c_cs] for an [M,N] Y (c_rs/c_cs are 0 along
 * broadcast dims): the bias term of Gemm. */
GCRT_FN void gcrt_fill_bias2d_f32(int64_t M, int64_t N, const float *C, int64_t c_rs,
                          int64_t c_cs, float beta, float *Y);
GCRT_FN void gcrt_fill_bias2d_f64(int64_t M, int64_t N, const double *C, int64_t c_rs,
                          int64_t c_cs, double beta, double *Y);

/* Y[b] = det(X[b]) for `batch` row-major m x m matrices, by LU with partial
 * pivoting in double; work holds m*m doubles. */
GCRT_FN void gcrt_det_f32(int64_t batch, int64_t m, const float *X, float *Y, double *work);
GCRT_FN void gcrt_det_f64(int64_t batch, int64_t m, const double *X, double *Y, double *work);

#endif
