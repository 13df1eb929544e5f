/* registry.c — the operator table generated from ops.def, lookup by ONNX
 * name, facet values many ops share (the input-0/output-0 in-place pair),
 * and the shared reference evaluation of elementwise ops (numpy
 * broadcasting over scalar_ref). User operators (ir/custom_op.c) take the
 * kinds after the built-in ones: ir_op, ir_op_lookup and ir_op_count answer
 * for both. */
#include "op.h"

#include "custom_op.h"

#include <stdlib.h>
#include <string.h>

static const OpDesc *const op_table[] = {
#define OP(name, family) &op_##name,
#include "ops.def"
#undef OP
};
_Static_assert(sizeof op_table / sizeof op_table[0] == OP_COUNT, "op table and ops.def disagree");

static const char *const op_family[] = {
#define OP(name, family) #family,
#include "ops.def"
#undef OP
};
_Static_assert(sizeof op_family / sizeof op_family[0] == OP_COUNT, "family table and ops.def disagree");

const char *ir_op_family(OpKind k)
{
    if (k >= OP_COUNT) {
        GC_ASSERT(k < ir_op_count());
        return "custom";
    }
    GC_ASSERT(k >= 0);
    return op_family[k];
}

const OpDesc *ir_op(OpKind k)
{
    if (k >= OP_COUNT) return ir_custom_desc(k);
    GC_ASSERT(k >= 0);
    return op_table[k];
}

int ir_op_lookup(const char *name)
{
    for (int k = 0; k < OP_COUNT; k++)
        if (strcmp(op_table[k]->name, name) == 0) return k;
    return ir_custom_lookup(name);
}

int ir_op_count(void) { return OP_COUNT + ir_custom_count(); }

const InplacePair ir_inplace_00[1] = {{0, 0}};

int ir_has_input(const Node *n, int i) { return i < n->n_in && n->in[i]; }

int ir_need_inputs(const Node *n, Diag *d)
{
    const OpDesc *od = ir_op(n->op);
    for (int i = 0; i < od->min_in; i++)
        if (!ir_has_input(n, i)) return diag_node_error(d, n, "input '%s' is required", od->in_names[i]);
    return 0;
}

int ir_eval_elementwise(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    (void)d;
    const OpDesc *od = ir_op(n->op);
    GC_ASSERT(od->scalar_ref);
    const Shape *os = &n->out[0]->shape;
    int r = os->rank;
    int64_t total = ir_numel(os);
    int nin = n->n_in;
    int64_t (*strides)[IR_MAX_RANK] = calloc((size_t)(nin ? nin : 1), sizeof *strides);
    double *args = calloc((size_t)(nin ? nin : 1), sizeof(double));
    GC_ASSERT(strides && args);
    for (int j = 0; j < nin; j++) {
        if (!n->in[j]) continue;
        const Shape *s = &n->in[j]->shape;
        int64_t st = 1;
        for (int k = s->rank - 1; k >= 0; k--) {
            int ok = r - s->rank + k;
            strides[j][ok] = s->dims[k] == 1 ? 0 : st;
            st *= s->dims[k];
        }
    }
    int64_t idx[IR_MAX_RANK] = {0};
    for (int64_t e = 0; e < total; e++) {
        for (int j = 0; j < nin; j++) {
            if (!in[j]) { args[j] = 0; continue; }
            int64_t off = 0;
            for (int k = 0; k < r; k++) off += idx[k] * strides[j][k];
            args[j] = in[j][off];
        }
        out[0][e] = od->scalar_ref(n, args);
        for (int k = r - 1; k >= 0; k--) {
            if (++idx[k] < os->dims[k]) break;
            idx[k] = 0;
        }
    }
    free(strides);
    free(args);
    return 0;
}
