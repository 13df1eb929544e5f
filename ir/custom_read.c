/* custom_read.c — graphc's own reader of user-operator files
 * (ir/custom_read.h), for builds without libclang and for files in the
 * plain form.
 *
 * A line that starts with GRAPHC_OP, GRAPHC_GRAD, GRAPHC_SHAPE or
 * GRAPHC_WORKSPACE must be followed by a prototype `RET NAME(PARAMS)` whose
 * return type is void, `const char *` or int64_t and whose parameters are
 * `[const] TYPE [*] NAME` with TYPE one of int64_t, float, double, char,
 * graphc_tensor and void. A GRAPHC_INPLACE line stands alone. Any other
 * type (a typedef, a macro) needs a real C parser: the error names the file
 * and line and says so.
 */
#include "custom_read.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    "(graphc's own reader accepts only the plain forms of graphc/custom_op.h: parameters int64_t, float, double, "
    "const char *, [const] float/double *, [const] graphc_tensor * and void *, no typedefs or macros; "
    "a graphc built with libclang reads any C)";

/* [const] TYPE [*] into t; 0, or -1 when TYPE is not one the reader knows. */
static int read_type(Reader *r, CustomParam *t)
{
    char a[64];
    ident(r, a, sizeof a);
    if (!strcmp(a, "const")) {
        t->is_const = 1;
        ident(r, a, sizeof a);
    }
    if (!strcmp(a, "int64_t")) t->type = CT_I64;
    else if (!strcmp(a, "float")) t->type = CT_F32;
    else if (!strcmp(a, "double")) t->type = CT_F64;
    else if (!strcmp(a, "char")) t->type = CT_STR;
    else if (!strcmp(a, "graphc_tensor")) t->type = CT_TENSOR;
    else if (!strcmp(a, "void")) t->type = CT_VOID;
    else return -1;
    if (punct(r, '*')) t->ptr = 1;
    skip_space(r);
    if (r->p < r->end && *r->p == '*') return -1; /* two levels */
    snprintf(t->spelling, sizeof t->spelling, "%s%s%s", t->is_const ? "const " : "", a, t->ptr ? " *" : "");
    return 0;
}

/* Reads one parameter up to ',' or ')'. */
static int read_param(Reader *r, CustomFunc *f, CustomParam *pa)
{
    char b[64];
    memset(pa, 0, sizeof *pa);
    skip_space(r);
    pa->line = line_of(r, r->p);
    const char *start = r->p;
    if (read_type(r, pa)) goto unreadable;
    ident(r, b, sizeof b);
    if (!b[0] || !strcmp(b, "const")) goto unreadable;
    snprintf(pa->name, sizeof pa->name, "%s", b);
    skip_space(r);
    if (r->p >= r->end || (*r->p != ',' && *r->p != ')')) goto unreadable;
    return 0;
unreadable:;
    const char *e = start;
    while (e < r->end && *e != ',' && *e != ')' && *e != '\n') e++;
    return rerr(r, pa->line, "cannot read parameter '%.*s' of '%s' %s", (int)(e - start), start, f->name, needs_libclang);
}

static const char *macro_of(CustomRole role)
{
    static const char *const m[] = {"GRAPHC_OP", "GRAPHC_GRAD", "GRAPHC_SHAPE", "GRAPHC_WORKSPACE", "GRAPHC_INPLACE"};
    return m[role];
}

/* Reads the annotation at r->p (after the macro name) and the prototype. */
static int read_func(Reader *r, CustomFunc *f)
{
    int line = f->line;
    const char *mac = macro_of(f->role);
    if (!punct(r, '(') || string_lit(r, f->domain, sizeof f->domain) || !punct(r, ',') ||
        string_lit(r, f->op, sizeof f->op))
        return rerr(r, line, "expected %s(\"domain\", \"Name\"%s)", mac,
                    f->role == CF_OP ? ", GRAPHC_ELEMENTWISE" : f->role == CF_INPLACE ? ", \"output\", \"input\"" : "");
    if (f->role == CF_OP) {
        char kind[64];
        if (!punct(r, ',')) return rerr(r, line, "GRAPHC_OP needs a kind: GRAPHC_ELEMENTWISE or GRAPHC_GENERAL");
        ident(r, kind, sizeof kind);
        if (!strcmp(kind, "GRAPHC_ELEMENTWISE")) f->kind = 1;
        else if (!strcmp(kind, "GRAPHC_GENERAL")) f->kind = 2;
        else return rerr(r, line, "op '%s': unknown kind '%s' (expected GRAPHC_ELEMENTWISE or GRAPHC_GENERAL)", f->op, kind);
    }
    if (f->role == CF_INPLACE) {
        if (!punct(r, ',') || string_lit(r, f->inplace_out, sizeof f->inplace_out) || !punct(r, ',') ||
            string_lit(r, f->inplace_in, sizeof f->inplace_in))
            return rerr(r, line, "expected GRAPHC_INPLACE(\"domain\", \"Name\", \"output\", \"input\")");
    }
    if (!punct(r, ')')) return rerr(r, line, "expected ')' to close the annotation");
    if (f->role == CF_INPLACE) return 0;
    skip_space(r);
    f->fline = line_of(r, r->p);
    const char *start = r->p;
    if (read_type(r, &f->ret) || (f->ret.ptr && !(f->ret.type == CT_STR && f->ret.is_const)) ||
        (!f->ret.ptr && f->ret.type != CT_VOID && f->ret.type != CT_I64))
        return rerr(r, f->fline, "expected a function 'void NAME(...)'%s after the annotation of '%s', not '%.*s' %s",
                    f->role == CF_SHAPE ? " (a shape rule: 'const char *NAME(...)')" :
                    f->role == CF_WORKSPACE ? " (a workspace request: 'int64_t NAME(...)')" : "",
                    f->op, (int)strcspn(start, "(\n"), start, needs_libclang);
    ident(r, f->name, sizeof f->name);
    if (!f->name[0] || !punct(r, '('))
        return rerr(r, f->fline, "expected a function 'RET NAME(...)' after the annotation of '%s' %s", f->op, needs_libclang);
    if (punct(r, ')')) return 0;
    {
        const char *save = r->p;
        char v[16];
        ident(r, v, sizeof v);
        if (!strcmp(v, "void") && punct(r, ')')) return 0;
        r->p = save;
    }
    for (;;) {
        if (f->n_p == CUSTOM_MAX_PARAMS) return rerr(r, f->fline, "'%s' has too many parameters", f->name);
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

int custom_read_plain(const char *path, const char *text, size_t len, CustomFunc **out, int *n_out, Diag *d)
{
    Reader r = {path, text, text + len, text, d};
    CustomFunc *fs = NULL;
    int n_fs = 0, rc = 0;
    static const CustomRole roles[] = {CF_WORKSPACE, CF_INPLACE, CF_SHAPE, CF_GRAD, CF_OP};
    for (const char *q = r.s; q < r.end && !rc;) {
        const char *eol = memchr(q, '\n', (size_t)(r.end - q));
        if (!eol) eol = r.end;
        const char *t = q;
        while (t < eol && (*t == ' ' || *t == '\t')) t++;
        int role = -1;
        size_t ml = 0;
        for (size_t k = 0; k < sizeof roles / sizeof roles[0] && role < 0; k++) {
            const char *m = macro_of(roles[k]);
            ml = strlen(m);
            if ((size_t)(eol - t) >= ml && !strncmp(t, m, ml) && (t + ml == eol || !is_id((unsigned char)t[ml])))
                role = (int)roles[k];
        }
        if (role >= 0) {
            CustomFunc *nf = realloc(fs, sizeof *fs * (size_t)(n_fs + 1));
            GC_ASSERT(nf);
            fs = nf;
            CustomFunc *f = &fs[n_fs++];
            memset(f, 0, sizeof *f);
            f->role = (CustomRole)role;
            f->line = line_of(&r, t);
            r.p = t + ml;
            rc = read_func(&r, f);
            q = r.p < r.end ? r.p : r.end;
            if (q < r.end && *q != '\n') {
                const char *e = memchr(q, '\n', (size_t)(r.end - q));
                if (f->role == CF_INPLACE) q = e ? e + 1 : r.end;
            }
            continue;
        }
        q = eol + 1;
    }
    if (rc) {
        free(fs);
        return -1;
    }
    *out = fs;
    *n_out = n_fs;
    return 0;
}

#ifndef GRAPHC_HAVE_LIBCLANG
int custom_have_libclang(void) { return 0; }

int custom_read_clang(const char *path, const char *text, size_t len, const char *header, size_t header_len,
                      CustomFunc **out, int *n_out, Diag *d)
{
    (void)text, (void)len, (void)header, (void)header_len, (void)out, (void)n_out;
    return diag_error(d, "%s: this graphc was built without libclang (CMake -DGRAPHC_LIBCLANG=OFF, or libclang-dev "
                         "missing)", path);
}
#endif
