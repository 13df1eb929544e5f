/* verify.c — `graphc verify`: compile, build, run, compare.
 *
 * One command answers "does the code graphc writes for this model compute
 * what the model means?": it compiles MODEL with --emit-main into a fresh
 * temporary folder, builds the program with the folder's own Makefile
 * (`make -C DIR NAME_main`, so CC, CFLAGS, CPU_FLAGS and MAKEFLAGS from the
 * environment apply as for any build), runs it on the inputs, and compares
 * every output with the reference interpreter run in this process in double
 * precision (as `graphc run --f64`: f32 and f64 values stay doubles between
 * ops; f16 and bf16 still round to their dtype after each op).
 *
 * Inputs are the given .npy files or, without them, seeded pseudo-random
 * tensors (splitmix64 of the seed and the input's index, so the same seed
 * gives the same files everywhere): floats uniform in [-1, 1), integers in
 * {0, 1, 2, 3} (small and non-negative: they are often indices or sizes),
 * bools 0/1.
 *
 * An output passes when every element has |got - ref| <= atol + rtol*|ref|
 * (NaN matches only NaN, an infinity only the same infinity); the default
 * tolerance depends on the output's dtype (verify_help lists it) and
 * --atol / --rtol replace its parts for every output. The report is one line per
 * output; the exit status is 0 when all pass, 1 otherwise or on any error.
 * The temporary folder goes away at the end unless --keep.
 */
#include "tools/cli.h"

#include "api/compile.h"
#include "backend/backend.h"
#include "ir/interp.h"
#include "ir/op.h"
#include "passes/passes.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char verify_help[] =
    "usage: graphc verify MODEL [IN0.npy ...] [options]\n"
    "\n"
    "Compiles MODEL to C (with --emit-main) in a temporary folder, builds the\n"
    "program there with the generated Makefile ('make -C DIR NAME_main'; CC,\n"
    "CFLAGS, CPU_FLAGS and MAKEFLAGS from the environment apply), runs it, and\n"
    "compares each output with the reference interpreter run in double\n"
    "precision (graphc run --f64). Prints one line per output: its name, dtype\n"
    "and shape, the largest absolute and relative errors, and PASS or FAIL.\n"
    "Exits with status 0 when every output passes, 1 otherwise or on an error.\n"
    "\n"
    "Inputs: one .npy file per graph input, in order, each with the input's\n"
    "dtype and shape; without files, seeded pseudo-random inputs: floats\n"
    "uniform in [-1, 1), integers in {0, 1, 2, 3}, bools 0 or 1.\n"
    "\n"
    "An output passes when every element satisfies |got - ref| <= atol + rtol*|ref|\n"
    "(NaN matches NaN, an infinity the same infinity). Default tolerances by\n"
    "the output's dtype:\n"
    "  f32: atol 1e-4, rtol 1e-3    f64: atol 1e-9, rtol 1e-7\n"
    "  f16: atol 1e-2, rtol 1e-2    bf16: atol 5e-2, rtol 5e-2\n"
    "  integers and bool: exact (atol 0, rtol 0)\n"
    "\n"
    "options:\n"
    "  --atol=A, --rtol=R   atol, rtol for every output (numbers >= 0; one given\n"
    "                       alone leaves the other at its default)\n"
    "  --seed=N             the seed of the random inputs (default 0)\n"
    "  --target=TARGET      the backend: c (default), or cuda, whose generated code\n"
    "                       is built as C on graphc's CPU emulation of CUDA (make\n"
    "                       NAME_main_emu: no GPU needed)\n"
    HELP_OPT_LEVEL
    "  --weights=MODE       the weights form to build: incbin (default), c-array or file\n"
    HELP_LOAD
    "  --keep               keep the temporary folder (made in $TMPDIR, else /tmp;\n"
    "                       its path is printed): the sources, build.log, the\n"
    "                       inputs and the outputs\n"
    "  -v, --verbose        progress lines on stderr\n"
    "  -h, --help           this help\n";

typedef struct VerifyArgs {
    const char *model, *target, *weights;
    const char **ins;
    int n_ins, opt_level, keep, verbose, tol_set[2];
    double atol, rtol;
    uint64_t seed;
} VerifyArgs;

/* ---- small helpers ---- */

/* Parses a finite number >= 0; NULL or why not. */
static const char *parse_nonneg(const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = v ? strtod(v, &end) : -1;
    if (!v || end == v || *end || errno == ERANGE || !(x >= 0) || x > 1e300) return "expected a number >= 0";
    *out = x;
    return NULL;
}

static char *path_cat(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = malloc(n);
    if (p) snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* rm -rf path (best effort). */
static void remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *dp = opendir(path);
        struct dirent *e;
        while (dp && (e = readdir(dp)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char *sub = path_cat(path, e->d_name);
            if (sub) remove_tree(sub);
            free(sub);
        }
        if (dp) closedir(dp);
        rmdir(path);
    } else {
        unlink(path);
    }
}

/* Runs argv (argv[0] looked up in PATH) with stdout and stderr into `log`;
 * the exit status, 128 + N when signal N ended it, or -1 (errno set) when
 * it could not start. */
static int run_logged(char *const argv[], const char *log)
{
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) return -1;
    posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    pid_t pid;
    int err = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (err != 0) {
        errno = err;
        return -1;
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR) return -1;
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

/* The last `lines` lines of file `path` on stderr, indented. */
static void print_tail(const char *path, int lines)
{
    FILE *f = fopen(path, "rb");
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    long from = size > 8192 ? size - 8192 : 0;
    fseek(f, from, SEEK_SET);
    char buf[8193];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *start = buf + n;
    for (int k = 0; start > buf && k <= lines; start--)
        if (start[-1] == '\n' && start != buf + n) k++;
    while (*start == '\n') start++;
    for (char *line = start; *line;) {
        char *nl = strchr(line, '\n');
        fprintf(stderr, "    %.*s\n", (int)(nl ? nl - line : (long)strlen(line)), line);
        if (!nl) break;
        line = nl + 1;
    }
}

/* The first line of file `path` (no newline) into buf. */
static const char *first_line(const char *path, char *buf, size_t cap)
{
    buf[0] = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return buf;
    if (fgets(buf, (int)cap, f)) buf[strcspn(buf, "\n")] = 0;
    fclose(f);
    return buf;
}

/* ---- random inputs ---- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Fills n elements of dtype t at data: floats uniform in [-1, 1) (rounded
 * to t), integers in {0..3}, bools 0/1. */
static void fill_random(DType t, void *data, int64_t n, uint64_t seed, int index)
{
    uint64_t s = seed * 0x2545f4914f6cdd1dull + (uint64_t)index + 1;
    int is_float = t == DT_F32 || t == DT_F64 || t == DT_F16 || t == DT_BF16;
    for (int64_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(&s);
        double v = is_float ? (double)(r >> 11) * 0x1p-52 - 1.0 : t == DT_BOOL ? (double)(r >> 63) : (double)(r >> 62);
        ir_store_f64(t, data, (size_t)i, v);
    }
}

/* ---- comparison ---- */

static void default_tolerance(DType t, double *atol, double *rtol)
{
    switch (t) {
    case DT_F32: *atol = 1e-4; *rtol = 1e-3; break;
    case DT_F64: *atol = 1e-9; *rtol = 1e-7; break;
    case DT_F16: *atol = 1e-2; *rtol = 1e-2; break;
    case DT_BF16: *atol = 5e-2; *rtol = 5e-2; break;
    default: *atol = 0; *rtol = 0; break;
    }
}

typedef struct Compare {
    double max_abs, max_rel;
    int64_t n_over, worst; /* elements over the tolerance; the one most over (-1: none) */
    double worst_excess;
} Compare;

/* Compares n elements of dtype t (got from the program, ref from the
 * interpreter). */
static Compare compare(DType t, const void *got, const void *ref, int64_t n, double atol, double rtol)
{
    Compare c = {0, 0, 0, -1, 0};
    for (int64_t i = 0; i < n; i++) {
        double a = ir_load_f64(t, got, (size_t)i), r = ir_load_f64(t, ref, (size_t)i);
        double err, excess;
        if (isnan(a) || isnan(r)) {
            err = isnan(a) && isnan(r) ? 0 : INFINITY;
        } else if (isinf(a) || isinf(r)) {
            err = a == r ? 0 : INFINITY;
        } else {
            err = fabs(a - r);
        }
        if (err > c.max_abs) c.max_abs = err;
        if (r != 0 && !isnan(r) && !isinf(r) && err / fabs(r) > c.max_rel) c.max_rel = err / fabs(r);
        double bound = atol + rtol * (isnan(r) || isinf(r) ? 0 : fabs(r));
        if (!(err <= bound)) {
            excess = err - bound;
            c.n_over++;
            if (c.worst < 0 || excess > c.worst_excess) {
                c.worst = i;
                c.worst_excess = excess;
            }
        }
    }
    return c;
}

/* "[i,j,k]" of flat index i in shape s. */
static void index_str(const Shape *s, int64_t flat, char *buf, size_t cap)
{
    int64_t idx[IR_MAX_RANK];
    for (int k = s->rank - 1; k >= 0; k--) {
        int64_t d = s->dims[k] > 0 ? s->dims[k] : 1;
        idx[k] = flat % d;
        flat /= d;
    }
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int k = 0; k < s->rank && n < cap; k++) n += (size_t)snprintf(buf + n, cap - n, "%s%lld", k ? "," : "", (long long)idx[k]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
}

/* ---- the command ---- */

static int verify_args(int argc, char **argv, LoadOptions *lo, InputShape *shapes, VerifyArgs *va)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v, *why;
        int so;
        if (is_help(a)) {
            fputs(verify_help, stdout);
            return -1;
        }
        if ((so = shape_opt(argc, argv, &i, "verify", lo, shapes)) != 0) {
            if (so < 0) return 1;
        } else if ((so = opt_level_opt(a, "verify", &va->opt_level)) != 0) {
            if (so < 0) return 1;
        } else if (opt_value(argc, argv, &i, "--atol", &v)) {
            if ((why = parse_nonneg(v, &va->atol))) return fail("verify: --atol: %s", why);
            va->tol_set[0] = 1;
        } else if (opt_value(argc, argv, &i, "--rtol", &v)) {
            if ((why = parse_nonneg(v, &va->rtol))) return fail("verify: --rtol: %s", why);
            va->tol_set[1] = 1;
        } else if (opt_value(argc, argv, &i, "--seed", &v)) {
            char *end = NULL;
            errno = 0;
            unsigned long long s = v ? strtoull(v, &end, 10) : 0;
            if (!v || !*v || *end || errno || *v == '-') return fail("verify: --seed needs a whole number >= 0, got '%s'", v ? v : "");
            va->seed = s;
        } else if (opt_value(argc, argv, &i, "--target", &v)) {
            char tn[256];
            if (!v || !*v) return fail("verify: --target needs a value (%s)", target_names(tn, sizeof tn));
            va->target = v;
        } else if (opt_value(argc, argv, &i, "--weights", &v)) {
            if (!v) return fail("verify: --weights needs a value (incbin, c-array or file)");
            va->weights = v;
        } else if (strcmp(a, "--keep") == 0) {
            va->keep = 1;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            va->verbose = 1;
        } else if (a[0] == '-' && a[1] != 0) {
            return fail("verify: unknown option '%s' (see graphc verify --help)", a);
        } else if (!va->model) {
            va->model = a;
        } else {
            va->ins[va->n_ins++] = a;
        }
    }
    if (!va->model) return fail("verify: missing MODEL (usage: graphc verify MODEL [IN0.npy ...] [options])");
    return 0;
}

typedef struct VerifyRun {
    char *tmp, *dir, *indir, *outdir; /* the temporary folder, the sources, inputs, outputs */
    char name[64];
    Graph *ref, *cg;
    NpyArray *arrs;       /* given inputs */
    void **rnd;           /* random inputs */
    const void **inptr;
    void **refout;
    char **infiles;
} VerifyRun;

static void verify_free(VerifyRun *r, int n_ins)
{
    if (r->arrs)
        for (int i = 0; i < n_ins; i++) npy_free(&r->arrs[i]);
    if (r->rnd && r->ref)
        for (int i = 0; i < r->ref->n_inputs; i++) free(r->rnd[i]);
    if (r->refout && r->ref)
        for (int i = 0; i < r->ref->n_outputs; i++) free(r->refout[i]);
    if (r->infiles && r->ref)
        for (int i = 0; i < r->ref->n_inputs; i++) free(r->infiles[i]);
    free(r->arrs);
    free(r->rnd);
    free(r->inptr);
    free(r->refout);
    free(r->infiles);
    free(r->dir);
    free(r->indir);
    free(r->outdir);
    ir_graph_free(r->ref);
    ir_graph_free(r->cg);
}

/* The inputs: the given files, or random ones written to r->indir. */
static int verify_inputs(const VerifyArgs *va, VerifyRun *r)
{
    const Graph *g = r->ref;
    int n = g->n_inputs;
    r->inptr = calloc((size_t)n + 1, sizeof *r->inptr);
    r->infiles = calloc((size_t)n + 1, sizeof *r->infiles);
    if (!r->inptr || !r->infiles) return fail("out of memory");
    if (va->n_ins) {
        r->arrs = calloc((size_t)va->n_ins + 1, sizeof *r->arrs);
        if (!r->arrs) return fail("out of memory");
        if (read_inputs(va->model, g, va->ins, va->n_ins, r->arrs, r->inptr)) return 1;
        for (int i = 0; i < n; i++)
            if (!(r->infiles[i] = strdup(va->ins[i]))) return fail("out of memory");
        return 0;
    }
    r->rnd = calloc((size_t)n + 1, sizeof *r->rnd);
    if (!r->rnd || mkdir(r->indir, 0777) != 0) return fail("verify: cannot create '%s': %s", r->indir, strerror(errno));
    for (int i = 0; i < n; i++) {
        const Value *v = g->inputs[i];
        int64_t numel = ir_numel(&v->shape);
        size_t nb = (size_t)numel * ir_dtype_size(v->dtype);
        if (!(r->rnd[i] = malloc(nb ? nb : 1))) return fail("verify: out of memory for input '%s' (%zu bytes)", v->name, nb);
        fill_random(v->dtype, r->rnd[i], numel, va->seed, i);
        r->inptr[i] = r->rnd[i];
        char file[32];
        snprintf(file, sizeof file, "input_%d.npy", i);
        if (!(r->infiles[i] = path_cat(r->indir, file))) return fail("out of memory");
        Diag d = {0};
        if (npy_write(r->infiles[i], v->dtype, &v->shape, r->rnd[i], &d)) return fail_diag(&d);
    }
    return 0;
}

/* Compiles r->cg into r->dir, builds NAME_main and runs it on the inputs. */
static int verify_build_and_run(const VerifyArgs *va, const LoadOptions *lo, VerifyRun *r)
{
    CompileJob job = {0};
    job.backend = backend_find(va->target ? va->target : "c");
    char tn[256];
    if (!job.backend) return fail("verify: unknown --target '%s' (%s)", va->target, target_names(tn, sizeof tn));
    const int cuda = strcmp(job.backend->name, "cuda") == 0;
    if (strcmp(job.backend->name, "c") != 0 && !cuda)
        return fail("verify: target '%s' cannot be built and run here (only c and cuda)", job.backend->name);
    if (va->weights && backend_weights_parse(va->weights, &job.out.weights))
        return fail("verify: unknown --weights mode '%s' (expected incbin, c-array or file)", va->weights);
    job.opt_level = va->opt_level;
    job.out.name = r->name;
    job.out.emit_main = 1;
    Diag d = {0};
    if (!(r->cg = api_load(va->model, lo, &d))) return fail_diag(&d);
    if (api_compile_graph(r->cg, r->dir, &job, &d)) return fail_diag(&d);
    if (va->verbose) fprintf(stderr, "graphc: verify: compiled %s at -O%d into %s\n", va->model, va->opt_level, r->dir);

    char *log = path_cat(r->tmp, "build.log"), target[96];
    snprintf(target, sizeof target, cuda ? "%s_main_emu" : "%s_main", r->name); /* cuda: the CPU emulation */
    char *make_argv[] = {"make", "-C", r->dir, target, NULL};
    if (!log) return fail("out of memory");
    int st = run_logged(make_argv, log);
    if (st < 0) {
        free(log);
        return fail("verify: cannot run make: %s", strerror(errno));
    }
    if (st != 0) {
        fprintf(stderr, "graphc: verify: make -C %s %s failed (exit %d); the end of its log:\n", r->dir, target, st);
        print_tail(log, 20);
        free(log);
        return fail("verify: building the generated code failed%s", va->keep ? "" : " (--keep keeps the folder)");
    }
    free(log);
    if (va->verbose) fprintf(stderr, "graphc: verify: built %s/%s\n", r->dir, target);

    int n = r->ref->n_inputs;
    char **prog_argv = calloc((size_t)n + 3, sizeof *prog_argv);
    char *prog = path_cat(r->dir, target), *run_log = path_cat(r->tmp, "run.log");
    if (!prog_argv || !prog || !run_log) return fail("out of memory");
    prog_argv[0] = prog;
    prog_argv[1] = r->outdir;
    for (int i = 0; i < n; i++) prog_argv[2 + i] = r->infiles[i];
    st = run_logged(prog_argv, run_log);
    int rc = 0;
    if (st != 0) {
        char line[512];
        rc = st < 0 ? fail("verify: cannot run %s: %s", prog, strerror(errno))
                    : fail("verify: the compiled program failed (exit %d): %s", st, first_line(run_log, line, sizeof line));
    } else if (va->verbose) {
        fprintf(stderr, "graphc: verify: ran %s\n", prog);
    }
    free(prog_argv);
    free(prog);
    free(run_log);
    return rc;
}

/* Compares every output; prints one line each. The number that failed, or
 * -1 on an error (printed). */
static int verify_compare(const VerifyArgs *va, VerifyRun *r)
{
    const Graph *g = r->ref;
    int n_failed = 0;
    for (int i = 0; i < g->n_outputs; i++) {
        const Value *v = g->outputs[i];
        char file[32], sh[256];
        snprintf(file, sizeof file, "output_%d.npy", i);
        char *path = path_cat(r->outdir, file);
        NpyArray got = {0};
        Diag d = {0};
        if (!path || npy_read(path, &got, &d)) {
            free(path);
            fail_diag(&d);
            return -1;
        }
        free(path);
        ir_shape_str(&v->shape, sh, sizeof sh);
        if (!npy_dtype_fits(got.dtype, v->dtype) || !ir_shape_eq(&got.shape, &v->shape)) {
            char gs[256];
            ir_shape_str(&got.shape, gs, sizeof gs);
            fail("verify: output %d '%s' of the program is %s%s; the model's is %s%s", i, v->name,
                 ir_dtype_name(got.dtype), gs, ir_dtype_name(v->dtype), sh);
            npy_free(&got);
            return -1;
        }
        double atol, rtol;
        default_tolerance(v->dtype, &atol, &rtol);
        if (va->tol_set[0]) atol = va->atol;
        if (va->tol_set[1]) rtol = va->rtol;
        Compare c = compare(v->dtype, got.data, r->refout[i], ir_numel(&v->shape), atol, rtol);
        printf("output %d '%s' %s%s: max abs err %.3g, max rel err %.3g (atol %g, rtol %g): %s", i, v->name,
               ir_dtype_name(v->dtype), sh, c.max_abs, c.max_rel, atol, rtol, c.n_over ? "FAIL" : "PASS");
        if (c.n_over) {
            char at[256];
            index_str(&v->shape, c.worst, at, sizeof at);
            printf(" (%lld of %lld elements over the tolerance; worst at %s: %.9g, reference %.9g)", (long long)c.n_over,
                   (long long)ir_numel(&v->shape), at, ir_load_f64(v->dtype, got.data, (size_t)c.worst),
                   ir_load_f64(v->dtype, r->refout[i], (size_t)c.worst));
            n_failed++;
        }
        putchar('\n');
        npy_free(&got);
    }
    return n_failed;
}

static int verify_model(const VerifyArgs *va, const LoadOptions *lo)
{
    VerifyRun r = {0};
    int rc = 1;
    Diag d = {0};
    const char *tmpdir = getenv("TMPDIR");
    r.tmp = path_cat(tmpdir && *tmpdir ? tmpdir : "/tmp", "graphc-verify-XXXXXX");
    if (!r.tmp) return fail("out of memory");
    if (!mkdtemp(r.tmp)) {
        rc = fail("verify: cannot create a temporary folder '%s': %s", r.tmp, strerror(errno));
        free(r.tmp);
        return rc;
    }
    r.indir = path_cat(r.tmp, "inputs");
    r.outdir = path_cat(r.tmp, "outputs");
    if (!r.indir || !r.outdir) { fail("out of memory"); goto out; }

    /* the reference graph: as loaded, shape inference only (graphc run) */
    if (!(r.ref = api_load(va->model, lo, &d)) || ir_verify(r.ref, &d) || pass_infer_shapes(r.ref, &d) ||
        ir_verify(r.ref, &d)) {
        fail_diag(&d);
        goto out;
    }
    /* the C name: the file's stem when it can name a model, else "model" */
    Diag nd = {0};
    const Backend *c = backend_find("c");
    if (stem_name(va->model, r.name, sizeof r.name) || !c || c->check_name(r.name, &nd))
        snprintf(r.name, sizeof r.name, "model");
    r.dir = path_cat(r.tmp, r.name);
    if (!r.dir) { fail("out of memory"); goto out; }
    if (verify_inputs(va, &r)) goto out;
    if (verify_build_and_run(va, lo, &r)) goto out;

    const Graph *g = r.ref;
    r.refout = calloc((size_t)g->n_outputs + 1, sizeof *r.refout);
    if (!r.refout) { fail("out of memory"); goto out; }
    for (int i = 0; i < g->n_outputs; i++) {
        size_t nb = (size_t)ir_numel(&g->outputs[i]->shape) * ir_dtype_size(g->outputs[i]->dtype);
        if (!(r.refout[i] = malloc(nb ? nb : 1))) { fail("verify: out of memory for output '%s'", g->outputs[i]->name); goto out; }
    }
    if (ir_interp_run(g, INTERP_F64, r.inptr, r.refout, &d)) {
        fail_diag(&d);
        goto out;
    }
    printf("verify %s: -O%d, target %s, %s weights, ", va->model, va->opt_level,
           va->target && strcmp(va->target, "cuda") == 0 ? "cuda (run on the CPU emulation)" : "c",
           va->weights ? va->weights : "incbin");
    if (va->n_ins) printf("inputs from %d .npy file%s\n", va->n_ins, va->n_ins == 1 ? "" : "s");
    else printf("random inputs (seed %llu)\n", (unsigned long long)va->seed);
    int n_failed = verify_compare(va, &r);
    if (n_failed < 0) goto out;
    if (va->keep) printf("kept %s\n", r.tmp);
    if (fflush(stdout) != 0) { fail("cannot write to stdout: %s", strerror(errno)); goto out; }
    if (n_failed) {
        fail("verify: %s: %d of %d output%s FAIL", va->model, n_failed, g->n_outputs, g->n_outputs == 1 ? "" : "s");
        goto out;
    }
    rc = 0;
out:
    if (rc && va->keep) fprintf(stderr, "graphc: verify: kept %s\n", r.tmp);
    if (!va->keep) remove_tree(r.tmp);
    verify_free(&r, va->n_ins);
    free(r.tmp);
    return rc;
}

int cmd_verify(int argc, char **argv)
{
    VerifyArgs va = {0};
    va.opt_level = 2;
    LoadOptions lo = {0};
    InputShape *shapes = calloc((size_t)argc + 1, sizeof *shapes);
    va.ins = calloc((size_t)argc + 1, sizeof *va.ins);
    if (!shapes || !va.ins) {
        free(shapes);
        free(va.ins);
        return fail("out of memory");
    }
    lo.shapes = shapes;
    int rc = verify_args(argc, argv, &lo, shapes, &va);
    if (rc == 0) rc = verify_model(&va, &lo);
    free_shapes(&lo, shapes);
    free(va.ins);
    return rc < 0 ? 0 : rc;
}
