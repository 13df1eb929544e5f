/* cpu_wino_pack.c — the filter transform of the Winograd F(4x4, 3x3)
 * convolution, done when the model is compiled (see cpu_wino_pack.h).
 *
 * This is the compiler's copy of gcrt_wino_transform_weights
 * (runtime/cpu/gcrt_winograd.c) and must stay its twin, operation for
 * operation: U = (24G) g (24G)^T / 576 in double, where 24G has the integer
 * entries 6, -4, 4, 1, 2, 24. Every product that feeds an addition is by a
 * power of two, or of a float by 6 or 24, hence exact, so neither copy's
 * compiler flags (FMA contraction included) can change a bit: the only
 * roundings are the additions, the stored products 6t and 24t, the
 * division and the conversion to float, all IEEE-defined.
 * The layout is the runtime's packed A panels of 8 rows (GCRT_PACK_MR).
 */
#include "cpu_wino_pack.h"

#include <string.h>

/* The constants of runtime/cpu/gcrt_cpu.h and gcrt_winograd.h. */
#define CGEN_WINO_MR 8    /* GCRT_PACK_MR */
#define CGEN_WINO_NB 32   /* GCRT_WINO_NB */
#define CGEN_WINO_KC 64   /* GCRT_WINO_KC */
#define CGEN_WINO_MB 128  /* GCRT_WINO_MB */
#define CGEN_WINO_SKEW 16 /* GCRT_WINO_SKEW */
#define CGEN_WINO_MIN_ITEMS 4 /* GCRT_WINO_MIN_ITEMS */

/* out[k*os] = (24G a)[k] for a = (a0, a1, a2). */
static void wino_g24(double a0, double a1, double a2, double *out, int os)
{
    const double s = a0 + a2, u = a0 + 4.0 * a2;
    out[0] = 6.0 * a0;
    out[os] = -4.0 * (s + a1);
    out[2 * os] = -4.0 * (s - a1);
    out[3 * os] = u + 2.0 * a1;
    out[4 * os] = u - 2.0 * a1;
    out[5 * os] = 24.0 * a2;
}

int64_t cgen_wino_packed_floats(int64_t M, int64_t C)
{
    return 36 * ((M + CGEN_WINO_MR - 1) / CGEN_WINO_MR * CGEN_WINO_MR) * C;
}

int64_t cgen_wino_slot_floats(int64_t M, int64_t C)
{
    const int64_t Mp = (M + CGEN_WINO_MR - 1) / CGEN_WINO_MR * CGEN_WINO_MR;
    return 36 * (CGEN_WINO_NB * ((C < CGEN_WINO_KC ? C : CGEN_WINO_KC) + (Mp < CGEN_WINO_MB ? Mp : CGEN_WINO_MB)) +
                 2 * CGEN_WINO_SKEW);
}

size_t cgen_cpu_wino_workspace(int64_t N, int64_t C, int64_t M, int64_t OH, int64_t OW, int max_threads)
{
    const int64_t Mp = (M + CGEN_WINO_MR - 1) / CGEN_WINO_MR * CGEN_WINO_MR;
    const int64_t tiles = N * ((OH + 3) / 4) * ((OW + 3) / 4), blocks = (tiles + CGEN_WINO_NB - 1) / CGEN_WINO_NB;
    int64_t mb = Mp < CGEN_WINO_MB ? Mp : CGEN_WINO_MB; /* GCRT_WINO_ITEM_M */
    if (mb == CGEN_WINO_MB && blocks * ((M + mb - 1) / mb) < CGEN_WINO_MIN_ITEMS) mb /= 2;
    if (mb <= 0 || OH <= 0 || OW <= 0 || tiles <= 0) return 0;
    int64_t items = blocks * ((M + mb - 1) / mb);
    if (items > max_threads) items = max_threads;
    return (size_t)(items * cgen_wino_slot_floats(M, C)) * sizeof(float);
}

void cgen_wino_pack(int64_t M, int64_t C, const float *W, float *U)
{
    const int64_t Mp = (M + CGEN_WINO_MR - 1) / CGEN_WINO_MR * CGEN_WINO_MR;
    for (int64_t m = 0; m < Mp; m++)
        for (int64_t c = 0; c < C; c++) {
            double t[6][3], u[6][6];
            memset(u, 0, sizeof u);
            if (m < M) {
                const float *g = W + (m * C + c) * 9;
                for (int l = 0; l < 3; l++) wino_g24((double)g[l], (double)g[3 + l], (double)g[6 + l], &t[0][l], 3);
                for (int q = 0; q < 6; q++) wino_g24(t[q][0], t[q][1], t[q][2], u[q], 1);
            }
            for (int xi = 0; xi < 36; xi++)
                U[(xi * Mp + m / CGEN_WINO_MR * CGEN_WINO_MR) * C + c * CGEN_WINO_MR + m % CGEN_WINO_MR] =
                    (float)(u[xi / 6][xi % 6] / 576.0);
        }
}
