/* grad_attrs.h — attribute indices of the grad family's ops (ir/ops/grad.c),
 * shared with their emitters (backend/c/emit_grad.c). Conventions in
 * ir/op.h ("Attribute indices"). Each schema is its forward op's schema
 * (same names, kinds and defaults, in the same order) plus, where the
 * backward op cannot see a forward tensor, that tensor's shape. */
#ifndef GRAPHC_GRAD_ATTRS_H
#define GRAPHC_GRAD_ATTRS_H

/* ConvGradData (CONVGRAD_SHAPE is x_shape) and ConvGradFilter (w_shape) */
enum {
    CONVGRAD_AUTO_PAD, CONVGRAD_DILATIONS, CONVGRAD_GROUP, CONVGRAD_KERNEL_SHAPE, CONVGRAD_PADS, CONVGRAD_STRIDES,
    CONVGRAD_SHAPE, CONVGRAD_COUNT
};
/* MaxPoolGrad: MaxPool's */
enum {
    MAXPOOLGRAD_AUTO_PAD, MAXPOOLGRAD_CEIL_MODE, MAXPOOLGRAD_DILATIONS, MAXPOOLGRAD_KERNEL_SHAPE, MAXPOOLGRAD_PADS,
    MAXPOOLGRAD_STORAGE_ORDER, MAXPOOLGRAD_STRIDES, MAXPOOLGRAD_COUNT
};
/* AveragePoolGrad: AveragePool's and x_shape */
enum {
    AVGPOOLGRAD_AUTO_PAD, AVGPOOLGRAD_CEIL_MODE, AVGPOOLGRAD_COUNT_INCLUDE_PAD, AVGPOOLGRAD_KERNEL_SHAPE,
    AVGPOOLGRAD_PADS, AVGPOOLGRAD_STRIDES, AVGPOOLGRAD_X_SHAPE, AVGPOOLGRAD_COUNT
};
/* SoftmaxGrad, LogSoftmaxGrad */
enum { SOFTMAXGRAD_AXIS, SOFTMAXGRAD_COUNT };
/* LayerNormalizationGrad */
enum { LNGRAD_AXIS, LNGRAD_EPSILON, LNGRAD_STASH_TYPE, LNGRAD_COUNT };
/* BatchNormalizationGrad */
enum { BNGRAD_EPSILON, BNGRAD_MOMENTUM, BNGRAD_TRAINING_MODE, BNGRAD_COUNT };

#endif
