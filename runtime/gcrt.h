/* gcrt.h — the one header generated model code includes: the runtime base
 * (conversions, copy) and every kernel family's declarations. The runtime
 * knows nothing of the compiler; it builds with any C99 compiler. */
#ifndef GCRT_H
#define GCRT_H

#include "gcrt_base.h"
#include "gcrt_index.h"
#include "gcrt_linalg.h"
#include "gcrt_nn.h"
#include "gcrt_pool.h"
#include "gcrt_reduce.h"
#include "gcrt_rnn.h"
#include "gcrt_shape.h"
#include "gcrt_signal.h"
#include "gcrt_text.h"
#include "gcrt_vision.h"

#endif
