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
} CompileJob;

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
