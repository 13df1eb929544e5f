/* emit_custom.c — the C emitter of user operators (--ops FILE.c,
 * ir/custom_op.h): one call of the user's function. An elementwise op gets
 * fn(count, inputs..., outputs..., attributes...); a general op gets
 * graphc_tensor descriptions of its inputs and outputs (dtype, rank, dims:
 * constants of the compiled shapes), then its workspace in the arena when
 * it asked for one, then the attributes, all as C literals. The output
 * folder holds a copy of the user's file (NAME_ops_K.c), which NAME.c
 * includes after the runtime (cgen.c, cgen_files.c). */
#include "cgen_model.h"

#include "../../ir/custom_op.h"

#include <math.h>

/* The graphc_tensor initializer of value v. */
static void tensor_init(Cgen *c, Writer *w, const Value *v)
{
    w_printf(w, "    {(void *)%s, %s, %d, {", cgen_ptr(c, v), ir_custom_dtype_macro(v->dtype), v->shape.rank);
    for (int i = 0; i < v->shape.rank; i++) w_printf(w, "%s%lld", i ? ", " : "", (long long)v->shape.dims[i]);
    w_puts(w, v->shape.rank ? "}},\n" : "0}},\n");
}

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
    if (k->general) {
        w_puts(w, "graphc_tensor t[] = {\n");
        for (int i = 0; i < n->n_in; i++) tensor_init(c, w, n->in[i]);
        for (int j = 0; j < n->n_out; j++) tensor_init(c, w, n->out[j]);
        w_printf(w, "};\n%s(", k->func);
        for (int i = 0; i < n->n_in + n->n_out; i++) w_printf(w, "%s&t[%d]", i ? ", " : "", i);
        if (k->workspace) w_printf(w, ", (void *)%s", cgen_workspace(c, n));
    } else {
        w_printf(w, "%s((int64_t)%lld", k->func, (long long)ir_numel(&n->in[0]->shape));
        for (int i = 0; i < n->n_in; i++) w_printf(w, ", %s", cgen_ptr(c, n->in[i]));
        for (int j = 0; j < n->n_out; j++) w_printf(w, ", %s", cgen_ptr(c, n->out[j]));
    }
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

size_t cgen_custom_workspace(const Node *n) { return ir_custom_workspace(n); }
