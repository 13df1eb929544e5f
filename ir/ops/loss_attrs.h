/* loss_attrs.h — attribute indices of the loss family's ops (ir/ops/loss.c),
 * shared with their emitters (backend/c/emit_loss.c). Conventions in
 * ir/op.h ("Attribute indices"). */
#ifndef GRAPHC_LOSS_ATTRS_H
#define GRAPHC_LOSS_ATTRS_H

/* NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss */
enum { LOSS_IGNORE_INDEX, LOSS_REDUCTION, LOSS_COUNT };

#endif
