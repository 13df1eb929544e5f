/* fuse_elementwise.c — placeholder until the pass lands: changes nothing. */
#include "passes.h"

int pass_fuse_elementwise(Graph *g, Diag *d)
{
    (void)g;
    (void)d;
    return 0;
}
