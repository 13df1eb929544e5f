/* emit_nn.c — C emitters for the nn family (placeholder: none yet). */
#include "cgen.h"

const CgenEntry cgen_nn_entries[] = {
    {-1, NULL},
};
