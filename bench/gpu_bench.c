/* gpu_bench.c — times NAME_run of a model compiled by `graphc compile --target=cuda`
 * (bench/gpu_vs_torch.py builds it against each model and drives it).
 *
 *   gpu_bench IN.bin OUT.bin WARMUP
 *
 * On start the program prints one line, "device: ..." (the name and compute capability from
 * cudaGetDeviceProperties, the CUDA runtime and driver, cuDNN and cuBLAS versions), or
 * "gpu_bench: no CUDA device: WHY" on stderr and exits with status 77. It then creates a
 * non-blocking stream, calls NAME_init on it (device arena, weights copied once, library
 * handles, the schedule captured into a CUDA graph), copies IN.bin's raw bytes (the inputs in
 * graph order, NAME_INPUT_<i>_BYTES each) into device buffers it allocates once, runs the model
 * once, writes the outputs (raw, in graph order) to OUT.bin, runs WARMUP more untimed
 * inferences and prints "ready".
 *
 * Then it reads one number REPS per line from stdin until EOF or 0: for each, one untimed run,
 * then REPS timed runs, and one line with each run's time in ms, space-separated. A timed run
 * is cudaEventRecord(start), NAME_run (one cudaGraphLaunch on the stream, the same device
 * buffers every time, so the graph is never captured again), cudaEventRecord(stop),
 * cudaEventSynchronize(stop): the latency of one request on an idle GPU, the launch included,
 * as gpu_vs_torch.py times PyTorch.
 *
 * Built with -DMODEL=name (the --name given to graphc) and -I DIR, linked with libNAME.a
 * -lcublas -lcudnn and the CUDA runtime (nvcc links it). With -DGC_CUDA_EMULATE the program is
 * built as C99 with NAME.cu on graphc's CPU emulation (no CUDA header, no GPU): it says so on
 * its "device:" line, runs NAME_run_host on host buffers (the emulation's device memory is
 * private to NAME.cu) and times each run with CLOCK_MONOTONIC: the flow is the same, the times
 * are the emulator's. Up to 4 inputs and 4 outputs.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef GC_CUDA_EMULATE
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>
#endif

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)
#define STR_(a) #a
#define STR(a) STR_(a)
#define M(s) CAT(MODEL, s)
#include STR(MODEL.h)

#if M(_NUM_INPUTS) < 1 || M(_NUM_INPUTS) > 4 || M(_NUM_OUTPUTS) < 1 || M(_NUM_OUTPUTS) > 4
#error "gpu_bench.c handles 1 to 4 inputs and 1 to 4 outputs"
#endif

static const size_t in_bytes[] = {
    M(_INPUT_0_BYTES),
#if M(_NUM_INPUTS) > 1
    M(_INPUT_1_BYTES),
#endif
#if M(_NUM_INPUTS) > 2
    M(_INPUT_2_BYTES),
#endif
#if M(_NUM_INPUTS) > 3
    M(_INPUT_3_BYTES),
#endif
};
static const size_t out_bytes[] = {
    M(_OUTPUT_0_BYTES),
#if M(_NUM_OUTPUTS) > 1
    M(_OUTPUT_1_BYTES),
#endif
#if M(_NUM_OUTPUTS) > 2
    M(_OUTPUT_2_BYTES),
#endif
#if M(_NUM_OUTPUTS) > 3
    M(_OUTPUT_3_BYTES),
#endif
};
enum { NIN = M(_NUM_INPUTS), NOUT = M(_NUM_OUTPUTS) };

static int fail(const char *msg)
{
    fprintf(stderr, "gpu_bench: %s\n", msg);
    return 1;
}

/* The bench state: host copies of the inputs and outputs, and what one run needs. */
typedef struct Bench {
    M(_Model) *model;
    void *host_in[NIN], *host_out[NOUT];
#ifndef GC_CUDA_EMULATE
    void *dev_in[NIN], *dev_out[NOUT];
    cudaStream_t stream;
    cudaEvent_t start, stop;
#endif
} Bench;

#ifdef GC_CUDA_EMULATE

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static int bench_open(Bench *b)
{
    printf("device: graphc CPU emulation (GC_CUDA_EMULATE; no GPU: times are the emulator's)\n");
    return M(_init)(&b->model, NULL) ? fail(STR(MODEL) "_init failed") : 0;
}

/* One inference; the outputs land in host_out. */
static int bench_run(Bench *b)
{
    return M(_run_host)(b->model, (const void *const *)b->host_in, b->host_out) ? fail(STR(MODEL) "_run_host failed")
                                                                                 : 0;
}

static int bench_fetch(Bench *b)
{
    (void)b;
    return 0;
}

static int bench_time(Bench *b, double *ms)
{
    double t = now_ms();
    if (bench_run(b)) return 1;
    *ms = now_ms() - t;
    return 0;
}

static void bench_close(Bench *b)
{
    M(_free)(b->model);
}

#else

static int cuda_fail(const char *what, cudaError_t e)
{
    fprintf(stderr, "gpu_bench: %s: %s\n", what, cudaGetErrorString(e));
    return 1;
}
#define CK(call)                                                                                                   \
    do {                                                                                                           \
        cudaError_t e_ = (call);                                                                                   \
        if (e_ != cudaSuccess) return cuda_fail(#call, e_);                                                        \
    } while (0)

/* Prints the device line; 77 when there is no device. */
static int print_device(void)
{
    int n = 0, rt = 0, drv = 0, cb[3] = {0, 0, 0};
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n < 1) {
        fprintf(stderr, "gpu_bench: no CUDA device: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
        return 77;
    }
    struct cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, 0));
    CK(cudaRuntimeGetVersion(&rt));
    CK(cudaDriverGetVersion(&drv));
    cublasGetProperty(MAJOR_VERSION, &cb[0]);
    cublasGetProperty(MINOR_VERSION, &cb[1]);
    cublasGetProperty(PATCH_LEVEL, &cb[2]);
    size_t dnn = cudnnGetVersion();
    printf("device: %s, compute capability %d.%d, %d SMs, %.1f GiB; CUDA runtime %d.%d, driver %d.%d; "
           "cuDNN %zu.%zu.%zu; cuBLAS %d.%d.%d\n",
           p.name, p.major, p.minor, p.multiProcessorCount, (double)p.totalGlobalMem / (1u << 30), rt / 1000,
           rt % 1000 / 10, drv / 1000, drv % 1000 / 10, dnn / 10000, dnn % 10000 / 100, dnn % 100, cb[0], cb[1],
           cb[2]);
    return 0;
}

static int bench_open(Bench *b)
{
    int rc = print_device();
    if (rc) return rc;
    CK(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
    CK(cudaEventCreate(&b->start));
    CK(cudaEventCreate(&b->stop));
    for (int i = 0; i < NIN; i++) {
        CK(cudaMalloc(&b->dev_in[i], in_bytes[i] ? in_bytes[i] : 1));
        CK(cudaMemcpy(b->dev_in[i], b->host_in[i], in_bytes[i], cudaMemcpyHostToDevice));
    }
    for (int i = 0; i < NOUT; i++) CK(cudaMalloc(&b->dev_out[i], out_bytes[i] ? out_bytes[i] : 1));
    return M(_init)(&b->model, b->stream) ? fail(STR(MODEL) "_init failed") : 0;
}

/* One inference on the device buffers, waited for. */
static int bench_run(Bench *b)
{
    if (M(_run)(b->model, (const void *const *)b->dev_in, b->dev_out)) return fail(STR(MODEL) "_run failed");
    CK(cudaStreamSynchronize(b->stream));
    return 0;
}

static int bench_fetch(Bench *b)
{
    for (int i = 0; i < NOUT; i++) CK(cudaMemcpy(b->host_out[i], b->dev_out[i], out_bytes[i], cudaMemcpyDeviceToHost));
    return 0;
}

static int bench_time(Bench *b, double *ms)
{
    float t = 0;
    CK(cudaEventRecord(b->start, b->stream));
    if (M(_run)(b->model, (const void *const *)b->dev_in, b->dev_out)) return fail(STR(MODEL) "_run failed");
    CK(cudaEventRecord(b->stop, b->stream));
    CK(cudaEventSynchronize(b->stop));
    CK(cudaEventElapsedTime(&t, b->start, b->stop));
    *ms = t;
    return 0;
}

static void bench_close(Bench *b)
{
    M(_free)(b->model);
    for (int i = 0; i < NIN; i++) cudaFree(b->dev_in[i]);
    for (int i = 0; i < NOUT; i++) cudaFree(b->dev_out[i]);
    cudaEventDestroy(b->start);
    cudaEventDestroy(b->stop);
    cudaStreamDestroy(b->stream);
}

#endif

int main(int argc, char **argv)
{
    if (argc != 4) return fail("usage: gpu_bench IN.bin OUT.bin WARMUP");
    long warmup = atol(argv[3]);
    if (warmup < 0) return fail("WARMUP must be >= 0");
    Bench b;
    memset(&b, 0, sizeof b);
    FILE *f = fopen(argv[1], "rb");
    if (!f) return fail("cannot open IN.bin");
    for (int i = 0; i < NIN; i++) {
        if (!(b.host_in[i] = malloc(in_bytes[i] ? in_bytes[i] : 1))) return fail("out of memory");
        if (fread(b.host_in[i], 1, in_bytes[i], f) != in_bytes[i]) return fail("IN.bin is too short");
    }
    fclose(f);
    for (int i = 0; i < NOUT; i++)
        if (!(b.host_out[i] = malloc(out_bytes[i] ? out_bytes[i] : 1))) return fail("out of memory");
    int rc = bench_open(&b);
    if (rc) return rc;

    if (bench_run(&b) || bench_fetch(&b)) return 1;
    FILE *o = fopen(argv[2], "wb");
    if (!o) return fail("cannot create OUT.bin");
    for (int i = 0; i < NOUT; i++)
        if (fwrite(b.host_out[i], 1, out_bytes[i], o) != out_bytes[i]) return fail("cannot write OUT.bin");
    if (fclose(o)) return fail("cannot write OUT.bin");
    for (long r = 0; r < warmup; r++)
        if (bench_run(&b)) return 1;
    printf("ready\n");
    fflush(stdout);

    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        long reps = atol(line);
        if (reps <= 0) break;
        double *times = malloc(sizeof(double) * (size_t)reps);
        if (!times) return fail("out of memory");
        if (bench_run(&b)) return 1;
        for (long r = 0; r < reps; r++)
            if (bench_time(&b, &times[r])) return 1;
        for (long r = 0; r < reps; r++) printf("%.6f%c", times[r], r + 1 < reps ? ' ' : '\n');
        fflush(stdout);
        free(times);
    }
    bench_close(&b);
    for (int i = 0; i < NIN; i++) free(b.host_in[i]);
    for (int i = 0; i < NOUT; i++) free(b.host_out[i]);
    return 0;
}
