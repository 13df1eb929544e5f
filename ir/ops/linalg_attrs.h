/* linalg_attrs.h — attribute indices of the linalg family's ops
 * (ir/ops/linalg.c), shared with their emitters (backend/c/emit_linalg.c).
 * Conventions in ir/op.h ("Attribute indices"). */
#ifndef GRAPHC_LINALG_ATTRS_H
#define GRAPHC_LINALG_ATTRS_H

enum { MATMUL_EPILOGUE, MATMUL_COUNT };
enum { GEMM_ALPHA, GEMM_BETA, GEMM_TRANS_A, GEMM_TRANS_B, GEMM_EPILOGUE, GEMM_COUNT };

#endif
