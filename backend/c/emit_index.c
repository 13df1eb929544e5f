/* emit_index.c — C emitters for the index family (placeholder: none yet). */
#include "cgen.h"

const CgenEntry cgen_index_entries[] = {
    {-1, NULL},
};
