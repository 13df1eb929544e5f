/* gc_cuda_emu.h — a CPU emulation of the CUDA runtime and cuBLAS calls that
 * graphc's generated CUDA code makes, for machines without a GPU: compile
 * NAME.cu as C99 with -DGC_CUDA_EMULATE (the generated Makefile's `emu`
 * target) and every kernel runs as a loop on the calling thread, every
 * library call as a reference loop with the library's documented semantics.
 *
 * It is a test harness, not a runtime: it checks what a GPU would reject or
 * silently get wrong. "Device" memory is malloc'd, filled with a NaN
 * pattern (reading device memory nothing wrote shows up as NaN), and
 * registered: a copy whose direction does not match its pointers, or a
 * cuBLAS call on a host pointer, fails with an error code and a message on
 * stderr, as the real calls fail.
 *
 * cuBLAS is column-major: cublasSgemm computes C = alpha op(A) op(B) +
 * beta C with op(A) m x k, op(B) k x n, C m x n, element (i, j) of a matrix
 * X with leading dimension ldX at X[i + j * ldX].
 */
#ifndef GC_CUDA_EMU_H
#define GC_CUDA_EMU_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int cudaError_t;
enum { cudaSuccess = 0, cudaErrorInvalidValue = 1, cudaErrorMemoryAllocation = 2 };
typedef enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3
} cudaMemcpyKind;
typedef struct gc_emu_stream *cudaStream_t;

typedef int cublasStatus_t;
enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7 };
typedef enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef struct gc_emu_cublas {
    cudaStream_t stream;
} *cublasHandle_t;

#define GC_EMU_MAX_ALLOCS 256

static struct {
    void *p[GC_EMU_MAX_ALLOCS];
    size_t n[GC_EMU_MAX_ALLOCS];
    cudaError_t last;
} gc_emu;

static inline cudaError_t gc_emu_fail(cudaError_t e, const char *what)
{
    fprintf(stderr, "gc_cuda_emu: %s\n", what);
    gc_emu.last = e;
    return e;
}

/* Whether [p, p + n) lies inside one device allocation. */
static inline int gc_emu_is_device(const void *p, size_t n)
{
    const unsigned char *q = (const unsigned char *)p;
    for (int i = 0; i < GC_EMU_MAX_ALLOCS; i++) {
        const unsigned char *b = (const unsigned char *)gc_emu.p[i];
        if (b && q >= b && q + n <= b + gc_emu.n[i]) return 1;
    }
    return 0;
}

static inline cudaError_t cudaMalloc(void **p, size_t n)
{
    for (int i = 0; i < GC_EMU_MAX_ALLOCS; i++) {
        if (gc_emu.p[i]) continue;
        unsigned char *b = (unsigned char *)malloc(n ? n : 1);
        if (!b) return gc_emu_fail(cudaErrorMemoryAllocation, "cudaMalloc: out of memory");
        for (size_t k = 0; k + 4 <= n; k += 4) { /* 0x7fc00001: a quiet NaN in every f32 lane */
            b[k] = 0x01, b[k + 1] = 0x00, b[k + 2] = 0xc0, b[k + 3] = 0x7f;
        }
        gc_emu.p[i] = b;
        gc_emu.n[i] = n ? n : 1;
        *p = b;
        return cudaSuccess;
    }
    return gc_emu_fail(cudaErrorMemoryAllocation, "cudaMalloc: too many allocations");
}

static inline cudaError_t cudaFree(void *p)
{
    if (!p) return cudaSuccess;
    for (int i = 0; i < GC_EMU_MAX_ALLOCS; i++)
        if (gc_emu.p[i] == p) {
            free(p);
            gc_emu.p[i] = NULL;
            return cudaSuccess;
        }
    return gc_emu_fail(cudaErrorInvalidValue, "cudaFree: not a device allocation");
}

static inline cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, cudaMemcpyKind kind, cudaStream_t s)
{
    (void)s;
    if (n == 0) return cudaSuccess;
    int dd = gc_emu_is_device(dst, n), sd = gc_emu_is_device(src, n);
    int want_dd = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    int want_sd = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (dd != want_dd || sd != want_sd)
        return gc_emu_fail(cudaErrorInvalidValue, "cudaMemcpy: the pointers do not match the copy's direction");
    memmove(dst, src, n);
    return cudaSuccess;
}

static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    return cudaMemcpyAsync(dst, src, n, kind, (cudaStream_t)0);
}

static inline cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    return gc_emu.last;
}

static inline cudaError_t cudaGetLastError(void)
{
    cudaError_t e = gc_emu.last;
    gc_emu.last = cudaSuccess;
    return e;
}

static inline const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaSuccess ? "no error" : e == cudaErrorMemoryAllocation ? "out of memory" : "invalid argument";
}

static inline cublasStatus_t cublasCreate(cublasHandle_t *h)
{
    *h = (cublasHandle_t)calloc(1, sizeof **h);
    return *h ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

static inline cublasStatus_t cublasDestroy(cublasHandle_t h)
{
    free(h);
    return CUBLAS_STATUS_SUCCESS;
}

static inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s)
{
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}

static inline cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                                int n, int k, const float *alpha, const float *A, int lda,
                                                long long sa, const float *B, int ldb, long long sb,
                                                const float *beta, float *C, int ldc, long long sc, int batch)
{
    (void)h;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || ldc < (m > 1 ? m : 1) ||
        lda < ((ta == CUBLAS_OP_N ? m : k) > 1 ? (ta == CUBLAS_OP_N ? m : k) : 1) ||
        ldb < ((tb == CUBLAS_OP_N ? k : n) > 1 ? (tb == CUBLAS_OP_N ? k : n) : 1)) {
        gc_emu_fail(cudaErrorInvalidValue, "cublasSgemm: invalid dimensions");
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    for (int b = 0; b < batch; b++) {
        const float *a = A + b * sa, *bb = B + b * sb;
        float *c = C + b * sc;
        if (m && n && (!gc_emu_is_device(c, sizeof(float)) || (k && (!gc_emu_is_device(a, sizeof(float)) ||
                                                                     !gc_emu_is_device(bb, sizeof(float)))))) {
            gc_emu_fail(cudaErrorInvalidValue, "cublasSgemm: a host pointer");
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double s = 0.0;
                for (int p = 0; p < k; p++) {
                    float x = ta == CUBLAS_OP_N ? a[i + (int64_t)p * lda] : a[p + (int64_t)i * lda];
                    float y = tb == CUBLAS_OP_N ? bb[p + (int64_t)j * ldb] : bb[j + (int64_t)p * ldb];
                    s += (double)x * (double)y;
                }
                float *o = &c[i + (int64_t)j * ldc];
                /* beta == 0: C is not read (it may hold NaN), as cuBLAS documents */
                *o = (float)((double)*alpha * s + (*beta == 0.0f ? 0.0 : (double)*beta * (double)*o));
            }
    }
    return CUBLAS_STATUS_SUCCESS;
}

static inline cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const float *alpha, const float *A, int lda, const float *B, int ldb,
                                  const float *beta, float *C, int ldc)
{
    return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

#endif
