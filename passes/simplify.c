/* simplify.c — placeholder until the pass lands: changes nothing. */
#include "passes.h"

int pass_simplify(Graph *g, Diag *d)
{
    (void)g;
    (void)d;
    return 0;
}
