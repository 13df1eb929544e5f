/* compile.h — the one compile function: load → binds → pipeline → backend.
 *
 * Both front doors of graphc come through here: the command-line driver
 * (tools/graphc.c) and the public C API (api/builder.c, include/graphc/
 * graphc.h). Whatever reaches the backend therefore went through the same
 * steps in the same order, so the CLI and the C API write byte-identical
 * output folders for the same model and options. This layer sits above the
 * frontends, the passes and the backends and is the only one that knows all
 * three.
 */
#ifndef GRAPHC_API_COMPILE_H
#define GRAPHC_API_COMPILE_H

#include "../backend/backend.h"
#include "../frontend/load.h"
#include "../ir/ir.h"
#include "../ir/writer.h"

typedef struct CompileJob {
    const Backend *backend; /* NULL: the default backend (backend_list[0]) */
    int opt_level;          /* 0 or 2 */
    BackendOptions out;     /* the model's name, emit_main, weights */
    /* "all" or a pass name: the text IR around that pass goes to `dump`. */
    const char *print_after, *print_before;
    Writer *dump;
    /* When set, the pipeline's per-pass lines and, after a successful
     * write, "kernels: N" and the arena line (README "Reports"). */
    Writer *report;
    /* Training (--train): the model loaded a second time and prepared by
     * api_setup_inference; compiled beside the training step as its
     * inference pass. NULL otherwise. */
    Graph *infer_graph;
    int plan_keep_forward; /* Graph.plan_keep_forward (--plan-keep-forward) */
    int max_threads;       /* Graph.max_threads (--max-threads; 0: the target's default) */
    int layout;            /* Graph.layout (--cuda-layout; GRAPH_LAYOUT_AUTO: the target's choice) */
    DType precision;       /* Graph.precision (--precision: DT_F16, DT_BF16; 0 or DT_F32: as the model) */
} CompileJob;

/* The CUDA target's options into job (its backend set): precision "fp32",
 * "fp16" or "bf16" (graphc --precision) and layout "auto", "nchw" or "nhwc"
 * (--cuda-layout), NULL for the defaults; either needs the cuda target,
 * and a lower precision no training (training: a --grad or --train job).
 * names: how the caller's user spells the two options and the target
 * ("--precision", "--cuda-layout", "--target=cuda" on the command line).
 * 0, or -1 with a one-line reason. */
int api_cuda_options(CompileJob *job, const char *precision, const char *layout, int training,
                     const char *const names[3], Diag *d);

/* Registers the user operators of FILE.c (graphc --ops; ir/custom_op.h):
 * the reader checks every annotated function; its ops then load from ONNX
 * (their domain) and the text IR like built-in ones, and the C backend
 * copies the file into the output folder. 0, or -1 with a one-line
 * "FILE:LINE: ..." diagnostic. */
int api_load_ops(const char *path, Diag *d);

/* Training requests (--grad, --train and their options; api/train.c). */
typedef enum TrainRequestMode { TRAIN_REQ_NONE, TRAIN_REQ_GRAD, TRAIN_REQ_TRAIN } TrainRequestMode;
typedef struct TrainRequest {
    TrainRequestMode mode;
    const char *wrt;       /* "NAME,NAME": the parameters; NULL: every float constant of rank >= 1 */
    const char *loss;      /* "cross-entropy:OUTPUT" or "mse:OUTPUT": a loss to append; NULL: none */
    const char *optimizer; /* "sgd:lr=..,momentum=..", "adam:lr=..": --train only; NULL: sgd defaults */
    int wrt_inputs;        /* with wrt NULL: every float graph input is a parameter too (first) */
} TrainRequest;

/* Applies tr to a freshly loaded graph: chooses the parameters (they become
 * training state, VK_STATE, before any pass could fold them), infers shapes,
 * appends the loss (a `label` input and the loss as the first output), and
 * sets g->train for the autodiff pass. Nothing when tr is NULL or mode is
 * TRAIN_REQ_NONE. 0, or -1 with a diagnostic. */
int api_setup_training(Graph *g, const TrainRequest *tr, Diag *d);
/* Prepares ig, the same model loaded again, as the inference pass of the
 * training graph g (api_setup_training ran on g): the values g trains become
 * state in ig too, so both passes read the same state region. */
int api_setup_inference(Graph *ig, const Graph *g, Diag *d);
/* Parses an --optimizer text ("sgd:lr=0.05,momentum=0.9", "adam:lr=1e-3,...")
 * into t (optimizer and hyper-parameters, PyTorch's defaults otherwise). */
int api_parse_optimizer(const char *text, TrainSpec *t, Diag *d);

/* graphc gradcheck (api/gradcheck.c). */
typedef struct GradcheckOptions {
    double eps, atol, rtol; /* central-difference step; |a - n| <= atol + rtol |n| */
    int max_elems;          /* elements checked per parameter (evenly spaced), >= 2 */
} GradcheckOptions;
/* Checks the autodiff gradient of freshly loaded g against central finite
 * differences in the f64 interpreter. inputs[i]: raw data of g->inputs[i].
 * req: --wrt / --loss (default: every float input and constant, the probe
 * loss). One report line per parameter; *n_failed = parameters with a
 * failing element. 0, or -1 with a diagnostic (a model that cannot be
 * differentiated). */
int api_gradcheck(Graph *g, const TrainRequest *req, const void *const *inputs, const GradcheckOptions *o,
                  Writer *report, int *n_failed, Diag *d);

/* Loads a model file with the loader of its extension, then applies the
 * --bind requests of lo (each a graph input turned into a constant holding a
 * .npy file's value) and lo->no_fold. NULL with a diagnostic on failure. */
Graph *api_load(const char *path, const LoadOptions *lo, Diag *d);

/* Prepares g for the job's target: opt level and the backend's workspace
 * policy; then runs the pass pipeline (print options and report from the
 * job). Used by compile and by `graphc dump`, which draws the planned graph. */
int api_run_pipeline(Graph *g, const CompileJob *job, Diag *d);

/* Checks the model name, runs the pipeline, checks that the backend supports
 * every node, and writes the output folder dir. 0, or -1 with a diagnostic
 * (and nothing left behind in dir). */
int api_compile_graph(Graph *g, const char *dir, const CompileJob *job, Diag *d);
/* The same, but the backend renders the sources' text into out
 * (Backend.render) and no file is written: what the fuzzers run. */
int api_compile_to_writer(Graph *g, Writer *out, const CompileJob *job, Diag *d);

#endif
