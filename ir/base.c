/* base.c — the IR's small foundations: the bump arena every graph owns,
 * the one string/key hash (FNV-1a) every table uses, diagnostics, dtypes (sizes, names, conversions with ONNX Cast semantics
 * and rounding to narrower floats) and shapes with checked arithmetic. */
#include "ir.h"
#include "op.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- hashing ---- */

uint64_t ir_hash_mix(uint64_t h, uint64_t x) { return (h ^ x) * 1099511628211ull; }

uint64_t ir_hash_str(const char *s)
{
    uint64_t h = IR_HASH_SEED;
    for (; *s; s++) h = ir_hash_mix(h, (unsigned char)*s);
    return h;
}

/* ---- arena ---- */

struct ArenaChunk {
    ArenaChunk *next;
    size_t used, cap;
    _Alignas(16) unsigned char mem[];
};

void *arena_alloc(Arena *a, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (n == 0) n = 16;
    ArenaChunk *c = a->head;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        c = malloc(sizeof *c + cap);
        if (!c) { fprintf(stderr, "graphc: out of memory\n"); abort(); }
        c->used = 0;
        c->cap = cap;
        c->next = a->head;
        a->head = c;
    }
    void *p = c->mem + c->used;
    c->used += n;
    memset(p, 0, n);
    return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n)
{
    char *p = arena_alloc(a, n + 1);
    memcpy(p, s, n);
    p[n] = 0;
    return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

void arena_free(Arena *a)
{
    ArenaChunk *c = a->head;
    while (c) {
        ArenaChunk *n = c->next;
        free(c);
        c = n;
    }
    a->head = NULL;
}

/* ---- diagnostics ---- */

int diag_verror(Diag *d, const Node *n, const char *fmt, va_list ap)
{
    if (!d) return -1;
    if (d->n_errors++ == 0) {
        size_t k = 0;
        if (d->file) k += (size_t)snprintf(d->msg + k, sizeof d->msg - k, "%s: ", d->file);
        if (n && k < sizeof d->msg)
            k += (size_t)snprintf(d->msg + k, sizeof d->msg - k, "node '%s' (%s): ",
                                  n->name, ir_op(n->op)->name);
        if (k < sizeof d->msg) vsnprintf(d->msg + k, sizeof d->msg - k, fmt, ap);
    }
    return -1;
}

int diag_error(Diag *d, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_verror(d, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

int diag_node_error(Diag *d, const Node *n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    diag_verror(d, n, fmt, ap);
    va_end(ap);
    return -1;
}

void ir_assert_fail(const char *file, int line, const char *expr)
{
    fprintf(stderr, "graphc: internal error at %s:%d: assertion '%s' failed\n", file, line, expr);
    abort();
}

/* ---- dtypes ---- */

static const struct { const char *name; size_t size; } dtype_info[DT_COUNT] = {
    [DT_UNDEF] = {"undef", 0}, [DT_F32] = {"f32", 4}, [DT_F64] = {"f64", 8},
    [DT_F16] = {"f16", 2},     [DT_BF16] = {"bf16", 2}, [DT_I8] = {"i8", 1},
    [DT_U8] = {"u8", 1},       [DT_I16] = {"i16", 2},  [DT_I32] = {"i32", 4},
    [DT_I64] = {"i64", 8},     [DT_BOOL] = {"bool", 1}, [DT_U16] = {"u16", 2},
    [DT_U32] = {"u32", 4},     [DT_U64] = {"u64", 8},
};

const char *ir_dtype_name(DType t) { return t < DT_COUNT ? dtype_info[t].name : "?"; }
size_t ir_dtype_size(DType t) { return t < DT_COUNT ? dtype_info[t].size : 0; }
int ir_dtype_is_float(DType t) { return t == DT_F32 || t == DT_F64 || t == DT_F16 || t == DT_BF16; }
int ir_dtype_is_int(DType t) { return (t >= DT_I8 && t <= DT_I64) || (t >= DT_U16 && t <= DT_U64); }

int ir_dtype_parse(const char *s, DType *out)
{
    for (int t = 1; t < DT_COUNT; t++)
        if (strcmp(s, dtype_info[t].name) == 0) { *out = (DType)t; return 0; }
    return -1;
}

static const struct { int code; DType t; } onnx_codes[] = {
    {1, DT_F32}, {2, DT_U8}, {3, DT_I8}, {4, DT_U16}, {5, DT_I16}, {6, DT_I32}, {7, DT_I64},
    {9, DT_BOOL}, {10, DT_F16}, {11, DT_F64}, {12, DT_U32}, {13, DT_U64}, {16, DT_BF16},
};

int ir_dtype_from_onnx(int64_t code, DType *out)
{
    for (size_t i = 0; i < sizeof onnx_codes / sizeof onnx_codes[0]; i++)
        if (onnx_codes[i].code == code) { *out = onnx_codes[i].t; return 0; }
    return -1;
}

int ir_dtype_to_onnx(DType t)
{
    for (size_t i = 0; i < sizeof onnx_codes / sizeof onnx_codes[0]; i++)
        if (onnx_codes[i].t == t) return onnx_codes[i].code;
    GC_ASSERT(0 && "dtype without an ONNX code");
    return 0;
}

static float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023;
    float f;
    if (exp == 0) f = ldexpf((float)man, -24);
    else if (exp == 31) f = man ? NAN : INFINITY;
    else f = ldexpf((float)(man | 1024), (int)exp - 25);
    return sign ? -f : f;
}

static uint16_t float_to_half(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    if (isnan(f)) return sign | 0x7e00;
    float a = fabsf(f);
    if (a >= 65520.0f) return sign | 0x7c00;
    if (a < ldexpf(1, -25)) return sign; /* rounds to zero (ties-to-even at 2^-25 gives 0) */
    int e;
    frexpf(a, &e); /* a = m * 2^e, m in [0.5,1) */
    int exp = e - 1 + 15;
    float scaled;
    uint32_t bits;
    if (exp <= 0) { /* subnormal: units of 2^-24 */
        scaled = ldexpf(a, 24);
        bits = (uint32_t)nearbyintf(scaled);
        return sign | (uint16_t)bits;
    }
    scaled = ldexpf(a, 10 - (e - 1)); /* in [1024, 2048) */
    bits = (uint32_t)nearbyintf(scaled);
    if (bits == 2048) { bits = 1024; exp++; }
    if (exp >= 31) return sign | 0x7c00;
    return sign | (uint16_t)((uint32_t)exp << 10) | (uint16_t)(bits - 1024);
}

static float bf16_to_float(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    if (isnan(f)) return (uint16_t)((x >> 16) | 0x40);
    x += 0x7fff + ((x >> 16) & 1); /* round to nearest even */
    return (uint16_t)(x >> 16);
}

double ir_load_f64(DType t, const void *data, size_t i)
{
    const unsigned char *p = (const unsigned char *)data + i * ir_dtype_size(t);
    switch (t) {
    case DT_F32: { float v; memcpy(&v, p, 4); return v; }
    case DT_F64: { double v; memcpy(&v, p, 8); return v; }
    case DT_F16: { uint16_t v; memcpy(&v, p, 2); return half_to_float(v); }
    case DT_BF16: { uint16_t v; memcpy(&v, p, 2); return bf16_to_float(v); }
    case DT_I8: return (double)*(const int8_t *)p;
    case DT_U8: return (double)*p;
    case DT_I16: { int16_t v; memcpy(&v, p, 2); return v; }
    case DT_I32: { int32_t v; memcpy(&v, p, 4); return v; }
    case DT_I64: { int64_t v; memcpy(&v, p, 8); return (double)v; }
    case DT_BOOL: return *p ? 1.0 : 0.0;
    case DT_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case DT_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case DT_U64: { uint64_t v; memcpy(&v, p, 8); return (double)v; } /* rounds above 2^53 */
    default: GC_ASSERT(0 && "bad dtype"); return 0;
    }
}

/* Float-to-integer conversion that never invokes undefined behaviour:
 * NaN gives 0 and out-of-range values saturate. */
static int64_t to_i64_sat(double v, double lo, double hi)
{
    if (isnan(v)) return 0;
    v = trunc(v);
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return (int64_t)v;
}

/* The same for u64, whose top (2^64 - 1) no double holds: NaN and values
 * up to 0 give 0, values from 2^64 up give UINT64_MAX. */
static uint64_t to_u64_sat(double v)
{
    if (isnan(v) || v <= 0) return 0;
    if (v >= 18446744073709551616.0) return UINT64_MAX;
    return (uint64_t)v;
}

void ir_store_f64(DType t, void *data, size_t i, double v)
{
    unsigned char *p = (unsigned char *)data + i * ir_dtype_size(t);
    switch (t) {
    case DT_F32: { float x = (float)v; memcpy(p, &x, 4); break; }
    case DT_F64: memcpy(p, &v, 8); break;
    case DT_F16: { uint16_t x = float_to_half((float)v); memcpy(p, &x, 2); break; }
    case DT_BF16: { uint16_t x = float_to_bf16((float)v); memcpy(p, &x, 2); break; }
    case DT_I8: *(int8_t *)p = (int8_t)to_i64_sat(v, -128, 127); break;
    case DT_U8: *p = (uint8_t)to_i64_sat(v, 0, 255); break;
    case DT_I16: { int16_t x = (int16_t)to_i64_sat(v, -32768, 32767); memcpy(p, &x, 2); break; }
    case DT_I32: { int32_t x = (int32_t)to_i64_sat(v, -2147483648.0, 2147483647.0); memcpy(p, &x, 4); break; }
    case DT_I64: { int64_t x = to_i64_sat(v, -9223372036854775808.0, 9223372036854774784.0); memcpy(p, &x, 8); break; }
    case DT_BOOL: *p = v != 0; break;
    case DT_U16: { uint16_t x = (uint16_t)to_i64_sat(v, 0, 65535); memcpy(p, &x, 2); break; }
    case DT_U32: { uint32_t x = (uint32_t)to_i64_sat(v, 0, 4294967295.0); memcpy(p, &x, 4); break; }
    case DT_U64: { uint64_t x = to_u64_sat(v); memcpy(p, &x, 8); break; }
    default: GC_ASSERT(0 && "bad dtype");
    }
}

double ir_round_to(DType t, double v)
{
    unsigned char tmp[8];
    ir_store_f64(t, tmp, 0, v);
    return ir_load_f64(t, tmp, 0);
}

/* ---- shapes ---- */

Shape ir_shape(int rank, const int64_t *dims)
{
    Shape s = {0};
    memset(&s, 0, sizeof s);
    GC_ASSERT(rank >= 0 && rank <= IR_MAX_RANK);
    s.rank = rank;
    for (int i = 0; i < rank; i++) s.dims[i] = dims[i];
    return s;
}

int ir_shape_eq(const Shape *a, const Shape *b)
{
    if (a->rank != b->rank) return 0;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i] || a->sym[i] != b->sym[i]) return 0;
    return 1;
}

int ir_shape_has_sym(const Shape *s)
{
    for (int i = 0; i < s->rank; i++)
        if (s->sym[i]) return 1;
    return 0;
}

void ir_row_strides(const Shape *s, int64_t *st)
{
    int64_t acc = 1;
    for (int i = s->rank - 1; i >= 0; i--) {
        st[i] = acc;
        acc *= s->dims[i];
    }
}

int ir_mul_ok(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0) return -1;
    if (a != 0 && b > INT64_MAX / a) return -1;
    *out = a * b;
    return 0;
}

int ir_add_ok(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0 || a > INT64_MAX - b) return -1;
    *out = a + b;
    return 0;
}

int ir_shape_numel(const Shape *s, int64_t *out)
{
    int64_t n = 1;
    for (int i = 0; i < s->rank; i++)
        if (ir_mul_ok(n, s->dims[i], &n)) return -1;
    *out = n;
    return 0;
}

int64_t ir_numel(const Shape *s)
{
    int64_t n = 0;
    int bad = ir_shape_numel(s, &n);
    GC_ASSERT(!bad);
    return n;
}

int ir_broadcast(const Shape *a, const Shape *b, Shape *out)
{
    Shape r = {0};
    memset(&r, 0, sizeof r);
    r.rank = a->rank > b->rank ? a->rank : b->rank;
    for (int i = 0; i < r.rank; i++) {
        int ia = a->rank - r.rank + i, ib = b->rank - r.rank + i;
        int64_t da = ia >= 0 ? a->dims[ia] : 1, db = ib >= 0 ? b->dims[ib] : 1;
        if (da == db || db == 1) r.dims[i] = da;
        else if (da == 1) r.dims[i] = db;
        else return -1;
    }
    *out = r;
    return 0;
}

const char *ir_shape_str(const Shape *s, char *buf, size_t cap)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, cap - k, "[");
    for (int i = 0; i < s->rank && k < cap; i++)
        k += (size_t)snprintf(buf + k, cap - k, "%s%s%lld", i ? "," : "", s->sym[i] ? "<=" : "", (long long)s->dims[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

int ir_outputs_empty(const Node *n)
{
    for (int j = 0; j < n->n_out; j++)
        if (ir_numel(&n->out[j]->shape) != 0) return 0;
    return n->n_out > 0;
}

int64_t ir_value_max_numel(const Value *v)
{
    int64_t n = ir_numel(&v->shape);
    return v->numel_cap > 0 && v->numel_cap < n ? v->numel_cap : n;
}

int64_t ir_value_bytes(const Value *v)
{
    int64_t bytes;
    int bad = ir_mul_ok(ir_value_max_numel(v), (int64_t)ir_dtype_size(v->dtype), &bytes);
    GC_ASSERT(!bad);
    return bytes;
}

int64_t ir_tensor_limit(const Graph *g)
{
    return g->max_tensor_bytes > 0 ? g->max_tensor_bytes : IR_DEFAULT_MAX_TENSOR_BYTES;
}

int ir_check_tensor_size(const Graph *g, const Node *n, const char *what, const Value *v, Diag *d)
{
    int64_t numel, bytes, limit = ir_tensor_limit(g);
    /* the dims' bounds must multiply within int64 even where a joint bound
     * (numel_cap) is smaller: sizes are computed from them */
    int over = ir_shape_numel(&v->shape, &numel);
    if (!over && v->numel_cap > 0 && v->numel_cap < numel) numel = v->numel_cap;
    over = over || ir_mul_ok(numel, (int64_t)ir_dtype_size(v->dtype), &bytes);
    if (!over && bytes <= limit) return 0;
    char size[32], shape[256];
    if (over) snprintf(size, sizeof size, "more than %lld", (long long)INT64_MAX);
    else snprintf(size, sizeof size, "%lld", (long long)bytes);
    ir_shape_str(&v->shape, shape, sizeof shape);
    return diag_node_error(d, n, "%s '%s' %s %s bytes (%s %s), over the %lld-byte limit (--max-tensor-bytes)", what,
                           v->name, n ? "would be" : "is", size, ir_dtype_name(v->dtype), shape, (long long)limit);
}

int ir_norm_axis(int64_t axis, int rank)
{
    if (axis < -rank || axis >= rank) return -1;
    return (int)(axis < 0 ? axis + rank : axis);
}

/* splitmix64: the generator behind random(seed=...) (see docs/text-ir.md). */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void ir_fill_random(DType t, void *out, int64_t n, uint64_t seed, double lo, double hi)
{
    int integer = !ir_dtype_is_float(t);
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(splitmix64(&seed) >> 11) * 0x1p-53;
        double v;
        if (integer) {
            v = floor(lo + (hi - lo + 1) * u);
            if (v > hi) v = hi;
        } else {
            v = lo + (hi - lo) * u;
        }
        ir_store_f64(t, out, (size_t)i, v);
    }
}
