/* test_models.c — whole-model tests through graphc's public C builder API.
 *
 * Two small real networks are built with gc_input/gc_const/gc_op: an MLP
 * (784-512-256-10, ReLU, Gemm with transB=1) and a LeNet-style CNN (Conv 6@5x5
 * pad 2, ReLU, MaxPool 2x2, Conv 16@5x5, ReLU, MaxPool 2x2, Flatten, Gemm 120,
 * ReLU, Gemm 84, ReLU, Gemm 10). Weights and inputs come from an integer LCG
 * that tests/models/numpy_reference.py reproduces exactly; that script wrote
 * the expected outputs in tests/models/data/.
 *
 * For each model the test
 *   - checks its LCG input against data/NAME_input.npy (bit-exact),
 *   - writes the text IR (gc_write_text) and checks print(parse(text)) == text,
 *   - interprets the graph (gc_interpret),
 *   - compiles it twice (gc_compile with emit_main) and requires byte-identical
 *     output folders; loads the written text IR with gc_load, compiles it
 *     with gc_compile and requires the same folder as `graphc compile` of
 *     that file with the same options (the two front doors),
 *   - requires the folder to hold exactly the runtime files the model's ops
 *     list (gcrt_base.h and the units named in the case),
 *   - builds each folder with make under strict C99 warnings (plus the
 *     sanitizers when GRAPHC_SANITIZE=1), one with the portable kernels
 *     (BLAS=0) and one with OpenBLAS where present (BLAS=auto), and checks
 *     with `nm -u` that the model and runtime objects reference no allocator
 *     and no stdio,
 *   - checks with `nm -D --defined-only` that libNAME.so exports exactly the
 *     model's API (NAME_run, NAME_run_v, NAME_weights, NAME_weights_size),
 *   - runs NAME_main on the input .npy and compares its output with the
 *     interpreter (max abs diff 1e-5) and with numpy (1e-5 + 1e-4*|expected|).
 * test_two_models links both models' static libraries into one program
 * (tests/models/two_models_main.c), runs both and compares both outputs
 * with the interpreter.
 * Scratch files go to GRAPHC_BINARY_DIR/models_work.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "graphc/graphc.h"
#include "ir/ir.h"
#include "ir/text.h"
#include "ir/writer.h"

#define WORK GRAPHC_BINARY_DIR "/models_work"
#define DATA GRAPHC_SOURCE_DIR "/tests/models/data"
#define MAX_ELEMS 4096

/* ---- deterministic data (mirrors numpy_reference.py) ---- */

/* x_{k+1} = (1103515245 x_k + 12345) mod 2^31; value = ((x>>8)/2^23 - 0.5)*scale. */
static void lcg_fill(float *out, size_t n, uint32_t seed, double scale)
{
    uint64_t x = seed;
    for (size_t k = 0; k < n; k++) {
        x = (1103515245u * x + 12345u) % (UINT64_C(1) << 31);
        out[k] = (float)(((double)(x >> 8) / 8388608.0 - 0.5) * scale);
    }
}

static int64_t numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int i = 0; i < rank; i++) n *= dims[i];
    return n;
}

/* A constant filled from the LCG; scale 2*sqrt(6/fan_in) for weights, 0.2 for biases. */
static GcValue *lcg_const(GcGraph *g, const char *name, int rank, const int64_t *dims, uint32_t seed,
                          double scale, GcDiag *d)
{
    size_t n = (size_t)numel(rank, dims);
    float *buf = malloc(n * sizeof(float));
    assert_non_null(buf);
    lcg_fill(buf, n, seed, scale);
    GcValue *v = gc_const(g, name, "f32", rank, dims, buf, d);
    free(buf);
    return v;
}

static double he_scale(int fan_in) { return 2.0 * sqrt(6.0 / fan_in); }

static void check_value(GcValue *v, const GcDiag *d, const char *what)
{
    if (!v) fail_msg("building %s failed: %s", what, d->msg);
}

/* out = Gemm(x, W[n_out, n_in], B[n_out]) with transB=1, optionally followed by Relu. */
static GcValue *dense(GcGraph *g, GcValue *x, const char *name, int n_in, int n_out, uint32_t seed, int relu,
                      GcDiag *d)
{
    char wn[64], bn[64], rn[64];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    int64_t wd[2] = {n_out, n_in}, bd[1] = {n_out};
    GcValue *w = lcg_const(g, wn, 2, wd, seed, he_scale(n_in), d);
    GcValue *b = lcg_const(g, bn, 1, bd, seed + 1, 0.2, d);
    check_value(w && b ? w : NULL, d, name);
    GcValue *in[3] = {x, w, b};
    GcValue *y = gc_op(g, "Gemm", name, in, 3, "transB=1", d);
    check_value(y, d, name);
    if (!relu) return y;
    snprintf(rn, sizeof rn, "%s_relu", name);
    GcValue *r = gc_op(g, "Relu", rn, &y, 1, "", d);
    check_value(r, d, rn);
    return r;
}

/* Conv (weights [m,c,k,k] + bias) -> Relu -> MaxPool 2x2. */
static GcValue *conv_block(GcGraph *g, GcValue *x, const char *name, int c, int m, int k, int pad, uint32_t seed,
                           GcDiag *d)
{
    char wn[64], bn[64], rn[64], pn[64], attrs[128];
    snprintf(wn, sizeof wn, "%s.weight", name);
    snprintf(bn, sizeof bn, "%s.bias", name);
    snprintf(rn, sizeof rn, "%s_relu", name);
    snprintf(pn, sizeof pn, "%s_pool", name);
    int64_t wd[4] = {m, c, k, k}, bd[1] = {m};
    GcValue *w = lcg_const(g, wn, 4, wd, seed, he_scale(c * k * k), d);
    GcValue *b = lcg_const(g, bn, 1, bd, seed + 1, 0.2, d);
    check_value(w && b ? w : NULL, d, name);
    snprintf(attrs, sizeof attrs, "kernel_shape=[%d,%d] pads=[%d,%d,%d,%d]", k, k, pad, pad, pad, pad);
    GcValue *in[3] = {x, w, b};
    GcValue *y = gc_op(g, "Conv", name, in, 3, attrs, d);
    check_value(y, d, name);
    y = gc_op(g, "Relu", rn, &y, 1, "", d);
    check_value(y, d, rn);
    y = gc_op(g, "MaxPool", pn, &y, 1, "kernel_shape=[2,2] strides=[2,2]", d);
    check_value(y, d, pn);
    return y;
}

static const int64_t MLP_IN[2] = {2, 784};
static const int64_t LENET_IN[4] = {1, 1, 28, 28};

static GcGraph *build_mlp(GcDiag *d)
{
    GcGraph *g = gc_graph_new("mlp");
    GcValue *x = gc_input(g, "x", "f32", 2, MLP_IN, d);
    check_value(x, d, "input x");
    GcValue *h = dense(g, x, "fc1", 784, 512, 11, 1, d);
    h = dense(g, h, "fc2", 512, 256, 13, 1, d);
    h = dense(g, h, "fc3", 256, 10, 15, 0, d);
    gc_output(g, h);
    return g;
}

static GcGraph *build_lenet(GcDiag *d)
{
    GcGraph *g = gc_graph_new("lenet");
    GcValue *x = gc_input(g, "x", "f32", 4, LENET_IN, d);
    check_value(x, d, "input x");
    GcValue *h = conv_block(g, x, "conv1", 1, 6, 5, 2, 21, d);
    h = conv_block(g, h, "conv2", 6, 16, 5, 0, 23, d);
    h = gc_op(g, "Flatten", "flatten", &h, 1, "axis=1", d);
    check_value(h, d, "flatten");
    h = dense(g, h, "fc1", 400, 120, 25, 1, d);
    h = dense(g, h, "fc2", 120, 84, 27, 1, d);
    h = dense(g, h, "fc3", 84, 10, 29, 0, d);
    gc_output(g, h);
    return g;
}

typedef struct ModelCase {
    const char *name;
    GcGraph *(*build)(GcDiag *d);
    int in_rank;
    const int64_t *in_dims;
    uint32_t in_seed;
    int n_out; /* output elements */
    const char *runtime; /* the gcrt_* files the output folder must hold, sorted, space-separated */
} ModelCase;

/* ---- files ---- */

static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return buf;
}

static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Runs a shell command; returns its exit status (-1 if it did not exit). */
static int sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof cmd, fmt, ap);
    va_end(ap);
    int st = system(cmd);
    return st != -1 && WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Reads a little-endian f32 .npy (C order) into out; returns the element count. */
static int npy_read_f32(const char *path, float *out, int max)
{
    size_t len;
    char *b = read_all(path, &len);
    if (len < 10 || memcmp(b, "\x93NUMPY", 6) != 0) fail_msg("%s: not a .npy file", path);
    size_t hl, off;
    if (b[6] == 1) { hl = (unsigned char)b[8] | (size_t)(unsigned char)b[9] << 8; off = 10; }
    else { hl = (unsigned char)b[8] | (size_t)(unsigned char)b[9] << 8 | (size_t)(unsigned char)b[10] << 16; off = 12; }
    if (off + hl > len) fail_msg("%s: truncated header", path);
    char *hdr = strndup(b + off, hl);
    if (!strstr(hdr, "'<f4'") || !strstr(hdr, "'fortran_order': False")) fail_msg("%s: not C-order <f4: %s", path, hdr);
    const char *p = strchr(strstr(hdr, "'shape'"), '(');
    int64_t n = 1;
    for (p++; *p && *p != ')';) {
        char *end;
        long long dim = strtoll(p, &end, 10);
        if (end == p) { p++; continue; }
        n *= dim;
        p = end;
    }
    free(hdr);
    if (n > max || off + hl + (size_t)n * 4 > len) fail_msg("%s: %lld elements do not fit", path, (long long)n);
    memcpy(out, b + off + hl, (size_t)n * 4);
    free(b);
    return (int)n;
}

static void npy_write_f32(const char *path, const float *x, int rank, const int64_t *dims)
{
    char shape[128] = "", hdr[256];
    size_t k = 0;
    for (int i = 0; i < rank; i++) k += (size_t)snprintf(shape + k, sizeof shape - k, "%lld,%s", (long long)dims[i], i + 1 < rank ? " " : "");
    if (rank > 1) shape[k - 1] = 0; /* "(2, 784)" but "(5,)" */
    int n = snprintf(hdr, sizeof hdr, "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", shape);
    int total = (10 + n + 1 + 63) / 64 * 64;
    while (10 + n + 1 < total) hdr[n++] = ' ';
    hdr[n++] = '\n';
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(n & 255), (unsigned char)(n >> 8)};
    fwrite(pre, 1, 10, f);
    fwrite(hdr, 1, (size_t)n, f);
    fwrite(x, 4, (size_t)numel(rank, dims), f);
    fclose(f);
}

static int name_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted names of the entries of dir (without . and ..); returns the count. */
static int list_dir(const char *dir, char **names, int max)
{
    DIR *dp = opendir(dir);
    if (!dp) fail_msg("cannot open folder %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dp))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        if (n == max) fail_msg("too many files in %s", dir);
        names[n++] = strdup(e->d_name);
    }
    closedir(dp);
    qsort(names, (size_t)n, sizeof *names, name_cmp);
    return n;
}

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
}

/* Requires folders a and b to hold the same files with the same bytes;
 * `how` says what made them ("compiling twice"). */
static void compare_dirs(const char *a, const char *b, const char *how)
{
    char *na[256], *nb[256];
    int ca = list_dir(a, na, 256), cb = list_dir(b, nb, 256);
    if (ca != cb) fail_msg("%s has %d entries, %s has %d", a, ca, b, cb);
    if (ca == 0) fail_msg("%s is empty", a);
    for (int i = 0; i < ca; i++) {
        if (strcmp(na[i], nb[i])) fail_msg("%s holds %s where %s holds %s", a, na[i], b, nb[i]);
        char pa[1024], pb[1024];
        snprintf(pa, sizeof pa, "%s/%s", a, na[i]);
        snprintf(pb, sizeof pb, "%s/%s", b, nb[i]);
        struct stat st;
        assert_int_equal(stat(pa, &st), 0);
        if (S_ISDIR(st.st_mode)) { compare_dirs(pa, pb, how); continue; }
        size_t la, lb;
        char *xa = read_all(pa, &la), *xb = read_all(pb, &lb);
        if (la != lb || memcmp(xa, xb, la)) fail_msg("%s gave different %s", how, na[i]);
        free(xa);
        free(xb);
    }
    free_names(na, ca);
    free_names(nb, cb);
}

/* ---- checks ---- */

/* Symbols the generated model and runtime must never reference. */
static const char *const forbidden[] = {
    "malloc", "calloc", "realloc", "free", "aligned_alloc", "posix_memalign", "memalign",
    "printf", "fprintf", "sprintf", "snprintf", "vprintf", "vfprintf", "vsprintf", "vsnprintf",
    "__printf_chk", "__fprintf_chk", "__sprintf_chk", "__snprintf_chk",
    "puts", "fputs", "putc", "fputc", "putchar", "_IO_putc", "perror", "fopen", "fclose", "fread", "fwrite",
    "fflush", "fseek", "ftell", "fgets", "fgetc", "getc", "scanf", "fscanf", "sscanf",
    "stdout", "stderr", "stdin", NULL,
};

static void check_no_libc_io(const char *dir, const char *model)
{
    char *names[256];
    int n = list_dir(dir, names, 256), objects = 0, saw_model = 0;
    char main_obj[256];
    snprintf(main_obj, sizeof main_obj, "%s_main.o", model);
    for (int i = 0; i < n; i++) {
        size_t l = strlen(names[i]);
        if (l < 3 || strcmp(names[i] + l - 2, ".o") || !strcmp(names[i], main_obj)) continue;
        objects++;
        saw_model |= strlen(model) + 2 == l && !strncmp(names[i], model, strlen(model));
        char cmd[1200], line[512];
        snprintf(cmd, sizeof cmd, "nm -u '%s/%s'", dir, names[i]);
        FILE *p = popen(cmd, "r");
        assert_non_null(p);
        while (fgets(line, sizeof line, p)) {
            char sym[256] = "";
            if (sscanf(line, " U %255s", sym) != 1) continue;
            char *at = strchr(sym, '@');
            if (at) *at = 0;
            for (int k = 0; forbidden[k]; k++)
                if (!strcmp(sym, forbidden[k])) fail_msg("%s references '%s'", names[i], sym);
        }
        assert_int_equal(pclose(p), 0);
    }
    free_names(names, n);
    if (!saw_model) fail_msg("make did not leave %s.o in %s", model, dir);
    assert_true(objects > 0);
}

/* The folder's gcrt_* files, sorted and space-separated, equal want. */
static void check_runtime_files(const char *dir, const char *want)
{
    char *names[256], got[1024] = "";
    int n = list_dir(dir, names, 256);
    for (int i = 0; i < n; i++)
        if (!strncmp(names[i], "gcrt_", 5)) {
            if (*got) strcat(got, " ");
            strcat(got, names[i]);
        }
    free_names(names, n);
    if (strcmp(got, want)) fail_msg("%s holds the runtime files '%s', expected '%s'", dir, got, want);
}

/* libNAME.so in dir exports exactly the model's API. */
static void check_exports(const char *dir, const char *model)
{
    char cmd[1200], line[512], got[1024] = "", want[1024];
    snprintf(cmd, sizeof cmd, "nm -D --defined-only '%s/lib%s.so'", dir, model);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    while (fgets(line, sizeof line, p)) {
        char addr[64], kind[8], sym[256];
        if (sscanf(line, "%63s %7s %255s", addr, kind, sym) != 3) continue;
        if (*got) strcat(got, " ");
        strncat(got, sym, sizeof got - strlen(got) - 1);
    }
    assert_int_equal(pclose(p), 0);
    snprintf(want, sizeof want, "%s_run %s_run_parallel %s_run_v %s_run_v_parallel %s_weights %s_weights_size", model,
             model, model, model, model, model);
    if (strcmp(got, want)) fail_msg("lib%s.so exports '%s', expected '%s'", model, got, want);
}

static void check_text_roundtrip(const char *path)
{
    size_t len;
    char *text = read_all(path, &len);
    Diag d = {0};
    Graph *g = ir_parse(text, len, path, &d);
    if (!g) fail_msg("parsing %s failed: %s", path, d.msg);
    Writer w;
    w_init(&w);
    ir_print(g, &w, 0);
    if (w.len != len || memcmp(w.buf, text, len))
        fail_msg("%s does not round-trip: print(parse(text)) differs from text", path);
    w_free(&w);
    ir_graph_free(g);
    free(text);
}

static void compile_into(const ModelCase *mc, const char *dir)
{
    GcDiag d = {0};
    GcGraph *g = mc->build(&d);
    GcCompileOptions opt = {0};
    opt.name = mc->name;
    opt.emit_main = 1;
    if (sh("rm -rf '%s'", dir)) fail_msg("cannot remove %s", dir);
    if (gc_compile(g, dir, &opt, &d)) fail_msg("gc_compile %s failed: %s", mc->name, d.msg);
    gc_graph_free(g);
}

/* Compiles the model file gir twice, into api_dir through gc_load and
 * gc_compile and into cli_dir through `graphc compile`, with the same options. */
static void compile_file_both_ways(const ModelCase *mc, const char *gir, const char *api_dir, const char *cli_dir)
{
    GcDiag d = {0};
    GcGraph *g = gc_load(gir, &d);
    if (!g) fail_msg("gc_load %s failed: %s", gir, d.msg);
    GcCompileOptions opt = {0};
    opt.name = mc->name;
    opt.emit_main = 1;
    opt.weights = GC_WEIGHTS_CARRAY;
    opt.opt = GC_OPT_O0;
    if (sh("rm -rf '%s' '%s'", api_dir, cli_dir)) fail_msg("cannot remove %s", api_dir);
    if (gc_compile(g, api_dir, &opt, &d)) fail_msg("gc_compile %s failed: %s", gir, d.msg);
    gc_graph_free(g);
    if (sh("'%s' compile '%s' -o '%s' --name %s --emit-main --weights=c-array -O0", GRAPHC_BIN, gir, cli_dir, mc->name))
        fail_msg("graphc compile %s failed", gir);
}

/* Builds dir with make (BLAS=blas), runs NAME_main on in_path and reads its one output into got. */
static void build_and_run(const ModelCase *mc, const char *dir, const char *blas, const char *in_path, float *got)
{
    char out_dir[600], path[1200];
    const char *san = getenv("GRAPHC_SANITIZE");
    const char *sflags = san && !strcmp(san, "1") ? " -fsanitize=address,undefined -fno-sanitize-recover=all" : "";
    if (sh("make -s -C '%s' 'CFLAGS=-O2 -std=c99 -Wall -Wextra -Werror -pedantic -Wdouble-promotion%s' 'LDFLAGS=%s' BLAS=%s", dir, sflags,
           sflags, blas))
        fail_msg("make -C %s BLAS=%s failed", dir, blas);
    snprintf(out_dir, sizeof out_dir, "%s_out", dir);
    if (sh("rm -rf '%s' && mkdir -p '%s'", out_dir, out_dir)) fail_msg("cannot create %s", out_dir);
    if (sh("'%s/%s_main' '%s' '%s'", dir, mc->name, out_dir, in_path)) fail_msg("%s/%s_main failed", dir, mc->name);
    char *names[16];
    int n = list_dir(out_dir, names, 16);
    if (n != 1) fail_msg("%s_main wrote %d files into %s, expected one .npy", mc->name, n);
    snprintf(path, sizeof path, "%s/%s", out_dir, names[0]);
    free_names(names, n);
    assert_int_equal(npy_read_f32(path, got, MAX_ELEMS), mc->n_out);
}

/* Compiled output vs the interpreter (max abs diff 1e-5) and numpy (1e-5 + 1e-4*|expected|). */
static void compare_outputs(const ModelCase *mc, const char *how, const float *got, const float *interp,
                            const float *want)
{
    double max_interp = 0, max_ref = 0;
    for (int i = 0; i < mc->n_out; i++) {
        double di = fabs((double)got[i] - interp[i]), dr = fabs((double)got[i] - want[i]);
        if (!(di <= max_interp)) max_interp = di;
        if (!(dr <= 1e-5 + 1e-4 * fabs((double)want[i])))
            fail_msg("%s (%s) output %d: compiled %.9g, numpy %.9g", mc->name, how, i, got[i], want[i]);
        if (dr > max_ref) max_ref = dr;
    }
    print_message("%s (%s): max |compiled - interpreter| = %.3g, max |compiled - numpy| = %.3g\n", mc->name, how,
                  max_interp, max_ref);
    if (!(max_interp <= 1e-5))
        fail_msg("%s (%s): compiled and interpreted outputs differ by %.3g", mc->name, how, max_interp);
}

static void run_model(const ModelCase *mc)
{
    char path[1024], dir_a[512], dir_b[512], dir_file[512], dir_cli[512], in_path[512], gir[600];
    int64_t n_in = numel(mc->in_rank, mc->in_dims);
    float *x = malloc((size_t)n_in * sizeof(float)), *want_x = malloc((size_t)n_in * sizeof(float));
    assert_non_null(x);
    assert_non_null(want_x);
    float interp[MAX_ELEMS], got[MAX_ELEMS], want[MAX_ELEMS];
    assert_true(mc->n_out <= MAX_ELEMS);
    if (sh("mkdir -p '%s'", WORK)) fail_msg("cannot create %s", WORK);

    /* the input, bit-exact with numpy's */
    lcg_fill(x, (size_t)n_in, mc->in_seed, 2.0);
    snprintf(path, sizeof path, "%s/%s_input.npy", DATA, mc->name);
    assert_int_equal(npy_read_f32(path, want_x, (int)n_in), (int)n_in);
    if (memcmp(x, want_x, (size_t)n_in * sizeof(float)))
        fail_msg("LCG input differs from %s: the C and numpy generators disagree", path);
    snprintf(in_path, sizeof in_path, "%s/%s_input.npy", WORK, mc->name);
    npy_write_f32(in_path, x, mc->in_rank, mc->in_dims);

    /* text IR round trip */
    GcDiag d = {0};
    GcGraph *g = mc->build(&d);
    snprintf(gir, sizeof gir, "%s/%s.gir", WORK, mc->name);
    if (gc_write_text(g, gir, &d)) fail_msg("gc_write_text failed: %s", d.msg);
    gc_graph_free(g);
    check_text_roundtrip(gir);

    /* interpreter */
    g = mc->build(&d);
    const void *ins[1] = {x};
    void *outs[1] = {interp};
    if (gc_interpret(g, ins, outs, &d)) fail_msg("gc_interpret %s failed: %s", mc->name, d.msg);
    gc_graph_free(g);

    /* compile twice: byte-identical folders */
    snprintf(dir_a, sizeof dir_a, "%s/%s_c", WORK, mc->name);
    snprintf(dir_b, sizeof dir_b, "%s/%s_c2", WORK, mc->name);
    compile_into(mc, dir_a);
    compile_into(mc, dir_b);
    compare_dirs(dir_a, dir_b, "compiling twice");
    snprintf(dir_file, sizeof dir_file, "%s/%s_api_file", WORK, mc->name);
    snprintf(dir_cli, sizeof dir_cli, "%s/%s_cli", WORK, mc->name);
    compile_file_both_ways(mc, gir, dir_file, dir_cli);
    compare_dirs(dir_file, dir_cli, "the C API and the command line");
    check_runtime_files(dir_a, mc->runtime);

    /* build (the second copy with the portable kernels only), inspect the objects, run */
    snprintf(path, sizeof path, "%s/%s_expected.npy", DATA, mc->name);
    assert_int_equal(npy_read_f32(path, want, MAX_ELEMS), mc->n_out);
    build_and_run(mc, dir_b, "0", in_path, got);
    check_no_libc_io(dir_b, mc->name);
    compare_outputs(mc, "BLAS=0", got, interp, want);
    build_and_run(mc, dir_a, "auto", in_path, got);
    check_no_libc_io(dir_a, mc->name);
    check_exports(dir_a, mc->name);
    compare_outputs(mc, "BLAS=auto", got, interp, want);
    free(x);
    free(want_x);
}
/* The runtime each output folder holds: Gemm and Conv run on the fast CPU
 * kernels (cpu); LeNet's 2-D float max pooling on maxpool (which needs cpu),
 * and nothing else (no generic nn, pool or linalg units). */
static const ModelCase MLP_CASE = {"mlp", build_mlp, 2, MLP_IN, 1, 20, "gcrt_base.h gcrt_cpu.c gcrt_cpu.h"};
static const ModelCase LENET_CASE = {"lenet", build_lenet, 4, LENET_IN, 2, 10,
                                     "gcrt_base.h gcrt_cpu.c gcrt_cpu.h gcrt_maxpool.c gcrt_maxpool.h"};

static void test_mlp(void **state)
{
    (void)state;
    run_model(&MLP_CASE);
}

static void test_lenet(void **state)
{
    (void)state;
    run_model(&LENET_CASE);
}

static void write_raw(const char *path, const float *x, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(x, sizeof *x, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void read_raw(const char *path, float *x, size_t n)
{
    size_t len;
    char *b = read_all(path, &len);
    if (len != n * sizeof *x) fail_msg("%s holds %zu bytes, expected %zu", path, len, n * sizeof *x);
    memcpy(x, b, len);
    free(b);
}

/* Both models' static libraries linked into one program (two_models_main.c). */
static void test_two_models(void **state)
{
    (void)state;
    const ModelCase *cases[2] = {&MLP_CASE, &LENET_CASE};
    const char *san = getenv("GRAPHC_SANITIZE");
    const char *sflags = san && !strcmp(san, "1") ? " -fsanitize=address,undefined -fno-sanitize-recover=all" : "";
    char dir[2][512], in[2][600], out[2][600], exe[600];
    float interp[2][MAX_ELEMS], got[MAX_ELEMS];
    if (sh("mkdir -p '%s'", WORK)) fail_msg("cannot create %s", WORK);
    for (int k = 0; k < 2; k++) {
        const ModelCase *mc = cases[k];
        int64_t n_in = numel(mc->in_rank, mc->in_dims);
        float *x = malloc((size_t)n_in * sizeof *x);
        assert_non_null(x);
        lcg_fill(x, (size_t)n_in, mc->in_seed, 2.0);
        snprintf(in[k], sizeof in[k], "%s/two_%s_in.raw", WORK, mc->name);
        snprintf(out[k], sizeof out[k], "%s/two_%s_out.raw", WORK, mc->name);
        write_raw(in[k], x, (size_t)n_in);
        GcDiag d = {0};
        GcGraph *g = mc->build(&d);
        const void *ins[1] = {x};
        void *outs[1] = {interp[k]};
        if (gc_interpret(g, ins, outs, &d)) fail_msg("gc_interpret %s failed: %s", mc->name, d.msg);
        gc_graph_free(g);
        free(x);
        snprintf(dir[k], sizeof dir[k], "%s/two_%s", WORK, mc->name);
        compile_into(mc, dir[k]);
        if (sh("make -s -C '%s' 'CFLAGS=-O2 -std=c99 -Wall -Wextra -Werror -pedantic -Wdouble-promotion%s' BLAS=0 lib%s.a", dir[k], sflags,
               mc->name))
            fail_msg("make -C %s lib%s.a failed", dir[k], mc->name);
    }
    snprintf(exe, sizeof exe, "%s/two_models", WORK);
    if (sh("cc -O2 -std=c11 -Wall -Wextra -Werror -pedantic%s -I'%s' -I'%s' -o '%s' '%s/tests/models/two_models_main.c' "
           "'%s/libmlp.a' '%s/liblenet.a' -lm",
           sflags, dir[0], dir[1], exe, GRAPHC_SOURCE_DIR, dir[0], dir[1]))
        fail_msg("linking the MLP and the LeNet into one program failed");
    if (sh("'%s' '%s' '%s' '%s' '%s'", exe, in[0], in[1], out[0], out[1])) fail_msg("%s failed", exe);
    for (int k = 0; k < 2; k++) {
        read_raw(out[k], got, (size_t)cases[k]->n_out);
        double worst = 0;
        for (int i = 0; i < cases[k]->n_out; i++) {
            double diff = fabs((double)got[i] - interp[k][i]);
            if (!(diff <= 1e-5)) fail_msg("%s in the two-model program, output %d: %.9g, interpreter %.9g",
                                          cases[k]->name, i, got[i], interp[k][i]);
            if (diff > worst) worst = diff;
        }
        print_message("%s in the two-model program: max |compiled - interpreter| = %.3g\n", cases[k]->name, worst);
    }
}

static void test_builder_shapes(void **state)
{
    (void)state;
    GcDiag d = {0};
    GcGraph *g = gc_graph_new("lenet");
    GcValue *x = gc_input(g, "x", "f32", 4, LENET_IN, &d);
    GcValue *h = conv_block(g, x, "conv1", 1, 6, 5, 2, 21, &d);
    gc_output(g, h);
    if (gc_infer(g, &d)) fail_msg("gc_infer failed: %s", d.msg);
    int64_t dims[8];
    assert_int_equal(gc_value_shape(h, dims, 8), 4);
    assert_true(dims[0] == 1 && dims[1] == 6 && dims[2] == 14 && dims[3] == 14);
    gc_graph_free(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builder_shapes),
        cmocka_unit_test(test_mlp),
        cmocka_unit_test(test_lenet),
        cmocka_unit_test(test_two_models),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
