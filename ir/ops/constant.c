/* constant.c — the Constant op (shape family; its own file to keep shape.c
 * short): the value of whichever one of its attributes is set, `value` (a
 * tensor), `value_float(s)` or `value_int(s)` (f32 or i64; a single value
 * is a scalar, a list 1-D). Shape inference and the reference evaluation
 * read the attribute, so constant folding turns the node into a constant.
 */
#include "../op.h"
#include "shape_attrs.h"

#include <string.h>

static const char *const constant_out[] = {"output"};

static const AttrSpec constant_attrs[] = {
    [CONSTANT_VALUE] = {"value", ATTR_TENSOR, NULL, 0},
    [CONSTANT_VALUE_FLOAT] = {"value_float", ATTR_FLOAT, NULL, 0},
    [CONSTANT_VALUE_FLOATS] = {"value_floats", ATTR_FLOATS, NULL, 0},
    [CONSTANT_VALUE_INT] = {"value_int", ATTR_INT, NULL, 0},
    [CONSTANT_VALUE_INTS] = {"value_ints", ATTR_INTS, NULL, 0},
};
OP_ATTRS_CHECK(constant_attrs, CONSTANT_COUNT);

static int constant_infer(Node *n, Diag *d)
{
    if (ir_need_inputs(n, d)) return -1;
    int which = -1, count = 0;
    for (int i = 0; i < CONSTANT_COUNT; i++)
        if (n->attrs[i].set) {
            which = i;
            count++;
        }
    if (count != 1)
        return diag_node_error(d, n, "exactly one of the attributes value, value_float, value_floats, value_int, value_ints must be set, got %d",
                               count);
    const AttrVal *a = &n->attrs[which];
    Shape s = {0};
    memset(&s, 0, sizeof s);
    switch (which) {
    case CONSTANT_VALUE:
        if (a->t.dtype == DT_UNDEF || (!a->t.data && ir_numel(&a->t.shape) > 0))
            return diag_node_error(d, n, "attribute 'value' holds no tensor data");
        ir_set_out(n, 0, a->t.dtype, &a->t.shape);
        return 0;
    case CONSTANT_VALUE_FLOAT:
        ir_set_out(n, 0, DT_F32, &s);
        return 0;
    case CONSTANT_VALUE_INT:
        ir_set_out(n, 0, DT_I64, &s);
        return 0;
    default:
        s.rank = 1;
        s.dims[0] = a->n;
        ir_set_out(n, 0, which == CONSTANT_VALUE_FLOATS ? DT_F32 : DT_I64, &s);
        return 0;
    }
}

static int constant_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)in;
    (void)d;
    const AttrVal *a = n->attrs;
    if (a[CONSTANT_VALUE].set) {
        int64_t cnt = ir_numel(&a[CONSTANT_VALUE].t.shape);
        for (int64_t i = 0; i < cnt; i++)
            out[0][i] = ir_load_f64(a[CONSTANT_VALUE].t.dtype, a[CONSTANT_VALUE].t.data, (size_t)i);
    } else if (a[CONSTANT_VALUE_FLOAT].set) {
        out[0][0] = a[CONSTANT_VALUE_FLOAT].f;
    } else if (a[CONSTANT_VALUE_INT].set) {
        out[0][0] = (double)a[CONSTANT_VALUE_INT].i;
    } else if (a[CONSTANT_VALUE_FLOATS].set) {
        for (int i = 0; i < a[CONSTANT_VALUE_FLOATS].n; i++) out[0][i] = a[CONSTANT_VALUE_FLOATS].floats[i];
    } else {
        for (int i = 0; i < a[CONSTANT_VALUE_INTS].n; i++) out[0][i] = (double)a[CONSTANT_VALUE_INTS].ints[i];
    }
    return 0;
}

const OpDesc op_Constant = {
    .name = "Constant", .min_in = 0, .max_in = 0,
    .min_out = 1, .max_out = 1, .out_names = constant_out,
    OP_ATTRS(constant_attrs), .infer = constant_infer, .eval = constant_eval,
};
