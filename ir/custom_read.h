/* custom_read.h — the readers of user-operator files (graphc --ops FILE.c):
 * what they find in the file, before ir/custom_op.c checks it against the
 * rules of each form and builds the operator descriptions.
 *
 * A file declares functions, each after an annotation of
 * include/graphc/custom_op.h:
 *
 *   GRAPHC_OP("dom", "Name", GRAPHC_ELEMENTWISE | GRAPHC_GENERAL)  the op
 *   GRAPHC_GRAD("dom", "Name")        its gradient function
 *   GRAPHC_SHAPE("dom", "Name")       a general op's shape rule
 *   GRAPHC_WORKSPACE("dom", "Name")   a general op's scratch request
 *
 * and, on a line of its own, GRAPHC_INPLACE("dom", "Name", "out", "in")
 * (output `out` may reuse input `in`'s memory).
 *
 * Two readers fill the same records: graphc's own (custom_read.c: an
 * annotation line followed by a prototype of plain types, no typedefs or
 * macros) and, in builds with libclang, a real C parser (custom_clang.c:
 * typedefs, macros and includes resolved to the canonical types below).
 * Neither judges the signatures; that is custom_op.c's job, so both readers
 * give the same errors for the same mistakes.
 */
#ifndef GRAPHC_CUSTOM_READ_H
#define GRAPHC_CUSTOM_READ_H

#include "ir.h"

#define CUSTOM_MAX_PARAMS 64

/* A parameter's (or a return value's) type after typedefs:
 *   CT_I64     int64_t (any 64-bit signed integer type)
 *   CT_F32     float
 *   CT_F64     double
 *   CT_STR     char (only as `const char *`: a string attribute)
 *   CT_TENSOR  struct graphc_tensor (only behind a pointer)
 *   CT_VOID    void (only behind a pointer: a workspace; or a return type)
 *   CT_OTHER   anything else (the spelling is kept for the error) */
typedef enum { CT_I64, CT_F32, CT_F64, CT_STR, CT_TENSOR, CT_VOID, CT_OTHER } CustomCType;

typedef struct CustomParam {
    char name[64];     /* "" when the declaration has none */
    CustomCType type;
    int ptr;           /* one level of pointer (two or more: CT_OTHER) */
    int is_const;      /* the pointee's const (the value's, for a scalar) */
    int line;
    char spelling[96]; /* as written, for messages */
} CustomParam;

typedef enum { CF_OP, CF_GRAD, CF_SHAPE, CF_WORKSPACE, CF_INPLACE } CustomRole;

typedef struct CustomFunc {
    CustomRole role;
    int kind;          /* CF_OP: GRAPHC_ELEMENTWISE (1) or GRAPHC_GENERAL (2) */
    int line;          /* of the annotation */
    int fline;         /* of the function's name */
    char domain[128], op[64];
    char name[128];    /* the function ("" for CF_INPLACE) */
    CustomParam ret;   /* the return type (name empty) */
    CustomParam p[CUSTOM_MAX_PARAMS];
    int n_p;
    char inplace_out[64], inplace_in[64]; /* CF_INPLACE */
} CustomFunc;

/* graphc's own reader: the annotated functions of `text` (the file `path`),
 * in file order, into a malloc'ed array. 0, or -1 with a one-line
 * "FILE:LINE: ..." diagnostic (one that names libclang when the file uses a
 * form only a C parser can read). */
int custom_read_plain(const char *path, const char *text, size_t len, CustomFunc **out, int *n_out, Diag *d);

/* The libclang reader (custom_clang.c): the same from a real parse of the
 * file, with graphc/custom_op.h (`header`) on its include path. Only in
 * builds with GRAPHC_HAVE_LIBCLANG. */
int custom_read_clang(const char *path, const char *text, size_t len, const char *header, size_t header_len,
                      CustomFunc **out, int *n_out, Diag *d);

/* 1 when this graphc was built with libclang (CMake GRAPHC_LIBCLANG). */
int custom_have_libclang(void);

#endif
