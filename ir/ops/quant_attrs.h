/* quant_attrs.h — attribute indices of the quant family's ops
 * (ir/ops/quant.c), shared with their emitters (backend/c/emit_quant.c).
 * Conventions in ir/op.h ("Attribute indices"). */
#ifndef GRAPHC_QUANT_ATTRS_H
#define GRAPHC_QUANT_ATTRS_H

/* QuantizeLinear, DequantizeLinear */
enum { QL_AXIS, QL_COUNT };
/* ConvInteger and QLinearConv use Conv's schema (nn_conv_attrs, CONV_* of
 * nn_attrs.h) up to CONV_EPILOGUE. */

#endif
