/* custom_op.h — user operators: descriptions built at load time from
 * annotated C functions (graphc --ops FILE.c; include/graphc/custom_op.h).
 *
 * ir_custom_load reads FILE.c (ir/custom_read.h: libclang when graphc has
 * it, else graphc's own reader), checks every annotated function against
 * the rules of its form and registers one OpDesc per GRAPHC_OP, whose kind
 * follows the built-in ones (ir_op, ir_op_lookup and ir_op_count in
 * ir/registry.c see it like any op). An op with a gradient function gets a
 * companion op NAMEGrad, whose description calls that function, and a
 * gradient facet that builds one NAMEGrad node. A GRAPHC_GENERAL op's shape
 * facet calls its shape rule, its workspace its workspace request, and
 * GRAPHC_INPLACE fills its in-place options; so shape inference compiles the
 * file (as reference evaluation does) the first time it meets such a node.
 * The registry is process-wide and append-only: a loaded file stays loaded.
 */
#ifndef GRAPHC_CUSTOM_OP_IR_H
#define GRAPHC_CUSTOM_OP_IR_H

#include "op.h"

/* What a node of a user op calls. Elementwise (general 0):
 * func(count, ptr[0..n_in+n_out), attrs...), the first n_in pointers the
 * node's inputs (const), the rest its outputs. General: func(tensors of the
 * inputs (const graphc_tensor *), of the outputs, [workspace,] attrs...).
 * Attribute parameter k is the node's attribute attr_idx[k] passed as
 * attr_ctype[k]: 'f' float, 'd' double, 'i' int64_t, 's' const char *. */
typedef struct IrCustomCall {
    const char *func;
    int file;   /* the --ops file that defines it (ir_custom_file_*) */
    int general;   /* GRAPHC_GENERAL: tensors with shapes */
    int workspace; /* general ops: a `void *` workspace follows the outputs */
    DType dtype;   /* elementwise ops: every tensor's dtype */
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

/* The scratch bytes node n of a general user op asked for (its
 * GRAPHC_WORKSPACE function; 0 without one). Shape inference has checked
 * the request. */
size_t ir_custom_workspace(const Node *n);
/* The graphc/custom_op.h name of dtype t (GRAPHC_FLOAT, ...), NULL when a
 * user op cannot take it. */
const char *ir_custom_dtype_macro(DType t);

#endif
