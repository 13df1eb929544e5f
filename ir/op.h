/* op.h — the operator description: every semantic fact about an op in one
 * table entry (MXNet OperatorProperty / NNVM registry facets).
 *
 * Passes and backends look facts up here and never switch over ops. A facet
 * that an op lacks is NULL (or 0); the asker turns that into an error naming
 * the op ("op 'Conv' has no gradient").
 *
 * Each op's description is `const OpDesc op_<Name>` in ir/ops/<family>.c;
 * ir/registry.c builds `ir_op(kind)` from ir/ops.def.
 */
#ifndef GRAPHC_OP_H
#define GRAPHC_OP_H

#include "ir.h"
#include "sexpr.h"

struct GradCtx;

/* One attribute in an op's schema. `deflt` is the default in the same text
 * form ir_set_attr() parses; NULL means "no default" (the attribute is
 * absent unless set, or an error if `required`). */
typedef struct AttrSpec {
    const char *name;
    AttrKind kind;
    const char *deflt;
    int required;
} AttrSpec;

/* Attribute indices. n->attrs[] follows the op's schema array, and each
 * schema has an index enum in ir/ops/<family>_attrs.h (Fused: ir/fused.h),
 * which the family's op file and backend emitters both include:
 *
 *     enum { CONV_AUTO_PAD, ..., CONV_GROUP, ..., CONV_COUNT };    header
 *     static const AttrSpec conv_attrs[] = {                       op file
 *         [CONV_AUTO_PAD] = {"auto_pad", ATTR_STRING, "NOTSET", 0}, ...
 *     };
 *     OP_ATTRS_CHECK(conv_attrs, CONV_COUNT);
 *     const OpDesc op_Conv = { ..., OP_ATTRS(conv_attrs), ... };
 *
 * and code reads `n->attrs[CONV_GROUP].i`. Constants are the schema's prefix
 * (the op, or the ops sharing the schema) and the attribute's name in upper
 * snake case (Gemm's transA: GEMM_TRANS_A); the last one, PREFIX_COUNT, is
 * the schema's length. The designated
 * initializers tie each entry to its constant, OP_ATTRS_CHECK makes a
 * missing last entry a compile error, and the unit tests reject a schema
 * with a gap (an entry without a name). Look attributes up by name
 * (ir_attr_index) only where the op is not known: the parsers, printers and
 * passes that handle any op. */
#define OP_N_ATTRS(a) ((int)(sizeof(a) / sizeof((a)[0])))
/* The attrs and n_attrs members of an OpDesc initializer for schema a. */
#define OP_ATTRS(a) .attrs = (a), .n_attrs = OP_N_ATTRS(a)
/* Schema array a has one entry per index of its enum (count = PREFIX_COUNT). */
#define OP_ATTRS_CHECK(a, count) \
    _Static_assert(OP_N_ATTRS(a) == (count), #a " must have one entry per index up to " #count)

/* Input `in` may share memory with output `out` (the op reads each input
 * element before writing the same output element). */
typedef struct InplacePair {
    int in, out;
} InplacePair;

/* The most common option: input 0 may share output 0's memory
 * (`.inplace = ir_inplace_00, .n_inplace = 1`). */
extern const InplacePair ir_inplace_00[1];

typedef struct OpDesc {
    const char *name; /* ONNX op type */
    /* Inputs and outputs; max_* == -1 means variadic. Names are the ONNX
     * ones, used in error messages ("input 'W'"). */
    int min_in, max_in;
    const char *const *in_names;
    int min_out, max_out;
    const char *const *out_names;
    const AttrSpec *attrs;
    int n_attrs;

    /* Shape and dtype inference: reads n->in[*] (shape_known set) and
     * constant data where needed, sets every n->out[i] with ir_set_out().
     * Returns 0, or diag_node_error(d, n, "...") on a rule broken. */
    int (*infer)(Node *n, Diag *d);
    /* Runtime shapes (ir/ops/sym_rules.c): run by ir_infer_node after
     * `infer` when some input has a symbolic dim; marks the symbolic dims of
     * the outputs (whose dims `infer` set to their maxima) and checks the
     * op's constraints for every runtime value. NULL: the op refuses
     * symbolic inputs, unless it has a scalar_expr (ir_sym_broadcast). */
    int (*infer_sym)(Graph *g, Node *n, Diag *d);
    /* Runtime shapes: sets out[0]'s shape value (Value.shape_val) from its
     * inputs' when it can (ir/ops/shape_values.c); run by ir_infer_node
     * after the rule. NULL: the op computes no shape values. */
    void (*infer_value)(Graph *g, Node *n);

    /* Gradient (ir/grad.h): builds the backward nodes of gc->n and sets
     * gc->dx[i] for every input with gc->need[i]. NULL: the op has no
     * gradient, which autodiff reports naming the node (never a zero). */
    int (*gradient)(struct GradCtx *gc);
    /* Backward dependency: 1 when the gradient reads forward input i
     * (is_output 0) or output i (is_output 1). Set with `gradient`; autodiff
     * refuses a gradient that reads anything else, and what no gradient reads
     * is freed after its last forward use. */
    int (*backward_reads)(const Node *n, int is_output, int i);

    /* Bit i set: input i is a compile-time operand (a shape, scales, sizes:
     * shape inference needs its data), never a trainable parameter. Only
     * float operands need saying; integer tensors are never parameters. */
    uint32_t const_inputs;
    /* Bit i set: the values of input i decide output shapes (Reshape's
     * shape, Slice's starts, NonZero's X). Shape inference reads them when
     * they are constants; otherwise `infer` gives each output dim they
     * decide IR_SYM_NEW (ir/ir.h) with its bound, so the dim becomes a
     * data-dependent symbol that the node's kernel sets at run time. The
     * interpreter makes such inputs constants once computed and infers the
     * node again before evaluating it (ir_interp_run_f64). */
    uint32_t shape_inputs;

    /* Running statistics (training-mode BatchNormalization's mean and
     * variance): output `out` is the new value of input `in`, when the node
     * has that output. Such inputs are never trainable parameters; a
     * training step (--train) makes them state and writes the output back. */
    const InplacePair *stat_updates;
    int n_stat_updates;
    /* Training-only behaviour switched off in place (BatchNormalization's
     * training_mode, Dropout's training_mode input): the forward pass that
     * NAME_infer_v runs after training, like PyTorch's eval(). NULL: the op
     * behaves the same in both. */
    void (*to_inference)(Node *n);

    /* In-place options. */
    const InplacePair *inplace;
    int n_inplace;
    /* (The scratch a kernel needs is the target's business: each backend
     * answers it, see Backend.workspace in backend/backend.h.) */

    /* Elementwise ops only: builds the target-neutral expression tree
     * (ir/sexpr.h) of one output element in b, given the trees of the input
     * elements (args[j], each already converted to its compute type; NULL
     * for an absent input) and `ct`, the type the op computes in. Fusion
     * asks only whether an op has one; each backend prints the tree in its
     * own language. */
    const Sx *(*scalar_expr)(const Node *n, SxBuild *b, const Sx *const *args, DType ct);
    /* Elementwise ops only: the same function on doubles (reference). */
    double (*scalar_ref)(const Node *n, const double *args);

    /* Reference evaluation in double precision: in[i] holds n->in[i]'s
     * elements (NULL for an absent input), out[i] has room for n->out[i].
     * Shapes come from the values. Returns 0 or a diagnostic. */
    int (*eval)(const Node *n, const double *const *in, double *const *out,
                Diag *d);
    /* 1 when eval reads only the input shapes, never their data (Shape,
     * Size): constant folding then evaluates the node as soon as its input
     * shapes are known, passing NULL for inputs that are not constants. */
    int shape_only;
    /* 1 when output 0 holds exactly input 0's bytes (Reshape, Flatten,
     * Squeeze, Unsqueeze, Identity, inference Dropout): memory planning may
     * make the output an alias of the input and the backend then emits no
     * kernel for the node. */
    int view;
    /* User operators only (--ops FILE.c, ir/custom_op.h): the user's C
     * function a node of this op calls, fn(count, inputs..., outputs...,
     * attributes...). NULL for built-in ops. */
    const struct IrCustomCall *custom;
} OpDesc;

const OpDesc *ir_op(OpKind k);
/* The family ops.def files op k under ("nn", "elementwise", ...). */
const char *ir_op_family(OpKind k);
/* OpKind for an ONNX op type (a built-in op, or a user operator loaded
 * with ir_custom_load), -1 if unknown. */
int ir_op_lookup(const char *name);
/* One past the largest OpKind: OP_COUNT plus the user operators loaded so
 * far (their kinds follow the built-in ones). Size tables indexed by OpKind
 * with this, never with OP_COUNT alone. */
int ir_op_count(void);

#define OP(name, family) extern const OpDesc op_##name;
#include "ops.def"
#undef OP

/* Shape inference of one node: the op's `infer`, then, when an input has a
 * symbolic dim, its `infer_sym` rule (or the one-line refusal "op 'X' does
 * not support runtime shapes yet"). Passes infer through this, never
 * through `infer` alone. */
int ir_infer_node(Graph *g, Node *n, Diag *d);
/* The shared runtime-shape rules (ir/ops/sym_rules.c): outputs like input 0
 * (unary ops, Softmax); numpy broadcasting of every input; MatMul; Gemm;
 * LayerNormalization (static from the axis on); views (Reshape, Flatten,
 * Squeeze, Unsqueeze: each symbolic dim stays one output dim); Transpose;
 * Concat along a static axis; a runtime batch (dim 0) through Conv, the
 * pools and BatchNormalization. */
int ir_sym_same(Graph *g, Node *n, Diag *d);
int ir_sym_broadcast(Graph *g, Node *n, Diag *d);
int ir_sym_matmul(Graph *g, Node *n, Diag *d);
int ir_sym_gemm(Graph *g, Node *n, Diag *d);
int ir_sym_layernorm(Graph *g, Node *n, Diag *d);
int ir_sym_slice(Graph *g, Node *n, Diag *d); /* Slice's rule (ir/ops/slice_sym.c) */
int ir_sym_view(Graph *g, Node *n, Diag *d);
int ir_sym_transpose(Graph *g, Node *n, Diag *d);
int ir_sym_concat(Graph *g, Node *n, Diag *d);
int ir_sym_batch(Graph *g, Node *n, Diag *d);
/* Expand by a shape value (its terms) or a constant shape. */
int ir_sym_expand(Graph *g, Node *n, Diag *d);

/* Shape values (ir/ops/shape_values.c): the terms of integer scalar or
 * list v (or a bool one: a decided comparison of shape values), a
 * constant's values or its shape value, into t (room for max);
 * the count, or -1 when v is neither or longer. */
int ir_value_terms(const Value *v, IrSymTerm *t, int max);
/* The infer_value facets: Shape; Gather at constant indices; ops that keep
 * the elements (Identity, Cast, the views); Concat; Add, Mul, Div. */
void ir_value_shape(Graph *g, Node *n);
void ir_value_gather(Graph *g, Node *n);
void ir_value_copy(Graph *g, Node *n);
void ir_value_concat(Graph *g, Node *n);
void ir_value_arith(Graph *g, Node *n);
/* ReduceMin / ReduceMax over a shape value: SYM_MIN / SYM_MAX terms. */
void ir_value_reduce_min_max(Graph *g, Node *n);
/* Equal of shape values where every comparison is decided (bool terms
 * 0 / 1), and Where choosing between shape values by such a condition:
 * PyTorch's expand(-1, ...) computes Where(shape == -1, 1, shape). */
void ir_value_equal(Graph *g, Node *n);
void ir_value_where(Graph *g, Node *n);

/* Whether input i of n is present (not absent optional, not past n_in). */
int ir_has_input(const Node *n, int i);
/* Every one of the op's first min_in inputs is present, else
 * "input 'NAME' is required". */
int ir_need_inputs(const Node *n, Diag *d);

/* Generic evaluation of an elementwise op through scalar_ref, with numpy
 * broadcasting of every input to the output shape. */
int ir_eval_elementwise(const Node *n, const double *const *in,
                        double *const *out, Diag *d);

#endif
