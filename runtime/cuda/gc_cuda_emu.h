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
 * cuDNN: the legacy convolution API for NCHW or NHWC f32 tensors, and f16/bf16
 * ones computing in fp32 where NAME.cu defines GC_CUDA_HALF (descriptors,
 * cudnnGetConvolutionForwardAlgorithm_v7, cudnnConvolutionForward, and the
 * fused cudnnConvolutionBiasActivationForward with RELU or IDENTITY); the
 * algorithm list it returns starts with one whose workspace no budget holds,
 * so generated code that ignores its workspace budget fails here.
 *
 * Streams, CUDA graphs, the driver API and NVRTC (--cuda-jit): a capturing
 * stream records every operation issued to it by value (kernel launches
 * through cuLaunchKernel, copies, memsets, cuBLAS and cuDNN calls on
 * handles bound to it) and runs none; cudaGraphLaunch replays the record.
 * An operation on another stream during a capture, or a synchronous call
 * (cudaMemcpy, cudaMalloc, cudaStreamSynchronize), fails and invalidates
 * the capture, as CUDA's thread-local and global capture modes refuse
 * them. The emulated NVRTC checks the program, its gc_cuda_kernel.h header
 * and its architecture option, and "compiles" to the source itself;
 * cuModuleGetFunction finds a kernel that the source defines and NAME.cu
 * registered (gc_emu_register_kernels: the same kernels compiled into the
 * emulation). GC_EMU_NVRTC_FAIL in the environment makes every compile fail.
 *
 * cuBLAS is column-major: cublasSgemm computes C = alpha op(A) op(B) +
 * beta C with op(A) m x k, op(B) k x n, C m x n, element (i, j) of a matrix
 * X with leading dimension ldX at X[i + j * ldX]. cublasGemmEx and
 * cublasGemmStridedBatchedEx take f32, f16 or bf16 operands (f16/bf16 with
 * GC_CUDA_HALF) with CUBLAS_COMPUTE_32F. Half operands are converted
 * exactly and their products summed in double; the result, rounded to
 * float, is rounded to the output type to nearest even, as the libraries
 * convert their fp32 result (cuDNN alike).
 */
#ifndef GC_CUDA_EMU_H
#define GC_CUDA_EMU_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int cudaError_t;
enum {
    cudaSuccess = 0,
    cudaErrorInvalidValue = 1,
    cudaErrorMemoryAllocation = 2,
    cudaErrorIllegalState = 401,
    cudaErrorStreamCaptureUnsupported = 900,
    cudaErrorStreamCaptureInvalidated = 901,
    cudaErrorGraphExecUpdateFailure = 910
};
typedef enum cudaMemcpyKind {
    cudaMemcpyHostToHost = 0,
    cudaMemcpyHostToDevice = 1,
    cudaMemcpyDeviceToHost = 2,
    cudaMemcpyDeviceToDevice = 3
} cudaMemcpyKind;
/* A stream: the legacy default stream is NULL. While capturing, the
 * operations issued to it are recorded into `rec`, not run. */
typedef struct gc_emu_stream {
    int capturing, invalid;
    struct gc_emu_graph *rec;
} *cudaStream_t;

typedef int cublasStatus_t;
enum { CUBLAS_STATUS_SUCCESS = 0, CUBLAS_STATUS_INVALID_VALUE = 7, CUBLAS_STATUS_NOT_SUPPORTED = 15 };
typedef enum cublasOperation_t { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 } cublasOperation_t;
typedef struct gc_emu_cublas {
    cudaStream_t stream;
} *cublasHandle_t;

#define GC_EMU_MAX_ALLOCS 256

static struct {
    void *p[GC_EMU_MAX_ALLOCS];
    size_t n[GC_EMU_MAX_ALLOCS];
    cudaError_t last;
    int capturing;              /* streams capturing now */
    int replaying;              /* a graph is replaying its recorded operations */
    const struct gc_emu_kernel *kernels; /* the kernels cuModuleGetFunction finds (gc_emu_register_kernels) */
    int n_kernels;
    double clock_ms; /* the virtual device clock that events read (cuDNN's convolutions advance it) */
} gc_emu;

static inline cudaError_t gc_emu_fail(cudaError_t e, const char *what)
{
    fprintf(stderr, "gc_cuda_emu: %s\n", what);
    gc_emu.last = e;
    return e;
}

/* ---- stream capture: what CUDA graphs record ---- */

/* A kernel the emulation can launch through cuLaunchKernel: NAME.cu's
 * table of them (name, a thunk that calls the kernel with its parameters
 * read from cuLaunchKernel's array, and the parameters' sizes). */
#define GC_EMU_MAX_PARAMS 32
typedef struct gc_emu_kernel {
    const char *name;
    void (*thunk)(void **params);
    int n_params;
    size_t sizes[GC_EMU_MAX_PARAMS];
} gc_emu_kernel;

/* One recorded operation: which call, its arguments by value. */
enum { GC_EMU_OP_COPY, GC_EMU_OP_SET, GC_EMU_OP_KERNEL, GC_EMU_OP_GEMM, GC_EMU_OP_GEMM_PTRS, GC_EMU_OP_CONV, GC_EMU_OP_CONV_FUSED };
typedef struct gc_emu_op {
    int kind;
    void *dst;
    const void *src;
    size_t n;
    int value;                       /* memset's byte; memcpy's kind */
    const gc_emu_kernel *fn;
    unsigned char params[GC_EMU_MAX_PARAMS * 16];
    void *call[24];                  /* GEMM and Conv: their pointer arguments */
    long long ints[16];              /* and their integers */
    float alpha, beta;
} gc_emu_op;

typedef struct gc_emu_graph {
    gc_emu_op *ops;
    int n, cap;
} *cudaGraph_t;
typedef struct gc_emu_exec {
    struct gc_emu_graph g;
} *cudaGraphExec_t;
typedef struct cudaGraphExecUpdateResultInfo {
    int result;
    void *errorNode, *errorFromNode;
} cudaGraphExecUpdateResultInfo;
typedef enum cudaStreamCaptureMode {
    cudaStreamCaptureModeGlobal = 0,
    cudaStreamCaptureModeThreadLocal = 1,
    cudaStreamCaptureModeRelaxed = 2
} cudaStreamCaptureMode;
enum { cudaStreamDefault = 0, cudaStreamNonBlocking = 1 };

/* Where an operation on stream s goes: 0 run it now, 1 record it (into
 * s->rec; *op is the slot to fill), -1 refused (an operation on another
 * stream than the capturing one, as CUDA refuses it in global and
 * thread-local capture; the capture is invalidated). */
static inline int gc_emu_issue(cudaStream_t s, const char *what, gc_emu_op **op)
{
    if (gc_emu.replaying || !gc_emu.capturing) return 0;
    if (!s || !s->capturing) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s: issued to a stream that is not capturing while another one captures", what);
        gc_emu_fail(cudaErrorStreamCaptureUnsupported, msg);
        return -1;
    }
    if (s->invalid) return -1;
    struct gc_emu_graph *g = s->rec;
    if (g->n == g->cap) {
        int cap = g->cap ? 2 * g->cap : 64;
        gc_emu_op *ops = (gc_emu_op *)realloc(g->ops, sizeof *ops * (size_t)cap);
        if (!ops) {
            s->invalid = 1;
            gc_emu_fail(cudaErrorMemoryAllocation, "stream capture: out of memory");
            return -1;
        }
        g->ops = ops, g->cap = cap;
    }
    *op = &g->ops[g->n++];
    memset(*op, 0, sizeof **op);
    return 1;
}

/* A call that CUDA refuses while some stream captures (synchronous copies,
 * allocation, synchronization): 0, or -1 with the error set. */
static inline int gc_emu_not_capturing(const char *what)
{
    if (!gc_emu.capturing || gc_emu.replaying) return 0;
    char msg[160];
    snprintf(msg, sizeof msg, "%s: not permitted while a stream captures", what);
    gc_emu_fail(cudaErrorStreamCaptureUnsupported, msg);
    return -1;
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
    if (gc_emu_not_capturing("cudaMalloc")) return gc_emu.last;
    for (int i = 0; i < GC_EMU_MAX_ALLOCS; i++) {
        if (gc_emu.p[i]) continue;
        unsigned char *b = (unsigned char *)malloc(n ? n : 1);
        if (!b) return gc_emu_fail(cudaErrorMemoryAllocation, "cudaMalloc: out of memory");
        /* 0x7fc07fc0: a quiet NaN in every f32 and f64 lane, and in every
         * f16 and bf16 lane (0x7fc0) */
        for (size_t k = 0; k + 4 <= n; k += 4) {
            b[k] = 0xc0, b[k + 1] = 0x7f, b[k + 2] = 0xc0, b[k + 3] = 0x7f;
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
    if (n == 0) return cudaSuccess;
    int dd = gc_emu_is_device(dst, n), sd = gc_emu_is_device(src, n);
    int want_dd = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    int want_sd = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (dd != want_dd || sd != want_sd)
        return gc_emu_fail(cudaErrorInvalidValue, "cudaMemcpy: the pointers do not match the copy's direction");
    gc_emu_op *op;
    int how = gc_emu_issue(s, "cudaMemcpyAsync", &op);
    if (how < 0) return gc_emu.last;
    if (how) {
        op->kind = GC_EMU_OP_COPY, op->dst = dst, op->src = src, op->n = n, op->value = (int)kind;
        return cudaSuccess;
    }
    memmove(dst, src, n);
    return cudaSuccess;
}

static inline cudaError_t cudaMemsetAsync(void *dst, int value, size_t n, cudaStream_t s)
{
    if (n == 0) return cudaSuccess;
    if (!gc_emu_is_device(dst, n)) return gc_emu_fail(cudaErrorInvalidValue, "cudaMemset: not device memory");
    gc_emu_op *op;
    int how = gc_emu_issue(s, "cudaMemsetAsync", &op);
    if (how < 0) return gc_emu.last;
    if (how) {
        op->kind = GC_EMU_OP_SET, op->dst = dst, op->n = n, op->value = value;
        return cudaSuccess;
    }
    memset(dst, value, n);
    return cudaSuccess;
}

static inline cudaError_t cudaMemset(void *dst, int value, size_t n)
{
    if (gc_emu_not_capturing("cudaMemset")) return gc_emu.last;
    return cudaMemsetAsync(dst, value, n, (cudaStream_t)0);
}

static inline cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, cudaMemcpyKind kind)
{
    if (gc_emu_not_capturing("cudaMemcpy")) return gc_emu.last;
    return cudaMemcpyAsync(dst, src, n, kind, (cudaStream_t)0);
}

static inline cudaError_t cudaStreamSynchronize(cudaStream_t s)
{
    (void)s;
    if (gc_emu_not_capturing("cudaStreamSynchronize")) return gc_emu.last;
    return gc_emu.last;
}

/* Events read a virtual clock, not the host's: the emulated cuDNN
 * convolutions advance it by a modelled cost (gc_emu_conv_cost), so that
 * what generated code times (-DGC_CUDNN_TIME) comes out the same on every
 * run. Recording into a capturing stream is not modelled (refused). */
typedef struct gc_emu_event {
    double t;
    int recorded;
} *cudaEvent_t;

static inline cudaError_t cudaEventCreate(cudaEvent_t *e)
{
    *e = (cudaEvent_t)calloc(1, sizeof **e);
    return *e ? cudaSuccess : gc_emu_fail(cudaErrorMemoryAllocation, "cudaEventCreate: out of memory");
}

static inline cudaError_t cudaEventDestroy(cudaEvent_t e)
{
    free(e);
    return cudaSuccess;
}

static inline cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s)
{
    (void)s;
    if (gc_emu_not_capturing("cudaEventRecord")) return gc_emu.last;
    e->t = gc_emu.clock_ms, e->recorded = 1;
    return cudaSuccess;
}

static inline cudaError_t cudaEventSynchronize(cudaEvent_t e)
{
    if (gc_emu_not_capturing("cudaEventSynchronize")) return gc_emu.last;
    return e->recorded ? cudaSuccess : gc_emu_fail(cudaErrorInvalidValue, "cudaEventSynchronize: the event was never recorded");
}

static inline cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t a, cudaEvent_t b)
{
    if (!a->recorded || !b->recorded)
        return gc_emu_fail(cudaErrorInvalidValue, "cudaEventElapsedTime: an event was never recorded");
    *ms = (float)(b->t - a->t);
    return cudaSuccess;
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

/* The workspace cuBLAS's kernels may use (the emulation's need none): device
 * memory of that size, as cuBLAS requires. */
static inline cublasStatus_t cublasSetWorkspace(cublasHandle_t h, void *ws, size_t bytes)
{
    (void)h;
    return !bytes || gc_emu_is_device(ws, bytes) ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

/* The element types of cuBLAS's *Ex calls and cuDNN's descriptors that the
 * emulation takes: f32, and f16/bf16 where NAME.cu defines GC_CUDA_HALF
 * (gc_cuda.h then includes gcrt_base.h, whose conversions round to nearest
 * even). */
typedef enum cudaDataType_t { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 } cudaDataType_t;
typedef cudaDataType_t cudaDataType;
typedef enum cublasComputeType_t { CUBLAS_COMPUTE_32F = 68 } cublasComputeType_t;
typedef enum cublasGemmAlgo_t { CUBLAS_GEMM_DEFAULT = -1 } cublasGemmAlgo_t;

/* Bytes of one element of type t, or 0 when the emulation lacks it. */
static inline size_t gc_emu_type_size(cudaDataType_t t)
{
    (void)t;
#ifdef GC_CUDA_HALF
    if (t == CUDA_R_16F || t == CUDA_R_16BF) return 2;
#endif
    return t == CUDA_R_32F ? 4 : 0;
}

/* Element i of p (type t, gc_emu_type_size nonzero) as a double (exact). */
static inline double gc_emu_load(cudaDataType_t t, const void *p, int64_t i)
{
    (void)t;
#ifdef GC_CUDA_HALF
    if (t == CUDA_R_16F) return gcrt_f16_to_f32(((const uint16_t *)p)[i]);
    if (t == CUDA_R_16BF) return gcrt_bf16_to_f32(((const uint16_t *)p)[i]);
#endif
    return ((const float *)p)[i];
}

/* v, the library's fp32 result, stored into element i of p: rounded to
 * float, then (f16/bf16) to the 16-bit type, to nearest even. */
static inline void gc_emu_store(cudaDataType_t t, void *p, int64_t i, double v)
{
    (void)t;
#ifdef GC_CUDA_HALF
    if (t == CUDA_R_16F) { ((uint16_t *)p)[i] = gcrt_f32_to_f16((float)v); return; }
    if (t == CUDA_R_16BF) { ((uint16_t *)p)[i] = gcrt_f32_to_bf16((float)v); return; }
#endif
    ((float *)p)[i] = (float)v;
}

/* The strided-batched GEMM every cuBLAS entry point here comes down to:
 * C = alpha op(A) op(B) + beta C per batch, A and B of type ab, C of type
 * ct, alpha and beta floats (CUBLAS_COMPUTE_32F and sgemm take them so).
 * The products of the operands (converted exactly) are summed in double,
 * a little closer to the exact sum than cuBLAS's fp32 accumulator;
 * alpha * sum + beta * C is rounded to float and then to C's type. */
static inline cublasStatus_t gc_emu_gemm(const char *name, cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                         int m, int n, int k, const float *alpha, const void *A, cudaDataType_t ab,
                                         int lda, long long sa, const void *B, int ldb, long long sb, const float *beta,
                                         void *C, cudaDataType_t ct, int ldc, long long sc, int batch)
{
    char msg[96];
    if (m < 0 || n < 0 || k < 0 || batch < 0 || ldc < (m > 1 ? m : 1) ||
        lda < ((ta == CUBLAS_OP_N ? m : k) > 1 ? (ta == CUBLAS_OP_N ? m : k) : 1) ||
        ldb < ((tb == CUBLAS_OP_N ? k : n) > 1 ? (tb == CUBLAS_OP_N ? k : n) : 1)) {
        snprintf(msg, sizeof msg, "%s: invalid dimensions", name);
        gc_emu_fail(cudaErrorInvalidValue, msg);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    const size_t ea = gc_emu_type_size(ab), ec = gc_emu_type_size(ct);
    if (!ea || !ec || (ab == CUDA_R_32F && ct != CUDA_R_32F)) {
        snprintf(msg, sizeof msg, "%s: unsupported combination of data types", name);
        gc_emu_fail(cudaErrorInvalidValue, msg);
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    gc_emu_op *op;
    int how = gc_emu_issue(h->stream, name, &op);
    if (how < 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (how) { /* alpha and beta are read now, as with CUBLAS_POINTER_MODE_HOST */
        op->kind = GC_EMU_OP_GEMM, op->alpha = *alpha, op->beta = *beta;
        op->call[0] = h, op->call[1] = (void *)A, op->call[2] = (void *)B, op->call[3] = C, op->call[4] = (void *)name;
        long long v[14] = {ta, tb, m, n, k, lda, sa, ldb, sb, ldc, sc, batch, ab, ct};
        memcpy(op->ints, v, sizeof v);
        return CUBLAS_STATUS_SUCCESS;
    }
    for (int b = 0; b < batch; b++) {
        const unsigned char *a = (const unsigned char *)A + b * sa * (long long)ea,
                            *bb = (const unsigned char *)B + b * sb * (long long)ea;
        unsigned char *c = (unsigned char *)C + b * sc * (long long)ec;
        if (m && n && (!gc_emu_is_device(c, ec) || (k && (!gc_emu_is_device(a, ea) || !gc_emu_is_device(bb, ea))))) {
            snprintf(msg, sizeof msg, "%s: a host pointer", name);
            gc_emu_fail(cudaErrorInvalidValue, msg);
            return CUBLAS_STATUS_INVALID_VALUE;
        }
        for (int j = 0; j < n; j++)
            for (int i = 0; i < m; i++) {
                double s = 0.0;
                for (int p = 0; p < k; p++) {
                    double x = gc_emu_load(ab, a, ta == CUBLAS_OP_N ? i + (int64_t)p * lda : p + (int64_t)i * lda);
                    double y = gc_emu_load(ab, bb, tb == CUBLAS_OP_N ? p + (int64_t)j * ldb : j + (int64_t)p * ldb);
                    s += x * y;
                }
                const int64_t o = i + (int64_t)j * ldc;
                /* beta == 0: C is not read (it may hold NaN), as cuBLAS documents */
                gc_emu_store(ct, c, o, (double)*alpha * s + (*beta == 0.0f ? 0.0 : (double)*beta * gc_emu_load(ct, c, o)));
            }
    }
    return CUBLAS_STATUS_SUCCESS;
}

static inline cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                                int n, int k, const float *alpha, const float *A, int lda,
                                                long long sa, const float *B, int ldb, long long sb,
                                                const float *beta, float *C, int ldc, long long sc, int batch)
{
    return gc_emu_gemm("cublasSgemm", h, ta, tb, m, n, k, alpha, A, CUDA_R_32F, lda, sa, B, ldb, sb, beta, C, CUDA_R_32F,
                       ldc, sc, batch);
}

static inline cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const float *alpha, const float *A, int lda, const float *B, int ldb,
                                  const float *beta, float *C, int ldc)
{
    return cublasSgemmStridedBatched(h, ta, tb, m, n, k, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1);
}

/* The mixed-precision GEMM: A and B of one type (f32, f16 or bf16), C of
 * that type or f32, CUBLAS_COMPUTE_32F (alpha and beta point at floats),
 * CUBLAS_GEMM_DEFAULT; other combinations are CUBLAS_STATUS_NOT_SUPPORTED. */
static inline cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                                                        int m, int n, int k, const void *alpha, const void *A,
                                                        cudaDataType at, int lda, long long sa, const void *B,
                                                        cudaDataType bt, int ldb, long long sb, const void *beta,
                                                        void *C, cudaDataType ct, int ldc, long long sc, int batch,
                                                        cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    if (at != bt || compute != CUBLAS_COMPUTE_32F || algo != CUBLAS_GEMM_DEFAULT || (ct != at && ct != CUDA_R_32F)) {
        gc_emu_fail(cudaErrorInvalidValue, "cublasGemmEx: unsupported combination of data types, compute type or algorithm");
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return gc_emu_gemm("cublasGemmEx", h, ta, tb, m, n, k, (const float *)alpha, A, at, lda, sa, B, ldb, sb,
                       (const float *)beta, C, ct, ldc, sc, batch);
}

static inline cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void *alpha, const void *A, cudaDataType at, int lda,
                                          const void *B, cudaDataType bt, int ldb, const void *beta, void *C,
                                          cudaDataType ct, int ldc, cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, A, at, lda, 0, B, bt, ldb, 0, beta, C, ct, ldc, 0, 1,
                                      compute, algo);
}

/* The batched GEMM over pointer arrays (cublasSgemmBatched,
 * cublasGemmBatchedEx): the arrays must be device memory, as cuBLAS reads
 * them on the device, and are read when the call runs (at a graph's replay,
 * not at its capture); each batch entry is gc_emu_gemm's. */
static inline cublasStatus_t gc_emu_gemm_ptrs(const char *name, cublasHandle_t h, cublasOperation_t ta,
                                              cublasOperation_t tb, int m, int n, int k, const float *alpha,
                                              const void *const *A, cudaDataType_t ab, int lda, const void *const *B,
                                              int ldb, const float *beta, void *const *C, cudaDataType_t ct, int ldc,
                                              int batch)
{
    char msg[96];
    const size_t bytes = sizeof(void *) * (size_t)(batch > 0 ? batch : 0);
    if (batch < 0 || (batch && (!gc_emu_is_device(A, bytes) || !gc_emu_is_device(B, bytes) || !gc_emu_is_device(C, bytes)))) {
        snprintf(msg, sizeof msg, "%s: the pointer arrays must be device memory", name);
        gc_emu_fail(cudaErrorInvalidValue, msg);
        return CUBLAS_STATUS_INVALID_VALUE;
    }
    gc_emu_op *op;
    int how = gc_emu_issue(h->stream, name, &op);
    if (how < 0) return CUBLAS_STATUS_INVALID_VALUE;
    if (how) {
        op->kind = GC_EMU_OP_GEMM_PTRS, op->alpha = *alpha, op->beta = *beta;
        op->call[0] = h, op->call[1] = (void *)A, op->call[2] = (void *)B, op->call[3] = (void *)C, op->call[4] = (void *)name;
        long long v[11] = {ta, tb, m, n, k, lda, ldb, ldc, batch, ab, ct};
        memcpy(op->ints, v, sizeof v);
        return CUBLAS_STATUS_SUCCESS;
    }
    for (int b = 0; b < batch; b++) {
        cublasStatus_t r = gc_emu_gemm(name, h, ta, tb, m, n, k, alpha, A[b], ab, lda, 0, B[b], ldb, 0, beta, C[b], ct, ldc, 0, 1);
        if (r != CUBLAS_STATUS_SUCCESS) return r;
    }
    return CUBLAS_STATUS_SUCCESS;
}

static inline cublasStatus_t cublasSgemmBatched(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                                int k, const float *alpha, const float *const *A, int lda,
                                                const float *const *B, int ldb, const float *beta, float *const *C, int ldc,
                                                int batch)
{
    return gc_emu_gemm_ptrs("cublasSgemmBatched", h, ta, tb, m, n, k, alpha, (const void *const *)A, CUDA_R_32F, lda,
                            (const void *const *)B, ldb, beta, (void *const *)C, CUDA_R_32F, ldc, batch);
}

static inline cublasStatus_t cublasGemmBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m,
                                                 int n, int k, const void *alpha, const void *const *A, cudaDataType at,
                                                 int lda, const void *const *B, cudaDataType bt, int ldb, const void *beta,
                                                 void *const *C, cudaDataType ct, int ldc, int batch,
                                                 cublasComputeType_t compute, cublasGemmAlgo_t algo)
{
    if (at != bt || compute != CUBLAS_COMPUTE_32F || algo != CUBLAS_GEMM_DEFAULT || (ct != at && ct != CUDA_R_32F)) {
        gc_emu_fail(cudaErrorInvalidValue, "cublasGemmBatchedEx: unsupported combination of data types, compute type or algorithm");
        return CUBLAS_STATUS_NOT_SUPPORTED;
    }
    return gc_emu_gemm_ptrs("cublasGemmBatchedEx", h, ta, tb, m, n, k, (const float *)alpha, A, at, lda, B, ldb,
                            (const float *)beta, C, ct, ldc, batch);
}

/* ---- cuDNN: the convolution forward of NCHW or NHWC f32, f16 and bf16 tensors ---- */

typedef int cudnnStatus_t;
enum { CUDNN_STATUS_SUCCESS = 0, CUDNN_STATUS_BAD_PARAM = 3, CUDNN_STATUS_NOT_SUPPORTED = 9 };
typedef enum cudnnTensorFormat_t { CUDNN_TENSOR_NCHW = 0, CUDNN_TENSOR_NHWC = 1 } cudnnTensorFormat_t;
typedef enum cudnnDataType_t { CUDNN_DATA_FLOAT = 0, CUDNN_DATA_HALF = 2, CUDNN_DATA_BFLOAT16 = 9 } cudnnDataType_t;
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
    cudnnDataType_t t;
    cudnnTensorFormat_t f;
} *cudnnTensorDescriptor_t;
typedef struct gc_emu_fd {
    int k, c, h, w;
    cudnnDataType_t t;
    cudnnTensorFormat_t f; /* NHWC: the filter's elements in KRSC order */
} *cudnnFilterDescriptor_t;
typedef struct gc_emu_cd {
    int ph, pw, sh, sw, dh, dw, groups, mode;
    cudnnDataType_t compute;
} *cudnnConvolutionDescriptor_t;

/* What the emulated algorithms need as workspace: Winograd a size no
 * budget holds (so the chooser must skip it), the implicit GEMMs none. */
#define GC_EMU_HUGE_WS ((size_t)1 << 60)

static inline size_t gc_emu_algo_ws(cudnnConvolutionFwdAlgo_t algo)
{
    return algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM || algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM
               ? 0
               : GC_EMU_HUGE_WS;
}

/* The modelled time of a convolution (the virtual clock's, ms): a
 * nanosecond per multiply-add, half that for the precomputed implicit
 * GEMM, so that a timed choice between the two is always the latter. */
static inline double gc_emu_conv_cost(cudnnConvolutionFwdAlgo_t algo, cudnnFilterDescriptor_t w,
                                      cudnnTensorDescriptor_t y)
{
    const double macs = (double)y->n * y->c * y->h * y->w * w->c * w->h * w->w;
    return macs * 1e-6 * (algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM ? 0.5 : 1.0);
}

static inline cudnnStatus_t gc_emu_dnn_fail(const char *what)
{
    gc_emu_fail(cudaErrorInvalidValue, what);
    return CUDNN_STATUS_BAD_PARAM;
}

/* The cuBLAS element type of a cuDNN data type the emulation takes (f32;
 * f16/bf16 with GC_CUDA_HALF), else -1. */
static inline int gc_emu_dnn_type(cudnnDataType_t t)
{
    cudaDataType_t c = t == CUDNN_DATA_FLOAT ? CUDA_R_32F : t == CUDNN_DATA_HALF ? CUDA_R_16F
                       : t == CUDNN_DATA_BFLOAT16 ? CUDA_R_16BF : (cudaDataType_t)-1;
    return gc_emu_type_size(c) ? (int)c : -1;
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

static inline cudnnStatus_t cudnnGetStream(cudnnHandle_t h, cudaStream_t *s)
{
    *s = h->stream;
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
    if ((f != CUDNN_TENSOR_NCHW && f != CUDNN_TENSOR_NHWC) || gc_emu_dnn_type(t) < 0 || n < 1 || c < 1 || h < 1 || w < 1)
        return gc_emu_dnn_fail("cudnnSetTensor4dDescriptor: bad parameters");
    d->n = n, d->c = c, d->h = h, d->w = w, d->t = t, d->f = f;
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
    if ((f != CUDNN_TENSOR_NCHW && f != CUDNN_TENSOR_NHWC) || gc_emu_dnn_type(t) < 0 || k < 1 || c < 1 || h < 1 || w < 1)
        return gc_emu_dnn_fail("cudnnSetFilter4dDescriptor: bad parameters");
    d->k = k, d->c = c, d->h = h, d->w = w, d->t = t, d->f = f;
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
    /* the compute type: fp32 accumulation only (FLOAT_CONFIG, and
     * PSEUDO_HALF_CONFIG / PSEUDO_BFLOAT16_CONFIG for half tensors) */
    if (ph < 0 || pw < 0 || u < 1 || v < 1 || dh < 1 || dw < 1 || t != CUDNN_DATA_FLOAT)
        return gc_emu_dnn_fail("cudnnSetConvolution2dDescriptor: bad parameters");
    d->ph = ph, d->pw = pw, d->sh = u, d->sw = v, d->dh = dh, d->dw = dw, d->mode = (int)mode, d->compute = t;
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

/* Whether the four descriptors describe one valid convolution: x, w and y
 * of one data type (cuDNN's FLOAT_CONFIG, PSEUDO_HALF_CONFIG and
 * PSEUDO_BFLOAT16_CONFIG: all computing in fp32), matching shapes, and one
 * format (the emulation takes x, w and y all NCHW or all NHWC, as graphc
 * writes them; cuDNN's tensor-core kernels want the filter NHWC with NHWC
 * tensors). */
static inline int gc_emu_conv_ok(cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w, cudnnConvolutionDescriptor_t c,
                                 cudnnTensorDescriptor_t y)
{
    int eh = (w->h - 1) * c->dh + 1, ew = (w->w - 1) * c->dw + 1;
    return x->t == w->t && y->t == x->t && x->f == y->f && w->f == x->f && c->compute == CUDNN_DATA_FLOAT && x->c == w->c * c->groups && w->k % c->groups == 0 && y->n == x->n && y->c == w->k &&
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
    /* Winograd first, which no workspace budget holds; then the implicit GEMM
     * and the precomputed one, which need none */
    static const cudnnConvolutionFwdAlgo_t order[3] = {CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED,
                                                       CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM,
                                                       CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM};
    *returned = requested < 3 ? requested : 3;
    memset(perf, 0, sizeof *perf * (size_t)*returned);
    for (int i = 0; i < *returned; i++) {
        perf[i].algo = order[i];
        perf[i].memory = gc_emu_algo_ws(order[i]);
        perf[i].determinism = CUDNN_DETERMINISTIC;
    }
    return CUDNN_STATUS_SUCCESS;
}

/* The measured search: the heuristic's list (the emulation measures
 * nothing), after cuDNN's checks that the search can run here: no stream
 * capture, x, w and y device tensors of the descriptors' sizes, and the
 * workspace inside one device allocation. */
static inline cudnnStatus_t cudnnFindConvolutionForwardAlgorithmEx(
    cudnnHandle_t h, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd, const void *w,
    cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, void *y, int requested, int *returned,
    cudnnConvolutionFwdAlgoPerf_t *perf, void *ws, size_t ws_bytes)
{
    if (gc_emu_not_capturing("cudnnFindConvolutionForwardAlgorithmEx")) return CUDNN_STATUS_BAD_PARAM;
    if (!gc_emu_conv_ok(xd, wd, cd, yd))
        return gc_emu_dnn_fail("cudnnFindConvolutionForwardAlgorithmEx: bad descriptors");
    const size_t es = gc_emu_type_size((cudaDataType_t)gc_emu_dnn_type(xd->t)),
                 nx = (size_t)xd->n * xd->c * xd->h * xd->w, nw = (size_t)wd->k * wd->c * wd->h * wd->w,
                 ny = (size_t)yd->n * yd->c * yd->h * yd->w;
    if (!gc_emu_is_device(x, nx * es) || !gc_emu_is_device(w, nw * es) || !gc_emu_is_device(y, ny * es) ||
        (ws_bytes && !gc_emu_is_device(ws, ws_bytes)))
        return gc_emu_dnn_fail("cudnnFindConvolutionForwardAlgorithmEx: a host pointer or a tensor past its allocation");
    return cudnnGetConvolutionForwardAlgorithm_v7(h, xd, wd, cd, yd, requested, returned, perf);
}

/* What the algorithm needs: nothing for the implicit GEMMs, a workspace
 * no model's arena holds for the others (as the heuristic above says). */
static inline cudnnStatus_t cudnnGetConvolutionForwardWorkspaceSize(cudnnHandle_t h, cudnnTensorDescriptor_t x,
                                                                    cudnnFilterDescriptor_t w,
                                                                    cudnnConvolutionDescriptor_t c,
                                                                    cudnnTensorDescriptor_t y,
                                                                    cudnnConvolutionFwdAlgo_t algo, size_t *bytes)
{
    (void)h;
    if (!gc_emu_conv_ok(x, w, c, y)) return gc_emu_dnn_fail("cudnnGetConvolutionForwardWorkspaceSize: bad descriptors");
    *bytes = gc_emu_algo_ws(algo);
    return CUDNN_STATUS_SUCCESS;
}

/* The convolution's reference loop: y = a * conv(x, w) + b * y, and with
 * bias (fused: cudnnConvolutionBiasActivationForward) + a2 * z + bias[c],
 * then the ReLU where relu; summed in double, rounded once to y's type. */
static inline void gc_emu_conv_loop(cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd,
                                    const void *w, cudnnConvolutionDescriptor_t cd, float a, float b,
                                    cudnnTensorDescriptor_t yd, void *y, float a2, const void *z, const void *bias,
                                    int relu)
{
    const cudaDataType_t T = (cudaDataType_t)gc_emu_dnn_type(xd->t);
    const int G = cd->groups, Mg = wd->k / G, Cg = wd->c, nhwc = xd->f == CUDNN_TENSOR_NHWC;
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
                                const size_t xc = (size_t)g * Cg + c;
                                s += gc_emu_load(T, x, nhwc ? (int64_t)((((size_t)n * xd->h + ih) * xd->w + iw) * xd->c + xc)
                                                            : (int64_t)(((size_t)n * xd->c + xc) * xd->h + ih) * xd->w + iw) *
                                     gc_emu_load(T, w, nhwc ? (int64_t)((((size_t)m * wd->h + fh) * wd->w + fw) * Cg + c)
                                                            : (int64_t)(((size_t)m * Cg + c) * wd->h + fh) * wd->w + fw);
                            }
                    const int64_t o = nhwc ? (int64_t)((((size_t)n * yd->h + oh) * yd->w + ow) * yd->c + m)
                                           : (int64_t)(((size_t)n * yd->c + m) * yd->h + oh) * yd->w + ow;
                    double v = (double)a * s + (b == 0.0f ? 0.0 : (double)b * gc_emu_load(T, y, o));
                    if (bias) {
                        v += (a2 == 0.0f ? 0.0 : (double)a2 * gc_emu_load(T, z, o)) + gc_emu_load(T, bias, m);
                        if (relu && v < 0) v = 0; /* NaN passes (CUDNN_PROPAGATE_NAN) */
                    }
                    gc_emu_store(T, y, o, v);
                }
}

static inline cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t h, const void *alpha, cudnnTensorDescriptor_t xd,
                                                    const void *x, cudnnFilterDescriptor_t wd, const void *w,
                                                    cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo,
                                                    void *ws, size_t ws_bytes, const void *beta,
                                                    cudnnTensorDescriptor_t yd, void *y)
{
    if (!gc_emu_conv_ok(xd, wd, cd, yd)) return gc_emu_dnn_fail("cudnnConvolutionForward: bad descriptors");
    gc_emu_op *op;
    int how = gc_emu_issue(h->stream, "cudnnConvolutionForward", &op);
    if (how < 0) return CUDNN_STATUS_BAD_PARAM;
    if (how) { /* alpha and beta are read now, as cuDNN reads host scaling factors */
        op->kind = GC_EMU_OP_CONV, op->alpha = *(const float *)alpha, op->beta = *(const float *)beta;
        void *p[8] = {h, xd, (void *)x, wd, (void *)w, cd, ws, yd};
        memcpy(op->call, p, sizeof p);
        op->call[8] = y;
        op->ints[0] = algo, op->ints[1] = (long long)ws_bytes;
        return CUDNN_STATUS_SUCCESS;
    }
    if (ws_bytes < gc_emu_algo_ws(algo))
        return gc_emu_dnn_fail("cudnnConvolutionForward: the algorithm needs more workspace");
    (void)ws;
    /* alpha and beta are floats for every data type here, as cuDNN takes them */
    const size_t es = gc_emu_type_size((cudaDataType_t)gc_emu_dnn_type(xd->t)),
                 nx = (size_t)xd->n * xd->c * xd->h * xd->w, nw = (size_t)wd->k * wd->c * wd->h * wd->w,
                 ny = (size_t)yd->n * yd->c * yd->h * yd->w;
    if (!gc_emu_is_device(x, nx * es) || !gc_emu_is_device(w, nw * es) || !gc_emu_is_device(y, ny * es))
        return gc_emu_dnn_fail("cudnnConvolutionForward: a host pointer or a tensor past its allocation");
    gc_emu_conv_loop(xd, x, wd, w, cd, *(const float *)alpha, *(const float *)beta, yd, y, 0.0f, NULL, NULL, 0);
    gc_emu.clock_ms += gc_emu_conv_cost(algo, wd, yd);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- cuDNN's fused convolution, bias and activation ---- */

typedef enum cudnnActivationMode_t { CUDNN_ACTIVATION_RELU = 1, CUDNN_ACTIVATION_IDENTITY = 5 } cudnnActivationMode_t;
typedef enum cudnnNanPropagation_t { CUDNN_NOT_PROPAGATE_NAN = 0, CUDNN_PROPAGATE_NAN = 1 } cudnnNanPropagation_t;
typedef struct gc_emu_ad {
    cudnnActivationMode_t mode;
    cudnnNanPropagation_t nan;
} *cudnnActivationDescriptor_t;

static inline cudnnStatus_t cudnnCreateActivationDescriptor(cudnnActivationDescriptor_t *d)
{
    *d = (cudnnActivationDescriptor_t)calloc(1, sizeof **d);
    return *d ? CUDNN_STATUS_SUCCESS : gc_emu_dnn_fail("cudnnCreateActivationDescriptor: out of memory");
}

static inline cudnnStatus_t cudnnDestroyActivationDescriptor(cudnnActivationDescriptor_t d)
{
    free(d);
    return CUDNN_STATUS_SUCCESS;
}

static inline cudnnStatus_t cudnnSetActivationDescriptor(cudnnActivationDescriptor_t d, cudnnActivationMode_t mode,
                                                         cudnnNanPropagation_t nan, double coef)
{
    (void)coef;
    if (mode != CUDNN_ACTIVATION_RELU && mode != CUDNN_ACTIVATION_IDENTITY)
        return gc_emu_dnn_fail("cudnnSetActivationDescriptor: the emulation has RELU and IDENTITY only");
    d->mode = mode, d->nan = nan;
    return CUDNN_STATUS_SUCCESS;
}

/* y = act(alpha1 * conv(x, w) + alpha2 * z + bias), with cuDNN's rules:
 * z of y's description, the bias 1 x K x 1 x 1 of the same data type, the
 * activation RELU (any algorithm) or IDENTITY (implicit precomputed GEMM
 * only). GC_EMU_CUDNN_FUSED_FAIL in the environment makes it answer
 * CUDNN_STATUS_NOT_SUPPORTED, as cuDNN does for configurations it lacks
 * (the generated code then runs the separate calls). */
static inline cudnnStatus_t cudnnConvolutionBiasActivationForward(
    cudnnHandle_t h, const void *alpha1, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd,
    const void *w, cudnnConvolutionDescriptor_t cd, cudnnConvolutionFwdAlgo_t algo, void *ws, size_t ws_bytes,
    const void *alpha2, cudnnTensorDescriptor_t zd, const void *z, cudnnTensorDescriptor_t bd, const void *bias,
    cudnnActivationDescriptor_t ad, cudnnTensorDescriptor_t yd, void *y)
{
    if (getenv("GC_EMU_CUDNN_FUSED_FAIL")) return CUDNN_STATUS_NOT_SUPPORTED;
    if (!gc_emu_conv_ok(xd, wd, cd, yd) || zd->n != yd->n || zd->c != yd->c || zd->h != yd->h || zd->w != yd->w ||
        zd->t != yd->t || zd->f != yd->f || bd->n != 1 || bd->c != yd->c || bd->h != 1 || bd->w != 1 || bd->t != yd->t ||
        !ad || (ad->mode == CUDNN_ACTIVATION_IDENTITY && algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM))
        return gc_emu_dnn_fail("cudnnConvolutionBiasActivationForward: bad descriptors");
    gc_emu_op *op;
    int how = gc_emu_issue(h->stream, "cudnnConvolutionBiasActivationForward", &op);
    if (how < 0) return CUDNN_STATUS_BAD_PARAM;
    if (how) {
        op->kind = GC_EMU_OP_CONV_FUSED, op->alpha = *(const float *)alpha1, op->beta = *(const float *)alpha2;
        void *p[14] = {h, xd, (void *)x, wd, (void *)w, cd, ws, zd, (void *)z, bd, (void *)bias, ad, yd, y};
        memcpy(op->call, p, sizeof p);
        op->ints[0] = algo, op->ints[1] = (long long)ws_bytes;
        return CUDNN_STATUS_SUCCESS;
    }
    if (ws_bytes < gc_emu_algo_ws(algo))
        return gc_emu_dnn_fail("cudnnConvolutionBiasActivationForward: the algorithm needs more workspace");
    (void)ws;
    const size_t es = gc_emu_type_size((cudaDataType_t)gc_emu_dnn_type(xd->t)),
                 nx = (size_t)xd->n * xd->c * xd->h * xd->w, nw = (size_t)wd->k * wd->c * wd->h * wd->w,
                 ny = (size_t)yd->n * yd->c * yd->h * yd->w;
    if (!gc_emu_is_device(x, nx * es) || !gc_emu_is_device(w, nw * es) || !gc_emu_is_device(y, ny * es) ||
        !gc_emu_is_device(z, ny * es) || !gc_emu_is_device(bias, (size_t)yd->c * es))
        return gc_emu_dnn_fail("cudnnConvolutionBiasActivationForward: a host pointer or a tensor past its allocation");
    gc_emu_conv_loop(xd, x, wd, w, cd, *(const float *)alpha1, 0.0f, yd, y, *(const float *)alpha2, z, bias,
                     ad->mode == CUDNN_ACTIVATION_RELU);
    gc_emu.clock_ms += gc_emu_conv_cost(algo, wd, yd);
    return CUDNN_STATUS_SUCCESS;
}

/* ---- streams and CUDA graphs ---- */

static inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned flags)
{
    (void)flags;
    if (gc_emu_not_capturing("cudaStreamCreate")) return gc_emu.last;
    *s = (cudaStream_t)calloc(1, sizeof **s);
    return *s ? cudaSuccess : gc_emu_fail(cudaErrorMemoryAllocation, "cudaStreamCreate: out of memory");
}

static inline cudaError_t cudaStreamDestroy(cudaStream_t s)
{
    if (!s || s->capturing) return gc_emu_fail(cudaErrorInvalidValue, "cudaStreamDestroy: no stream, or a capturing one");
    free(s);
    return cudaSuccess;
}

static inline cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode mode)
{
    (void)mode;
    if (!s) return gc_emu_fail(cudaErrorStreamCaptureUnsupported, "cudaStreamBeginCapture: the legacy default stream cannot capture");
    if (s->capturing) return gc_emu_fail(cudaErrorIllegalState, "cudaStreamBeginCapture: the stream already captures");
    s->rec = (struct gc_emu_graph *)calloc(1, sizeof *s->rec);
    if (!s->rec) return gc_emu_fail(cudaErrorMemoryAllocation, "cudaStreamBeginCapture: out of memory");
    s->capturing = 1, s->invalid = 0;
    gc_emu.capturing++;
    return cudaSuccess;
}

static inline cudaError_t cudaGraphDestroy(cudaGraph_t g)
{
    if (g) free(g->ops);
    free(g);
    return cudaSuccess;
}

/* Ends the capture: *g holds what was recorded, or NULL (and
 * cudaErrorStreamCaptureInvalidated) when some operation was refused. */
static inline cudaError_t cudaStreamEndCapture(cudaStream_t s, cudaGraph_t *g)
{
    *g = NULL;
    if (!s || !s->capturing) return gc_emu_fail(cudaErrorIllegalState, "cudaStreamEndCapture: the stream is not capturing");
    s->capturing = 0;
    gc_emu.capturing--;
    if (s->invalid) {
        cudaGraphDestroy(s->rec);
        s->rec = NULL;
        return gc_emu_fail(cudaErrorStreamCaptureInvalidated, "cudaStreamEndCapture: the capture was invalidated");
    }
    *g = s->rec;
    s->rec = NULL;
    return cudaSuccess;
}

/* A copy of g's operations into e (an executable graph owns its own). */
static inline cudaError_t gc_emu_graph_copy(struct gc_emu_graph *e, const struct gc_emu_graph *g)
{
    gc_emu_op *ops = (gc_emu_op *)malloc(sizeof *ops * (size_t)(g->n ? g->n : 1));
    if (!ops) return gc_emu_fail(cudaErrorMemoryAllocation, "cudaGraphInstantiate: out of memory");
    if (g->n) memcpy(ops, g->ops, sizeof *ops * (size_t)g->n);
    free(e->ops);
    e->ops = ops, e->n = e->cap = g->n;
    return cudaSuccess;
}

static inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *e, cudaGraph_t g, unsigned long long flags)
{
    (void)flags;
    *e = NULL;
    if (!g) return gc_emu_fail(cudaErrorInvalidValue, "cudaGraphInstantiate: no graph");
    cudaGraphExec_t x = (cudaGraphExec_t)calloc(1, sizeof *x);
    if (!x) return gc_emu_fail(cudaErrorMemoryAllocation, "cudaGraphInstantiate: out of memory");
    if (gc_emu_graph_copy(&x->g, g) != cudaSuccess) {
        free(x);
        return gc_emu.last;
    }
    *e = x;
    return cudaSuccess;
}

static inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t e)
{
    if (e) free(e->g.ops);
    free(e);
    return cudaSuccess;
}

/* Updates e to g's arguments when the two have the same operations in the
 * same order (the same kernels, copies, library calls), as CUDA allows;
 * else cudaErrorGraphExecUpdateFailure and e unchanged. */
static inline cudaError_t cudaGraphExecUpdate(cudaGraphExec_t e, cudaGraph_t g, cudaGraphExecUpdateResultInfo *info)
{
    int same = e && g && e->g.n == g->n;
    for (int i = 0; same && i < g->n; i++)
        same = e->g.ops[i].kind == g->ops[i].kind && e->g.ops[i].fn == g->ops[i].fn;
    if (info) memset(info, 0, sizeof *info), info->result = !same;
    if (!same) return cudaErrorGraphExecUpdateFailure; /* not sticky: the caller instantiates anew */
    return gc_emu_graph_copy(&e->g, g);
}

static inline cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s);

static inline cudaError_t cudaGetDevice(int *dev)
{
    *dev = 0;
    return cudaSuccess;
}

enum cudaDeviceAttr { cudaDevAttrComputeCapabilityMajor = 75, cudaDevAttrComputeCapabilityMinor = 76 };

/* The emulated device reports compute capability 9.0. */
static inline cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int dev)
{
    if (dev != 0) return gc_emu_fail(cudaErrorInvalidValue, "cudaDeviceGetAttribute: no such device");
    *v = a == cudaDevAttrComputeCapabilityMajor ? 9 : 0;
    return cudaSuccess;
}

/* ---- the driver API: modules and kernel launches ---- */

typedef int CUresult;
enum { CUDA_SUCCESS = 0, CUDA_ERROR_INVALID_VALUE = 1, CUDA_ERROR_INVALID_IMAGE = 200, CUDA_ERROR_NOT_FOUND = 500 };
typedef cudaStream_t CUstream;
typedef const gc_emu_kernel *CUfunction;
typedef struct gc_emu_module {
    char *image;
} *CUmodule;

/* The kernels NAME.cu compiled into the emulation; cuModuleGetFunction
 * finds them by name (in a module whose source names them). */
static inline void gc_emu_register_kernels(const gc_emu_kernel *k, int n)
{
    gc_emu.kernels = k;
    gc_emu.n_kernels = n;
}

static inline CUresult cuGetErrorString(CUresult r, const char **s)
{
    *s = r == CUDA_SUCCESS ? "no error" : r == CUDA_ERROR_NOT_FOUND ? "named symbol not found" : "invalid argument";
    return CUDA_SUCCESS;
}

/* The "image" the emulated NVRTC produces is the program's source. */
static inline CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    *m = NULL;
    if (!image) return CUDA_ERROR_INVALID_IMAGE;
    CUmodule x = (CUmodule)calloc(1, sizeof *x);
    size_t n = strlen((const char *)image);
    if (!x || !(x->image = (char *)malloc(n + 1))) {
        free(x);
        return CUDA_ERROR_INVALID_VALUE;
    }
    memcpy(x->image, image, n + 1);
    *m = x;
    return CUDA_SUCCESS;
}

static inline CUresult cuModuleUnload(CUmodule m)
{
    if (!m) return CUDA_ERROR_INVALID_VALUE;
    free(m->image);
    free(m);
    return CUDA_SUCCESS;
}

/* name's kernel: one registered and defined in the module's source
 * ("GC_KERNEL name("), so a kernel missing from the embedded source is
 * not found, as on a GPU. */
static inline CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    char def[96];
    *f = NULL;
    if (!m) return CUDA_ERROR_INVALID_VALUE;
    snprintf(def, sizeof def, "GC_KERNEL %s(", name);
    if (!strstr(m->image, def)) return CUDA_ERROR_NOT_FOUND;
    for (int i = 0; i < gc_emu.n_kernels; i++)
        if (strcmp(gc_emu.kernels[i].name, name) == 0) {
            *f = &gc_emu.kernels[i];
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

/* Runs f with the parameters that params point at (one block of threads
 * stands for the grid: the kernels loop over their elements), or records
 * them, by value, in a capturing stream. */
static inline CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                      unsigned bz, unsigned shared, CUstream s, void **params, void **extra)
{
    if (!f || !params || extra || gx < 1 || gy != 1 || gz != 1 || bx < 1 || by != 1 || bz != 1 || shared) {
        gc_emu_fail(cudaErrorInvalidValue, "cuLaunchKernel: invalid arguments");
        return CUDA_ERROR_INVALID_VALUE;
    }
    gc_emu_op *op;
    int how = gc_emu_issue(s, "cuLaunchKernel", &op);
    if (how < 0) return CUDA_ERROR_INVALID_VALUE;
    if (!how) {
        f->thunk(params);
        return CUDA_SUCCESS;
    }
    op->kind = GC_EMU_OP_KERNEL, op->fn = f;
    for (int i = 0, o = 0; i < f->n_params; o += 16, i++) {
        if (f->sizes[i] > 16) {
            s->invalid = 1;
            gc_emu_fail(cudaErrorInvalidValue, "cuLaunchKernel: a parameter over 16 bytes");
            return CUDA_ERROR_INVALID_VALUE;
        }
        memcpy(op->params + o, params[i], f->sizes[i]);
    }
    return CUDA_SUCCESS;
}

/* Replays the recorded operations in order, each as the call it was. */
static inline cudaError_t cudaGraphLaunch(cudaGraphExec_t e, cudaStream_t s)
{
    if (!e) return gc_emu_fail(cudaErrorInvalidValue, "cudaGraphLaunch: no graph");
    if (gc_emu_not_capturing("cudaGraphLaunch")) return gc_emu.last;
    (void)s;
    gc_emu.replaying = 1;
    for (int i = 0; i < e->g.n; i++) {
        gc_emu_op *op = &e->g.ops[i];
        const long long *v = op->ints;
        void **p = op->call;
        if (op->kind == GC_EMU_OP_COPY) {
            cudaMemcpyAsync(op->dst, op->src, op->n, (cudaMemcpyKind)op->value, s);
        } else if (op->kind == GC_EMU_OP_SET) {
            cudaMemsetAsync(op->dst, op->value, op->n, s);
        } else if (op->kind == GC_EMU_OP_KERNEL) {
            void *args[GC_EMU_MAX_PARAMS];
            for (int k = 0; k < op->fn->n_params; k++) args[k] = op->params + 16 * k;
            op->fn->thunk(args);
        } else if (op->kind == GC_EMU_OP_GEMM) {
            gc_emu_gemm((const char *)p[4], (cublasHandle_t)p[0], (cublasOperation_t)v[0], (cublasOperation_t)v[1],
                        (int)v[2], (int)v[3], (int)v[4], &op->alpha, p[1], (cudaDataType_t)v[12], (int)v[5], v[6], p[2],
                        (int)v[7], v[8], &op->beta, p[3], (cudaDataType_t)v[13], (int)v[9], v[10], (int)v[11]);
        } else if (op->kind == GC_EMU_OP_GEMM_PTRS) {
            gc_emu_gemm_ptrs((const char *)p[4], (cublasHandle_t)p[0], (cublasOperation_t)v[0], (cublasOperation_t)v[1],
                             (int)v[2], (int)v[3], (int)v[4], &op->alpha, (const void *const *)p[1], (cudaDataType_t)v[9],
                             (int)v[5], (const void *const *)p[2], (int)v[6], &op->beta, (void *const *)p[3],
                             (cudaDataType_t)v[10], (int)v[7], (int)v[8]);
        } else if (op->kind == GC_EMU_OP_CONV_FUSED) {
            cudnnConvolutionBiasActivationForward(
                (cudnnHandle_t)p[0], &op->alpha, (cudnnTensorDescriptor_t)p[1], p[2], (cudnnFilterDescriptor_t)p[3], p[4],
                (cudnnConvolutionDescriptor_t)p[5], (cudnnConvolutionFwdAlgo_t)v[0], p[6], (size_t)v[1], &op->beta,
                (cudnnTensorDescriptor_t)p[7], p[8], (cudnnTensorDescriptor_t)p[9], p[10],
                (cudnnActivationDescriptor_t)p[11], (cudnnTensorDescriptor_t)p[12], p[13]);
        } else {
            cudnnConvolutionForward((cudnnHandle_t)p[0], &op->alpha, (cudnnTensorDescriptor_t)p[1], p[2],
                                    (cudnnFilterDescriptor_t)p[3], p[4], (cudnnConvolutionDescriptor_t)p[5],
                                    (cudnnConvolutionFwdAlgo_t)v[0], p[6], (size_t)v[1], &op->beta,
                                    (cudnnTensorDescriptor_t)p[7], p[8]);
        }
    }
    gc_emu.replaying = 0;
    return gc_emu.last;
}

/* ---- NVRTC: "compiles" by checking the program, its header and options ---- */

typedef int nvrtcResult;
enum { NVRTC_SUCCESS = 0, NVRTC_ERROR_INVALID_INPUT = 3, NVRTC_ERROR_INVALID_PROGRAM = 4, NVRTC_ERROR_COMPILATION = 6 };
typedef struct gc_emu_nvrtc {
    const char *src, *name;
    int has_header, compiled;
    char log[256];
} *nvrtcProgram;

static inline const char *nvrtcGetErrorString(nvrtcResult r)
{
    return r == NVRTC_SUCCESS ? "NVRTC_SUCCESS" : r == NVRTC_ERROR_COMPILATION ? "NVRTC_ERROR_COMPILATION" : "NVRTC_ERROR_INVALID_INPUT";
}

static inline nvrtcResult nvrtcGetNumSupportedArchs(int *n)
{
    *n = 5;
    return NVRTC_SUCCESS;
}

static inline nvrtcResult nvrtcGetSupportedArchs(int *a)
{
    static const int archs[5] = {75, 80, 86, 89, 90};
    memcpy(a, archs, sizeof archs);
    return NVRTC_SUCCESS;
}

static inline nvrtcResult nvrtcCreateProgram(nvrtcProgram *p, const char *src, const char *name, int nh,
                                             const char *const *headers, const char *const *names)
{
    *p = NULL;
    if (!src || nh < 0 || (nh && (!headers || !names))) return NVRTC_ERROR_INVALID_INPUT;
    nvrtcProgram x = (nvrtcProgram)calloc(1, sizeof *x);
    if (!x) return NVRTC_ERROR_INVALID_INPUT;
    x->src = src, x->name = name ? name : "default_program";
    for (int i = 0; i < nh; i++)
        if (strcmp(names[i], "gc_cuda_kernel.h") == 0 && headers[i] && strstr(headers[i], "GC_CUDA_KERNEL_H")) x->has_header = 1;
    *p = x;
    return NVRTC_SUCCESS;
}

/* Fails, with a log in NVRTC's form, when the source includes
 * gc_cuda_kernel.h that was not passed, when no --gpu-architecture is
 * given, or when the environment sets GC_EMU_NVRTC_FAIL (to test how
 * NAME_init reports a failed compile). */
static inline nvrtcResult nvrtcCompileProgram(nvrtcProgram p, int nopt, const char *const *opts)
{
    int arch = 0;
    for (int i = 0; i < nopt; i++) arch |= strncmp(opts[i], "--gpu-architecture=", 19) == 0;
    if (getenv("GC_EMU_NVRTC_FAIL"))
        snprintf(p->log, sizeof p->log, "%s(1): error: GC_EMU_NVRTC_FAIL is set\n", p->name);
    else if (strstr(p->src, "#include \"gc_cuda_kernel.h\"") && !p->has_header)
        snprintf(p->log, sizeof p->log, "%s(1): catastrophic error: cannot open source file \"gc_cuda_kernel.h\"\n", p->name);
    else if (!arch)
        snprintf(p->log, sizeof p->log, "error: no --gpu-architecture option\n");
    else
        p->compiled = 1;
    return p->compiled ? NVRTC_SUCCESS : NVRTC_ERROR_COMPILATION;
}

static inline nvrtcResult nvrtcGetProgramLogSize(nvrtcProgram p, size_t *n)
{
    *n = strlen(p->log) + 1;
    return NVRTC_SUCCESS;
}

static inline nvrtcResult nvrtcGetProgramLog(nvrtcProgram p, char *log)
{
    memcpy(log, p->log, strlen(p->log) + 1);
    return NVRTC_SUCCESS;
}

static inline nvrtcResult nvrtcGetPTXSize(nvrtcProgram p, size_t *n)
{
    if (!p->compiled) return NVRTC_ERROR_INVALID_PROGRAM;
    *n = strlen(p->src) + 1;
    return NVRTC_SUCCESS;
}

static inline nvrtcResult nvrtcGetPTX(nvrtcProgram p, char *ptx)
{
    if (!p->compiled) return NVRTC_ERROR_INVALID_PROGRAM;
    memcpy(ptx, p->src, strlen(p->src) + 1);
    return NVRTC_SUCCESS;
}

static inline nvrtcResult nvrtcGetCUBINSize(nvrtcProgram p, size_t *n) { return nvrtcGetPTXSize(p, n); }
static inline nvrtcResult nvrtcGetCUBIN(nvrtcProgram p, char *c) { return nvrtcGetPTX(p, c); }

static inline nvrtcResult nvrtcDestroyProgram(nvrtcProgram *p)
{
    free(*p);
    *p = NULL;
    return NVRTC_SUCCESS;
}

#endif
