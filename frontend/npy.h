/* npy.h — reading and writing NumPy .npy files (format versions 1.0, 2.0
 * and 3.0; little-endian, C order). The driver uses them for `graphc run`
 * inputs and outputs; tests use them to compare results.
 *
 * dtype mapping: <f4 f32, <f8 f64, <f2 f16, |i1 i8, |u1 u8, <i2 i16, <u2
 * u16, <i4 i32, <u4 u32, <i8 i64, <u8 u64, |b1 bool. numpy has no bfloat16:
 * bf16 is written as '<u2' raw bits, which read back as u16 (npy_dtype_fits
 * lets such a file feed a bf16 tensor). Errors go to a Diag as "PATH: rule". */
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

/* A file read as dtype `file` may feed a tensor of dtype `want`: the same
 * dtype, or u16 bits for bf16. */
int npy_dtype_fits(DType file, DType want);
/* The numpy descr string of t ("<f4", "|b1", ...), NULL if none. */
const char *npy_descr(DType t);
/* Serializes a v1.0 .npy image (header padded to 64 bytes) into a malloc'd
 * buffer; returns it and its size in *len. */
void *npy_encode(DType t, const Shape *s, const void *data, size_t *len);
/* Writes a v1.0 .npy file atomically (temp file in the same folder, then
 * rename). 0, or -1 with a diagnostic naming path. */
int npy_write(const char *path, DType t, const Shape *s, const void *data, Diag *d);

#endif
