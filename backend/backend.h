/* backend.h — the seam between the compiler and its targets.
 *
 * A backend is a description, like an operator (ggml's backend interface,
 * tinygrad's renderers): a name chosen by `--target=NAME`, what it can
 * compile (which ops and dtypes, with the reason when not), how much scratch
 * each node's kernel needs on this target (asked by memory planning through
 * Graph.workspace), which model names it accepts, and how it writes an
 * output folder from a planned graph. The compile driver (api/compile.c) is
 * the only code that picks a backend; passes never see one, and a backend
 * reads the planned graph without changing it.
 *
 * Every backend writes its output folder atomically: complete, or not at all.
 */
#ifndef GRAPHC_BACKEND_H
#define GRAPHC_BACKEND_H

#include <stddef.h>

#include "../ir/ir.h"
#include "../ir/writer.h"

/* How the weights reach the generated code; the names are the values of
 * `--weights=`. The public GcWeights enum (include/graphc/graphc.h) has the
 * same values. */
typedef enum BackendWeights {
    BACKEND_WEIGHTS_INCBIN, /* "incbin": a binary blob pulled in by the assembler */
    BACKEND_WEIGHTS_CARRAY, /* "c-array": a portable constant array */
    BACKEND_WEIGHTS_FILE,   /* "file": a blob the caller loads and passes in */
    BACKEND_WEIGHTS_COUNT
} BackendWeights;

/* Parses a weights mode name; 0, or -1 when unknown. */
int backend_weights_parse(const char *name, BackendWeights *out);

typedef struct BackendOptions {
    const char *name;       /* the model's name: API prefix and file stem (checked by check_name) */
    int emit_main;          /* also write a program that runs the model on .npy files */
    BackendWeights weights;
    /* Training (graphc compile --train): the graph written is one training
     * step (forward, backward, optimizer updates in place, Graph.updates),
     * its state values live in a caller-provided state region, and
     * infer_graph, planned separately, is the forward pass over the same
     * state (matched by name). NULL: an ordinary model (state values, if
     * any, are read-only weights). */
    const Graph *infer_graph;
    /* --target=cuda --cuda-jit: the host code embeds the kernels' source and
     * compiles it with NVRTC at NAME_init (no nvcc at build time) */
    int cuda_jit;
} BackendOptions;

typedef struct Backend {
    const char *name;    /* "c": the value of --target */
    const char *summary; /* one line for --help */
    /* 0 when the backend can compile node n of graph g (shape-inferred),
     * else -1 with the reason as a node diagnostic ("the C backend has no
     * emitter for op 'Foo'", a dtype it lacks, a kind of runtime dim). */
    int (*supports)(const Graph *g, const Node *n, Diag *d);
    /* Scratch bytes the backend's kernel for node n needs (0: none). */
    size_t (*workspace)(const Graph *g, const Node *n);
    /* Optional (NULL: none). The kernel the backend picks for node n, as a
     * short note (Graph.kernel_note: --print-after shows it per node). */
    int (*kernel_note)(const Graph *g, const Node *n, char *buf, size_t cap);
    /* Optional (NULL: none). Raises last[root value id] to the last step
     * (index in g->nodes) at which one of the backend's kernels reads that
     * value beyond its node's inputs, for memory planning (Graph.extra_reads). */
    void (*extra_reads)(const Graph *g, int *last);
    /* Optional (NULL: none). The bytes the backend's kernels store of arena
     * value v where fewer than its own, else -1 (Graph.stored_bytes). */
    int64_t (*stored_bytes)(const Graph *g, const Value *v);
    /* 0 when `name` can name the model in this backend's output, else -1
     * with a diagnostic saying why. */
    int (*check_name)(const char *name, Diag *d);
    /* Writes the output folder dir for the planned graph g. */
    int (*write)(const Graph *g, const char *dir, const BackendOptions *o, Diag *d);
    /* Optional (NULL: none). Appends the text of the sources `write` would
     * write (weights and runtime files left out) to out, touching no file:
     * how the fuzzers compile. Same checks and errors as `write`. */
    int (*render)(const Graph *g, const BackendOptions *o, Writer *out, Diag *d);
} Backend;

/* Every backend, terminated by NULL; the first is the default. */
extern const Backend *const backend_list[];
/* The backend called name, or NULL. */
const Backend *backend_find(const char *name);

#endif
