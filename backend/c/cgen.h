/* cgen.h — what the C backend core offers to per-op emitters.
 *
 * The core (cgen.c) writes model.h, model.c, the weights and the Makefile;
 * for each node of the planned graph it calls the emitter registered for the
 * node's op. An emitter writes C statements through cgen_w() and names
 * tensors only through cgen_ptr(), so it never knows where a tensor lives
 * (arena, caller buffer, weights). Emitters are registered per family in
 * backend/c/emit_<family>.c as a CgenEntry array ending in {-1, NULL, 0, NULL}.
 */
#ifndef GRAPHC_CGEN_H
#define GRAPHC_CGEN_H

#include "../../ir/ir.h"
#include "../../ir/op.h"
#include "../../ir/writer.h"

typedef struct Cgen Cgen;

/* The most tasks a kernel of the parallel entry runs at once: the per-task
 * scratch slots its workspace holds (NAME_MAX_THREADS), unless
 * Graph.max_threads (compile --max-threads) says otherwise. */
#define CGEN_MAX_THREADS 4
int cgen_max_threads(const Graph *g);

typedef int (*CgenEmitFn)(Cgen *c, const Node *n, Diag *d);

/* The kernel units of the C runtime (runtime/c/gcrt_<name>.{h,c}; the fast
 * CPU kernels cpu, dwconv, gap, maxpool and winograd in runtime/cpu/), as bits.
 * An emitter entry lists the units whose kernels its code may call; the
 * output folder receives exactly the units its nodes list (and what those
 * units depend on), and NAME.c includes their sources, so every kernel is
 * private to the model (runtime/common/gcrt_base.h explains GCRT_FN).
 * CGEN_RUNTIME_UNITS is the one list: X(NAME, depends-on mask). */
#define CGEN_RUNTIME_UNITS(X)   \
    X(cpu, 0)                   \
    X(dwconv, CGEN_RT_cpu)      \
    X(gap, CGEN_RT_cpu | CGEN_RT_nn) \
    X(grad, CGEN_RT_nn | CGEN_RT_linalg) \
    X(index, 0)                 \
    X(linalg, 0)                \
    X(maxpool, CGEN_RT_cpu)     \
    X(nn, CGEN_RT_linalg)       \
    X(pool, 0)                  \
    X(resize, 0)                \
    X(rnn, CGEN_RT_linalg)      \
    X(shape, 0)                 \
    X(signal, 0)                \
    X(text, 0)                  \
    X(vision, 0)                \
    X(winograd, CGEN_RT_cpu)

enum {
#define X(name, deps) CGEN_RT_BIT_##name,
    CGEN_RUNTIME_UNITS(X)
#undef X
    CGEN_RT_UNIT_COUNT
};
enum {
#define X(name, deps) CGEN_RT_##name = 1u << CGEN_RT_BIT_##name,
    CGEN_RUNTIME_UNITS(X)
#undef X
};

typedef struct CgenEntry {
    int op; /* OpKind, or -1 to end the list */
    CgenEmitFn emit;
    unsigned runtime; /* CGEN_RT_* bits of the runtime units the code calls */
    /* Scratch bytes the emitted code needs for node n (cgen_workspace());
     * NULL: none. The C backend's workspace policy (backend_c.workspace). */
    size_t (*workspace)(const Node *n);
    /* 1 when `emit` supports runtime shapes (symbolic dims, read through
     * cgen_prod_str from the run's shape table); a node with a symbolic dim
     * whose entry lacks it is refused by cgen_supports. */
    int dyn;
} CgenEntry;

/* The C backend's emitter families: backend/c/emit_<name>.c defines
 * cgen_<name>_entries. */
#define CGEN_FAMILIES(X) \
    X(elementwise) X(math) X(linalg) X(nn) X(vision) X(reduce) X(shape) X(index) X(loss) X(rnn) X(quant) \
    X(signal) X(optim) X(text) X(grad) X(select)

#define CGEN_FAMILY(name) extern const CgenEntry cgen_##name##_entries[];
CGEN_FAMILIES(CGEN_FAMILY)
#undef CGEN_FAMILY

/* The generic emitter of every op that has a scalar_expr facet: one loop
 * nest with numpy broadcasting (backend/c/emit_elementwise.c). The table
 * uses it for such ops unless a family registers its own emitter. */
int cgen_emit_elementwise(Cgen *c, const Node *n, Diag *d);
/* The emitter of user operators (--ops; backend/c/emit_custom.c): a call
 * of the user's function. The table uses it for every op with a `custom`
 * facet. */
int cgen_emit_custom(Cgen *c, const Node *n, Diag *d);
/* A general user op's workspace request (ir_custom_workspace). */
size_t cgen_custom_workspace(const Node *n);
/* Applies n's `epilogue` attribute (Conv/Gemm/MatMul; nothing when absent)
 * to its output in one loop right after the op's kernel (emit_elementwise.c). */
int cgen_emit_epilogue(Cgen *c, const Node *n, Diag *d);

/* ---- runtime shapes ----
 * A model with symbolic dims (Graph.syms) has one run function for every
 * size within the bounds: memory is planned at the maximum, and kernels
 * read the actual extents from the shape table `dim[]` of the schedule
 * function (dim[k - 1] for symbol k, filled from the actual input shapes
 * at entry). Emitters build sizes as CgenProd products and print them with
 * cgen_prod_str: a static product prints as the same literal as before, so
 * a static model generates exactly the code it did without this. */

/* A product of dims as generated code computes it: c times the runtime
 * extents of symbols s[0..n) (sorted); a literal when n is 0. */
#define CGEN_PROD_MAX_SYMS 24
typedef struct CgenProd {
    int64_t c;
    int n;
    int32_t s[CGEN_PROD_MAX_SYMS];
} CgenProd;
CgenProd cgen_prod(int64_t c);
/* p times dim k of s (its symbol when it has one). */
void cgen_prod_mul_dim(CgenProd *p, const Shape *s, int k);
/* The product of dims [from, to) of s. */
CgenProd cgen_dims_prod(const Shape *s, int from, int to);
CgenProd cgen_prod_mul(const CgenProd *a, const CgenProd *b);
int cgen_prod_eq(const CgenProd *a, const CgenProd *b);
/* Whether p is the literal v. */
int cgen_prod_is(const CgenProd *p, int64_t v);
/* C text of p into buf: "128", "dim[0]", "dim[0] * 128". */
const char *cgen_prod_str(const CgenProd *p, char *buf, size_t cap);
/* Whether an input or output of n has a symbolic dim. */
int cgen_node_has_sym(const Node *n);
/* Data-dependent dims (SYM_DATA, ir/ir.h): the node whose kernel computes
 * one (NonZero's count, Reshape's shape read at run time) sets it with
 * cgen_set_dim: `dim[j] = EXPR;` and the check that returns NAME_ERR_SHAPE
 * when the value is beyond its bounds (the run stops there). The core then
 * evaluates the derived dims that depend on it. For a dim shape inference
 * already knows (static, or a symbol such as a runtime sequence length that
 * a shape value carried, see Value.shape_val) it writes the check that the
 * computed extent agrees instead. A view node (alias, no
 * kernel) that sets dims still has its emitter called, to set them. */
void cgen_set_dim(Cgen *c, const Value *v, int k, const char *expr);
/* "NAME_ERR_SHAPE": what the schedule returns when a runtime operand gives
 * an invalid shape (a Reshape to another element count, ...). */
const char *cgen_err_shape(Cgen *c);
/* Whether dim k of v is a data-dependent dim that v's node sets (not one
 * passed through from an input); whether node n's outputs have such dims. */
int cgen_own_dim(const Graph *g, const Value *v, int k);
int cgen_sets_dims(const Graph *g, const Node *n);
/* Dim k of s as C text: "4", or its shape-table entry "dim[2]". */
const char *cgen_dim_str(const Shape *s, int k, char *buf, size_t cap);
/* Writes `const int64_t NAME[r] = {d0, d1, ...};` with the extents of s
 * (runtime ones read from the shape table; {0} for rank 0). */
void cgen_dims_table(Writer *w, const char *name, const Shape *s);
/* Writes `dim[k] = ...;` for every derived dim that depends on a
 * data-dependent one, in table order. */
void cgen_derive_data_dims(const Graph *g, Writer *w);
/* cgen_set_dim's part for a dim of a jointly bounded group (IrSym.group):
 * once its last member is set, the check that the group's extents multiply
 * to at most its bound, returning `err` otherwise (before any kernel writes). */
void cgen_check_group(const Graph *g, int32_t y, Writer *w, const char *err);

/* ---- data-dependent dims: text shared with the CUDA backend (dims_text.c) ----
 * The statements that compute a node's data-dependent output extents from
 * the values of its runtime operands are the same C in both backends. They
 * differ in where the values lie (the C arena; a host copy the CUDA schedule
 * reads back) and in how a dim is set, which a CgenDims tells the writers. */
typedef struct CgenDims {
    const Graph *g;
    Writer *w;       /* the host statements, at the writer's indent */
    const char *err; /* "NAME_ERR_SHAPE", which the statements return on an invalid operand */
    void *ctx;
    const char *(*tmp)(void *ctx, const char *base);                     /* a local name free in scope */
    void (*set_dim)(void *ctx, const Value *v, int k, const char *expr); /* cgen_set_dim, cu_set_dim */
    /* declares the array `name` holding the values of integer input j of n
     * (its static element count; any integer dtype, read as int64_t); i is
     * a free int64_t local the statements may use */
    void (*read)(void *ctx, const Node *n, int j, const char *name, const char *i);
    /* the host statements of whole kernels (the selections below): a pointer
     * to v's first element (typed as cgen_ctype(v->dtype) *) into buf (256
     * bytes), and n's workspace as an unsigned char pointer */
    const char *(*ptr)(void *ctx, const Value *v, char *buf);
    const char *(*workspace)(void *ctx, const Node *n);
} CgenDims;
/* The C backend's, for the node being written. */
CgenDims cgen_dims_ctx(Cgen *c);
/* Reshape's (shape), Squeeze's or Unsqueeze's (axes) output extents from the
 * operand values at `req` (an int64_t array of in[1]'s length): the op's
 * rules applied as shape inference does for a constant, `return err` where
 * they break one, then every output dim set. */
void cgen_write_view_dims(const CgenDims *o, const Node *n, const char *req);
/* Slice with runtime operands (starts, ends, axes, steps; or runtime dims
 * of data): the operands read (CgenDims.read), each axis's range resolved as
 * the op's slice plan does, the output's dims set; then, unless the output
 * is empty at its bound (returns 0), the int64_t locals named in t: the
 * source offset `off`, source strides `sst[rank]` (scaled by the steps),
 * dense output strides `dst[rank]` and extents `len[rank]`. Returns 1. */
typedef struct CgenSliceText {
    int no_dst; /* set by the caller: no dst (nor its running stride) */
    char off[64], sst[64], dst[64], len[64];
} CgenSliceText;
int cgen_write_slice_dims(const CgenDims *o, const Node *n, CgenSliceText *t);
/* ReduceSum with a runtime, non-empty `axes` (a static input): the axes
 * read and checked, the output's dims set; returns 0 when the output is
 * empty at its bound. Else it opens `if (ok) {` (one indent more; the caller
 * closes it) holding int64_t locals named in v (index CGEN_RS_*): the kept
 * axes' extents kd[nk] and input strides ks[nk], the reduced ones' rd[nr]
 * and rs[nr], innermost first, the output count n_out and the reduced
 * count n_red; v also names the caller's loop locals. Returns 1. */
enum { CGEN_RS_IND, CGEN_RS_AXES, CGEN_RS_MASK, CGEN_RS_OK, CGEN_RS_I, CGEN_RS_KEPT, CGEN_RS_NKEPT, CGEN_RS_A, CGEN_RS_KD,
       CGEN_RS_KS, CGEN_RS_RD, CGEN_RS_RS, CGEN_RS_NK, CGEN_RS_NR, CGEN_RS_ST, CGEN_RS_NOUT, CGEN_RS_NRED, CGEN_RS_O, CGEN_RS_E,
       CGEN_RS_J, CGEN_RS_BASE, CGEN_RS_Q, CGEN_RS_ACC, CGEN_RS_AT, CGEN_RS_P, CGEN_RS_COUNT };
int cgen_write_reduce_sum_dims(const CgenDims *o, const Node *n, char (*v)[64]);
/* Split's output extents along its axis from its runtime `split` (sizes
 * >= 0 summing to the axis; else -1 for every one). Declares int64_t `off`
 * = 0 into off_name (its name; none when NULL) for the copies after. */
void cgen_write_split_dims(const CgenDims *o, const Node *n, char *off_name);
/* TopK's Values (and Indices) extent along its axis: K, the C expression kv
 * (at most the axis's actual extent when that is a runtime dim). */
void cgen_write_topk_dims(const CgenDims *o, const Node *n, const char *kv);
/* The selections whose count is a data-dependent dim, as host C over the
 * CgenDims's pointers (emit_select.c; an output not empty at its bound):
 * NonZero, Compress with a runtime condition, Unique, NonMaxSuppression.
 * Their workspaces (bytes): cgen_select_workspace (0 for none). */
void cgen_write_nonzero(const CgenDims *o, const Node *n);
void cgen_write_compress(const CgenDims *o, const Node *n);
void cgen_write_unique(const CgenDims *o, const Node *n);
void cgen_write_nms(const CgenDims *o, const Node *n);
size_t cgen_select_workspace(const Node *n);
/* STFT whose frame_step or frame_length arrives at run time (emit_signal.c):
 * the operands checked, the frame (and bin) count set, the transform. */
void cgen_write_stft(const CgenDims *o, const Node *n);
/* MaxUnpool's spatial extents from its runtime output_shape at `os` (its N
 * and C must be X's). */
void cgen_write_maxunpool_dims(const CgenDims *o, const Node *n, const char *os);
/* Output dim k of Tile (repeats at `rep`), Expand (the shape at `req`) or
 * Pad (pads at `pads`) as a C expression over the operand values into buf:
 * -1 where the values break the op's rules (the bound check refuses it). */
const char *cgen_tile_dim_expr(const Node *n, int k, const char *rep, char *buf, size_t cap);
const char *cgen_expand_dim_expr(const Node *n, int k, const char *req, char *buf, size_t cap);
const char *cgen_pad_dim_expr(const Node *n, int k, const char *pads, char *buf, size_t cap);
/* Pad's mode: 0 constant, 1 reflect, 2 edge. */
int cgen_pad_mode(const Node *n);

/* The writer for the body of the run function (statements; indentation is
 * managed by the core: emitters may use `w->indent++` inside blocks they open). */
Writer *cgen_w(Cgen *c);
/* The graph being written. */
const Graph *cgen_graph(Cgen *c);
/* A C identifier for a pointer to v's first element, typed as
 * `cgen_ctype(v->dtype) *` (`const` for inputs and constants). */
const char *cgen_ptr(Cgen *c, const Value *v);
/* Adds runtime units (CGEN_RT_*) to those the model's NAME.c includes, for
 * an emitter whose kernel choice depends on the node. */
void cgen_use_runtime(Cgen *c, unsigned units);
/* Records a depthwise-kernel call's geometry (gcrt_dwconv2d_f32's KH, KW, dw, sw) for NAME.c's
 * GCRT_DW_VARIANTS: the model source compiles only the SIMD specializations its calls take. */
void cgen_use_dwconv(Cgen *c, int64_t KH, int64_t KW, int64_t dw, int64_t sw);
/* The fast CPU path (emit_cpu.c) for Conv, Gemm and MatMul:
 * cgen_cpu_emit writes node n with the runtime/cpu kernels and returns 1,
 * or returns 0 (writing nothing) when they do not apply, -1 on error;
 * cgen_cpu_workspace sets *bytes and returns 1 when they apply;
 * cgen_cpu_kernel_note describes the choice (Backend.kernel_note). */
int cgen_cpu_emit(Cgen *c, const Node *n, Diag *d);
int cgen_cpu_workspace(const Graph *g, const Node *n, int max_threads, size_t *bytes);
/* Backend.extra_reads: the input of each depthwise conv that a 1x1 conv computes inside its
 * kernel is read at the 1x1 conv's step. */
void cgen_cpu_extra_reads(const Graph *g, int *last);
/* Backend.stored_bytes: the slots of a 1x1 conv's output that a depthwise conv computes band by
 * band inside its own kernel (gcrt_pw_dwconv_f32), else -1. */
int64_t cgen_cpu_stored_bytes(const Graph *g, const Value *v);
int cgen_cpu_kernel_note(const Graph *g, const Node *n, char *buf, size_t cap);
/* The identifier of a constant derived at compile time from model constant
 * src (packed or transformed weights, f32): `data` (nbytes, malloc'd; the
 * context takes it) goes into the weights blob, declared as a
 * `const float *` named after src and tag. Asking again with the same src
 * and tag returns the same identifier (the data must be the same). */
const char *cgen_derived_const(Cgen *c, const Value *src, const char *tag, void *data, size_t nbytes);
/* A `unsigned char *` expression for n's workspace (planned with the size
 * its CgenEntry.workspace asked for). */
const char *cgen_workspace(Cgen *c, const Node *n);
/* A fresh identifier unique in the run function, built from `base`. */
const char *cgen_tmp(Cgen *c, const char *base);
/* C storage type of a dtype: float, double, uint16_t (f16, bf16), int8_t,
 * uint8_t, int16_t, int32_t, int64_t, and uint8_t for bool (cfam_ctype). */
const char *cgen_ctype(DType t);
/* Compute type for arithmetic on elements of t: float for f16/bf16/f32,
 * else the storage type. */
DType cgen_compute_type(DType t);
/* Writes an expression reading element `idx` of `ptr` (dtype t) converted
 * to cgen_compute_type(t), e.g. "gcrt_f16_to_f32(p[i])". */
void cgen_load(Writer *w, DType t, const char *ptr, const char *idx);
/* Writes a statement storing the compute-type expression `val` into element
 * `idx` of `ptr` (dtype t), converting (and rounding f16/bf16) on store. */
void cgen_store(Writer *w, DType t, const char *ptr, const char *idx, const char *val);
/* Writes s as comment text: no comment terminator can come out of it. */
void cgen_comment_text(Writer *w, const char *s);
/* Writes a one-line comment describing the node: op, inputs and outputs with
 * dtypes and shapes. The core writes it before each emitter runs. */
void cgen_node_comment(Cgen *c, const Node *n);

#endif
