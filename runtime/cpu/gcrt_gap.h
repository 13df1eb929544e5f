/* gcrt_gap.h — global average pooling split over the thread pool, f32.
 *
 * MobileNetV2 ends in a GlobalAveragePool of 1280 planes of 7x7. The
 * portable kernel (gcrt_global_avgpool_f32, runtime/c/gcrt_nn.c) runs on
 * the calling thread alone: 0.024 ms at one thread, and longer at two
 * (bench/layer_profile.py), since the planes the conv before it wrote on
 * the other core then come over to this one. This kernel hands blocks of
 * GCRT_GAP_TILE planes to the pool, each block computed by the portable
 * kernel: the same compensated sum per plane, so every thread count gives
 * the portable kernel's bits.
 *
 * X is [NC, S] f32 (NC = N*C planes of S elements), Y [NC]; S > 0.
 */
#ifndef GCRT_GAP_H
#define GCRT_GAP_H

#include <stdint.h>

#include "gcrt_cpu.h"

/* Y[q] = the mean of plane q of X, for q in [0, NC). pool may be NULL (serial). */
GCRT_FN void gcrt_global_avgpool_pool_f32(int64_t NC, int64_t S, const float *X, float *Y, const GcThreadPool *pool);

#endif
