/* gcrt_signal.h — sampling kernels the generated code calls: GridSample
 * (PyTorch grid_sample semantics on 4-D NCHW inputs). Plain C99; every
 * size is an explicit argument; no allocation, no I/O, no global state. */
#ifndef GCRT_SIGNAL_H
#define GCRT_SIGNAL_H

#include <stdint.h>

#include "gcrt_base.h"

/* Y[N,C,OH,OW] sampled from X[N,C,H,W] at grid[N,OH,OW,2] (x, y in
 * [-1, 1]). mode: 0 bilinear, 1 nearest, 2 bicubic; pad: 0 zeros,
 * 1 border, 2 reflection; align: align_corners. Computes in double. */
GCRT_FN void gcrt_grid_sample_f32(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
                          int mode, int pad, int align, const float *X, const float *grid, float *Y);
GCRT_FN void gcrt_grid_sample_f64(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
                          int mode, int pad, int align, const double *X, const double *grid, double *Y);

#endif
