/* custom_clang.c — the libclang reader of user-operator files
 * (ir/custom_read.h), in builds configured with GRAPHC_LIBCLANG (CMake
 * defines GRAPHC_HAVE_LIBCLANG and links libclang).
 *
 * Where graphc's own reader (custom_read.c) reads lines of text, this one
 * has clang parse the file as C (gnu11, the dialect `cc` compiles it in),
 * so typedefs, macros and local includes are resolved. The file is parsed
 * from memory under its own path, with GRAPHC_ANNOTATE defined and the
 * caller's copy of graphc/custom_op.h written to a temporary folder that
 * comes first on the include path (then the file's own folder); under
 * GRAPHC_ANNOTATE the header turns each annotation into an `annotate`
 * attribute, "graphc|ROLE|domain|name[|kind | |out|in]", that clang keeps
 * on the declaration that follows (GRAPHC_INPLACE declares a variable to
 * carry its own). Function bodies are skipped: whether they compile is
 * the compile step's question, which gets the compiler's own message. The
 * parse's first error is the reader's, "FILE:LINE: message" (adding that
 * the file does not include graphc/custom_op.h, when it does not).
 *
 * The records are those custom_read.c gives for a plain-form file: one per
 * annotation of a top-level declaration of the main file, in file order;
 * a function declared twice (a prototype, then the definition) is reported
 * once, at its first annotated declaration, with parameter names that
 * declaration lacks taken from a later one. Types are classified through
 * typedefs (the canonical type): a 64-bit signed integer is CT_I64, char
 * CT_STR, struct graphc_tensor CT_TENSOR, one level of pointer sets ptr, and
 * is_const is the pointee's const (the value's for a scalar); anything else
 * (int, arrays, two levels of pointers) is CT_OTHER. Spellings are clang's
 * of the type as written ("const real *"). `line` is the expansion line of
 * the annotate attribute, i.e. of the GRAPHC_* macro (the function's, when
 * the attribute comes from a declaration in another file); `fline` that of the
 * function's name; a parameter's that of its first token; the return
 * type's is 0, as in custom_read.c. The one thing this reader judges is the
 * annotation itself (its kind, empty or overlong names), with
 * custom_read.c's messages. A domain or name holding '|' cannot be split
 * back and is refused as a malformed annotation.
 */
#ifdef GRAPHC_HAVE_LIBCLANG

#include "custom_read.h"

#include <clang-c/Index.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int custom_have_libclang(void) { return 1; }

typedef struct Seen { /* a function already reported, with its role */
    CXCursor canon;
    CustomRole role;
    int index;
} Seen;

typedef struct ClangRead {
    const char *path;
    Diag *d;
    CXFile main_file;
    CustomFunc *fs;
    int n_fs;
    Seen *seen;
    int n_seen;
    int rc;
    int has_header; /* the file included graphc/custom_op.h */
} ClangRead;

/* Whether loc, or the macro use it comes from, is in the file read. */
static int in_main_file(const ClangRead *r, CXSourceLocation loc)
{
    CXFile f = NULL;
    clang_getExpansionLocation(loc, &f, NULL, NULL, NULL);
    return f && r->main_file && clang_File_isEqual(f, r->main_file);
}

static int expansion_line(CXSourceLocation loc)
{
    unsigned line = 0;
    clang_getExpansionLocation(loc, NULL, &line, NULL, NULL);
    return (int)line;
}

static unsigned expansion_offset(CXSourceLocation loc)
{
    unsigned off = 0;
    clang_getExpansionLocation(loc, NULL, NULL, NULL, &off);
    return off;
}

static void copy_string(CXString s, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s", clang_getCString(s) ? clang_getCString(s) : "");
    clang_disposeString(s);
}

/* The type `declared` (as written) into t; see the file comment. */
static void read_type(CXType declared, CustomParam *t)
{
    copy_string(clang_getTypeSpelling(declared), t->spelling, sizeof t->spelling);
    CXType c = clang_getCanonicalType(declared);
    if (c.kind == CXType_Pointer) {
        t->ptr = 1;
        c = clang_getCanonicalType(clang_getPointeeType(c));
    }
    t->is_const = clang_isConstQualifiedType(c) != 0;
    switch (c.kind) {
    case CXType_Float: t->type = CT_F32; break;
    case CXType_Double: t->type = CT_F64; break;
    case CXType_Long:
    case CXType_LongLong: t->type = clang_Type_getSizeOf(c) == 8 ? CT_I64 : CT_OTHER; break;
    case CXType_Char_S:
    case CXType_Char_U: t->type = CT_STR; break;
    case CXType_Void: t->type = CT_VOID; break;
    case CXType_Record: {
        CXCursor decl = clang_getTypeDeclaration(c);
        char name[64];
        copy_string(clang_getCursorSpelling(decl), name, sizeof name);
        t->type = decl.kind == CXCursor_StructDecl && !strcmp(name, "graphc_tensor") ? CT_TENSOR : CT_OTHER;
        break;
    }
    default: t->type = CT_OTHER; break;
    }
}

typedef struct Annot {
    char text[512];
    int line;
    unsigned offset;
} Annot;

typedef struct Annots {
    const ClangRead *r;
    CXCursor decl;
    Annot a[8];
    int n;
} Annots;

static enum CXChildVisitResult annot_visitor(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    Annots *as = data;
    if (c.kind != CXCursor_AnnotateAttr || as->n == (int)(sizeof as->a / sizeof as->a[0])) return CXChildVisit_Continue;
    Annot *a = &as->a[as->n];
    copy_string(clang_getCursorSpelling(c), a->text, sizeof a->text);
    if (strncmp(a->text, "graphc|", 7)) return CXChildVisit_Continue;
    /* an attribute inherited from a declaration in another file: the function's line */
    CXSourceLocation at = in_main_file(as->r, clang_getCursorLocation(c)) ? clang_getCursorLocation(c)
                                                                           : clang_getCursorLocation(as->decl);
    a->line = expansion_line(at);
    a->offset = expansion_offset(at);
    as->n++;
    return CXChildVisit_Continue;
}

static int annot_cmp(const void *x, const void *y)
{
    const Annot *a = x, *b = y;
    return (a->offset > b->offset) - (a->offset < b->offset);
}

/* Splits "graphc|ROLE|f1|f2|..." into f[0..max); the number of fields.
 * *too_long is set when one does not fit in cap. */
static int split_fields(const char *s, char f[][128], int max, size_t cap, int *too_long)
{
    int n = 0;
    for (const char *p = s;; n++) {
        const char *e = strchr(p, '|');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (n < max) {
            if (len + 1 > cap) *too_long = 1;
            snprintf(f[n], cap, "%.*s", (int)len, p);
        }
        if (!e) return n + 1;
        p = e + 1;
    }
}

/* Fills f's role, kind, domain, op and inplace pair from an annotation. */
static int read_annotation(ClangRead *r, const Annot *a, CustomFunc *f)
{
    static const char *const roles[] = {"op", "grad", "shape", "workspace", "inplace"};
    static const char *const macros[] = {"GRAPHC_OP", "GRAPHC_GRAD", "GRAPHC_SHAPE", "GRAPHC_WORKSPACE",
                                         "GRAPHC_INPLACE"};
    static const int n_fields[] = {5, 4, 4, 4, 6};
    char fl[6][128];
    int too_long = 0;
    int n = split_fields(a->text, fl, 6, sizeof fl[0], &too_long);
    int role = -1;
    for (int k = 0; k < 5 && n >= 2; k++)
        if (!strcmp(fl[1], roles[k])) role = k;
    if (role < 0) return diag_error(r->d, "%s:%d: unknown graphc annotation '%s'", r->path, a->line, a->text);
    f->role = (CustomRole)role;
    f->line = a->line;
    if (n != n_fields[role] || too_long || !fl[2][0] || !fl[3][0] || strlen(fl[2]) >= sizeof f->domain ||
        strlen(fl[3]) >= sizeof f->op ||
        (role == CF_INPLACE && (!fl[4][0] || !fl[5][0] || strlen(fl[4]) >= sizeof f->inplace_out ||
                                strlen(fl[5]) >= sizeof f->inplace_in)))
        return diag_error(r->d, "%s:%d: expected %s(\"domain\", \"Name\"%s)", r->path, a->line, macros[role],
                          role == CF_OP ? ", GRAPHC_ELEMENTWISE" : role == CF_INPLACE ? ", \"output\", \"input\"" : "");
    memcpy(f->domain, fl[2], strlen(fl[2]) + 1); /* lengths checked above */
    memcpy(f->op, fl[3], strlen(fl[3]) + 1);
    if (role == CF_OP) {
        if (!strcmp(fl[4], "GRAPHC_ELEMENTWISE")) f->kind = 1;
        else if (!strcmp(fl[4], "GRAPHC_GENERAL")) f->kind = 2;
        else
            return diag_error(r->d, "%s:%d: op '%s': unknown kind '%s' (expected GRAPHC_ELEMENTWISE or GRAPHC_GENERAL)",
                              r->path, a->line, f->op, fl[4]);
    }
    if (role == CF_INPLACE) {
        memcpy(f->inplace_out, fl[4], strlen(fl[4]) + 1);
        memcpy(f->inplace_in, fl[5], strlen(fl[5]) + 1);
    }
    return 0;
}

/* The function's name, return type and parameters into f. */
static int read_function(ClangRead *r, CXCursor c, CustomFunc *f)
{
    copy_string(clang_getCursorSpelling(c), f->name, sizeof f->name);
    f->fline = expansion_line(clang_getCursorLocation(c));
    read_type(clang_getCursorResultType(c), &f->ret);
    int n = clang_Cursor_getNumArguments(c);
    CXType ft = clang_getCursorType(c);
    int variadic = ft.kind == CXType_FunctionProto && clang_isFunctionTypeVariadic(ft);
    if (n < 0 || n + variadic > CUSTOM_MAX_PARAMS)
        return diag_error(r->d, "%s:%d: '%s' has too many parameters", r->path, f->fline, f->name);
    for (int i = 0; i < n; i++) {
        CXCursor pc = clang_Cursor_getArgument(c, (unsigned)i);
        CustomParam *pa = &f->p[f->n_p++];
        copy_string(clang_getCursorSpelling(pc), pa->name, sizeof pa->name);
        pa->line = expansion_line(clang_getRangeStart(clang_getCursorExtent(pc)));
        read_type(clang_getCursorType(pc), pa);
    }
    if (variadic) { /* custom_op.c refuses it as a parameter of another type */
        CustomParam *pa = &f->p[f->n_p++];
        pa->type = CT_OTHER;
        pa->line = f->fline;
        snprintf(pa->spelling, sizeof pa->spelling, "...");
    }
    return 0;
}

/* A later declaration of an already reported function: names the parameters
 * the first one left unnamed. */
static void fill_names(CXCursor c, CustomFunc *f)
{
    int n = clang_Cursor_getNumArguments(c);
    for (int i = 0; i < n && i < f->n_p; i++)
        if (!f->p[i].name[0]) copy_string(clang_getCursorSpelling(clang_Cursor_getArgument(c, (unsigned)i)),
                                          f->p[i].name, sizeof f->p[i].name);
}

static int seen_index(const ClangRead *r, CXCursor canon, CustomRole role)
{
    for (int i = 0; i < r->n_seen; i++)
        if (r->seen[i].role == role && clang_equalCursors(r->seen[i].canon, canon)) return r->seen[i].index;
    return -1;
}

/* One top-level declaration of the main file. */
static int read_decl(ClangRead *r, CXCursor c)
{
    Annots as = {.r = r, .decl = c, .n = 0};
    clang_visitChildren(c, annot_visitor, &as);
    qsort(as.a, (size_t)as.n, sizeof as.a[0], annot_cmp);
    int is_func = c.kind == CXCursor_FunctionDecl;
    CXCursor canon = clang_getCanonicalCursor(c);
    for (int k = 0; k < as.n; k++) {
        CustomFunc f;
        memset(&f, 0, sizeof f);
        if (read_annotation(r, &as.a[k], &f)) return -1;
        if (f.role == CF_INPLACE) {
            if (c.kind != CXCursor_VarDecl)
                return diag_error(r->d, "%s:%d: GRAPHC_INPLACE must stand on a line of its own", r->path, f.line);
        } else if (!is_func) {
            return diag_error(r->d, "%s:%d: expected a function after the annotation of '%s'", r->path, f.line, f.op);
        } else {
            int at = seen_index(r, canon, f.role);
            if (at >= 0) {
                fill_names(c, &r->fs[at]);
                continue;
            }
            if (read_function(r, c, &f)) return -1;
        }
        CustomFunc *nf = realloc(r->fs, sizeof *nf * (size_t)(r->n_fs + 1));
        GC_ASSERT(nf);
        r->fs = nf;
        r->fs[r->n_fs] = f;
        if (f.role != CF_INPLACE) {
            Seen *ns = realloc(r->seen, sizeof *ns * (size_t)(r->n_seen + 1));
            GC_ASSERT(ns);
            r->seen = ns;
            r->seen[r->n_seen++] = (Seen){canon, f.role, r->n_fs};
        }
        r->n_fs++;
    }
    return 0;
}

static enum CXChildVisitResult top_visitor(CXCursor c, CXCursor parent, CXClientData data)
{
    (void)parent;
    ClangRead *r = data;
    if (!in_main_file(r, clang_getCursorLocation(c))) return CXChildVisit_Continue;
    if (c.kind != CXCursor_FunctionDecl && c.kind != CXCursor_VarDecl && c.kind != CXCursor_StructDecl &&
        c.kind != CXCursor_TypedefDecl && c.kind != CXCursor_UnionDecl && c.kind != CXCursor_EnumDecl)
        return CXChildVisit_Continue;
    if (read_decl(r, c)) {
        r->rc = -1;
        return CXChildVisit_Break;
    }
    return CXChildVisit_Continue;
}

static void find_header(CXFile f, CXSourceLocation *stack, unsigned depth, CXClientData data)
{
    (void)stack, (void)depth;
    ClangRead *r = data;
    char name[4400];
    copy_string(clang_getFileName(f), name, sizeof name);
    size_t n = strlen(name), k = strlen("/graphc/custom_op.h");
    if (n >= k && !strcmp(name + n - k, "/graphc/custom_op.h")) r->has_header = 1;
}

/* The parse's first error as "FILE:LINE: message"; 0 when there is none. */
static int first_error(ClangRead *r, CXTranslationUnit tu)
{
    unsigned n = clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic dg = clang_getDiagnostic(tu, i);
        if (clang_getDiagnosticSeverity(dg) < CXDiagnostic_Error) {
            clang_disposeDiagnostic(dg);
            continue;
        }
        char msg[1024], file[512] = "";
        copy_string(clang_getDiagnosticSpelling(dg), msg, sizeof msg);
        CXSourceLocation loc = clang_getDiagnosticLocation(dg);
        CXFile cf = NULL;
        unsigned line = 0;
        clang_getExpansionLocation(loc, &cf, &line, NULL, NULL);
        if (cf && !in_main_file(r, loc)) copy_string(clang_getFileName(cf), file, sizeof file);
        clang_disposeDiagnostic(dg);
        if (!cf) return diag_error(r->d, "%s: %s", r->path, msg);
        return diag_error(r->d, "%s:%u: %s%s", file[0] ? file : r->path, line, msg,
                          r->has_header ? "" : " (the file does not #include <graphc/custom_op.h>)");
    }
    return 0;
}

/* A fresh folder holding graphc/custom_op.h (header) into dir; 0 or -1. */
static int write_header(const char *header, size_t header_len, char *dir, size_t cap)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, cap, "%s/graphc-clang-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir)) return -1;
    char sub[4200], file[4300];
    snprintf(sub, sizeof sub, "%s/graphc", dir);
    snprintf(file, sizeof file, "%s/custom_op.h", sub);
    FILE *f = NULL;
    int ok = mkdir(sub, 0700) == 0 && (f = fopen(file, "wb")) != NULL && fwrite(header, 1, header_len, f) == header_len;
    if (f && fclose(f)) ok = 0;
    if (!ok) {
        unlink(file);
        rmdir(sub);
        rmdir(dir);
        return -1;
    }
    return 0;
}

static void remove_header(const char *dir)
{
    char sub[4200], file[4300];
    snprintf(sub, sizeof sub, "%s/graphc", dir);
    snprintf(file, sizeof file, "%s/custom_op.h", sub);
    unlink(file);
    rmdir(sub);
    rmdir(dir);
}

int custom_read_clang(const char *path, const char *text, size_t len, const char *header, size_t header_len,
                      CustomFunc **out, int *n_out, Diag *d)
{
    char dir[4096], own[4096];
    if (write_header(header, header_len, dir, sizeof dir))
        return diag_error(d, "%s: cannot write graphc/custom_op.h to a temporary folder for libclang", path);
    const char *slash = strrchr(path, '/');
    if (slash) snprintf(own, sizeof own, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    else snprintf(own, sizeof own, ".");
    const char *args[] = {"-xc", "-std=gnu11", "-DGRAPHC_ANNOTATE=1", "-I", dir, "-I", own};
    struct CXUnsavedFile unsaved = {path, text, (unsigned long)len};
    CXIndex index = clang_createIndex(0, 0);
    CXTranslationUnit tu = NULL;
    enum CXErrorCode ec = clang_parseTranslationUnit2(index, path, args, (int)(sizeof args / sizeof args[0]), &unsaved,
                                                      1, CXTranslationUnit_SkipFunctionBodies, &tu);
    remove_header(dir);
    ClangRead r = {.path = path, .d = d};
    if (tu) clang_getInclusions(tu, find_header, &r);
    if (ec != CXError_Success || !tu) {
        r.rc = diag_error(d, "%s: libclang could not parse the file (error %d)", path, (int)ec);
    } else {
        r.main_file = clang_getFile(tu, path);
        r.rc = first_error(&r, tu);
    }
    if (!r.rc) clang_visitChildren(clang_getTranslationUnitCursor(tu), top_visitor, &r);
    if (tu) clang_disposeTranslationUnit(tu);
    clang_disposeIndex(index);
    free(r.seen);
    if (r.rc) {
        free(r.fs);
        return -1;
    }
    *out = r.fs;
    *n_out = r.n_fs;
    return 0;
}

#endif
