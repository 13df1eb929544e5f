/* custom_op.c — user operators from annotated C functions (ir/custom_op.h).
 *
 * The rules. The readers (ir/custom_read.h) report each annotated function
 * with its parameter types; this file checks them against the form:
 *
 *   elementwise op   void f(int64_t n, const T *in..., T *out..., attrs...)
 *   its gradient     void g(int64_t n, const T *in..., const T *out...,
 *                           const T *dout..., T *din..., attrs...)
 *   general op       void f(const graphc_tensor *in..., graphc_tensor *out...,
 *                           [void *workspace,] attrs...)
 *   its shape rule   const char *s(const graphc_tensor *in..., graphc_tensor *out..., attrs...)
 *   its workspace    int64_t w(const graphc_tensor *in..., const graphc_tensor *out..., attrs...)
 *   its gradient     void g(const graphc_tensor *in..., const graphc_tensor *out...,
 *                           const graphc_tensor *dout..., graphc_tensor *din..., attrs...)
 *
 * T is float or double; attributes are float, double, int64_t or
 * const char * scalars. The op's function defines the attributes (all
 * required); a gradient takes every one of them, a shape rule or workspace
 * request any of them, matched by name. Every mismatch is a "FILE:LINE: ..."
 * error.
 *
 * The descriptions. An elementwise op's inputs and outputs share one shape
 * and the dtype T; a general op's output shapes and dtypes come from its
 * shape rule, its gradient's outputs take the forward inputs' shapes. The
 * gradient facet builds one NAMEGrad node (inputs, outputs, output
 * gradients → input gradients), which reads every forward input and output.
 * No scalar expression (fusion leaves the node alone).
 *
 * Running the user's code. The first shape rule, workspace request or
 * evaluation of an op of a file compiles the file with
 * `$CC -shared -fPIC -O2` (cc by default) in a temporary folder, beside one
 * wrapper per function with a uniform signature, loads it with dlopen and
 * removes the folder. Reference evaluation passes values as the tensors'
 * dtypes, converted from and to the interpreter's doubles.
 */
#include "custom_op.h"

#include "custom_read.h"
#include "grad.h"
#include "writer.h"

#include "../include/graphc/custom_op.h"

#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CUSTOM_MAX_FILES 32
#define CUSTOM_MAX_OPS 256

/* The uniform signatures of the wrappers (reference evaluation, shape
 * inference, workspace). */
typedef void (*CustomWrap)(int64_t n, void *const *ptr, graphc_tensor *t, void *ws, const double *fa,
                           const int64_t *ia, const char *const *sa);
typedef const char *(*CustomShapeWrap)(graphc_tensor *t, const double *fa, const int64_t *ia, const char *const *sa);
typedef int64_t (*CustomWsWrap)(graphc_tensor *t, const double *fa, const int64_t *ia, const char *const *sa);

typedef enum { WR_RUN, WR_SHAPE, WR_WS } WrapKind;

typedef struct CustomFile {
    char *path, *text;
    size_t len;
    const char *header;
    size_t header_len;
    int n_funcs;       /* wrappers (slots) */
    IrCustomCall **calls;
    WrapKind *kinds;
    void *dl;          /* after the first compile */
    void **wraps;
    int compile_failed;
} CustomFile;

/* One user op kind (forward or gradient). */
typedef struct CustomOp {
    OpDesc desc;
    IrCustomCall call;
    IrCustomCall shape, ws; /* general forward ops: the shape rule; the workspace request (func NULL: none) */
    char *domain;
    OpKind grad_kind; /* forward ops with a gradient function; -1 otherwise */
    OpKind fwd_kind;  /* NAMEGrad ops: the forward op; -1 otherwise */
    int owns_attrs;   /* forward ops; a NAMEGrad op shares its forward op's schema */
    int line;         /* of its GRAPHC_OP annotation */
    InplacePair *inplace;
} CustomOp;

static CustomFile files[CUSTOM_MAX_FILES];
static int n_files;
static CustomOp *ops[CUSTOM_MAX_OPS];
static int n_ops;

static const struct {
    DType t;
    int code;
    const char *macro;
} dtype_map[] = {
    {DT_F32, GRAPHC_FLOAT, "GRAPHC_FLOAT"}, {DT_F64, GRAPHC_DOUBLE, "GRAPHC_DOUBLE"},
    {DT_I64, GRAPHC_INT64, "GRAPHC_INT64"}, {DT_I32, GRAPHC_INT32, "GRAPHC_INT32"},
    {DT_BOOL, GRAPHC_BOOL, "GRAPHC_BOOL"},
};

const char *ir_custom_dtype_macro(DType t)
{
    for (size_t k = 0; k < sizeof dtype_map / sizeof dtype_map[0]; k++)
        if (dtype_map[k].t == t) return dtype_map[k].macro;
    return NULL;
}

static int dtype_code(DType t)
{
    for (size_t k = 0; k < sizeof dtype_map / sizeof dtype_map[0]; k++)
        if (dtype_map[k].t == t) return dtype_map[k].code;
    return 0;
}

static DType dtype_of_code(int code)
{
    for (size_t k = 0; k < sizeof dtype_map / sizeof dtype_map[0]; k++)
        if (dtype_map[k].code == code) return dtype_map[k].t;
    return DT_UNDEF;
}

static char *xstrdup(const char *s)
{
    char *r = strdup(s);
    GC_ASSERT(r);
    return r;
}

__attribute__((format(printf, 4, 5)))
static int ferr(Diag *d, const char *path, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return diag_error(d, "%s:%d: %s", path, line, msg);
}

static const char *ctype_name(CustomCType t)
{
    return t == CT_F32 ? "float" : t == CT_F64 ? "double" : t == CT_I64 ? "int64_t" : t == CT_STR ? "const char *" :
           t == CT_TENSOR ? "graphc_tensor" : "void";
}

static void ptr_type(const CustomParam *p, char *buf, size_t cap)
{
    if (p->spelling[0]) snprintf(buf, cap, "%s", p->spelling);
    else snprintf(buf, cap, "%s%s%s", p->is_const ? "const " : "", ctype_name(p->type), p->ptr ? " *" : "");
}

/* ---- checking the signatures and building the descriptions -------------- */

static int is_scalar(const CustomParam *p)
{
    return !p->ptr ? (p->type == CT_I64 || p->type == CT_F32 || p->type == CT_F64) : p->type == CT_STR && p->is_const;
}

static int is_tensor(const CustomParam *p) { return p->ptr && p->type == CT_TENSOR; }

/* Counts the leading run of parameters from `from` that are pointers of
 * element type `t` (CT_F32/CT_F64 for elementwise ops, or either when t is
 * CT_OTHER; CT_TENSOR for general ops) with the given const-ness. */
static int count_ptrs(const CustomFunc *f, int from, int is_const, CustomCType t)
{
    int k = from;
    while (k < f->n_p && f->p[k].ptr && f->p[k].is_const == is_const &&
           (t == CT_OTHER ? f->p[k].type == CT_F32 || f->p[k].type == CT_F64 : f->p[k].type == t))
        k++;
    return k - from;
}

static const char **names_of(const CustomFunc *f, int from, int count)
{
    const char **v = calloc((size_t)count + 1, sizeof *v);
    GC_ASSERT(v);
    for (int i = 0; i < count; i++) v[i] = xstrdup(f->p[from + i].name);
    return v;
}

/* Sets call c's attribute parameters from f's parameters from `from` on,
 * against the schema `attrs` (n_attrs). define: the op's function, which
 * defines the schema; need_all: every attribute must be passed (a
 * gradient). */
static int attr_params(const char *path, Diag *d, const CustomFunc *f, int from, IrCustomCall *c, AttrSpec *attrs,
                       int n_attrs, int define, int need_all, const char *opname)
{
    int na = f->n_p - from;
    int *idx = calloc((size_t)na + 1, sizeof *idx);
    char *ct = calloc((size_t)na + 1, 1);
    GC_ASSERT(idx && ct);
    c->attr_idx = idx;
    c->attr_ctype = ct;
    c->n_attr = na;
    const char *what = f->role == CF_GRAD ? "gradient" : f->role == CF_SHAPE ? "shape rule" :
                       f->role == CF_WORKSPACE ? "workspace request" : "op";
    unsigned char seen[CUSTOM_MAX_PARAMS] = {0};
    for (int k = 0; k < na; k++) {
        const CustomParam *p = &f->p[from + k];
        char got[96];
        ptr_type(p, got, sizeof got);
        if (p->ptr && p->type != CT_STR)
            return ferr(d, path, p->line, "%s '%s': parameter '%s' ('%s') is a pointer after the attributes (tensors "
                                          "come first)", what, f->name, p->name, got);
        if (!is_scalar(p))
            return ferr(d, path, p->line, "%s '%s': attribute '%s' is '%s' (attributes are float, double, int64_t or "
                                          "const char *)", what, f->name, p->name, got);
        char cc = p->type == CT_F32 ? 'f' : p->type == CT_F64 ? 'd' : p->type == CT_I64 ? 'i' : 's';
        AttrKind kind = cc == 'i' ? ATTR_INT : cc == 's' ? ATTR_STRING : ATTR_FLOAT;
        if (define) {
            for (int q = 0; q < k; q++)
                if (!strcmp(attrs[q].name, p->name))
                    return ferr(d, path, p->line, "'%s': attribute '%s' is declared twice", f->name, p->name);
            attrs[k] = (AttrSpec){xstrdup(p->name), kind, NULL, 1};
            idx[k] = k;
        } else {
            int a = -1;
            for (int q = 0; q < n_attrs; q++)
                if (!strcmp(attrs[q].name, p->name)) a = q;
            if (a < 0)
                return ferr(d, path, p->line, "%s '%s': parameter '%s' is not an attribute of op '%s'", what, f->name,
                            p->name, opname);
            if (attrs[a].kind != kind)
                return ferr(d, path, p->line, "%s '%s': attribute '%s' is %s here but has another type in op '%s'", what,
                            f->name, p->name, ctype_name(p->type), opname);
            if (seen[a]) return ferr(d, path, p->line, "%s '%s': attribute '%s' is given twice", what, f->name, p->name);
            seen[a] = 1;
            idx[k] = a;
        }
        ct[k] = cc;
    }
    if (need_all)
        for (int a = 0; a < n_attrs; a++)
            if (!seen[a])
                return ferr(d, path, f->fline, "gradient '%s' lacks parameter '%s' (op '%s' passes the same attributes "
                                               "to its gradient)", f->name, attrs[a].name, opname);
    return 0;
}

static int custom_infer(Node *n, Diag *d);
static int custom_eval(const Node *n, const double *const *in, double *const *out, Diag *d);

static CustomOp *new_op(const char *domain, const char *name, int file, const CustomFunc *f)
{
    CustomOp *o = calloc(1, sizeof *o);
    GC_ASSERT(o);
    o->domain = xstrdup(domain);
    o->desc.name = xstrdup(name);
    o->call.func = xstrdup(f->name);
    o->call.file = file;
    o->grad_kind = -1;
    o->fwd_kind = -1;
    o->line = f->line;
    o->desc.infer = custom_infer;
    o->desc.eval = custom_eval;
    o->desc.custom = &o->call;
    return o;
}

static int want_void(const char *path, Diag *d, const CustomFunc *f, const char *form, CustomCType ret, int ret_ptr)
{
    if (f->ret.type == ret && f->ret.ptr == ret_ptr && (ret != CT_STR || f->ret.is_const)) return 0;
    char got[96];
    ptr_type(&f->ret, got, sizeof got);
    return ferr(d, path, f->fline, "'%s' returns '%s', but %s returns '%s'", f->name, got, form,
                ret == CT_VOID ? "void" : ret == CT_STR ? "const char *" : "int64_t");
}

/* Builds the forward op of f (a GRAPHC_OP). */
static int build_op(const char *path, Diag *d, const CustomFunc *f, int file, CustomOp **out)
{
    *out = NULL;
    int general = f->kind == GRAPHC_GENERAL, nin, nout, first;
    if (want_void(path, d, f, general ? "a general op" : "an elementwise op", CT_VOID, 0)) return -1;
    if (general) {
        first = 0;
        nin = count_ptrs(f, 0, 1, CT_TENSOR);
        nout = count_ptrs(f, nin, 0, CT_TENSOR);
        if (nin == 0)
            return ferr(d, path, f->fline, "general op '%s' takes no input: its inputs are 'const graphc_tensor *' "
                                           "parameters, first", f->name);
        if (nout == 0)
            return ferr(d, path, f->fline, "general op '%s' writes no output: its outputs are 'graphc_tensor *' "
                                           "parameters after the inputs", f->name);
    } else {
        if (f->n_p < 1 || f->p[0].ptr || f->p[0].type != CT_I64)
            return ferr(d, path, f->n_p ? f->p[0].line : f->fline,
                        "'%s': the first parameter must be the element count (int64_t n)", f->name);
        first = 1;
        nin = count_ptrs(f, 1, 1, CT_OTHER);
        nout = count_ptrs(f, 1 + nin, 0, CT_OTHER);
        if (nin == 0)
            return ferr(d, path, f->fline, "'%s' takes no input: its inputs are 'const float *' parameters after the count",
                        f->name);
        if (nout == 0)
            return ferr(d, path, f->fline, "'%s' writes no output: its outputs are 'float *' parameters after the inputs",
                        f->name);
        CustomCType t = f->p[1].type;
        for (int i = 1; i < 1 + nin + nout; i++)
            if (f->p[i].type != t) {
                char b[96];
                ptr_type(&f->p[i], b, sizeof b);
                return ferr(d, path, f->p[i].line, "'%s': parameter '%s' is '%s' but the op's dtype is %s (from its "
                                                   "first input)", f->name, f->p[i].name, b, ctype_name(t));
            }
    }
    CustomOp *o = new_op(f->domain, f->op, file, f);
    *out = o;
    o->call.general = general;
    o->call.dtype = general ? DT_UNDEF : f->p[1].type == CT_F64 ? DT_F64 : DT_F32;
    o->call.n_in = nin;
    o->call.n_out = nout;
    o->desc.min_in = o->desc.max_in = nin;
    o->desc.min_out = o->desc.max_out = nout;
    o->desc.in_names = names_of(f, first, nin);
    o->desc.out_names = names_of(f, first + nin, nout);
    int from = first + nin + nout;
    if (general && from < f->n_p && f->p[from].ptr && f->p[from].type == CT_VOID && !f->p[from].is_const) {
        o->call.workspace = 1;
        from++;
    }
    int na = f->n_p - from;
    AttrSpec *attrs = calloc((size_t)na + 1, sizeof *attrs);
    GC_ASSERT(attrs);
    o->desc.attrs = attrs;
    o->desc.n_attrs = na;
    o->owns_attrs = 1;
    return attr_params(path, d, f, from, &o->call, attrs, na, 1, 0, f->op);
}

/* The tensor parameters of a shape rule or workspace request of general op
 * fo: inputs const, outputs const (workspace) or not (shape rule). */
static int check_tensor_params(const char *path, Diag *d, const CustomFunc *g, const CustomOp *fo, int outs_const)
{
    const char *what = g->role == CF_SHAPE ? "shape rule" : "workspace request";
    int nin = fo->call.n_in, nout = fo->call.n_out;
    for (int k = 0; k < nin + nout; k++) {
        const char *nm = k < nin ? fo->desc.in_names[k] : fo->desc.out_names[k - nin];
        int want_const = k < nin || outs_const;
        if (k >= g->n_p || !is_tensor(&g->p[k]))
            return ferr(d, path, k < g->n_p ? g->p[k].line : g->fline, "%s '%s' of '%s' lacks parameter %d: expected "
                        "'%sgraphc_tensor *' (%s '%s')", what, g->name, fo->desc.name, k + 1, want_const ? "const " : "",
                        k < nin ? "input" : "output", nm);
        if (g->p[k].is_const != want_const)
            return ferr(d, path, g->p[k].line, "%s '%s' of '%s': parameter '%s' (%s '%s') must be '%sgraphc_tensor *'",
                        what, g->name, fo->desc.name, g->p[k].name, k < nin ? "input" : "output", nm,
                        want_const ? "const " : "");
    }
    return 0;
}

/* Checks gradient function g against forward op fo and builds NAMEGrad. */
static int build_grad(const char *path, Diag *d, const CustomFunc *g, const CustomOp *fo, int file, CustomOp **out)
{
    *out = NULL;
    const char *on = fo->desc.name;
    int nin = fo->call.n_in, nout = fo->call.n_out, general = fo->call.general;
    CustomCType t = general ? CT_TENSOR : fo->call.dtype == DT_F64 ? CT_F64 : CT_F32;
    if (want_void(path, d, g, "a gradient", CT_VOID, 0)) return -1;
    int first = general ? 0 : 1;
    if (!general && (g->n_p < 1 || g->p[0].ptr || g->p[0].type != CT_I64))
        return ferr(d, path, g->n_p ? g->p[0].line : g->fline,
                    "gradient '%s': the first parameter must be the element count (int64_t n)", g->name);
    int np = nin + 2 * nout + nin;
    int got_ptrs = 0;
    while (first + got_ptrs < g->n_p && g->p[first + got_ptrs].ptr && g->p[first + got_ptrs].type != CT_STR) got_ptrs++;
    if (got_ptrs < np) {
        char want[1024];
        size_t len = 0;
        for (int k = 0; k < np && len < sizeof want; k++) {
            int written = k >= nin + 2 * nout;
            char buf[128];
            if (k < nin) snprintf(buf, sizeof buf, "%s", fo->desc.in_names[k]);
            else if (k < nin + nout) snprintf(buf, sizeof buf, "%s", fo->desc.out_names[k - nin]);
            else if (k < nin + 2 * nout) snprintf(buf, sizeof buf, "the gradient of output '%s'", fo->desc.out_names[k - nin - nout]);
            else snprintf(buf, sizeof buf, "the gradient of input '%s'", fo->desc.in_names[k - nin - 2 * nout]);
            len += (size_t)snprintf(want + len, sizeof want - len, "%s%s%s * (%s)", k ? ", " : "", written ? "" : "const ",
                                    ctype_name(t), buf);
        }
        return ferr(d, path, g->fline, "gradient '%s' of '%s' lacks a parameter: it has %d pointer parameters, expected %d: %s",
                    g->name, on, got_ptrs, np, want);
    }
    for (int k = 0; k < np; k++) {
        const char *role, *of;
        int written = k >= nin + 2 * nout;
        if (k < nin) { role = "input"; of = fo->desc.in_names[k]; }
        else if (k < nin + nout) { role = "output"; of = fo->desc.out_names[k - nin]; }
        else if (k < nin + 2 * nout) { role = "the gradient of output"; of = fo->desc.out_names[k - nin - nout]; }
        else { role = "the gradient of input"; of = fo->desc.in_names[k - nin - 2 * nout]; }
        char want[64], got[96];
        snprintf(want, sizeof want, "%s%s *", written ? "" : "const ", ctype_name(t));
        const CustomParam *p = &g->p[first + k];
        ptr_type(p, got, sizeof got);
        if (p->type != t)
            return ferr(d, path, p->line, "gradient '%s' of '%s': parameter '%s' is '%s' but the op's %s is %s (expected "
                        "'%s', %s '%s')", g->name, on, p->name, got, general ? "tensor type" : "dtype", ctype_name(t),
                        want, role, of);
        if (p->is_const == written)
            return ferr(d, path, p->line, "gradient '%s' of '%s': parameter '%s' (%s '%s') must be '%s', not '%s'", g->name,
                        on, p->name, role, of, want, got);
    }
    if (first + np < g->n_p && g->p[first + np].ptr && g->p[first + np].type != CT_STR)
        return ferr(d, path, g->p[first + np].line, "gradient '%s' of '%s': parameter '%s' is one pointer too many "
                    "(expected %d inputs, %d outputs, %d output gradients and %d input gradients)",
                    g->name, on, g->p[first + np].name, nin, nout, nout, nin);
    char gname[96];
    snprintf(gname, sizeof gname, "%sGrad", on);
    CustomOp *o = new_op(fo->domain, gname, file, g);
    *out = o;
    o->call.general = general;
    o->call.dtype = fo->call.dtype;
    o->call.n_in = nin + 2 * nout;
    o->call.n_out = nin;
    o->desc.min_in = o->desc.max_in = nin + 2 * nout;
    o->desc.min_out = o->desc.max_out = nin;
    o->desc.in_names = names_of(g, first, nin + 2 * nout);
    o->desc.out_names = names_of(g, first + nin + 2 * nout, nin);
    o->desc.attrs = fo->desc.attrs;
    o->desc.n_attrs = fo->desc.n_attrs;
    return attr_params(path, d, g, first + np, &o->call, (AttrSpec *)fo->desc.attrs, fo->desc.n_attrs, 0, 1, on);
}

/* A shape rule or workspace request g of general op fo. */
static int build_helper(const char *path, Diag *d, const CustomFunc *g, CustomOp *fo)
{
    int is_shape = g->role == CF_SHAPE;
    const char *what = is_shape ? "shape rule" : "workspace request";
    IrCustomCall *c = is_shape ? &fo->shape : &fo->ws;
    if (!fo->call.general)
        return ferr(d, path, g->line, "op '%s' is GRAPHC_ELEMENTWISE: its outputs take its inputs' shape, so it has no "
                                      "%s (declare it GRAPHC_GENERAL)", fo->desc.name, what);
    if (c->func) return ferr(d, path, g->line, "op '%s' has two %ss", fo->desc.name, what);
    if (want_void(path, d, g, is_shape ? "a shape rule" : "a workspace request", is_shape ? CT_STR : CT_I64, is_shape))
        return -1;
    if (!fo->call.workspace && !is_shape)
        return ferr(d, path, g->line, "op '%s' has a workspace request, but its function '%s' takes no 'void *' "
                                      "workspace after its outputs", fo->desc.name, fo->call.func);
    if (check_tensor_params(path, d, g, fo, !is_shape)) return -1;
    c->func = xstrdup(g->name);
    c->file = fo->call.file;
    c->general = 1;
    c->n_in = fo->call.n_in;
    c->n_out = fo->call.n_out;
    return attr_params(path, d, g, c->n_in + c->n_out, c, (AttrSpec *)fo->desc.attrs, fo->desc.n_attrs, 0, 0,
                       fo->desc.name);
}

static int name_index(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(names[i], s)) return i;
    return -1;
}

static int add_inplace(const char *path, Diag *d, const CustomFunc *g, CustomOp *fo)
{
    int o = name_index(fo->desc.out_names, fo->call.n_out, g->inplace_out);
    int i = name_index(fo->desc.in_names, fo->call.n_in, g->inplace_in);
    if (o < 0) return ferr(d, path, g->line, "GRAPHC_INPLACE: op '%s' has no output '%s'", fo->desc.name, g->inplace_out);
    if (i < 0) return ferr(d, path, g->line, "GRAPHC_INPLACE: op '%s' has no input '%s'", fo->desc.name, g->inplace_in);
    for (int k = 0; k < fo->desc.n_inplace; k++)
        if (fo->inplace[k].out == o && fo->inplace[k].in == i)
            return ferr(d, path, g->line, "GRAPHC_INPLACE(\"%s\", \"%s\") is given twice", g->inplace_out, g->inplace_in);
    InplacePair *p = realloc(fo->inplace, sizeof *p * (size_t)(fo->desc.n_inplace + 1));
    GC_ASSERT(p);
    p[fo->desc.n_inplace++] = (InplacePair){i, o};
    fo->inplace = p;
    fo->desc.inplace = p;
    return 0;
}

/* ---- compiling and loading the user's file ------------------------------- */

/* Runs the compiler; 0, or -1 with the first line of its messages in d. */
static int run_cc(const char *dir, const char *src, const char *so, const CustomFile *f, Diag *d)
{
    const char *cc = getenv("CC");
    if (!cc || !*cc) cc = "cc";
    char logp[4200];
    snprintf(logp, sizeof logp, "%s/cc.log", dir);
    pid_t pid = fork();
    if (pid < 0) return diag_error(d, "%s: cannot start the C compiler: %s", f->path, strerror(errno));
    if (pid == 0) {
        if (!freopen(logp, "w", stderr) || !freopen("/dev/null", "w", stdout)) _exit(127);
        char inc[4200];
        snprintf(inc, sizeof inc, "-I%s", dir);
        execlp(cc, cc, "-shared", "-fPIC", "-O2", "-std=c99", inc, "-o", so, src, "-lm", (char *)NULL);
        fprintf(stderr, "cannot run '%s': %s\n", cc, strerror(errno));
        _exit(127);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
    char first[512] = "";
    FILE *lf = fopen(logp, "r");
    if (lf) {
        while (fgets(first, sizeof first, lf))
            if (strstr(first, "error")) break;
        fclose(lf);
    }
    first[strcspn(first, "\n")] = 0;
    return diag_error(d, "%s: compiling the user operators with '%s' failed: %s", f->path, cc,
                      first[0] ? first : "(no message)");
}

static int write_file(const char *path, const char *text, size_t len)
{
    FILE *fp = fopen(path, "wb");
    if (!fp) return -1;
    int bad = len && fwrite(text, 1, len, fp) != len;
    bad |= fclose(fp) != 0;
    return bad ? -1 : 0;
}

/* The arguments of call c's attributes, from the wrappers' fa/ia/sa. */
static void wrap_attrs(Writer *w, const IrCustomCall *c)
{
    for (int k = 0; k < c->n_attr; k++) {
        int a = c->attr_idx[k];
        switch (c->attr_ctype[k]) {
        case 'f': w_printf(w, ", (float)fa[%d]", a); break;
        case 'd': w_printf(w, ", fa[%d]", a); break;
        case 'i': w_printf(w, ", ia[%d]", a); break;
        default: w_printf(w, ", sa[%d]", a); break;
        }
    }
}

static void write_wrapper(Writer *w, int s, const IrCustomCall *c, WrapKind kind)
{
    static const char *const attr_args = "const double *fa, const int64_t *ia, const char *const *sa";
    if (kind == WR_RUN) {
        const char *proto = "void graphc_wrap_%d(int64_t n, void *const *p, graphc_tensor *t, void *ws, %s)";
        w_printf(w, proto, s, attr_args);
        w_puts(w, ";\n");
        w_printf(w, proto, s, attr_args);
        w_printf(w, "\n{\n    (void)n; (void)p; (void)t; (void)ws; (void)fa; (void)ia; (void)sa;\n    %s(", c->func);
        if (c->general) {
            for (int i = 0; i < c->n_in + c->n_out; i++) w_printf(w, "%s&t[%d]", i ? ", " : "", i);
            if (c->workspace) w_puts(w, ", ws");
        } else {
            const char *t = c->dtype == DT_F64 ? "double" : "float";
            w_puts(w, "n");
            for (int i = 0; i < c->n_in + c->n_out; i++) w_printf(w, ", (%s%s *)p[%d]", i < c->n_in ? "const " : "", t, i);
        }
    } else {
        const char *proto = kind == WR_SHAPE ? "const char *graphc_wrap_%d(graphc_tensor *t, %s)" :
                                               "int64_t graphc_wrap_%d(graphc_tensor *t, %s)";
        w_printf(w, proto, s, attr_args);
        w_puts(w, ";\n");
        w_printf(w, proto, s, attr_args);
        w_printf(w, "\n{\n    (void)fa; (void)ia; (void)sa;\n    return %s(", c->func);
        for (int i = 0; i < c->n_in + c->n_out; i++) w_printf(w, "%s&t[%d]", i ? ", " : "", i);
    }
    wrap_attrs(w, c);
    w_puts(w, ");\n}\n");
}

/* Compiles file f with its wrappers and loads it (once). */
static int compile_file(CustomFile *f, Diag *d)
{
    if (f->dl) return 0;
    if (f->compile_failed) return diag_error(d, "%s: the user operators could not be compiled (see the first error)", f->path);
    const char *tmpd = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/graphc-ops-XXXXXX", tmpd && *tmpd ? tmpd : "/tmp");
    if (!mkdtemp(dir)) return diag_error(d, "%s: cannot create a temporary folder: %s", f->path, strerror(errno));
    char p_hdr_dir[4200], p_hdr[4300], p_ops[4200], p_wrap[4200], p_so[4200], p_log[4200];
    snprintf(p_hdr_dir, sizeof p_hdr_dir, "%s/graphc", dir);
    snprintf(p_hdr, sizeof p_hdr, "%s/custom_op.h", p_hdr_dir);
    snprintf(p_ops, sizeof p_ops, "%s/ops.c", dir);
    snprintf(p_wrap, sizeof p_wrap, "%s/wrap.c", dir);
    snprintf(p_so, sizeof p_so, "%s/ops.so", dir);
    snprintf(p_log, sizeof p_log, "%s/cc.log", dir);
    Writer w;
    w_init(&w);
    Writer src; /* the user's file, its messages naming its own path */
    w_init(&src);
    w_puts(&src, "#line 1 \"");
    for (const char *q = f->path; *q; q++) w_printf(&src, "%s%c", *q == '"' || *q == '\\' ? "\\" : "", *q);
    w_printf(&src, "\"\n%.*s\n", (int)f->len, f->text);
    w_puts(&w, "#include \"ops.c\"\n#include <graphc/custom_op.h>\n\n");
    for (int s = 0; s < f->n_funcs; s++) write_wrapper(&w, s, f->calls[s], f->kinds[s]);
    int rc = 0;
    if (mkdir(p_hdr_dir, 0700) || write_file(p_hdr, f->header, f->header_len) || write_file(p_ops, src.buf, src.len) ||
        write_file(p_wrap, w.buf, w.len))
        rc = diag_error(d, "%s: cannot write into a temporary folder: %s", f->path, strerror(errno));
    w_free(&w);
    w_free(&src);
    if (!rc) rc = run_cc(dir, p_wrap, p_so, f, d);
    void *dl = NULL;
    if (!rc) {
        dl = dlopen(p_so, RTLD_NOW | RTLD_LOCAL);
        if (!dl) rc = diag_error(d, "%s: cannot load the compiled user operators: %s", f->path, dlerror());
    }
    unlink(p_so);
    unlink(p_log);
    unlink(p_wrap);
    unlink(p_ops);
    unlink(p_hdr);
    rmdir(p_hdr_dir);
    rmdir(dir);
    if (rc) {
        f->compile_failed = 1;
        return -1;
    }
    f->wraps = calloc((size_t)f->n_funcs + 1, sizeof *f->wraps);
    GC_ASSERT(f->wraps);
    for (int s = 0; s < f->n_funcs; s++) {
        char sym[64];
        snprintf(sym, sizeof sym, "graphc_wrap_%d", s);
        f->wraps[s] = dlsym(dl, sym);
        GC_ASSERT(f->wraps[s]);
    }
    f->dl = dl;
    return 0;
}

static void *wrap_of(const IrCustomCall *c) { return files[c->file].wraps[c->slot]; }

/* ---- the facets ------------------------------------------------------------ */

static const CustomOp *op_of(const Node *n) { return ops[n->op - OP_COUNT]; }

/* The node's attributes as the wrappers take them (free with free_attrs). */
typedef struct AttrArgs {
    double *fa;
    int64_t *ia;
    const char **sa;
} AttrArgs;

static AttrArgs attr_args(const Node *n)
{
    const OpDesc *od = ir_op(n->op);
    AttrArgs a = {calloc((size_t)od->n_attrs + 1, sizeof(double)), calloc((size_t)od->n_attrs + 1, sizeof(int64_t)),
                  calloc((size_t)od->n_attrs + 1, sizeof(char *))};
    GC_ASSERT(a.fa && a.ia && a.sa);
    for (int k = 0; k < od->n_attrs; k++) {
        a.fa[k] = n->attrs[k].f;
        a.ia[k] = n->attrs[k].i;
        a.sa[k] = n->attrs[k].s ? n->attrs[k].s : "";
    }
    return a;
}

static void free_attrs(AttrArgs *a)
{
    free(a->fa);
    free(a->ia);
    free((void *)a->sa);
}

/* t's header (no data) from value v. */
static void tensor_of(graphc_tensor *t, const Value *v)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype_code(v->dtype);
    t->rank = v->shape.rank;
    for (int i = 0; i < v->shape.rank; i++) t->dims[i] = v->shape.dims[i];
}

/* The tensors of a general node's inputs and outputs (outputs as inferred;
 * zero when `outputs_unknown`). */
static graphc_tensor *node_tensors(const Node *n, int outputs_unknown)
{
    graphc_tensor *t = calloc((size_t)(n->n_in + n->n_out) + 1, sizeof *t);
    GC_ASSERT(t);
    for (int i = 0; i < n->n_in; i++) tensor_of(&t[i], n->in[i]);
    for (int j = 0; j < n->n_out && !outputs_unknown; j++) tensor_of(&t[n->n_in + j], n->out[j]);
    return t;
}

static int64_t call_workspace(const CustomOp *o, const Node *n, graphc_tensor *t)
{
    if (!o->ws.func) return 0;
    AttrArgs a = attr_args(n);
    CustomWsWrap fn;
    void *p = wrap_of(&o->ws);
    memcpy(&fn, &p, sizeof fn); /* object to function pointer (POSIX) */
    int64_t bytes = fn(t, a.fa, a.ia, a.sa);
    free_attrs(&a);
    return bytes;
}

size_t ir_custom_workspace(const Node *n)
{
    const CustomOp *o = op_of(n);
    if (!o->ws.func || compile_file(&files[o->call.file], &(Diag){0})) return 0;
    graphc_tensor *t = node_tensors(n, 0);
    int64_t bytes = call_workspace(o, n, t);
    free(t);
    return bytes > 0 ? (size_t)bytes : 0;
}

/* Shape inference of a general op: its shape rule, then its workspace
 * request checked. */
static int general_infer(Node *n, const CustomOp *o, Diag *d)
{
    const OpDesc *od = &o->desc;
    if (compile_file(&files[o->call.file], d)) return -1;
    for (int i = 0; i < n->n_in; i++)
        if (!dtype_code(n->in[i]->dtype))
            return diag_node_error(d, n, "input '%s' is %s, which a user op cannot take (f32, f64, i64, i32, bool)",
                                   od->in_names[i], ir_dtype_name(n->in[i]->dtype));
    graphc_tensor *t = node_tensors(n, 1);
    AttrArgs a = attr_args(n);
    CustomShapeWrap fn;
    void *p = wrap_of(&o->shape);
    memcpy(&fn, &p, sizeof fn);
    const char *msg = fn(t, a.fa, a.ia, a.sa);
    free_attrs(&a);
    int rc = 0;
    if (msg) rc = diag_node_error(d, n, "%s (shape rule '%s')", msg, o->shape.func);
    for (int j = 0; j < n->n_out && !rc; j++) {
        const graphc_tensor *y = &t[n->n_in + j];
        DType dt = dtype_of_code(y->dtype);
        int64_t ne;
        if (dt == DT_UNDEF) {
            rc = diag_node_error(d, n, "shape rule '%s' left output '%s' with dtype %d (expected GRAPHC_FLOAT, "
                                 "GRAPHC_DOUBLE, GRAPHC_INT64, GRAPHC_INT32 or GRAPHC_BOOL)", o->shape.func,
                                 od->out_names[j], (int)y->dtype);
            break;
        }
        if (y->rank < 0 || y->rank > GRAPHC_MAX_RANK) {
            rc = diag_node_error(d, n, "shape rule '%s' gave output '%s' rank %d (0 to %d)", o->shape.func,
                                 od->out_names[j], (int)y->rank, GRAPHC_MAX_RANK);
            break;
        }
        for (int i = 0; i < y->rank && !rc; i++)
            if (y->dims[i] < 0)
                rc = diag_node_error(d, n, "shape rule '%s' gave output '%s' dimension %d = %lld", o->shape.func,
                                     od->out_names[j], i, (long long)y->dims[i]);
        Shape s = ir_shape(y->rank, y->dims);
        if (!rc && ir_shape_numel(&s, &ne))
            rc = diag_node_error(d, n, "shape rule '%s' gave output '%s' too many elements", o->shape.func, od->out_names[j]);
        if (!rc) ir_set_out(n, j, dt, &s);
    }
    if (!rc && o->ws.func) {
        int64_t bytes = call_workspace(o, n, t);
        if (bytes < 0 || bytes > ((int64_t)1 << 40))
            rc = diag_node_error(d, n, "workspace request '%s' asked for %lld bytes", o->ws.func, (long long)bytes);
    }
    free(t);
    return rc;
}

static int custom_infer(Node *n, Diag *d)
{
    const CustomOp *o = op_of(n);
    const OpDesc *od = &o->desc;
    const IrCustomCall *c = &o->call;
    if (ir_need_inputs(n, d)) return -1;
    for (int k = 0; k < od->n_attrs; k++)
        if (!n->attrs[k].set) return diag_node_error(d, n, "attribute '%s' is required", od->attrs[k].name);
    if (c->general && o->fwd_kind < 0) return general_infer(n, o, d);
    if (c->general) { /* NAMEGrad of a general op: each input gradient is its input's dtype and shape */
        for (int j = 0; j < n->n_out; j++) ir_set_out(n, j, n->in[j]->dtype, &n->in[j]->shape);
        return 0;
    }
    for (int i = 0; i < n->n_in; i++) {
        const Value *v = n->in[i];
        if (v->dtype != c->dtype)
            return diag_node_error(d, n, "input '%s' is %s, but '%s' takes %s", od->in_names[i], ir_dtype_name(v->dtype),
                                   c->func, ir_dtype_name(c->dtype));
        if (!ir_shape_eq(&v->shape, &n->in[0]->shape)) {
            char a[128], b[128];
            return diag_node_error(d, n, "input '%s' has shape %s but input '%s' has %s (an elementwise user op takes "
                                         "inputs of one shape)", od->in_names[i], ir_shape_str(&v->shape, a, sizeof a),
                                   od->in_names[0], ir_shape_str(&n->in[0]->shape, b, sizeof b));
        }
    }
    for (int j = 0; j < n->n_out; j++) ir_set_out(n, j, c->dtype, &n->in[0]->shape);
    return 0;
}

/* Bytes of guard after each buffer a user function gets in reference
 * evaluation: a write past the size its shape rule or workspace request
 * gave is an error (graphc run, check-op, constant folding). */
#define CUSTOM_GUARD 64
#define CUSTOM_GUARD_BYTE 0xA5

static void *guarded(size_t bytes)
{
    unsigned char *p = calloc(1, bytes + CUSTOM_GUARD);
    GC_ASSERT(p);
    memset(p + bytes, CUSTOM_GUARD_BYTE, CUSTOM_GUARD);
    return p;
}

static int guard_ok(const void *p, size_t bytes)
{
    const unsigned char *q = (const unsigned char *)p + bytes;
    for (int k = 0; k < CUSTOM_GUARD; k++)
        if (q[k] != CUSTOM_GUARD_BYTE) return 0;
    return 1;
}

static int custom_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const CustomOp *o = op_of(n);
    const IrCustomCall *c = &o->call;
    if (compile_file(&files[c->file], d)) return -1;
    int np = n->n_in + n->n_out;
    graphc_tensor *t = node_tensors(n, 0);
    void **p = calloc((size_t)np + 1, sizeof *p);
    size_t *bytes = calloc((size_t)np + 1, sizeof *bytes);
    GC_ASSERT(p && bytes);
    for (int i = 0; i < np; i++) {
        const Value *v = i < n->n_in ? n->in[i] : n->out[i - n->n_in];
        int64_t cnt = ir_numel(&v->shape);
        bytes[i] = (size_t)cnt * ir_dtype_size(v->dtype);
        p[i] = guarded(bytes[i]);
        t[i].data = p[i];
        if (i < n->n_in)
            for (int64_t e = 0; e < cnt; e++) ir_store_f64(v->dtype, p[i], (size_t)e, in[i][e]);
    }
    int64_t ws_req = c->general && o->fwd_kind < 0 ? call_workspace(o, n, t) : 0;
    size_t ws_bytes = ws_req > 0 ? (size_t)ws_req : 0;
    void *ws = guarded(ws_bytes);
    AttrArgs a = attr_args(n);
    CustomWrap fn;
    void *wp = wrap_of(c);
    memcpy(&fn, &wp, sizeof fn);
    fn(c->general ? 0 : ir_numel(&n->in[0]->shape), p, t, ws, a.fa, a.ia, a.sa);
    free_attrs(&a);
    int rc = 0;
    for (int i = 0; i < np && !rc; i++)
        if (!guard_ok(p[i], bytes[i])) {
            const Value *v = i < n->n_in ? n->in[i] : n->out[i - n->n_in];
            char sh[128];
            rc = diag_node_error(d, n, "'%s' wrote past the end of %s '%s' (%s%s%s)", c->func,
                                 i < n->n_in ? "input" : "output", v->name, ir_dtype_name(v->dtype),
                                 ir_shape_str(&v->shape, sh, sizeof sh),
                                 c->general && i >= n->n_in ? ", as its shape rule gave it" : "");
        }
    if (!rc && !guard_ok(ws, ws_bytes))
        rc = diag_node_error(d, n, "'%s' wrote past the end of its workspace (%zu bytes, as '%s' asked)", c->func, ws_bytes,
                             o->ws.func ? o->ws.func : "no workspace request");
    for (int j = 0; j < n->n_out && !rc; j++) {
        const Value *v = n->out[j];
        for (int64_t e = 0; e < ir_numel(&v->shape); e++) out[j][e] = ir_load_f64(v->dtype, p[n->n_in + j], (size_t)e);
    }
    for (int i = 0; i < np; i++) free(p[i]);
    free(p);
    free(bytes);
    free(t);
    free(ws);
    return rc;
}

static int custom_gradient(GradCtx *gc)
{
    const Node *n = gc->n;
    const CustomOp *op = op_of(n);
    int nin = n->n_in, nout = n->n_out;
    Value **in = ir_alloc(gc->g, sizeof(Value *) * (size_t)(nin + 2 * nout));
    Value **dx = ir_alloc(gc->g, sizeof(Value *) * (size_t)nin);
    for (int i = 0; i < nin; i++) in[i] = n->in[i];
    for (int j = 0; j < nout; j++) {
        in[nin + j] = n->out[j];
        in[nin + nout + j] = gb_dy(gc, j);
    }
    if (!gb_node(gc, op->grad_kind, gb_fwd_attrs(gc, NULL), nin + 2 * nout, in, nin, dx)) return gb_done(gc);
    for (int i = 0; i < nin; i++) gb_set(gc, i, dx[i]);
    return gb_done(gc);
}

/* ---- loading --------------------------------------------------------------- */

static void free_call(IrCustomCall *c)
{
    free((char *)c->func);
    free((int *)c->attr_idx);
    free((char *)c->attr_ctype);
}

static void free_op(CustomOp *o)
{
    if (!o) return;
    free(o->domain);
    free((char *)o->desc.name);
    free_call(&o->call);
    free_call(&o->shape);
    free_call(&o->ws);
    free(o->inplace);
    for (int i = 0; o->desc.in_names && i < o->desc.max_in; i++) free((char *)o->desc.in_names[i]);
    for (int i = 0; o->desc.out_names && i < o->desc.max_out; i++) free((char *)o->desc.out_names[i]);
    free((char **)o->desc.in_names);
    free((char **)o->desc.out_names);
    if (o->owns_attrs) {
        for (int k = 0; k < o->desc.n_attrs; k++) free((char *)o->desc.attrs[k].name);
        free((AttrSpec *)o->desc.attrs);
    }
    free(o);
}

static int read_text(const char *path, Writer *text, Diag *d)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) return diag_error(d, "%s: cannot open: %s", path, strerror(errno));
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, fp)) > 0) w_printf(text, "%.*s", (int)got, buf);
    int bad = ferror(fp);
    fclose(fp);
    return bad ? diag_error(d, "%s: cannot read", path) : 0;
}

/* The forward op of this load that annotation g names, or an error. */
static CustomOp *find_fwd(const char *path, Diag *d, const CustomFunc *g, CustomOp **made, int n_fwd)
{
    for (int k = 0; k < n_fwd; k++)
        if (!strcmp(made[k]->desc.name, g->op) && !strcmp(made[k]->domain, g->domain)) return made[k];
    static const char *const mac[] = {"GRAPHC_OP", "GRAPHC_GRAD", "GRAPHC_SHAPE", "GRAPHC_WORKSPACE", "GRAPHC_INPLACE"};
    ferr(d, path, g->line, "%s(\"%s\", \"%s\"): no GRAPHC_OP in this file declares that op", mac[g->role], g->domain, g->op);
    return NULL;
}

/* Checks the records of one file and builds its ops into made[] (forward
 * ops first). */
static int build_all(const char *path, const CustomFunc *fs, int n_fs, int file, CustomOp **made, int *n_made, Diag *d)
{
    int rc = 0;
    for (int i = 0; i < n_fs && !rc; i++) {
        const CustomFunc *f = &fs[i];
        if (f->role != CF_OP) continue;
        for (const char *q = f->op; *q && !rc; q++)
            if (!(isalnum((unsigned char)*q) || *q == '_') || isdigit((unsigned char)f->op[0]))
                rc = ferr(d, path, f->line, "op name '%s' is not an identifier", f->op);
        if (!rc && ir_op_lookup(f->op) >= 0)
            rc = ferr(d, path, f->line, "op '%s' is already defined (graphc or an earlier --ops file has an op of that name)", f->op);
        for (int k = 0; k < *n_made && !rc; k++)
            if (!strcmp(made[k]->desc.name, f->op)) rc = ferr(d, path, f->line, "op '%s' is declared twice", f->op);
        CustomOp *o = NULL;
        if (!rc) rc = build_op(path, d, f, file, &o);
        if (o) made[(*n_made)++] = o;
    }
    int n_fwd = *n_made;
    for (int i = 0; i < n_fs && !rc; i++) {
        const CustomFunc *g = &fs[i];
        if (g->role == CF_OP) continue;
        CustomOp *fo = find_fwd(path, d, g, made, n_fwd);
        if (!fo) return -1;
        if (g->role == CF_SHAPE || g->role == CF_WORKSPACE) {
            rc = build_helper(path, d, g, fo);
        } else if (g->role == CF_INPLACE) {
            rc = add_inplace(path, d, g, fo);
        } else {
            if (fo->grad_kind != -1) return ferr(d, path, g->line, "op '%s' has two gradient functions", g->op);
            CustomOp *o = NULL;
            rc = build_grad(path, d, g, fo, file, &o);
            if (o) made[(*n_made)++] = o;
            if (!rc && ir_op_lookup(o->desc.name) >= 0)
                rc = ferr(d, path, g->line, "op '%s' (the gradient of '%s') is already defined", o->desc.name, g->op);
            if (!rc) {
                fo->grad_kind = OP_COUNT + n_ops + (*n_made - 1); /* its kind once registered */
                for (int k = 0; k < n_fwd; k++)
                    if (made[k] == fo) o->fwd_kind = OP_COUNT + n_ops + k;
            }
        }
    }
    for (int k = 0; k < n_fwd && !rc; k++)
        if (made[k]->call.general && !made[k]->shape.func)
            rc = ferr(d, path, made[k]->line, "general op '%s' has no shape rule: declare one with GRAPHC_SHAPE(\"%s\", "
                      "\"%s\") before 'const char *NAME(inputs..., outputs..., attributes...)'", made[k]->desc.name,
                      made[k]->domain, made[k]->desc.name);
    for (int k = 0; k < n_fwd && !rc; k++)
        if (made[k]->call.workspace && !made[k]->ws.func)
            rc = ferr(d, path, made[k]->line, "op '%s' takes a workspace ('void *' after its outputs) but has no "
                      "GRAPHC_WORKSPACE request saying how many bytes", made[k]->desc.name);
    return rc;
}

int ir_custom_load(const char *path, const char *header, size_t header_len, Diag *d)
{
    if (n_files == CUSTOM_MAX_FILES) return diag_error(d, "%s: at most %d --ops files", path, CUSTOM_MAX_FILES);
    Writer text;
    w_init(&text);
    if (read_text(path, &text, d)) {
        w_free(&text);
        return -1;
    }
    const char *s = text.buf ? text.buf : "";
    CustomFunc *fs = NULL;
    int n_fs = 0;
    const char *which = getenv("GRAPHC_OPS_READER");
    int rc = custom_have_libclang() && !(which && !strcmp(which, "plain"))
                 ? custom_read_clang(path, s, text.len, header, header_len, &fs, &n_fs, d)
                 : custom_read_plain(path, s, text.len, &fs, &n_fs, d);
    if (!rc && n_fs == 0) rc = diag_error(d, "%s:1: no GRAPHC_OP annotation (see graphc/custom_op.h)", path);
    CustomOp **made = calloc((size_t)(2 * n_fs) + 1, sizeof *made);
    int n_made = 0;
    GC_ASSERT(made);
    if (!rc) rc = build_all(path, fs, n_fs, n_files, made, &n_made, d);
    if (!rc && n_ops + n_made > CUSTOM_MAX_OPS) rc = diag_error(d, "%s: too many user operators (at most %d)", path, CUSTOM_MAX_OPS);
    if (rc) {
        for (int k = 0; k < n_made; k++) free_op(made[k]);
        free(made);
        free(fs);
        w_free(&text);
        return -1;
    }
    CustomFile *cf = &files[n_files++];
    memset(cf, 0, sizeof *cf);
    cf->path = xstrdup(path);
    cf->len = text.len;
    cf->text = malloc(text.len + 1);
    GC_ASSERT(cf->text);
    memcpy(cf->text, s, text.len);
    cf->text[text.len] = 0;
    cf->header = header;
    cf->header_len = header_len;
    cf->calls = calloc((size_t)(3 * n_made) + 1, sizeof *cf->calls);
    cf->kinds = calloc((size_t)(3 * n_made) + 1, sizeof *cf->kinds);
    GC_ASSERT(cf->calls && cf->kinds);
    for (int k = 0; k < n_made; k++) {
        CustomOp *o = made[k];
        if (o->grad_kind >= 0) {
            o->desc.gradient = custom_gradient;
            o->desc.backward_reads = ir_bw_all;
        }
        IrCustomCall *calls[3] = {&o->call, &o->shape, &o->ws};
        for (int q = 0; q < 3; q++) {
            if (!calls[q]->func) continue;
            calls[q]->slot = cf->n_funcs;
            cf->kinds[cf->n_funcs] = (WrapKind)q;
            cf->calls[cf->n_funcs++] = calls[q];
        }
        ops[n_ops++] = o;
    }
    free(made);
    free(fs);
    w_free(&text);
    return 0;
}

int ir_custom_n_files(void) { return n_files; }

const char *ir_custom_file_path(int file)
{
    GC_ASSERT(file >= 0 && file < n_files);
    return files[file].path;
}

const char *ir_custom_file_text(int file, size_t *len)
{
    GC_ASSERT(file >= 0 && file < n_files);
    *len = files[file].len;
    return files[file].text;
}

int ir_custom_count(void) { return n_ops; }

const OpDesc *ir_custom_desc(OpKind k)
{
    GC_ASSERT(k >= OP_COUNT && k < OP_COUNT + n_ops);
    return &ops[k - OP_COUNT]->desc;
}

int ir_custom_lookup(const char *name)
{
    for (int k = 0; k < n_ops; k++)
        if (!strcmp(ops[k]->desc.name, name)) return OP_COUNT + k;
    return -1;
}

int ir_custom_has_domain(const char *domain)
{
    for (int k = 0; k < n_ops; k++)
        if (!strcmp(ops[k]->domain, domain)) return 1;
    return 0;
}

int ir_custom_lookup_domain(const char *domain, const char *name)
{
    for (int k = 0; k < n_ops; k++)
        if (!strcmp(ops[k]->domain, domain) && !strcmp(ops[k]->desc.name, name)) return OP_COUNT + k;
    return -1;
}

OpKind ir_custom_grad_kind(OpKind k)
{
    GC_ASSERT(k >= OP_COUNT && k < OP_COUNT + n_ops);
    if (ops[k - OP_COUNT]->fwd_kind >= 0) return -2;
    return ops[k - OP_COUNT]->grad_kind;
}
