/* fold_batchnorm.c — placeholder until the pass lands: changes nothing. */
#include "passes.h"

int pass_fold_batchnorm(Graph *g, Diag *d)
{
    (void)g;
    (void)d;
    return 0;
}
