/* emit_custom.c — the C emitter of user operators (--ops FILE.c,
 * ir/custom_op.h): one call of the user's function, fn(count, inputs...,
 * outputs..., attributes...), with the attribute values as C literals.
 * The output folder holds a copy of the user's file (NAME_ops_K.c), which
 * NAME.c includes after the runtime (cgen.c, cgen_files.c). */
#include "cgen_model.h"

#include "../../ir/custom_op.h"

#include <math.h>

int cgen_emit_custom(Cgen *c, const Node *n, Diag *d)
{
    const IrCustomCall *k = ir_op(n->op)->custom;
    GC_ASSERT(k);
    Writer *w = cgen_w(c);
    for (int a = 0; a < k->n_attr; a++) {
        const AttrVal *v = &n->attrs[k->attr_idx[a]];
        if ((k->attr_ctype[a] == 'f' || k->attr_ctype[a] == 'd') && !isfinite(v->f))
            return diag_node_error(d, n, "attribute '%s' is not finite", ir_op(n->op)->attrs[k->attr_idx[a]].name);
    }
    w_printf(w, "%s((int64_t)%lld", k->func, (long long)ir_numel(&n->in[0]->shape));
    for (int i = 0; i < n->n_in; i++) w_printf(w, ", %s", cgen_ptr(c, n->in[i]));
    for (int j = 0; j < n->n_out; j++) w_printf(w, ", %s", cgen_ptr(c, n->out[j]));
    for (int a = 0; a < k->n_attr; a++) {
        const AttrVal *v = &n->attrs[k->attr_idx[a]];
        switch (k->attr_ctype[a]) {
        case 'f': w_printf(w, ", %.9ef", (double)(float)v->f); break;
        case 'd': w_printf(w, ", %.17e", v->f); break;
        case 'i': w_printf(w, ", (int64_t)%lldLL", (long long)v->i); break;
        default:
            w_puts(w, ", \"");
            cgen_str_lit(w, v->s ? v->s : "");
            w_puts(w, "\"");
            break;
        }
    }
    w_puts(w, ");\n");
    return 0;
}
