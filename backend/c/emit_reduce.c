/* emit_reduce.c — C emitters for the reduce family (placeholder: none yet). */
#include "cgen.h"

const CgenEntry cgen_reduce_entries[] = {
    {-1, NULL},
};
