/* fused.h — elementwise expressions over a node's inputs: the `expr` of a
 * Fused node and the `epilogue` of Conv, Gemm and MatMul.
 *
 * Grammar (whitespace between tokens is ignored):
 *   term := 'x'N | 'y' | '_' | OpName ['[' key=value {',' key=value} ']'] '(' term {',' term} ')'
 * `xN` is slot N (the node's input N), `y` the result of the op that owns an
 * epilogue, `_` an absent optional operand (`Clip(x0, _, x1)`). OpName is
 * any op whose description has a scalar expression; attribute values use the
 * text form ir_set_attr() parses.
 *
 * Each OpName term becomes a "member": a real Node of a private scratch graph
 * (never in the owner's g->nodes) with its own attributes and typed in/out
 * Values, so the member op's own infer, scalar_ref and scalar_expr run
 * unchanged and nothing here knows any particular op. Members are kept in
 * evaluation order (post-order); the last one is the root.
 */
#ifndef GRAPHC_IR_FUSED_H
#define GRAPHC_IR_FUSED_H

#include "op.h"
#include "writer.h"

/* Most inputs of a Fused node; most extra (epilogue) inputs of Conv/Gemm/MatMul. */
#define FUSED_MAX_IN 16
#define FUSED_MAX_EPI 8
/* Fusion starts a new kernel rather than grow one past FUSED_MAX_OPS member
 * ops or FUSED_MAX_DEPTH nesting (a chain of 100,000 elementwise nodes
 * becomes 1,563 kernels of 64, not one expression 100,000 deep). The parser
 * refuses text nested deeper than FUSED_PARSE_MAX_DEPTH, so no expression,
 * fused or hand-written, recurses further than that in any walk. */
#define FUSED_MAX_OPS 64
#define FUSED_MAX_DEPTH 64
#define FUSED_PARSE_MAX_DEPTH 256

/* Attribute indices of the Fused op (conventions in op.h). */
enum { FUSED_EXPR, FUSED_COUNT };

/* Where a member's operand comes from. */
typedef enum FxSrcKind { FX_SLOT, FX_MEMBER, FX_ABSENT } FxSrcKind;
typedef struct FxSrc {
    FxSrcKind kind;
    int idx; /* slot index or member index */
} FxSrc;

typedef struct FusedExpr {
    Graph *scratch;      /* owns members, their values and attributes */
    int n_members;
    Node **members;      /* evaluation order; the root is last */
    FxSrc **src;         /* src[m][j]: operand j of member m */
    int n_slots;
    unsigned char *slot_used;
} FusedExpr;

/* Parses and type-checks `expr` (the text of attribute `attr` of `owner`,
 * used in messages) over slots[0..n_slots) (NULL: absent input); `y_slot`
 * is the slot that 'y' names (-1: 'y' is not allowed). Every member is
 * inferred with its op's own infer. An f16/bf16 interior member is rounded
 * to its type, as its node would store it, and held as float (ir_fused_eval
 * and the backends' kernels alike), so fusing changes no result.
 * Returns 0 (release fx with ir_fused_free) or a diagnostic naming owner. */
int ir_fused_parse(const Node *owner, const char *attr, const char *expr, const Value *const *slots, int n_slots,
                   int y_slot, FusedExpr *fx, Diag *d);
void ir_fused_free(FusedExpr *fx);
/* Parses the expression node n carries (its attribute must be set): a
 * Fused node's `expr` over its inputs, or the `epilogue` of Conv/Gemm/MatMul
 * over its inputs and y (a copy of output 0, slot n->n_in). Same contract
 * as ir_fused_parse. */
int ir_fused_parse_node(const Node *n, FusedExpr *fx, Diag *d);
/* The epilogue expression of a Conv/Gemm/MatMul node, NULL when it has none. */
const char *ir_epilogue(const Node *n);
/* Writes "[k=v, k=v]" for member m's attributes that differ from its op's
 * defaults, as the canonical expression text spells them (nothing when
 * none); -1 when one has no text form. */
int ir_fused_print_attrs(Writer *w, const Node *m);
/* Canonical text of member heads ("Op[k=v]") with each op's default node
 * made once: for passes that print many members. */
typedef struct FusedPrinter FusedPrinter;
FusedPrinter *ir_fused_printer_new(void);
void ir_fused_printer_free(FusedPrinter *fp);
/* Writes m's op name and its attributes that differ from the defaults, as
 * ir_fused_node_expr spells them; -1 when one has no text form. */
int ir_fused_print_head(FusedPrinter *fp, Writer *w, const Node *m);
/* The root member's output value (dtype and broadcast shape of the result). */
const Value *ir_fused_result(const FusedExpr *fx);

/* Reference evaluation: out (numel(os) doubles) gets the expression at every
 * element of os, each used slot numpy-broadcast from slot_data[k] (shape of
 * slots[k]); interiors are rounded to their dtypes, the result is not.
 * out may equal a slot's data when that slot has shape os. */
void ir_fused_eval(const FusedExpr *fx, const Shape *os, const double *const *slot_data, double *out);

/* The expression of one node over its own inputs in canonical form: a
 * Fused node's expr, or "Op[attrs](x0, _, x2)" for an op with a scalar
 * expression (attributes that differ from the defaults, floats exact).
 * malloc'd; NULL when n is neither. */
char *ir_fused_node_expr(const Node *n);
/* Rewrites expr canonically with leaf xK replaced by the text repl[K]
 * (n_repl entries, NULL keeps "xK") and 'y' by repl_y (NULL keeps "y").
 * malloc'd; NULL on a syntax error. */
char *ir_fused_subst(const char *expr, const char *const *repl, int n_repl, const char *repl_y);

/* Shared facets for ops with an `epilogue` attribute (Conv, Gemm, MatMul):
 * inputs from n_own on are epilogue operands. ir_epilogue_infer checks the
 * epilogue against the op's already inferred output (same dtype and shape,
 * every extra input used); ir_epilogue_eval applies it in place to out
 * (the op's raw result). Both are no-ops without an epilogue (then extra
 * inputs are an error). */
int ir_epilogue_infer(Node *n, int n_own, Diag *d);
/* Index of op's first epilogue operand: the first input K whose name in the
 * op's in_names is "xK"; -1 when the op takes none. */
int ir_epilogue_first(OpKind op);
int ir_epilogue_eval(const Node *n, const double *const *in, double *out, Diag *d);

#endif
