/* onnx_import.h — ONNX ModelProto → graphc IR (see onnx_import.c), and the
 * small interface the old-opset upgraders (onnx_upgrade.c) work through.
 *
 * Import goes through an intermediate node form (ImpNode: op type, input and
 * output names, decoded attributes) so that upgraders can move attributes to
 * constant inputs, or expand a node into several, before the IR node (whose
 * attributes must match the op's opset-17 schema) is built. */
#ifndef GRAPHC_ONNX_IMPORT_H
#define GRAPHC_ONNX_IMPORT_H

#include "../ir/ir.h"
#include "load.h"

/* Loads an ONNX model file; shapes from opts fill symbolic input dims. */
Graph *onnx_load(const char *path, const LoadOptions *opts, Diag *d);
/* The same for a model image of `size` bytes already in memory (copied);
 * external data is read from folder dir, or refused when dir is NULL. */
Graph *onnx_load_image(const void *buf, size_t size, const char *dir, const LoadOptions *opts, Diag *d);

typedef struct ImpAttr {
    const char *name;
    int type; /* ONNX_ATTR_* */
    int64_t i;
    double f;
    const char *s;
    int n;
    int64_t *ints;
    double *floats;
    TensorData t;
    const struct OnnxGraph *graph; /* type GRAPH: a body, unrolled by onnx_control.c */
} ImpAttr;

typedef struct ImpNode {
    const char *op_type, *name;
    int n_in, n_out, n_attrs;
    const char **in;  /* "" = absent optional input */
    const char **out;
    ImpAttr *attrs;
} ImpNode;

typedef struct OnnxImp OnnxImp;

/* Attribute lookup / removal on an intermediate node. */
ImpAttr *imp_attr(ImpNode *n, const char *name);
void imp_drop_attr(ImpNode *n, const char *name);
/* Adds (or replaces) an attribute; its storage must live in the graph. */
void imp_set_attr(OnnxImp *im, ImpNode *n, const ImpAttr *a);
/* Sets input idx to `name`, growing the list with absent ("") inputs. */
void imp_set_input(OnnxImp *im, ImpNode *n, int idx, const char *name);
/* A new constant in the graph, named after `base` and unique among every
 * name of the model; returns its name. rank is 0 (scalar) or 1. */
const char *imp_const_i64(OnnxImp *im, const char *base, const int64_t *v, int count, int rank);
const char *imp_const_f32(OnnxImp *im, const char *base, const float *v, int count, int rank);
/* A value name not used anywhere in the model. */
const char *imp_fresh_name(OnnxImp *im, const char *base);
/* Appends a new node (built after the current one); n_in/n_out slots start
 * as "". */
ImpNode *imp_new_node(OnnxImp *im, const char *op_type, const char *name, int n_in, int n_out);
/* dtype/shape of a value known before shape inference (graph input or
 * constant); 0 when known. */
int imp_known(OnnxImp *im, const char *value, DType *dt, Shape *s);
/* Reports a node error ("node 'n' (Op): ..."). Returns -1. */
int imp_node_error(OnnxImp *im, const ImpNode *n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* What onnx_control.c needs of the importer's state (all owned by it). */
typedef struct ImpEnv {
    Graph *g;
    Diag *d;
    Arena *tmp; /* lives until the import ends */
    const LoadOptions *opts; /* NULL when none */
} ImpEnv;
ImpEnv imp_env(OnnxImp *im);
struct OnnxNode;
struct OnnxTensor;
/* ONNX node → ImpNode with decoded attributes; `index` names an unnamed
 * node ("<OpType>_<index>"). */
int imp_from_onnx(OnnxImp *im, const struct OnnxNode *on, int index, ImpNode *n);
/* Decodes tensor t (data borrowed from the mapping or copied into the graph). */
int imp_tensor(OnnxImp *im, const struct OnnxTensor *t, TensorData *td);

/* Control flow (onnx_control.c): unrolls Scan, Loop and If nodes into
 * pending plain nodes (imp_new_node). 1 when n was unrolled (n itself is
 * not built), 0 when n is no control-flow op, -1 with a diagnostic. */
int onnx_control_node(OnnxImp *im, ImpNode *n, int opset);

/* Old-opset upgrade of node n (onnx_upgrade.c) for default-domain opset
 * `opset`. 0, or -1 with a diagnostic. */
int onnx_upgrade_node(OnnxImp *im, ImpNode *n, int opset);
/* 1 when an upgrade of onnx_upgrade.c handles op_type at `opset` (it may
 * turn an op graphc has no description of, e.g. Scatter, into one it has). */
int onnx_upgrade_renames(const char *op_type, int opset);

#endif
