/* test_mathf.c — graphc's own float exp, log, tanh and erf
 * (runtime/common/gcrt_base.h, compiled in with GCRT_FREESTANDING as on a
 * bare-metal target) against the host's double exp, log, tanh and erf
 * rounded to float: every 17th float bit pattern (a quarter of a billion
 * arguments, positive and negative, normal and subnormal) within 2 ulps
 * (erf: 3), counting the distance in representable floats so that subnormal
 * results are held to the same bound; and the special values (NaN,
 * infinities, signed zeros, negative logs, overflow and underflow bounds).
 * Also the compensated sum: 10^6 terms of mixed magnitude (12 decades) and
 * sign against a double sum, within 2 ulps (the plain float sum is far
 * off). Exit status 0 when all pass. */
#define GCRT_FREESTANDING 1
#include "gcrt_base.h"

#include <math.h>
#include <stdio.h>

static int failures;

/* Distance in representable floats between a and b (both finite or equal). */
static int64_t ulps(float a, float b)
{
    int64_t ia = (int32_t)gcrt_f32_bits(a), ib = (int32_t)gcrt_f32_bits(b);
    if (ia < 0) ia = INT32_MIN - ia;
    if (ib < 0) ib = INT32_MIN - ib;
    return ia > ib ? ia - ib : ib - ia;
}

static void same(const char *what, float got, float want)
{
    int ok = isnan(want) ? isnan(got) : gcrt_f32_bits(got) == gcrt_f32_bits(want);
    if (!ok) {
        printf("FAIL %s: got %a, want %a\n", what, (double)got, (double)want);
        failures++;
    }
}

static void sweep(const char *name, float (*mine)(float), double (*ref)(double), int64_t bound)
{
    int64_t worst = 0, n = 0;
    float worst_x = 0;
    for (uint64_t b = 0; b < 0x100000000ull; b += 17) {
        float x = gcrt_bits_f32((uint32_t)b);
        if (isnan(x)) continue;
        float want = (float)ref((double)x), got = mine(x);
        n++;
        if (isnan(want) || isinf(want)) {
            if (!(isnan(want) ? isnan(got) : got == want)) {
                printf("FAIL %s(%a): got %a, want %a\n", name, (double)x, (double)got, (double)want);
                failures++;
            }
            continue;
        }
        int64_t u = isfinite(got) ? ulps(got, want) : INT64_MAX;
        if (u > worst) {
            worst = u;
            worst_x = x;
        }
    }
    printf("%s: %lld arguments, worst %lld ulp at %a\n", name, (long long)n, (long long)worst, (double)worst_x);
    if (worst > bound) {
        printf("FAIL %s: %lld ulps at %a (bound %lld)\n", name, (long long)worst, (double)worst_x, (long long)bound);
        failures++;
    }
}

int main(void)
{
    sweep("gcrt_expf", gcrt_expf, exp, 2);
    sweep("gcrt_logf", gcrt_logf, log, 2);
    sweep("gcrt_tanhf", gcrt_tanhf, tanh, 2);
    sweep("gcrt_erff", gcrt_erff, erf, 3);

    same("expf(NaN)", gcrt_expf(NAN), NAN);
    same("expf(inf)", gcrt_expf(INFINITY), INFINITY);
    same("expf(-inf)", gcrt_expf(-INFINITY), 0.0f);
    same("expf(0)", gcrt_expf(0.0f), 1.0f);
    same("expf(-0)", gcrt_expf(-0.0f), 1.0f);
    same("expf(89)", gcrt_expf(89.0f), INFINITY);
    same("expf(-104)", gcrt_expf(-104.0f), 0.0f);
    same("expf(max below overflow)", gcrt_expf(88.7228317260742188f), (float)exp(88.7228317260742188));
    same("logf(NaN)", gcrt_logf(NAN), NAN);
    same("logf(inf)", gcrt_logf(INFINITY), INFINITY);
    same("logf(-inf)", gcrt_logf(-INFINITY), NAN);
    same("logf(-1)", gcrt_logf(-1.0f), NAN);
    same("logf(-min subnormal)", gcrt_logf(-0x1p-149f), NAN);
    same("logf(0)", gcrt_logf(0.0f), -INFINITY);
    same("logf(-0)", gcrt_logf(-0.0f), -INFINITY);
    same("logf(1)", gcrt_logf(1.0f), 0.0f);
    same("logf(min subnormal)", gcrt_logf(0x1p-149f), (float)log(0x1p-149));
    same("tanhf(NaN)", gcrt_tanhf(NAN), NAN);
    same("tanhf(inf)", gcrt_tanhf(INFINITY), 1.0f);
    same("tanhf(-inf)", gcrt_tanhf(-INFINITY), -1.0f);
    same("tanhf(-0)", gcrt_tanhf(-0.0f), -0.0f);
    same("tanhf(min subnormal)", gcrt_tanhf(0x1p-149f), 0x1p-149f);
    same("erff(NaN)", gcrt_erff(NAN), NAN);
    same("erff(inf)", gcrt_erff(INFINITY), 1.0f);
    same("erff(-inf)", gcrt_erff(-INFINITY), -1.0f);
    same("erff(-0)", gcrt_erff(-0.0f), -0.0f);
    same("erff(4)", gcrt_erff(4.0f), 1.0f);

    /* compensated sum: terms of both signs over 12 decades, whose plain float sum drifts */
    {
        float s = 0, c = 0, plain = 0;
        double ref = 0;
        uint32_t r = 12345;
        for (int i = 0; i < 1000000; i++) {
            r = r * 1664525u + 1013904223u;
            float x = (float)((double)(r >> 8) / 16777216.0 - 0.3) * gcrt_bits_f32(((r & 15u) * 2u + 107u) << 23);
            gcrt_ksum_add_f32(&s, &c, x);
            plain += x;
            ref += (double)x;
        }
        float got = s + c, want = (float)ref;
        printf("ksum: compensated %a, plain %a, double %a (%lld and %lld ulps)\n", (double)got, (double)plain,
               (double)want, (long long)ulps(got, want), (long long)ulps(plain, want));
        if (ulps(got, want) > 2) {
            printf("FAIL ksum: %lld ulps from the double sum\n", (long long)ulps(got, want));
            failures++;
        }
    }
    if (failures) printf("%d failure(s)\n", failures);
    else printf("all passed\n");
    return failures != 0;
}
