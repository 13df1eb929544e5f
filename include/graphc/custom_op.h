/* graphc/custom_op.h — annotations that turn plain C functions into graphc
 * operators (graphc compile/run/dump/gradcheck/verify --ops FILE.c, and
 * graphc check-op FILE.c).
 *
 * Elementwise ops take the element count, their inputs (const T *), their
 * outputs (T *), then their attributes as scalars named like the node's
 * attributes (float, double, int64_t, const char *); T is float or double:
 *
 *     GRAPHC_OP("com.example", "ScaledTanh", GRAPHC_ELEMENTWISE)
 *     void scaled_tanh(int64_t n, const float *x, float *y, float alpha);
 *
 *     GRAPHC_GRAD("com.example", "ScaledTanh")
 *     void scaled_tanh_grad(int64_t n, const float *x, const float *y,
 *                           const float *dy, float *dx, float alpha);
 *
 * The gradient takes the count, the inputs, the outputs, the output
 * gradients, the input gradients it writes, then the same attributes.
 *
 * General ops take tensors with their shapes (graphc_tensor below): inputs
 * as `const graphc_tensor *`, outputs as `graphc_tensor *`, then, when the
 * op asks for scratch memory, `void *` (the workspace), then the
 * attributes. A shape rule is required; a workspace request, an in-place
 * option and a gradient are optional:
 *
 *     GRAPHC_OP("com.example", "RowNorm", GRAPHC_GENERAL)
 *     void row_norm(const graphc_tensor *x, graphc_tensor *y, void *work, float eps);
 *
 *     GRAPHC_SHAPE("com.example", "RowNorm")      // outputs' dtype, rank, dims
 *     const char *row_norm_shape(const graphc_tensor *x, graphc_tensor *y, float eps);
 *
 *     GRAPHC_WORKSPACE("com.example", "RowNorm")  // bytes of `work`
 *     int64_t row_norm_workspace(const graphc_tensor *x, const graphc_tensor *y, float eps);
 *
 *     GRAPHC_INPLACE("com.example", "RowNorm", "y", "x")
 *
 *     GRAPHC_GRAD("com.example", "RowNorm")
 *     void row_norm_grad(const graphc_tensor *x, const graphc_tensor *y,
 *                        const graphc_tensor *dy, graphc_tensor *dx, float eps);
 *
 * The shape rule gets the inputs' dtype, rank and dims (data NULL) and sets
 * every output's dtype, rank and dims; it returns NULL, or a message that
 * graphc reports naming the node. The workspace request gets the inputs
 * and outputs (data NULL) and returns a byte count; the op's `void *`
 * parameter then points at that many bytes of the model's arena, aligned
 * to 64 bytes, contents undefined. GRAPHC_INPLACE lets output "y" share
 * input "x"'s memory: the op must read each element of x before it writes
 * the same element of y. A general op's gradient gets the inputs, outputs,
 * output gradients and input gradients (each input gradient has its
 * input's dtype and shape) and the attributes; it has no workspace.
 *
 * graphc reads the annotations and the prototypes that follow them (with
 * libclang when graphc was built with it, else with a reader of its own
 * that accepts the plain forms above). To a C compiler the annotations are
 * nothing, so the file builds with any C99 compiler.
 */
#ifndef GRAPHC_CUSTOM_OP_H
#define GRAPHC_CUSTOM_OP_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define GRAPHC_ELEMENTWISE 1
#define GRAPHC_GENERAL 2

/* The dtypes of a general op's tensors. */
#define GRAPHC_FLOAT 1  /* float */
#define GRAPHC_DOUBLE 2 /* double */
#define GRAPHC_INT64 3  /* int64_t */
#define GRAPHC_INT32 4  /* int32_t */
#define GRAPHC_BOOL 5   /* uint8_t, 0 or 1 */

#define GRAPHC_MAX_RANK 8

typedef struct graphc_tensor {
    void *data;       /* the elements, row-major; NULL in shape and workspace functions */
    int32_t dtype;    /* GRAPHC_FLOAT, ... */
    int32_t rank;
    int64_t dims[GRAPHC_MAX_RANK];
} graphc_tensor;

/* The element count of t. */
static inline int64_t graphc_numel(const graphc_tensor *t)
{
    int64_t n = 1;
    for (int32_t i = 0; i < t->rank; i++) n *= t->dims[i];
    return n;
}

#ifdef GRAPHC_ANNOTATE
/* Only for graphc's libclang reader (ir/custom_clang.c), which parses the
 * file with GRAPHC_ANNOTATE defined: each annotation becomes a clang
 * `annotate` attribute carrying its arguments, "graphc|ROLE|domain|name|...";
 * GRAPHC_INPLACE, which precedes no function, declares a variable named
 * after its line to carry it. */
#define GRAPHC_OP(domain, name, kind) __attribute__((annotate("graphc|op|" domain "|" name "|" #kind)))
#define GRAPHC_GRAD(domain, name) __attribute__((annotate("graphc|grad|" domain "|" name)))
#define GRAPHC_SHAPE(domain, name) __attribute__((annotate("graphc|shape|" domain "|" name)))
#define GRAPHC_WORKSPACE(domain, name) __attribute__((annotate("graphc|workspace|" domain "|" name)))
#define GRAPHC_INPLACE_VAR_(line) graphc_inplace_##line
#define GRAPHC_INPLACE_VAR(line) GRAPHC_INPLACE_VAR_(line)
#define GRAPHC_INPLACE(domain, name, out, in) \
    extern const int GRAPHC_INPLACE_VAR(__LINE__) \
        __attribute__((annotate("graphc|inplace|" domain "|" name "|" out "|" in)));
#else
#define GRAPHC_OP(domain, name, kind)
#define GRAPHC_GRAD(domain, name)
#define GRAPHC_SHAPE(domain, name)
#define GRAPHC_WORKSPACE(domain, name)
#define GRAPHC_INPLACE(domain, name, out, in)
#endif

#endif
