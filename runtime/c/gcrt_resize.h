/* gcrt_resize.h — the tap tables of gcrt_resize (gcrt_vision.h) computed
 * while the model runs, for a Resize or Upsample whose scales or sizes (or
 * tf_crop_and_resize roi) are read at run time; a model with constant ones
 * gets its tables as constant arrays instead and never includes this unit.
 * Plain C99; every size is an explicit argument; no allocation, no I/O, no
 * global state. */
#ifndef GCRT_RESIZE_H
#define GCRT_RESIZE_H

#include <stdint.h>

#include "gcrt_base.h"

/* gcrt_resize_taps modes: ONNX Resize's mode, coordinate_transformation_mode
 * and nearest_mode, in the order the attribute strings are listed there. */
enum { GCRT_RESIZE_NEAREST, GCRT_RESIZE_LINEAR, GCRT_RESIZE_CUBIC };
enum { GCRT_RESIZE_HALF_PIXEL, GCRT_RESIZE_ASYMMETRIC, GCRT_RESIZE_PYTORCH_HALF_PIXEL, GCRT_RESIZE_TF_CROP, GCRT_RESIZE_ALIGN_CORNERS };
enum { GCRT_RESIZE_ROUND_FLOOR, GCRT_RESIZE_ROUND_CEIL, GCRT_RESIZE_FLOOR, GCRT_RESIZE_CEIL };

/* The tables of gcrt_resize_f32/_f64 for X[in] -> Y[out]: K[a] taps per output
 * index of axis a (1 nearest, 2 linear, 4 cubic; unused taps repeat the
 * first index with weight 0; an index outside a tf_crop_and_resize roi gets
 * idx -1), from scale[a], roi[2 * rank] (begins then ends) and the modes
 * above; a = cubic_coeff_a, exclude = exclude_outside. idx and w hold
 * sum(out[a] * K[a]) entries. */
GCRT_FN void gcrt_resize_taps_f32(int rank, const int64_t *in, const int64_t *out, const double *scale, const double *roi,
                                  int mode, int ctm, int nearest, double a, int exclude, const int64_t *K, int64_t *idx,
                                  float *w);
GCRT_FN void gcrt_resize_taps_f64(int rank, const int64_t *in, const int64_t *out, const double *scale, const double *roi,
                                  int mode, int ctm, int nearest, double a, int exclude, const int64_t *K, int64_t *idx,
                                  double *w);

#endif
