/* gcrt_reduce.h — runtime kernels of the reduce family: none. Shapes are
 * static, so backend/c/emit_reduce.c writes each reduction as nested loops
 * with constant strides (any axis set, any dtype) and needs no kernel here.
 * The header stays so that gcrt.h includes one header per family. */
#ifndef GCRT_REDUCE_H
#define GCRT_REDUCE_H

#include "gcrt_base.h"

#endif
