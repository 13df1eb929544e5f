/* load.h — loading a model file into a graph, by file extension.
 * The formats are one small table in load.c ({extension, loader}); an ONNX
 * importer plugs in as one more row. */
#ifndef GRAPHC_LOAD_H
#define GRAPHC_LOAD_H

#include "../ir/ir.h"

typedef Graph *(*ModelLoader)(const char *path, Diag *d);

/* A `--shape NAME=d0,d1,...` request: the shape of graph input NAME; with
 * `max` set, a `--max-shape` request: the fixed dims of NAME and the upper
 * bounds of its symbolic ones (runtime shapes, lower bound 1). */
typedef struct InputShape {
    const char *name;
    Shape shape;
    int max;
} InputShape;

typedef struct LoadOptions {
    const InputShape *shapes;
    int n_shapes;
    int no_fold; /* copied into Graph.no_fold by the driver */
    int64_t max_tensor_bytes; /* copied into Graph.max_tensor_bytes; 0: the default */
    int64_t max_dim; /* --max-dim: copied into Graph.max_dim; 0: none */
    /* --bind NAME=FILE.npy: graph inputs turned into constants (the driver
     * applies them after loading); the strings are borrowed. */
#define LOAD_MAX_BINDS 32
    const char *binds[LOAD_MAX_BINDS];
    int n_binds;
} LoadOptions;

typedef Graph *(*ModelLoaderOpts)(const char *path, const LoadOptions *opts, Diag *d);

typedef struct ModelFormat {
    const char *ext; /* ".gir" (matched case-insensitively at the end of the path) */
    ModelLoader load;
    ModelLoaderOpts load_opts; /* used instead of `load` when set */
} ModelFormat;

/* Every known format, terminated by {NULL, NULL}. */
extern const ModelFormat model_formats[];

/* Loads path with the loader of its extension; NULL with a diagnostic
 * ("FILE: unknown model format (expected .gir; ...)") otherwise. */
Graph *load_model(const char *path, Diag *d);
/* The same with options. Formats without their own handling of input
 * shapes (text IR: shapes are static) accept a --shape only when it equals
 * the input's shape; naming no input is an error. */
Graph *load_model_opts(const char *path, const LoadOptions *opts, Diag *d);

#endif
