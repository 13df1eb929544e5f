/* test_cpu_gemm.c — the fast CPU GEMM and conv kernels (runtime/cpu/gcrt_cpu.c)
 * against naive double-precision references: packed and strided A, packed and
 * row-major B, batches, every epilogue, tails in M, N and K, conv geometries
 * with groups, strides, dilations and pads; and the same bits for every
 * thread count (a serial run against pools of 2 to 5 tasks that run the
 * tasks in reverse order on one thread, and for conv against the bundled
 * pthread pool of 3 threads), also with the threads splitting a 1x1
 * conv's channel blocks (by_channels).
 * The packed layouts are written here from their definition in gcrt_cpu.h,
 * independently of the compiler's packer. Exit status 0 when all pass. */
/* every kernel call splits over the pool, however small (gcrt_pool_for) */
#define GCRT_PAR_MIN_WORK 0
#include "gc_thread_pool.c"
#include "gcrt_cpu.c"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static uint64_t rng = 88172645463325252ull;
static float frand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (float)((double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}
static int64_t irand(int64_t lo, int64_t hi) { return lo + (int64_t)((frand() + 1.0f) * 0.5f * (float)(hi - lo + 1)) % (hi - lo + 1); }

static GcPthreadPool *threads3;

/* A pool that runs the tasks in reverse order on the calling thread. */
static void rev_for(void *ctx, int64_t n, GcTaskFn fn, void *arg)
{
    (void)ctx;
    for (int64_t t = n - 1; t >= 0; t--) fn(arg, t);
}

static int failures;

static double epi(double v, int act, float lo, float hi)
{
    if (act == GCRT_ACT_RELU) return v > 0 ? v : 0;
    if (act == GCRT_ACT_CLIP) return v < lo ? lo : v > hi ? hi : v;
    if (act == GCRT_ACT_TANH) return tanh(v);
    if (act == GCRT_ACT_SIGMOID) return 1.0 / (1.0 + exp(-v));
    return v;
}

static void check(const char *what, const float *got, const double *want, int64_t n, int64_t K)
{
    for (int64_t i = 0; i < n; i++) {
        double tol = 1e-5 * (double)(K + 1) * (1.0 + fabs(want[i]));
        if (!(fabs(got[i] - want[i]) <= tol)) {
            printf("FAIL %s: element %lld got %.9g want %.9g\n", what, (long long)i, got[i], want[i]);
            failures++;
            return;
        }
    }
}

static float *pack_a(const float *W, int64_t M, int64_t K)
{
    int64_t mp = (M + GCRT_PACK_MR - 1) / GCRT_PACK_MR * GCRT_PACK_MR;
    float *p = calloc((size_t)(mp * K + 1), sizeof *p);
    for (int64_t m = 0; m < M; m++)
        for (int64_t k = 0; k < K; k++) p[m / GCRT_PACK_MR * GCRT_PACK_MR * K + k * GCRT_PACK_MR + m % GCRT_PACK_MR] = W[m * K + k];
    return p;
}

static float *pack_b(const float *B, int64_t K, int64_t N)
{
    int64_t np = (N + GCRT_PACK_NR - 1) / GCRT_PACK_NR * GCRT_PACK_NR;
    float *p = calloc((size_t)(np * K + 1), sizeof *p);
    for (int64_t k = 0; k < K; k++)
        for (int64_t n = 0; n < N; n++) p[n / GCRT_PACK_NR * GCRT_PACK_NR * K + k * GCRT_PACK_NR + n % GCRT_PACK_NR] = B[k * N + n];
    return p;
}

static void test_gemm(int iter)
{
    int64_t batch = irand(1, 3), M = irand(1, 40), N = irand(1, 80), K = irand(1, 70);
    if (iter % 7 == 0) M = 1;
    int apk = (int)irand(0, 1), bpk = (int)irand(0, 1), act = (int)irand(0, 4);
    int brow = (int)irand(0, 1), bcol = (int)irand(0, 1), hres = (int)irand(0, 1);
    int a_shared = batch > 1 && irand(0, 1), b_shared = batch > 1 && irand(0, 1);
    if (apk) a_shared = 1;
    if (bpk) b_shared = 1;
    float *A = malloc(sizeof(float) * (size_t)(batch * M * K)), *B = malloc(sizeof(float) * (size_t)(batch * K * N));
    float *br = malloc(sizeof(float) * (size_t)M), *bc = malloc(sizeof(float) * (size_t)N);
    float *R = malloc(sizeof(float) * (size_t)(batch * M * N));
    for (int64_t i = 0; i < batch * M * K; i++) A[i] = frand();
    for (int64_t i = 0; i < batch * K * N; i++) B[i] = frand();
    for (int64_t i = 0; i < M; i++) br[i] = frand();
    for (int64_t i = 0; i < N; i++) bc[i] = frand();
    for (int64_t i = 0; i < batch * M * N; i++) R[i] = frand();
    double *want = malloc(sizeof(double) * (size_t)(batch * M * N));
    for (int64_t b = 0; b < batch; b++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t n = 0; n < N; n++) {
                const float *a = A + (a_shared ? 0 : b * M * K), *bb = B + (b_shared ? 0 : b * K * N);
                double s = 0;
                for (int64_t k = 0; k < K; k++) s += (double)a[m * K + k] * bb[k * N + n];
                if (brow) s += br[m];
                if (bcol) s += bc[n];
                if (hres) s += R[(b * M + m) * N + n];
                want[(b * M + m) * N + n] = epi(s, act, -0.5f, 0.75f);
            }
    float *pa = apk ? pack_a(A, M, K) : NULL, *pb = bpk ? pack_b(B, K, N) : NULL;
    float *C[2];
    for (int run = 0; run < 2; run++) {
        C[run] = malloc(sizeof(float) * (size_t)(batch * M * N));
        GcrtGemm g;
        memset(&g, 0, sizeof g);
        g.batch = batch;
        g.a_bs = a_shared ? 0 : M * K;
        g.b_bs = b_shared ? 0 : K * N;
        g.c_bs = M * N;
        g.M = M, g.N = N, g.K = K;
        g.A = apk ? pa : A, g.a_packed = apk, g.a_rs = K, g.a_ks = 1;
        g.B = bpk ? pb : B, g.b_packed = bpk, g.ldb = N;
        g.C = C[run], g.ldc = N;
        g.bias_row = brow ? br : 0, g.bias_col = bcol ? bc : 0, g.res = hres ? R : 0;
        g.act = act, g.lo = -0.5f, g.hi = 0.75f;
        GcThreadPool pool = {(int)(2 + iter % 4), rev_for, 0};
        gcrt_gemm_f32(&g, run ? &pool : NULL);
    }
    char what[160];
    snprintf(what, sizeof what, "gemm b%lld M%lld N%lld K%lld apk%d bpk%d act%d", (long long)batch, (long long)M,
             (long long)N, (long long)K, apk, bpk, act);
    check(what, C[0], want, batch * M * N, K);
    if (memcmp(C[0], C[1], sizeof(float) * (size_t)(batch * M * N))) {
        printf("FAIL %s: threaded result differs\n", what);
        failures++;
    }
    free(A), free(B), free(br), free(bc), free(R), free(want), free(pa), free(pb), free(C[0]), free(C[1]);
}

static int whole_cases;       /* convs that took gcrt_conv_whole */
static int trans_panel_cases; /* W^T convs that did not (a map too large): gcrt_conv_range */
static int slide_cases; /* convs that took the sliding-window kernel */
static int by_channels_cases; /* direct convs on position panels whose threads split the channel blocks */

static void test_conv(int iter)
{
    GcrtConv cv;
    memset(&cv, 0, sizeof cv);
    cv.N = irand(1, 2), cv.G = irand(1, 3);
    cv.C = cv.G * irand(1, 6), cv.M = cv.G * irand(1, 20);
    cv.H = irand(1, 14), cv.W = irand(1, 14);
    if (iter % 5 == 0) cv.H = 1;
    cv.KH = irand(1, 3), cv.KW = irand(1, 3), cv.sh = irand(1, 2), cv.sw = irand(1, 2);
    cv.dh = irand(1, 2), cv.dw = irand(1, 2), cv.pt = irand(0, 2), cv.pl = irand(0, 2);
    int64_t pb = irand(0, 2), pr = irand(0, 2);
    if (iter % 3 == 0) cv.KH = cv.KW = 1, cv.sh = cv.sw = 1, cv.pt = cv.pl = pb = pr = 0;
    /* by_channels (a direct conv's threads take shares of its channel blocks), with more blocks at iter % 12 == 0 */
    const int bc = iter % 6 == 0;
    if (iter % 12 == 0) cv.M = cv.G * (17 + iter % 50);
    const int tr = iter % 4 == 3; /* W^T panels, output positions as the tile's rows (G == 1) */
    if (tr) cv.G = 1, cv.C = irand(1, 40), cv.M = irand(1, 100);
    const int sl = iter % 4 == 1; /* the sliding-window kernel (G == 1, packed) */
    if (sl) {
        cv.G = 1, cv.C = irand(1, 8), cv.M = irand(1, 20);
        if (iter % 8 == 1) cv.KH = irand(1, 7), cv.KW = irand(4, 7), cv.sw = irand(1, 3), cv.H = irand(1, 20), cv.W = irand(8, 70);
    }
    if (iter % 10 == 1) cv.G = 1, cv.C = irand(57, 130), cv.KH = cv.KW = 3, cv.H = cv.W = irand(3, 9); /* K > GCRT_CONV_KC */
    if (iter % 10 == 2) cv.H = irand(1, 5), cv.W = irand(33, 80), cv.sw = 2; /* long stride-2 rows */
    if (iter % 20 == 7) /* 8x7 and 8x8 kernels: W^T tiles (GCRT_CONV_WHOLE) of many taps on a small map */
        cv.KH = 8, cv.KW = irand(7, 8), cv.H = irand(8, 10), cv.W = irand(7, 10), cv.sh = cv.sw = cv.dh = cv.dw = 1;
    if (tr && iter % 8 == 7 && iter % 20 != 7) /* W^T on a map of more than GCRT_CONV_WHOLE_P positions: panels */
        cv.C = irand(1, 6), cv.H = irand(40, 46), cv.W = irand(40, 46), cv.sh = cv.sw = cv.dh = cv.dw = 1;
    int64_t eh = (cv.KH - 1) * cv.dh + 1, ew = (cv.KW - 1) * cv.dw + 1;
    if (cv.H + cv.pt + pb < eh || cv.W + cv.pl + pr < ew) return;
    cv.OH = (cv.H + cv.pt + pb - eh) / cv.sh + 1, cv.OW = (cv.W + cv.pl + pr - ew) / cv.sw + 1;
    int64_t Cg = cv.C / cv.G, Mg = cv.M / cv.G, K = Cg * cv.KH * cv.KW, P = cv.OH * cv.OW;
    int64_t nx = cv.N * cv.C * cv.H * cv.W, ny = cv.N * cv.M * P;
    float *X = malloc(sizeof(float) * (size_t)nx), *W = malloc(sizeof(float) * (size_t)(cv.M * K));
    float *bias = malloc(sizeof(float) * (size_t)cv.M), *R = malloc(sizeof(float) * (size_t)ny);
    for (int64_t i = 0; i < nx; i++) X[i] = frand();
    for (int64_t i = 0; i < cv.M * K; i++) W[i] = frand();
    for (int64_t i = 0; i < cv.M; i++) bias[i] = frand();
    for (int64_t i = 0; i < ny; i++) R[i] = frand();
    int pk = (int)irand(0, 1), hb = (int)irand(0, 1), hr = (int)irand(0, 1), act = (int)irand(0, 4);
    double *want = malloc(sizeof(double) * (size_t)ny);
    for (int64_t n = 0; n < cv.N; n++)
        for (int64_t m = 0; m < cv.M; m++)
            for (int64_t oh = 0; oh < cv.OH; oh++)
                for (int64_t ow = 0; ow < cv.OW; ow++) {
                    int64_t g = m / Mg;
                    double s = 0;
                    for (int64_t c = 0; c < Cg; c++)
                        for (int64_t kh = 0; kh < cv.KH; kh++)
                            for (int64_t kw = 0; kw < cv.KW; kw++) {
                                int64_t ih = oh * cv.sh - cv.pt + kh * cv.dh, iw = ow * cv.sw - cv.pl + kw * cv.dw;
                                if (ih < 0 || ih >= cv.H || iw < 0 || iw >= cv.W) continue;
                                s += (double)X[((n * cv.C + g * Cg + c) * cv.H + ih) * cv.W + iw] *
                                     W[((m * Cg + c) * cv.KH + kh) * cv.KW + kw];
                            }
                    int64_t yi = ((n * cv.M + m) * cv.OH + oh) * cv.OW + ow;
                    if (hb) s += bias[m];
                    if (hr) s += R[yi];
                    want[yi] = epi(s, act, -0.5f, 0.75f);
                }
    float *Wp = NULL;
    if (tr) {
        float *Wt = malloc(sizeof(float) * (size_t)(cv.M * K + 1));
        for (int64_t m = 0; m < cv.M; m++)
            for (int64_t k = 0; k < K; k++) Wt[k * cv.M + m] = W[m * K + k];
        Wp = pack_b(Wt, K, cv.M);
        free(Wt);
        pk = 1;
    } else if (pk || sl) {
        pk = 1;
        int64_t mp = (Mg + GCRT_PACK_MR - 1) / GCRT_PACK_MR * GCRT_PACK_MR;
        Wp = calloc((size_t)(cv.G * mp * K), sizeof *Wp);
        for (int64_t g = 0; g < cv.G; g++) {
            float *p = pack_a(W + g * Mg * K, Mg, K);
            memcpy(Wp + g * mp * K, p, sizeof(float) * (size_t)(mp * K));
            free(p);
        }
    }
    int slots = 3;
    cv.w_trans = tr; /* a small map with W^T (GCRT_CONV_WHOLE) needs the im2col of every panel per slot */
    cv.slide = sl;
    if (GCRT_CONV_WHOLE(&cv)) whole_cases++;
    else if (tr) trans_panel_cases++;
    if (sl) slide_cases++;
    if (bc && GCRT_CONV_DIRECT(&cv) && !GCRT_CONV_WHOLE(&cv) && cv.M / cv.G > GCRT_CONV_MB_OF(&cv)) by_channels_cases++;
    float *ws = malloc(sizeof(float) * (size_t)(sl ? GCRT_SLIDE_FLOATS(&cv)
                                                   : slots * (GCRT_CONV_WHOLE(&cv) ? GCRT_CONV_WHOLE_SLOT_FLOATS(&cv)
                                                                                   : GCRT_CONV_SLOT_FLOATS(Cg, cv.KH, cv.KW))));
    cv.X = X, cv.Wt = pk ? Wp : W, cv.w_packed = pk, cv.w_trans = tr, cv.bias = hb ? bias : 0, cv.res = hr ? R : 0;
    cv.act = act, cv.lo = -0.5f, cv.hi = 0.75f, cv.ws = ws, cv.max_slots = slots, cv.by_channels = bc;
    if (GCRT_CONV_DIRECT(&cv) && !sl) cv.ws = 0; /* as the generated code passes a conv read in place */
    float *Y[3];
    for (int run = 0; run < 3; run++) {
        Y[run] = malloc(sizeof(float) * (size_t)ny);
        cv.Y = Y[run];
        GcThreadPool pool = {(int)(2 + iter % 4), rev_for, 0}, real = gc_pthread_pool_get(threads3);
        gcrt_conv_gemm_f32(&cv, run == 0 ? NULL : run == 1 ? &pool : &real);
    }
    char what[200];
    snprintf(what, sizeof what, "conv N%lld C%lld M%lld G%lld %lldx%lld k%lldx%lld s%lld,%lld d%lld,%lld p%lld,%lld pk%d tr%d sl%d bc%d",
             (long long)cv.N, (long long)cv.C, (long long)cv.M, (long long)cv.G, (long long)cv.H, (long long)cv.W,
             (long long)cv.KH, (long long)cv.KW, (long long)cv.sh, (long long)cv.sw, (long long)cv.dh,
             (long long)cv.dw, (long long)cv.pt, (long long)cv.pl, pk, tr, sl, bc);
    check(what, Y[0], want, ny, K);
    for (int run = 1; run < 3; run++)
        if (memcmp(Y[0], Y[run], sizeof(float) * (size_t)ny)) {
            printf("FAIL %s: %s result differs\n", what, run == 1 ? "task-split" : "3-thread");
            failures++;
        }
    free(X), free(W), free(bias), free(R), free(want), free(Wp), free(ws), free(Y[0]), free(Y[1]), free(Y[2]);
}

/* gcrt_parallel and gcrt_parallel_runs, on the 3-thread pool: every tile
 * runs exactly once, every slot is below max_slots, and no two tasks that
 * run at once hold the same slot (each task keeps its slot busy for a
 * while, so they overlap); with GCRT_NO_SCRATCH every task gets slot 0 and
 * tasks may share it. Where gcrt_parallel_runs splits a kernel with
 * scratch into runs (max_slots >= 3 threads, at least 2 runs per task that
 * runs at once), every task is whole runs of `grain` tiles. */
typedef struct SlotCheck {
    int busy[8];
    int64_t hits[200];
    int max_slots, errors, shared;
    int64_t grain, n_tiles;
    int aligned, misaligned; /* expect whole runs; tasks that were not */
} SlotCheck;

static void slot_range(void *arg, int64_t t0, int64_t t1, int slot)
{
    SlotCheck *c = (SlotCheck *)arg;
    if (c->aligned && (t0 % c->grain != 0 || (t1 % c->grain != 0 && t1 != c->n_tiles)))
        __atomic_add_fetch(&c->misaligned, 1, __ATOMIC_SEQ_CST);
    if (c->shared) {
        if (slot != 0) __atomic_add_fetch(&c->errors, 1, __ATOMIC_SEQ_CST);
        for (int64_t t = t0; t < t1; t++) __atomic_add_fetch(&c->hits[t], 1, __ATOMIC_SEQ_CST);
        return;
    }
    if (slot < 0 || slot >= c->max_slots || __atomic_exchange_n(&c->busy[slot], 1, __ATOMIC_SEQ_CST)) {
        __atomic_add_fetch(&c->errors, 1, __ATOMIC_SEQ_CST);
        return;
    }
    for (volatile int spin = 0; spin < 20000; spin++) {
    }
    for (int64_t t = t0; t < t1; t++) __atomic_add_fetch(&c->hits[t], 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&c->busy[slot], 0, __ATOMIC_SEQ_CST);
}

static void test_parallel(void)
{
    const int64_t tiles[] = {1, 2, 3, 7, 12, 13, 200};
    const int64_t grains[] = {1, 3, 4, 7};
    for (int ms = 1; ms <= 6; ms++)
        for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++)
            for (size_t gi = 0; gi < sizeof grains / sizeof grains[0]; gi++)
                for (int rep = 0; rep < 10; rep++) {
                    SlotCheck c;
                    memset(&c, 0, sizeof c);
                    c.max_slots = ms == 6 ? GCRT_NO_SCRATCH : ms;
                    c.shared = ms == 6;
                    c.grain = grains[gi];
                    c.n_tiles = tiles[i];
                    const int64_t k = tiles[i] < 3 ? tiles[i] : 3;
                    c.aligned = !c.shared && ms >= 3 && (tiles[i] + c.grain - 1) / c.grain >= 2 * k;
                    GcThreadPool real = gc_pthread_pool_get(threads3);
                    if (gi == 0 && rep % 2) gcrt_parallel(&real, tiles[i], c.max_slots, slot_range, &c);
                    else gcrt_parallel_runs(&real, tiles[i], c.grain, c.max_slots, slot_range, &c);
                    int64_t bad = 0;
                    for (int64_t t = 0; t < tiles[i]; t++) bad += c.hits[t] != 1;
                    if (c.errors || bad || c.misaligned) {
                        printf("FAIL gcrt_parallel_runs tiles %lld grain %lld max_slots %d: %d slot clashes, %lld tiles "
                               "not run once, %d tasks not whole runs\n",
                               (long long)tiles[i], (long long)c.grain, c.max_slots, c.errors, (long long)bad,
                               c.misaligned);
                        failures++;
                        return;
                    }
                }
}

/* The vector activations against libm's double tanh/exp over [-30, 30]
 * (and 0, tiny and huge values, NaN): at most 4e-7 relative or 1e-12 absolute. */
static void test_activations(void)
{
    enum { NV = 96 };
    float x[NV], b[NV];
    int64_t bad = 0;
    for (int act = GCRT_ACT_TANH; act <= GCRT_ACT_SIGMOID; act++)
        for (int round = 0; round < 4000; round++) {
            for (int i = 0; i < NV; i++) x[i] = 30.0f * frand() * (round % 3 == 0 ? 0.01f : 1.0f);
            if (round == 0) x[0] = 0.0f, x[1] = -0.0f, x[2] = 1e-30f, x[3] = -1e-6f, x[4] = 100.0f, x[5] = -100.0f, x[6] = NAN;
            for (int i = 0; i < NV; i++) b[i] = 1.0f;
            float y[NV];
            /* y = act(x * 1): a K=1 GEMM of the column x with a row of ones */
            GcrtGemm g;
            memset(&g, 0, sizeof g);
            g.batch = 1, g.M = NV, g.N = 1, g.K = 1, g.A = x, g.a_rs = 1, g.a_ks = 1, g.B = b, g.ldb = 1;
            g.C = y, g.ldc = 1, g.act = act;
            gcrt_gemm_f32(&g, NULL);
            for (int i = 0; i < NV; i++) {
                double want = act == GCRT_ACT_TANH ? tanh((double)x[i]) : 1.0 / (1.0 + exp(-(double)x[i]));
                if (isnan(x[i]) ? !isnan(y[i]) : !(fabs(y[i] - want) <= 4e-7 * fabs(want) + 1e-12)) {
                    if (bad++ < 5) printf("FAIL act %d at x=%.9g: %.9g, want %.9g\n", act, x[i], y[i], want);
                }
            }
        }
    failures += bad != 0;
}

int main(void)
{
    threads3 = gc_pthread_pool_start(3);
    if (!threads3) {
        printf("FAIL: no pthread pool\n");
        return 1;
    }
    test_parallel();
    test_activations();
    for (int i = 0; i < 400; i++) test_gemm(i);
    for (int i = 0; i < 600; i++) test_conv(i);
    gc_pthread_pool_stop(threads3);
    if (whole_cases < 20) {
        printf("FAIL: only %d convs took the whole-map path\n", whole_cases);
        failures++;
    }
    if (trans_panel_cases < 10) {
        printf("FAIL: only %d W^T convs took the position panels\n", trans_panel_cases);
        failures++;
    }
    if (slide_cases < 100) {
        printf("FAIL: only %d convs took the sliding-window kernel\n", slide_cases);
        failures++;
    }
    if (by_channels_cases < 20) {
        printf("FAIL: only %d convs split their channel blocks over the threads\n", by_channels_cases);
        failures++;
    }
    printf("%s (%d failures; micro-kernel %d x %d; %d whole-map convs, %d W^T convs in panels, %d sliding-window convs, "
           "%d split by channels)\n",
           failures ? "FAILED" : "ok", failures, GCRT_MR, GCRT_PACK_NR, whole_cases, trans_panel_cases, slide_cases,
           by_channels_cases);
    return failures != 0;
}
