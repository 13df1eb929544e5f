/* optim_attrs.h — attribute indices of the optim family's ops
 * (ir/ops/optim.c), shared with their emitters (backend/c/emit_optim.c).
 * Conventions in ir/op.h ("Attribute indices"). */
#ifndef GRAPHC_OPTIM_ATTRS_H
#define GRAPHC_OPTIM_ATTRS_H

enum { ADAGRAD_DECAY_FACTOR, ADAGRAD_EPSILON, ADAGRAD_NORM_COEFFICIENT, ADAGRAD_COUNT };
enum { MOMENTUM_ALPHA, MOMENTUM_BETA, MOMENTUM_MODE, MOMENTUM_NORM_COEFFICIENT, MOMENTUM_COUNT };
enum { ADAM_ALPHA, ADAM_BETA, ADAM_EPSILON, ADAM_NORM_COEFFICIENT, ADAM_NORM_COEFFICIENT_POST, ADAM_COUNT };

#endif
