/* gc_cuda.h — what the CUDA code graphc generates needs from its platform:
 * the CUDA runtime and cuBLAS under nvcc, or graphc's CPU emulation of the
 * same calls (gc_cuda_emu.h) when compiled as C99 with -DGC_CUDA_EMULATE.
 *
 * The generated NAME.cu is written in the common subset of CUDA C++ and
 * C99, with the few CUDA-only constructs behind these macros:
 *   GC_KERNEL            a kernel definition (static __global__ void)
 *   GC_FOR_EACH(i, n)    the loop of one kernel over its n elements: a
 *                        grid-stride loop on the device, a plain loop in
 *                        the emulation
 *   GC_LAUNCH(k, n, s, (args))  launches kernel k over n elements on
 *                        stream s (GC_THREADS per block, at most
 *                        GC_MAX_BLOCKS blocks): <<<>>> under nvcc, the
 *                        generated launcher gc_launch_k (cuLaunchKernel)
 *                        with --cuda-jit and in the emulation
 *   GC_TABLE             a constant table kernels read (a device constant)
 *   GC_DEVICE            a helper function kernels call (static __device__)
 *   GC_LANES, GC_LANE_SUM(v), GC_LANE_MAX(v)
 *                        row kernels (Softmax, LayerNormalization): GC_LANES
 *                        consecutive threads (a warp, 32, on the device; 1 in
 *                        the emulation) share a row, each taking every
 *                        GC_LANES-th element, and combine their partial sums
 *                        or maxima with warp shuffles (float or double; the
 *                        value itself with one lane)
 * and, where NAME.cu defines GC_CUDA_HALF (a model with f16/bf16 tensors,
 * stored as uint16_t bit patterns), the conversions GC_F16_TO_F32,
 * GC_F32_TO_F16, GC_BF16_TO_F32, GC_F32_TO_BF16 (round to nearest even):
 * CUDA's cuda_fp16.h / cuda_bf16.h intrinsics under nvcc, the C runtime's
 * gcrt_base.h (copied into such folders) in the emulation.
 * With GC_CUDA_JIT (graphc compile --cuda-jit) NAME.cu is host code only,
 * plain C against the runtime, driver and NVRTC headers; its kernels are
 * NAME_kernels.cu (gc_cuda_kernel.h gives them these macros under NVRTC),
 * compiled at NAME_init by gc_jit_load (gc_cuda_jit.h).
 * So the emulation runs every generated kernel and the host code around it
 * on the CPU: a machine without a GPU (and CI) tests what the generated code
 * computes, and nvcc checks that it is valid CUDA.
 */
#ifndef GC_CUDA_H
#define GC_CUDA_H

#include <stdint.h>

#define GC_THREADS 256
#define GC_MAX_BLOCKS 4096

#ifdef GC_CUDA_EMULATE
#ifdef GC_CUDA_HALF
#include "gcrt_base.h" /* before the emulation: its f16/bf16 library calls convert with it */
#endif
#include "gc_cuda_emu.h"
#define GC_KERNEL static void
#define GC_FOR_EACH(i, n) for (int64_t i = 0; i < (int64_t)(n); i++)
#define GC_TABLE static const
#define GC_DEVICE static
#define GC_LANES 1
#define GC_LANE_SUM(v) (v)
#define GC_LANE_MAX(v) (v)
#define GC_LAUNCHERS 1
#ifdef GC_CUDA_HALF
#define GC_F16_TO_F32(h) gcrt_f16_to_f32(h)
#define GC_F32_TO_F16(f) gcrt_f32_to_f16(f)
#define GC_BF16_TO_F32(h) gcrt_bf16_to_f32(h)
#define GC_F32_TO_BF16(f) gcrt_f32_to_bf16(f)
#endif
#elif defined(GC_CUDA_JIT)
/* host code only, plain C: the kernels are NAME_kernels.cu, compiled by NVRTC */
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#include <nvrtc.h>
#define GC_LAUNCHERS 1
#define GC_LANES 32 /* what the host launches row kernels with (the kernels: NVRTC, gc_cuda_kernel.h) */
#else
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#define GC_KERNEL static __global__ void
#define GC_FOR_EACH(i, n)                                                                                        \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (int64_t)(n);                          \
         i += (int64_t)gridDim.x * blockDim.x)
#define GC_LAUNCH(k, n, s, args) k<<<gc_blocks(n), GC_THREADS, 0, (s)>>> args
#define GC_TABLE static __device__ const
#define GC_DEVICE static __device__
#define GC_LAUNCHERS 0
#ifdef GC_CUDA_HALF
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#define GC_F16_TO_F32(h) __half2float(__ushort_as_half(h))
#define GC_F32_TO_F16(f) __half_as_ushort(__float2half_rn(f))
#define GC_BF16_TO_F32(h) __bfloat162float(__ushort_as_bfloat16(h))
#define GC_F32_TO_BF16(f) __bfloat16_as_ushort(__float2bfloat16_rn(f))
#endif
#endif

/* The cuDNN forward algorithms one convolution may run: the deterministic
 * ones whose workspace (as cudnnGetConvolutionForwardWorkspaceSize says)
 * fits `budget` bytes, the node's workspace in the arena, the first
 * GC_CUDNN_CANDIDATES of them into cand[] (*ncand of them), fastest first
 * in cuDNN's heuristic order (cudnnGetConvolutionForwardAlgorithm_v7, the
 * same on every init on one device and library version); *algo is the
 * first, or implicit GEMM, which needs none, when none fits. Built with
 * -DGC_CUDNN_FIND the order is measured instead
 * (cudnnFindConvolutionForwardAlgorithmEx, as PyTorch's cudnn.benchmark
 * does), on scratch tensors NAME_init allocates (x at scratch, w at
 * scratch + woff, y at scratch + yoff) with ws (budget bytes) as the
 * workspace; a measured choice can differ between two inits, and with it
 * the last bits of the results. On an H100 (bench/gpu_vs_torch.py
 * --cudnn-find against the default, 2026-11-27) the measured choice made 7
 * of the 8 ResNet-18 and MobileNetV2 rows slower (ResNet-18 batch 1 fp16
 * 0.33 -> 0.71 ms, MobileNetV2 batch 32 fp32 2.78 -> 3.10) and one faster
 * (ResNet-18 batch 32 fp32 4.59 -> 3.36), so it is not the default. 0, or
 * -1 when cuDNN rejects the descriptors. */
#define GC_CUDNN_CANDIDATES 4
static inline int gc_cudnn_pick(cudnnHandle_t h, cudnnTensorDescriptor_t x, cudnnFilterDescriptor_t w,
                                cudnnConvolutionDescriptor_t c, cudnnTensorDescriptor_t y, size_t budget, void *ws,
                                unsigned char *scratch, size_t woff, size_t yoff, cudnnConvolutionFwdAlgo_t *algo,
                                cudnnConvolutionFwdAlgo_t *cand, int *ncand)
{
    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int got = 0;
    *algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    *ncand = 0;
#ifdef GC_CUDNN_FIND
    if (cudnnFindConvolutionForwardAlgorithmEx(h, x, scratch, w, scratch + woff, c, y, scratch + yoff,
                                               CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf, budget ? ws : NULL,
                                               budget) != CUDNN_STATUS_SUCCESS)
        return -1;
#else
    (void)ws, (void)scratch, (void)woff, (void)yoff;
    if (cudnnGetConvolutionForwardAlgorithm_v7(h, x, w, c, y, CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &got, perf) !=
        CUDNN_STATUS_SUCCESS)
        return -1;
#endif
    for (int i = 0; i < got && *ncand < GC_CUDNN_CANDIDATES; i++) {
        size_t need = 0;
        /* the heuristic's figure may be another math type's (tensor-op entries
         * for half data): the descriptor's own need decides */
        if (perf[i].status == CUDNN_STATUS_SUCCESS && perf[i].memory <= budget &&
            perf[i].determinism == CUDNN_DETERMINISTIC &&
            cudnnGetConvolutionForwardWorkspaceSize(h, x, w, c, y, perf[i].algo, &need) == CUDNN_STATUS_SUCCESS &&
            need <= budget)
            cand[(*ncand)++] = perf[i].algo;
    }
    if (*ncand) *algo = cand[0];
    return 0;
}

/* -DGC_CUDNN_TIME: NAME_init's warm-up run times each convolution's
 * candidates (gc_cudnn_pick) where it stands, on its own tensors, workspace
 * and stream (2 untimed calls, then 5 between two events, each candidate in
 * turn), and keeps a candidate other than the heuristic's first only when
 * it took under 0.95 of the first's time: measured in the graph's own
 * conditions, as cudnnFindConvolutionForwardAlgorithmEx is not. The choice
 * can differ between two inits, and with it the last bits of the results.
 * y is overwritten (the schedule computes it next). 0, or -1 when CUDA
 * fails; a candidate cuDNN refuses is skipped. */
static inline int gc_cudnn_time(cudnnHandle_t h, cudnnTensorDescriptor_t xd, const void *x, cudnnFilterDescriptor_t wd,
                                const void *w, cudnnConvolutionDescriptor_t cd, cudnnTensorDescriptor_t yd, void *y,
                                void *ws, size_t ws_bytes, const cudnnConvolutionFwdAlgo_t *cand, int ncand,
                                cudnnConvolutionFwdAlgo_t *algo)
{
    if (ncand < 2) return 0;
    cudaStream_t s;
    cudaEvent_t a = NULL, b = NULL;
    int rc = cudnnGetStream(h, &s) != CUDNN_STATUS_SUCCESS || cudaEventCreate(&a) != cudaSuccess ||
             cudaEventCreate(&b) != cudaSuccess;
    const float one = 1.0f, zero = 0.0f;
    float first = -1.0f, best = 0.0f;
    for (int k = 0; k < ncand && !rc; k++) {
        int ok = 1;
        for (int r = 0; r < 7 && ok; r++) {
            if (r == 2) rc = cudaEventRecord(a, s) != cudaSuccess;
            ok = !rc && cudnnConvolutionForward(h, &one, xd, x, wd, w, cd, cand[k], ws, ws_bytes, &zero, yd, y) ==
                            CUDNN_STATUS_SUCCESS;
        }
        float ms = 0.0f;
        rc = rc || cudaEventRecord(b, s) != cudaSuccess || cudaEventSynchronize(b) != cudaSuccess ||
             cudaEventElapsedTime(&ms, a, b) != cudaSuccess;
        if (rc || !ok) continue;
        if (first < 0.0f) /* the first that ran: the baseline */
            *algo = cand[k], first = best = ms;
        else if (ms < best && ms < 0.95f * first)
            *algo = cand[k], best = ms;
    }
    if (a) cudaEventDestroy(a);
    if (b) cudaEventDestroy(b);
    return rc ? -1 : 0;
}

/* The workspace NAME_init gives cuBLAS (cublasSetWorkspace), so that its
 * calls inside the captured graph allocate nothing (cuBLAS otherwise takes
 * memory from the stream's pool during the capture): cuBLAS's recommended
 * size for Hopper. */
#define GC_CUBLAS_WORKSPACE ((size_t)32 << 20)

/* Blocks for n elements: enough for one element per thread, at most
 * GC_MAX_BLOCKS (the grid-stride loop covers the rest). */
static inline unsigned gc_blocks(int64_t n)
{
    int64_t b = (n + GC_THREADS - 1) / GC_THREADS;
    return (unsigned)(b < 1 ? 1 : b > GC_MAX_BLOCKS ? GC_MAX_BLOCKS : b);
}

#if GC_LAUNCHERS
/* Kernels launched through the driver API (--cuda-jit, and the emulation):
 * NAME.cu has one launcher per kernel, gc_launch_k<number>(fn, n, stream,
 * the kernel's own typed parameters), which takes the parameters' addresses
 * for cuLaunchKernel; the schedule declares fn (the kernels, found at
 * NAME_init) and the error flag gc_launch_rc that GC_LAUNCH sets. */
#define GC_ARGS(...) __VA_ARGS__
#define GC_LAUNCH(k, n, s, args) (gc_launch_rc |= gc_launch_##k(gc_fn, (int64_t)(n), (s), GC_ARGS args))

/* Launches f over n elements on stream s (as GC_LAUNCH does with <<<>>>):
 * 0, or -1. */
static inline int gc_kernel_launch(CUfunction f, int64_t n, cudaStream_t s, void **params)
{
    return cuLaunchKernel(f, gc_blocks(n), 1, 1, GC_THREADS, 1, 1, 0, (CUstream)s, params, NULL) == CUDA_SUCCESS ? 0 : -1;
}
#endif

#ifdef GC_CUDA_JIT
#include "gc_cuda_jit.h"
#endif

#if defined(__CUDACC__) && !defined(GC_CUDA_JIT)
#include "gc_cuda_kernel.h" /* the device side's shared part (the row kernels' lane reductions) */
#endif

#endif
