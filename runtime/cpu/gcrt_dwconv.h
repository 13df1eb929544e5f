/* gcrt_dwconv.h — the depthwise 2-D convolution of graphc's fast CPU kernels.
 *
 * A depthwise convolution (group == C == output channels) filters every
 * channel by its own small KHxKW kernel: a few multiply-adds per output
 * and a whole tensor read and written, so it is bound by memory traffic,
 * not by arithmetic. The generic conv (runtime/c/gcrt_nn.c) walks it with
 * bounds checks on every tap; this kernel streams each (image, channel)
 * plane once, row by row, vectorized across output columns, and applies
 * the epilogue (bias, residual, activation) before the row leaves the
 * cache. See gcrt_dwconv.c for the algorithm.
 *
 * Tensors are NCHW f32. Kernel sizes, strides and dilations are >= 1, pads
 * >= 0 (any size relative to the image), OH/OW >= 0. Y must not overlap X,
 * Wt or epi->res. Bit-for-bit the same result for any thread count (not
 * across ISAs: the SIMD paths fuse multiply-adds, portable C does not).
 */
#ifndef GCRT_DWCONV_H
#define GCRT_DWCONV_H

#include <stdint.h>

#include "gcrt_cpu.h"

/* Depthwise 2-D convolution in NCHW, f32: one KHxKW filter per channel (group == C == output channels).
 * X [N,C,H,W], Wt [C,1,KH,KW] (row-major as ONNX stores it), Y [N,C,OH,OW]; strides sh,sw; dilations dh,dw;
 * top/left pads pt,pl (bottom/right pads are whatever OH/OW imply); epi: bias per channel (may be NULL),
 * res (NULL or a tensor of Y's shape, added after the bias), act (GCRT_ACT_NONE/RELU/CLIP with lo/hi),
 * epi itself may be NULL = no epilogue. pool may be NULL (serial). */
GCRT_FN void gcrt_dwconv2d_f32(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
                               int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t dh, int64_t dw,
                               int64_t pt, int64_t pl, const float *X, const float *Wt, const GcrtEpi *epi,
                               float *Y, const GcThreadPool *pool);

/* A depthwise conv (one image, dilation 1, no residual) and the 1x1 conv pw that alone reads its
 * output (stride 1, no padding, G == 1, N == 1, w_trans: W^T panels; pw->X is not read), fused
 * by bands of output rows: a task computes the depthwise rows of its band for every channel into
 * its slot of pw->ws (C x the band's positions) and multiplies them there, positions as the
 * tile's rows, through pw's epilogue. The depthwise output never goes through memory the size
 * of the map, and no other thread writes or reads it: at 2 threads,
 * MobileNetV2's 14x14 pairs ran their 1x1 conv at about 1.5 times the one-thread work when it
 * read the depthwise output split by channels from both cores (bench/layer_profile.py). Every
 * output is the sum it is unfused (taps in filter order from the bias; the 1x1 conv's K blocks in
 * order), so the results are those of gcrt_dwconv2d_f32 then gcrt_conv_gemm_f32, bit for bit,
 * at any band size and thread count.
 * Bands: gcrt_dwpw_rows rows each for T = min(the pool's threads, pw->max_slots); each task
 * running (at most min(T, bands) at once) holds a slot of C x rows x OW floats in pw->ws, which
 * is the depthwise output's own buffer (C x OH x OW floats, and min(T, bands) x rows <= OH), so
 * the fusion needs no memory beyond the unfused kernels'; it leaves that buffer holding slot
 * contents, not the depthwise output. */
#define GCRT_DWPW_BAND 256 /* the most positions of a band (unless one row has more) */
static inline int64_t gcrt_dwpw_rows(int64_t OH, int64_t OW, int64_t T)
{
    /* ceil(OH / (T m)) for the least m that gives at most GCRT_DWPW_BAND positions a band and
     * T bands of at most OH rows (about T m bands: every thread gets about m) */
    for (int64_t m = 1;; m++) {
        const int64_t rows = (OH + T * m - 1) / (T * m);
        if (rows <= 1) return 1;
        if (rows * OW <= GCRT_DWPW_BAND && T * rows <= OH) return rows;
    }
}
GCRT_FN void gcrt_dwconv_pw_f32(int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t KH, int64_t KW,
                                int64_t sh, int64_t sw, int64_t pt, int64_t pl, const float *X, const float *Wd,
                                const GcrtEpi *epi, const GcrtConv *pw, const GcThreadPool *pool);

/* A 1x1 conv pw (one image, stride 1, no padding, G == 1, W in 8-row panels: w_packed, not
 * w_trans; no residual) and the depthwise conv (dilation 1) that alone reads its output, fused by
 * bands of output rows: a pool's thread takes its share of the depthwise output rows,
 * GCRT_PWDW_ROWS at a time, computes the band's input rows with pw into its slot of pw->ws (the
 * rows the band before left there that this band reads again are moved up, not computed again),
 * then the band's depthwise rows from the slot into Y, through epi. pw's output never goes
 * through memory the size of the map (MobileNetV2's 112x112 expansion wrote 4.8 MB that the
 * depthwise conv read back), and no other thread writes or reads it. Slots: C x min(H,
 * GCRT_PWDW_SLOT_ROWS(KH, sh)) x W floats each, max_slots (>= 1) of them, at most H rows in all,
 * in pw->ws: graphc passes pw's output buffer, which its memory plan sizes to the slots, so the
 * fusion takes less memory than the unfused kernels. pw->Y is not written. Every output is the
 * sum it is unfused, so the results are those of gcrt_conv_gemm_f32 then gcrt_dwconv2d_f32, bit
 * for bit, at any thread count. */
#define GCRT_PWDW_ROWS 8 /* output rows per band: a multi-row pass of AVX-512 (GCRT_DW_RB) */
#define GCRT_PWDW_SLOT_ROWS(KH, sh) ((GCRT_PWDW_ROWS - 1) * (sh) + (KH))
GCRT_FN void gcrt_pw_dwconv_f32(const GcrtConv *pw, int64_t OH, int64_t OW, int64_t KH, int64_t KW, int64_t sh,
                                int64_t sw, int64_t pt, int64_t pl, const float *Wd, const GcrtEpi *epi, float *Y,
                                const GcThreadPool *pool);

/* The SIMD specializations of the kernel (x86 with AVX2+FMA or AVX-512), as bits: 3x3, 5x5 and any
 * other filter (no column dilation for the first two), each at column stride 1 and 2; any other
 * column stride takes the portable C rows, which are in every build. GCRT_DW_VARIANT(KH, KW, dw, sw)
 * is the bit a call takes (0: the portable rows), an integer constant expression when its
 * arguments are. Each specialization is 4 to 65 KB of vector code (MobileNetV2's model source took
 * 13 to 14 s to compile at -O2 with all six, 3 to 4 s with its two), so a program that knows its
 * calls defines GCRT_DW_VARIANTS, before it includes gcrt_dwconv.c, as the OR of their
 * GCRT_DW_VARIANT bits (graphc's generated code does). A call whose bit it lacks is still computed,
 * by the portable rows (which round each product before adding it, where the SIMD paths fuse the
 * multiply-add). Undefined: all six. */
#define GCRT_DW_K3_S1 1u
#define GCRT_DW_K5_S1 2u
#define GCRT_DW_KANY_S1 4u
#define GCRT_DW_K3_S2 8u
#define GCRT_DW_K5_S2 16u
#define GCRT_DW_KANY_S2 32u
#define GCRT_DW_ALL 63u
#define GCRT_DW_KBIT_(KH, KW, dw) \
    ((dw) == 1 && (KH) == 3 && (KW) == 3 ? 1u : (dw) == 1 && (KH) == 5 && (KW) == 5 ? 2u : 4u)
#define GCRT_DW_VARIANT(KH, KW, dw, sw) \
    ((sw) == 1 ? GCRT_DW_KBIT_(KH, KW, dw) : (sw) == 2 ? GCRT_DW_KBIT_(KH, KW, dw) << 3 : 0u)
#ifndef GCRT_DW_VARIANTS
#define GCRT_DW_VARIANTS GCRT_DW_ALL
#endif

#endif
