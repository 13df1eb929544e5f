/* custom_op.c — user operators from annotated C functions (ir/custom_op.h).
 *
 * The reader. A line that starts with GRAPHC_OP("domain", "Name", KIND) or
 * GRAPHC_GRAD("domain", "Name") must be followed by a prototype
 * `void fn(PARAMS)` whose parameters are `int64_t NAME`, `float NAME`,
 * `double NAME`, `const char *NAME`, `const T *NAME` or `T *NAME` (T float
 * or double). Anything else (typedefs, macros, other types) needs a real C
 * parser, which graphc does not have yet (libclang): the error names the
 * file and line. An elementwise op's parameters are the element count, the
 * inputs (const T *), the outputs (T *) and the attributes; its gradient's
 * are the count, the inputs, the outputs, the output gradients, the input
 * gradients (written) and the same attributes, matched by name. Every
 * mismatch is a "FILE:LINE: ..." error.
 *
 * The descriptions. All inputs and outputs share one shape and the dtype of
 * T; attributes are required. The gradient facet builds one NAMEGrad node
 * (inputs, outputs, output gradients → input gradients), which reads every
 * forward input and output. No scalar expression (fusion leaves the node
 * alone) and no in-place option.
 *
 * Reference evaluation. The first evaluation of an op of a file compiles
 * the file with `$CC -shared -fPIC -O2` (cc by default) in a temporary
 * folder, beside one wrapper per function with a uniform signature, loads
 * it with dlopen and removes the folder. Values travel as T, converted from
 * and to the interpreter's doubles.
 */
#include "custom_op.h"

#include "grad.h"
#include "writer.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CUSTOM_MAX_FILES 32
#define CUSTOM_MAX_OPS 256
#define CUSTOM_MAX_PARAMS 64

typedef void (*CustomWrap)(int64_t n, void *const *ptr, const double *fa, const int64_t *ia, const char *const *sa);

typedef struct CustomFile {
    char *path, *text;
    size_t len;
    const char *header;
    size_t header_len;
    int n_funcs;       /* wrappers (slots) */
    IrCustomCall **calls;
    void *dl;          /* after the first evaluation */
    CustomWrap *wraps;
    int compile_failed;
} CustomFile;

/* One user op kind (forward or gradient). */
typedef struct CustomOp {
    OpDesc desc;
    IrCustomCall call;
    char *domain;
    OpKind grad_kind; /* forward ops with a gradient function; -1 otherwise */
    int owns_attrs;   /* forward ops; a NAMEGrad op shares its forward op's schema */
} CustomOp;

static CustomFile files[CUSTOM_MAX_FILES];
static int n_files;
static CustomOp *ops[CUSTOM_MAX_OPS];
static int n_ops;

/* ---- the reader ---------------------------------------------------------- */

typedef enum { PT_I64, PT_F32, PT_F64, PT_STR } ParamType;

typedef struct Param {
    char name[64];
    ParamType type;
    int ptr, is_const;
    int line;
} Param;

typedef struct Func {
    int is_grad, line;
    char domain[128], op[64], name[128];
    Param p[CUSTOM_MAX_PARAMS];
    int n_p;
} Func;

typedef struct Reader {
    const char *path, *s, *end, *p;
    Diag *d;
} Reader;

static int line_of(const Reader *r, const char *at)
{
    int line = 1;
    for (const char *q = r->s; q < at && q < r->end; q++) line += *q == '\n';
    return line;
}

__attribute__((format(printf, 3, 4)))
static int rerr(Reader *r, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return diag_error(r->d, "%s:%d: %s", r->path, line, msg);
}

static void skip_space(Reader *r)
{
    for (;;) {
        while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')) r->p++;
        if (r->p + 1 < r->end && r->p[0] == '/' && r->p[1] == '*') {
            const char *e = strstr(r->p + 2, "*/");
            r->p = e ? e + 2 : r->end;
        } else if (r->p + 1 < r->end && r->p[0] == '/' && r->p[1] == '/') {
            while (r->p < r->end && *r->p != '\n') r->p++;
        } else {
            return;
        }
    }
}

static int is_id0(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int is_id(int c) { return is_id0(c) || (c >= '0' && c <= '9'); }

/* The next identifier into buf (empty when there is none). */
static void ident(Reader *r, char *buf, size_t cap)
{
    skip_space(r);
    size_t n = 0;
    if (r->p < r->end && is_id0((unsigned char)*r->p))
        while (r->p < r->end && is_id((unsigned char)*r->p)) {
            if (n + 1 < cap) buf[n++] = *r->p;
            r->p++;
        }
    buf[n] = 0;
}

static int punct(Reader *r, char c)
{
    skip_space(r);
    if (r->p < r->end && *r->p == c) {
        r->p++;
        return 1;
    }
    return 0;
}

static int string_lit(Reader *r, char *buf, size_t cap)
{
    skip_space(r);
    if (r->p >= r->end || *r->p != '"') return -1;
    const char *q = ++r->p;
    while (r->p < r->end && *r->p != '"' && *r->p != '\n' && *r->p != '\\') r->p++;
    if (r->p >= r->end || *r->p != '"' || (size_t)(r->p - q) + 1 > cap || r->p == q) return -1;
    snprintf(buf, cap, "%.*s", (int)(r->p - q), q);
    r->p++;
    return 0;
}

static const char *const needs_libclang =
    "(the reader without libclang accepts only void functions with parameters int64_t, float, double, "
    "const char *, const float *, float *, const double * and double *; graphc has no libclang support yet)";

/* Reads one parameter up to ',' or ')'. */
static int read_param(Reader *r, Func *f, Param *pa)
{
    char a[64], b[64];
    memset(pa, 0, sizeof *pa);
    skip_space(r);
    pa->line = line_of(r, r->p);
    const char *start = r->p;
    ident(r, a, sizeof a);
    if (!strcmp(a, "const")) {
        pa->is_const = 1;
        ident(r, a, sizeof a);
    }
    if (!strcmp(a, "int64_t")) pa->type = PT_I64;
    else if (!strcmp(a, "float")) pa->type = PT_F32;
    else if (!strcmp(a, "double")) pa->type = PT_F64;
    else if (!strcmp(a, "char")) pa->type = PT_STR;
    else goto unreadable;
    if (punct(r, '*')) pa->ptr = 1;
    ident(r, b, sizeof b);
    if (!b[0] || !strcmp(b, "const")) goto unreadable;
    snprintf(pa->name, sizeof pa->name, "%s", b);
    skip_space(r);
    if (r->p >= r->end || (*r->p != ',' && *r->p != ')')) goto unreadable;
    if (pa->type == PT_STR && !(pa->ptr && pa->is_const)) goto unreadable;
    if (pa->type == PT_I64 && pa->ptr) goto unreadable;
    if (!pa->ptr && pa->is_const) goto unreadable;
    if (pa->type == PT_STR) pa->ptr = 0; /* a string attribute */
    return 0;
unreadable:;
    const char *e = start;
    while (e < r->end && *e != ',' && *e != ')' && *e != '\n') e++;
    return rerr(r, pa->line, "cannot read parameter '%.*s' of '%s' %s", (int)(e - start), start, f->name, needs_libclang);
}

/* Reads the annotation at r->p (after the macro name) and the prototype. */
static int read_func(Reader *r, Func *f)
{
    int line = f->line;
    if (!punct(r, '(') || string_lit(r, f->domain, sizeof f->domain) || !punct(r, ',') ||
        string_lit(r, f->op, sizeof f->op))
        return rerr(r, line, "expected %s(\"domain\", \"Name\"%s)", f->is_grad ? "GRAPHC_GRAD" : "GRAPHC_OP",
                    f->is_grad ? "" : ", GRAPHC_ELEMENTWISE");
    if (!f->is_grad) {
        char kind[64];
        if (!punct(r, ',')) return rerr(r, line, "GRAPHC_OP needs a kind: GRAPHC_ELEMENTWISE");
        ident(r, kind, sizeof kind);
        if (!strcmp(kind, "GRAPHC_GENERAL"))
            return rerr(r, line, "op '%s': GRAPHC_GENERAL ops are not supported yet (only GRAPHC_ELEMENTWISE)", f->op);
        if (strcmp(kind, "GRAPHC_ELEMENTWISE"))
            return rerr(r, line, "op '%s': unknown kind '%s' (expected GRAPHC_ELEMENTWISE)", f->op, kind);
    }
    if (!punct(r, ')')) return rerr(r, line, "expected ')' to close the annotation");
    for (const char *q = f->op; *q; q++)
        if (!is_id((unsigned char)*q) || !is_id0((unsigned char)f->op[0]))
            return rerr(r, line, "op name '%s' is not an identifier", f->op);
    char t[64];
    skip_space(r);
    f->line = line_of(r, r->p);
    ident(r, t, sizeof t);
    if (strcmp(t, "void"))
        return rerr(r, f->line, "expected a function 'void NAME(...)' after the annotation of '%s' %s", f->op,
                    needs_libclang);
    ident(r, f->name, sizeof f->name);
    if (!f->name[0] || !punct(r, '('))
        return rerr(r, f->line, "expected a function 'void NAME(...)' after the annotation of '%s' %s", f->op,
                    needs_libclang);
    if (punct(r, ')')) return rerr(r, f->line, "'%s' has no parameters: it needs the element count first", f->name);
    for (;;) {
        if (f->n_p == CUSTOM_MAX_PARAMS) return rerr(r, f->line, "'%s' has too many parameters", f->name);
        if (read_param(r, f, &f->p[f->n_p])) return -1;
        f->n_p++;
        if (punct(r, ')')) break;
        if (!punct(r, ',')) return rerr(r, line_of(r, r->p), "cannot read the parameters of '%s' %s", f->name, needs_libclang);
    }
    skip_space(r);
    if (r->p >= r->end || (*r->p != '{' && *r->p != ';'))
        return rerr(r, line_of(r, r->p), "expected '{' or ';' after the prototype of '%s' %s", f->name, needs_libclang);
    return 0;
}

static const char *ctype_name(ParamType t) { return t == PT_F32 ? "float" : t == PT_F64 ? "double" : t == PT_I64 ? "int64_t" : "const char *"; }

static void ptr_type(const Param *p, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s *", p->is_const ? "const " : "", ctype_name(p->type));
}

/* ---- descriptions -------------------------------------------------------- */

static const IrCustomCall *call_of(const Node *n) { return ir_op(n->op)->custom; }

static int custom_infer(Node *n, Diag *d)
{
    const OpDesc *od = ir_op(n->op);
    const IrCustomCall *c = od->custom;
    if (ir_need_inputs(n, d)) return -1;
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
    for (int k = 0; k < od->n_attrs; k++)
        if (!n->attrs[k].set) return diag_node_error(d, n, "attribute '%s' is required", od->attrs[k].name);
    for (int j = 0; j < n->n_out; j++) ir_set_out(n, j, c->dtype, &n->in[0]->shape);
    return 0;
}

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
    w_puts(&w, "#include \"ops.c\"\n\n");
    for (int s = 0; s < f->n_funcs; s++) {
        const IrCustomCall *c = f->calls[s];
        const char *t = c->dtype == DT_F64 ? "double" : "float";
        w_printf(&w, "void graphc_wrap_%d(int64_t n, void *const *p, const double *fa, const int64_t *ia, const char *const *sa);\n", s);
        w_printf(&w, "void graphc_wrap_%d(int64_t n, void *const *p, const double *fa, const int64_t *ia, const char *const *sa)\n{\n", s);
        w_printf(&w, "    (void)p; (void)fa; (void)ia; (void)sa;\n    %s(n", c->func);
        for (int i = 0; i < c->n_in + c->n_out; i++) w_printf(&w, ", (%s%s *)p[%d]", i < c->n_in ? "const " : "", t, i);
        for (int k = 0; k < c->n_attr; k++) {
            int a = c->attr_idx[k];
            switch (c->attr_ctype[k]) {
            case 'f': w_printf(&w, ", (float)fa[%d]", a); break;
            case 'd': w_printf(&w, ", fa[%d]", a); break;
            case 'i': w_printf(&w, ", ia[%d]", a); break;
            default: w_printf(&w, ", sa[%d]", a); break;
            }
        }
        w_puts(&w, ");\n}\n");
    }
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
        void *fp = dlsym(dl, sym);
        GC_ASSERT(fp);
        memcpy(&f->wraps[s], &fp, sizeof fp); /* object to function pointer (POSIX) */
    }
    f->dl = dl;
    return 0;
}

static int custom_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    const IrCustomCall *c = call_of(n);
    CustomFile *f = &files[c->file];
    if (compile_file(f, d)) return -1;
    int64_t cnt = ir_numel(&n->in[0]->shape);
    int np = c->n_in + c->n_out;
    size_t es = ir_dtype_size(c->dtype);
    void **p = calloc((size_t)np + 1, sizeof *p);
    const OpDesc *od = ir_op(n->op);
    double *fa = calloc((size_t)od->n_attrs + 1, sizeof *fa);
    int64_t *ia = calloc((size_t)od->n_attrs + 1, sizeof *ia);
    const char **sa = calloc((size_t)od->n_attrs + 1, sizeof *sa);
    GC_ASSERT(p && fa && ia && sa);
    for (int k = 0; k < od->n_attrs; k++) {
        fa[k] = n->attrs[k].f;
        ia[k] = n->attrs[k].i;
        sa[k] = n->attrs[k].s ? n->attrs[k].s : "";
    }
    for (int i = 0; i < np; i++) {
        p[i] = malloc((size_t)(cnt ? cnt : 1) * es);
        GC_ASSERT(p[i]);
        if (i < c->n_in)
            for (int64_t e = 0; e < cnt; e++) ir_store_f64(c->dtype, p[i], (size_t)e, in[i][e]);
    }
    f->wraps[c->slot](cnt, p, fa, ia, sa);
    for (int j = 0; j < c->n_out; j++)
        for (int64_t e = 0; e < cnt; e++) out[j][e] = ir_load_f64(c->dtype, p[c->n_in + j], (size_t)e);
    for (int i = 0; i < np; i++) free(p[i]);
    free(p);
    free(fa);
    free(ia);
    free(sa);
    return 0;
}

static int custom_gradient(GradCtx *gc)
{
    const Node *n = gc->n;
    const CustomOp *op = ops[n->op - OP_COUNT];
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

/* ---- loading ------------------------------------------------------------- */

static char *xstrdup(const char *s)
{
    char *r = strdup(s);
    GC_ASSERT(r);
    return r;
}

/* Counts the leading run of parameters from `from` that are pointers with
 * the given const-ness. */
static int count_ptrs(const Func *f, int from, int is_const)
{
    int k = from;
    while (k < f->n_p && f->p[k].ptr && f->p[k].is_const == is_const) k++;
    return k - from;
}

static CustomOp *new_op(const char *domain, const char *name, int file, const Func *f, DType dt)
{
    CustomOp *o = calloc(1, sizeof *o);
    GC_ASSERT(o);
    o->domain = xstrdup(domain);
    o->desc.name = xstrdup(name);
    o->call.func = xstrdup(f->name);
    o->call.file = file;
    o->call.dtype = dt;
    o->grad_kind = -1;
    o->desc.infer = custom_infer;
    o->desc.eval = custom_eval;
    o->desc.custom = &o->call;
    return o;
}

static const char **names_of(const Func *f, int from, int count)
{
    const char **v = calloc((size_t)count + 1, sizeof *v);
    GC_ASSERT(v);
    for (int i = 0; i < count; i++) v[i] = xstrdup(f->p[from + i].name);
    return v;
}

/* Sets o's call attribute parameters from f's scalars from `from`, against
 * the schema `attrs` (n_attrs); the forward op (define 1) defines it. */
static int attr_params(Reader *r, const Func *f, int from, CustomOp *o, AttrSpec *attrs, int n_attrs, int define,
                       const char *opname)
{
    int na = f->n_p - from;
    int *idx = calloc((size_t)na + 1, sizeof *idx);
    char *ct = calloc((size_t)na + 1, 1);
    GC_ASSERT(idx && ct);
    o->call.attr_idx = idx;
    o->call.attr_ctype = ct;
    o->call.n_attr = na;
    unsigned char seen[CUSTOM_MAX_PARAMS] = {0};
    for (int k = 0; k < na; k++) {
        const Param *p = &f->p[from + k];
        char c = p->type == PT_F32 ? 'f' : p->type == PT_F64 ? 'd' : p->type == PT_I64 ? 'i' : 's';
        if (p->ptr)
            return rerr(r, p->line, "'%s': parameter '%s' is a pointer after the attributes (pointers come first)",
                        f->name, p->name);
        AttrKind kind = c == 'i' ? ATTR_INT : c == 's' ? ATTR_STRING : ATTR_FLOAT;
        if (define) {
            for (int q = 0; q < k; q++)
                if (!strcmp(attrs[q].name, p->name))
                    return rerr(r, p->line, "'%s': attribute '%s' is declared twice", f->name, p->name);
            attrs[k] = (AttrSpec){xstrdup(p->name), kind, NULL, 1};
            idx[k] = k;
        } else {
            int a = -1;
            for (int q = 0; q < n_attrs; q++)
                if (!strcmp(attrs[q].name, p->name)) a = q;
            if (a < 0)
                return rerr(r, p->line, "gradient '%s': parameter '%s' is not an attribute of op '%s'", f->name, p->name,
                            opname);
            if (attrs[a].kind != kind)
                return rerr(r, p->line, "gradient '%s': attribute '%s' is %s here but has another type in op '%s'",
                            f->name, p->name, ctype_name(p->type), opname);
            if (seen[a]) return rerr(r, p->line, "gradient '%s': attribute '%s' is given twice", f->name, p->name);
            seen[a] = 1;
            idx[k] = a;
        }
        ct[k] = c;
    }
    if (!define)
        for (int a = 0; a < n_attrs; a++)
            if (!seen[a])
                return rerr(r, f->line, "gradient '%s' lacks parameter '%s' (op '%s' passes the same attributes to "
                                        "its gradient)", f->name, attrs[a].name, opname);
    return 0;
}

/* Builds the forward op of f (an elementwise GRAPHC_OP). */
static int build_op(Reader *r, const Func *f, int file, CustomOp **out)
{
    *out = NULL;
    if (f->n_p < 1 || f->p[0].ptr || f->p[0].type != PT_I64)
        return rerr(r, f->n_p ? f->p[0].line : f->line, "'%s': the first parameter must be the element count (int64_t n)",
                    f->name);
    int nin = count_ptrs(f, 1, 1), nout = count_ptrs(f, 1 + nin, 0);
    if (nin == 0) return rerr(r, f->line, "'%s' takes no input: its inputs are 'const float *' parameters after the count", f->name);
    if (nout == 0) return rerr(r, f->line, "'%s' writes no output: its outputs are 'float *' parameters after the inputs", f->name);
    ParamType t = f->p[1].type;
    if (t != PT_F32 && t != PT_F64)
        return rerr(r, f->p[1].line, "'%s': tensors must be float or double", f->name);
    for (int i = 1; i < 1 + nin + nout; i++)
        if (f->p[i].type != t) {
            char b[64];
            ptr_type(&f->p[i], b, sizeof b);
            return rerr(r, f->p[i].line, "'%s': parameter '%s' is '%s' but the op's dtype is %s (from its first input)",
                        f->name, f->p[i].name, b, ctype_name(t));
        }
    CustomOp *o = new_op(f->domain, f->op, file, f, t == PT_F64 ? DT_F64 : DT_F32);
    o->call.n_in = nin;
    o->call.n_out = nout;
    o->desc.min_in = o->desc.max_in = nin;
    o->desc.min_out = o->desc.max_out = nout;
    o->desc.in_names = names_of(f, 1, nin);
    o->desc.out_names = names_of(f, 1 + nin, nout);
    int na = f->n_p - 1 - nin - nout;
    AttrSpec *attrs = calloc((size_t)na + 1, sizeof *attrs);
    GC_ASSERT(attrs);
    o->desc.attrs = attrs;
    o->desc.n_attrs = na;
    o->owns_attrs = 1;
    *out = o;
    return attr_params(r, f, 1 + nin + nout, o, attrs, na, 1, f->op);
}

/* Checks gradient function g against forward op fo and builds the op NAMEGrad. */
static int build_grad(Reader *r, const Func *g, const CustomOp *fo, int file, CustomOp **out)
{
    *out = NULL;
    const char *on = fo->desc.name;
    int nin = fo->call.n_in, nout = fo->call.n_out;
    ParamType t = fo->call.dtype == DT_F64 ? PT_F64 : PT_F32;
    if (g->n_p < 1 || g->p[0].ptr || g->p[0].type != PT_I64)
        return rerr(r, g->n_p ? g->p[0].line : g->line, "gradient '%s': the first parameter must be the element count (int64_t n)",
                    g->name);
    int np = nin + 2 * nout + nin;
    int got_ptrs = 0;
    while (1 + got_ptrs < g->n_p && g->p[1 + got_ptrs].ptr) got_ptrs++;
    if (got_ptrs < np) {
        char want[1024];
        size_t len = 0;
        for (int k = 0; k < np && len < sizeof want; k++) {
            int written = k >= nin + 2 * nout;
            const char *nm = k < nin ? fo->desc.in_names[k] : k < nin + nout ? fo->desc.out_names[k - nin] : NULL;
            char buf[128];
            if (k < nin + nout) snprintf(buf, sizeof buf, "%s", nm);
            else if (k < nin + 2 * nout) snprintf(buf, sizeof buf, "the gradient of output '%s'", fo->desc.out_names[k - nin - nout]);
            else snprintf(buf, sizeof buf, "the gradient of input '%s'", fo->desc.in_names[k - nin - 2 * nout]);
            len += (size_t)snprintf(want + len, sizeof want - len, "%s%s%s * (%s)", k ? ", " : "", written ? "" : "const ",
                                    ctype_name(t), buf);
        }
        return rerr(r, g->line, "gradient '%s' of '%s' lacks a parameter: it has %d pointer parameters, expected %d: %s",
                    g->name, on, got_ptrs, np, want);
    }
    for (int k = 0; k < np; k++) {
        const char *role;
        const char *of;
        int written = k >= nin + 2 * nout;
        if (k < nin) { role = "input"; of = fo->desc.in_names[k]; }
        else if (k < nin + nout) { role = "output"; of = fo->desc.out_names[k - nin]; }
        else if (k < nin + 2 * nout) { role = "the gradient of output"; of = fo->desc.out_names[k - nin - nout]; }
        else { role = "the gradient of input"; of = fo->desc.in_names[k - nin - 2 * nout]; }
        char want[64];
        snprintf(want, sizeof want, "%s%s *", written ? "" : "const ", ctype_name(t));
        const Param *p = 1 + k < g->n_p ? &g->p[1 + k] : NULL;
        if (!p || !p->ptr)
            return rerr(r, p ? p->line : g->line, "gradient '%s' of '%s' lacks parameter %d: expected '%s' (%s '%s')",
                        g->name, on, k + 2, want, role, of);
        char got[64];
        ptr_type(p, got, sizeof got);
        if (p->type != t)
            return rerr(r, p->line, "gradient '%s' of '%s': parameter '%s' is '%s' but the op's dtype is %s (expected '%s', %s '%s')",
                        g->name, on, p->name, got, ctype_name(t), want, role, of);
        if (p->is_const == written)
            return rerr(r, p->line, "gradient '%s' of '%s': parameter '%s' (%s '%s') must be '%s', not '%s'", g->name, on,
                        p->name, role, of, want, got);
    }
    if (1 + np < g->n_p && g->p[1 + np].ptr)
        return rerr(r, g->p[1 + np].line, "gradient '%s' of '%s': parameter '%s' is one pointer too many (expected %d inputs, "
                                          "%d outputs, %d output gradients and %d input gradients)",
                    g->name, on, g->p[1 + np].name, nin, nout, nout, nin);
    char gname[96];
    snprintf(gname, sizeof gname, "%sGrad", on);
    CustomOp *o = new_op(fo->domain, gname, file, g, fo->call.dtype);
    o->call.n_in = nin + 2 * nout;
    o->call.n_out = nin;
    o->desc.min_in = o->desc.max_in = nin + 2 * nout;
    o->desc.min_out = o->desc.max_out = nin;
    o->desc.in_names = names_of(g, 1, nin + 2 * nout);
    o->desc.out_names = names_of(g, 1 + nin + 2 * nout, nin);
    o->desc.attrs = fo->desc.attrs;
    o->desc.n_attrs = fo->desc.n_attrs;
    *out = o;
    return attr_params(r, g, 1 + np, o, (AttrSpec *)fo->desc.attrs, fo->desc.n_attrs, 0, on);
}

static void free_op(CustomOp *o)
{
    if (!o) return;
    free(o->domain);
    free((char *)o->desc.name);
    free((char *)o->call.func);
    free((int *)o->call.attr_idx);
    free((char *)o->call.attr_ctype);
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

int ir_custom_load(const char *path, const char *header, size_t header_len, Diag *d)
{
    if (n_files == CUSTOM_MAX_FILES) return diag_error(d, "%s: at most %d --ops files", path, CUSTOM_MAX_FILES);
    FILE *fp = fopen(path, "rb");
    if (!fp) return diag_error(d, "%s: cannot open: %s", path, strerror(errno));
    Writer text;
    w_init(&text);
    char buf[4096];
    size_t got;
    while ((got = fread(buf, 1, sizeof buf, fp)) > 0) w_printf(&text, "%.*s", (int)got, buf);
    int rerr_io = ferror(fp);
    fclose(fp);
    if (rerr_io) {
        w_free(&text);
        return diag_error(d, "%s: cannot read", path);
    }
    Reader r = {path, text.buf ? text.buf : "", NULL, NULL, d};
    r.end = r.s + text.len;
    Func *fs = NULL;
    int n_fs = 0, rc = 0;
    for (const char *q = r.s; q < r.end && !rc;) {
        const char *eol = memchr(q, '\n', (size_t)(r.end - q));
        if (!eol) eol = r.end;
        const char *t = q;
        while (t < eol && (*t == ' ' || *t == '\t')) t++;
        int is_op = eol - t >= 9 && !strncmp(t, "GRAPHC_OP", 9) && !is_id((unsigned char)t[9]);
        int is_grad = eol - t >= 11 && !strncmp(t, "GRAPHC_GRAD", 11) && !is_id((unsigned char)t[11]);
        if (is_op || is_grad) {
            Func *nf = realloc(fs, sizeof *fs * (size_t)(n_fs + 1));
            GC_ASSERT(nf);
            fs = nf;
            Func *f = &fs[n_fs++];
            memset(f, 0, sizeof *f);
            f->is_grad = is_grad;
            f->line = line_of(&r, t);
            r.p = t + (is_op ? 9 : 11);
            rc = read_func(&r, f);
            q = r.p < r.end ? r.p : r.end;
            continue;
        }
        q = eol + 1;
    }
    if (!rc && n_fs == 0) rc = diag_error(d, "%s:1: no GRAPHC_OP annotation (see graphc/custom_op.h)", path);
    /* build every op, then every gradient, all-or-nothing */
    CustomOp **made = calloc((size_t)(2 * n_fs) + 1, sizeof *made);
    int n_made = 0;
    GC_ASSERT(made);
    int file = n_files;
    for (int i = 0; i < n_fs && !rc; i++) {
        const Func *f = &fs[i];
        if (f->is_grad) continue;
        if (ir_op_lookup(f->op) >= 0)
            rc = rerr(&r, f->line, "op '%s' is already defined (graphc or an earlier --ops file has an op of that name)", f->op);
        for (int k = 0; k < n_made && !rc; k++)
            if (!strcmp(made[k]->desc.name, f->op)) rc = rerr(&r, f->line, "op '%s' is declared twice", f->op);
        CustomOp *o = NULL;
        if (!rc) rc = build_op(&r, f, file, &o);
        if (o) made[n_made++] = o;
    }
    int n_fwd = n_made;
    for (int i = 0; i < n_fs && !rc; i++) {
        const Func *g = &fs[i];
        if (!g->is_grad) continue;
        CustomOp *fo = NULL;
        for (int k = 0; k < n_fwd; k++)
            if (!strcmp(made[k]->desc.name, g->op) && !strcmp(made[k]->domain, g->domain)) fo = made[k];
        if (!fo) {
            rc = rerr(&r, g->line, "GRAPHC_GRAD(\"%s\", \"%s\"): no GRAPHC_OP in this file declares that op", g->domain, g->op);
            break;
        }
        if (fo->grad_kind != -1) {
            rc = rerr(&r, g->line, "op '%s' has two gradient functions", g->op);
            break;
        }
        CustomOp *o = NULL;
        rc = build_grad(&r, g, fo, file, &o);
        if (o) made[n_made++] = o;
        if (!rc) {
            if (ir_op_lookup(o->desc.name) >= 0)
                rc = rerr(&r, g->line, "op '%s' (the gradient of '%s') is already defined", o->desc.name, g->op);
            fo->grad_kind = OP_COUNT + n_ops + (n_made - 1); /* its kind once registered */
        }
    }
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
    memcpy(cf->text, r.s, text.len);
    cf->text[text.len] = 0;
    cf->header = header;
    cf->header_len = header_len;
    cf->calls = calloc((size_t)n_made + 1, sizeof *cf->calls);
    GC_ASSERT(cf->calls);
    for (int k = 0; k < n_made; k++) {
        CustomOp *o = made[k];
        if (o->grad_kind >= 0) {
            o->desc.gradient = custom_gradient;
            o->desc.backward_reads = ir_bw_all;
        }
        o->call.slot = cf->n_funcs;
        cf->calls[cf->n_funcs++] = &o->call;
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
    for (int q = 0; q < n_ops; q++)
        if (ops[q]->grad_kind == k) return -2;
    return ops[k - OP_COUNT]->grad_kind;
}
