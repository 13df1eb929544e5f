/* emit_linalg.c — C emitters for the linalg family (placeholder: none yet). */
#include "cgen.h"

const CgenEntry cgen_linalg_entries[] = {
    {-1, NULL},
};
