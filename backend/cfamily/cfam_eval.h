/* cfam_eval.h — compile-time evaluation for the C-family backends: ops
 * whose output is known when the graph is compiled (Constant, Range,
 * ConstantOfShape) are evaluated with the op's reference evaluation and
 * embedded as data, so the interpreter and the generated code agree.
 */
#ifndef GRAPHC_CFAM_EVAL_H
#define GRAPHC_CFAM_EVAL_H

#include <stddef.h>

#include "../../ir/ir.h"

/* Runs the op's reference evaluation on a node whose inputs are all
 * constants (or absent) and returns output 0 encoded in its dtype
 * (malloc'ed, *nb bytes), or NULL with a diagnostic naming the backend
 * ("C", "CUDA"). An output over
 * CFAM_EVAL_MAX_BYTES is refused with its size: constant folding left it
 * to run time because it is large, and it would become a source array of
 * several times its size. */
#define CFAM_EVAL_MAX_BYTES ((int64_t)1 << 30)
unsigned char *cfam_eval_bytes(const Node *n, const char *backend, size_t *nb, Diag *d);

#endif
