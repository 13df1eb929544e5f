/* emit_elementwise.c — C emitters for the elementwise family (placeholder: none yet). */
#include "cgen.h"

const CgenEntry cgen_elementwise_entries[] = {
    {-1, NULL},
};
