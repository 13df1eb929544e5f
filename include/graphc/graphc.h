/* graphc.h — graphc's public C API: build a graph the way MXNet's symbol
 * API composes ops (inputs, constants, ops with key=value attributes,
 * outputs), then check, interpret, print or compile it in-process.
 *
 * This header is all a program needs (link libgraphc.a and -lm): the
 * graph and value types are opaque, GcDiag is complete. Every function that
 * can fail takes a GcDiag and returns NULL / -1 with the message in
 * diag->msg ("node 'fc1' (Gemm): ..."); a GcDiag may be reused, the first
 * error of each failing call replaces the previous message.
 *
 * gc_compile runs the same compile function as `graphc compile` (one
 * pipeline, one backend call), so for the same graph and options both write
 * byte-identical output folders.
 */
#ifndef GRAPHC_GRAPHC_H
#define GRAPHC_GRAPHC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct Graph GcGraph;
typedef struct Value GcValue;

/* Diagnostics: msg holds the error of the last call that failed. */
typedef struct GcDiag {
    int n_errors;  /* errors reported into this GcDiag so far */
    char msg[2048];
} GcDiag;

typedef enum GcWeights {
    GC_WEIGHTS_INCBIN = 0, /* weights.bin pulled in by an assembler .incbin (fast to build) */
    GC_WEIGHTS_CARRAY,     /* weights as a C array (string literals in NAME_weights_<k>.inc) */
    GC_WEIGHTS_FILE        /* the caller loads NAME.weights (a 64-byte header, then the blob),
                              checks it with NAME_check_weights and passes it to NAME_run */
} GcWeights;

/* Optimization level; a zeroed GcCompileOptions means -O2. */
typedef enum GcOptLevel {
    GC_OPT_DEFAULT = 0, /* -O2 */
    GC_OPT_O0,          /* only the passes correctness needs */
    GC_OPT_O2           /* also simplification and fusion */
} GcOptLevel;

typedef struct GcCompileOptions {
    const char *name;        /* C prefix and library name; default: the graph's name */
    int emit_main;           /* also write NAME_main.c (npy in, npy out) */
    GcWeights weights;
    const char *print_after; /* pass name or "all": dump IR to stderr after it */
    GcOptLevel opt;
    const char *print_before; /* pass name or "all": dump IR to stderr before it */
    const char *target;      /* backend, as graphc compile --target; NULL: "c" */
    /* the most bytes one tensor, or the memory arena, may take (graphc
     * --max-tensor-bytes); 0: 16 GiB; at most 2^60 */
    int64_t max_tensor_bytes;
    /* Training (graphc compile --grad / --train and their options): with
     * grad, the model's first output is the loss and one gradient output per
     * parameter follows the model's outputs; with train, the folder holds
     * NAME_init_state, NAME_train_step and NAME_infer_v. wrt ("NAME,NAME"),
     * loss ("cross-entropy:OUTPUT", "mse:OUTPUT") and optimizer
     * ("sgd:lr=..,momentum=..", "adam:lr=..") as on the command line; NULL
     * for the defaults. The graph passed in is left differentiated. */
    int grad, train;
    const char *wrt, *loss, *optimizer;
    /* target "cuda": the kernels compiled by NVRTC at NAME_init (graphc
     * compile --cuda-jit) */
    int cuda_jit;
    /* target "cuda": "fp32", "fp16" or "bf16" (graphc compile --precision;
     * NULL: the model's own types), and where 4-d activations are kept
     * around cuDNN's convolutions, "auto", "nchw" or "nhwc" (--cuda-layout;
     * NULL: auto) */
    const char *precision, *cuda_layout;
} GcCompileOptions;

GcGraph *gc_graph_new(const char *name);
/* Loads a model file (.gir text IR or .onnx, by extension), as graphc
 * compile does; NULL with the reason in d. */
GcGraph *gc_load(const char *path, GcDiag *d);
void gc_graph_free(GcGraph *g);
/* Registers the user operators of an annotated C file (graphc --ops FILE.c;
 * see graphc/custom_op.h): afterwards gc_load and gc_op know them by name,
 * and gc_compile copies the file into output folders that use them. The
 * registry is process-wide; 0, or -1 with "FILE:LINE: ..." in d. */
int gc_load_ops(const char *path, GcDiag *d);
/* dtype: "f32", "f64", "f16", "bf16", "i8", "u8", "i16", "i32", "i64", "bool" */
GcValue *gc_input(GcGraph *g, const char *name, const char *dtype, int rank, const int64_t *dims, GcDiag *d);
/* data (row-major, little-endian, of the given dtype) is copied. */
GcValue *gc_const(GcGraph *g, const char *name, const char *dtype, int rank, const int64_t *dims,
                  const void *data, GcDiag *d);
/* Adds node `op` (ONNX op type) named `name` with n_in inputs (NULL entries
 * are absent optional inputs) and attributes "key=value key=value"; returns
 * its first output. */
GcValue *gc_op(GcGraph *g, const char *op, const char *name, GcValue *const *in, int n_in,
               const char *attrs, GcDiag *d);
/* Same, for ops with several outputs: writes n_out outputs to out. */
int gc_op_multi(GcGraph *g, const char *op, const char *name, GcValue *const *in, int n_in,
                const char *attrs, int n_out, GcValue **out, GcDiag *d);
void gc_output(GcGraph *g, GcValue *v);
/* Runs shape inference; afterwards gc_value_shape answers. */
int gc_infer(GcGraph *g, GcDiag *d);
int gc_value_shape(const GcValue *v, int64_t *dims, int max_rank); /* returns rank */
/* Writes the text IR of g to path. */
int gc_write_text(GcGraph *g, const char *path, GcDiag *d);
/* Runs the pipeline and writes the output folder dir (the target's sources). */
int gc_compile(GcGraph *g, const char *dir, const GcCompileOptions *opt, GcDiag *d);
/* Interprets g in f32 on raw inputs (graph-input order) into raw outputs. */
int gc_interpret(GcGraph *g, const void *const *inputs, void *const *outputs, GcDiag *d);

#ifdef __cplusplus
}
#endif
#endif
