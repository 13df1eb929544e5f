/* custom_op.h — user operators: descriptions built at load time from
 * annotated C functions (graphc --ops FILE.c; include/graphc/custom_op.h).
 *
 * ir_custom_load reads FILE.c with a small reader of its own (no libclang):
 * each GRAPHC_OP / GRAPHC_GRAD annotation line followed by a prototype of
 * plain scalar and pointer types. Every GRAPHC_ELEMENTWISE op becomes an
 * OpDesc whose kind follows the built-in ones (ir_op, ir_op_lookup and
 * ir_op_count in ir/registry.c see it like any op); an op with a gradient
 * function gets a companion op NAMEGrad, whose description calls that
 * function, and a gradient facet that builds one NAMEGrad node. The
 * registry is process-wide and append-only: a loaded file stays loaded.
 */
#ifndef GRAPHC_CUSTOM_OP_IR_H
#define GRAPHC_CUSTOM_OP_IR_H

#include "op.h"

/* What a node of a user op calls: func(count, ptr[0..n_ptr), attrs...),
 * where the first n_in pointers are the node's inputs (const) and the rest
 * its outputs, and attribute parameter k is the node's attribute
 * attr_idx[k] passed as attr_ctype[k]: 'f' float, 'd' double, 'i' int64_t,
 * 's' const char *. */
typedef struct IrCustomCall {
    const char *func;
    int file;   /* the --ops file that defines it (ir_custom_file_*) */
    DType dtype;
    int n_in, n_out;
    int n_attr;
    const int *attr_idx;
    const char *attr_ctype;
    int slot;   /* its wrapper in the compiled file (reference evaluation) */
} IrCustomCall;

/* Reads the annotated functions of `path` and registers their ops.
 * `header`/`header_len`: the text of graphc/custom_op.h, for compiling the
 * file when the interpreter evaluates one of its ops. 0, or -1 with a
 * one-line "FILE:LINE: ..." diagnostic (nothing is registered then). */
int ir_custom_load(const char *path, const char *header, size_t header_len, Diag *d);
/* The loaded files: how many, and each one's path and text. */
int ir_custom_n_files(void);
const char *ir_custom_file_path(int file);
const char *ir_custom_file_text(int file, size_t *len);

/* Registry internals (ir/registry.c). */
int ir_custom_count(void);                  /* user op kinds, OP_COUNT.. */
const OpDesc *ir_custom_desc(OpKind k);     /* k in [OP_COUNT, ir_op_count()) */
int ir_custom_lookup(const char *name);     /* kind, or -1 */
/* Whether some loaded file declares ops of ONNX domain `domain`. */
int ir_custom_has_domain(const char *domain);
/* For a forward user op: the kind of its NAMEGrad op, or -1 when it has no
 * gradient function; -2 when k is itself a NAMEGrad op. */
OpKind ir_custom_grad_kind(OpKind k);
/* The kind of op `name` of `domain`, or -1. */
int ir_custom_lookup_domain(const char *domain, const char *name);

#endif
