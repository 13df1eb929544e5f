/* emit_math.c — C emitters of the math family.
 *
 * Every math op but one has a scalar expression and is written by the
 * generic elementwise emitter (the table's default). CastLike has none: its
 * second input only names a dtype and may have any shape, so it is emitted
 * as Cast of its first input, through Cast's description on a one-input
 * view of the node (Cast's facets read only in[0] and out[0]).
 */
#include "cgen.h"

static int emit_castlike(Cgen *c, const Node *n, Diag *d)
{
    Node view = *n;
    view.op = OP_Cast;
    view.n_in = 1;
    return cgen_emit_elementwise(c, &view, d);
}

const CgenEntry cgen_math_entries[] = {
    {OP_CastLike, emit_castlike, 0, NULL, 0},
    {-1, NULL, 0, NULL, 0},
};
