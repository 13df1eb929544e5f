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
 * cuDNN: the legacy convolution API for NCHW f32 tensors (descriptors,
 * cudnnGetConvolutionForwardAlgorithm_v7, cudnnConvolutionForward); the
 * algorithm list it returns starts with one whose workspace no budget holds,
 * so generated code that ignores its workspace budget fails here.
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

static inline cudaError_t cudaMemsetAsync(void *dst, int value, size_t n, cudaStream_t s)
{
    (void)s;
    if (n == 0) return cudaSuccess;
    if (!gc_emu_is_device(dst, n)) return gc_emu_fail(cudaErrorInvalidValue, "cudaMemset: not device memory");
    memset(dst, value, n);
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


/* ---- cuDNN: the convolution forward of NCHW float tensors ---- */

typedef int cudnnStatus_t;
enum { CUDNN_STATUS_SUCCESS = 0, CUDNN_STATUS_BAD_PARAM = 3, CUDNN_STATUS_NOT_SUPPORTED = 9 };
typedef enum cudnnTensorFormat_t { CUDNN_TENSOR_NCHW = 0 } cudnnTensorFormat_t;
typedef enum cudnnDataType_t { CUDNN_DATA_FLOAT = 0 } cudnnDataType_t;
typedef enum cudnnConvolutionMode_t { CUDNN_CONVOLUTION = 0, CUDNN_CROSS_CORRELATION = 1 } cudnnConvolutionMode_t;
typedef enum cudnnMathType_t { CUDNN_DEFAULT_MATH = 0, CUDNN_TENSOR_OP_MATH = 1, CUDNN_FMA_MATH = 3 } cudnnMathType_t;
typedef enum cudnnDeterminism_t { CUDNN_NON_DETERMINISTIC = 0, CUDNN_DETERMINISTIC = 1 } cudnnDeterminism_t;
typedef enum cudnnConvolutionFwdAlgo_t {
    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM = 0,
    CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM = 1,
    CUDNN_CONVOLUTION_FWD_ALGO_GEMM = 2,
    CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED = 7,
    CUDNN_CONVOLUTION_FWD_ALGO_COUNT = 8
} cudnnConvolutionFwdAlgo_t;
typedef struct cudnnConvolutionFwdAlgoPerf_t {
    cudnnConvolutionFwdAlgo_t algo;
    cudnnStatus_t status;
    float time;
    size_t memory;
    cudnnDeterminism_t determinism;
    cudnnMathType_t mathType;
    int reserved[3];
} cudnnConvolutionFwdAlgoPerf_t;
typedef struct gc_emu_dnn {
    cudaStream_t stream;
} *cudnnHandle_t;
typedef struct gc_emu_td {
    int n, c, h, w;
} *cudnnTensorDescriptor_t;
typedef struct gc_emu_fd {
    int k, c, h, w;
} *cudnnFilterDescriptor_t;
typedef struct gc_emu_cd {
    int ph, pw, sh, sw, dh, dw, groups, mode;
} *cudnnConvolutionDescriptor_t;

/* What the emulated algorithms need as workspace: the first a size no
 * budget holds (so the chooser must skip it), the second none. */
#define GC_EMU_HUGE_WS ((size_t)1 << 60)

static inline cudnnStatus_t gc_emu_dnn_fail(const char *what)
{
    gc_emu_fail(cudaErrorInvalidValue, what);
    return CUDNN_STATUS_BAD_PARAM;
}

static inline cudnnStatus_t cudnnCreate(cudnnHandle_t *h)
{
    *h = (cudnnHandle_t)calloc(1, sizeof **h);
    return *h ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}
static inline cudnnStatus_t cudnnDestroy(cudnnHandle_t h)
{
    free(h);
    return CUDNN_STATUS_SUCCESS;
}
static inline cudnnStatus_t cudnnSetStream(cudnnHandle_t h, cudaStream_t s)
{
    h->stream = s;
    return CUDNN_STATUS_SUCCESS;
}
static inline cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d)
{
    *d = (cudnnTensorDescriptor_t)calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}
static inline cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}
static inline cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t f,
                                                       cudnnDataType_t t, int n, int c, int h, int w)
{
    if (f != CUDNN_TENSOR_NCHW || t != CUDNN_DATA_FLOAT || n < 1 || c < 1 || h < 1 || w < 1)
        return gc_emu_dnn_fail("cudnnSetTensor4dDescriptor: bad parameters");
    d->n = n, d->c = c, d->h = h, d->w = w;
    return CUDNN_STATUS_SUCCESS;
}
static inline cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d)
{
    *d = (cudnnFilterDescriptor_t)calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}
static inline cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}
static inline cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t t,
                                                       cudnnTensorFormat_t f, int k, int c, int h, int w)
{
    if (f != CUDNN_TENSOR_NCHW || t != CUDNN_DATA_FLOAT || k < 1 || c < 1 || h < 1 || w < 1)
        return gc_emu_dnn_fail("cudnnSetFilter4dDescriptor: bad parameters");
    d->k = k, d->c = c, d->h = h, d->w = w;
    return CUDNN_STATUS_SUCCESS;
}
static inline cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d)
{
    *d = (cudnnConvolutionDescriptor_t)calloc(1, sizeof **d);
    if (*d) (*d)->groups = 1;
    return *d ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}
static inline cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}
static inline cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int ph, int pw, int u,
                                                            int v, int dh, int dw, cudnnConvolutionMode_t mode,
                                                            cudnnDataType_t t)
{
    if (ph < 0 || pw < 0 || u < 1 || v < 1 || dh < 1 || dw < 1 || t != CUDNN_DATA_FLOAT)
        return gc_emu_dnn_fail("cudnnSetConvolution2dDescriptor: bad parameters");
    d->ph = ph, d->pw = pw, d->sh = u, d->sw = v, d->dh = dh, d->dw = dw, d->mode = (int)mode;
    return CUDNN_STATUS_SUCCESS;
}
static inline cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int g)
{
    if (g < 1) return gc_emu_dnn_fail("cudnnSetConvolutionGroupCount: bad count");
    d->groups = g;
    return CUDNN_STATUS_SUCCESS;
}
static inline cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t d, cudnnMathType_t m)
{
    (void)d, (void)m;
    return CUDNN_STATUS_SUCCESS;
}

/* Whether the four descriptors describe one valid convolution. */
static inline int gc_emu_conv_ok(cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t c,
                                 cudnnTensorDescriptor_t y)
{
    int eh = (w->h - 1) * c->dh + 1, ew = (w->w - 1) * c->dw + 1;
    return x->c == w->c * c->groups && w->k % c->groups == 0 && y->n == x->n && y->c == w->k &&
           x->h + 2 * c->ph >= eh && x->w + 2 * c->pw >= ew && y->h == (x->h + 2 * c->ph - eh) / c->sh + 1 &&
           y->w == (x->w + 2 * c->pw - ew) / c->sw + 1;
}

static inline cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(cudnnHandle_t h, cudnnTensorDescriptor_t x,
                                                                   cudnnFilterDescriptor_t w,
                                                                   cudnnConvolutionDescriptor_t c,
                                                                   cudnnTensorDescriptor_t y, int requested,
                                                                   int *returned, cudnnConvolutionFwdAlgoPerf_t *perf)
{
    (void)h;
    if (!gc_emu_conv_ok(x, w, c, y) || requested < 1) return gc_emu_dnn_fail("cudnnGetConvolutionForwardAlgorithm_v7: bad descriptors");
    memset(perf, 0, sizeof *perf * (size_t)(requested < 2 ? requested : 2));
    perf[0].algo = CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
    perf[0].memory = GC_EMU_HUGE_WS;
    perf[0].determinism = CUDNN_DETERMINISTIC;
    if (requested > 1) {
        perf[1].algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
        perf[1].determinism = CUDNN_DETERMINISTIC;
    }
    *returned = requested < 2 ? requested : 2;
    return CUDNN_STATUS_SUCCESS;
}

static inline cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd,
                                                    const void *x, cudnnFilterDescriptor_t wd, const void *w,
                                                    cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo,
                                                    void *ws, size_t ws_bytes, const void *beta,
                                                    cudnnTensorDescriptor_t yd, void *y)
{
    (void)h;
    if (!gc_emu_conv_ok(xd, wd, cd, yd)) return gc_emu_dnn_fail("cudnnConvolutionForward: bad descriptors");
    if (algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM && ws_bytes < GC_EMU_HUGE_WS)
        return gc_emu_dnn_fail("cudnnConvolutionForward: the algorithm needs more workspace");
    (void)ws;
    const float *X = (const float *)x, *W = (const float *)w;
    float *Y = (float *)y;
    const float a = *(const float *)alpha, b = *(const float *)beta;
    size_t nx = (size_t)xd->n * xd->c * xd->h * xd->w, nw = (size_t)wd->k * wd->c * wd->h * wd->w,
           ny = (size_t)yd->n * yd->c * yd->h * yd->w;
    if (!gc_emu_is_device(X, nx * 4) || !gc_emu_is_device(W, nw * 4) || !gc_emu_is_device(Y, ny * 4))
        return gc_emu_dnn_fail("cudnnConvolutionForward: a host pointer or a tensor past its allocation");
    const int G = cd->groups, Mg = wd->k / G, Cg = wd->c;
    for (int n = 0; n < yd->n; n++)
        for (int m = 0; m < yd->c; m++)
            for (int oh = 0; oh < yd->h; oh++)
                for (int ow = 0; ow < yd->w; ow++) {
                    double s = 0;
                    const int g = m / Mg;
                    for (int c = 0; c < Cg; c++)
                        for (int kh = 0; kh < wd->h; kh++)
                            for (int kw = 0; kw < wd->w; kw++) {
                                int fh = cd->mode == CUDNN_CONVOLUTION ? wd->h - 1 - kh : kh;
                                int fw = cd->mode == CUDNN_CONVOLUTION ? wd->w - 1 - kw : kw;
                                int ih = oh * cd->sh - cd->ph + kh * cd->dh, iw = ow * cd->sw - cd->pw + kw * cd->dw;
                                if (ih < 0 || ih >= xd->h || iw < 0 || iw >= xd->w) continue;
                                s += (double)X[(((size_t)n * xd->c + (size_t)g * Cg + c) * xd->h + ih) * xd->w + iw] *
                                     W[(((size_t)m * Cg + c) * wd->h + fh) * wd->w + fw];
                            }
                    float *o = &Y[(((size_t)n * yd->c + m) * yd->h + oh) * yd->w + ow];
                    *o = (float)((double)a * s + (b == 0.0f ? 0.0 : (double)b * (double)*o));
                }
    return CUDNN_STATUS_SUCCESS;
}

#endif
