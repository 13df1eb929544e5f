/* cfam_expr.h — what the C-family backends (C now, CUDA C next) share for
 * writing scalar code: the C spelling of dtypes, typed literals, and the
 * printer of target-neutral expression trees (ir/sexpr.h).
 *
 * The languages differ only in data: a CfamDialect names each math
 * function for double and for float operands. Everything else (operators,
 * literals, <stdint.h> types and limits, INFINITY/NAN) is spelled the same
 * in C99 and CUDA C.
 */
#ifndef GRAPHC_CFAM_EXPR_H
#define GRAPHC_CFAM_EXPR_H

#include "../../ir/ir.h"
#include "../../ir/sexpr.h"
#include "../../ir/writer.h"

/* One math function's names for double and for float operands. */
typedef struct CfamFnName {
    const char *f64, *f32;
} CfamFnName;

typedef struct CfamDialect {
    const char *name;
    const CfamFnName *fn; /* SX_FN_COUNT entries, indexed by SxFn: C99's <math.h> names */
    /* NULL, or SX_FN_COUNT float names that replace fn's where not NULL */
    const char *const *f32_replace;
} CfamDialect;

/* C99 with <math.h>: exp / expf, ...; float exp, log, tanh and erf as
 * gcrt_expf, gcrt_logf, gcrt_tanhf, gcrt_erff (runtime/common/gcrt_base.h:
 * libm's on hosted systems, graphc's own on bare metal). */
extern const CfamDialect cfam_c99;
/* CUDA C device code: CUDA's math library (expf, logf, tanhf, erff where the
 * C99 dialect calls graphc's own gcrt_* versions). */
extern const CfamDialect cfam_cuda;

/* C storage type of a dtype: float, double, uint16_t (f16, bf16), int8_t,
 * uint8_t (also bool), int16_t, int32_t, int64_t, uint16_t, uint32_t,
 * uint64_t. */
const char *cfam_ctype(DType t);
/* v as a literal of type t, written into buf (cap >= 32): integers and
 * bool in decimal ("3", "-1"; above INT64_MAX with a 'u' suffix), floats as
 * the shortest decimal that reads back as the same value of t, with ".0"
 * when it would read as an integer and an 'f' suffix unless t is f64
 * ("1.0f", "0.5", "1e-05f"); NAN, INFINITY, -INFINITY when not finite. */
const char *cfam_lit(char *buf, size_t cap, DType t, double v);
/* Writes tree e as one C expression: argument i prints as names[i] (an
 * identifier or any parenthesizable expression; it may be written several
 * times), functions as dialect dl spells them. */
void cfam_expr(Writer *w, const CfamDialect *dl, const Sx *e, const char *const *names);

#endif
