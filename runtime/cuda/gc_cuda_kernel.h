/* gc_cuda_kernel.h — the first line of the kernels graphc writes for NVRTC
 * (graphc compile --target=cuda --cuda-jit: NAME_kernels.cu, which NAME.cu
 * embeds as a string and compiles at NAME_init).
 *
 * NVRTC compiles device code with no host headers: no <stdint.h>, no
 * <math.h> macros. Under NVRTC (__CUDACC_RTC__) this header gives the
 * kernels what they read from those (the fixed-width integer types, NULL,
 * INFINITY, NAN) and the kernel macros of gc_cuda.h in their device form;
 * a kernel is `extern "C"` so that NAME_init finds it by its plain name
 * (cuModuleGetFunction "k<number>"). The f16/bf16 conversions are written
 * here (PTX cvt for f16, bit arithmetic for bf16) rather than taken from
 * cuda_fp16.h / cuda_bf16.h, which NVRTC does not have built in: NAME_init
 * must compile on a machine with the driver and libnvrtc but no toolkit
 * headers.
 *
 * Anywhere else (the CPU emulation includes NAME_kernels.cu into NAME.cu)
 * it is gc_cuda.h, whose macros the same kernels already compile under;
 * the row kernels' warp reductions at the end serve NVRTC and nvcc alike
 * (gc_cuda.h includes this header under nvcc).
 * NAME_init passes this text to NVRTC as the header "gc_cuda_kernel.h"; the
 * copy in the output folder is what tools/nvrtc_check reads.
 */
#ifndef GC_CUDA_KERNEL_H
#define GC_CUDA_KERNEL_H

#ifdef __CUDACC_RTC__
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#ifndef NULL
#define NULL 0
#endif
#define INT8_MIN (-128)
#define INT8_MAX 127
#define INT16_MIN (-32767 - 1)
#define INT16_MAX 32767
#define INT32_MIN (-2147483647 - 1)
#define INT32_MAX 2147483647
#define INT64_MIN (-9223372036854775807LL - 1)
#define INT64_MAX 9223372036854775807LL
#define UINT8_MAX 255
#define UINT16_MAX 65535
#define UINT32_MAX 4294967295U
#define UINT64_MAX 18446744073709551615ULL
#define INFINITY __int_as_float(0x7f800000)
#define NAN __int_as_float(0x7fc00000)

#define GC_THREADS 256
#define GC_KERNEL extern "C" __global__ void
#define GC_FOR_EACH(i, n)                                                                                        \
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < (int64_t)(n);                          \
         i += (int64_t)gridDim.x * blockDim.x)
#define GC_TABLE static __device__ const
#define GC_DEVICE static __device__
#ifdef GC_CUDA_HALF
/* f16 by the PTX conversions (round to nearest even); bf16 is the top half
 * of an f32, rounded to nearest even, NaN kept quiet */
static __device__ __forceinline__ float gc_f16_to_f32(uint16_t h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}
static __device__ __forceinline__ uint16_t gc_f32_to_f16(float f)
{
    uint16_t h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}
static __device__ __forceinline__ float gc_bf16_to_f32(uint16_t h) { return __int_as_float((int)((uint32_t)h << 16)); }
static __device__ __forceinline__ uint16_t gc_f32_to_bf16(float f)
{
    uint32_t u = (uint32_t)__float_as_int(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
#define GC_F16_TO_F32(h) gc_f16_to_f32(h)
#define GC_F32_TO_F16(f) gc_f32_to_f16(f)
#define GC_BF16_TO_F32(h) gc_bf16_to_f32(h)
#define GC_F32_TO_BF16(f) gc_f32_to_bf16(f)
#endif
#else
#include "gc_cuda.h"
#endif

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
/* The row kernels' warp reductions (NVRTC and nvcc; gc_cuda.h includes this
 * header under nvcc): a row's GC_LANES consecutive threads (one warp, every
 * lane active: the launch covers rows * GC_LANES threads and the
 * grid-stride step is a multiple of 32) combine their partial values by a
 * butterfly of __shfl_xor_sync, a fixed order, so a run's result does not
 * vary. Maxima compare as the kernels do (a NaN partial never wins). The
 * emulation has one lane per row and needs none of this (gc_cuda.h). */
#ifndef GC_LANES
#define GC_LANES 32
#endif
static __device__ __forceinline__ float gc_lane_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
static __device__ __forceinline__ double gc_lane_sum(double v)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}
static __device__ __forceinline__ float gc_lane_max(float v)
{
    for (int o = 16; o > 0; o >>= 1) {
        const float u = __shfl_xor_sync(0xffffffffu, v, o);
        v = u > v ? u : v;
    }
    return v;
}
static __device__ __forceinline__ double gc_lane_max(double v)
{
    for (int o = 16; o > 0; o >>= 1) {
        const double u = __shfl_xor_sync(0xffffffffu, v, o);
        v = u > v ? u : v;
    }
    return v;
}
#define GC_LANE_SUM(v) gc_lane_sum(v)
#define GC_LANE_MAX(v) gc_lane_max(v)
#endif

#endif
