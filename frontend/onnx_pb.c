/* onnx_pb.c — a bounded, zero-copy protobuf decoder for the ONNX messages
 * graphc reads (ModelProto, GraphProto, NodeProto, AttributeProto,
 * TensorProto, ValueInfoProto, TypeProto, OperatorSetIdProto; field numbers
 * from onnx.proto, syntax proto2).
 *
 * The wire format: a message is a sequence of fields, each a varint key
 * (field number << 3 | wire type) followed by a varint (type 0), 8 bytes
 * (type 1), a varint length and that many bytes (type 2: strings, bytes,
 * sub-messages, packed repeated scalars), or 4 bytes (type 5). Types 3/4
 * (deprecated groups) are skipped up to their matching end; 6/7 are invalid.
 *
 * Safety: every varint is at most 10 bytes; every length and fixed-size read
 * is checked against the bytes left in the enclosing message before use;
 * field numbers must be in 1..2^29-1; a known field with the wrong wire type
 * is an error; unknown fields are skipped. List counts are counted first and
 * bounded by ONNX_MAX_LIST, tensor ranks by IR_MAX_RANK, element counts by
 * ONNX_MAX_ELEMS, group and subgraph nesting by ONNX_MAX_DEPTH. Strings are copied (with a
 * NUL) into the arena; byte spans (raw_data, packed data) point into the
 * caller's buffer, which must outlive their use. Errors name the byte offset
 * in the buffer and the message/field involved.
 *
 * A GRAPH attribute (field g: the body of If/Loop/Scan) is decoded with
 * the same GraphProto decoder, one nesting level deeper (Graph>Node>Attr
 * counts 3 levels against ONNX_MAX_DEPTH, so a hostile file cannot recurse
 * without bound). Not supported (clear errors): sparse_initializer, GRAPHS
 * attributes (left to the importer to refuse by name); string tensors are
 * recognized but not decoded.
 */
#include "onnx_pb.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_SGROUP = 3, WT_EGROUP = 4, WT_I32 = 5 };

typedef struct PbField {
    uint32_t num;
    int wt;
    uint64_t v;     /* varint value, or fixed bits */
    PbSpan b;       /* WT_LEN payload */
    const uint8_t *at; /* start of the key, for error offsets */
} PbField;

typedef struct PbIter {
    const uint8_t *p, *end;
} PbIter;

__attribute__((format(printf, 3, 4)))
static int pb_err(PbCtx *c, const uint8_t *at, const char *fmt, ...)
{
    if (c->err[0]) return -1; /* keep the first error */
    int k = snprintf(c->err, sizeof c->err, "malformed ONNX protobuf at byte %zu: ",
                     at && at >= c->base ? (size_t)(at - c->base) : (size_t)0);
    va_list ap;
    va_start(ap, fmt);
    if (k > 0 && (size_t)k < sizeof c->err) vsnprintf(c->err + k, sizeof c->err - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

static int rd_varint(PbCtx *c, const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    for (int i = 0; i < 10; i++) {
        if (p >= end) return pb_err(c, *pp, "varint runs past the end of its message");
        uint8_t b = *p++;
        if (i == 9 && b > 1) return pb_err(c, *pp, "varint overflows 64 bits");
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return 0;
        }
    }
    return pb_err(c, *pp, "varint longer than 10 bytes");
}

static PbIter pb_iter(PbSpan s) { return (PbIter){s.p, s.p + s.n}; }

static int pb_skip_group(PbCtx *c, PbIter *it, uint32_t num, int depth);

/* Reads the next field of it into f: 1 got one, 0 at the end, -1 error. */
static int pb_next_d(PbCtx *c, PbIter *it, PbField *f, int depth)
{
    if (it->p >= it->end) return 0;
    memset(f, 0, sizeof *f);
    f->at = it->p;
    uint64_t key = 0;
    if (rd_varint(c, &it->p, it->end, &key)) return -1;
    if (key >> 3 == 0 || key >> 3 > 0x1fffffff) return pb_err(c, f->at, "invalid field number %llu", (unsigned long long)(key >> 3));
    f->num = (uint32_t)(key >> 3);
    f->wt = (int)(key & 7);
    size_t left = (size_t)(it->end - it->p);
    switch (f->wt) {
    case WT_VARINT:
        return rd_varint(c, &it->p, it->end, &f->v) ? -1 : 1;
    case WT_I64:
    case WT_I32: {
        size_t w = f->wt == WT_I64 ? 8 : 4;
        if (left < w) return pb_err(c, f->at, "field %u: %zu-byte value runs past the end of its message", f->num, w);
        uint64_t v = 0;
        for (size_t i = 0; i < w; i++) v |= (uint64_t)it->p[i] << (8 * i);
        f->v = v;
        it->p += w;
        return 1;
    }
    case WT_LEN: {
        uint64_t len = 0;
        if (rd_varint(c, &it->p, it->end, &len)) return -1;
        left = (size_t)(it->end - it->p);
        if (len > left)
            return pb_err(c, f->at, "field %u: length %llu runs past the end of its message (%zu bytes left)", f->num,
                          (unsigned long long)len, left);
        f->b = (PbSpan){it->p, (size_t)len};
        it->p += len;
        return 1;
    }
    case WT_SGROUP:
        return pb_skip_group(c, it, f->num, depth + 1) ? -1 : 1;
    case WT_EGROUP:
        return pb_err(c, f->at, "field %u: unmatched end-group", f->num);
    default:
        return pb_err(c, f->at, "field %u: invalid wire type %d", f->num, f->wt);
    }
}

static int pb_next(PbCtx *c, PbIter *it, PbField *f) { return pb_next_d(c, it, f, 0); }

/* Skips a deprecated group up to its end-group key with the same number. */
static int pb_skip_group(PbCtx *c, PbIter *it, uint32_t num, int depth)
{
    if (depth > ONNX_MAX_DEPTH) return pb_err(c, it->p, "groups nested deeper than %d", ONNX_MAX_DEPTH);
    for (;;) {
        if (it->p >= it->end) return pb_err(c, it->p, "group %u has no end", num);
        const uint8_t *at = it->p;
        uint64_t key = 0;
        if (rd_varint(c, &it->p, it->end, &key)) return -1;
        if ((key & 7) == WT_EGROUP) {
            if (key >> 3 != num) return pb_err(c, at, "end-group %llu does not match group %u", (unsigned long long)(key >> 3), num);
            return 0;
        }
        it->p = at;
        PbField f;
        if (pb_next_d(c, it, &f, depth) < 0) return -1;
    }
}

static const char *wt_name(int wt)
{
    static const char *n[] = {"varint", "64-bit", "length-delimited", "start-group", "end-group", "32-bit", "6", "7"};
    return n[wt & 7];
}

static int want_wt(PbCtx *c, const PbField *f, int wt, const char *msg, const char *field)
{
    if (f->wt == wt) return 0;
    return pb_err(c, f->at, "%s.%s (field %u) has wire type %s, expected %s", msg, field, f->num, wt_name(f->wt),
                  wt_name(wt));
}

/* Copies a string field; names must hold no control characters (so that
 * every diagnostic stays one line), other strings no NUL. */
static int rd_text(PbCtx *c, const PbField *f, const char *msg, const char *field, const char **out, int is_name)
{
    if (want_wt(c, f, WT_LEN, msg, field)) return -1;
    for (size_t i = 0; i < f->b.n; i++)
        if (f->b.p[i] == 0 || (is_name && (f->b.p[i] < 0x20 || f->b.p[i] == 0x7f)))
            return pb_err(c, f->at, "%s.%s contains a control character", msg, field);
    *out = arena_strndup(c->arena, (const char *)f->b.p, f->b.n);
    return 0;
}

static int rd_string(PbCtx *c, const PbField *f, const char *msg, const char *field, const char **out)
{
    return rd_text(c, f, msg, field, out, 1);
}

/* Counts the occurrences of field `num` in msg (validating every field). */
static int pb_count(PbCtx *c, PbSpan msg, uint32_t num, int *count)
{
    PbIter it = pb_iter(msg);
    PbField f;
    int r, k = 0;
    while ((r = pb_next(c, &it, &f)) > 0)
        if (f.num == num && ++k > ONNX_MAX_LIST) return pb_err(c, f.at, "more than %d entries of field %u", ONNX_MAX_LIST, num);
    *count = k;
    return r;
}

/* ---- repeated scalars (packed or not) ---- */

typedef enum { SC_VARINT, SC_F32, SC_F64 } ScalarKind;

/* Calls put(k, bits) for each element of repeated field num of msg, where
 * elements may come packed (one or more length-delimited runs) or one per
 * field. Returns the element count or -1; at most `cap` elements. */
typedef void (*PutFn)(void *ud, int64_t k, uint64_t bits);

static int64_t pb_repeated(PbCtx *c, PbSpan msg, uint32_t num, ScalarKind sk, int64_t cap, PutFn put, void *ud,
                           const char *what)
{
    int scalar_wt = sk == SC_VARINT ? WT_VARINT : sk == SC_F32 ? WT_I32 : WT_I64;
    PbIter it = pb_iter(msg);
    PbField f;
    int r;
    int64_t k = 0;
    while ((r = pb_next(c, &it, &f)) > 0) {
        if (f.num != num) continue;
        if (f.wt == scalar_wt) {
            if (k >= cap) return pb_err(c, f.at, "%s holds more than the %lld elements expected", what, (long long)cap);
            if (put) put(ud, k, f.v);
            k++;
        } else if (f.wt == WT_LEN) {
            const uint8_t *p = f.b.p, *end = f.b.p + f.b.n;
            size_t w = sk == SC_F32 ? 4 : sk == SC_F64 ? 8 : 0;
            if (w && f.b.n % w) return pb_err(c, f.at, "packed %s: %zu bytes is not a multiple of %zu", what, f.b.n, w);
            while (p < end) {
                uint64_t v = 0;
                if (w) {
                    for (size_t i = 0; i < w; i++) v |= (uint64_t)p[i] << (8 * i);
                    p += w;
                } else if (rd_varint(c, &p, end, &v)) {
                    return -1;
                }
                if (k >= cap) return pb_err(c, f.at, "%s holds more than the %lld elements expected", what, (long long)cap);
                if (put) put(ud, k, v);
                k++;
            }
        } else {
            return pb_err(c, f.at, "%s (field %u) has wire type %s", what, num, wt_name(f.wt));
        }
    }
    return r < 0 ? -1 : k;
}

static void put_i64(void *ud, int64_t k, uint64_t bits) { ((int64_t *)ud)[k] = (int64_t)bits; }
static void put_f32_as_f64(void *ud, int64_t k, uint64_t bits)
{
    uint32_t b = (uint32_t)bits;
    float x;
    memcpy(&x, &b, 4);
    ((double *)ud)[k] = x;
}

/* ---- messages ---- */

static int dec_tensor(PbCtx *c, PbSpan msg, OnnxTensor *t);
static int dec_graph(PbCtx *c, PbSpan msg, OnnxGraph *g);

static int dec_entry(PbCtx *c, PbSpan msg, const char **key, const char **val)
{
    PbIter it = pb_iter(msg);
    PbField f;
    int r;
    *key = *val = "";
    while ((r = pb_next(c, &it, &f)) > 0) {
        if (f.num == 1 && rd_string(c, &f, "StringStringEntryProto", "key", key)) return -1;
        if (f.num == 2 && rd_string(c, &f, "StringStringEntryProto", "value", val)) return -1;
    }
    return r;
}

/* Parses a decimal int64 of external_data; -1 when not a plain number. */
static int parse_i64(const char *s, int64_t *out)
{
    if (!*s) return -1;
    int64_t v = 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (INT64_MAX - 9) / 10) return -1;
        v = v * 10 + (*s - '0');
    }
    *out = v;
    return 0;
}

static int dec_tensor(PbCtx *c, PbSpan msg, OnnxTensor *t)
{
    memset(t, 0, sizeof *t);
    t->name = "";
    t->msg = msg;
    t->ext_offset = t->ext_length = -1;
    PbIter it = pb_iter(msg);
    PbField f;
    int r;
    while ((r = pb_next(c, &it, &f)) > 0) {
        switch (f.num) {
        case 1: { /* dims: repeated int64, packed or not */
            if (f.wt == WT_VARINT) {
                if (t->n_dims >= IR_MAX_RANK) return pb_err(c, f.at, "tensor has more than %d dims", IR_MAX_RANK);
                t->dims[t->n_dims++] = (int64_t)f.v;
            } else if (f.wt == WT_LEN) {
                const uint8_t *p = f.b.p, *end = f.b.p + f.b.n;
                while (p < end) {
                    uint64_t v = 0;
                    if (rd_varint(c, &p, end, &v)) return -1;
                    if (t->n_dims >= IR_MAX_RANK) return pb_err(c, f.at, "tensor has more than %d dims", IR_MAX_RANK);
                    t->dims[t->n_dims++] = (int64_t)v;
                }
            } else {
                return want_wt(c, &f, WT_VARINT, "TensorProto", "dims");
            }
            break;
        }
        case 2:
            if (want_wt(c, &f, WT_VARINT, "TensorProto", "data_type")) return -1;
            t->data_type = (int32_t)f.v;
            break;
        case 6: t->has_string_data = 1; break;
        case 8:
            if (rd_string(c, &f, "TensorProto", "name", &t->name)) return -1;
            break;
        case 9:
            if (want_wt(c, &f, WT_LEN, "TensorProto", "raw_data")) return -1;
            t->has_raw = 1;
            t->raw = f.b;
            break;
        case 13: {
            const char *k, *v;
            if (want_wt(c, &f, WT_LEN, "TensorProto", "external_data") || dec_entry(c, f.b, &k, &v)) return -1;
            if (strcmp(k, "location") == 0) t->ext_location = v;
            else if (strcmp(k, "offset") == 0 && parse_i64(v, &t->ext_offset))
                return pb_err(c, f.at, "tensor '%s': external_data offset '%s' is not a non-negative integer", t->name, v);
            else if (strcmp(k, "length") == 0 && parse_i64(v, &t->ext_length))
                return pb_err(c, f.at, "tensor '%s': external_data length '%s' is not a non-negative integer", t->name, v);
            break;
        }
        case 14:
            if (want_wt(c, &f, WT_VARINT, "TensorProto", "data_location")) return -1;
            if (f.v > 1) return pb_err(c, f.at, "tensor '%s': unknown data_location %llu", t->name, (unsigned long long)f.v);
            t->external = f.v == 1;
            break;
        case 4: case 5: case 7: case 10: case 11:
            break; /* typed data: decoded on demand (wire types checked there) */
        default:
            break;
        }
    }
    return r;
}

static int dec_attr(PbCtx *c, PbSpan msg, OnnxAttr *a)
{
    memset(a, 0, sizeof *a);
    a->name = "";
    int has_f = 0, has_i = 0, has_s = 0, has_t = 0, n_f = 0, n_i = 0, n_s = 0, has_g = 0;
    PbIter it = pb_iter(msg);
    PbField f;
    int r;
    while ((r = pb_next(c, &it, &f)) > 0) {
        switch (f.num) {
        case 1:
            if (rd_string(c, &f, "AttributeProto", "name", &a->name)) return -1;
            break;
        case 2: {
            if (want_wt(c, &f, WT_I32, "AttributeProto", "f")) return -1;
            put_f32_as_f64(&a->f, 0, f.v);
            has_f = 1;
            break;
        }
        case 3:
            if (want_wt(c, &f, WT_VARINT, "AttributeProto", "i")) return -1;
            a->i = (int64_t)f.v;
            has_i = 1;
            break;
        case 4:
            /* bytes: may hold anything but NUL for our uses */
            if (rd_text(c, &f, "AttributeProto", "s", &a->s, 0)) return -1;
            has_s = 1;
            break;
        case 5:
            if (want_wt(c, &f, WT_LEN, "AttributeProto", "t") || dec_tensor(c, f.b, &a->t)) return -1;
            has_t = 1;
            break;
        case 6:
            if (want_wt(c, &f, WT_LEN, "AttributeProto", "g")) return -1;
            if (6 + c->depth + 3 > ONNX_MAX_DEPTH) /* Model..Entry is 6; a body adds 3 */
                return pb_err(c, f.at, "attribute '%s': subgraphs nested deeper than %d messages", a->name, ONNX_MAX_DEPTH);
            a->g = arena_alloc(c->arena, sizeof *a->g);
            c->depth += 3;
            if (dec_graph(c, f.b, a->g)) return -1;
            c->depth -= 3;
            has_g = 1;
            break;
        case 11: has_g = 2; break;
        case 7: n_f = 1; break;
        case 8: n_i = 1; break;
        case 9: n_s = 1; break;
        case 20:
            if (want_wt(c, &f, WT_VARINT, "AttributeProto", "type")) return -1;
            a->type = (int)f.v;
            break;
        default:
            break;
        }
    }
    if (r < 0) return -1;
    if (has_g == 2 || a->type == 10 /* GRAPHS */) {
        a->type = 10;
        return 0; /* refused by the importer, which names the node */
    }
    if (has_g || a->type == ONNX_ATTR_GRAPH) {
        if (!a->g) return pb_err(c, msg.p, "attribute '%s' has type GRAPH but no graph", a->name);
        a->type = ONNX_ATTR_GRAPH;
        return 0;
    }
    if (a->type == ONNX_ATTR_UNDEFINED) /* old writers: infer from the fields set */
        a->type = has_f ? ONNX_ATTR_FLOAT : has_i ? ONNX_ATTR_INT : has_s ? ONNX_ATTR_STRING
                : has_t ? ONNX_ATTR_TENSOR : n_f ? ONNX_ATTR_FLOATS : n_i ? ONNX_ATTR_INTS
                : n_s ? ONNX_ATTR_STRINGS : ONNX_ATTR_UNDEFINED;
    if (a->type == ONNX_ATTR_INTS) {
        int64_t k = pb_repeated(c, msg, 8, SC_VARINT, ONNX_MAX_LIST, NULL, NULL, "AttributeProto.ints");
        if (k < 0) return -1;
        a->ints = arena_alloc(c->arena, sizeof(int64_t) * (size_t)(k + 1));
        a->n = (int)k;
        if (pb_repeated(c, msg, 8, SC_VARINT, k, put_i64, a->ints, "AttributeProto.ints") < 0) return -1;
    } else if (a->type == ONNX_ATTR_FLOATS) {
        int64_t k = pb_repeated(c, msg, 7, SC_F32, ONNX_MAX_LIST, NULL, NULL, "AttributeProto.floats");
        if (k < 0) return -1;
        a->floats = arena_alloc(c->arena, sizeof(double) * (size_t)(k + 1));
        a->n = (int)k;
        if (pb_repeated(c, msg, 7, SC_F32, k, put_f32_as_f64, a->floats, "AttributeProto.floats") < 0) return -1;
    } else if (a->type == ONNX_ATTR_STRING && !has_s) {
        a->s = "";
    }
    return 0;
}

/* Decodes the repeated string field `num` of msg into a fresh array. */
static int dec_strings(PbCtx *c, PbSpan msg, uint32_t num, const char *field, const char ***out, int *n)
{
    if (pb_count(c, msg, num, n)) return -1;
    const char **arr = arena_alloc(c->arena, sizeof(char *) * (size_t)(*n + 1));
    PbIter it = pb_iter(msg);
    PbField f;
    int r, k = 0;
    while ((r = pb_next(c, &it, &f)) > 0)
        if (f.num == num && rd_string(c, &f, "NodeProto", field, &arr[k++])) return -1;
    *out = arr;
    return r;
}

static int dec_node(PbCtx *c, PbSpan msg, OnnxNode *nd)
{
    memset(nd, 0, sizeof *nd);
    nd->name = nd->op_type = nd->domain = "";
    if (dec_strings(c, msg, 1, "input", &nd->in, &nd->n_in)) return -1;
    if (dec_strings(c, msg, 2, "output", &nd->out, &nd->n_out)) return -1;
    if (pb_count(c, msg, 5, &nd->n_attrs)) return -1;
    nd->attrs = arena_alloc(c->arena, sizeof(OnnxAttr) * (size_t)(nd->n_attrs + 1));
    PbIter it = pb_iter(msg);
    PbField f;
    int r, k = 0;
    while ((r = pb_next(c, &it, &f)) > 0) {
        if (f.num == 3 && rd_string(c, &f, "NodeProto", "name", &nd->name)) return -1;
        if (f.num == 4 && rd_string(c, &f, "NodeProto", "op_type", &nd->op_type)) return -1;
        if (f.num == 7 && rd_string(c, &f, "NodeProto", "domain", &nd->domain)) return -1;
        if (f.num == 5 && (want_wt(c, &f, WT_LEN, "NodeProto", "attribute") || dec_attr(c, f.b, &nd->attrs[k++])))
            return -1;
    }
    return r;
}

static int dec_shape(PbCtx *c, PbSpan msg, OnnxValueInfo *vi)
{
    PbIter it = pb_iter(msg);
    PbField f;
    int r;
    vi->has_shape = 1;
    while ((r = pb_next(c, &it, &f)) > 0) {
        if (f.num != 1) continue;
        if (want_wt(c, &f, WT_LEN, "TensorShapeProto", "dim")) return -1;
        if (vi->rank >= IR_MAX_RANK) return pb_err(c, f.at, "value '%s' has more than %d dims", vi->name, IR_MAX_RANK);
        OnnxDim *d = &vi->dims[vi->rank++];
        PbIter di = pb_iter(f.b);
        PbField g;
        int r2;
        while ((r2 = pb_next(c, &di, &g)) > 0) {
            if (g.num == 1) {
                if (want_wt(c, &g, WT_VARINT, "Dimension", "dim_value")) return -1;
                d->kind = 1;
                d->value = (int64_t)g.v;
            } else if (g.num == 2) {
                if (rd_string(c, &g, "Dimension", "dim_param", &d->param)) return -1;
                d->kind = 2;
            }
        }
        if (r2 < 0) return -1;
    }
    return r;
}

static int dec_value_info(PbCtx *c, PbSpan msg, OnnxValueInfo *vi)
{
    memset(vi, 0, sizeof *vi);
    vi->name = "";
    PbIter it = pb_iter(msg);
    PbField f;
    int r;
    while ((r = pb_next(c, &it, &f)) > 0) {
        if (f.num == 1 && rd_string(c, &f, "ValueInfoProto", "name", &vi->name)) return -1;
        if (f.num != 2) continue;
        if (want_wt(c, &f, WT_LEN, "ValueInfoProto", "type")) return -1;
        PbIter ti = pb_iter(f.b);
        PbField g;
        int r2;
        while ((r2 = pb_next(c, &ti, &g)) > 0) {
            if (g.num != 1) continue; /* sequence/map/optional types: left unset */
            if (want_wt(c, &g, WT_LEN, "TypeProto", "tensor_type")) return -1;
            vi->has_tensor_type = 1;
            PbIter tt = pb_iter(g.b);
            PbField h;
            int r3;
            while ((r3 = pb_next(c, &tt, &h)) > 0) {
                if (h.num == 1) {
                    if (want_wt(c, &h, WT_VARINT, "TypeProto.Tensor", "elem_type")) return -1;
                    vi->elem_type = (int32_t)h.v;
                } else if (h.num == 2) {
                    if (want_wt(c, &h, WT_LEN, "TypeProto.Tensor", "shape") || dec_shape(c, h.b, vi)) return -1;
                }
            }
            if (r3 < 0) return -1;
        }
        if (r2 < 0) return -1;
    }
    return r;
}

static int dec_graph(PbCtx *c, PbSpan msg, OnnxGraph *g)
{
    memset(g, 0, sizeof *g);
    g->name = "";
    PbIter it = pb_iter(msg);
    PbField f;
    int r;
    while ((r = pb_next(c, &it, &f)) > 0) { /* count first */
        int *cnt = f.num == 1 ? &g->n_nodes : f.num == 5 ? &g->n_inits : f.num == 11 ? &g->n_inputs
                 : f.num == 12 ? &g->n_outputs : NULL;
        if (f.num == 15) return pb_err(c, f.at, "sparse initializers are not supported");
        if (cnt && ++*cnt > ONNX_MAX_LIST) return pb_err(c, f.at, "more than %d entries of GraphProto field %u", ONNX_MAX_LIST, f.num);
    }
    if (r < 0) return -1;
    g->nodes = arena_alloc(c->arena, sizeof(OnnxNode) * (size_t)(g->n_nodes + 1));
    g->inits = arena_alloc(c->arena, sizeof(OnnxTensor) * (size_t)(g->n_inits + 1));
    g->inputs = arena_alloc(c->arena, sizeof(OnnxValueInfo) * (size_t)(g->n_inputs + 1));
    g->outputs = arena_alloc(c->arena, sizeof(OnnxValueInfo) * (size_t)(g->n_outputs + 1));
    int kn = 0, ki = 0, kin = 0, kout = 0;
    it = pb_iter(msg);
    while ((r = pb_next(c, &it, &f)) > 0) {
        switch (f.num) {
        case 1:
            if (want_wt(c, &f, WT_LEN, "GraphProto", "node") || dec_node(c, f.b, &g->nodes[kn++])) return -1;
            break;
        case 2:
            if (rd_string(c, &f, "GraphProto", "name", &g->name)) return -1;
            break;
        case 5:
            if (want_wt(c, &f, WT_LEN, "GraphProto", "initializer") || dec_tensor(c, f.b, &g->inits[ki++])) return -1;
            break;
        case 11:
            if (want_wt(c, &f, WT_LEN, "GraphProto", "input") || dec_value_info(c, f.b, &g->inputs[kin++])) return -1;
            break;
        case 12:
            if (want_wt(c, &f, WT_LEN, "GraphProto", "output") || dec_value_info(c, f.b, &g->outputs[kout++])) return -1;
            break;
        default:
            break; /* value_info (13), doc_string, quantization annotations */
        }
    }
    return r;
}

int onnx_pb_model(PbCtx *c, const uint8_t *buf, size_t n, OnnxModel *m)
{
    memset(m, 0, sizeof *m);
    if (n > ONNX_MAX_FILE_BYTES) return pb_err(c, buf, "file is larger than protobuf's 2 GiB limit");
    PbSpan msg = {buf, n};
    if (pb_count(c, msg, 8, &m->n_opsets)) return -1;
    m->opsets = arena_alloc(c->arena, sizeof(OnnxOpset) * (size_t)(m->n_opsets + 1));
    PbIter it = pb_iter(msg);
    PbField f;
    int r, k = 0;
    while ((r = pb_next(c, &it, &f)) > 0) {
        if (f.num == 1) {
            if (want_wt(c, &f, WT_VARINT, "ModelProto", "ir_version")) return -1;
            m->ir_version = (int64_t)f.v;
        } else if (f.num == 8) {
            if (want_wt(c, &f, WT_LEN, "ModelProto", "opset_import")) return -1;
            OnnxOpset *o = &m->opsets[k++];
            o->domain = "";
            PbIter oi = pb_iter(f.b);
            PbField g;
            int r2;
            while ((r2 = pb_next(c, &oi, &g)) > 0) {
                if (g.num == 1 && rd_string(c, &g, "OperatorSetIdProto", "domain", &o->domain)) return -1;
                if (g.num == 2) {
                    if (want_wt(c, &g, WT_VARINT, "OperatorSetIdProto", "version")) return -1;
                    o->version = (int64_t)g.v;
                }
            }
            if (r2 < 0) return -1;
        } else if (f.num == 7) {
            if (want_wt(c, &f, WT_LEN, "ModelProto", "graph") || dec_graph(c, f.b, &m->graph)) return -1;
            m->has_graph = 1;
        }
    }
    return r;
}

int onnx_pb_numel(PbCtx *c, const OnnxTensor *t, int64_t *numel)
{
    int64_t n = 1;
    for (int i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0) return pb_err(c, t->msg.p, "tensor '%s' dim %d is negative (%lld)", t->name, i, (long long)t->dims[i]);
        if (ir_mul_ok(n, t->dims[i], &n) || n > ONNX_MAX_ELEMS)
            return pb_err(c, t->msg.p, "tensor '%s' element count overflows the limit of %lld", t->name,
                          (long long)ONNX_MAX_ELEMS);
    }
    *numel = n;
    return 0;
}

typedef struct PutCtx {
    DType dt;
    uint8_t *out;
} PutCtx;

/* Stores one typed-field element (bits as read from the wire) as dtype dt. */
static void put_typed(void *ud, int64_t k, uint64_t bits)
{
    PutCtx *p = ud;
    size_t i = (size_t)k;
    switch (p->dt) {
    case DT_F32: { uint32_t b = (uint32_t)bits; memcpy(p->out + 4 * i, &b, 4); break; }
    case DT_F64: memcpy(p->out + 8 * i, &bits, 8); break;
    case DT_F16:
    case DT_BF16: { uint16_t b = (uint16_t)bits; memcpy(p->out + 2 * i, &b, 2); break; }
    case DT_I8: p->out[i] = (uint8_t)(int8_t)(int32_t)bits; break;
    case DT_U8: p->out[i] = (uint8_t)bits; break;
    case DT_BOOL: p->out[i] = (uint32_t)bits != 0; break;
    case DT_I16: { int16_t v = (int16_t)(int32_t)bits; memcpy(p->out + 2 * i, &v, 2); break; }
    case DT_I32: { int32_t v = (int32_t)bits; memcpy(p->out + 4 * i, &v, 4); break; }
    case DT_I64: memcpy(p->out + 8 * i, &bits, 8); break;
    case DT_U16: { uint16_t v = (uint16_t)bits; memcpy(p->out + 2 * i, &v, 2); break; }
    case DT_U32: { uint32_t v = (uint32_t)bits; memcpy(p->out + 4 * i, &v, 4); break; }
    case DT_U64: memcpy(p->out + 8 * i, &bits, 8); break;
    default: break;
    }
}

int onnx_pb_typed_data(PbCtx *c, const OnnxTensor *t, DType dt, int64_t numel, void *out)
{
    uint32_t field;
    ScalarKind sk;
    const char *what;
    if (dt == DT_F32) { field = 4; sk = SC_F32; what = "float_data"; }
    else if (dt == DT_F64) { field = 10; sk = SC_F64; what = "double_data"; }
    else if (dt == DT_I64) { field = 7; sk = SC_VARINT; what = "int64_data"; }
    else if (dt == DT_U32 || dt == DT_U64) { field = 11; sk = SC_VARINT; what = "uint64_data"; }
    else { field = 5; sk = SC_VARINT; what = "int32_data"; }
    PutCtx pc = {dt, out};
    int64_t k = pb_repeated(c, t->msg, field, sk, numel, out ? put_typed : NULL, &pc, what);
    if (k < 0) return -1;
    if (k != numel)
        return pb_err(c, t->msg.p, "tensor '%s' declares %lld elements but %s holds %lld", t->name, (long long)numel,
                      what, (long long)k);
    return 0;
}
