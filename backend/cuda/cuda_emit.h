/* cuda_emit.h — the CUDA backend's internals, shared by its files:
 *   cuda_backend.c  the Backend description: the op table (supports,
 *                   workspace, kernel notes), the output folder (NAME.h,
 *                   NAME.cu, weights, Makefile, runner);
 *   cuda_kernels.c  the generated kernels: elementwise and Fused nodes
 *                   (the shared C-family printer), Cast/CastLike, Softmax,
 *                   pooling, index maps, reductions, normalizations, Det;
 *   cuda_vision.c   ConvTranspose, Conv without cuDNN, Resize, the vision
 *                   norms, Hardmax, DepthToSpace/SpaceToDepth, Dropout;
 *   cuda_index.c    data movement, gathers and scatters, CumSum, ArgMax,
 *                   TopK, OneHot, the compile-time generators;
 *   cuda_grad.c     the backward ops (gather form), losses, training-mode
 *                   batch norm;
 *   cuda_quant.c    quantization and the integer matmuls/convolutions;
 *   cuda_optim.c    Adagrad, Momentum, Adam;
 *   cuda_signal.c   Einsum, DFT, STFT, GridSample;
 *   cuda_rnn.c      RNN, GRU, LSTM;
 *   cuda_text.c     TfIdfVectorizer;
 *   cuda_libs.c     the library calls: Gemm/MatMul on cuBLAS, Conv on cuDNN;
 *   cuda_fold.c     MatMul operands read through the strides of the index
 *                   ops before them (folded chains), for cuda_libs.c;
 *   cuda_shapes.c   runtime shapes: the shape table, sizes as products of
 *                   runtime dims (cu_sz), NAME_run_shapes.
 * An emitter appends its kernels to Cu.kern and its host statements to
 * Cu.body, and names tensors only through cu_ptr(), so it never knows where
 * a tensor lives (device arena, weights, the caller's buffers). Like the C
 * backend's CgenEntry, each op the backend compiles has one CudaEntry in a
 * family array ending in {-1, ...}; ops without one that have a scalar
 * expression get the elementwise emitter.
 */
#ifndef GRAPHC_CUDA_EMIT_H
#define GRAPHC_CUDA_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "../backend.h"
#include "../c/cgen.h"
#include "../../ir/fused.h"

/* Which values are stored channels-last and which Convs run on NHWC
 * descriptors (cuda_layout.c). */
typedef struct CuLayout {
    int n_values, n_ids;
    unsigned char *cl;   /* per value id: a 4-d value stored NHWC */
    unsigned char *nhwc; /* per node id: a Conv on cuDNN's NHWC descriptors, its filter KRSC */
} CuLayout;

typedef struct Cu {
    const Graph *g;
    const char *name;
    char **id;        /* C identifier of each value's pointer */
    int *out_slot;    /* output index a value is written to in place, or -1 */
    int64_t *woff;    /* weights-blob offset of each constant the code reads, or -1 */
    unsigned char *used;
    int64_t wbytes;
    Writer kern, body;
    int nk;            /* kernels written */
    int nconv;         /* Conv nodes: cuDNN descriptors m->cx[i], cw, cc, cy, algo */
    int nfused;        /* of those, the ones -DGC_CUDNN_FUSED runs as one fused cuDNN call (cu_conv_fused) */
    int64_t find_bytes; /* -DGC_CUDNN_FIND: scratch x, w and y for the algorithm search, the largest Conv's */
    struct CuFolds *folds; /* the MatMuls that read folded chains (cuda_fold.c) */
    int64_t nptrs;     /* pointer-array slots of the batched GEMMs: m->gemm_ptrs[0..nptrs) */
    Writer ptrs;       /* NAME_init's statements that fill them (host array hp) */
    Writer init, fini; /* their set-up in NAME_init and release in NAME_free */
    int half;          /* some tensor is f16/bf16: the conversions of gc_cuda.h (GC_CUDA_HALF) */
    int jit;           /* --cuda-jit: host code in NAME.c, kernels in NAME_kernels.cu (NVRTC at init) */
    CuLayout lay;      /* the channels-last values and NHWC Convs (cuda_layout.c) */
    void **wdata;      /* per value id: the bytes the weights hold for a constant in place of its own
                        * (an NHWC Conv's filter, KRSC), or NULL */
    char sz[16][192];  /* cu_sz's rotating buffers */
    int szk;
    int64_t hws_bytes; /* m->hws: host scratch of the Resizes whose tap tables the host computes and of
                        * the selections the host runs (0: none) */
    int resize_host;   /* a Resize's tap tables computed by the host: NAME.cu includes gcrt_resize.c */
    int64_t *hoff;     /* per value id: its place in m->hws while a node runs on the host (cuda_select.c), or -1 */
    int64_t hws_at;    /* that node's workspace in m->hws, or -1 */
    char tmpn[16][64]; /* cu_dims_ctx's local names (rotating) and its "NAME_ERR_SHAPE" */
    char errname[96];
    int tmpk;
} Cu;

typedef struct CudaEntry {
    int op; /* OpKind, or -1 to end the list */
    /* NULL: every node of the op compiles; else 0, or -1 with a one-line
     * diagnostic naming what this backend lacks */
    int (*check)(const Node *n, Diag *d);
    int (*emit)(Cu *c, const Node *n, Diag *d);
    size_t (*workspace)(const Node *n); /* NULL: none */
    const char *note;                   /* the kernel note --print-after shows */
    int half; /* 1: its kernels take f16/bf16 tensors (moved as 16-bit words, or converted to float) */
    /* 1: emit supports runtime shapes (cuda_shapes.c: sizes read from the
     * shape table), as far as check allows; a node with a symbolic dim
     * whose entry lacks it is refused; 2: it also computes the
     * data-dependent dims of its outputs (cu_set_dim) */
    int dyn;
} CudaEntry;

/* ---- MatMul operands through strides (cuda_fold.c) ---- */

/* How the GEMM reads one operand: from root (the value at the top of its
 * folded chain, or the operand itself) at element offset off, its rows x
 * columns row-major with leading dimension ld (trans 0) or column-major
 * (trans 1), and per batch index (Y's batch, row-major) the offset
 * sum of bstride[q] * (its q-th mixed-radix digit over bsize[]). */
typedef struct CuOperand {
    const Value *root;
    const Node *chain[16]; /* the chain's nodes, from the operand's producer up */
    int len;
    int64_t off, ld;
    int trans;
    int nsub;
    int64_t bsize[16], bstride[16];
} CuOperand;

typedef struct CuFold {
    int64_t M, N, K, nb;
    double alpha; /* the chains' scalings */
    int ptrs;     /* some operand's batch is not one stride: pointer arrays */
    CuOperand op[2];
} CuFold;

typedef struct CuFolds {
    int n_ids;
    CuFold **at;         /* per node id: the MatMul's fold, or NULL */
    unsigned char *skip; /* per node id: a chain node, emitted as nothing */
} CuFolds;

/* Whether Gemm/MatMul n runs on cuBLAS (cuda_libs.c); a fold needs it. */
int cu_gemm_on_cublas(const Node *n);
/* The folds of planned graph g (none below -O2): 0, or -1 out of memory. */
int cu_folds_build(const Graph *g, CuFolds *fs);
void cu_folds_free(CuFolds *fs);
/* Backend.extra_reads: raises last[root id] to each folded MatMul's step. */
void cuda_extra_reads(const Graph *g, int *last);

/* ---- channels-last activations (cuda_layout.c) ---- */

/* The layout of planned graph g: 0, or -1 out of memory. */
int cu_layout_build(const Graph *g, CuLayout *L);
void cu_layout_free(CuLayout *L);
/* Whether Conv n may run on NHWC descriptors under g's option (on cuDNN, 2
 * spatial dims, a constant filter only it reads; f16/bf16 unless
 * --cuda-layout=nhwc; never at -O0 or with nchw). */
int cu_conv_nhwc_capable(const Graph *g, const Node *n);
/* Whether value v is stored NHWC; whether Conv n runs on NHWC descriptors. */
int cu_value_nhwc(const Cu *c, const Value *v);
int cu_conv_nhwc(const Cu *c, const Node *n);
/* Whether node n's kernel is the elementwise printer's (cuda_kernels.c's
 * ew_kernel: an op with a scalar expression, Fused, CastLike;
 * cuda_backend.c). */
int cu_node_is_ew(const Node *n);
/* Whether Conv n runs on cuDNN (cuda_libs.c); the workspace its cuDNN
 * algorithm may use; the whole workspace node n takes in graph g (an NHWC
 * Conv's transposed input and output after the algorithm's). */
int cu_conv_on_cudnn(const Node *n);
size_t cu_conv_algo_ws_bytes(const Node *n);
size_t cu_conv_ws_bytes(const Graph *g, const Node *n);
/* Whether -DGC_CUDNN_FUSED runs Conv n (under layout L; NULL: all NCHW)
 * as one cudnnConvolutionBiasActivationForward, y = relu(conv(x) + z + b):
 * on cuDNN with a bias, all of one dtype, its epilogue Relu(y) or
 * Relu(Add(y, Z)) with Z an input of Y's dtype and shape in Y's layout,
 * and no copy of Y (cuDNN's ReLU runs with every algorithm; its identity
 * only with one, so a bias alone stays a kernel). *z_in: Z's input index,
 * or -1 (Relu(y)). */
int cu_conv_fused(const CuLayout *L, const Node *n, int *z_in);
/* Whether 4-d V's bytes differ between NCHW and NHWC (more than one channel
 * and more than one position): an NHWC Conv copies such an input or output
 * stored NCHW through its workspace. */
int cu_layouts_differ(const Value *V);

/* ---- runtime shapes (cuda_shapes.c) ---- */

/* Whether node n has a runtime dim: its kernels then take the shape table
 * (`const int64_t *dim`, the device copy of the schedule's dim[]) and read
 * their sizes from it; the host reads the same names from its own dim[]. */
int cu_dyn(const Cu *c, const Node *n);
/* p as C text ("784", "dim[0]", "(dim[0] * 784)": a product in
 * parentheses, since it may follow / or %), the same in a kernel and in the
 * schedule; held in one of c's 16 rotating buffers. */
const char *cu_sz(Cu *c, CgenProd p);
/* The product of dims [from, to) of s as cu_sz text. */
const char *cu_dims_sz(Cu *c, const Shape *s, int from, int to);
/* For a kernel of node n: the extra parameter (", const int64_t *dim" or
 * ""), the argument the launch passes (", ddim" or ""), and the line that
 * keeps the parameter used, written into k. */
const char *cu_kparam(const Cu *c, const Node *n);
const char *cu_karg(const Cu *c, const Node *n);
void cu_kuse(const Cu *c, const Node *n, Writer *k);
/* Strides of operand shape s read along output shape os (0 on broadcast
 * dims) and the dense strides of s, as products of runtime dims. */
void cu_bstrides_p(const Shape *s, const Shape *os, CgenProd *st);
void cu_strides_p(const Shape *s, CgenProd *st);
/* Dims [from, to) of s all static. */
int cu_static_dims(const Shape *s, int from, int to);
/* Whether g has data-dependent dims (ir/ir.h's SYM_DATA: extents computed
 * from values while the model runs): its schedule then runs without a
 * CUDA graph, the host setting those dims in mid-run. */
int cu_eager(const Graph *g);
/* 0, or -1 naming node n and the dim when n computes a data-dependent dim
 * of its own and its entry cannot (sets: the entry's dyn is 2). */
int cu_check_data_dims(const Graph *g, const Node *n, int sets, Diag *d);
/* Data-dependent dims, for an emitter whose entry's dyn is 2, into a block
 * of the schedule: v's values copied into the host array `name` (the
 * stream waited for); dim k of v set to the host expression expr (or, when
 * the dim is known before, checked against it), its bounds checked
 * (NAME_ERR_SHAPE); after the node's dims, the derived ones and the
 * device's copy of the table. */
void cu_read_host(Cu *c, const Value *v, const char *name);
void cu_set_dim(Cu *c, const Value *v, int k, const char *expr);
void cu_dims_to_device(Cu *c);
/* The CgenDims of the shared dims text (backend/c/dims_text.c) for a block
 * of the schedule written at body indent 2: locals "h_BASE", set_dim
 * cu_set_dim. */
CgenDims cu_dims_ctx(Cu *c);
/* The block that reads operand j of n back into the host array rb_vals and sets
 * n's data-dependent dims with the shared text write(o, n, "rb_vals"), then
 * copies the table to the device (`what` names the operand in a comment). */
void cu_read_back_dims(Cu *c, const Node *n, int j, const char *what, void (*write)(const CgenDims *, const Node *, const char *));
/* Whether view node n (Reshape, Squeeze, Unsqueeze) sets data-dependent dims
 * from its runtime operand; cu_view_dims writes the block that reads the
 * operand back and sets them (nothing for other views). */
int cu_view_sets_dims(const Graph *g, const Node *n);
void cu_view_dims(Cu *c, const Node *n);
/* The parts of the folder for a graph with runtime dims (g->n_syms > 0),
 * which cuda_backend.c's writers call (with the C backend's
 * cgen_write_dims_defs and cgen_write_max_dims): in NAME.h each port's
 * MAX_DIMS and DIM_SYMS and the declarations of NAME_run_shapes and
 * NAME_run_shapes_host; in NAME.cu the schedule's shape table (its first
 * lines) and, with data-dependent dims, its report of the run's dims (its
 * last), and NAME_run with those two functions (after NAME_capture). */
void cu_shapes_port_macros(const Cu *c, Writer *w, const char *kind, int i, const Value *v);
void cu_shapes_api_decls(const Cu *c, Writer *w);
void cu_shapes_prologue(const Cu *c, Writer *w);
void cu_shapes_epilogue(const Cu *c, Writer *w);
void cu_shapes_api(const Cu *c, Writer *w);

extern const CudaEntry cuda_kernel_entries[];
extern const CudaEntry cuda_lib_entries[];
extern const CudaEntry cuda_vision_entries[];
extern const CudaEntry cuda_index_entries[];
extern const CudaEntry cuda_grad_entries[];
extern const CudaEntry cuda_quant_entries[];
extern const CudaEntry cuda_optim_entries[];
extern const CudaEntry cuda_signal_entries[];
extern const CudaEntry cuda_rnn_entries[];
extern const CudaEntry cuda_text_entries[];
extern const CudaEntry cuda_select_entries[];
/* The selections on the host (cuda_select.c): Compress with a runtime
 * condition goes through them too. */
int cu_select_check(const Node *n, Diag *d);
int cu_emit_select(Cu *c, const Node *n, Diag *d);
/* Node n on the host, in a model with data-dependent dims (else a one-line
 * error): its inputs copied back into m->hws at the run's extents, the C
 * backend's text `write` over them (its data-dependent dims set there; ws
 * bytes of workspace), its outputs copied to the device at their extents. */
int cu_emit_on_host(Cu *c, const Node *n, void (*write)(const CgenDims *, const Node *), size_t ws, Diag *d);

/* The pointer expression of v in the schedule (marks it used: it gets a
 * declaration, and its storage's constant a place in the weights). */
const char *cu_ptr(Cu *c, const Value *v);
/* s appended to a C comment (printable ASCII, no terminator); a node's
 * one-line comment: op, name, output and input dtypes and shapes. */
void cu_comment_text(Writer *w, const char *s);
void cu_node_comment(const Graph *g, Writer *w, const Node *n);
const char *cu_wtext(const Writer *w);
int cu_is_float(DType t);
/* The type a kernel computes t in: f32 for f16/bf16, else t. */
DType cu_compute_type(DType t);
/* Element expression elem of dtype t loaded as its compute type (f16/bf16
 * converted, GC_F16_TO_F32 ...); val stored into elem of dtype t as one
 * statement with its newline (converted, bool as != 0). */
void cu_load(Writer *w, DType t, const char *elem);
void cu_store(Writer *w, DType t, const char *elem, const char *val);
/* 0 when n's first input and output are f32 or f64, else -1 with a
 * diagnostic (a CudaEntry check). */
int cu_check_float(const Node *n, Diag *d);
/* Starts a kernel for node n: its comment into c->kern; returns the
 * kernel's number (the kernel is named k<number>). */
int cu_kernel_begin(Cu *c, const Node *n);
/* Into a kernel over the elements i of an output of shape dims (rank r):
 * `int64_t VAR = sum_k coord_k(i) * mult[k]` (+ add[k] * mult[k]). */
void cu_index_map(Writer *k, const char *var, int rank, const int64_t *dims, const int64_t *mult, const int64_t *add);
/* The same with sizes and multipliers as products of runtime dims (add:
 * a constant base offset). */
void cu_index_map_p(Cu *c, Writer *k, const char *var, int rank, const CgenProd *dims, const CgenProd *mult, int64_t base);
/* Strides of operand shape s read along output shape os (0 on broadcast
 * dims); the dense strides of s. */
void cu_bstrides(const Shape *s, const Shape *os, int64_t *st);
void cu_strides_of(const Shape *s, int64_t *st);
/* One elementwise kernel over out (operands ops[j], NULL unused, with
 * broadcasting) computing fx, or node n's own scalar expression. */
int cu_emit_ew(Cu *c, const Node *n, const Value *out, const Value *const *ops, int nops, const FusedExpr *fx,
               Diag *d);
/* The integer convolutions' part of a direct Conv kernel: the inputs X and
 * W, extra kernel arguments (named), the zero points as double
 * expressions over them (the output channel is `m`), and the store of
 * y[i] from the double sum `acc`. */
typedef struct CuConvQuant {
    int ix, iw;
    const Value *extra[8];
    const char *extra_names[8];
    int n_extra;
    const char *zx, *zw;
    void (*store)(Writer *w, const Node *n);
} CuConvQuant;
/* Conv n as a generated kernel (cuda_vision.c): 1 to 3 spatial dims, f32
 * or f64, any pads; its bias included, not its epilogue. With q, an
 * integer convolution (ConvInteger, QLinearConv). */
int cu_emit_conv_direct(Cu *c, const Node *n, const CuConvQuant *q);
/* BatchNormalization n in training mode (cuda_grad.c). */
int cu_emit_batchnorm_train(Cu *c, const Node *n);
/* n's fused epilogue (Conv/Gemm/MatMul), in place on its output. */
int cu_emit_epilogue(Cu *c, const Node *n, Diag *d);
/* The same after a cuDNN Conv with bias B (NULL: none): y[n, c, ...] +=
 * B[c] folded into the epilogue's kernel where it reads y, else a kernel
 * of its own before it (cu_emit_channel_bias, cuda_libs.c). */
int cu_emit_epilogue_bias(Cu *c, const Node *n, const Value *B, Diag *d);
void cu_emit_channel_bias(Cu *c, const Node *n, const Value *Y, const Value *B);

#endif
