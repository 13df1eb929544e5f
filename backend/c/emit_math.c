/* emit_math.c — C emitters for the math family (placeholder: none yet). */
#include "cgen.h"

const CgenEntry cgen_math_entries[] = {
    {-1, NULL},
};
