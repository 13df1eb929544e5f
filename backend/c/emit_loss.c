/* emit_loss.c — C emitters for the loss family (placeholder: none yet). */
#include "cgen.h"

const CgenEntry cgen_loss_entries[] = {
    {-1, NULL},
};
