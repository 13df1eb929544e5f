/* cpu_wino_pack.h — the compile-time filter transform of graphc's Winograd
 * convolution (runtime/cpu/gcrt_winograd.h): the C backend writes a 3x3,
 * stride-1 conv's weights as U = G g G^T in the packed layout that
 * gcrt_wino_conv_f32 reads, bit-identical to the runtime's own
 * gcrt_wino_transform_weights, and sizes the kernel's workspace
 * (tests/runtime/test_winograd.c checks both against the runtime).
 */
#ifndef GRAPHC_CPU_WINO_PACK_H
#define GRAPHC_CPU_WINO_PACK_H

#include <stddef.h>
#include <stdint.h>

/* Floats of the transformed filter for M output and C input channels:
 * GCRT_WINO_WEIGHT_FLOATS(M, C) = 36 * (M rounded up to 8) * C. */
int64_t cgen_wino_packed_floats(int64_t M, int64_t C);

/* GCRT_WINO_SLOT_FLOATS(M, C): the floats of one task slot of the
 * workspace. */
int64_t cgen_wino_slot_floats(int64_t M, int64_t C);

/* Bytes of workspace for a conv run with max_slots = max_threads: one slot
 * per task the kernel can start, min(max_threads, its work items). */
size_t cgen_cpu_wino_workspace(int64_t N, int64_t C, int64_t M, int64_t OH, int64_t OW, int max_threads);

/* U (cgen_wino_packed_floats(M, C) floats) = the transform of W [M, C, 3, 3]:
 * U[(xi*Mp + m/8*8)*C + c*8 + m%8] = (G W[m][c] G^T)[xi/6][xi%6], Mp = M
 * rounded up to 8, rows m >= M zero. */
void cgen_wino_pack(int64_t M, int64_t C, const float *W, float *U);

#endif
