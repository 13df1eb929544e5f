/* quant_attrs.h — attribute indices of the quant family's ops
 * (ir/ops/quant.c), shared with their emitters (backend/c/emit_quant.c).
 * Conventions in ir/op.h ("Attribute indices"). */
#ifndef GRAPHC_QUANT_ATTRS_H
#define GRAPHC_QUANT_ATTRS_H

/* QuantizeLinear, DequantizeLinear */
enum { QL_AXIS, QL_COUNT };
/* ConvInteger, QLinearConv */
enum { QC_AUTO_PAD, QC_DILATIONS, QC_GROUP, QC_KERNEL_SHAPE, QC_PADS, QC_STRIDES, QC_COUNT };

#endif
