/* gcrt_signal.c — GridSample for the generated code.
 *
 * One sampling core on doubles (gs_sample) reads pixels through a typed
 * accessor, so the f32 and f64 entry points share every formula. The grid
 * point is unnormalized (align_corners: -1/1 are the centres of the corner
 * pixels; otherwise their outer edges), the padding mode clips or reflects
 * the coordinate, and out-of-range taps read 0. Bicubic uses A = -0.75 and
 * applies the padding to each of its 16 taps (as PyTorch does).
 */
#include "gcrt_signal.h"

#include <math.h>

typedef struct GsImg {
    const float *f;
    const double *d;
    int64_t H, W;
} GsImg;

static double gs_at(const GsImg *m, int64_t y, int64_t x)
{
    if (y < 0 || y >= m->H || x < 0 || x >= m->W) return 0.0;
    return m->f ? (double)m->f[y * m->W + x] : m->d[y * m->W + x];
}

static double gs_reflect(double v, double lo2, double hi2)
{
    double mn, span, extra;
    if (lo2 == hi2) return 0.0;
    mn = lo2 / 2.0;
    span = (hi2 - lo2) / 2.0;
    v = fabs(v - mn);
    extra = fmod(v, span);
    /* the parity of the flips without an integer cast: v may be huge */
    return fmod(floor(v / span), 2.0) == 0.0 ? extra + mn : span - extra + mn;
}

/* A sample index from a coordinate: huge, infinite or NaN coordinates (the
 * grid is run-time data) become an index outside every image rather than an
 * out-of-range conversion. */
static int64_t gs_idx(double v)
{
    if (!(v > -2.0)) return -2;
    return v < 4611686018427387904.0 ? (int64_t)v : (int64_t)4611686018427387904.0;
}

static double gs_pad(double v, int64_t sz, int pad, int align)
{
    if (pad == 1) return fmin(fmax(v, 0.0), (double)(sz - 1));
    if (pad == 2) {
        v = align ? gs_reflect(v, 0.0, 2.0 * (double)(sz - 1)) : gs_reflect(v, -1.0, 2.0 * (double)sz - 1.0);
        return fmin(fmax(v, 0.0), (double)(sz - 1));
    }
    return v;
}

static double gs_cubic(double x0, double x1, double x2, double x3, double t)
{
    const double A = -0.75;
    double u = t + 1.0, v = 1.0 - t, c0, c1, c2, c3;
    c0 = ((A * u - 5.0 * A) * u + 8.0 * A) * u - 4.0 * A;
    c1 = ((A + 2.0) * t - (A + 3.0)) * t * t + 1.0;
    c2 = ((A + 2.0) * v - (A + 3.0)) * v * v + 1.0;
    u = v + 1.0;
    c3 = ((A * u - 5.0 * A) * u + 8.0 * A) * u - 4.0 * A;
    return x0 * c0 + x1 * c1 + x2 * c2 + x3 * c3;
}

/* One output value at unnormalized source coordinates (gx, gy). */
static double gs_sample(const GsImg *m, double gx, double gy, int mode, int pad, int align)
{
    if (mode == 2) {
        double fx = floor(gx), fy = floor(gy), r[4], q[4];
        int p, s;
        for (p = 0; p < 4; p++) {
            for (s = 0; s < 4; s++) {
                double yy = gs_pad(fy - 1.0 + p, m->H, pad, align), xx = gs_pad(fx - 1.0 + s, m->W, pad, align);
                q[s] = gs_at(m, gs_idx(floor(yy)), gs_idx(floor(xx)));
            }
            r[p] = gs_cubic(q[0], q[1], q[2], q[3], gx - fx);
        }
        return gs_cubic(r[0], r[1], r[2], r[3], gy - fy);
    } else {
        double x = gs_pad(gx, m->W, pad, align), y = gs_pad(gy, m->H, pad, align);
        double x0, y0, tx, ty;
        int64_t ix, iy;
        if (mode == 1) return gs_at(m, gs_idx(nearbyint(y)), gs_idx(nearbyint(x)));
        x0 = floor(x);
        y0 = floor(y);
        tx = x - x0;
        ty = y - y0;
        ix = gs_idx(x0);
        iy = gs_idx(y0);
        return gs_at(m, iy, ix) * (1.0 - tx) * (1.0 - ty) + gs_at(m, iy, ix + 1) * tx * (1.0 - ty) +
               gs_at(m, iy + 1, ix) * (1.0 - tx) * ty + gs_at(m, iy + 1, ix + 1) * tx * ty;
    }
}

/* The shared loop; exactly one of (Xf, gf, Yf) / (Xd, gd, Yd) is set. */
static void gs_run(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, int mode, int pad, int align,
                   const float *Xf, const float *gf, float *Yf, const double *Xd, const double *gd, double *Yd)
{
    int64_t b, i, j, c;
    for (b = 0; b < N; b++)
        for (i = 0; i < OH; i++)
            for (j = 0; j < OW; j++) {
                int64_t g = ((b * OH + i) * OW + j) * 2;
                double g0 = gf ? (double)gf[g] : gd[g], g1 = gf ? (double)gf[g + 1] : gd[g + 1];
                double gx = align ? (g0 + 1.0) / 2.0 * (double)(W - 1) : ((g0 + 1.0) * (double)W - 1.0) / 2.0;
                double gy = align ? (g1 + 1.0) / 2.0 * (double)(H - 1) : ((g1 + 1.0) * (double)H - 1.0) / 2.0;
                for (c = 0; c < C; c++) {
                    GsImg m;
                    double v;
                    int64_t o = ((b * C + c) * OH + i) * OW + j;
                    m.f = Xf ? Xf + (b * C + c) * H * W : 0;
                    m.d = Xd ? Xd + (b * C + c) * H * W : 0;
                    m.H = H;
                    m.W = W;
                    v = gs_sample(&m, gx, gy, mode, pad, align);
                    if (Yf) Yf[o] = (float)v;
                    else Yd[o] = v;
                }
            }
}

GCRT_FN void gcrt_grid_sample_f32(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
                          int mode, int pad, int align, const float *X, const float *grid, float *Y)
{
    gs_run(N, C, H, W, OH, OW, mode, pad, align, X, grid, Y, 0, 0, 0);
}

GCRT_FN void gcrt_grid_sample_f64(int64_t N, int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW,
                          int mode, int pad, int align, const double *X, const double *grid, double *Y)
{
    gs_run(N, C, H, W, OH, OW, mode, pad, align, 0, 0, 0, X, grid, Y);
}
