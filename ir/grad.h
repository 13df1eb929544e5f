/* grad.h — what an op's gradient facet sees, and the builder it uses.
 *
 * The autodiff pass (passes/autodiff.c) walks the forward graph backwards
 * and, for each node whose outputs receive a gradient, calls the node's
 * OpDesc.gradient with a GradCtx: dy[j] is the gradient of the loss with
 * respect to output j (NULL when none reaches it: a zero), need[i] says
 * whether input i wants one, and the facet stores its answers in dx[i]
 * (MXNet's FGradient, PyTorch's Function.backward). Facets build backward
 * nodes through the gb_* functions below, which append a node to the graph
 * exactly as the importers do (ir_add_node, attributes from their text form)
 * and infer its output types at once, so a facet can read the shapes of
 * what it built. A builder that fails records the diagnostic in the context
 * and returns NULL; builders given a NULL operand return NULL, so a facet
 * can chain calls and check gc->err once at the end (gb_done).
 *
 * A facet reads only the forward values its op's backward_reads facet
 * declares (MXNet's DeclareBackwardDependency); autodiff checks this, since
 * the memory planner keeps exactly the values backward nodes read alive
 * into the backward part.
 */
#ifndef GRAPHC_GRAD_H
#define GRAPHC_GRAD_H

#include "ir.h"

typedef struct GradCtx {
    Graph *g;
    Node *n;                   /* the forward node */
    Value *const *dy;          /* per output of n: its gradient, or NULL (zero) */
    Value **dx;                /* per input of n: set by the facet, NULL = none */
    const unsigned char *need; /* per input: 1 when its gradient is wanted */
    Diag *d;
    int err;                   /* a builder failed (the diagnostic is in d) */
    int seq;                   /* backward nodes built for n so far (names) */
} GradCtx;

/* Appends node op(in...) with attributes `attrs` ("k=v k=v", may be NULL)
 * and n_out outputs, infers its types, stores its outputs in out[] and
 * returns out[0]. NULL (gc->err set) on failure or when a required operand
 * is NULL; absent optional operands are passed as GB_ABSENT. */
Value *gb_node(GradCtx *gc, OpKind op, const char *attrs, int n_in, Value *const *in, int n_out, Value **out);
/* A marker for an absent optional operand in gb_node's in[]. */
extern Value gb_absent_marker;
#define GB_ABSENT (&gb_absent_marker)
/* One-output shortcuts. */
Value *gb1(GradCtx *gc, OpKind op, const char *attrs, Value *a);
Value *gb2(GradCtx *gc, OpKind op, const char *attrs, Value *a, Value *b);
Value *gb3(GradCtx *gc, OpKind op, const char *attrs, Value *a, Value *b, Value *c);
/* Attribute text from a printf format (lives in the graph arena). */
const char *gb_fmt(GradCtx *gc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The same attributes as the forward node's (text form), with `extra`
 * appended ("x_shape=[1,2]"; may be NULL): for backward ops that take the
 * forward op's attributes. */
const char *gb_fwd_attrs(GradCtx *gc, const char *extra);

/* A rank-0 constant of dtype t holding v. */
Value *gb_scalar(GradCtx *gc, DType t, double v);
/* An i64 1-D constant (axes, shape operands). */
Value *gb_ints(GradCtx *gc, const int64_t *v, int n);
/* A constant of zeros typed like v. */
Value *gb_zeros_like(GradCtx *gc, const Value *v);
/* A dy that may be NULL made explicit: zeros typed like output j. */
Value *gb_dy(GradCtx *gc, int j);
/* g (a gradient of a broadcast result) summed over the broadcast dims and
 * reshaped to `to` (numpy broadcasting rules); g itself when the shapes
 * already agree. */
Value *gb_reduce_to(GradCtx *gc, Value *g, const Shape *to);
/* Sums g over `axes` (keepdims 0/1). */
Value *gb_sum(GradCtx *gc, Value *g, const int64_t *axes, int n_axes, int keepdims);
/* g reshaped to `to`. */
Value *gb_reshape(GradCtx *gc, Value *g, const Shape *to);
/* g broadcast (Expand) to `to`. */
Value *gb_expand(GradCtx *gc, Value *g, const Shape *to);
/* Stores the gradient of input i (when wanted); g must be typed like it. */
void gb_set(GradCtx *gc, int i, Value *g);
/* The facet's return value: 0, or -1 when a builder failed. */
int gb_done(GradCtx *gc);

/* Shared backward_reads facets: the gradient reads every input, every
 * output, both, or nothing of the forward node. */
int ir_bw_inputs(const Node *n, int is_output, int i);
int ir_bw_outputs(const Node *n, int is_output, int i);
int ir_bw_all(const Node *n, int is_output, int i);
int ir_bw_none(const Node *n, int is_output, int i);
int ir_bw_input0(const Node *n, int is_output, int i);

#endif
