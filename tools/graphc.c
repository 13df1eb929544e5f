/* graphc.c — the command-line driver.
 *
 *   graphc compile MODEL -o DIR ...   model → passes → C sources in DIR
 *   graphc run MODEL OUTDIR IN.npy..  model → reference interpreter → .npy
 *   graphc verify MODEL [IN.npy..]    compile, make, run, compare with the
 *                                     f64 interpreter (tools/verify.c)
 *   graphc dump MODEL ...             model → text IR, Graphviz digraph
 *                                     (ir/dot.c) or memory plan picture
 *                                     (passes/plan_svg.c) on stdout
 *   graphc check-op FILE.c            user operators (ir/custom_op.c): run
 *                                     them, gradient vs finite differences
 *
 * Every command that reads a MODEL takes --ops FILE.c (user operators,
 * registered before the model loads).
 *
 * Like QBE's main.c, the driver is only glue: it parses flags and calls the
 * compile layer (api/compile.c: load by extension, --bind, the pass
 * pipeline, the backend chosen by --target), the same functions the public
 * C API calls, or the interpreter. Subcommands are one table; each has its
 * own --help text.
 *
 * Every failure — a bad flag, a bad model, a bad input file — prints exactly
 * one line "graphc: error: MSG" on stderr and exits with status 1. Outputs are
 * written atomically (temp file + rename, and the backend replaces its
 * output folder as a whole), so an error never leaves a half-written file.
 */
#include "tools/cli.h"

#include "api/compile.h"
#include "backend/backend.h"
#include "frontend/load.h"
#include "frontend/npy.h"
#include "ir/custom_op.h"
#include "ir/custom_read.h"
#include "ir/dot.h"
#include "ir/interp.h"
#include "ir/op.h"
#include "ir/ir.h"
#include "ir/text.h"
#include "ir/writer.h"
#include "passes/passes.h"
#include "passes/plan_svg.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

/* ---- errors and flags ---- */

/* Prints "graphc: error: LINE" for each line of the message (a diagnostic
 * that lists several problems, such as every unsupported op of a model,
 * has one line per problem). Returns 1, the exit status. */
int fail(const char *fmt, ...)
{
    char small[1024], *msg = small;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    if (!msg) msg = small;
    for (const char *p = msg;;) {
        const char *nl = strchr(p, '\n');
        fprintf(stderr, "graphc: error: %.*s\n", (int)(nl ? nl - p : (long)strlen(p)), p);
        if (!nl) break;
        p = nl + 1;
    }
    if (msg != small) free(msg);
    return 1;
}

int fail_diag(const Diag *d) { return fail("%s", d->n_errors ? d->msg : "unknown failure"); }

/* Matches option `name` at argv[*i] in the forms "NAME=VALUE" and "NAME VALUE"
 * (the latter consumes the next argument). Returns 1 on a match (with *val
 * set, or NULL when the value is missing), 0 otherwise. */
int opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
    size_t n = strlen(name);
    const char *a = argv[*i];
    if (strncmp(a, name, n) != 0) return 0;
    if (a[n] == '=') {
        *val = a + n + 1;
        return 1;
    }
    if (a[n] != 0) return 0;
    *val = *i + 1 < argc ? argv[++*i] : NULL;
    return 1;
}

int is_help(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

static int is_ident_char(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* The model file's stem ("nets/resnet-18.gir" → "resnet_18"): every
 * character outside [A-Za-z0-9_] becomes '_'. NULL, or why there is none;
 * the backend then judges whether the stem can name the model. */
const char *stem_name(const char *path, char *out, size_t cap)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    const char *dot = strrchr(base, '.');
    size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
    if (n == 0) return "the file name has no stem";
    if (n + 1 > cap) return "the file name is too long";
    for (size_t i = 0; i < n; i++) out[i] = is_ident_char((unsigned char)base[i]) ? base[i] : '_';
    out[n] = 0;
    return NULL;
}

/* mkdir -p. 0, or -1 with errno set. */
static int make_dirs(const char *path)
{
    size_t n = strlen(path);
    char *p = malloc(n + 1);
    if (!p) return -1;
    memcpy(p, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (p[i] != '/' && p[i] != 0) continue;
        char c = p[i];
        p[i] = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) { free(p); return -1; }
        p[i] = c;
    }
    free(p);
    struct stat st;
    if (stat(path, &st) != 0) return -1;
    if (!S_ISDIR(st.st_mode)) { errno = ENOTDIR; return -1; }
    return 0;
}

/* Parses "NAME=d0,d1,..." (an empty list after '=' is a scalar) of
 * --shape into *out; NULL, or why the text is malformed. */
const char *parse_shape_opt(const char *text, InputShape *out)
{
    const char *eq = strrchr(text, '=');
    if (!eq || eq == text) return "expected NAME=d0,d1,...";
    out->name = strndup(text, (size_t)(eq - text));
    if (!out->name) return "out of memory";
    memset(&out->shape, 0, sizeof out->shape);
    out->max = 0;
    const char *p = eq + 1;
    while (*p) {
        if (out->shape.rank == IR_MAX_RANK) return "too many dims";
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno == ERANGE || v < 0) return "dims must be non-negative integers";
        out->shape.dims[out->shape.rank++] = v;
        p = end;
        if (*p == ',' && p[1]) p++;
        else if (*p) return "dims must be separated by commas";
    }
    int64_t n;
    if (ir_shape_numel(&out->shape, &n)) return "the element count overflows";
    return NULL;
}

/* Parses the byte count of --max-tensor-bytes: digits, optionally followed
 * by K, M, G or T (powers of 1024), from 1 to IR_MAX_TENSOR_BYTES_CAP; NULL,
 * or why the text is malformed. */
static const char *parse_bytes_opt(const char *text, int64_t *out)
{
    int64_t v = 0;
    const char *p = text;
    if (*p < '0' || *p > '9') return "expected a byte count such as 1048576, 64M or 16G";
    for (; *p >= '0' && *p <= '9'; p++)
        if (ir_mul_ok(v, 10, &v) || ir_add_ok(v, *p - '0', &v)) return "the count is too large";
    static const char units[] = "KMGT";
    const char *u = *p ? strchr(units, *p) : NULL;
    if (*p && (!u || p[1])) return "the only suffixes are K, M, G and T (powers of 1024)";
    for (int k = u ? (int)(u - units) + 1 : 0; k > 0; k--)
        if (ir_mul_ok(v, 1024, &v)) return "the count is too large";
    if (v == 0) return "the limit must be positive";
    if (v > IR_MAX_TENSOR_BYTES_CAP) return "the count is too large (at most 2^60 bytes)";
    *out = v;
    return NULL;
}

/* Handles one --shape option at argv[*i]: 1 consumed, 0 not --shape, -1
 * error (printed). */
int shape_opt(int argc, char **argv, int *i, const char *cmd, LoadOptions *o, InputShape *store)
{
    const char *v;
    if (strcmp(argv[*i], "--no-fold") == 0) {
        o->no_fold = 1;
        return 1;
    }
    if (opt_value(argc, argv, i, "--bind", &v)) {
        if (!v || !strchr(v, '=') || *v == '=') { fail("%s: --bind needs NAME=FILE.npy", cmd); return -1; }
        if (o->n_binds == LOAD_MAX_BINDS) { fail("%s: at most %d --bind options", cmd, LOAD_MAX_BINDS); return -1; }
        o->binds[o->n_binds++] = v;
        return 1;
    }
    if (opt_value(argc, argv, i, "--ops", &v)) {
        if (!v || !*v) { fail("%s: --ops needs a FILE.c", cmd); return -1; }
        Diag d = {0};
        if (api_load_ops(v, &d)) { fail_diag(&d); return -1; }
        return 1;
    }
    if (opt_value(argc, argv, i, "--max-tensor-bytes", &v)) {
        const char *why = v ? parse_bytes_opt(v, &o->max_tensor_bytes) : "expected a byte count such as 64M";
        if (why) { fail("%s: bad --max-tensor-bytes '%s': %s", cmd, v ? v : "", why); return -1; }
        return 1;
    }
    if (opt_value(argc, argv, i, "--max-dim", &v)) {
        char *end = NULL;
        long long n = v && *v ? strtoll(v, &end, 10) : 0;
        if (!v || !*v || *end || n < 1 || n > ((long long)1 << 40)) {
            fail("%s: bad --max-dim '%s': expected a positive extent", cmd, v ? v : "");
            return -1;
        }
        o->max_dim = n;
        return 1;
    }
    int max = 0;
    if (opt_value(argc, argv, i, "--max-shape", &v)) max = 1;
    else if (!opt_value(argc, argv, i, "--shape", &v)) return 0;
    const char *flag = max ? "--max-shape" : "--shape";
    if (!v || !*v) { fail("%s: %s needs NAME=d0,d1,...", cmd, flag); return -1; }
    InputShape *s = &store[o->n_shapes];
    const char *why = parse_shape_opt(v, s);
    if (why) { fail("%s: bad %s '%s': %s", cmd, flag, v, why); return -1; }
    s->max = max;
    for (int k = 0; k < o->n_shapes; k++)
        if (strcmp(store[k].name, s->name) == 0) {
            fail("%s: --shape/--max-shape for '%s' is given twice", cmd, s->name);
            return -1;
        }
    o->n_shapes++;
    return 1;
}

void free_shapes(LoadOptions *o, InputShape *store)
{
    for (int k = 0; k < o->n_shapes; k++) free((char *)store[k].name);
    free(store);
}

static Graph *load(const char *path, const LoadOptions *opts, Diag *d, int verbose)
{
    Graph *g = api_load(path, opts, d);
    if (g && verbose)
        fprintf(stderr, "graphc: loaded %s: graph '%s', %d nodes, %d inputs, %d outputs\n", path, g->name,
                g->n_nodes, g->n_inputs, g->n_outputs);
    return g;
}

/* ---- options shared by the subcommands ---- */

/* Handles an -O option at argv[i]: 1 (*level set), 0 not an -O option,
 * -1 error (printed). */
int opt_level_opt(const char *a, const char *cmd, int *level)
{
    if (strncmp(a, "-O", 2) != 0) return 0;
    if (strcmp(a, "-O0") == 0) *level = 0;
    else if (strcmp(a, "-O2") == 0) *level = 2;
    else { fail("%s: unknown optimization level '%s' (expected -O0 or -O2)", cmd, a); return -1; }
    return 1;
}

#define HELP_PRINT                                                                            \
    "  --print-after=PASS   print the text IR after pass PASS, or after every pass\n"         \
    "                       with 'all' (constants over 64 elements elided)\n"                 \
    "  --print-before=PASS  the same, before pass PASS (or before every pass)\n"

/* Handles a training option at argv[*i] (--grad, --train when allow_train,
 * --wrt, --loss, --optimizer): 1 consumed, 0 not one, -1 error (printed). */
static int train_opt(int argc, char **argv, int *i, const char *cmd, int allow_train, TrainRequest *tr)
{
    const char *a = argv[*i], *v;
    if (strcmp(a, "--grad") == 0 || (allow_train && strcmp(a, "--train") == 0)) {
        TrainRequestMode m = a[2] == 'g' ? TRAIN_REQ_GRAD : TRAIN_REQ_TRAIN;
        if (tr->mode != TRAIN_REQ_NONE && tr->mode != m) { fail("%s: --grad and --train exclude each other", cmd); return -1; }
        tr->mode = m;
        return 1;
    }
    const char **slot = NULL;
    if (opt_value(argc, argv, i, "--wrt", &v)) slot = &tr->wrt;
    else if (opt_value(argc, argv, i, "--loss", &v)) slot = &tr->loss;
    else if (allow_train && opt_value(argc, argv, i, "--optimizer", &v)) slot = &tr->optimizer;
    if (!slot) return 0;
    if (!v || !*v) { fail("%s: %s needs a value", cmd, a); return -1; }
    *slot = v;
    return 1;
}

#define HELP_GRAD                                                                             \
    "  --grad               differentiate: the model's first output must be a float\n"        \
    "                       scalar (the loss); after the model's outputs come one\n"          \
    "                       gradient per parameter, grad_<name>, in parameter order\n"       \
    "  --wrt=NAME,...       the parameters (default: every float constant of rank >= 1\n"    \
    "                       that is no shape operand and no running statistic, in\n"        \
    "                       model order); with --grad graph inputs may be named too\n"       \
    "  --loss=KIND:OUTPUT   append a loss to output OUTPUT and a graph input 'label':\n"     \
    "                       cross-entropy (OUTPUT holds scores [N,C,...], label i64\n"       \
    "                       [N,...], softmax cross-entropy averaged over the batch)\n"      \
    "                       or mse (label shaped like OUTPUT, mean squared error);\n"       \
    "                       the loss becomes the first output; --loss=probe sums\n"         \
    "                       every float output times a fixed random tensor\n"

/* ---- compile ---- */

/* The backends' names into buf ("expected c" or "expected c or cuda"). */
const char *target_names(char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "expected");
    for (int i = 0; backend_list[i] && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i == 0 ? " " : backend_list[i + 1] ? ", " : " or ",
                              backend_list[i]->name);
    return buf;
}

static const char compile_help[] =
    "usage: graphc compile MODEL -o DIR [options]\n"
    "\n"
    "Compiles MODEL (.gir text IR or .onnx) into DIR: the compile pipeline (passes\n"
    "listed below, those of the -O level) runs first, then the backend of the\n"
    "target writes its sources. The C backend (--target=c, the default) writes\n"
    "standalone C99: the model's header and source, its weights, the runtime kernels\n"
    "the model calls (included by the model's source, private to it) and a Makefile.\n"
    "DIR is written atomically: after an error nothing is left behind. An\n"
    "existing DIR must be empty or a graphc output folder; files there that\n"
    "graphc did not write are kept (one that the new output would overwrite is\n"
    "an error).\n"
    "\n"
    "options:\n"
    "  -o DIR               output folder (required)\n"
    "  --name NAME          C prefix of the generated API and file names\n"
    "                       (default: MODEL's file stem, with characters outside\n"
    "                       [A-Za-z0-9_] turned into '_'; it must be a C identifier)\n"
    "  --target=TARGET      the backend (default c; the list is below)\n"
    HELP_OPT_LEVEL
    HELP_LOAD
    "  --emit-main          also write NAME_main.c, a program that reads the inputs\n"
    "                       from .npy files and writes output_<i>.npy files\n"
    "  --cuda-jit           with --target=cuda: host code in plain C (NAME.c) that\n"
    "                       embeds the kernels' source (NAME_kernels.cu) and compiles\n"
    "                       it with NVRTC at NAME_init for the device there; the\n"
    "                       folder builds without nvcc (links -lnvrtc -lcuda)\n"
    "  --precision=P        with --target=cuda: fp32 (default: the model's types),\n"
    "                       fp16 or bf16: the model's f32 tensors held in half\n"
    "                       wherever the CUDA backend has a half kernel for the op\n"
    "                       (computing in float, GEMMs and convolutions accumulating\n"
    "                       in fp32), f32 elsewhere, Casts between; weights\n"
    "                       converted when graphc compiles; inputs and outputs stay\n"
    "                       f32 (pass lower-precision)\n"
    "  --cuda-layout=L      with --target=cuda: where 4-d activations are kept\n"
    "                       channels-last (NHWC) between the cuDNN convolutions, the\n"
    "                       elementwise kernels and the pooling kernels that read\n"
    "                       them: auto (default: around f16/bf16 convolutions, whose\n"
    "                       tensor-core kernels work in NHWC), nhwc (around every\n"
    "                       cuDNN convolution, f32 too) or nchw (never); inputs and\n"
    "                       outputs stay NCHW\n"
    "  --weights=MODE       how the weights are stored: incbin (default; a binary\n"
    "                       file pulled in with the assembler's .incbin), c-array\n"
    "                       (a const C array initialized by string literals, in\n"
    "                       NAME_weights.c and the NAME_weights_<k>.inc it includes)\n"
    "                       or file (NAME.weights: a 64-byte header with the model\n"
    "                       hash, then the blob; the caller loads it, checks it\n"
    "                       with NAME_check_weights and passes it to NAME_run)\n"
    HELP_GRAD
    "  --train              generate a training step: NAME_init_state, NAME_train_step\n"
    "                       (forward, backward and optimizer update in place in a\n"
    "                       caller-provided state region) and NAME_infer_v\n"
    "  --max-threads=N      the most threads NAME_run_parallel splits a kernel over\n"
    "                       (1 to 64, default 4): the per-task scratch the arena\n"
    "                       holds for them (1: the smallest arena, serial code)\n"
    "  --plan-keep-forward  (measurement) plan memory as if every forward value of a\n"
    "                       --grad/--train model were kept alive to the end of the\n"
    "                       step: the arena without backward dependencies\n"
    "  --optimizer=SPEC     with --train: sgd[:lr=L,momentum=M,nesterov=1,weight_decay=W]\n"
    "                       (default sgd:lr=0.01) or adam[:lr=L,beta1=B1,beta2=B2,\n"
    "                       eps=E,weight_decay=W] (defaults 1e-3, 0.9, 0.999, 1e-8, 0;\n"
    "                       ONNX training-domain Adam)\n"
    HELP_PRINT
    "                       (these dumps go to stderr)\n"
    "  --report             after a successful compile, print on stdout one line per\n"
    "                       pass that ran ('pass NAME: N nodes, T ms'), then\n"
    "                       'kernels: N' (kernels the generated run executes) and\n"
    "                       'arena: A bytes, lower bound: L bytes, no-reuse: S bytes'\n"
    "                       (the memory plan against the live-set lower bound and\n"
    "                       against one buffer per value)\n"
    "  -v, --verbose        progress lines on stderr\n"
    "  -h, --help           this help\n";

/* Prints a help text, then the pipeline's pass names (with their -O level)
 * for --print-after / --print-before. */
static void print_help(const char *text)
{
    fputs(text, stdout);
    fputs("\ntargets:", stdout);
    for (int i = 0; backend_list[i]; i++) printf("\n  %-20s %s", backend_list[i]->name, backend_list[i]->summary);
    fputc('\n', stdout);
    fputs("\npasses, in pipeline order (-O2 only: *; when an option asks: +):", stdout);
    for (const Pass *p = pass_pipeline; p->name; p++)
        printf(" %s%s", p->name, p->min_level > 0 ? "*" : p->wanted ? "+" : "");
    fputc('\n', stdout);
}

typedef struct CompileArgs {
    const char *model, *dir, *name, *weights, *target, *precision, *layout;
    const char *print_after, *print_before;
    int emit_main, verbose, report, opt_level, plan_keep_forward, max_threads, cuda_jit;
    TrainRequest train;
} CompileArgs;

static int compile_args(int argc, char **argv, LoadOptions *lo, InputShape *shapes, CompileArgs *ca);
static int compile_model(const CompileArgs *ca, const LoadOptions *lo);

static int cmd_compile(int argc, char **argv)
{
    CompileArgs ca = {0};
    ca.opt_level = 2;
    LoadOptions lo = {0};
    InputShape *shapes = calloc((size_t)argc + 1, sizeof *shapes);
    if (!shapes) return fail("out of memory");
    lo.shapes = shapes;
    int rc = compile_args(argc, argv, &lo, shapes, &ca);
    if (rc == 0) rc = compile_model(&ca, &lo);
    free_shapes(&lo, shapes);
    return rc < 0 ? 0 : rc;
}

/* Parses compile's arguments: 0 ok, -1 done (help printed), 1 error. */
static int compile_args(int argc, char **argv, LoadOptions *lo, InputShape *shapes, CompileArgs *ca)
{
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v;
        int so;
        if (is_help(a)) { print_help(compile_help); return -1; }
        if ((so = shape_opt(argc, argv, &i, "compile", lo, shapes)) != 0) {
            if (so < 0) return 1;
        } else if ((so = train_opt(argc, argv, &i, "compile", 1, &ca->train)) != 0) {
            if (so < 0) return 1;
        } else if ((so = opt_level_opt(a, "compile", &ca->opt_level)) != 0) {
            if (so < 0) return 1;
        } else if (opt_value(argc, argv, &i, "-o", &v)) {
            if (!v || !*v) return fail("compile: %s needs a folder", a);
            ca->dir = v;
        } else if (opt_value(argc, argv, &i, "--name", &v)) {
            if (!v) return fail("compile: --name needs a value");
            ca->name = v;
        } else if (opt_value(argc, argv, &i, "--weights", &v)) {
            if (!v) return fail("compile: --weights needs a value (incbin, c-array or file)");
            ca->weights = v;
        } else if (opt_value(argc, argv, &i, "--target", &v)) {
            char tn[256];
            if (!v || !*v) return fail("compile: --target needs a value (%s)", target_names(tn, sizeof tn));
            ca->target = v;
        } else if (opt_value(argc, argv, &i, "--print-after", &v)) {
            if (!v || !*v) return fail("compile: --print-after needs a pass name or 'all'");
            ca->print_after = v;
        } else if (opt_value(argc, argv, &i, "--print-before", &v)) {
            if (!v || !*v) return fail("compile: --print-before needs a pass name or 'all'");
            ca->print_before = v;
        } else if (strcmp(a, "--report") == 0) {
            ca->report = 1;
        } else if (strcmp(a, "--emit-main") == 0) {
            ca->emit_main = 1;
        } else if (strcmp(a, "--cuda-jit") == 0) {
            ca->cuda_jit = 1;
        } else if (opt_value(argc, argv, &i, "--precision", &v)) {
            if (!v || (strcmp(v, "fp32") && strcmp(v, "fp16") && strcmp(v, "bf16")))
                return fail("compile: --precision needs fp32, fp16 or bf16, got '%s'", v ? v : "");
            ca->precision = v;
        } else if (opt_value(argc, argv, &i, "--cuda-layout", &v)) {
            if (!v || (strcmp(v, "auto") && strcmp(v, "nchw") && strcmp(v, "nhwc")))
                return fail("compile: --cuda-layout needs auto, nchw or nhwc, got '%s'", v ? v : "");
            ca->layout = v;
        } else if (strcmp(a, "--plan-keep-forward") == 0) {
            ca->plan_keep_forward = 1;
        } else if (opt_value(argc, argv, &i, "--max-threads", &v)) {
            char *end = NULL;
            long t = v ? strtol(v, &end, 10) : 0;
            if (!v || !*v || *end || t < 1 || t > 64)
                return fail("compile: --max-threads needs a whole number from 1 to 64, got '%s'", v ? v : "");
            ca->max_threads = (int)t;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
            ca->verbose = 1;
        } else if (a[0] == '-' && a[1] != 0) {
            return fail("compile: unknown option '%s' (see graphc compile --help)", a);
        } else if (!ca->model) {
            ca->model = a;
        } else {
            return fail("compile: unexpected argument '%s' (one MODEL only; see graphc compile --help)", a);
        }
    }
    if (!ca->model) return fail("compile: missing MODEL (usage: graphc compile MODEL -o DIR [options])");
    if (!ca->dir) return fail("compile: missing -o DIR (usage: graphc compile MODEL -o DIR [options])");
    return 0;
}

static int compile_model(const CompileArgs *ca, const LoadOptions *lo)
{
    CompileJob job = {0};
    job.backend = backend_find(ca->target ? ca->target : backend_list[0]->name);
    char tn[256];
    if (!job.backend) return fail("compile: unknown --target '%s' (%s)", ca->target, target_names(tn, sizeof tn));
    job.opt_level = ca->opt_level;
    job.out.emit_main = ca->emit_main;
    if (ca->cuda_jit && strcmp(job.backend->name, "cuda") != 0)
        return fail("compile: --cuda-jit needs --target=cuda (the target is '%s')", job.backend->name);
    job.out.cuda_jit = ca->cuda_jit;
    static const char *const cuda_names[3] = {"--precision", "--cuda-layout", "--target=cuda"};
    Diag od = {0};
    if (api_cuda_options(&job, ca->precision, ca->layout, ca->train.mode != TRAIN_REQ_NONE, cuda_names, &od))
        return fail("compile: %s", od.msg);
    if (ca->weights && backend_weights_parse(ca->weights, &job.out.weights))
        return fail("compile: unknown --weights mode '%s' (expected incbin, c-array or file)", ca->weights);
    char stem[256];
    if (ca->name) {
        job.out.name = ca->name;
    } else {
        Diag nd = {0};
        const char *why = stem_name(ca->model, stem, sizeof stem);
        if (!why && job.backend->check_name(stem, &nd)) why = nd.msg;
        if (why) return fail("%s: cannot derive a model name from the file name (%s); pass --name NAME", ca->model, why);
        job.out.name = stem;
    }

    Diag d = {0};
    Graph *g = load(ca->model, lo, &d, ca->verbose);
    if (!g) return fail_diag(&d);
    if (api_setup_training(g, &ca->train, &d)) {
        ir_graph_free(g);
        return fail_diag(&d);
    }
    Graph *ig = NULL;
    if (ca->train.mode == TRAIN_REQ_TRAIN) { /* the inference pass: the model once more, over the same state */
        Diag d2 = {0};
        ig = api_load(ca->model, lo, &d2);
        if (!ig || api_setup_inference(ig, g, &d2)) {
            ir_graph_free(ig);
            ir_graph_free(g);
            return fail_diag(&d2);
        }
        job.infer_graph = ig;
    }
    Writer dump, report;
    w_init(&dump);
    w_init(&report);
    job.print_after = ca->print_after;
    job.print_before = ca->print_before;
    job.dump = &dump;
    job.report = ca->report ? &report : NULL;
    job.plan_keep_forward = ca->plan_keep_forward;
    job.max_threads = ca->max_threads;
    int rc = api_compile_graph(g, ca->dir, &job, &d);
    if (dump.len) fwrite(dump.buf, 1, dump.len, stderr);
    w_free(&dump);
    if (rc == 0 && ca->verbose)
        fprintf(stderr, "graphc: compiled at -O%d for target %s: %d nodes, arena %lld bytes; wrote %s (name %s)\n",
                g->opt_level, job.backend->name, g->n_nodes, (long long)g->arena_bytes, ca->dir, job.out.name);
    if (rc == 0 && ca->report) fwrite(report.buf, 1, report.len, stdout);
    w_free(&report);
    ir_graph_free(g);
    ir_graph_free(ig);
    if (rc) return fail_diag(&d);
    if (ca->report && fflush(stdout) != 0) return fail("cannot write to stdout: %s", strerror(errno));
    return 0;
}

/* Reads the .npy file of every graph input of g (files[i] for input i),
 * each with exactly the input's dtype and shape, into arrs (ptrs[i]: the
 * data). 0, or 1 with the error printed (the arrays read so far stay in
 * arrs for the caller to free). */
int read_inputs(const char *model, const Graph *g, const char *const *files, int n, NpyArray *arrs,
                       const void **ptrs)
{
    if (n != g->n_inputs) {
        char names[512] = "";
        for (int i = 0; i < g->n_inputs; i++) {
            strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
            strncat(names, g->inputs[i]->name, sizeof names - strlen(names) - 1);
        }
        return fail("%s: graph has %d input%s (%s), got %d .npy file%s", model, g->n_inputs,
                    g->n_inputs == 1 ? "" : "s", names, n, n == 1 ? "" : "s");
    }
    for (int i = 0; i < n; i++) {
        const Value *v = g->inputs[i];
        Diag d = {0};
        if (npy_read(files[i], &arrs[i], &d)) return fail_diag(&d);
        /* runtime shapes: the caller binds the symbols (ir_sym_bind) */
        if (!npy_dtype_fits(arrs[i].dtype, v->dtype) || (!g->n_syms && !ir_shape_eq(&arrs[i].shape, &v->shape))) {
            char want[256], got[256];
            ir_shape_str(&v->shape, want, sizeof want);
            ir_shape_str(&arrs[i].shape, got, sizeof got);
            return fail("%s: graph input %d '%s' is %s%s, but the file holds %s%s", files[i], i, v->name,
                        ir_dtype_name(v->dtype), want, ir_dtype_name(arrs[i].dtype), got);
        }
        ptrs[i] = arrs[i].data;
    }
    return 0;
}

/* ---- run ---- */

/* Runtime shapes: g becomes the static graph of the inputs' actual shapes
 * (their symbols bound and checked, shapes inferred again), so the
 * interpreter runs at those extents and writes outputs of their shapes. */
static int run_specialize(Graph *g, const NpyArray *arrs, Diag *d)
{
    const Shape **act = calloc((size_t)g->n_inputs + 1, sizeof *act);
    int64_t *val = calloc((size_t)g->n_syms + 1, sizeof *val);
    int rc = -1;
    if (act && val) {
        for (int i = 0; i < g->n_inputs; i++) act[i] = &arrs[i].shape;
        rc = ir_sym_bind(g, act, val, d);
        if (!rc) {
            ir_sym_specialize(g, val);
            rc = pass_infer_shapes(g, d);
        }
    } else {
        rc = diag_error(d, "out of memory");
    }
    free(act);
    free(val);
    return rc;
}

static const char run_help[] =
    "usage: graphc run MODEL OUTDIR IN0.npy [IN1.npy ...] [options]\n"
    "\n"
    "Runs MODEL in the reference interpreter: one .npy file per graph input, in\n"
    "the order of the graph's inputs, each with exactly the input's dtype and\n"
    "shape (bf16 travels as '<u2' raw bits; with runtime shapes, --max-shape,\n"
    "any shape within the bounds). Writes OUTDIR/output_<i>.npy for each graph\n"
    "output i in the output's dtype and actual shape; OUTDIR is created if needed.\n"
    "\n"
    "By default the interpreter runs the graph as loaded (shape inference only):\n"
    "it is the reference that compiled code is tested against. With -O0 or -O2\n"
    "the compile pipeline of that level runs first and the interpreter runs the\n"
    "graph it leaves (fused nodes included), which checks the passes themselves.\n"
    "\n"
    "options:\n"
    "  -O0, -O2             run the compile pipeline at this level before\n"
    "                       interpreting (see graphc compile --help for the levels)\n"
    "  --f64                keep f32 values in double precision between ops\n"
    "                       (outputs are still written in the graph's dtypes)\n"
    HELP_GRAD
    HELP_LOAD
    "  -v, --verbose        progress lines on stderr\n"
    "  -h, --help           this help\n";

static int cmd_run(int argc, char **argv)
{
    const char *model = NULL, *outdir = NULL;
    const char **ins = calloc((size_t)argc + 1, sizeof *ins);
    int n_ins = 0, f64 = 0, verbose = 0, rc = 1, opt_level = -1;
    LoadOptions lo = {0};
    TrainRequest tr = {0};
    InputShape *shapes = calloc((size_t)argc + 1, sizeof *shapes);
    if (!ins || !shapes) { free(ins); free(shapes); return fail("out of memory"); }
    lo.shapes = shapes;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int so;
        if (is_help(a)) { fputs(run_help, stdout); free(ins); free_shapes(&lo, shapes); return 0; }
        if ((so = shape_opt(argc, argv, &i, "run", &lo, shapes)) != 0) {
            if (so < 0) { free(ins); free_shapes(&lo, shapes); return 1; }
        } else if ((so = train_opt(argc, argv, &i, "run", 0, &tr)) != 0) {
            if (so < 0) { free(ins); free_shapes(&lo, shapes); return 1; }
        } else if ((so = opt_level_opt(a, "run", &opt_level)) != 0) {
            if (so < 0) { free(ins); free_shapes(&lo, shapes); return 1; }
        } else if (strcmp(a, "--f64") == 0) f64 = 1;
        else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) verbose = 1;
        else if (a[0] == '-' && a[1] != 0) {
            free(ins);
            free_shapes(&lo, shapes);
            return fail("run: unknown option '%s' (see graphc run --help)", a);
        }
        else if (!model) model = a;
        else if (!outdir) outdir = a;
        else ins[n_ins++] = a;
    }
    if (!model || !outdir) {
        free(ins);
        free_shapes(&lo, shapes);
        return fail("run: missing %s (usage: graphc run MODEL OUTDIR IN0.npy ...)", model ? "OUTDIR" : "MODEL");
    }

    Diag d = {0};
    Graph *g = load(model, &lo, &d, verbose);
    NpyArray *arrs = NULL;
    void **outs = NULL;
    const void **inptr = NULL;
    if (!g) goto diag_fail;
    if (api_setup_training(g, &tr, &d)) goto diag_fail;
    if (opt_level >= 0) {
        CompileJob job = {0};
        job.opt_level = opt_level;
        if (api_run_pipeline(g, &job, &d)) goto diag_fail;
    } else if (ir_verify(g, &d) || pass_infer_shapes(g, &d) || pass_autodiff(g, &d) || ir_verify(g, &d)) {
        goto diag_fail;
    }
    arrs = calloc((size_t)n_ins + 1, sizeof *arrs);
    outs = calloc((size_t)g->n_outputs + 1, sizeof *outs);
    inptr = calloc((size_t)n_ins + 1, sizeof *inptr);
    if (!arrs || !outs || !inptr) { fail("out of memory"); goto out; }
    if (read_inputs(model, g, ins, n_ins, arrs, inptr)) goto out;
    if (g->n_syms && run_specialize(g, arrs, &d)) goto diag_fail;
    for (int i = 0; i < g->n_outputs; i++) {
        size_t nb = (size_t)ir_value_bytes(g->outputs[i]);
        outs[i] = malloc(nb ? nb : 1);
        if (!outs[i]) { fail("%s: out of memory for output '%s' (%zu bytes)", model, g->outputs[i]->name, nb); goto out; }
    }
    if (verbose) fprintf(stderr, "graphc: interpreting %d nodes (%s)\n", g->n_nodes, f64 ? "f64" : "f32");
    if (ir_interp_run(g, f64 ? INTERP_F64 : INTERP_F32, inptr, outs, &d)) goto diag_fail;
    if (make_dirs(outdir)) { fail("%s: cannot create folder: %s", outdir, strerror(errno)); goto out; }
    for (int i = 0; i < g->n_outputs; i++) {
        const Value *v = g->outputs[i];
        char *path = malloc(strlen(outdir) + 32);
        if (!path) { fail("out of memory"); goto out; }
        sprintf(path, "%s/output_%d.npy", outdir, i);
        int wrc = npy_write(path, v->dtype, &v->shape, outs[i], &d);
        if (wrc == 0 && verbose) fprintf(stderr, "graphc: wrote %s (%s)\n", path, v->name);
        free(path);
        if (wrc) goto diag_fail;
    }
    rc = 0;
    goto out;
diag_fail:
    fail_diag(&d);
out:
    if (arrs)
        for (int i = 0; i < n_ins; i++) npy_free(&arrs[i]);
    if (outs && g)
        for (int i = 0; i < g->n_outputs; i++) free(outs[i]);
    free(arrs);
    free(outs);
    free(inptr);
    free(ins);
    free_shapes(&lo, shapes);
    ir_graph_free(g);
    return rc;
}

/* ---- ops ---- */

static const char ops_help[] =
    "usage: graphc ops\n"
    "\n"
    "Lists every operator graphc knows, one per line: its name, its family and the\n"
    "facets its description has: 'grad' (autodiff can differentiate it), 'expr'\n"
    "(elementwise: fusable), 'inplace' (an output may reuse an input's memory),\n"
    "'view' (the output is the input's bytes).\n";

static int cmd_ops(int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) { fputs(ops_help, stdout); return 0; }
        return fail("ops: unexpected argument '%s' (see graphc ops --help)", argv[i]);
    }
    for (int k = 0; k < OP_COUNT; k++) {
        const OpDesc *od = ir_op(k);
        printf("%-28s %-12s%s%s%s%s\n", od->name, ir_op_family(k), od->gradient ? " grad" : "",
               od->scalar_expr ? " expr" : "", od->n_inplace ? " inplace" : "", od->view ? " view" : "");
    }
    return fflush(stdout) ? fail("cannot write to stdout: %s", strerror(errno)) : 0;
}

/* ---- gradcheck ---- */

static const char gradcheck_help[] =
    "usage: graphc gradcheck MODEL [IN0.npy ...] [options]\n"
    "\n"
    "Checks graphc's gradients of MODEL against central finite differences in the\n"
    "reference interpreter, in double precision. The loss is the probe loss (every\n"
    "float output times a fixed random tensor, summed) unless --loss names one; the\n"
    "parameters are every float graph input and every float constant of rank >= 1\n"
    "unless --wrt names them. Inputs come from the .npy files, one per graph input,\n"
    "as for graphc run. Prints one line per parameter; exits with status 1 when an\n"
    "element fails |analytic - numeric| <= atol + rtol * |numeric|.\n"
    "\n"
    "options:\n"
    "  --wrt=NAME,...       the parameters (inputs or float constants)\n"
    "  --loss=SPEC          as for compile (default probe)\n"
    "  --eps=E              the central-difference step (default 1e-6)\n"
    "  --atol=A --rtol=R    the tolerance (default 1e-5 and 1e-3)\n"
    "  --max-elems=N        elements checked per parameter, evenly spaced (default 64)\n"
    HELP_LOAD
    "  -h, --help           this help\n";

/* Parses a positive finite number option value; NULL or why not. */
const char *parse_pos(const char *v, double *out)
{
    char *end;
    errno = 0;
    double x = v ? strtod(v, &end) : 0;
    if (!v || end == v || *end || errno == ERANGE || !(x > 0) || x > 1e300) return "expected a positive number";
    *out = x;
    return NULL;
}

static int cmd_gradcheck(int argc, char **argv)
{
    const char *model = NULL;
    const char **ins = calloc((size_t)argc + 1, sizeof *ins);
    int n_ins = 0, rc = 1;
    LoadOptions lo = {0};
    TrainRequest tr = {0};
    GradcheckOptions go = {1e-6, 1e-5, 1e-3, 64};
    InputShape *shapes = calloc((size_t)argc + 1, sizeof *shapes);
    NpyArray *arrs = calloc((size_t)argc + 1, sizeof *arrs);
    const void **inptr = calloc((size_t)argc + 1, sizeof *inptr);
    Graph *g = NULL;
    Diag d = {0};
    if (!ins || !shapes || !arrs || !inptr) { fail("out of memory"); goto out; }
    lo.shapes = shapes;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v, *why = NULL;
        int so;
        double x;
        if (is_help(a)) { fputs(gradcheck_help, stdout); rc = 0; goto out; }
        if ((so = shape_opt(argc, argv, &i, "gradcheck", &lo, shapes)) != 0) {
            if (so < 0) goto out;
        } else if (opt_value(argc, argv, &i, "--wrt", &v)) {
            if (!v || !*v) { fail("gradcheck: --wrt needs a value"); goto out; }
            tr.wrt = v;
        } else if (opt_value(argc, argv, &i, "--loss", &v)) {
            if (!v || !*v) { fail("gradcheck: --loss needs a value"); goto out; }
            tr.loss = v;
        } else if (opt_value(argc, argv, &i, "--eps", &v)) {
            if ((why = parse_pos(v, &go.eps))) { fail("gradcheck: --eps: %s", why); goto out; }
        } else if (opt_value(argc, argv, &i, "--atol", &v)) {
            if ((why = parse_pos(v, &go.atol))) { fail("gradcheck: --atol: %s", why); goto out; }
        } else if (opt_value(argc, argv, &i, "--rtol", &v)) {
            if ((why = parse_pos(v, &go.rtol))) { fail("gradcheck: --rtol: %s", why); goto out; }
        } else if (opt_value(argc, argv, &i, "--max-elems", &v)) {
            if ((why = parse_pos(v, &x)) || x < 2 || x > 1e9) { fail("gradcheck: --max-elems: expected an integer >= 2"); goto out; }
            go.max_elems = (int)x;
        } else if (a[0] == '-' && a[1] != 0) {
            fail("gradcheck: unknown option '%s' (see graphc gradcheck --help)", a);
            goto out;
        } else if (!model) {
            model = a;
        } else {
            ins[n_ins++] = a;
        }
    }
    if (!model) { fail("gradcheck: missing MODEL (usage: graphc gradcheck MODEL [IN0.npy ...])"); goto out; }
    g = load(model, &lo, &d, 0);
    if (!g) { fail_diag(&d); goto out; }
    if (read_inputs(model, g, ins, n_ins, arrs, inptr)) goto out;
    Writer rep;
    w_init(&rep);
    int n_failed = 0;
    int grc = api_gradcheck(g, &tr, inptr, &go, &rep, &n_failed, &d);
    if (rep.len) fwrite(rep.buf, 1, rep.len, stdout);
    w_free(&rep);
    if (grc) { fail_diag(&d); goto out; }
    if (n_failed) { fail("%s: %d parameter%s failed the gradient check", model, n_failed, n_failed == 1 ? "" : "s"); goto out; }
    rc = 0;
out:
    for (int i = 0; arrs && i < n_ins; i++) npy_free(&arrs[i]);
    free(arrs);
    free(inptr);
    free(ins);
    if (shapes) free_shapes(&lo, shapes);
    ir_graph_free(g);
    return rc;
}

/* ---- dump ---- */

static const char dump_help[] =
    "usage: graphc dump MODEL [options]\n"
    "\n"
    "Prints MODEL on stdout. By default that is its text IR as loaded (no passes\n"
    "run), constants over 64 elements elided (--full prints them). --print-after/\n"
    "--print-before run the compile pipeline and print the IR\n"
    "around the named passes instead; --format=dot and --memory-plan run the whole\n"
    "pipeline of the -O level and draw its result.\n"
    "\n"
    "options:\n"
    HELP_PRINT
    "                       (these dumps run the pipeline of the -O level; a pass\n"
    "                       the level skips prints nothing)\n"
    HELP_OPT_LEVEL
    "  --format=FORMAT      text (default): the text IR; dot: a Graphviz digraph of\n"
    "                       the graph after the whole pipeline (render it with\n"
    "                       'dot -Tsvg'): a box per node, inputs and constants as\n"
    "                       small shapes, edges labelled dtype[shape], and each\n"
    "                       fused node (Fused, or an op with an epilogue) as a\n"
    "                       cluster with one box per op it fuses\n"
    "  --memory-plan=FORMAT  the memory plan after the whole pipeline: svg (one\n"
    "                       rectangle per buffer over schedule steps x arena bytes,\n"
    "                       the name as tooltip, the arena size as a line) or text\n"
    "                       (one line 'OFFSET SIZE FIRST LAST NAME' per buffer)\n"
    "  --grad, --train, --wrt, --loss, --optimizer\n"
    "                       the training graph, as graphc compile builds it (see\n"
    "                       graphc compile --help): e.g. --grad --print-after=autodiff,\n"
    "                       or --train --memory-plan=svg for the training step's plan\n"
    HELP_LOAD
    "  --full               with the text IR as loaded: print every constant's data\n"
    "                       (a file the parser reads back); by default constants\n"
    "                       over 64 elements print as <elided N bytes>, which keeps\n"
    "                       the dump readable (the parser refuses it)\n"
    "  --elide              the default, kept for scripts: elide large constants\n"
    "  -h, --help           this help\n";

typedef struct DumpArgs {
    const char *model, *print_after, *print_before, *format, *memory_plan;
    int full, opt_level;
    TrainRequest train;
} DumpArgs;

static int dump_model(const DumpArgs *da, const LoadOptions *lo);

/* Rejects option combinations that would ask for two outputs on stdout. */
static int dump_check(const DumpArgs *da)
{
    int is_dot = strcmp(da->format, "dot") == 0;
    if (!is_dot && strcmp(da->format, "text") != 0)
        return fail("dump: unknown --format '%s' (expected text or dot)", da->format);
    if (da->memory_plan && strcmp(da->memory_plan, "svg") != 0 && strcmp(da->memory_plan, "text") != 0)
        return fail("dump: unknown --memory-plan '%s' (expected svg or text)", da->memory_plan);
    int prints = da->print_after || da->print_before;
    if (da->memory_plan && (is_dot || prints))
        return fail("dump: --memory-plan cannot be combined with --format=dot, --print-after or --print-before");
    if (is_dot && prints) return fail("dump: --format=dot cannot be combined with --print-after or --print-before");
    if (da->full && (is_dot || prints || da->memory_plan))
        return fail("dump: --full applies to the text IR as loaded only");
    return 0;
}

static int cmd_dump(int argc, char **argv)
{
    DumpArgs da = {0};
    da.opt_level = 2;
    da.format = "text";
    int rc = 0;
    LoadOptions lo = {0};
    InputShape *shapes = calloc((size_t)argc + 1, sizeof *shapes);
    if (!shapes) return fail("out of memory");
    lo.shapes = shapes;
    for (int i = 0; i < argc && rc == 0; i++) {
        const char *a = argv[i], *v;
        int so;
        if (is_help(a)) { print_help(dump_help); rc = -1; }
        else if ((so = shape_opt(argc, argv, &i, "dump", &lo, shapes)) != 0) {
            if (so < 0) rc = 1;
        } else if ((so = train_opt(argc, argv, &i, "dump", 1, &da.train)) != 0) {
            if (so < 0) rc = 1;
        } else if ((so = opt_level_opt(a, "dump", &da.opt_level)) != 0) {
            if (so < 0) rc = 1;
        } else if (opt_value(argc, argv, &i, "--print-after", &v)) {
            if (!v || !*v) rc = fail("dump: --print-after needs a pass name or 'all'");
            else da.print_after = v;
        } else if (opt_value(argc, argv, &i, "--print-before", &v)) {
            if (!v || !*v) rc = fail("dump: --print-before needs a pass name or 'all'");
            else da.print_before = v;
        } else if (opt_value(argc, argv, &i, "--format", &v)) {
            if (!v || !*v) rc = fail("dump: --format needs a value (text or dot)");
            else da.format = v;
        } else if (opt_value(argc, argv, &i, "--memory-plan", &v)) {
            if (!v || !*v) rc = fail("dump: --memory-plan needs a value (svg or text)");
            else da.memory_plan = v;
        } else if (strcmp(a, "--full") == 0) {
            da.full = 1;
        } else if (strcmp(a, "--elide") == 0) {
            da.full = 0;
        } else if (a[0] == '-' && a[1] != 0) {
            rc = fail("dump: unknown option '%s' (see graphc dump --help)", a);
        } else if (!da.model) {
            da.model = a;
        } else {
            rc = fail("dump: unexpected argument '%s' (one MODEL only; see graphc dump --help)", a);
        }
    }
    if (rc == 0 && !da.model) rc = fail("dump: missing MODEL (usage: graphc dump MODEL [options])");
    if (rc == 0) rc = dump_check(&da);
    if (rc == 0) rc = dump_model(&da, &lo);
    free_shapes(&lo, shapes);
    return rc < 0 ? 0 : rc;
}

static int dump_model(const DumpArgs *da, const LoadOptions *lo)
{
    Diag d = {0};
    Graph *g = load(da->model, lo, &d, 0);
    if (!g) return fail_diag(&d);
    if (api_setup_training(g, &da->train, &d)) {
        ir_graph_free(g);
        return fail_diag(&d);
    }
    Writer w;
    w_init(&w);
    int rc = 0;
    CompileJob job = {0}; /* the default target's pipeline, as graphc compile runs it */
    job.opt_level = da->opt_level;
    job.print_after = da->print_after;
    job.print_before = da->print_before;
    job.dump = &w;
    int is_dot = strcmp(da->format, "dot") == 0;
    if (da->print_after || da->print_before) {
        rc = api_run_pipeline(g, &job, &d);
    } else if (is_dot || da->memory_plan) {
        job.dump = NULL;
        rc = api_run_pipeline(g, &job, &d);
        if (rc == 0 && is_dot) ir_print_dot(g, &w);
        else if (rc == 0 && strcmp(da->memory_plan, "svg") == 0) pass_plan_svg(g, &w);
        else if (rc == 0) pass_plan_text(g, &w);
    } else {
        ir_print(g, &w, !da->full);
    }
    if (w.len) fwrite(w.buf, 1, w.len, stdout);
    w_free(&w);
    ir_graph_free(g);
    if (rc) return fail_diag(&d);
    if (fflush(stdout) != 0) return fail("cannot write to stdout: %s", strerror(errno));
    return 0;
}

/* ---- main ---- */

typedef struct Command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *summary;
} Command;

static const Command commands[] = {
    {"compile", cmd_compile, "compile a model to C sources"},
    {"run", cmd_run, "run a model in the reference interpreter on .npy inputs"},
    {"verify", cmd_verify, "compile, build and run a model; compare with the interpreter (f64)"},
    {"ops", cmd_ops, "list the operators and their facets (which can be differentiated)"},
    {"gradcheck", cmd_gradcheck, "check a model's gradients against finite differences (interpreter, f64)"},
    {"check-op", cmd_check_op, "check the user operators of FILE.c: they run, and their gradients against finite differences"},
    {"dump", cmd_dump, "print a model's text IR (around passes), Graphviz graph or memory plan"},
    {NULL, NULL, NULL},
};

static void main_help(FILE *f)
{
    fputs("usage: graphc COMMAND [options]   (graphc COMMAND --help for details)\n\ncommands:\n", f);
    for (const Command *c = commands; c->name; c++) fprintf(f, "  %-10s %s\n", c->name, c->summary);
    fprintf(f, "  %-10s %s\n", "help", "show a command's help (graphc help COMMAND)");
    fprintf(f, "  %-10s %s\n", "version", "print graphc's version (also graphc --version)");
    fputs("\nModels are graphc text IR files (.gir) or ONNX files (.onnx). Errors print\n"
          "one line 'graphc: error: ...' on stderr and exit with status 1.\n",
          f);
}

/* "compile, run, verify, ..., dump": the command names, for errors. */
static const char *command_names(char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (const Command *c = commands; c->name && n < cap; c++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", c == commands ? "" : ", ", c->name);
    return buf;
}

static const Command *find_command(const char *name)
{
    for (const Command *c = commands; c->name; c++)
        if (strcmp(c->name, name) == 0) return c;
    return NULL;
}

int main(int argc, char **argv)
{
    char names[256];
    if (argc < 2) return fail("missing command (%s; see graphc --help)", command_names(names, sizeof names));
    const char *cmd = argv[1];
    if (is_help(cmd)) { main_help(stdout); return 0; }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        if (argc > 2) return fail("%s takes no arguments", cmd);
        printf("graphc %s\nlibclang: %s\n", GRAPHC_VERSION,
               custom_have_libclang() ? "yes (reads any C in --ops files)" : "no (--ops files in the plain form only)");
        return fflush(stdout) ? fail("cannot write to stdout: %s", strerror(errno)) : 0;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc < 3) { main_help(stdout); return 0; }
        const Command *c = find_command(argv[2]);
        if (!c) return fail("unknown command '%s' (commands: %s)", argv[2], command_names(names, sizeof names));
        char help[] = "--help";
        char *hargv[] = {help, NULL};
        return c->fn(1, hargv);
    }
    const Command *c = find_command(cmd);
    if (!c) {
        if (cmd[0] == '-') return fail("unknown option '%s' (see graphc --help)", cmd);
        return fail("unknown command '%s' (commands: %s)", cmd, command_names(names, sizeof names));
    }
    return c->fn(argc - 2, argv + 2);
}
