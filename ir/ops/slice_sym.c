/* slice_sym.c — Slice's runtime-shape rule (ir_sym_slice, named by
 * op_Slice in shape.c): which output dims of a Slice are runtime dims.
 *
 * The operands are terms (constants, or shape values: ir_value_terms).
 * Along a static axis a constant range gives a static extent, and x[:T]
 * with T a shape value the symbol T itself. Along a runtime axis N sliced
 * by constants, x[:e] is the derived symbol min(N, e) (N itself when e
 * reaches N's bound); any other range (a start, a negative end, a step)
 * becomes a data-dependent dim bounded by ceil(bound / |step|), which the
 * kernel sets at run time (backend/c/emit_dynshape.c). Operands known only
 * at run time on a runtime-shaped input are refused; axes not sliced keep
 * the input's symbols.
 */
#include "../op.h"
#include "geometry.h"

#include <stdint.h>

#define MAX_LIST 64 /* as shape.c */

int ir_sym_slice(Graph *g, Node *n, Diag *d)
{
    const Shape *xs = &n->in[0]->shape;
    Shape *ys = &n->out[0]->shape;
    int r = xs->rank;
    IrSymTerm st[MAX_LIST], en[MAX_LIST], ax[MAX_LIST], sp[MAX_LIST];
    int ns = ir_value_terms(n->in[1], st, MAX_LIST), ne = ir_value_terms(n->in[2], en, MAX_LIST);
    int na = ir_has_input(n, 3) ? ir_value_terms(n->in[3], ax, MAX_LIST) : ns;
    int np = ir_has_input(n, 4) ? ir_value_terms(n->in[4], sp, MAX_LIST) : ns;
    int sliced[IR_MAX_RANK] = {0};
    int known = ns >= 0 && ne == ns && na == ns && np == ns;
    for (int i = 0; known && i < ns; i++) {
        int64_t a = ir_has_input(n, 3) ? ax[i].c : i;
        if ((ir_has_input(n, 3) && ax[i].sym) || ir_norm_axis(a, r) < 0) {
            known = 0;
            break;
        }
        int k = ir_norm_axis(a, r);
        sliced[k] = 1;
        int64_t step = ir_has_input(n, 4) ? sp[i].c : 1;
        if (xs->sym[k] && !(ir_has_input(n, 4) && sp[i].sym) && !st[i].sym && !en[i].sym && step != 0) {
            /* a runtime axis sliced by constants: x[:e] is min(N, e) (N itself when e reaches the
             * bound); any other range a data-dependent dim the kernel sets, bounded by N's bound */
            int64_t hi = xs->dims[k], m = step > 0 ? step : (step == INT64_MIN ? INT64_MAX : -step);
            if (step == 1 && st[i].c == 0 && en[i].c >= hi) {
                ys->sym[k] = xs->sym[k];
                ys->dims[k] = hi;
            } else if (step == 1 && st[i].c == 0 && en[i].c >= 0) {
                ys->sym[k] = ir_sym_derive(g, SYM_MIN, (IrSymTerm){xs->sym[k], 0}, (IrSymTerm){0, en[i].c});
                ys->dims[k] = ir_sym(g, ys->sym[k])->hi;
            } else {
                ys->dims[k] = hi / m + (hi % m != 0);
                ys->sym[k] = ir_sym_data(g, n, 0, k, ys->dims[k]);
            }
            continue;
        }
        if ((ir_has_input(n, 4) && sp[i].sym) || st[i].sym || xs->sym[k] || step != 1) continue;
        int64_t dim = xs->dims[k], s0 = st[i].c < 0 ? st[i].c + dim : st[i].c;
        s0 = s0 < 0 ? 0 : s0 > dim ? dim : s0;
        if (en[i].sym) {
            if (s0 == 0 && ir_sym(g, en[i].sym)->hi <= dim && ir_sym(g, en[i].sym)->lo >= 0) {
                ys->sym[k] = en[i].sym;
                ys->dims[k] = ir_sym(g, en[i].sym)->hi;
            }
            continue;
        }
        int64_t e0 = en[i].c < 0 ? en[i].c + dim : en[i].c;
        e0 = e0 < 0 ? 0 : e0 > dim ? dim : e0;
        ys->sym[k] = IR_SYM_STATIC;
        ys->dims[k] = e0 > s0 ? e0 - s0 : 0;
    }
    if (!known && ir_shape_has_sym(xs)) {
        char b[160];
        return diag_node_error(d, n, "slices input 'data' %s, which has runtime dims, with starts/ends/axes/steps known only at run time",
                               ir_shape_str_g(g, xs, b, sizeof b));
    }
    for (int k = 0; k < r; k++)
        if (known && !sliced[k]) ys->sym[k] = xs->sym[k]; /* not sliced: as data */
    return 0;
}
