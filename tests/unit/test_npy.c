/* test_npy.c — unit tests of the .npy reader and writer (frontend/npy.h).
 *
 * Round trips for every dtype and for scalar, 1-D, zero-size and rank-4
 * shapes, through memory (npy_encode/npy_parse) and through a file
 * (npy_write/npy_read); headers as numpy writes them in format 1.0, 2.0 and
 * 3.0; then every rejection with its exact message: bad magic, truncated
 * preamble/header/data, trailing data, Fortran order, unsupported dtype and
 * version, and malformed header dicts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "frontend/npy.h"

static const DType all_types[] = {DT_F32, DT_F64, DT_F16, DT_BF16, DT_I8,  DT_U8,  DT_I16,
                                  DT_I32, DT_I64, DT_BOOL, DT_U16, DT_U32, DT_U64};
#define N_TYPES (sizeof all_types / sizeof all_types[0])

/* The dtype a file written as t reads back as: bf16 bits travel as '<u2'. */
static DType read_back(DType t) { return t == DT_BF16 ? DT_U16 : t; }

/* Deterministic bytes for a tensor (bool gets 0/1). */
static void fill(DType t, unsigned char *p, size_t nbytes)
{
    for (size_t i = 0; i < nbytes; i++) p[i] = t == DT_BOOL ? (unsigned char)(i % 3 == 0) : (unsigned char)(i * 37 + 11);
}

static void round_trip_memory(DType t, int rank, const int64_t *dims)
{
    Shape s = ir_shape(rank, dims);
    size_t nbytes = (size_t)ir_numel(&s) * ir_dtype_size(t);
    unsigned char *data = malloc(nbytes + 1);
    fill(t, data, nbytes);
    size_t len;
    unsigned char *img = npy_encode(t, &s, data, &len);
    size_t header = len - nbytes;
    assert_int_equal(header % 64, 0);
    assert_int_equal(img[header - 1], '\n');
    assert_int_equal(img[6], 1);
    assert_int_equal(img[7], 0);

    NpyArray a;
    Diag d = {0};
    assert_int_equal(npy_parse(img, len, "mem.npy", &a, &d), 0);
    assert_int_equal(d.n_errors, 0);
    assert_int_equal(a.dtype, read_back(t));
    assert_true(ir_shape_eq(&a.shape, &s));
    assert_int_equal(a.nbytes, nbytes);
    assert_non_null(a.data);
    if (nbytes) assert_memory_equal(a.data, data, nbytes);
    npy_free(&a);
    free(img);
    free(data);
}

static void test_round_trip_every_dtype(void **state)
{
    (void)state;
    const int64_t d1[] = {5}, d2[] = {2, 3}, d0[] = {0, 3}, d4[] = {1, 2, 3, 2};
    for (size_t i = 0; i < N_TYPES; i++) {
        round_trip_memory(all_types[i], 0, NULL);
        round_trip_memory(all_types[i], 1, d1);
        round_trip_memory(all_types[i], 2, d2);
        round_trip_memory(all_types[i], 2, d0);
        round_trip_memory(all_types[i], 4, d4);
    }
}

static void test_round_trip_file(void **state)
{
    (void)state;
    char path[64];
    snprintf(path, sizeof path, "/tmp/graphc_test_npy_%ld.npy", (long)getpid());
    const int64_t dims[] = {3, 4};
    Shape s = ir_shape(2, dims);
    for (size_t i = 0; i < N_TYPES; i++) {
        DType t = all_types[i];
        size_t nbytes = 12 * ir_dtype_size(t);
        unsigned char data[96];
        fill(t, data, nbytes);
        Diag d = {0};
        assert_int_equal(npy_write(path, t, &s, data, &d), 0);
        NpyArray a;
        assert_int_equal(npy_read(path, &a, &d), 0);
        assert_int_equal(a.dtype, read_back(t));
        assert_true(npy_dtype_fits(a.dtype, t));
        assert_true(ir_shape_eq(&a.shape, &s));
        assert_memory_equal(a.data, data, nbytes);
        npy_free(&a);
    }
    remove(path);
}

static void test_descr_names(void **state)
{
    (void)state;
    assert_string_equal(npy_descr(DT_F32), "<f4");
    assert_string_equal(npy_descr(DT_F16), "<f2");
    assert_string_equal(npy_descr(DT_BF16), "<u2");
    assert_string_equal(npy_descr(DT_BOOL), "|b1");
    assert_string_equal(npy_descr(DT_U8), "|u1");
    assert_string_equal(npy_descr(DT_U16), "<u2");
    assert_string_equal(npy_descr(DT_U32), "<u4");
    assert_string_equal(npy_descr(DT_U64), "<u8");
    /* a '<u2' file is u16 and may also feed a bf16 tensor, nothing else */
    assert_true(npy_dtype_fits(DT_U16, DT_BF16));
    assert_true(npy_dtype_fits(DT_U32, DT_U32));
    assert_false(npy_dtype_fits(DT_BF16, DT_U16));
    assert_false(npy_dtype_fits(DT_U16, DT_I16));
    assert_false(npy_dtype_fits(DT_U32, DT_I32));
    assert_null(npy_descr(DT_UNDEF));
}

/* Builds a .npy image by hand: version major.0, header text, then `extra`
 * data bytes (zeros). */
static unsigned char *image(int major, const char *dict, size_t extra, size_t *len)
{
    size_t pre = major == 1 ? 10 : 12, hl = strlen(dict);
    unsigned char *b = calloc(pre + hl + extra + 1, 1);
    memcpy(b, "\x93NUMPY", 6);
    b[6] = (unsigned char)major;
    b[7] = 0;
    b[8] = (unsigned char)(hl & 0xff);
    b[9] = (unsigned char)(hl >> 8);
    memcpy(b + pre, dict, hl);
    *len = pre + hl + extra;
    return b;
}

static void expect_ok(int major, const char *dict, size_t extra, DType t, int rank, const int64_t *dims)
{
    size_t len;
    unsigned char *b = image(major, dict, extra, &len);
    NpyArray a;
    Diag d = {0};
    int rc = npy_parse(b, len, "x.npy", &a, &d);
    if (rc) fail_msg("unexpected error: %s", d.msg);
    assert_int_equal(a.dtype, t);
    Shape s = ir_shape(rank, dims);
    assert_true(ir_shape_eq(&a.shape, &s));
    npy_free(&a);
    free(b);
}

static void test_headers_numpy_writes(void **state)
{
    (void)state;
    const int64_t d23[] = {2, 3}, d7[] = {7};
    expect_ok(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }          \n", 24, DT_F32, 2, d23);
    expect_ok(2, "{'descr': '<i8', 'fortran_order': False, 'shape': (7,), }\n", 56, DT_I64, 1, d7);
    expect_ok(3, "{'descr': '|b1', 'fortran_order': False, 'shape': (), }\n", 1, DT_BOOL, 0, NULL);
    /* key order, double quotes, no trailing comma, Python 2 longs */
    expect_ok(1, "{\"shape\": (2L, 3L), \"fortran_order\": False, \"descr\": \"<f2\"}\n", 12, DT_F16, 2, d23);
    /* unsigned integers; '<u2' is u16 (bf16 bits read as u16 too) */
    expect_ok(1, "{'descr': '<u2', 'fortran_order': False, 'shape': (7,), }\n", 14, DT_U16, 1, d7);
    expect_ok(1, "{'descr': '<u4', 'fortran_order': False, 'shape': (7,), }\n", 28, DT_U32, 1, d7);
    expect_ok(1, "{'descr': '<u8', 'fortran_order': False, 'shape': (2, 3), }\n", 48, DT_U64, 2, d23);
}

static void expect_error(const unsigned char *b, size_t len, const char *msg)
{
    NpyArray a;
    Diag d = {0};
    assert_int_equal(npy_parse(b, len, "x.npy", &a, &d), -1);
    assert_int_equal(d.n_errors, 1);
    assert_string_equal(d.msg, msg);
    assert_null(a.data);
}

static void expect_dict_error(const char *dict, size_t extra, const char *msg)
{
    size_t len;
    unsigned char *b = image(1, dict, extra, &len);
    expect_error(b, len, msg);
    free(b);
}

static void test_bad_magic(void **state)
{
    (void)state;
    expect_error((const unsigned char *)"PK\x03\x04 not npy at all", 20, "x.npy: bad magic (not a .npy file)");
    expect_error((const unsigned char *)"\x93NUMPZ\x01\x00", 8, "x.npy: bad magic (not a .npy file)");
    expect_error((const unsigned char *)"\x94", 1, "x.npy: bad magic (not a .npy file)");
}

static void test_truncated(void **state)
{
    (void)state;
    expect_error((const unsigned char *)"", 0, "x.npy: truncated file: 0 bytes, too short for a .npy header");
    expect_error((const unsigned char *)"\x93NUM", 4, "x.npy: truncated file: 4 bytes, too short for a .npy header");
    expect_error((const unsigned char *)"\x93NUMPY\x01\x00\x40", 9,
                 "x.npy: truncated file: 9 bytes, too short for a .npy header");
    expect_error((const unsigned char *)"\x93NUMPY\x02\x00\x40\x00", 10,
                 "x.npy: truncated file: 10 bytes, too short for a .npy header");

    /* A complete image cut short in the header and in the data. */
    const int64_t dims[] = {2, 3};
    Shape s = ir_shape(2, dims);
    float data[6] = {1, 2, 3, 4, 5, 6};
    size_t len;
    unsigned char *img = npy_encode(DT_F32, &s, data, &len);
    assert_int_equal(len, 128 + 24); /* numpy pads this header to 128 bytes too */
    expect_error(img, 40, "x.npy: truncated header: declares 118 bytes, file has 30 after the preamble");
    expect_error(img, len - 4, "x.npy: truncated data: shape [2,3] of <f4 needs 24 bytes, file has 20");
    expect_error(img, 128, "x.npy: truncated data: shape [2,3] of <f4 needs 24 bytes, file has 0");
    free(img);

    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }\n", 28,
                      "x.npy: size mismatch: shape [2,3] of <f4 needs 24 bytes, file has 28");
}

static void test_fortran_order(void **state)
{
    (void)state;
    expect_dict_error("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }\n", 24,
                      "x.npy: fortran_order arrays are not supported (save the array in C order)");
}

static void test_unsupported_dtype_and_version(void **state)
{
    (void)state;
    expect_dict_error("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }\n", 8,
                      "x.npy: unsupported dtype '>f4' (supported: <f4 <f8 <f2 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 |b1; "
                      "<u2 also carries bf16 bits)");
    expect_dict_error("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }\n", 16,
                      "x.npy: unsupported dtype '<c8' (supported: <f4 <f8 <f2 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 |b1; "
                      "<u2 also carries bf16 bits)");
    expect_dict_error("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }\n", 8,
                      "x.npy: unsupported dtype: 'descr' must be a simple type string (structured dtypes are not "
                      "supported)");
    expect_error((const unsigned char *)"\x93NUMPY\x04\x00\x10\x00\x00\x00", 12,
                 "x.npy: unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)");
    /* 1-byte types spelled with '<' are the same type. */
    const int64_t d2[] = {2};
    expect_ok(1, "{'descr': '<i1', 'fortran_order': False, 'shape': (2,), }\n", 2, DT_I8, 1, d2);
}

static void test_bad_header_dicts(void **state)
{
    (void)state;
    expect_dict_error("'descr': '<f4'}\n", 0, "x.npy: bad header: expected '{'");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False}\n", 4, "x.npy: bad header: missing key 'shape'");
    expect_dict_error("{'descr': '<f4', 'shape': (1,)}\n", 4, "x.npy: bad header: missing key 'fortran_order'");
    expect_dict_error("{'fortran_order': False, 'shape': (1,)}\n", 4, "x.npy: bad header: missing key 'descr'");
    expect_dict_error("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,)}\n", 4,
                      "x.npy: bad header: key 'descr' appears twice");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'extra': 1}\n", 4,
                      "x.npy: bad header: unknown key 'extra'");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3)}\n", 12,
                      "x.npy: bad header: 'shape' (N) is not a tuple (write (N,))");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (-3,)}\n", 12,
                      "x.npy: bad header: 'shape' must be a tuple of non-negative integers");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': [3]}\n", 12,
                      "x.npy: bad header: 'shape' must be a tuple");
    expect_dict_error("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}\n", 12,
                      "x.npy: bad header: 'fortran_order' must be True or False");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x\n", 12,
                      "x.npy: bad header: unexpected text after '}'");
    expect_dict_error("{'descr': '<f4' 'fortran_order': False, 'shape': (3,)}\n", 12,
                      "x.npy: bad header: expected ',' or '}' after key 'descr'");
    expect_dict_error("{'descr' '<f4'}\n", 12, "x.npy: bad header: expected ':' after key 'descr'");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}\n", 12,
                      "x.npy: bad header: shape dimension is too large");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1)}\n", 4,
                      "x.npy: shape has more than 8 dimensions");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}\n", 4,
                      "x.npy: shape [4294967296,4294967296,4294967296] is too large");
    expect_dict_error("{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", 12,
                      "x.npy: bad header: expected ',' or '}' after key 'shape'");
}

static void test_read_errors_name_the_file(void **state)
{
    (void)state;
    NpyArray a;
    Diag d = {0};
    d.file = "model.gir"; /* the caller's file is not used for .npy errors */
    assert_int_equal(npy_read("/nonexistent/dir/in0.npy", &a, &d), -1);
    assert_string_equal(d.msg, "/nonexistent/dir/in0.npy: cannot open: No such file or directory");
    assert_string_equal(d.file, "model.gir");

    Diag d2 = {0};
    const int64_t dims[] = {1};
    Shape s = ir_shape(1, dims);
    float x = 1;
    assert_int_equal(npy_write("/nonexistent/dir/out.npy", DT_F32, &s, &x, &d2), -1);
    assert_string_equal(d2.msg, "/nonexistent/dir/out.npy: cannot write: No such file or directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip_every_dtype),
        cmocka_unit_test(test_round_trip_file),
        cmocka_unit_test(test_descr_names),
        cmocka_unit_test(test_headers_numpy_writes),
        cmocka_unit_test(test_bad_magic),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_fortran_order),
        cmocka_unit_test(test_unsupported_dtype_and_version),
        cmocka_unit_test(test_bad_header_dicts),
        cmocka_unit_test(test_read_errors_name_the_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
