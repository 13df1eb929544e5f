/* cpu_wino_pack.h — the compile-time filter transform of graphc's Winograd
 * convolution (runtime/cpu/gcrt_winograd.h): the C backend writes a 3x3,
 * stride-1 conv's weights as U = G g G^T in the packed layout that
 * gcrt_wino_conv_f32 reads, bit-identical to the runtime's own
 * gcrt_wino_transform_weights (tests/unit/test_winograd.c checks it).
 */
#ifndef GRAPHC_CPU_WINO_PACK_H
#define GRAPHC_CPU_WINO_PACK_H

#include <stdint.h>

/* Floats of the transformed filter for M output and C input channels:
 * GCRT_WINO_WEIGHT_FLOATS(M, C) = 36 * (M rounded up to 8) * C. */
int64_t cgen_wino_packed_floats(int64_t M, int64_t C);

/* U (cgen_wino_packed_floats(M, C) floats) = the transform of W [M, C, 3, 3]:
 * U[(xi*Mp + m/8*8)*C + c*8 + m%8] = (G W[m][c] G^T)[xi/6][xi%6], Mp = M
 * rounded up to 8, rows m >= M zero. */
void cgen_wino_pack(int64_t M, int64_t C, const float *W, float *U);

#endif
