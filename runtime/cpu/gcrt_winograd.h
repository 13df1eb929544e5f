/* gcrt_winograd.h — graphc's Winograd convolution for 3x3, stride 1,
 * dilation 1, group 1 convolutions (NCHW, f32): F(4x4, 3x3), after Lavin &
 * Gray, "Fast Algorithms for Convolutional Neural Networks" (2016).
 *
 * Each 4x4 block of outputs (a "tile") is computed from the 6x6 input patch
 * d under it as Y = A^T [ (G g G^T) (.) (B^T d B) ] A, where (.) is the
 * elementwise product of two 6x6 matrices. Summed over input channels, the
 * elementwise products of all tiles become 36 independent matrix products,
 * one per position xi = 6*q + p of the 6x6 transform domain:
 *     Mxi[M, tiles] = Uxi[M, C] * Vxi[C, tiles],
 * where U = G g G^T is the transformed filter (computed when the model is
 * compiled) and V = B^T d B the transformed input. A 3x3 conv costs
 * 2*M*C*9 flops per output; this costs 2*M*C*36/16 = 2*M*C*2.25 per output
 * plus the transforms, a 4x reduction of the multiply-adds.
 *
 * Work: the tiles of all images, row-major (image, tile row, tile column),
 * go in blocks of 32 (one packed B panel, GCRT_PACK_NR columns); the output
 * channels in blocks of GCRT_WINO_MB. A work item (block of tiles, block of
 * channels) transforms the input of its tiles GCRT_WINO_KC channels at a
 * time into its slot, multiplies with gcrt_ukernel into the 36 products of
 * its channel block (accumulated over the channel blocks in order), and
 * applies the output transform with the epilogue, storing Y once. A block
 * of at most 16 tiles (small images) uses narrower kernels of its own.
 * Items are fixed by the shapes alone and never split a sum, so Y is
 * bit-for-bit the same for every thread count.
 *
 * Speed (one Zen 4 core, AVX-512; bench/wino_bench.c): 2.2-3.3x the
 * conv-gemm kernel on ResNet and VGG layers from 224x224 down to 14x14
 * (effective 200-300 GFLOP/s counting the direct conv's flops, against
 * ~80). With very few tiles (a 7x7 image: 4 tiles) the products stream
 * U, 4x the size of W, for 4 columns: memory-bound, about on par with the
 * direct conv at N = 1 (512 channels), 3x at N = 8.
 *
 * Accuracy: F(4x4, 3x3) in f32 loses about one decimal digit against the
 * direct sum (the transforms scale by up to 8 and G holds 1/6 and 1/24):
 * test_winograd.c measures, for K = 9*C = 576 to 4608 with inputs and
 * weights ~U(-1,1)/sqrt(K), a largest error of 1.5-3e-5 of the output's
 * RMS (RMS error ~1.5e-6; the direct conv: largest 2-3e-6).
 *
 * ISA as gcrt_cpu.h: AVX-512F (transforms on 16 tiles per vector, the
 * inputs and outputs moved with masked loads/stores and in-register
 * stride-4 (de)interleaving, no gathers), AVX2+FMA (8 tiles per vector,
 * patches staged with scalar copies), portable C (4-float arrays). No
 * allocation, no I/O, no global state; every function is GCRT_FN.
 */
#ifndef GCRT_WINOGRAD_H
#define GCRT_WINOGRAD_H

#include "gcrt_cpu.h"

/* Tiles per block (one B panel of the micro-kernel). */
#define GCRT_WINO_NB 32
/* Input channels transformed at a time (the K block of the products). */
#define GCRT_WINO_KC 64
/* Output channels per work item (a multiple of 2 * GCRT_PACK_MR). */
#define GCRT_WINO_MB 128

/* Output channels padded to whole GCRT_PACK_MR-row panels. */
#define GCRT_WINO_MPAD(M) (((M) + GCRT_PACK_MR - 1) / GCRT_PACK_MR * GCRT_PACK_MR)

/* Output channels per work item: MB (at most MPAD(M)), or MB/2 when that
 * leaves the layer fewer than GCRT_WINO_MIN_ITEMS items (threads would
 * idle); and the items: blocks of tiles times blocks of channels. Both
 * depend on the shapes only. */
#define GCRT_WINO_MIN_ITEMS 4
#define GCRT_WINO_BLOCKS(N, OH, OW) (((N) * (((OH) + 3) / 4) * (((OW) + 3) / 4) + GCRT_WINO_NB - 1) / GCRT_WINO_NB)
#define GCRT_WINO_MB1(M) (GCRT_WINO_MPAD(M) < GCRT_WINO_MB ? GCRT_WINO_MPAD(M) : GCRT_WINO_MB)
#define GCRT_WINO_ITEM_M(N, M, OH, OW)                                                                 \
    (GCRT_WINO_MB1(M) == GCRT_WINO_MB &&                                                               \
             GCRT_WINO_BLOCKS(N, OH, OW) * (((M) + GCRT_WINO_MB - 1) / GCRT_WINO_MB) < GCRT_WINO_MIN_ITEMS \
         ? GCRT_WINO_MB / 2                                                                            \
         : GCRT_WINO_MB1(M))

/* Floats of the transformed filter U for M output and C input channels:
 * 36 matrices of [MPAD(M), C] in the packed A-panel layout of gcrt_cpu.h,
 * matrix xi = 6*q + p after matrix xi-1:
 *     U[(xi*MPAD(M) + m/8*8)*C + c*8 + m%8] = (G g[m][c] G^T)[q][p]
 * (GCRT_PACK_MR = 8; rows m >= M are zero). */
#define GCRT_WINO_WEIGHT_FLOATS(M, C) (36 * GCRT_WINO_MPAD(M) * (C))

/* Floats between consecutive matrices xi of the slot's buffers beyond
 * their size: one cache line, so that the 36 values of a tile that a
 * transform reads or writes do not all fall into one cache set. */
#define GCRT_WINO_SKEW 16

/* Floats of scratch one task slot needs (the workspace holds max_slots of
 * them, slot j at ws + j * GCRT_WINO_SLOT_FLOATS(M, C)): the transformed
 * input of one channel block, 36 matrices [kc][NB], kc = min(C, KC), then
 * the products of one output-channel block, 36 matrices [mb][NB],
 * mb = min(MPAD(M), MB), each matrix followed by GCRT_WINO_SKEW floats.
 * At most 36*(32*(64 + 128) + 32) floats = 868.5 KiB, whatever M and C
 * (an L2 cache's worth). */
#define GCRT_WINO_SLOT_FLOATS(M, C)                                                      \
    (36 * (GCRT_WINO_NB *                                                                \
               (((C) < GCRT_WINO_KC ? (C) : GCRT_WINO_KC) +                              \
                (GCRT_WINO_MPAD(M) < GCRT_WINO_MB ? GCRT_WINO_MPAD(M) : GCRT_WINO_MB)) + \
           2 * GCRT_WINO_SKEW))

/* U = G g G^T of every filter g = W[m][c] (W: [M, C, 3, 3]) into the layout
 * above, GCRT_WINO_WEIGHT_FLOATS(M, C) floats (padding rows zeroed). The
 * compiler does this at compile time with backend/c/cpu_wino_pack.c, whose
 * cgen_wino_pack gives the same bits (the arithmetic is exact in double
 * but for rounding steps that no compiler may reorder or contract). */
GCRT_FN void gcrt_wino_transform_weights(int64_t M, int64_t C, const float *W, float *U);

/* One convolution: Y [N, M, OH, OW] = conv(X [N, C, H, W], W) with the
 * 3x3 filter given as U = gcrt_wino_transform_weights(W), stride 1,
 * dilation 1, one group, top pad pt and left pad pl; the bottom and right
 * pads are implied by OH and OW (OH = H + pt + pb - 2; any pads >= 0, or
 * negative bottom/right pads that crop). Epilogue on every output:
 * y = act(y + bias[m] + res[n][m][oh][ow]) (bias NULL: none; res NULL or
 * of Y's shape; act any GCRT_ACT_*, as gcrt_cpu.h defines them), applied
 * in the output transform. ws: max_slots >= 1 slots of
 * GCRT_WINO_SLOT_FLOATS(M, C) floats; X, U, bias, res may not overlap Y.
 * Unlike the direct sum, a NaN or infinity in X reaches (as NaN or
 * infinity) all 16 outputs of every tile whose 6x6 patch holds it, not
 * only those whose 3x3 window does, and one in W[m] every output of
 * channel m: the transforms mix a whole patch, a whole filter. */
typedef struct GcrtWino {
    int64_t N, C, H, W, M, OH, OW, pt, pl;
    const float *X, *U;
    const float *bias, *res;
    int act;
    float lo, hi;
    float *Y;
    float *ws;
    int max_slots;
} GcrtWino;
GCRT_FN void gcrt_wino_conv_f32(const GcrtWino *w, const GcThreadPool *pool);

#endif
