/* read_bw.c — how fast one core reads a buffer again and again, for bench/cpu_vs_torch.py.
 *
 *   cc -O2 -march=native bench/read_bw.c -o read_bw && ./read_bw BYTES [BYTES...]
 *
 * A model's weights are read once per inference. When they do not fit the core's L2 cache, every
 * inference streams them from L3 or memory, and their size divided by this rate is a lower bound
 * on the inference time that no kernel can beat (without smaller weights). For each BYTES the
 * program fills a 64-byte-aligned buffer of that size, reads it whole with vector loads into four
 * independent sums (AVX-512, else AVX2), 2000 times in a row (at least 64 MB read in all, so small
 * buffers repeat more), and prints the median of the per-pass times:
 *
 *   bytes: B  us: T  gbps: G          (G = B / T / 1e3; one thread)
 */
#define _POSIX_C_SOURCE 200809L
#include <immintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#if defined(__AVX512F__)
typedef __m512 V;
#define LANES 16
#define LOAD _mm512_load_ps
#define ADD _mm512_add_ps
#define ZERO _mm512_setzero_ps
#define STOREU _mm512_storeu_ps
#elif defined(__AVX2__)
typedef __m256 V;
#define LANES 8
#define LOAD _mm256_load_ps
#define ADD _mm256_add_ps
#define ZERO _mm256_setzero_ps
#define STOREU _mm256_storeu_ps
#else
#error "read_bw.c needs AVX2 or AVX-512 (compile with -march=native)"
#endif

static volatile float vsink;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s BYTES [BYTES...]\n", argv[0]);
        return 2;
    }
    for (int a = 1; a < argc; a++) {
        const long bytes = atol(argv[a]);
        const long n = (bytes / (4 * LANES * 4)) * (4 * LANES); /* floats, a multiple of 4 vectors */
        if (n <= 0) {
            fprintf(stderr, "read_bw: %s: need at least %d bytes\n", argv[a], 4 * LANES * 4);
            return 2;
        }
        float *buf = NULL;
        if (posix_memalign((void **)&buf, 64, (size_t)n * sizeof(float)) != 0) {
            fprintf(stderr, "read_bw: out of memory\n");
            return 2;
        }
        for (long i = 0; i < n; i++) buf[i] = (float)(i % 1000) * 1e-6f;
        int passes = 2000;
        if ((double)passes * (double)n * 4.0 < 64e6) passes = (int)(64e6 / ((double)n * 4.0)) + 1;
        double *t = malloc((size_t)passes * sizeof(double));
        if (!t) return 2;
        V s0 = ZERO(), s1 = ZERO(), s2 = ZERO(), s3 = ZERO();
        for (int p = 0; p < passes; p++) {
            const double t0 = now_us();
            for (long i = 0; i < n; i += 4 * LANES) {
                s0 = ADD(s0, LOAD(buf + i));
                s1 = ADD(s1, LOAD(buf + i + LANES));
                s2 = ADD(s2, LOAD(buf + i + 2 * LANES));
                s3 = ADD(s3, LOAD(buf + i + 3 * LANES));
            }
            t[p] = now_us() - t0;
        }
        float out[LANES];
        STOREU(out, ADD(ADD(s0, s1), ADD(s2, s3)));
        vsink = out[0]; /* keeps the sums alive */
        qsort(t, (size_t)passes, sizeof(double), cmp_double);
        const double med = t[passes / 2];
        printf("bytes: %ld  us: %.3f  gbps: %.1f\n", n * 4, med, (double)n * 4.0 / med / 1e3);
        free(t);
        free(buf);
    }
    return 0;
}
