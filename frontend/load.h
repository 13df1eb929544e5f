/* load.h — loading a model file into a graph, by file extension.
 * The formats are one small table in load.c ({extension, loader}); an ONNX
 * importer plugs in as one more row. */
#ifndef GRAPHC_LOAD_H
#define GRAPHC_LOAD_H

#include "../ir/ir.h"

typedef Graph *(*ModelLoader)(const char *path, Diag *d);

typedef struct ModelFormat {
    const char *ext; /* ".gir" (matched case-insensitively at the end of the path) */
    ModelLoader load;
} ModelFormat;

/* Every known format, terminated by {NULL, NULL}. */
extern const ModelFormat model_formats[];

/* Loads path with the loader of its extension; NULL with a diagnostic
 * ("FILE: unknown model format (expected .gir; ...)") otherwise. */
Graph *load_model(const char *path, Diag *d);

#endif
