/* emit_shape.c — C emitters for the shape family (placeholder: none yet). */
#include "cgen.h"

const CgenEntry cgen_shape_entries[] = {
    {-1, NULL},
};
