/* onnx_upgrade.c — converts nodes written against an older default-domain
 * opset (1..16) to the IR's opset-17 form, before the IR node is built.
 *
 * One table row per op whose form changed: {op type ("*": every op), first
 * opset of the new form, upgrade function}; every row whose op matches and
 * whose version is above the model's opset applies, in table order. No
 * switch over ops. Upgrades:
 *   legacy forms (opset < 7; the ONNX node suite still holds such models)
 *     every op < 7      consumed_inputs, is_test dropped
 *     Add/Sub/Mul/Div/Gemm < 7  `broadcast` dropped (suffix broadcasting is
 *                       numpy's); an explicit `axis` is refused
 *     Reshape < 5       shape → input 1       Cast < 6  `to` name → enum
 *     Concat < 4        missing axis → 1      Pad < 2   paddings → pads
 *     Tile < 6          refused (different inputs)
 *   attribute → constant input
 *     Slice < 10        starts, ends, axes → inputs 1, 2, 3 (i64)
 *     TopK < 10         k → input 1 (i64 [1])
 *     Squeeze < 13      axes → input 1        Unsqueeze < 13  axes → input 1
 *     ReduceSum < 13    axes → input 1        Split < 13      split → input 1
 *     Pad < 11          pads → input 1, value → input 2 (in the data's dtype)
 *     Clip < 11         min, max → inputs 1, 2 (in the data's dtype)
 *     Dropout < 12      ratio → input 1 (f32 scalar)
 *     Upsample < 9      scales → input 1 (f32)
 *   semantic changes
 *     Softmax, LogSoftmax, Hardmax < 13: the input is coerced to 2-D at
 *       `axis` (default 1): Flatten(axis) → op(axis=1) → Reshape to the
 *       input's shape (a constant when the input's shape is known at import,
 *       else Shape(x)); nothing changes when the axis is already the last.
 *     BatchNormalization < 9: `spatial` dropped when 1 (else refused).
 *     BatchNormalization 9..13 with five outputs (its training form: Y,
 *       running mean and variance, saved mean and variance) becomes the
 *       opset-14 training form: training_mode=1, outputs Y and the running
 *       statistics. The saved statistics are dropped: PyTorch's training
 *       exports leave them unread, and a node reading one fails at import
 *       as the reader of an undefined value.
 *   renamed ops
 *     Scatter (opset 9..10, deprecated in 11) is ScatterElements with the
 *       same inputs and `axis`: renamed at every opset.
 *     Resize < 11: (X, scales) → (X, roi absent, scales) with
 *       coordinate_transformation_mode "asymmetric" (and nearest_mode "floor"
 *       for mode "nearest"), which is what Resize-10 computes.
 *     RoiAlign < 16: coordinate_transformation_mode "output_half_pixel"
 *       (RoiAlign-10 has no such attribute and does not shift by half a pixel).
 * Constants for the data-typed operands (Pad value, Clip min/max) take the
 * data's dtype when it is known at import (graph input or constant), else an
 * f32 constant goes through CastLike(c, data).
 * Attributes of older forms not listed here stay on the node and are
 * refused by name when the IR node is built, so nothing is silently dropped.
 */
#include "onnx_import.h"
#include "onnx_pb.h"

#include <stdio.h>
#include <string.h>

typedef struct Upgrade {
    const char *op_type;
    int new_form; /* first opset of the form the IR uses */
    int (*fn)(OnnxImp *im, ImpNode *n);
} Upgrade;

static const char *cat_name(OnnxImp *im, const ImpNode *n, const char *what)
{
    char buf[320];
    snprintf(buf, sizeof buf, "%.200s_%s", n->name, what);
    return imp_fresh_name(im, buf);
}

/* Moves INTS attribute `attr` (if present) to a 1-D i64 constant input idx. */
static int ints_to_input(OnnxImp *im, ImpNode *n, const char *attr, int idx)
{
    ImpAttr *a = imp_attr(n, attr);
    if (!a) return 0;
    if (a->type != ONNX_ATTR_INTS && a->type != ONNX_ATTR_INT)
        return imp_node_error(im, n, "attribute '%s' must be a list of ints in opset < 13 form", attr);
    const int64_t *v = a->type == ONNX_ATTR_INTS ? a->ints : &a->i;
    int cnt = a->type == ONNX_ATTR_INTS ? a->n : 1;
    char base[320];
    snprintf(base, sizeof base, "%.200s_%s", n->name, attr);
    imp_set_input(im, n, idx, imp_const_i64(im, base, v, cnt, 1));
    imp_drop_attr(n, attr);
    return 0;
}

/* A constant holding v in the dtype of value `like` (see the file comment). */
static const char *typed_scalar(OnnxImp *im, ImpNode *n, const char *what, double v, const char *like)
{
    DType dt;
    Shape s = {0};
    char base[320];
    snprintf(base, sizeof base, "%.200s_%s", n->name, what);
    float f = (float)v;
    if (imp_known(im, like, &dt, &s) == 0 && dt == DT_F32) return imp_const_f32(im, base, &f, 1, 0);
    const char *c = imp_const_f32(im, base, &f, 1, 0);
    ImpNode *cl = imp_new_node(im, "CastLike", cat_name(im, n, "castlike"), 2, 1);
    cl->in[0] = c;
    cl->in[1] = like;
    cl->out[0] = cat_name(im, n, what);
    return cl->out[0];
}

static int up_slice(OnnxImp *im, ImpNode *n)
{
    if (!imp_attr(n, "starts") || !imp_attr(n, "ends"))
        return imp_node_error(im, n, "attributes 'starts' and 'ends' are required in opset < 10");
    return ints_to_input(im, n, "starts", 1) || ints_to_input(im, n, "ends", 2) || ints_to_input(im, n, "axes", 3);
}

static int up_axes1(OnnxImp *im, ImpNode *n) { return ints_to_input(im, n, "axes", 1); }
static int up_split(OnnxImp *im, ImpNode *n) { return ints_to_input(im, n, "split", 1); }

static int up_topk(OnnxImp *im, ImpNode *n)
{
    ImpAttr *a = imp_attr(n, "k");
    if (!a || a->type != ONNX_ATTR_INT) return imp_node_error(im, n, "attribute 'k' (int) is required in opset < 10");
    imp_set_input(im, n, 1, imp_const_i64(im, cat_name(im, n, "k"), &a->i, 1, 1));
    imp_drop_attr(n, "k");
    return 0;
}

static int up_pad(OnnxImp *im, ImpNode *n)
{
    if (!imp_attr(n, "pads")) return imp_node_error(im, n, "attribute 'pads' is required in opset < 11");
    if (ints_to_input(im, n, "pads", 1)) return -1;
    ImpAttr *v = imp_attr(n, "value");
    if (v) {
        if (v->type != ONNX_ATTR_FLOAT) return imp_node_error(im, n, "attribute 'value' must be a float");
        if (v->f != 0.0) imp_set_input(im, n, 2, typed_scalar(im, n, "value", v->f, n->in[0]));
        imp_drop_attr(n, "value");
    }
    return 0;
}

static int up_clip(OnnxImp *im, ImpNode *n)
{
    static const char *const keys[2] = {"min", "max"};
    for (int k = 0; k < 2; k++) {
        ImpAttr *a = imp_attr(n, keys[k]);
        if (!a) continue;
        if (a->type != ONNX_ATTR_FLOAT) return imp_node_error(im, n, "attribute '%s' must be a float", keys[k]);
        imp_set_input(im, n, 1 + k, typed_scalar(im, n, keys[k], a->f, n->in[0]));
        imp_drop_attr(n, keys[k]);
    }
    return 0;
}

static int up_dropout(OnnxImp *im, ImpNode *n)
{
    ImpAttr *a = imp_attr(n, "ratio");
    if (!a) return 0;
    if (a->type != ONNX_ATTR_FLOAT) return imp_node_error(im, n, "attribute 'ratio' must be a float");
    float r = (float)a->f;
    imp_set_input(im, n, 1, imp_const_f32(im, cat_name(im, n, "ratio"), &r, 1, 0));
    imp_drop_attr(n, "ratio");
    return 0;
}

static int up_upsample(OnnxImp *im, ImpNode *n)
{
    ImpAttr *a = imp_attr(n, "scales");
    if (!a || a->type != ONNX_ATTR_FLOATS)
        return imp_node_error(im, n, "attribute 'scales' (floats) is required in opset < 9");
    float buf[IR_MAX_RANK];
    if (a->n > IR_MAX_RANK) return imp_node_error(im, n, "attribute 'scales' has more than %d entries", IR_MAX_RANK);
    for (int i = 0; i < a->n; i++) buf[i] = (float)a->floats[i];
    imp_set_input(im, n, 1, imp_const_f32(im, cat_name(im, n, "scales"), buf, a->n, 1));
    imp_drop_attr(n, "scales");
    return 0;
}

static int up_resize(OnnxImp *im, ImpNode *n)
{
    if (n->n_in >= 2) {
        const char *scales = n->in[1];
        imp_set_input(im, n, 2, scales);
        n->in[1] = "";
    }
    ImpAttr ct = {.name = "coordinate_transformation_mode", .type = ONNX_ATTR_STRING, .s = "asymmetric"};
    imp_set_attr(im, n, &ct);
    ImpAttr *mode = imp_attr(n, "mode");
    if (!mode || (mode->type == ONNX_ATTR_STRING && strcmp(mode->s, "nearest") == 0)) {
        ImpAttr nm = {.name = "nearest_mode", .type = ONNX_ATTR_STRING, .s = "floor"};
        imp_set_attr(im, n, &nm);
    }
    return 0;
}

static int up_roialign(OnnxImp *im, ImpNode *n)
{
    ImpAttr ct = {.name = "coordinate_transformation_mode", .type = ONNX_ATTR_STRING, .s = "output_half_pixel"};
    imp_set_attr(im, n, &ct);
    return 0;
}

static int up_batchnorm(OnnxImp *im, ImpNode *n)
{
    ImpAttr *a = imp_attr(n, "spatial");
    if (a && !(a->type == ONNX_ATTR_INT && a->i == 1))
        return imp_node_error(im, n, "attribute 'spatial' = 0 (per-element statistics) is not supported");
    imp_drop_attr(n, "spatial");
    return 0;
}

/* BatchNormalization-9..13 in training form (see the file comment). */
static int up_batchnorm_training(OnnxImp *im, ImpNode *n)
{
    if (n->n_out == 1) return 0;
    if (n->n_out != 5)
        return imp_node_error(im, n, "expects 1 output (inference) or 5 (training) before opset 14, got %d", n->n_out);
    ImpAttr tm = {.name = "training_mode", .type = ONNX_ATTR_INT, .i = 1};
    imp_set_attr(im, n, &tm);
    n->n_out = 3;
    return 0;
}

/* Softmax-like ops before opset 13 normalize over the 2-D coercion of the
 * input at `axis` (see the file comment). */
static int up_softmax(OnnxImp *im, ImpNode *n)
{
    ImpAttr *a = imp_attr(n, "axis");
    int64_t axis = a ? a->i : 1;
    if (a && a->type != ONNX_ATTR_INT) return imp_node_error(im, n, "attribute 'axis' must be an int");
    if (n->n_in != 1 || n->n_out != 1) return imp_node_error(im, n, "expects one input and one output");
    const char *x = n->in[0], *y = n->out[0];
    DType dt;
    Shape s = {0};
    int known = imp_known(im, x, &dt, &s) == 0;
    if (known) {
        if (axis < -s.rank || axis >= (s.rank ? s.rank : 1))
            return imp_node_error(im, n, "attribute 'axis' = %lld is out of range for input '%s' of rank %d", (long long)axis, x, s.rank);
        if (axis < 0) axis += s.rank;
        if (axis == s.rank - 1 || s.rank == 0) return 0; /* the same as the opset-13 form */
    }
    ImpNode *fl = imp_new_node(im, "Flatten", cat_name(im, n, "flatten"), 1, 1);
    fl->in[0] = x;
    fl->out[0] = cat_name(im, n, "2d");
    ImpAttr fa = {.name = "axis", .type = ONNX_ATTR_INT, .i = axis};
    imp_set_attr(im, fl, &fa);
    const char *shape;
    if (known) {
        shape = imp_const_i64(im, cat_name(im, n, "shape"), s.dims, s.rank, 1);
    } else {
        ImpNode *sh = imp_new_node(im, "Shape", cat_name(im, n, "shapeof"), 1, 1);
        sh->in[0] = x;
        sh->out[0] = cat_name(im, n, "shape");
        shape = sh->out[0];
    }
    const char *t = cat_name(im, n, "out2d");
    ImpNode *rs = imp_new_node(im, "Reshape", cat_name(im, n, "reshape"), 2, 1);
    rs->in[0] = t;
    rs->in[1] = shape;
    rs->out[0] = y;
    n->in[0] = fl->out[0];
    n->out[0] = t;
    ImpAttr na = {.name = "axis", .type = ONNX_ATTR_INT, .i = 1};
    imp_set_attr(im, n, &na);
    return 0;
}

static int up_scatter(OnnxImp *im, ImpNode *n)
{
    (void)im;
    n->op_type = "ScatterElements";
    return 0;
}

static int up_legacy(OnnxImp *im, ImpNode *n)
{
    imp_drop_attr(n, "consumed_inputs");
    imp_drop_attr(n, "is_test");
    return 0;
}

static int up_broadcast(OnnxImp *im, ImpNode *n)
{
    if (imp_attr(n, "axis"))
        return imp_node_error(im, n, "legacy broadcasting with attribute 'axis' (opset < 7) is not supported");
    imp_drop_attr(n, "broadcast");
    return 0;
}

static int up_reshape(OnnxImp *im, ImpNode *n)
{
    if (n->n_in >= 2 && n->in[1][0]) return 0;
    if (!imp_attr(n, "shape")) return imp_node_error(im, n, "attribute 'shape' is required in opset < 5");
    return ints_to_input(im, n, "shape", 1);
}

static int up_cast(OnnxImp *im, ImpNode *n)
{
    static const char *const names[] = {"UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32", "INT64",
                                        "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64"};
    ImpAttr *a = imp_attr(n, "to");
    if (!a || a->type != ONNX_ATTR_STRING) return 0;
    for (int i = 1; i < (int)(sizeof names / sizeof names[0]); i++)
        if (strcmp(a->s, names[i]) == 0) {
            a->type = ONNX_ATTR_INT;
            a->i = i;
            return 0;
        }
    return imp_node_error(im, n, "attribute 'to' names an unknown type '%s'", a->s);
}

static int up_concat(OnnxImp *im, ImpNode *n)
{
    if (imp_attr(n, "axis")) return 0;
    ImpAttr a = {.name = "axis", .type = ONNX_ATTR_INT, .i = 1};
    imp_set_attr(im, n, &a);
    return 0;
}

static int up_pad_names(OnnxImp *im, ImpNode *n)
{
    ImpAttr *a = imp_attr(n, "paddings");
    if (a) a->name = "pads";
    return 0;
}

static int up_tile(OnnxImp *im, ImpNode *n)
{
    return imp_node_error(im, n, "Tile before opset 6 (tiles, axis inputs) is not supported");
}

static const Upgrade upgrades[] = {
    {"*", 7, up_legacy},
    {"Add", 7, up_broadcast},
    {"Sub", 7, up_broadcast},
    {"Mul", 7, up_broadcast},
    {"Div", 7, up_broadcast},
    {"Gemm", 7, up_broadcast},
    {"Reshape", 5, up_reshape},
    {"Cast", 6, up_cast},
    {"Concat", 4, up_concat},
    {"Pad", 2, up_pad_names},
    {"Tile", 6, up_tile},
    {"Slice", 10, up_slice},
    {"TopK", 10, up_topk},
    {"Squeeze", 13, up_axes1},
    {"Unsqueeze", 13, up_axes1},
    {"ReduceSum", 13, up_axes1},
    {"Split", 13, up_split},
    {"Pad", 11, up_pad},
    {"Clip", 11, up_clip},
    {"Dropout", 12, up_dropout},
    {"Upsample", 9, up_upsample},
    {"Resize", 11, up_resize},
    {"BatchNormalization", 9, up_batchnorm},
    {"BatchNormalization", 14, up_batchnorm_training},
    {"RoiAlign", 16, up_roialign},
    {"Softmax", 13, up_softmax},
    {"LogSoftmax", 13, up_softmax},
    {"Hardmax", 13, up_softmax},
    {"Scatter", 18, up_scatter},
    {NULL, 0, NULL},
};

int onnx_upgrade_renames(const char *op_type, int opset)
{
    for (const Upgrade *u = upgrades; u->op_type; u++)
        if (opset < u->new_form && strcmp(u->op_type, op_type) == 0) return 1;
    return 0;
}

int onnx_upgrade_node(OnnxImp *im, ImpNode *n, int opset)
{
    for (const Upgrade *u = upgrades; u->op_type; u++)
        if (opset < u->new_form && (strcmp(u->op_type, "*") == 0 || strcmp(u->op_type, n->op_type) == 0) &&
            u->fn(im, n))
            return -1;
    return 0;
}
