/* emit_table.c — the C backend's emitter table, indexed by OpKind.
 *
 * Each op family registers its emitters in backend/c/emit_<family>.c as a
 * CgenEntry array ending in {-1, NULL, 0, NULL}; this file merges the
 * arrays of the C backend's families into one table. The table is built on the caller's
 * stack per compile (no global state). Ops that a family does not register
 * but whose description has a scalar expression get the generic elementwise
 * emitter, and user operators (kinds from OP_COUNT on, ir_op_count()) the
 * emitter that calls the user's function. Each entry also lists the runtime units its code calls (cgen.h),
 * from which the output folder's runtime is chosen. A missing emitter is a
 * user-facing error naming the node, the op and the backend; two
 * registrations of one op are a bug in the backend and abort.
 */
#include "cgen_model.h"

#include <string.h>

static const CgenEntry *const cgen_families[] = {
#define CGEN_FAMILY(name) cgen_##name##_entries,
    CGEN_FAMILIES(CGEN_FAMILY)
#undef CGEN_FAMILY
};

CgenEntry cgen_entry(int k)
{
    GC_ASSERT(k >= 0 && k < ir_op_count());
    if (ir_op(k)->custom) return (CgenEntry){k, cgen_emit_custom, 0, cgen_custom_workspace, 0};
    for (size_t f = 0; f < sizeof cgen_families / sizeof cgen_families[0]; f++)
        for (const CgenEntry *e = cgen_families[f]; e->op != -1; e++)
            if (e->op == k) return *e;
    if (ir_op(k)->scalar_expr) return (CgenEntry){k, cgen_emit_elementwise, 0, NULL, 1};
    return (CgenEntry){k, NULL, 0, NULL, 0};
}

void cgen_build_table(CgenEntry *table)
{
    memset(table, 0, sizeof(CgenEntry) * (size_t)ir_op_count());
    for (size_t f = 0; f < sizeof cgen_families / sizeof cgen_families[0]; f++)
        for (const CgenEntry *e = cgen_families[f]; e->op != -1; e++) {
            GC_ASSERT(e->op >= 0 && e->op < OP_COUNT && e->emit);
            GC_ASSERT(!table[e->op].emit && "op registered twice in the C emitter table");
            table[e->op] = *e;
        }
    for (int k = 0; k < ir_op_count(); k++)
        if (!table[k].emit) table[k] = cgen_entry(k);
}

int cgen_supports(const Graph *g, const Node *n, Diag *d)
{
    (void)g;
    CgenEntry e = cgen_entry(n->op);
    if (!e.emit) return diag_node_error(d, n, "the C backend has no emitter for op '%s'", ir_op(n->op)->name);
    if (e.dyn || !cgen_node_has_sym(n)) return 0;
    for (int j = 0; j < n->n_in + n->n_out; j++) {
        const Value *v = j < n->n_in ? n->in[j] : n->out[j - n->n_in];
        if (v && ir_shape_has_sym(&v->shape)) {
            char b[160];
            return diag_node_error(d, n, "op '%s' does not support runtime shapes yet in the C backend (%s '%s' is %s)",
                                   ir_op(n->op)->name, j < n->n_in ? "input" : "output", v->name,
                                   ir_shape_str(&v->shape, b, sizeof b));
        }
    }
    return 0;
}
