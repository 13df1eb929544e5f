/* onnx_pb.h — a small, bounded, zero-copy reader for the protobuf messages of
 * an ONNX model (see onnx_pb.c for the wire format and the limits).
 *
 * Decoded messages are light structs whose strings and byte spans point into
 * the caller's buffer (usually the mmap of the model file); lists live in a
 * caller-supplied Arena. Repeated scalar fields (packed or not) are kept as
 * the span of their enclosing message and decoded on demand. */
#ifndef GRAPHC_ONNX_PB_H
#define GRAPHC_ONNX_PB_H

#include "../ir/ir.h"

#include <stddef.h>
#include <stdint.h>

/* Documented limits (all checked; exceeding one is an error). */
#define ONNX_MAX_FILE_BYTES ((size_t)1 << 31)  /* protobuf's 2 GiB message limit */
/* Message nesting: Model>Graph>Node>Attr>Tensor>Entry is 6 deep; each
 * subgraph attribute (If/Loop/Scan body) adds Graph>Node>Attr (3), so 16
 * allows bodies nested three deep. Also bounds deprecated-group nesting. */
#define ONNX_MAX_DEPTH 16
#define ONNX_MAX_LIST 4000000                  /* nodes, initializers, list elements */
#define ONNX_MAX_ELEMS ((int64_t)1 << 34)      /* elements of one tensor */

typedef struct PbSpan {
    const uint8_t *p;
    size_t n;
} PbSpan;

/* Decoder context: the whole buffer (for error offsets) and the error text. */
typedef struct PbCtx {
    const uint8_t *base;
    size_t size;
    Arena *arena; /* lists and copied strings */
    int depth;    /* message nesting of the graph being decoded (0 at the start) */
    char err[512];
} PbCtx;

typedef struct OnnxTensor {
    const char *name; /* "" when absent */
    int32_t data_type;
    int n_dims;
    int64_t dims[IR_MAX_RANK];
    PbSpan msg; /* the whole TensorProto, to decode typed repeated fields */
    int has_raw;
    PbSpan raw;
    int external;            /* data_location == EXTERNAL */
    const char *ext_location; /* external_data entries */
    int64_t ext_offset, ext_length; /* -1 when absent */
    int has_string_data;
} OnnxTensor;

enum { /* AttributeProto.AttributeType */
    ONNX_ATTR_UNDEFINED = 0, ONNX_ATTR_FLOAT = 1, ONNX_ATTR_INT = 2, ONNX_ATTR_STRING = 3,
    ONNX_ATTR_TENSOR = 4, ONNX_ATTR_GRAPH = 5, ONNX_ATTR_FLOATS = 6, ONNX_ATTR_INTS = 7,
    ONNX_ATTR_STRINGS = 8
};

struct OnnxGraph;

typedef struct OnnxAttr {
    const char *name;
    int type; /* ONNX_ATTR_*, inferred from the fields set when absent */
    double f;
    int64_t i;
    const char *s;
    int n; /* ints / floats count */
    int64_t *ints;
    double *floats;
    OnnxTensor t;
    struct OnnxGraph *g; /* type GRAPH: the decoded subgraph (field g) */
} OnnxAttr;

typedef struct OnnxNode {
    const char *name, *op_type, *domain;
    int n_in, n_out, n_attrs;
    const char **in, **out;
    OnnxAttr *attrs;
} OnnxNode;

typedef struct OnnxDim {
    int kind; /* 0 missing, 1 value, 2 param */
    int64_t value;
    const char *param;
} OnnxDim;

typedef struct OnnxValueInfo {
    const char *name;
    int has_tensor_type; /* TypeProto.tensor_type present */
    int32_t elem_type;
    int has_shape;
    int rank;
    OnnxDim dims[IR_MAX_RANK];
} OnnxValueInfo;

typedef struct OnnxOpset {
    const char *domain;
    int64_t version;
} OnnxOpset;

typedef struct OnnxGraph {
    const char *name;
    int n_nodes, n_inits, n_inputs, n_outputs;
    OnnxNode *nodes;
    OnnxTensor *inits;
    OnnxValueInfo *inputs, *outputs;
} OnnxGraph;

typedef struct OnnxModel {
    int64_t ir_version; /* 0 when absent */
    int n_opsets;
    OnnxOpset *opsets;
    int has_graph;
    OnnxGraph graph;
} OnnxModel;

/* Decodes a ModelProto from buf[0..n). 0, or -1 with ctx->err set. */
int onnx_pb_model(PbCtx *ctx, const uint8_t *buf, size_t n, OnnxModel *m);

/* Element count of a decoded tensor's dims (checked against
 * ONNX_MAX_ELEMS); -1 with ctx->err set. */
int onnx_pb_numel(PbCtx *ctx, const OnnxTensor *t, int64_t *numel);

/* Decodes the typed repeated data of t (float_data, int32_data, int64_data,
 * double_data, uint64_data, by ONNX's rules for ONNX data type t->data_type)
 * into `out` as `numel` little-endian elements of dtype `dt`. The element
 * count must equal numel. With out == NULL only checks the count (call it
 * before allocating `out`). 0, or -1 with ctx->err set. */
int onnx_pb_typed_data(PbCtx *ctx, const OnnxTensor *t, DType dt, int64_t numel, void *out);

#endif
