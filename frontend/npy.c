/* npy.c — NumPy .npy reader and writer.
 *
 * A .npy file is: the magic "\x93NUMPY", a major/minor version byte pair, a
 * little-endian header length (2 bytes in v1.0, 4 in v2.0/v3.0), a Python
 * dict literal padded with spaces and ended by '\n', then the raw elements.
 * The header is parsed by a small strict recursive-descent reader over the
 * exact subset numpy writes: keys 'descr' (a string), 'fortran_order'
 * (True/False) and 'shape' (a tuple of non-negative ints), each exactly once,
 * in any order, with an optional trailing comma. Everything is bounded by
 * the declared header length and the file size; the element count is
 * computed with overflow checks and must match the data size exactly.
 *
 * Writing produces v1.0 with the header padded so the data starts at a
 * multiple of 64 bytes (what numpy does), through a temp file and rename so
 * a failed write never leaves a half-written file behind.
 */
#include "npy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

static const struct {
    const char *descr;
    DType t;
} npy_types[] = { /* reading takes the first row of a descr: '<u2' is u16 */
    {"<f4", DT_F32}, {"<f8", DT_F64}, {"<f2", DT_F16}, {"|i1", DT_I8},
    {"|u1", DT_U8},  {"<i2", DT_I16}, {"<u2", DT_U16}, {"<i4", DT_I32},
    {"<u4", DT_U32}, {"<i8", DT_I64}, {"<u8", DT_U64}, {"|b1", DT_BOOL},
    {"<u2", DT_BF16},
};
#define N_NPY_TYPES (sizeof npy_types / sizeof npy_types[0])

/* Reports "NAME: msg" regardless of the file the Diag was set up for. */
__attribute__((format(printf, 3, 4)))
static int npy_err(Diag *d, const char *name, const char *fmt, ...)
{
    if (!d) return -1;
    const char *saved = d->file;
    d->file = name;
    va_list ap;
    va_start(ap, fmt);
    diag_verror(d, NULL, fmt, ap);
    va_end(ap);
    d->file = saved;
    return -1;
}

int npy_dtype_fits(DType file, DType want) { return file == want || (file == DT_U16 && want == DT_BF16); }

const char *npy_descr(DType t)
{
    for (size_t i = 0; i < N_NPY_TYPES; i++)
        if (npy_types[i].t == t) return npy_types[i].descr;
    return NULL;
}

/* ---- header dict parser ---- */

typedef struct HdrParser {
    const char *s, *end;
    const char *name;
    Diag *d;
} HdrParser;

static void hp_ws(HdrParser *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r')) p->s++;
}

static int hp_eat(HdrParser *p, char c)
{
    hp_ws(p);
    if (p->s < p->end && *p->s == c) { p->s++; return 1; }
    return 0;
}

/* A quoted string without escapes into buf (cap bytes). */
static int hp_string(HdrParser *p, char *buf, size_t cap)
{
    hp_ws(p);
    if (p->s >= p->end || (*p->s != '\'' && *p->s != '"')) return -1;
    char q = *p->s++;
    size_t n = 0;
    while (p->s < p->end && *p->s != q) {
        if (*p->s == '\\' || n + 1 >= cap) return -1;
        buf[n++] = *p->s++;
    }
    if (p->s >= p->end) return -1;
    p->s++;
    buf[n] = 0;
    return 0;
}

static int hp_word(HdrParser *p, const char *w)
{
    hp_ws(p);
    size_t n = strlen(w);
    if ((size_t)(p->end - p->s) >= n && memcmp(p->s, w, n) == 0) { p->s += n; return 1; }
    return 0;
}

/* '(' [int (',' int)* [',']] ')' — one element needs its trailing comma. */
static int hp_shape(HdrParser *p, Shape *sh)
{
    sh->rank = 0;
    if (!hp_eat(p, '(')) return npy_err(p->d, p->name, "bad header: 'shape' must be a tuple");
    int commas = 0;
    for (;;) {
        if (hp_eat(p, ')')) break;
        hp_ws(p);
        if (p->s >= p->end || *p->s < '0' || *p->s > '9')
            return npy_err(p->d, p->name, "bad header: 'shape' must be a tuple of non-negative integers");
        int64_t v = 0;
        while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
            if (ir_mul_ok(v, 10, &v) || ir_add_ok(v, *p->s - '0', &v))
                return npy_err(p->d, p->name, "bad header: shape dimension is too large");
            p->s++;
        }
        if (p->s < p->end && *p->s == 'L') p->s++; /* Python 2 long literal */
        if (sh->rank == IR_MAX_RANK)
            return npy_err(p->d, p->name, "shape has more than %d dimensions", IR_MAX_RANK);
        sh->dims[sh->rank++] = v;
        if (hp_eat(p, ',')) { commas++; continue; }
        if (hp_eat(p, ')')) break;
        return npy_err(p->d, p->name, "bad header: expected ',' or ')' in 'shape'");
    }
    if (sh->rank == 1 && commas == 0)
        return npy_err(p->d, p->name, "bad header: 'shape' (N) is not a tuple (write (N,))");
    return 0;
}

/* Parses the header dict into descr / fortran / shape. */
static int parse_header(HdrParser *p, char *descr, size_t dcap, int *fortran, Shape *shape)
{
    int have_descr = 0, have_fortran = 0, have_shape = 0;
    if (!hp_eat(p, '{')) return npy_err(p->d, p->name, "bad header: expected '{'");
    for (;;) {
        if (hp_eat(p, '}')) break;
        char key[32];
        if (hp_string(p, key, sizeof key)) return npy_err(p->d, p->name, "bad header: expected a quoted key or '}'");
        if (!hp_eat(p, ':')) return npy_err(p->d, p->name, "bad header: expected ':' after key '%s'", key);
        if (strcmp(key, "descr") == 0) {
            if (have_descr++) return npy_err(p->d, p->name, "bad header: key 'descr' appears twice");
            if (hp_string(p, descr, dcap))
                return npy_err(p->d, p->name, "unsupported dtype: 'descr' must be a simple type string (structured dtypes are not supported)");
        } else if (strcmp(key, "fortran_order") == 0) {
            if (have_fortran++) return npy_err(p->d, p->name, "bad header: key 'fortran_order' appears twice");
            if (hp_word(p, "True")) *fortran = 1;
            else if (hp_word(p, "False")) *fortran = 0;
            else return npy_err(p->d, p->name, "bad header: 'fortran_order' must be True or False");
        } else if (strcmp(key, "shape") == 0) {
            if (have_shape++) return npy_err(p->d, p->name, "bad header: key 'shape' appears twice");
            if (hp_shape(p, shape)) return -1;
        } else {
            return npy_err(p->d, p->name, "bad header: unknown key '%s'", key);
        }
        if (hp_eat(p, ',')) continue;
        if (hp_eat(p, '}')) break;
        return npy_err(p->d, p->name, "bad header: expected ',' or '}' after key '%s'", key);
    }
    hp_ws(p);
    while (p->s < p->end && *p->s == 0) p->s++; /* some writers pad with NULs */
    if (p->s != p->end) return npy_err(p->d, p->name, "bad header: unexpected text after '}'");
    if (!have_descr) return npy_err(p->d, p->name, "bad header: missing key 'descr'");
    if (!have_fortran) return npy_err(p->d, p->name, "bad header: missing key 'fortran_order'");
    if (!have_shape) return npy_err(p->d, p->name, "bad header: missing key 'shape'");
    return 0;
}

static uint32_t le16(const unsigned char *b) { return (uint32_t)b[0] | (uint32_t)b[1] << 8; }
static uint32_t le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

int npy_parse(const void *buf, size_t len, const char *name, NpyArray *out, Diag *d)
{
    const unsigned char *b = buf;
    memset(out, 0, sizeof *out);
    size_t mlen = len < 6 ? len : 6;
    if (memcmp(b, npy_magic, mlen) != 0) return npy_err(d, name, "bad magic (not a .npy file)");
    if (len < 8) return npy_err(d, name, "truncated file: %zu bytes, too short for a .npy header", len);
    int major = b[6], minor = b[7];
    if ((major != 1 && major != 2 && major != 3) || minor != 0)
        return npy_err(d, name, "unsupported .npy format version %d.%d (supported: 1.0, 2.0, 3.0)", major, minor);
    size_t pre = major == 1 ? 10 : 12;
    if (len < pre) return npy_err(d, name, "truncated file: %zu bytes, too short for a .npy header", len);
    size_t hlen = major == 1 ? le16(b + 8) : le32(b + 8);
    if (hlen > len - pre)
        return npy_err(d, name, "truncated header: declares %zu bytes, file has %zu after the preamble", hlen, len - pre);

    char descr[16];
    int fortran = 0;
    Shape shape = {0};
    HdrParser p = {(const char *)b + pre, (const char *)b + pre + hlen, name, d};
    if (parse_header(&p, descr, sizeof descr, &fortran, &shape)) return -1;
    if (fortran) return npy_err(d, name, "fortran_order arrays are not supported (save the array in C order)");

    DType t = DT_UNDEF;
    for (size_t i = 0; i < N_NPY_TYPES && t == DT_UNDEF; i++)
        if (strcmp(descr, npy_types[i].descr) == 0) t = npy_types[i].t;
    /* 1-byte types may be spelled with '<' or '=' as well. */
    if (t == DT_UNDEF && (descr[0] == '<' || descr[0] == '=') && strlen(descr) == 3 && descr[2] == '1')
        for (size_t i = 0; i < N_NPY_TYPES; i++)
            if (npy_types[i].descr[0] == '|' && strcmp(descr + 1, npy_types[i].descr + 1) == 0) t = npy_types[i].t;
    if (t == DT_UNDEF)
        return npy_err(d, name,
                       "unsupported dtype '%s' (supported: <f4 <f8 <f2 |i1 |u1 <i2 <u2 <i4 <u4 <i8 <u8 |b1; <u2 also "
                       "carries bf16 bits)",
                       descr);

    int64_t numel, nbytes;
    char sbuf[256];
    ir_shape_str(&shape, sbuf, sizeof sbuf);
    if (ir_shape_numel(&shape, &numel) || ir_mul_ok(numel, (int64_t)ir_dtype_size(t), &nbytes) ||
        (uint64_t)nbytes > (uint64_t)SIZE_MAX)
        return npy_err(d, name, "shape %s is too large", sbuf);
    size_t have = len - pre - hlen;
    if ((uint64_t)have < (uint64_t)nbytes)
        return npy_err(d, name, "truncated data: shape %s of %s needs %lld bytes, file has %zu", sbuf, descr,
                       (long long)nbytes, have);
    if ((uint64_t)have > (uint64_t)nbytes)
        return npy_err(d, name, "size mismatch: shape %s of %s needs %lld bytes, file has %zu", sbuf, descr,
                       (long long)nbytes, have);

    out->data = malloc(nbytes ? (size_t)nbytes : 1);
    if (!out->data) return npy_err(d, name, "out of memory reading %lld bytes", (long long)nbytes);
    if (nbytes) memcpy(out->data, b + pre + hlen, (size_t)nbytes);
    out->dtype = t;
    out->shape = shape;
    out->nbytes = (size_t)nbytes;
    return 0;
}

int npy_read(const char *path, NpyArray *out, Diag *d)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) return npy_err(d, path, "cannot open: %s", strerror(errno));
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap);
    if (!buf) { fclose(f); return npy_err(d, path, "out of memory"); }
    for (;;) {
        if (len == cap) {
            unsigned char *nb = cap > SIZE_MAX / 2 ? NULL : realloc(buf, cap * 2);
            if (!nb) { free(buf); fclose(f); return npy_err(d, path, "out of memory"); }
            buf = nb;
            cap *= 2;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) { free(buf); return npy_err(d, path, "read error"); }
    int rc = npy_parse(buf, len, path, out, d);
    free(buf);
    return rc;
}

void npy_free(NpyArray *a)
{
    free(a->data);
    a->data = NULL;
    a->nbytes = 0;
}

/* ---- writing ---- */

void *npy_encode(DType t, const Shape *s, const void *data, size_t *len)
{
    const char *descr = npy_descr(t);
    GC_ASSERT(descr);
    char dict[256];
    int k = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < s->rank; i++)
        k += snprintf(dict + k, sizeof dict - (size_t)k, "%s%lld", i ? ", " : "", (long long)s->dims[i]);
    k += snprintf(dict + k, sizeof dict - (size_t)k, "%s), }", s->rank == 1 ? "," : "");
    GC_ASSERT(k > 0 && (size_t)k < sizeof dict);
    size_t hl = (size_t)k + 1;          /* dict + '\n' */
    size_t total = (10 + hl + 63) / 64 * 64;
    hl = total - 10;
    size_t nbytes = (size_t)ir_numel(s) * ir_dtype_size(t);
    unsigned char *buf = malloc(total + nbytes);
    GC_ASSERT(buf);
    memcpy(buf, npy_magic, 6);
    buf[6] = 1;
    buf[7] = 0;
    buf[8] = (unsigned char)(hl & 0xff);
    buf[9] = (unsigned char)(hl >> 8);
    memset(buf + 10, ' ', hl);
    memcpy(buf + 10, dict, (size_t)k);
    buf[total - 1] = '\n';
    if (nbytes) memcpy(buf + total, data, nbytes);
    *len = total + nbytes;
    return buf;
}

int npy_write(const char *path, DType t, const Shape *s, const void *data, Diag *d)
{
    if (!npy_descr(t)) return npy_err(d, path, "cannot write dtype %s as .npy", ir_dtype_name(t));
    size_t len;
    void *buf = npy_encode(t, s, data, &len);
    size_t pl = strlen(path) + 32;
    char *tmp = malloc(pl);
    GC_ASSERT(tmp);
    snprintf(tmp, pl, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "wb");
    int err = 0;
    if (!f) {
        err = errno;
    } else {
        if (fwrite(buf, 1, len, f) != len) err = errno ? errno : EIO;
        if (fclose(f) != 0 && !err) err = errno;
        if (!err && rename(tmp, path) != 0) err = errno;
        if (err) remove(tmp);
    }
    free(tmp);
    free(buf);
    if (err) return npy_err(d, path, "cannot write: %s", strerror(err));
    return 0;
}
