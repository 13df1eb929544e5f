/* test_fast_nn.c — the fast last-axis f32 kernels of runtime/c/gcrt_nn.c
 * (gcrt_softmax_last_f32, gcrt_logsoftmax_last_f32, gcrt_layernorm_last_f32)
 * against the general kernels of the same file (compensated sums), and
 * their vector exp against double exp.
 *
 * The file includes the runtime sources, so it tests whichever path the
 * build selects; tests/CMakeLists.txt builds it twice, as every runtime
 * test: runtime_fast_nn_native (-march=native: AVX-512F or AVX2+FMA on
 * x86) and runtime_fast_nn_portable (the portable C, whose exp is expf).
 *
 *   - exp: 10M evenly spaced and 2M random arguments in [-87, 88], the error
 *     in ulps of the float result against exp in double (at most 2 ulp, and
 *     relative error at most 3e-7); the subnormal range within one subnormal
 *     ulp; overflow, underflow, +-inf and NaN;
 *   - random rows: n in 1..300, outer in 1..20, values uniform in
 *     [-s, s] plus a row offset in [-s, s], s in 0.01..100 (log-uniform),
 *     scale and B uniform in [-2, 2]; softmax within 2e-6
 *     relative (plus 1e-38 absolute, for subnormal probabilities),
 *     log-softmax within 2e-6 * (1 + |y|), layer norm within 1e-5 * (1 + |y|),
 *     with and without B; each kernel also run in place (Y == X);
 *   - special rows (+inf, -inf, NaN, only -inf, +-1e30, a constant row, in
 *     full vectors and in the tail): NaN where the reference has NaN, the
 *     same infinities, the rest within the tolerances above.
 * Prints the worst errors; exit status 0 when all pass. */
#include "gcrt_linalg.c"
#include "gcrt_nn.c"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
/* Uniform in [0, 1). */
static double urand(void) { return (double)(next_u64() >> 11) / 9007199254740992.0; }
static int64_t irand(int64_t lo, int64_t hi) { return lo + (int64_t)(next_u64() % (uint64_t)(hi - lo + 1)); }

static int failures;
static double worst_sm, worst_lsm, worst_ln;

/* Compares got with want elementwise: NaN only against NaN, infinities
 * exactly, else |got - want| <= rel * |want| + abs_floor + rel_one * (1 + |want|). */
static double compare(const char *what, const float *got, const float *want, int64_t count, double rel,
                      double rel_one, double abs_floor)
{
    double worst = 0;
    for (int64_t i = 0; i < count; i++) {
        double g = got[i], w = want[i];
        int ok;
        if (isnan(w) || isnan(g))
            ok = isnan(w) && isnan(g);
        else if (isinf(w) || isinf(g))
            ok = g == w;
        else {
            double d = fabs(g - w), tol = rel * fabs(w) + abs_floor + rel_one * (1.0 + fabs(w));
            ok = d <= tol;
            if (d / tol > worst) worst = d / tol;
        }
        if (!ok) {
            if (failures < 20)
                printf("FAIL %s: element %lld got %.9g want %.9g\n", what, (long long)i, g, w);
            failures++;
            return worst;
        }
    }
    return worst;
}

/* e^x for count floats through the kernels' exp (W lanes at a time). */
static void exp_many(const float *x, float *y, int64_t count)
{
    int64_t j;
    for (j = 0; j + GCRT_NNV_W <= count; j += GCRT_NNV_W) gcrt_nnv_store(y + j, gcrt_nnv_exp(gcrt_nnv_load(x + j)));
    for (; j < count; j++) {
        float in[GCRT_NNV_W] = {0}, out[GCRT_NNV_W];
        in[0] = x[j];
        gcrt_nnv_store(out, gcrt_nnv_exp(gcrt_nnv_load(in)));
        y[j] = out[0];
    }
}

static void test_exp(void)
{
    enum { EVEN = 10000000, RANDOM = 2000000, CHUNK = 4096 };
    static float xs[CHUNK], ys[CHUNK];
    double max_ulp = 0, max_rel = 0, worst_x = 0, max_sub = 0;
    int64_t done = 0;
    while (done < EVEN + RANDOM) {
        int64_t m = EVEN + RANDOM - done < CHUNK ? EVEN + RANDOM - done : CHUNK;
        for (int64_t i = 0; i < m; i++) {
            int64_t k = done + i;
            xs[i] = k < EVEN ? (float)(-87.0 + 175.0 * (double)k / (double)(EVEN - 1)) : (float)(-87.0 + 175.0 * urand());
        }
        exp_many(xs, ys, m);
        for (int64_t i = 0; i < m; i++) {
            double want = exp((double)xs[i]);
            int e;
            frexp(want, &e);
            double err = fabs((double)ys[i] - want), ulp = ldexp(1.0, e - 24);
            if (err / ulp > max_ulp) {
                max_ulp = err / ulp;
                worst_x = xs[i];
            }
            if (err / want > max_rel) max_rel = err / want;
        }
        done += m;
    }
    /* the subnormal results: within one subnormal ulp (2^-149) */
    for (int64_t k = 0; k < 200000; k++) {
        float x = (float)(-103.9 + (103.9 - 87.4) * (double)k / 199999.0), y;
        exp_many(&x, &y, 1);
        double err = fabs((double)y - exp((double)x)) / ldexp(1.0, -149);
        if (err > max_sub) max_sub = err;
    }
    printf("exp: %d values in [-87, 88]: max error %.3f ulp (at x = %.9g), max relative error %.3g; "
           "subnormal results: max error %.3f x 2^-149\n",
           EVEN + RANDOM, max_ulp, worst_x, max_rel, max_sub);
    if (!(max_ulp <= 2.0 && max_rel <= 3e-7 && max_sub <= 1.0)) {
        printf("FAIL exp: over the bound (2 ulp, 3e-7 relative, 1 subnormal ulp)\n");
        failures++;
    }
    {
        float sx[] = {-INFINITY, -1e30f, -200.0f, -104.5f, 88.75f, 89.0f, 100.0f, 1e30f, INFINITY, NAN, 0.0f, -0.0f, 88.72f};
        int ns = (int)(sizeof sx / sizeof sx[0]);
        float sy[sizeof sx / sizeof sx[0]];
        exp_many(sx, sy, ns);
        for (int i = 0; i < ns; i++) {
            float want = expf(sx[i]);
            int ok = isnan(want) ? isnan(sy[i]) : isinf(want) || want == 0 ? sy[i] == want
                                                                          : fabs((double)sy[i] - (double)want) <= 2e-7 * (double)want;
            if (!ok) {
                printf("FAIL exp(%g) = %.9g, want %.9g\n", (double)sx[i], (double)sy[i], (double)want);
                failures++;
            }
        }
    }
}

/* One softmax / log-softmax case: rows of X[outer, n] against the reference,
 * out of place and in place. */
static void check_softmax(const char *what, int64_t outer, int64_t n, const float *X)
{
    size_t bytes = sizeof(float) * (size_t)(outer * n);
    float *want = calloc((size_t)(outer * n), sizeof(float)), *got = calloc((size_t)(outer * n), sizeof(float));
    char name[96];
    double w;
    gcrt_softmax_f32(outer, n, 1, X, want);
    gcrt_softmax_last_f32(outer, n, X, got);
    snprintf(name, sizeof name, "softmax %s (outer %lld, n %lld)", what, (long long)outer, (long long)n);
    w = compare(name, got, want, outer * n, 2e-6, 0, 1e-38);
    if (w > worst_sm) worst_sm = w;
    memcpy(got, X, bytes);
    gcrt_softmax_last_f32(outer, n, got, got);
    compare(name, got, want, outer * n, 2e-6, 0, 1e-38);

    gcrt_logsoftmax_f32(outer, n, 1, X, want);
    gcrt_logsoftmax_last_f32(outer, n, X, got);
    snprintf(name, sizeof name, "logsoftmax %s (outer %lld, n %lld)", what, (long long)outer, (long long)n);
    w = compare(name, got, want, outer * n, 0, 2e-6, 0);
    if (w > worst_lsm) worst_lsm = w;
    memcpy(got, X, bytes);
    gcrt_logsoftmax_last_f32(outer, n, got, got);
    compare(name, got, want, outer * n, 0, 2e-6, 0);
    free(want);
    free(got);
}

/* One layer-norm case, with B and without, out of place and in place. */
static void check_layernorm(const char *what, int64_t outer, int64_t n, const float *X, const float *scale,
                            const float *B)
{
    size_t bytes = sizeof(float) * (size_t)(outer * n);
    float *want = calloc((size_t)(outer * n), sizeof(float)), *got = calloc((size_t)(outer * n), sizeof(float));
    char name[96];
    for (int with_b = 0; with_b < 2; with_b++) {
        const float *b = with_b ? B : 0;
        double w;
        gcrt_layernorm_f32(outer, n, X, scale, n, b, n, 1e-5f, want, 0, 0);
        gcrt_layernorm_last_f32(outer, n, X, scale, b, 1e-5f, got);
        snprintf(name, sizeof name, "layernorm %s%s (outer %lld, n %lld)", what, with_b ? "" : " without B",
                 (long long)outer, (long long)n);
        w = compare(name, got, want, outer * n, 0, 1e-5, 0);
        if (w > worst_ln) worst_ln = w;
        memcpy(got, X, bytes);
        gcrt_layernorm_last_f32(outer, n, got, scale, b, 1e-5f, got);
        compare(name, got, want, outer * n, 0, 1e-5, 0);
    }
    free(want);
    free(got);
}

static void test_random_rows(void)
{
    for (int iter = 0; iter < 3000; iter++) {
        int64_t n = iter < 300 ? iter + 1 : irand(1, 300), outer = irand(1, 20);
        float *X = malloc(sizeof(float) * (size_t)(outer * n)), *scale = malloc(sizeof(float) * (size_t)n);
        float *B = malloc(sizeof(float) * (size_t)n);
        double s = pow(10.0, -2.0 + 4.0 * urand());
        for (int64_t o = 0; o < outer; o++) {
            double offset = s * (2.0 * urand() - 1.0);
            for (int64_t j = 0; j < n; j++) X[o * n + j] = (float)(offset + s * (2.0 * urand() - 1.0));
        }
        for (int64_t j = 0; j < n; j++) {
            scale[j] = (float)(4.0 * urand() - 2.0);
            B[j] = (float)(4.0 * urand() - 2.0);
        }
        check_softmax("random", outer, n, X);
        check_layernorm("random", outer, n, X, scale, B);
        free(X);
        free(scale);
        free(B);
    }
}

static void test_special_rows(void)
{
    static const int64_t sizes[] = {1, 2, 7, 8, 9, 15, 16, 17, 31, 33, 40};
    const float specials[] = {INFINITY, -INFINITY, NAN, 1e30f, -1e30f};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        int64_t n = sizes[si];
        float *X = malloc(sizeof(float) * (size_t)n), *scale = malloc(sizeof(float) * (size_t)n);
        float *B = malloc(sizeof(float) * (size_t)n);
        for (int64_t j = 0; j < n; j++) {
            scale[j] = 1.0f + 0.01f * (float)j;
            B[j] = 0.5f - 0.02f * (float)j;
        }
        /* one special value at the first, a middle and the last (tail) position */
        for (size_t k = 0; k < sizeof specials / sizeof specials[0]; k++)
            for (int where = 0; where < 3; where++) {
                int64_t pos = where == 0 ? 0 : where == 1 ? n / 2 : n - 1;
                for (int64_t j = 0; j < n; j++) X[j] = (float)(2.0 * urand() - 1.0);
                X[pos] = specials[k];
                check_softmax("special", 1, n, X);
                check_layernorm("special", 1, n, X, scale, B);
                /* the other elements -inf */
                for (int64_t j = 0; j < n; j++)
                    if (j != pos) X[j] = -INFINITY;
                check_softmax("special among -inf", 1, n, X);
            }
        for (int64_t j = 0; j < n; j++) X[j] = -INFINITY;
        check_softmax("all -inf", 1, n, X);
        for (int64_t j = 0; j < n; j++) X[j] = NAN;
        check_softmax("all NaN", 1, n, X);
        for (int64_t j = 0; j < n; j++) X[j] = 3.25f;
        check_softmax("constant", 1, n, X);
        check_layernorm("constant", 1, n, X, scale, B);
        for (int64_t j = 0; j < n; j++) X[j] = j % 2 ? 80.0f : -80.0f; /* subnormal probabilities */
        check_softmax("+-80", 1, n, X);
        free(X);
        free(scale);
        free(B);
    }
}

int main(void)
{
    printf("fast nn kernels: %d float lanes (%s)\n", GCRT_NNV_W,
           GCRT_NNV_W == 16 ? "AVX-512F" : GCRT_NNV_W == 8 ? "AVX2+FMA" : "portable C");
    test_exp();
    test_random_rows();
    test_special_rows();
    printf("random rows: worst error / tolerance: softmax %.3f, logsoftmax %.3f, layernorm %.3f\n", worst_sm,
           worst_lsm, worst_ln);
    if (failures) {
        printf("%d failures\n", failures);
        return 1;
    }
    printf("all passed\n");
    return 0;
}
