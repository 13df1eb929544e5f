/* npy.h — reading and writing NumPy .npy files (format versions 1.0, 2.0
 * and 3.0; little-endian, C order). The driver uses them for `graphc run`
 * inputs and outputs; tests use them to compare results.
 *
 * dtype mapping: <f4 f32, <f8 f64, <f2 f16, '<u2' bf16 (numpy has no
 * bfloat16: the raw bits travel as uint16), |i1 i8, |u1 u8, <i2 i16, <i4 i32,
 * <i8 i64, |b1 bool. Errors go to a Diag as "PATH: rule". */
#ifndef GRAPHC_NPY_H
#define GRAPHC_NPY_H

#include "../ir/ir.h"

typedef struct NpyArray {
    DType dtype;
    Shape shape;
    void *data;    /* malloc'd raw little-endian elements (never NULL on success) */
    size_t nbytes; /* numel * dtype size */
} NpyArray;

/* Parses a whole .npy image of `len` bytes; `name` labels errors. The data
 * is copied, so buf may be freed afterwards. 0, or -1 with a diagnostic. */
int npy_parse(const void *buf, size_t len, const char *name, NpyArray *out, Diag *d);
/* Reads and parses the file at path. */
int npy_read(const char *path, NpyArray *out, Diag *d);
void npy_free(NpyArray *a);

/* The numpy descr string of t ("<f4", "|b1", ...), NULL if none. */
const char *npy_descr(DType t);
/* Serializes a v1.0 .npy image (header padded to 64 bytes) into a malloc'd
 * buffer; returns it and its size in *len. */
void *npy_encode(DType t, const Shape *s, const void *data, size_t *len);
/* Writes a v1.0 .npy file atomically (temp file in the same folder, then
 * rename). 0, or -1 with a diagnostic naming path. */
int npy_write(const char *path, DType t, const Shape *s, const void *data, Diag *d);

#endif
