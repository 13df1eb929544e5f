/* ir.h — graphc's graph IR.
 *
 * A Graph owns one Arena; every node, value, attribute, name and copied
 * constant lives in it, so ir_graph_free() releases everything at once.
 *
 * A Value is one tensor edge: dtype, shape (static, or with symbolic dims
 * bounded at compile time: see "symbolic dimensions"), kind (graph input,
 * constant with data, or temporary produced by a node), its producer and, once
 * memory planning ran, its arena offset. A Node applies one operator (OpKind,
 * described in ir/op.h) to input values and produces output values; its
 * attributes are typed and indexed by the op's attribute schema, so op code
 * reads `n->attrs[CONV_GROUP].i` instead of looking strings up.
 *
 * Invariants (checked by ir_verify): g->nodes is in topological order; every
 * input of a node is a graph input, a constant, or an output of an earlier
 * node; every value has at most one producer.
 *
 * The IR semantics of every op are those of ONNX at opset 17 (shape-like
 * operands such as Reshape's shape or Slice's starts are inputs, not
 * attributes); frontends translate older forms.
 */
#ifndef GRAPHC_IR_H
#define GRAPHC_IR_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#define IR_MAX_RANK 8

/* ---- dtypes -------------------------------------------------------------- */

typedef enum DType {
    DT_UNDEF = 0,
    DT_F32,
    DT_F64,
    DT_F16,
    DT_BF16,
    DT_I8,
    DT_U8,
    DT_I16,
    DT_I32,
    DT_I64,
    DT_BOOL,
    DT_U16,
    DT_U32,
    DT_U64,
    DT_COUNT
} DType;

const char *ir_dtype_name(DType t);           /* "f32", "i64", "bool", ... */
int ir_dtype_parse(const char *s, DType *out); /* 0 on success */
/* ONNX TensorProto.DataType code → DType; 0, or -1 when graphc lacks it. */
int ir_dtype_from_onnx(int64_t code, DType *out);
int ir_dtype_to_onnx(DType t); /* the inverse */
size_t ir_dtype_size(DType t);                 /* bytes per element */
int ir_dtype_is_float(DType t);                /* f32 f64 f16 bf16 */
int ir_dtype_is_int(DType t);                  /* i8 u8 i16 i32 i64 */
/* Reads element i of raw little-endian data of type t as a double. */
double ir_load_f64(DType t, const void *data, size_t i);
/* Stores v (converted with C/ONNX Cast semantics) as element i. */
void ir_store_f64(DType t, void *data, size_t i, double v);
/* Rounds v to what dtype t can represent (float rounding for f32, half for
 * f16, bfloat16 rounding, truncation toward zero for integers, 0/1 for bool). */
double ir_round_to(DType t, double v);
/* n elements of dtype t drawn as the text IR's random(seed=, lo=, hi=)
 * draws them (splitmix64; uniform in [lo, hi), integers in [lo, hi]). */
void ir_fill_random(DType t, void *out, int64_t n, uint64_t seed, double lo, double hi);

/* ---- shapes -------------------------------------------------------------- */

/* dims[i] is dimension i's extent, or for a symbolic (runtime) dimension
 * its upper bound: memory is planned from dims, so at the maximum. sym[i] is
 * 0 for a constant dimension, else the 1-based index of its symbol in the
 * graph's table (Graph.syms, see "symbolic dimensions" below). Declare
 * shapes zeroed (`Shape s = {0}`): a stray sym would make a dim symbolic. */
typedef struct Shape {
    int rank;
    int64_t dims[IR_MAX_RANK];
    int32_t sym[IR_MAX_RANK];
} Shape;

Shape ir_shape(int rank, const int64_t *dims);
/* Same rank and dims, and the same symbols: a symbolic dim differs from a
 * constant equal to its bound. */
int ir_shape_eq(const Shape *a, const Shape *b);
/* Whether some dim of s is symbolic. */
int ir_shape_has_sym(const Shape *s);
/* Element count with overflow check: returns 0 and sets *out, or -1 when the
 * product exceeds INT64_MAX / a dim is negative. */
int ir_shape_numel(const Shape *s, int64_t *out);
int64_t ir_numel(const Shape *s); /* assumes a verified shape */
/* Numpy broadcasting of a and b; -1 when incompatible. */
int ir_broadcast(const Shape *a, const Shape *b, Shape *out);
/* Writes "[1,3,224,224]" into buf; a symbolic dim as "<=64" (its bound;
 * ir_shape_str_g names the symbol). */
const char *ir_shape_str(const Shape *s, char *buf, size_t cap);
/* Row-major element strides of s into st[rank]. */
void ir_row_strides(const Shape *s, int64_t *st);
/* Checked a*b and a+b on non-negative int64; return -1 on overflow. */
int ir_mul_ok(int64_t a, int64_t b, int64_t *out);
int ir_add_ok(int64_t a, int64_t b, int64_t *out);

/* ---- hashing ------------------------------------------------------------- */

/* FNV-1a, 64-bit: a hash starts at IR_HASH_SEED and folds in one value at a
 * time with ir_hash_mix; ir_hash_str folds the bytes of a string. Hashes only
 * pick table slots and CSE candidates, never anything written out. */
#define IR_HASH_SEED 1469598103934665603ull
uint64_t ir_hash_mix(uint64_t h, uint64_t x);
uint64_t ir_hash_str(const char *s);

/* ---- arena --------------------------------------------------------------- */

typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
    ArenaChunk *head;
} Arena;

void *arena_alloc(Arena *a, size_t n); /* zeroed, 16-byte aligned; aborts on OOM */
char *arena_strdup(Arena *a, const char *s);
char *arena_strndup(Arena *a, const char *s, size_t n);
void arena_free(Arena *a);

/* ---- diagnostics ---------------------------------------------------------- */

/* User errors. The first error is kept in `msg`, formatted as
 * "FILE: node 'NAME' (OP): RULE" (FILE only when `file` is set). */
typedef struct Diag {
    const char *file;
    char msg[2048];
    int n_errors;
} Diag;

struct Node;
int diag_error(Diag *d, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));        /* returns -1 */
int diag_node_error(Diag *d, const struct Node *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));        /* returns -1 */
int diag_verror(Diag *d, const struct Node *n, const char *fmt, va_list ap);

/* Broken invariants abort with file and line. */
void ir_assert_fail(const char *file, int line, const char *expr);
#define GC_ASSERT(e) ((e) ? (void)0 : ir_assert_fail(__FILE__, __LINE__, #e))

/* ---- attributes ---------------------------------------------------------- */

typedef enum AttrKind {
    ATTR_INT,
    ATTR_FLOAT,
    ATTR_STRING,
    ATTR_INTS,
    ATTR_FLOATS,
    ATTR_TENSOR
} AttrKind;

typedef struct TensorData {
    DType dtype;
    Shape shape;
    const void *data; /* little-endian raw elements */
    size_t nbytes;
} TensorData;

/* One attribute value; `set` is 0 when the attribute is absent and has no
 * default. Lists live in the graph arena. */
typedef struct AttrVal {
    int set;
    int64_t i;
    double f;
    const char *s;
    int n;           /* length of ints / floats */
    int64_t *ints;
    double *floats;
    TensorData t;
} AttrVal;

/* ---- values and nodes ---------------------------------------------------- */

/* VK_STATE: training state (a trainable parameter, an optimizer slot, the
 * step counter). It has initial data like a constant, but passes treat it as
 * unknown (never folded, merged or rewritten), and an update (Graph.updates)
 * may give it new contents at the end of a training step. */
typedef enum ValueKind { VK_TEMP, VK_INPUT, VK_CONST, VK_STATE } ValueKind;

typedef struct Node Node;

/* An operand of a derived symbol: symbol `sym` (1-based), or the constant c
 * when sym is 0. */
typedef struct IrSymTerm {
    int32_t sym;
    int64_t c;
} IrSymTerm;

typedef struct Value {
    const char *name;
    int id;
    DType dtype;
    Shape shape;
    int shape_known; /* dtype and shape are valid */
    ValueKind kind;
    /* listed in graph outputs, or the new contents of a state value
     * (Graph.updates): either way a root that passes keep and materialize
     * outside the arena */
    int is_output;
    Node *producer; /* NULL for inputs and constants */
    int producer_out;
    const void *data; /* VK_CONST, VK_STATE (initial value): raw little-endian elements */
    size_t nbytes;
    int64_t offset; /* arena offset after memory planning; -1 if none */
    /* Runtime shapes: the most elements the value holds when that is less
     * than the product of its dims' bounds (a group of data-dependent dims
     * bounded jointly, IrSym.group); 0: that product. ir_value_bytes and
     * ir_value_max_numel use it. Set by shape inference. */
    int64_t numel_cap;
    /* Runtime shapes: a shape value, an integer scalar or list whose
     * elements shape inference knows as terms (a symbol or a constant:
     * Shape(x) of a tensor with a runtime dim, an element of it, a Concat of
     * them), n_shape_val of them; NULL otherwise. Set by the ops'
     * `infer_value` facets (ir/ops/shape_values.c), read by the ops whose
     * shape operand it is (ir_value_terms). */
    const IrSymTerm *shape_val;
    int n_shape_val;
    /* Set by memory planning when this value's bytes ARE another value's
     * bytes (a view: Reshape/Flatten/Squeeze/... output that shares its
     * input's storage). Points at the root (never at another alias); the
     * backend declares the pointer from the root's storage and emits no code
     * for the view node. NULL otherwise. */
    struct Value *alias;
} Value;

typedef int OpKind;
enum {
#define OP(name, family) OP_##name,
#include "ops.def"
#undef OP
    OP_COUNT
};

struct Node {
    const char *name;
    int id;
    OpKind op;
    int n_in, n_out;
    Value **in;  /* in[i] may be NULL: an absent optional input */
    Value **out;
    AttrVal *attrs; /* indexed by the op's attribute schema */
    int64_t ws_offset; /* workspace arena offset after planning; -1 if none */
    size_t ws_bytes;
    int backward; /* built by autodiff (the backward part or the optimizer update) */
};

enum { GRAPH_LAYOUT_AUTO = 0, GRAPH_LAYOUT_NCHW = 1, GRAPH_LAYOUT_NHWC = 2 };

typedef struct Graph {
    Arena arena;
    const char *name;
    Node **nodes;
    int n_nodes, cap_nodes;
    Value **values;
    int n_values, cap_values;
    Value **by_name; /* open-addressing index of values by name */
    int cap_by_name;
    Value **inputs;
    int n_inputs, cap_inputs;
    Value **outputs;
    int n_outputs, cap_outputs;
    int64_t arena_bytes; /* set by memory planning */
    int no_fold; /* option: constant folding off (tests of emitters) */
    int opt_level; /* 0 (-O0: only what correctness needs) or 2 (-O2, default) */
    /* option: the target's scratch bytes for node n's kernel (the backend's
     * workspace policy, set by the compile driver); NULL: no workspaces. */
    size_t (*workspace)(const struct Graph *g, const struct Node *n);
    /* option: the most tasks the target's parallel kernels split into, i.e.
     * the per-task scratch their workspaces hold (compile --max-threads);
     * 0: the target's default. */
    int max_threads;
    /* option (compile --cuda-layout): where the target may keep 4-d
     * activations channels-last (NHWC) between the kernels that read and
     * write them so: GRAPH_LAYOUT_AUTO (0) the target's choice,
     * GRAPH_LAYOUT_NCHW never, GRAPH_LAYOUT_NHWC wherever its kernels can. */
    int layout;
    /* option: the target's note on the kernel it picks for node n (written
     * into buf, a comment line's worth; returns its length, 0 for none),
     * printed after the node by ir_print as `# kernel: ...` (the parser
     * skips comments; the pipeline shows notes in the dump after its last
     * pass only); set by the compile driver; NULL: no notes. */
    int (*kernel_note)(const struct Graph *g, const struct Node *n, char *buf, size_t cap);
    /* option: values the target's kernels read beyond their nodes' inputs
     * (the CUDA backend's GEMMs that read the source of a Slice/Transpose
     * chain in place): raises last[id of such a root value] to the last
     * step (index in nodes) that reads it; memory planning keeps it alive
     * that long. Set by the compile driver; NULL: none. */
    void (*extra_reads)(const struct Graph *g, int *last);
    /* option: the bytes the target's kernels store of arena value v where
     * that is less than the value's own (a value the target computes piece
     * by piece inside another node's kernel and never stores whole: the
     * scratch those pieces take), else -1; memory planning gives v a buffer
     * of that size and shares it with no other value in place. Set by the
     * compile driver; NULL: every value whole. */
    int64_t (*stored_bytes)(const struct Graph *g, const struct Value *v);
    /* option (compile --precision): DT_F16 or DT_BF16 holds the model's f32
     * tensors in that type wherever the target computes the op on it
     * (passes/lower_precision.c); DT_UNDEF (0) or DT_F32: the model's own
     * types. supports: the target's per-node check (Backend.supports), set
     * by the compile driver, which that pass asks; NULL: none. */
    DType precision;
    int (*supports)(const struct Graph *g, const struct Node *n, Diag *d);
    /* Memory-plan figures set by plan-memory (bytes): the live-set lower
     * bound (largest sum of live buffer bytes at any step) and the no-reuse
     * sum (every buffer its own storage). */
    int64_t plan_lower_bound, plan_no_reuse;
    /* option (measurements): every arena value the forward part produces
     * lives to the end of the schedule, as if no backward dependency were
     * declared (the baseline the training arena is compared with). */
    int plan_keep_forward;
    /* option: the size policy, the most bytes one tensor (and the memory
     * arena) may take; 0: IR_DEFAULT_MAX_TENSOR_BYTES (see ir_check_tensor_size). */
    int64_t max_tensor_bytes;
    struct IrResource *resources; /* released by ir_graph_free, newest first */
    /* Training: updates[i] = {state, value}: at the end of a run, value
     * becomes state's new contents, written in place into state's storage
     * (so every reader of state must run no later than value's producer;
     * ir_verify checks it). Values are roots (is_output) but not outputs. */
    struct IrUpdate *updates;
    int n_updates, cap_updates;
    /* What autodiff builds (passes/autodiff.c); NULL: nothing. */
    struct TrainSpec *train;
    /* The symbolic dimensions (runtime shapes): Shape.sym[i] = k refers to
     * syms[k - 1]. Empty for a static graph. */
    struct IrSym *syms;
    int n_syms, cap_syms;
    /* option (--max-dim): the bound of a data-dependent dim that nothing in
     * the model bounds (a Range's length, Resize's output size); 0: none,
     * such a dim is an error. */
    int64_t max_dim;
} Graph;

/* ---- symbolic dimensions -------------------------------------------------- */

/* A dimension known only at run time, within [lo, hi] fixed at compile time
 * (memory is planned at hi). SYM_VAR symbols come from the graph's inputs
 * (an ONNX dim_param bounded by --max-shape, or `T<=64` in the text IR); the
 * others are derived from earlier symbols and constants (a, b) by shape
 * inference and evaluated in table order at run time, so a derived symbol
 * only refers to earlier ones. */
typedef enum IrSymKind { SYM_VAR, SYM_ADD, SYM_MUL, SYM_DIV, SYM_MIN, SYM_MAX, SYM_DATA } IrSymKind;
/* SYM_DATA: a data-dependent dim (NonZero's count, Reshape's shape read at
 * run time): the node that computes it sets it while the model runs, within
 * [0, hi]. An op's `infer` asks for one by writing IR_SYM_NEW into
 * shape.sym[k] of an output, with dims[k] the bound, or IR_DIM_UNBOUNDED
 * when nothing in the model bounds it (the graph's max_dim then does, else
 * ir_infer_node refuses the node suggesting --max-dim). */
#define IR_SYM_NEW (-1)
/* In an op's `infer_sym` rule: a dim `infer` marked IR_SYM_NEW that the
 * rule resolved to the static extent dims[k] (a shape value's constant). */
#define IR_SYM_STATIC (-2)
#define IR_DIM_UNBOUNDED (-1)
/* An unbounded dim that is a multiple of f (Tile: the input dim times a
 * runtime repeat): bounded by f * max_dim, and its group by the product of
 * the factors times max_dim. IR_DIM_UNBOUNDED is IR_DIM_UNBOUNDED_TIMES(1). */
#define IR_DIM_UNBOUNDED_TIMES(f) (-(int64_t)(f))
typedef struct IrSym {
    const char *name;
    int64_t lo, hi;
    IrSymKind kind;
    IrSymTerm a, b; /* derived symbols only */
    /* SYM_DATA dims that nothing bounds, of one output, form a group whose
     * extents multiply to at most --max-dim (so a 4-D Resize output from
     * runtime scales holds at most that many elements, not --max-dim^4):
     * group is the first member's index (0: none), group_cap the bound,
     * kept on that first member. */
    int32_t group;
    int64_t group_cap;
} IrSym;

/* The symbol of index k (1-based). */
const IrSym *ir_sym(const Graph *g, int32_t k);
/* The index of the SYM_VAR symbol `name`, 0 if none. */
int32_t ir_sym_find(const Graph *g, const char *name);
/* Adds SYM_VAR `name` with bounds [lo, hi], or returns the existing one of
 * that name; -1 (with a diagnostic) when it exists with other bounds. */
int32_t ir_sym_var(Graph *g, const char *name, int64_t lo, int64_t hi, Diag *d);
/* The derived symbol kind(a, b) (an existing equal one when there is one);
 * its bounds follow from its operands'. */
int32_t ir_sym_derive(Graph *g, IrSymKind kind, IrSymTerm a, IrSymTerm b);
/* The SYM_DATA symbol of dim k of node n's output `out` (found again
 * when the node is inferred again; its bound then follows `hi`). */
int32_t ir_sym_data(Graph *g, const Node *n, int out, int k, int64_t hi);
/* Whether symbol k (1-based) is SYM_DATA or derived from one. */
int ir_sym_is_data(const Graph *g, int32_t k);
/* Whether g has SYM_DATA symbols. */
int ir_graph_has_data_syms(const Graph *g);
/* Evaluates the derived symbols of g in order: val[k - 1] must hold every
 * SYM_VAR's value; fills the others. */
void ir_sym_eval(const Graph *g, int64_t *val);
/* Binds the symbols of g from the actual shapes of its inputs
 * (actual[i] for g->inputs[i]): fixed dims must be the model's, each
 * symbolic dim within its bounds and the same wherever the symbol appears.
 * Fills val[n_syms] (derived symbols evaluated too); 0, or -1 with a
 * one-line diagnostic naming the input and the dim. */
int ir_sym_bind(const Graph *g, const Shape *const *actual, int64_t *val, Diag *d);
/* Writes "[1,T<=64,128]" into buf: symbolic dims by name and bound. */
const char *ir_shape_str_g(const Graph *g, const Shape *s, char *buf, size_t cap);
/* Replaces every symbolic dim of every value by its value val[sym - 1]
 * (checked against its bounds by the caller) and empties the symbol table:
 * the graph becomes the static graph of one set of input shapes. Values
 * computed by nodes lose shape_known (shape inference sets them again). */
void ir_sym_specialize(Graph *g, const int64_t *val);

typedef struct IrUpdate {
    Value *state, *value;
} IrUpdate;

/* What the autodiff pass builds (passes/autodiff.c): the gradient of the
 * first output (the loss) with respect to wrt[], as outputs grad_<name>
 * (TRAIN_GRADS), or an optimizer step that updates them in place. */
typedef enum TrainOptimizer { TRAIN_GRADS, TRAIN_SGD, TRAIN_ADAM } TrainOptimizer;
typedef struct TrainSpec {
    Value **wrt; /* the parameters: state values (or graph inputs, TRAIN_GRADS) */
    int n_wrt;
    TrainOptimizer optimizer;
    double lr;
    double momentum; /* SGD */
    int nesterov;    /* SGD */
    double beta1, beta2, eps; /* Adam */
    double weight_decay;      /* both: an L2 term added to the gradient */
} TrainSpec;

/* An external resource the graph owns (e.g. the mmap of an ONNX file whose
 * bytes constants borrow); the record lives in the graph arena. */
typedef struct IrResource {
    void *ptr;
    size_t len;
    void (*release)(void *ptr, size_t len);
    struct IrResource *next;
} IrResource;

Graph *ir_graph_new(const char *name);
void ir_graph_free(Graph *g);
/* Makes g own ptr: ir_graph_free calls release(ptr, len) before freeing the
 * arena (resources are released newest first). */
void ir_graph_own(Graph *g, void *ptr, size_t len, void (*release)(void *, size_t));
void *ir_alloc(Graph *g, size_t n);
char *ir_strdup(Graph *g, const char *s);

Value *ir_find_value(const Graph *g, const char *name);
/* New value with a unique name (a fresh "tN" name when name is NULL). */
Value *ir_new_value(Graph *g, const char *name);
Value *ir_add_input(Graph *g, const char *name, DType t, const Shape *s);
/* data is copied into the arena when copy != 0, else borrowed (it must
 * outlive the graph). */
Value *ir_add_const(Graph *g, const char *name, DType t, const Shape *s,
                    const void *data, int copy);
void ir_add_output(Graph *g, Value *v);
/* Turns constant or state v into a graph input, appended to g->inputs
 * (gradient checks feed parameters as inputs in double precision). */
void ir_make_input(Graph *g, Value *v);
/* Turns constant v into training state (VK_STATE; its data is the initial
 * value). */
void ir_make_state(Value *v);
/* New state value with a copy of data (zeros when data is NULL). */
Value *ir_add_state(Graph *g, const char *name, DType t, const Shape *s, const void *data);
/* Records that value becomes state's new contents (see Graph.updates). */
void ir_add_update(Graph *g, Value *state, Value *value);
/* Whether v is the new contents of some state value. */
const IrUpdate *ir_update_of(const Graph *g, const Value *v);
/* Turns graph input v into a constant holding a copy of data (v's dtype and
 * shape): the input leaves g->inputs. */
void ir_bind_input(Graph *g, Value *v, const void *data);
/* Appends a node; creates n_out fresh output values (named out_names[i] when
 * given, otherwise after the node); attributes start at their defaults. */
Node *ir_add_node(Graph *g, OpKind op, const char *name, Value *const *in,
                  int n_in, int n_out, const char *const *out_names);
/* Sets attribute `key` from its text form (`3`, `1.5`, `"SAME"`, `[1,2]`,
 * `1,2`). Errors name the node, the key and the expected kind. */
int ir_set_attr(Graph *g, Node *n, const char *key, const char *text, Diag *d);
/* Parses a list "k=v k=v" / "k=v;k=v" (MXNet Init(kwargs) style). Values
 * with commas are lists; brackets and quotes are optional. */
int ir_set_attrs(Graph *g, Node *n, const char *kvs, Diag *d);
/* Index of attribute `key` in n's op schema, -1 if none. */
int ir_attr_index(const Node *n, const char *key);

/* Drops every value that is not a graph input or output and that no node
 * reads or writes; renumbers the rest and rebuilds the name index. */
void ir_sweep_values(Graph *g);
/* Number of nodes reading v (linear scan). */
int ir_value_uses(const Graph *g, const Value *v);
/* Structural checks; see the invariants above. */
int ir_verify(const Graph *g, Diag *d);
/* Reorders g->nodes by post-order DFS from the outputs and drops nodes
 * nothing depends on; -1 (with a diagnostic) on a cycle. */
int ir_toposort(Graph *g, Diag *d);

/* Helpers for shape inference and evaluation. */
/* Copies constant integer data of v (any int dtype) into out; returns the
 * element count, or -1 if v is not a constant integer tensor / too long. */
int ir_const_ints(const Value *v, int64_t *out, int max);
/* Normalizes an axis in [-rank, rank) to [0, rank); -1 if out of range. */
int ir_norm_axis(int64_t axis, int rank);
/* Bytes of v's elements (shape inference has proved that they fit). */
int64_t ir_value_bytes(const Value *v);
/* The most elements v holds: its shape's element count, or numel_cap when
 * less (runtime shapes). What buffers for v are sized by. */
int64_t ir_value_max_numel(const Value *v);
/* Runtime shapes: the most elements a value of shape s holds given the
 * joint bounds of g's symbol groups (IrSym.group); INT64_MAX on overflow. */
int64_t ir_shape_max_numel(const Graph *g, const Shape *s);
/* Every output of n has zero elements (and n has one): there is nothing to
 * compute, and loops over its other dims (which may be huge) must not run. */
int ir_outputs_empty(const Node *n);
/* The size policy: no tensor (input, constant, node output) and no memory
 * arena may take more than ir_tensor_limit(g) bytes, 16 GiB unless
 * g->max_tensor_bytes (--max-tensor-bytes) says otherwise; the option is
 * capped at IR_MAX_TENSOR_BYTES_CAP so that every byte count, and the
 * interpreter's 8 bytes per element, stays far from overflow. */
#define IR_DEFAULT_MAX_TENSOR_BYTES ((int64_t)16 << 30)
#define IR_MAX_TENSOR_BYTES_CAP ((int64_t)1 << 60)
int64_t ir_tensor_limit(const Graph *g);
/* 0 when v (dtype set, dims non-negative) fits ir_tensor_limit(g); else -1
 * with "node 'N' (Op): output 'y' would be B bytes (f32 [..]), over the
 * L-byte limit (--max-tensor-bytes)" — `what` names the value's role
 * ("output", "constant", "input"), n is NULL outside a node. An element or
 * byte count that overflows int64 is over the limit too. */
int ir_check_tensor_size(const Graph *g, const Node *n, const char *what, const Value *v, Diag *d);
/* Sets output i's dtype and shape. */
void ir_set_out(Node *n, int i, DType t, const Shape *s);

#endif
