/* test_custom_read.c — the libclang reader of user-operator files
 * (ir/custom_clang.c) against graphc's own (ir/custom_read.c).
 *
 * Every file of tests/custom_ops/ and examples/custom_op/ that the plain
 * reader accepts, and a plain-form file using every annotation, give the
 * same records through both readers, field by field. A file that only a C
 * parser reads (typedefs, from the file and from a local header, a macro
 * that expands to parameters, a macro domain, a prototype then its
 * definition) is refused by the plain reader and read by libclang to its
 * canonical types; an annotated prototype in a local header makes its
 * definition in the file an operator. A syntax error, a missing include and an unknown kind
 * are one-line "FILE:LINE: ..." errors; the temporary folder goes.
 *
 * In a graphc built without libclang (GRAPHC_LIBCLANG=OFF, or libclang-dev
 * missing) there is nothing to test: the program says so and exits 77,
 * which ctest reports as skipped.
 */
#define _DEFAULT_SOURCE /* mkdtemp, setenv */
#include <dirent.h>
#include <glob.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ir/custom_read.h"

static char header[16384];
static size_t header_len;

/* The whole file at path into a malloc'ed buffer (NUL-terminated). */
static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *buf = malloc(1 << 20);
    assert_non_null(buf);
    *len = fread(buf, 1, (1 << 20) - 1, f);
    buf[*len] = 0;
    fclose(f);
    return buf;
}

static int diff_param(const char *where, const char *what, const CustomParam *a, const CustomParam *b)
{
    int bad = strcmp(a->name, b->name) || a->type != b->type || a->ptr != b->ptr || a->is_const != b->is_const ||
              a->line != b->line || strcmp(a->spelling, b->spelling);
    if (bad)
        print_error("%s: %s: plain {'%s' type %d ptr %d const %d line %d '%s'} vs libclang {'%s' type %d ptr %d "
                    "const %d line %d '%s'}\n",
                    where, what, a->name, a->type, a->ptr, a->is_const, a->line, a->spelling, b->name, b->type,
                    b->ptr, b->is_const, b->line, b->spelling);
    return bad;
}

/* The number of differences between the two readers' records of one file. */
static int diff_records(const char *path, const CustomFunc *a, int na, const CustomFunc *b, int nb)
{
    if (na != nb) {
        print_error("%s: plain reader gives %d records, libclang %d\n", path, na, nb);
        for (int i = 0; i < na || i < nb; i++)
            print_error("  %d: plain %s, libclang %s\n", i, i < na ? a[i].name : "-", i < nb ? b[i].name : "-");
        return 1;
    }
    int bad = 0;
    for (int i = 0; i < na; i++) {
        const CustomFunc *x = &a[i], *y = &b[i];
        char where[512];
        snprintf(where, sizeof where, "%s: record %d ('%s' of %s)", path, i, x->name, x->op);
        if (x->role != y->role || x->kind != y->kind || x->line != y->line || x->fline != y->fline ||
            strcmp(x->domain, y->domain) || strcmp(x->op, y->op) || strcmp(x->name, y->name) || x->n_p != y->n_p ||
            strcmp(x->inplace_out, y->inplace_out) || strcmp(x->inplace_in, y->inplace_in)) {
            print_error("%s: plain {role %d kind %d line %d fline %d %s::%s '%s' %d params %s<-%s} vs libclang "
                        "{role %d kind %d line %d fline %d %s::%s '%s' %d params %s<-%s}\n",
                        where, x->role, x->kind, x->line, x->fline, x->domain, x->op, x->name, x->n_p,
                        x->inplace_out, x->inplace_in, y->role, y->kind, y->line, y->fline, y->domain, y->op,
                        y->name, y->n_p, y->inplace_out, y->inplace_in);
            bad++;
            continue;
        }
        if (x->role == CF_INPLACE) continue;
        bad += diff_param(where, "return type", &x->ret, &y->ret);
        for (int k = 0; k < x->n_p; k++) {
            char what[32];
            snprintf(what, sizeof what, "parameter %d", k);
            bad += diff_param(where, what, &x->p[k], &y->p[k]);
        }
    }
    return bad;
}

/* Both readers on text (as the file path): 1 when the plain reader refused
 * it, else 0 after checking that libclang gives the same records. */
static int compare_readers(const char *path, const char *text, size_t len)
{
    CustomFunc *a = NULL, *b = NULL;
    int na = 0, nb = 0;
    Diag d = {0};
    if (custom_read_plain(path, text, len, &a, &na, &d)) return 1;
    Diag d2 = {0};
    int rc = custom_read_clang(path, text, len, header, header_len, &b, &nb, &d2);
    if (rc) print_error("%s: libclang reader: %s\n", path, d2.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(diff_records(path, a, na, b, nb), 0);
    free(a);
    free(b);
    return 0;
}

static void test_same_records_on_plain_files(void **state)
{
    (void)state;
    glob_t g;
    assert_int_equal(glob(GRAPHC_SOURCE_DIR "/tests/custom_ops/*.c", 0, NULL, &g), 0);
    assert_int_equal(glob(GRAPHC_SOURCE_DIR "/examples/custom_op/*.c", GLOB_APPEND, NULL, &g), 0);
    int compared = 0, refused = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        size_t len;
        char *text = slurp(g.gl_pathv[i], &len);
        if (compare_readers(g.gl_pathv[i], text, len)) refused++;
        else compared++;
        free(text);
    }
    globfree(&g);
    print_message("same records from both readers on %d files (%d refused by the plain reader)\n", compared,
                  refused);
    assert_true(compared >= 7);
}

/* Every annotation and parameter form the plain reader knows. */
static const char every_form[] =
    "#include <stdint.h>\n"
    "#include <graphc/custom_op.h>\n"
    "\n"
    "GRAPHC_OP(\"com.example\", \"RowNorm\", GRAPHC_GENERAL)\n"
    "void row_norm(const graphc_tensor *x, graphc_tensor *y, void *work, float eps, double scale,\n"
    "              int64_t axis, const char *mode)\n"
    "{ (void)x; (void)y; (void)work; (void)eps; (void)scale; (void)axis; (void)mode; }\n"
    "\n"
    "  GRAPHC_SHAPE(\"com.example\", \"RowNorm\")\n"
    "const char *row_norm_shape(const graphc_tensor *x, graphc_tensor *y, float eps, double scale,\n"
    "                           int64_t axis, const char *mode);\n"
    "/* a comment */ \n"
    "GRAPHC_WORKSPACE(\"com.example\", \"RowNorm\")\n"
    "int64_t row_norm_ws(const graphc_tensor *x, const graphc_tensor *y, float eps, double scale,\n"
    "                    int64_t axis, const char *mode);\n"
    "GRAPHC_INPLACE(\"com.example\", \"RowNorm\", \"y\", \"x\")\n"
    "GRAPHC_GRAD(\"com.example\", \"RowNorm\")\n"
    "void row_norm_grad(const graphc_tensor *x, const graphc_tensor *y, const graphc_tensor *dy,\n"
    "                   graphc_tensor *dx, float eps, double scale, int64_t axis, const char *mode);\n"
    "GRAPHC_OP(\"org.other\", \"Fill\", GRAPHC_ELEMENTWISE) void fill(int64_t n, double *y, const double c);\n"
    "GRAPHC_OP(\"org.other\", \"Nothing\", GRAPHC_GENERAL)\n"
    "void nothing(void);\n"
    "GRAPHC_SHAPE(\"org.other\", \"Nothing\")\n"
    "const char *nothing_shape();\n";

static void test_same_records_on_every_form(void **state)
{
    (void)state;
    const char *path = GRAPHC_SOURCE_DIR "/tests/unit/every_form_in_memory.c"; /* parsed from memory */
    assert_int_equal(compare_readers(path, every_form, strlen(every_form)), 0);
    CustomFunc *b = NULL;
    int nb = 0;
    Diag d = {0};
    assert_int_equal(custom_read_clang(path, every_form, strlen(every_form), header, header_len, &b, &nb, &d), 0);
    assert_int_equal(nb, 8);
    assert_int_equal(b[3].role, CF_INPLACE);
    assert_string_equal(b[3].inplace_out, "y");
    assert_int_equal(b[3].line, 16);
    free(b);
}

static char dir[256];

static void write_file(const char *name, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
}

static const char typed[] =
    "#include <stdint.h>\n"
    "#include <graphc/custom_op.h>\n"
    "#include \"types.h\"\n"
    "#define DOMAIN \"com.example\"\n"
    "#define VEC_ARGS count_t n, const real *x, real *y\n"
    "typedef const graphc_tensor *tin;\n"
    "\n"
    "GRAPHC_OP(DOMAIN, \"Twice\", GRAPHC_ELEMENTWISE)\n" /* 8 */
    "void twice(VEC_ARGS, real alpha);\n"
    "\n"
    "GRAPHC_GRAD(DOMAIN, \"Twice\")\n" /* 11 */
    "void twice_grad(count_t n, const real *x, const real *y,\n"
    "                const real *dy, real *dx, real alpha);\n"
    "\n"
    "GRAPHC_OP(\"com.example\", \"Odd\", GRAPHC_GENERAL)\n" /* 15 */
    "void odd(tin x, struct graphc_tensor *y, big b, int i, float **pp, double arr[4], unsigned char u,\n"
    "         long long ll, const cstr s, ...);\n"
    "\n"
    "GRAPHC_OP(\"com.example\", \"Unnamed\", GRAPHC_ELEMENTWISE)\n" /* 19 */
    "void unnamed(count_t, const real *, real *);\n"
    "void unnamed(count_t n, const real *x, real *out) { (void)n; (void)x; (void)out; }\n"
    "\n"
    "void twice(VEC_ARGS, real alpha)\n" /* the definition: reported once, at the prototype */
    "{ for (count_t i = 0; i < n; i++) y[i] = 2 * alpha * x[i]; }\n";

static void expect(const CustomParam *p, const char *name, CustomCType type, int ptr, int is_const, int line,
                   const char *spelling)
{
    assert_string_equal(p->name, name);
    assert_int_equal(p->type, type);
    assert_int_equal(p->ptr, ptr);
    assert_int_equal(p->is_const, is_const);
    assert_int_equal(p->line, line);
    assert_string_equal(p->spelling, spelling);
}

static void test_typedefs_macros_includes(void **state)
{
    (void)state;
    write_file("types.h", "typedef float real;\ntypedef int64_t count_t;\ntypedef long big;\ntypedef const char *cstr;\n");
    char path[512];
    snprintf(path, sizeof path, "%s/typed.c", dir);
    CustomFunc *fs = NULL;
    int n = 0;
    Diag d = {0};
    assert_int_equal(custom_read_plain(path, typed, strlen(typed), &fs, &n, &d), -1);
    Diag d2 = {0};
    int rc = custom_read_clang(path, typed, strlen(typed), header, header_len, &fs, &n, &d2);
    if (rc) print_error("%s\n", d2.msg);
    assert_int_equal(rc, 0);
    assert_int_equal(n, 4);

    const CustomFunc *f = &fs[0];
    assert_int_equal(f->role, CF_OP);
    assert_int_equal(f->kind, 1);
    assert_string_equal(f->domain, "com.example");
    assert_string_equal(f->op, "Twice");
    assert_string_equal(f->name, "twice");
    assert_int_equal(f->line, 8);
    assert_int_equal(f->fline, 9);
    expect(&f->ret, "", CT_VOID, 0, 0, 0, "void");
    assert_int_equal(f->n_p, 4);
    expect(&f->p[0], "n", CT_I64, 0, 0, 9, "count_t");
    expect(&f->p[1], "x", CT_F32, 1, 1, 9, "const real *");
    expect(&f->p[2], "y", CT_F32, 1, 0, 9, "real *");
    expect(&f->p[3], "alpha", CT_F32, 0, 0, 9, "real");

    f = &fs[1];
    assert_int_equal(f->role, CF_GRAD);
    assert_string_equal(f->domain, "com.example");
    assert_int_equal(f->line, 11);
    assert_int_equal(f->fline, 12);
    assert_int_equal(f->n_p, 6);
    expect(&f->p[3], "dy", CT_F32, 1, 1, 13, "const real *");
    expect(&f->p[4], "dx", CT_F32, 1, 0, 13, "real *");

    f = &fs[2];
    assert_int_equal(f->kind, 2);
    assert_int_equal(f->line, 15);
    assert_int_equal(f->n_p, 10);
    expect(&f->p[0], "x", CT_TENSOR, 1, 1, 16, "tin");
    expect(&f->p[1], "y", CT_TENSOR, 1, 0, 16, "struct graphc_tensor *");
    expect(&f->p[2], "b", CT_I64, 0, 0, 16, "big");
    expect(&f->p[3], "i", CT_OTHER, 0, 0, 16, "int");
    assert_int_equal(f->p[4].type, CT_OTHER);
    assert_string_equal(f->p[4].spelling, "float **");
    assert_int_equal(f->p[5].type, CT_OTHER);
    assert_string_equal(f->p[5].spelling, "double[4]");
    assert_int_equal(f->p[6].type, CT_OTHER);
    expect(&f->p[7], "ll", CT_I64, 0, 0, 17, "long long");
    expect(&f->p[8], "s", CT_STR, 1, 1, 17, "const cstr");
    expect(&f->p[9], "", CT_OTHER, 0, 0, 16, "...");

    f = &fs[3];
    assert_string_equal(f->name, "unnamed");
    assert_int_equal(f->fline, 20);
    assert_int_equal(f->n_p, 3);
    expect(&f->p[0], "n", CT_I64, 0, 0, 20, "count_t");
    expect(&f->p[2], "out", CT_F32, 1, 0, 20, "real *");
    free(fs);
}

/* An annotated prototype in a local header: its definition in the file is
 * reported, at the definition's line. */
static void test_annotation_in_header(void **state)
{
    (void)state;
    write_file("decl.h", "#include <stdint.h>\n#include <graphc/custom_op.h>\n"
                         "GRAPHC_OP(\"a.b\", \"Hdr\", GRAPHC_ELEMENTWISE)\n"
                         "void hdr(int64_t n, const float *x, float *y);\n"
                         "GRAPHC_OP(\"a.b\", \"Unused\", GRAPHC_ELEMENTWISE)\n"
                         "void unused(int64_t n, const float *x, float *y);\n");
    const char text[] = "#include \"decl.h\"\n\nvoid hdr(int64_t n, const float *x, float *y)\n{ (void)n; }\n";
    char path[512];
    snprintf(path, sizeof path, "%s/hdr.c", dir);
    CustomFunc *fs = NULL;
    int n = 0;
    Diag d = {0};
    assert_int_equal(custom_read_clang(path, text, strlen(text), header, header_len, &fs, &n, &d), 0);
    assert_int_equal(n, 1);
    assert_string_equal(fs[0].name, "hdr");
    assert_int_equal(fs[0].line, 3);
    assert_int_equal(fs[0].fline, 3);
    assert_int_equal(fs[0].n_p, 3);
    free(fs);
}

/* custom_read_clang on text must fail with a one-line "path:line: " message
 * that contains `has`. */
static void expect_error(const char *text, int line, const char *has)
{
    char path[512], want[600];
    snprintf(path, sizeof path, "%s/bad.c", dir);
    CustomFunc *fs = NULL;
    int n = 0;
    Diag d = {0};
    assert_int_equal(custom_read_clang(path, text, strlen(text), header, header_len, &fs, &n, &d), -1);
    snprintf(want, sizeof want, "%s:%d: ", path, line);
    if (strncmp(d.msg, want, strlen(want)) || !strstr(d.msg, has) || strchr(d.msg, '\n'))
        print_error("expected '%s...%s', got '%s'\n", want, has, d.msg);
    assert_memory_equal(d.msg, want, strlen(want));
    assert_non_null(strstr(d.msg, has));
    assert_null(strchr(d.msg, '\n'));
}

static void test_errors(void **state)
{
    (void)state;
    expect_error("#include <stdint.h>\n#include <graphc/custom_op.h>\n\n"
                 "GRAPHC_OP(\"a.b\", \"Broken\", GRAPHC_ELEMENTWISE)\n"
                 "void broken(int64_t n, const float *x float *y);\n",
                 5, "expected ')'");
    expect_error("#include <graphc/custom_op.h>\n#include \"no_such_header.h\"\n", 2, "'no_such_header.h' file not found");
    expect_error("#include <stdint.h>\n#include <graphc/custom_op.h>\n"
                 "GRAPHC_OP(\"a.b\", \"K\", 3)\nvoid k(int64_t n, const float *x, float *y);\n",
                 3, "op 'K': unknown kind '3'");
    expect_error("#include <graphc/custom_op.h>\nGRAPHC_GRAD(\"a.b\", \"\")\nvoid g(void);\n", 2,
                 "expected GRAPHC_GRAD(\"domain\", \"Name\")");
    expect_error("#include <graphc/custom_op.h>\n\nGRAPHC_OP(\"a.b\", \"V\", GRAPHC_GENERAL)\nint v;\n", 3,
                 "expected a function after the annotation of 'V'");
    char text[512];
    snprintf(text, sizeof text, "#include <graphc/custom_op.h>\nGRAPHC_OP(\"%0200d\", \"L\", GRAPHC_GENERAL)\nvoid l(void);\n", 0);
    expect_error(text, 2, "expected GRAPHC_OP(\"domain\", \"Name\", GRAPHC_ELEMENTWISE)");
    expect_error("#include <graphc/custom_op.h>\nGRAPHC_INPLACE(\"a|b\", \"I\", \"y\", \"x\")\n", 2,
                 "expected GRAPHC_INPLACE(\"domain\", \"Name\", \"output\", \"input\")");
    expect_error("#include <stdint.h>\n\nGRAPHC_OP(\"a.b\", \"N\", GRAPHC_GENERAL)\nvoid n(int64_t n);\n", 3,
                 "(the file does not #include <graphc/custom_op.h>)");
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "/tmp/graphc-test-read-XXXXXX");
    if (!mkdtemp(dir)) return -1;
    /* the reader's own temporary folder goes into dir; teardown checks it left nothing */
    return setenv("TMPDIR", dir, 1);
}

static int teardown(void **state)
{
    (void)state;
    int left = 0;
    DIR *dd = opendir(dir);
    if (!dd) return -1;
    struct dirent *e;
    while ((e = readdir(dd))) {
        if (e->d_name[0] == '.') continue;
        char path[600];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (strcmp(e->d_name, "types.h") && strcmp(e->d_name, "decl.h")) {
            print_error("the reader left %s behind\n", path);
            left = 1;
        }
        unlink(path);
    }
    closedir(dd);
    rmdir(dir);
    return left ? -1 : 0;
}

int main(void)
{
    if (!custom_have_libclang()) {
        printf("SKIPPED: this graphc was built without libclang (CMake GRAPHC_LIBCLANG=OFF, or libclang-dev missing); "
               "the libclang reader of --ops files is not tested\n");
        return 77;
    }
    size_t len;
    char *h = slurp(GRAPHC_SOURCE_DIR "/include/graphc/custom_op.h", &len);
    assert_true(len < sizeof header);
    memcpy(header, h, len);
    header_len = len;
    free(h);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_records_on_plain_files),
        cmocka_unit_test(test_same_records_on_every_form),
        cmocka_unit_test(test_typedefs_macros_includes),
        cmocka_unit_test(test_annotation_in_header),
        cmocka_unit_test(test_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
