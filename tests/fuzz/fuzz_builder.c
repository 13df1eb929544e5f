/* fuzz_builder.c — bytes → a sequence of calls on the public C builder API
 * (include/graphc/graphc.h), so that every entry point sees hostile
 * arguments: names that collide or hold odd bytes, unknown dtypes, ranks
 * outside 0..8, negative and huge dims, ops from the registry (and some that
 * are not) with too few or too many inputs, NULL optional inputs, values of
 * another graph, attributes of the wrong kind or with garbage text, wrong
 * output counts. Between the calls come gc_infer, gc_value_shape,
 * gc_interpret, gc_write_text + gc_load, an in-memory compile and (rarely)
 * gc_compile into a temporary folder.
 *
 * Encoding: the input is read byte by byte; each step takes one byte for the
 * call and as many as its arguments need; a missing byte reads as 0, so
 * every input is a valid program. Two graphs exist so that values can be
 * passed to the wrong one. What the API documents as a precondition rather
 * than as an error (gc_output of a value of another graph, a NULL graph to
 * gc_output) is not called.
 *
 * Size caps (fuzz.h): constants are built only up to FUZZ_MAX_ELEMS elements
 * (bigger ones are passed with NULL data, which the API must refuse), and
 * gc_interpret runs only when every value holds at most 64 Ki elements.
 */
#define _XOPEN_SOURCE 700 /* nftw */
#include "fuzz.h"

#include "api/compile.h"
#include "graphc/graphc.h"
#include "ir/op.h"

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct Bytes {
    const uint8_t *p;
    size_t n;
} Bytes;

static unsigned take(Bytes *b)
{
    if (!b->n) return 0;
    b->n--;
    return *b->p++;
}

#define MAX_VALS 64

/* The state of one fuzzed program: two graphs and the values made so far. */
typedef struct Prog {
    Bytes in;
    GcGraph *g[2];
    GcValue *vals[2][MAX_VALS];
    int n_vals[2];
    char names[16][24]; /* storage for generated names and strings */
    int next_name;
    GcDiag diag;
} Prog;

static const char *const dtypes[] = {"f32", "f64", "f16", "bf16", "i8", "u8", "i16", "i32", "i64", "bool", "u16",
                                     "f31", "", "F32", "float"};
#define N_DTYPES (int)(sizeof dtypes / sizeof dtypes[0])

static const char *take_dtype(Prog *p)
{
    unsigned c = take(&p->in);
    if (c == 255) return NULL;
    return dtypes[c % N_DTYPES];
}

/* A name: mostly from a small pool (so names collide), sometimes raw bytes,
 * empty or NULL. */
static const char *take_name(Prog *p)
{
    unsigned c = take(&p->in);
    char *buf = p->names[p->next_name++ % 16];
    if (c < 200) {
        snprintf(buf, 24, "%c%u", "xvwn"[c % 4], (c / 4) % 12);
        return buf;
    }
    if (c == 255) return NULL;
    if (c == 254) return "";
    int len = (int)(c % 20);
    for (int i = 0; i < len; i++) buf[i] = (char)(take(&p->in) | 1); /* no NUL inside */
    buf[len] = 0;
    return buf;
}

static int64_t take_dim(Prog *p)
{
    static const int64_t odd[] = {-1, 0, 1 << 20, (int64_t)1 << 31, INT64_MAX, (int64_t)1 << 40, 3000, -7, 64, 255};
    unsigned c = take(&p->in);
    if (c < 230) return c % 6;
    return odd[c % 10];
}

static int take_rank(Prog *p)
{
    unsigned c = take(&p->in);
    if (c < 240) return (int)(c % 5);
    return (int)(c % 12) - 2; /* -2..9 */
}

/* A value of graph gi (or of the other graph, or NULL). */
static GcValue *take_value(Prog *p, int gi)
{
    unsigned c = take(&p->in);
    if (c >= 250) return NULL;
    if (c >= 240) gi = !gi;
    if (!p->n_vals[gi]) return NULL;
    return p->vals[gi][c % (unsigned)p->n_vals[gi]];
}

static void keep(Prog *p, int gi, GcValue *v)
{
    if (v && p->n_vals[gi] < MAX_VALS) p->vals[gi][p->n_vals[gi]++] = v;
}

/* ---- attributes ------------------------------------------------------------ */

static void put_int(Prog *p, char *s, size_t cap)
{
    static const char *const odd[] = {"-1", "0", "1", "2", "3", "-2", "4", "9223372036854775807", "-9223372036854775808",
                                      "99999999999999999999", "1.5", "x", "", "2147483648", "64", "-100"};
    strncat(s, odd[take(&p->in) % 16], cap - strlen(s) - 1);
}

static void put_float(Prog *p, char *s, size_t cap)
{
    static const char *const odd[] = {"0.5", "1", "-1", "0", "nan", "inf", "-inf", "1e39", "1e-45", "2.5", "abc", "1e",
                                      "0.0001", "-0", "3", "[1]"};
    strncat(s, odd[take(&p->in) % 16], cap - strlen(s) - 1);
}

static void put_list(Prog *p, char *s, size_t cap, int floats)
{
    int n = (int)(take(&p->in) % 7);
    strncat(s, "[", cap - strlen(s) - 1);
    for (int i = 0; i < n; i++) {
        if (i) strncat(s, ",", cap - strlen(s) - 1);
        if (floats) put_float(p, s, cap);
        else put_int(p, s, cap);
    }
    strncat(s, take(&p->in) < 250 ? "]" : "", cap - strlen(s) - 1);
}

/* A Fused expression: ops applied to x0..x3 and numbers, a few levels deep. */
static void put_expr(Prog *p, char *s, size_t cap, int depth)
{
    static const char *const ops[] = {"Add", "Mul", "Sub", "Div", "Relu", "Neg", "Sigmoid", "Tanh", "Max", "Pow",
                                      "Where", "Cast", "Exp", "Abs", "Bogus", "LeakyRelu"};
    unsigned c = take(&p->in);
    if (depth > 4 || c < 96) {
        char buf[16];
        if (c % 5 == 4) snprintf(buf, sizeof buf, "%d.5", (int)(c % 7) - 3);
        else snprintf(buf, sizeof buf, "x%u", c % 5);
        strncat(s, buf, cap - strlen(s) - 1);
        return;
    }
    strncat(s, ops[c % 16], cap - strlen(s) - 1);
    strncat(s, "(", cap - strlen(s) - 1);
    int n = (int)(take(&p->in) % 4);
    for (int i = 0; i < n; i++) {
        if (i) strncat(s, ", ", cap - strlen(s) - 1);
        put_expr(p, s, cap, depth + 1);
    }
    if (take(&p->in) == 7) strncat(s, "{alpha=0.1}", cap - strlen(s) - 1);
    strncat(s, ")", cap - strlen(s) - 1);
}

static void put_string(Prog *p, char *s, size_t cap)
{
    static const char *const odd[] = {"NOTSET", "SAME_UPPER", "SAME_LOWER", "VALID", "constant", "reflect", "edge",
                                      "linear", "nearest", "cubic", "DCR", "CRD", "tanh", "relu", "\"\"", "\"a b\"",
                                      "half_pixel", "asymmetric", "round_prefer_floor", "floor", "forward", "x"};
    unsigned c = take(&p->in);
    if (c < 200) {
        strncat(s, odd[c % 22], cap - strlen(s) - 1);
    } else {
        strncat(s, "\"", cap - strlen(s) - 1);
        put_expr(p, s, cap, 0);
        strncat(s, "\"", cap - strlen(s) - 1);
    }
}

static void put_tensor(Prog *p, char *s, size_t cap)
{
    static const char *const odd[] = {"f32[2] [1, 2]", "i64[] [3]", "f32[] [0.5]", "i64[3] [1, -1, 0]", "i32[1] [7]",
                                      "bool[2] [true, false]", "f32[2] [1]", "f16[1] hex\"003c\"", "u8[0] []",
                                      "i64[2] random(seed=1, lo=0, hi=5)"};
    strncat(s, odd[take(&p->in) % 10], cap - strlen(s) - 1);
}

/* Attribute text for op od: a few of its schema's keys (sometimes an
 * unknown key or the wrong kind of value), or garbage. */
static void make_attrs(Prog *p, const OpDesc *od, char *s, size_t cap)
{
    s[0] = 0;
    int n = (int)(take(&p->in) % 4);
    for (int i = 0; i < n; i++) {
        unsigned c = take(&p->in);
        const AttrSpec *a = od && od->n_attrs ? &od->attrs[c % (unsigned)od->n_attrs] : NULL;
        if (i) strncat(s, " ", cap - strlen(s) - 1);
        strncat(s, a && c < 240 ? a->name : (c & 1 ? "bogus" : "=="), cap - strlen(s) - 1);
        strncat(s, "=", cap - strlen(s) - 1);
        unsigned kind = a && take(&p->in) < 220 ? (unsigned)a->kind : take(&p->in) % 6;
        if (a && !strcmp(a->name, "expr")) put_expr(p, s, cap, 0);
        else if (kind == ATTR_INT) put_int(p, s, cap);
        else if (kind == ATTR_FLOAT) put_float(p, s, cap);
        else if (kind == ATTR_STRING) put_string(p, s, cap);
        else if (kind == ATTR_INTS) put_list(p, s, cap, 0);
        else if (kind == ATTR_FLOATS) put_list(p, s, cap, 1);
        else put_tensor(p, s, cap);
    }
}

/* ---- calls ----------------------------------------------------------------- */

static void call_input(Prog *p, int gi)
{
    const char *name = take_name(p), *dt = take_dtype(p);
    int rank = take_rank(p);
    int64_t dims[12];
    for (int i = 0; i < rank && i < 12; i++) dims[i] = take_dim(p);
    keep(p, gi, gc_input(p->g[gi], name, dt, rank, rank > 0 && take(&p->in) == 9 ? NULL : dims, &p->diag));
}

static void call_const(Prog *p, int gi)
{
    const char *name = take_name(p), *dt = take_dtype(p);
    int rank = take_rank(p);
    int64_t dims[12], numel = 1;
    for (int i = 0; i < rank && i < 12; i++) {
        dims[i] = take_dim(p);
        if (numel < 0) continue; /* already too large: no more products (they could overflow) */
        if (dims[i] < 0 || dims[i] > FUZZ_MAX_ELEMS || (numel *= dims[i]) > FUZZ_MAX_ELEMS) numel = -1;
    }
    void *data = NULL;
    if (numel >= 0 && take(&p->in) != 9) {
        size_t bytes = (size_t)numel * 8 + 1; /* room for the widest dtype */
        data = malloc(bytes);
        GC_ASSERT(data);
        for (size_t i = 0; i < bytes; i++) ((uint8_t *)data)[i] = p->in.n > i ? p->in.p[i] : (uint8_t)i;
    }
    keep(p, gi, gc_const(p->g[gi], name, dt, rank, dims, data, &p->diag));
    free(data);
}

/* An op from the registry, now and then a name that is none. */
static const char *take_op(Prog *p, const OpDesc **od)
{
    unsigned c = take(&p->in) | take(&p->in) << 8;
    *od = NULL;
    if (c % 64 == 63) return c & 64 ? "NoSuchOp" : (c & 128 ? "" : NULL);
    *od = ir_op((OpKind)(c % OP_COUNT));
    return (*od)->name;
}

static void call_op(Prog *p, int gi, int multi)
{
    const OpDesc *od;
    const char *op = take_op(p, &od);
    const char *name = take(&p->in) < 128 ? take_name(p) : NULL;
    int n_in = od ? od->min_in : 1;
    unsigned c = take(&p->in);
    if (c >= 160) n_in += (int)(c % 4) - 1;
    if (n_in > 12) n_in = 12;
    GcValue *in[12];
    for (int i = 0; i < n_in && i < 12; i++) in[i] = take_value(p, gi);
    char attrs[512];
    make_attrs(p, od, attrs, sizeof attrs);
    const char *a = take(&p->in) == 200 ? NULL : attrs;
    if (!multi) {
        keep(p, gi, gc_op(p->g[gi], op, name, in, n_in, a, &p->diag));
        return;
    }
    int n_out = od ? od->min_out : 1;
    c = take(&p->in);
    if (c >= 128) n_out += (int)(c % 5) - 1;
    GcValue *out[8];
    if (n_out > 8) n_out = 8;
    if (gc_op_multi(p->g[gi], op, name, in, n_in, a, n_out, take(&p->in) == 3 ? NULL : out, &p->diag) == 0)
        for (int i = 0; i < n_out; i++) keep(p, gi, out[i]);
}

/* gc_output of a value of the graph (a compile may have swept some of the
 * values kept earlier: those are skipped, gc_output asserts on them). */
static void call_output(Prog *p, int gi)
{
    unsigned c = take(&p->in);
    if (!p->n_vals[gi]) return;
    GcGraph *g = p->g[gi];
    GcValue *v = p->vals[gi][c % (unsigned)p->n_vals[gi]];
    if (v->id >= 0 && v->id < g->n_values && g->values[v->id] == v) gc_output(g, v);
}

static void call_shape(Prog *p, int gi)
{
    gc_infer(p->g[gi], &p->diag);
    int64_t dims[16];
    int max_rank = (int)(take(&p->in) % 10);
    gc_value_shape(take_value(p, gi), dims, max_rank);
}

/* gc_interpret with input bytes from the program, when the graph infers
 * and is small. */
static void call_interpret(Prog *p, int gi)
{
    GcGraph *g = p->g[gi];
    if (gc_infer(g, &p->diag)) return;
    for (int i = 0; i < g->n_values; i++) {
        int64_t n;
        if (!g->values[i]->shape_known || ir_shape_numel(&g->values[i]->shape, &n) || n > (1 << 16)) return;
    }
    void *ins[64] = {0}, *outs[64] = {0};
    if (g->n_inputs > 64 || g->n_outputs > 64) return;
    for (int k = 0; k < 2; k++) {
        int n = k ? g->n_outputs : g->n_inputs;
        for (int i = 0; i < n; i++) {
            const Value *v = k ? g->outputs[i] : g->inputs[i];
            size_t bytes = (size_t)ir_numel(&v->shape) * ir_dtype_size(v->dtype) + 1;
            uint8_t *buf = malloc(bytes);
            GC_ASSERT(buf);
            for (size_t j = 0; j < bytes; j++) buf[j] = (uint8_t)(take(&p->in) ^ j);
            (k ? outs : ins)[i] = buf;
        }
    }
    gc_interpret(g, (const void *const *)ins, outs, &p->diag);
    for (int i = 0; i < 64; i++) {
        free(ins[i]);
        free(outs[i]);
    }
}

/* The compile function in memory, with options from the program. */
static void call_compile_mem(Prog *p, int gi)
{
    unsigned c = take(&p->in);
    Diag d = {0};
    CompileJob job = {0};
    job.opt_level = c & 1 ? 0 : 2;
    job.out.name = c & 2 ? "m" : p->g[gi]->name;
    job.out.emit_main = !!(c & 4);
    job.out.weights = (BackendWeights)((c >> 3) % BACKEND_WEIGHTS_COUNT);
    Writer out;
    w_init(&out);
    api_compile_to_writer(p->g[gi], &out, &job, &d);
    w_free(&out);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    remove(path);
    return 0;
}

/* gc_write_text, gc_load of that file, and gc_compile into a folder, all
 * under one per-process temporary name (replays may run side by side). */
static void call_files(Prog *p, int gi)
{
    char path[64], dir[64];
    snprintf(path, sizeof path, "/tmp/graphc_fuzz_builder_%ld.gir", (long)getpid());
    snprintf(dir, sizeof dir, "/tmp/graphc_fuzz_builder_%ld.out", (long)getpid());
    unsigned c = take(&p->in);
    if (gc_write_text(p->g[gi], path, &p->diag) == 0) {
        GcGraph *back = gc_load(path, &p->diag);
        if (back) gc_graph_free(back);
    }
    remove(path);
    if (c % 4 == 0) {
        GcCompileOptions o = {0};
        o.opt = (GcOptLevel)(c / 4 % 4); /* 3 is out of range */
        o.weights = (GcWeights)(c / 16 % 4);
        o.name = c & 64 ? "bad name" : NULL;
        o.target = c & 128 ? "cuda" : NULL;
        gc_compile(p->g[gi], dir, &o, &p->diag);
        nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Prog *p = calloc(1, sizeof *p);
    GC_ASSERT(p);
    p->in = (Bytes){data, size};
    unsigned c = take(&p->in);
    p->g[0] = gc_graph_new(c & 1 ? NULL : "fuzz");
    p->g[1] = gc_graph_new(c & 2 ? "g2" : "bad name");
    int files_done = 0;
    for (int step = 0; p->in.n && step < 256; step++) {
        c = take(&p->in);
        int gi = c >= 224;
        switch (c % 16) {
        case 0: case 1: case 2: call_input(p, gi); break;
        case 3: case 4: call_const(p, gi); break;
        case 5: case 6: case 7: case 8: call_op(p, gi, 0); break;
        case 9: call_op(p, gi, 1); break;
        case 10: case 11: call_output(p, gi); break;
        case 12: call_shape(p, gi); break;
        case 13: call_interpret(p, gi); break;
        case 14: call_compile_mem(p, gi); break;
        case 15:
            if (!files_done++) call_files(p, gi);
            break;
        }
    }
    gc_graph_free(p->g[0]);
    gc_graph_free(p->g[1]);
    free(p);
    return 0;
}
