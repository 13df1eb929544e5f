/* emit_vision.c — C emitters for the vision family (placeholder: none yet). */
#include "cgen.h"

const CgenEntry cgen_vision_entries[] = {
    {-1, NULL},
};
