/* text.c — graphc's text IR: the printer and the parser (spec in
 * docs/text-ir.md).
 *
 * The printer writes what the parser reads, and the pair is a fixed point:
 * print(parse(print(g))) == print(g), byte for byte. Three choices make that
 * hold. (1) Everything is printed in a canonical form: inputs, constants,
 * nodes in stored order, outputs; names quoted exactly when they contain a
 * character outside [A-Za-z0-9_.$/-]; attributes only when set and different
 * from the op's default, in schema order. (2) Numbers are printed as the
 * shortest "%.Ng" text that reads back to the same bytes; a constant element
 * with no such text (a NaN with a payload, a bool byte other than 0/1) makes
 * the whole constant print as hex"..." raw bytes, which are always exact.
 * (3) The parser stores types given on node outputs, so a dump taken after
 * shape inference reads back with the same types.
 *
 * The parser is line based: one statement per line, `#` starts a comment
 * (so `#!` test directives are comments), whitespace between tokens is free.
 * It builds the graph through the IR API (ir_add_input, ir_add_const,
 * ir_add_node, ir_set_attr) and checks only what the text itself can get
 * wrong — syntax, dtypes, element counts, names defined before use and
 * defined once. Structural rules of ops (input counts, required attributes)
 * are left to ir_verify and shape inference, which name the node. Every
 * error is "FILE:LINE:COL: message"; the partial graph is freed.
 */
#include "text.h"
#include "op.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Constants with at most this many elements print as decimal lists. */
#define TEXT_LIST_MAX 64
/* random() refuses to materialize more than this many bytes. */
#define TEXT_RANDOM_MAX_BYTES ((int64_t)1 << 30)

/* ---- shared lexical helpers ---------------------------------------------- */

static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int is_name_char(int c)
{
    return is_alpha(c) || is_digit(c) || c == '_' || c == '.' || c == '$' || c == '/' || c == '-';
}
static int hex_val(int c)
{
    if (is_digit(c)) return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static const char *attr_kind_name(AttrKind k)
{
    static const char *names[] = {"int", "float", "string", "ints", "floats", "tensor"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* ---- printer -------------------------------------------------------------- */

static void print_quoted(Writer *w, const char *s)
{
    char buf[8];
    w_puts(w, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"') w_puts(w, "\\\"");
        else if (*p == '\\') w_puts(w, "\\\\");
        else if (*p == '\n') w_puts(w, "\\n");
        else if (*p == '\t') w_puts(w, "\\t");
        else if (*p < 0x20 || *p == 0x7f) {
            snprintf(buf, sizeof buf, "\\x%02x", *p);
            w_puts(w, buf);
        } else {
            buf[0] = (char)*p;
            buf[1] = 0;
            w_puts(w, buf);
        }
    }
    w_puts(w, "\"");
}

/* A node or graph name: bare when every character is a name character. */
static void print_name(Writer *w, const char *s)
{
    int bare = *s != 0;
    for (const char *p = s; *p && bare; p++) bare = is_name_char((unsigned char)*p);
    if (bare) w_puts(w, s);
    else print_quoted(w, s);
}

static void print_value_name(Writer *w, const Value *v)
{
    w_puts(w, "%");
    print_name(w, v->name);
}

/* f32[1,T<=64,128]: a symbolic dim as its symbol's name and bound. */
static void print_type(Writer *w, const Graph *g, DType t, const Shape *s)
{
    w_puts(w, ir_dtype_name(t));
    w_puts(w, "[");
    for (int i = 0; i < s->rank; i++) {
        if (i) w_puts(w, ",");
        if (s->sym[i] && ir_sym(g, s->sym[i])->kind == SYM_DATA) w_printf(w, "?%s<=", ir_sym(g, s->sym[i])->name);
        else if (s->sym[i]) w_printf(w, "%s<=", ir_sym(g, s->sym[i])->name);
        w_printf(w, "%lld", (long long)s->dims[i]);
    }
    w_puts(w, "]");
}

/* The shortest "%.Ng" text (N = 1..17, ties to the smaller N) of x that
 * reads back as the same element of dtype t (strtod, then rounding to t);
 * f64 keeps the sign of zero through strtod as well. */
static void fmt_float(DType t, double x, char *buf, size_t cap)
{
    if (isnan(x)) { snprintf(buf, cap, "nan"); return; }
    if (isinf(x)) { snprintf(buf, cap, x < 0 ? "-inf" : "inf"); return; }
    unsigned char want[8], back[8];
    size_t es = ir_dtype_size(t);
    char cand[40];
    ir_store_f64(t, want, 0, x);
    buf[0] = 0;
    for (int p = 1; p <= 17; p++) {
        snprintf(cand, sizeof cand, "%.*g", p, x);
        ir_store_f64(t, back, 0, strtod(cand, NULL));
        if (memcmp(back, want, es) == 0 && (!buf[0] || strlen(cand) < strlen(buf)))
            snprintf(buf, cap, "%s", cand);
    }
}

static void fmt_double(double x, char *buf, size_t cap) { fmt_float(DT_F64, x, buf, cap); }

/* Like fmt_double, but the text always reads as a float (has '.', 'e',
 * "inf" or "nan"), so attribute dumps show their kind. */
static void fmt_float_attr(double x, char *buf, size_t cap)
{
    fmt_double(x, buf, cap);
    if (!strpbrk(buf, ".en")) strncat(buf, ".0", cap - strlen(buf) - 1);
}

static int parse_elem(DType t, const char *tok, size_t len, unsigned char *out);

/* Writes element i of raw data of type t as a list literal that parses back
 * to the same bytes; returns -1 when no such literal exists. */
static int fmt_elem(DType t, const unsigned char *data, size_t i, char *buf, size_t cap)
{
    size_t es = ir_dtype_size(t);
    const unsigned char *src = data + i * es;
    unsigned char back[8];
    if (t == DT_I64) {
        int64_t v;
        memcpy(&v, src, 8);
        snprintf(buf, cap, "%lld", (long long)v);
    } else if (t == DT_U64) {
        uint64_t v;
        memcpy(&v, src, 8);
        snprintf(buf, cap, "%llu", (unsigned long long)v);
    } else if (t == DT_BOOL) {
        snprintf(buf, cap, "%s", *src ? "true" : "false");
    } else if (ir_dtype_is_int(t)) {
        snprintf(buf, cap, "%lld", (long long)ir_load_f64(t, data, i));
    } else {
        fmt_float(t, ir_load_f64(t, data, i), buf, cap);
    }
    if (parse_elem(t, buf, strlen(buf), back) != 0) return -1;
    return memcmp(back, src, es) == 0 ? 0 : -1;
}

static void print_hex(Writer *w, const unsigned char *data, size_t nbytes)
{
    static const char digits[] = "0123456789abcdef";
    char chunk[1025];
    size_t k = 0;
    w_puts(w, "hex\"");
    for (size_t i = 0; i < nbytes; i++) {
        chunk[k++] = digits[data[i] >> 4];
        chunk[k++] = digits[data[i] & 15];
        if (k == 1024) {
            chunk[k] = 0;
            w_puts(w, chunk);
            k = 0;
        }
    }
    chunk[k] = 0;
    w_puts(w, chunk);
    w_puts(w, "\"");
}

/* Constant data: a decimal list (<= 64 elements, exact), hex"..." or, with
 * elide, `<elided N bytes>` for larger ones. */
static void print_data(Writer *w, DType t, const Shape *s, const void *data, size_t nbytes, int elide)
{
    int64_t n = ir_numel(s);
    GC_ASSERT((size_t)n * ir_dtype_size(t) == nbytes);
    const unsigned char *bytes = data;
    if (n > TEXT_LIST_MAX) {
        if (elide) w_printf(w, "<elided %zu bytes>", nbytes);
        else print_hex(w, bytes, nbytes);
        return;
    }
    char txt[TEXT_LIST_MAX][40];
    for (int64_t i = 0; i < n; i++)
        if (fmt_elem(t, bytes, (size_t)i, txt[i], sizeof txt[i]) != 0) {
            print_hex(w, bytes, nbytes);
            return;
        }
    w_puts(w, "[");
    for (int64_t i = 0; i < n; i++) {
        if (i) w_puts(w, ", ");
        w_puts(w, txt[i]);
    }
    w_puts(w, "]");
}

static int same_double(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return a == b && !signbit(a) == !signbit(b);
}

/* Whether attribute value a equals the default d (tensors never do). */
static int attr_is_default(AttrKind k, const AttrVal *a, const AttrVal *d)
{
    if (!d->set) return 0;
    switch (k) {
    case ATTR_INT: return a->i == d->i;
    case ATTR_FLOAT: return same_double(a->f, d->f);
    case ATTR_STRING: return a->s && d->s && strcmp(a->s, d->s) == 0;
    case ATTR_INTS:
        if (a->n != d->n) return 0;
        for (int i = 0; i < a->n; i++)
            if (a->ints[i] != d->ints[i]) return 0;
        return 1;
    case ATTR_FLOATS:
        if (a->n != d->n) return 0;
        for (int i = 0; i < a->n; i++)
            if (!same_double(a->floats[i], d->floats[i])) return 0;
        return 1;
    case ATTR_TENSOR: return 0;
    }
    return 0;
}

static void print_attr_value(Writer *w, AttrKind k, const AttrVal *a, int elide)
{
    char buf[64];
    switch (k) {
    case ATTR_INT: w_printf(w, "%lld", (long long)a->i); break;
    case ATTR_FLOAT: fmt_float_attr(a->f, buf, sizeof buf); w_puts(w, buf); break;
    case ATTR_STRING: print_quoted(w, a->s ? a->s : ""); break;
    case ATTR_INTS:
    case ATTR_FLOATS:
        w_puts(w, "[");
        for (int i = 0; i < a->n; i++) {
            if (i) w_puts(w, ",");
            if (k == ATTR_INTS) {
                w_printf(w, "%lld", (long long)a->ints[i]);
            } else {
                fmt_float_attr(a->floats[i], buf, sizeof buf);
                w_puts(w, buf);
            }
        }
        w_puts(w, "]");
        break;
    case ATTR_TENSOR:
        print_type(w, NULL, a->t.dtype, &a->t.shape);
        w_puts(w, " ");
        print_data(w, a->t.dtype, &a->t.shape, a->t.data, a->t.nbytes, elide);
        break;
    }
}

/* Prints `{k=v, ...}` for the attributes of n that differ from the defaults
 * held by `def` (a node of the same op with nothing set). */
static void print_attrs(Writer *w, const Node *n, const Node *def, int elide)
{
    const OpDesc *od = ir_op(n->op);
    int first = 1;
    for (int k = 0; k < od->n_attrs; k++) {
        const AttrVal *a = &n->attrs[k];
        if (!a->set || attr_is_default(od->attrs[k].kind, a, &def->attrs[k])) continue;
        w_puts(w, first ? " {" : ", ");
        first = 0;
        w_puts(w, od->attrs[k].name);
        w_puts(w, "=");
        print_attr_value(w, od->attrs[k].kind, a, elide);
    }
    if (!first) w_puts(w, "}");
}

static void print_out_value(Writer *w, const Graph *g, const Value *v)
{
    print_value_name(w, v);
    if (v->shape_known && v->dtype != DT_UNDEF) {
        w_puts(w, ": ");
        print_type(w, g, v->dtype, &v->shape);
    }
}

void ir_print(const Graph *g, Writer *w, int elide)
{
    /* Scratch nodes hold each op's defaults, for "differs from default". */
    Graph *scratch = ir_graph_new("defaults");
    Node **defs = calloc((size_t)ir_op_count(), sizeof *defs);
    GC_ASSERT(defs);

    w_puts(w, "graph ");
    print_name(w, g->name);
    w_puts(w, " {\n");
    for (int i = 0; i < g->n_inputs; i++) {
        const Value *v = g->inputs[i];
        w_puts(w, "  input ");
        print_value_name(w, v);
        w_puts(w, ": ");
        print_type(w, g, v->dtype, &v->shape);
        w_puts(w, "\n");
    }
    for (int i = 0; i < g->n_values; i++) {
        const Value *v = g->values[i];
        if (v->kind != VK_CONST && v->kind != VK_STATE) continue;
        w_puts(w, v->kind == VK_STATE ? "  state " : "  const ");
        print_value_name(w, v);
        w_puts(w, ": ");
        print_type(w, g, v->dtype, &v->shape);
        w_puts(w, " = ");
        print_data(w, v->dtype, &v->shape, v->data, v->nbytes, elide);
        w_puts(w, "\n");
    }
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        const OpDesc *od = ir_op(n->op);
        w_puts(w, "  ");
        /* the prefix is left out when it is what ir_add_node would pick */
        if (strcmp(n->name, n->n_out ? n->out[0]->name : od->name) != 0) {
            print_name(w, n->name);
            w_puts(w, ": ");
        }
        for (int j = 0; j < n->n_out; j++) {
            if (j) w_puts(w, ", ");
            print_out_value(w, g, n->out[j]);
        }
        if (n->n_out) w_puts(w, " = ");
        w_puts(w, od->name);
        w_puts(w, "(");
        for (int j = 0; j < n->n_in; j++) {
            if (j) w_puts(w, ", ");
            if (n->in[j]) print_value_name(w, n->in[j]);
            else w_puts(w, "_");
        }
        w_puts(w, ")");
        if (od->n_attrs) {
            if (!defs[n->op]) defs[n->op] = ir_add_node(scratch, n->op, "defaults", NULL, 0, 0, NULL);
            print_attrs(w, n, defs[n->op], elide);
        }
        char note[512];
        if (g->kernel_note && g->kernel_note(g, n, note, sizeof note) > 0) {
            w_puts(w, "  # kernel: ");
            w_puts(w, note);
        }
        w_puts(w, "\n");
    }
    for (int i = 0; i < g->n_updates; i++) {
        w_puts(w, "  update ");
        print_value_name(w, g->updates[i].state);
        w_puts(w, " <- ");
        print_value_name(w, g->updates[i].value);
        w_puts(w, "\n");
    }
    for (int i = 0; i < g->n_outputs; i++) {
        w_puts(w, "  output ");
        print_value_name(w, g->outputs[i]);
        w_puts(w, "\n");
    }
    w_puts(w, "}\n");
    free(defs);
    ir_graph_free(scratch);
}

/* ---- parser: state and errors --------------------------------------------- */

typedef struct Parser {
    const char *src, *end, *p;
    const char *line_start;
    int line;
    const char *file;
    Diag *d;
    Graph *g;
    char *buf; /* scratch for decoded quoted strings */
    size_t buf_len, buf_cap;
} Parser;

/* Reports "FILE:LINE:COL: message" with COL the byte column of `at`. */
static int perr(Parser *ps, const char *at, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int perr(Parser *ps, const char *at, const char *fmt, ...)
{
    if (!ps->d) return -1;
    char msg[1800];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const char *saved = ps->d->file;
    ps->d->file = NULL;
    diag_error(ps->d, "%s:%d:%d: %s", ps->file, ps->line, (int)(at - ps->line_start) + 1, msg);
    ps->d->file = saved;
    return -1;
}

/* Describes the character at p for "unexpected ..." messages. */
static const char *char_desc(Parser *ps, const char *p, char *buf, size_t cap)
{
    if (p >= ps->end || *p == '\n') return "end of line";
    if (*p == '#') return "a comment";
    unsigned char c = (unsigned char)*p;
    if (c >= 0x20 && c < 0x7f) snprintf(buf, cap, "'%c'", c);
    else snprintf(buf, cap, "byte 0x%02x", c);
    return buf;
}

static void skip_ws(Parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r')) ps->p++;
}

static int at_eol(Parser *ps)
{
    skip_ws(ps);
    return ps->p >= ps->end || *ps->p == '\n' || *ps->p == '#';
}

static int peek(Parser *ps)
{
    skip_ws(ps);
    return ps->p < ps->end ? (unsigned char)*ps->p : -1;
}

static int expect(Parser *ps, char c, const char *what)
{
    char buf[16];
    if (peek(ps) != (unsigned char)c)
        return perr(ps, ps->p, "expected %s, found %s", what, char_desc(ps, ps->p, buf, sizeof buf));
    ps->p++;
    return 0;
}

static void buf_put(Parser *ps, char c)
{
    if (ps->buf_len + 2 > ps->buf_cap) {
        size_t nc = ps->buf_cap ? ps->buf_cap * 2 : 256;
        char *nb = realloc(ps->buf, nc);
        GC_ASSERT(nb);
        ps->buf = nb;
        ps->buf_cap = nc;
    }
    ps->buf[ps->buf_len++] = c;
    ps->buf[ps->buf_len] = 0;
}

/* Decodes the quoted string at ps->p (on its '"') into ps->buf. */
static int read_quoted(Parser *ps)
{
    const char *open = ps->p++;
    ps->buf_len = 0;
    buf_put(ps, 0);
    ps->buf_len = 0;
    for (;;) {
        if (ps->p >= ps->end || *ps->p == '\n') return perr(ps, open, "unterminated quoted string");
        char c = *ps->p;
        if (c == '"') { ps->p++; return 0; }
        if (c != '\\') {
            if (c == 0) return perr(ps, ps->p, "NUL byte in quoted string");
            buf_put(ps, c);
            ps->p++;
            continue;
        }
        const char *esc = ps->p++;
        char e = ps->p < ps->end ? *ps->p : 0;
        if (e == '"' || e == '\\') buf_put(ps, e);
        else if (e == 'n') buf_put(ps, '\n');
        else if (e == 't') buf_put(ps, '\t');
        else if (e == 'x') {
            int h = ps->p + 2 < ps->end ? hex_val((unsigned char)ps->p[1]) : -1;
            int l = ps->p + 2 < ps->end ? hex_val((unsigned char)ps->p[2]) : -1;
            if (h < 0 || l < 0) return perr(ps, esc, "escape \\x needs two hex digits");
            if (h == 0 && l == 0) return perr(ps, esc, "escape \\x00 is not allowed (names and strings cannot hold NUL)");
            buf_put(ps, (char)(h * 16 + l));
            ps->p += 2;
        } else if (e == '\n' || ps->p >= ps->end) {
            return perr(ps, open, "unterminated quoted string");
        } else {
            char b[16];
            return perr(ps, esc, "unknown escape '\\%s' (use \\\" \\\\ \\n \\t \\xHH)",
                        (unsigned char)e >= 0x20 && (unsigned char)e < 0x7f ? (snprintf(b, sizeof b, "%c", e), b) : "?");
        }
        ps->p++;
    }
}

/* Reads a bare or quoted name into ps->buf; `what` names it in errors. A
 * quoted name may be empty (graph and node names). */
static int read_name(Parser *ps, const char *what)
{
    char b[16];
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '"') return read_quoted(ps);
    const char *s = ps->p;
    while (ps->p < ps->end && is_name_char((unsigned char)*ps->p)) ps->p++;
    if (ps->p == s) return perr(ps, s, "expected %s, found %s", what, char_desc(ps, s, b, sizeof b));
    ps->buf_len = 0;
    for (const char *q = s; q < ps->p; q++) buf_put(ps, *q);
    return 0;
}

/* Reads `%name` (the '%' at ps->p after whitespace); returns an arena copy. */
static const char *read_value_name(Parser *ps, const char **at)
{
    if (peek(ps) != '%') {
        char b[16];
        perr(ps, ps->p, "expected a value name '%%...', found %s", char_desc(ps, ps->p, b, sizeof b));
        return NULL;
    }
    *at = ps->p++;
    if (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t')) {
        perr(ps, *at, "expected a name right after '%%'");
        return NULL;
    }
    if (read_name(ps, "a value name")) return NULL;
    if (ps->buf_len == 0) {
        perr(ps, *at, "value names must not be empty");
        return NULL;
    }
    return ir_strdup(ps->g, ps->buf);
}

/* The printed form of a value name ("%x", "%\"a b\"") for messages. */
static const char *value_ref(const char *name, char *buf, size_t cap)
{
    Writer w;
    w_init(&w);
    w_puts(&w, "%");
    print_name(&w, name);
    snprintf(buf, cap, "%s", w.buf);
    w_free(&w);
    return buf;
}

static Value *lookup_value(Parser *ps, const char *name, const char *at)
{
    Value *v = ir_find_value(ps->g, name);
    if (!v) {
        char b[300];
        perr(ps, at, "undefined value '%s'", value_ref(name, b, sizeof b));
    }
    return v;
}

static int check_new_value(Parser *ps, const char *name, const char *at)
{
    if (!ir_find_value(ps->g, name)) return 0;
    char b[300];
    return perr(ps, at, "value '%s' is already defined", value_ref(name, b, sizeof b));
}

/* ---- parser: types and constant data -------------------------------------- */

static int parse_type(Parser *ps, DType *t, Shape *s)
{
    skip_ws(ps);
    const char *at = ps->p;
    while (ps->p < ps->end && (is_alpha((unsigned char)*ps->p) || is_digit((unsigned char)*ps->p) || *ps->p == '_')) ps->p++;
    char name[32];
    size_t len = (size_t)(ps->p - at);
    if (len == 0) {
        char b[16];
        return perr(ps, at, "expected a type such as f32[2,3], found %s", char_desc(ps, at, b, sizeof b));
    }
    snprintf(name, sizeof name, "%.*s", (int)(len < 31 ? len : 31), at);
    if (len > 31 || ir_dtype_parse(name, t) != 0) return perr(ps, at, "unknown dtype '%.*s'", (int)len, at);
    if (expect(ps, '[', "'[' after the dtype")) return -1;
    memset(s, 0, sizeof *s);
    if (peek(ps) == ']') { ps->p++; return 0; }
    for (;;) {
        skip_ws(ps);
        const char *dat = ps->p;
        if (ps->p < ps->end && *ps->p == '-') return perr(ps, dat, "dimensions must not be negative");
        int32_t sym = 0;
        long long v;
        int data = ps->p < ps->end && *ps->p == '?';
        if (data || (ps->p < ps->end && (is_alpha((unsigned char)*ps->p) || *ps->p == '_'))) {
            /* a symbolic dim, NAME<=BOUND, or a data-dependent one, ?NAME<=BOUND:
             * shape inference makes the latter again (the node computes it at
             * run time); its bound stands in */
            if (data)
                while (ps->p < ps->end && *ps->p != '<' && *ps->p != ',' && *ps->p != ']' && ps->p - dat < 160) ps->p++;
            else
                while (ps->p < ps->end && (is_alpha((unsigned char)*ps->p) || is_digit((unsigned char)*ps->p) || *ps->p == '_'))
                    ps->p++;
            size_t nlen = (size_t)(ps->p - dat);
            const char *what = data ? "data-dependent dim" : "symbolic dim";
            if (!data && nlen > 63) return perr(ps, dat, "symbolic dim name is too long");
            if (ps->end - ps->p < 2 || ps->p[0] != '<' || ps->p[1] != '=')
                return perr(ps, ps->p, "expected '<=' and a bound after %s '%.*s'", what, (int)nlen, dat);
            ps->p += 2;
            char *e2;
            errno = 0;
            v = strtoll(ps->p, &e2, 10);
            if (e2 == ps->p || errno == ERANGE || v < (data ? 0 : 2))
                return perr(ps, ps->p, "the bound of %s '%.*s' must be an integer of at least %d", what, (int)nlen, dat,
                            data ? 0 : 2);
            if (!data) {
                char sname[64];
                snprintf(sname, sizeof sname, "%.*s", (int)nlen, dat);
                Diag sd = {0};
                sym = ir_sym_var(ps->g, sname, 1, v, &sd);
                if (sym < 0) return perr(ps, dat, "%s", sd.msg);
            }
            ps->p = e2;
        } else {
            if (ps->p >= ps->end || !is_digit((unsigned char)*ps->p)) {
                char b[16];
                return perr(ps, dat, "expected a dimension, found %s", char_desc(ps, dat, b, sizeof b));
            }
            errno = 0;
            char *e;
            v = strtoll(ps->p, &e, 10);
            if (errno == ERANGE) return perr(ps, dat, "dimension is too large");
            ps->p = e;
        }
        if (s->rank == IR_MAX_RANK) return perr(ps, dat, "rank exceeds the maximum of %d", IR_MAX_RANK);
        s->sym[s->rank] = sym;
        s->dims[s->rank++] = v;
        int c = peek(ps);
        if (c == ',') { ps->p++; continue; }
        if (c == ']') { ps->p++; break; }
        char b[16];
        return perr(ps, ps->p, "expected ',' or ']' in shape, found %s", char_desc(ps, ps->p, b, sizeof b));
    }
    int64_t n, bytes;
    if (ir_shape_numel(s, &n) || ir_mul_ok(n, (int64_t)ir_dtype_size(*t), &bytes))
        return perr(ps, at, "shape is too large: its byte size overflows");
    return 0;
}

/* Decimal literal: [+-]digits[.digits][e[+-]digits] (digits on one side of
 * '.' at least), or inf, +inf, -inf, nan. */
static int is_decimal(const char *s, size_t n, int integer)
{
    size_t i = 0;
    if (i < n && (s[i] == '+' || s[i] == '-')) i++;
    if (!integer && ((n - i == 3 && memcmp(s + i, "inf", 3) == 0) || (n == 3 && memcmp(s, "nan", 3) == 0))) return 1;
    size_t d = 0;
    while (i < n && is_digit((unsigned char)s[i])) i++, d++;
    if (integer) return d > 0 && i == n;
    if (i < n && s[i] == '.') {
        i++;
        while (i < n && is_digit((unsigned char)s[i])) i++, d++;
    }
    if (d == 0) return 0;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) i++;
        size_t ed = 0;
        while (i < n && is_digit((unsigned char)s[i])) i++, ed++;
        if (ed == 0) return 0;
    }
    return i == n;
}

/* Parses one list element of dtype t into out: 0, 1 = malformed for t,
 * 2 = out of range for t. */
static int parse_elem(DType t, const char *tok, size_t len, unsigned char *out)
{
    char s[64];
    if (len >= sizeof s) return 1;
    memcpy(s, tok, len);
    s[len] = 0;
    if (t == DT_BOOL) {
        if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0) out[0] = 1;
        else if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0) out[0] = 0;
        else return 1;
        return 0;
    }
    if (t == DT_U64) { /* exact over the whole range: strtoull, no sign wrap */
        if (!is_decimal(s, len, 1)) return 1;
        errno = 0;
        unsigned long long v = strtoull(s, NULL, 10);
        if (errno == ERANGE || (s[0] == '-' && v != 0)) return 2;
        uint64_t x = v;
        memcpy(out, &x, 8);
        return 0;
    }
    if (ir_dtype_is_int(t)) {
        if (!is_decimal(s, len, 1)) return 1;
        errno = 0;
        long long v = strtoll(s, NULL, 10);
        if (errno == ERANGE) return 2;
        long long lo = 0, hi = 0;
        switch (t) {
        case DT_I8: lo = INT8_MIN; hi = INT8_MAX; break;
        case DT_U8: lo = 0; hi = UINT8_MAX; break;
        case DT_I16: lo = INT16_MIN; hi = INT16_MAX; break;
        case DT_I32: lo = INT32_MIN; hi = INT32_MAX; break;
        case DT_U16: lo = 0; hi = UINT16_MAX; break;
        case DT_U32: lo = 0; hi = UINT32_MAX; break;
        default: lo = INT64_MIN; hi = INT64_MAX; break;
        }
        if (v < lo || v > hi) return 2;
        if (t == DT_I64) {
            int64_t x = v;
            memcpy(out, &x, 8);
        } else {
            ir_store_f64(t, out, 0, (double)v);
        }
        return 0;
    }
    if (!is_decimal(s, len, 0)) return 1;
    ir_store_f64(t, out, 0, strtod(s, NULL));
    return 0;
}

/* Reads a number token (sign, letters, digits, '.', '+', '-') at ps->p. */
static const char *read_num_token(Parser *ps, size_t *len)
{
    skip_ws(ps);
    const char *s = ps->p;
    while (ps->p < ps->end && (is_name_char((unsigned char)*ps->p) || *ps->p == '+')) ps->p++;
    *len = (size_t)(ps->p - s);
    return s;
}

static int parse_random(Parser *ps, DType t, int64_t n, unsigned char *out)
{
    ps->p += 6; /* "random" */
    if (expect(ps, '(', "'(' after random")) return -1;
    int have[3] = {0, 0, 0};
    uint64_t seed = 0;
    double lim[2] = {-1, 1}; /* lo and hi default to -1 and 1 */
    const char *open = ps->p;
    if (peek(ps) != ')') {
        for (;;) {
            skip_ws(ps);
            const char *kat = ps->p;
            while (ps->p < ps->end && is_alpha((unsigned char)*ps->p)) ps->p++;
            size_t kl = (size_t)(ps->p - kat);
            int k = kl == 4 && memcmp(kat, "seed", 4) == 0 ? 0
                  : kl == 2 && memcmp(kat, "lo", 2) == 0   ? 1
                  : kl == 2 && memcmp(kat, "hi", 2) == 0   ? 2 : -1;
            if (k < 0) return perr(ps, kat, "random() takes seed=, lo= and hi=, found '%.*s'", (int)kl, kat);
            if (have[k]) return perr(ps, kat, "random(): '%.*s' given twice", (int)kl, kat);
            have[k] = 1;
            if (expect(ps, '=', "'='")) return -1;
            size_t len;
            const char *tok = read_num_token(ps, &len);
            char s[64];
            snprintf(s, sizeof s, "%.*s", (int)(len < 63 ? len : 63), tok);
            if (k == 0) {
                errno = 0;
                if (len == 0 || len > 20 || !is_digit((unsigned char)s[0]) || !is_decimal(s, len, 1))
                    return perr(ps, tok, "random(): seed must be an unsigned integer, found '%s'", s);
                seed = strtoull(s, NULL, 10);
                if (errno == ERANGE) return perr(ps, tok, "random(): seed does not fit in 64 bits");
            } else {
                if (len == 0 || len > 60 || !is_decimal(s, len, 0))
                    return perr(ps, tok, "random(): %s must be a decimal number, found '%s'", k == 1 ? "lo" : "hi", s);
                lim[k - 1] = strtod(s, NULL);
                if (!isfinite(lim[k - 1])) return perr(ps, tok, "random(): %s must be finite", k == 1 ? "lo" : "hi");
            }
            int c = peek(ps);
            if (c == ',') { ps->p++; continue; }
            if (c == ')') break;
            char b[16];
            return perr(ps, ps->p, "expected ',' or ')' in random(), found %s", char_desc(ps, ps->p, b, sizeof b));
        }
    }
    ps->p++;
    if (!have[0]) return perr(ps, open, "random() needs seed=");
    double lo = lim[0], hi = lim[1];
    if (lo > hi) return perr(ps, open, "random(): lo must not exceed hi");
    ir_fill_random(t, out, n, seed, lo, hi);
    return 0;
}

/* Parses constant data for type (t, s): a list, hex"...", random(...), or
 * refuses <elided N bytes>. The bytes live in the graph arena. */
static int parse_data(Parser *ps, DType t, const Shape *s, const void **data, size_t *nbytes)
{
    char b[16];
    int64_t n = ir_numel(s);
    size_t es = ir_dtype_size(t);
    size_t need = (size_t)n * es;
    char tbuf[160];
    int tk = snprintf(tbuf, sizeof tbuf, "%s", ir_dtype_name(t));
    ir_shape_str(s, tbuf + tk, sizeof tbuf - (size_t)tk);
    skip_ws(ps);
    const char *at = ps->p;
    size_t rest = (size_t)(ps->end - at);
    *nbytes = need;
    if (rest >= 4 && memcmp(at, "hex\"", 4) == 0) {
        const char *q = at + 4;
        while (q < ps->end && hex_val((unsigned char)*q) >= 0) q++;
        if (q >= ps->end || *q == '\n') return perr(ps, at, "unterminated quoted string");
        if (*q != '"') return perr(ps, q, "bad hex digit %s in hex\"...\"", char_desc(ps, q, b, sizeof b));
        size_t digits = (size_t)(q - (at + 4));
        if (digits % 2) return perr(ps, at, "hex\"...\" has an odd number of digits (%zu)", digits);
        if (digits / 2 != need)
            return perr(ps, at, "expected %zu bytes of hex data for %s, got %zu", need, tbuf, digits / 2);
        unsigned char *out = ir_alloc(ps->g, need);
        for (size_t i = 0; i < need; i++)
            out[i] = (unsigned char)(hex_val((unsigned char)at[4 + 2 * i]) * 16 + hex_val((unsigned char)at[5 + 2 * i]));
        ps->p = q + 1;
        *data = out;
        return 0;
    }
    if (rest >= 6 && memcmp(at, "random", 6) == 0 && (rest == 6 || !is_name_char((unsigned char)at[6]))) {
        if ((int64_t)need > TEXT_RANDOM_MAX_BYTES)
            return perr(ps, at, "random() constant of %zu bytes exceeds the limit of %lld bytes", need,
                        (long long)TEXT_RANDOM_MAX_BYTES);
        unsigned char *out = ir_alloc(ps->g, need);
        *data = out;
        return parse_random(ps, t, n, out);
    }
    if (rest >= 7 && memcmp(at, "<elided", 7) == 0) {
        const char *q = at;
        while (q < ps->end && *q != '>' && *q != '\n') q++;
        return perr(ps, at, "constant data was elided from this dump (%.*s); it cannot be parsed",
                    (int)(q < ps->end && *q == '>' ? q - at + 1 : q - at), at);
    }
    if (*at != '[')
        return perr(ps, at, "expected constant data ([...], hex\"...\" or random(...)), found %s", char_desc(ps, at, b, sizeof b));
    ps->p++;
    /* Elements are parsed into a growing buffer first so that a short list
     * for a huge type never allocates the huge size. */
    size_t cap = 64, cnt = 0;
    unsigned char *tmp = malloc(cap * es);
    GC_ASSERT(tmp);
    int rc = 0;
    if (peek(ps) == ']') {
        ps->p++;
    } else {
        for (;;) {
            size_t len;
            const char *tok = read_num_token(ps, &len);
            if (len == 0) { rc = perr(ps, tok, "expected a number, found %s", char_desc(ps, tok, b, sizeof b)); break; }
            if (cnt == cap) {
                cap *= 2;
                unsigned char *nt = realloc(tmp, cap * es);
                GC_ASSERT(nt);
                tmp = nt;
            }
            int e = parse_elem(t, tok, len, tmp + cnt * es);
            if (e == 1) {
                rc = perr(ps, tok, "'%.*s' is not a valid %s literal", (int)(len < 60 ? len : 60), tok, ir_dtype_name(t));
                break;
            }
            if (e == 2) { rc = perr(ps, tok, "%.*s is out of range for %s", (int)len, tok, ir_dtype_name(t)); break; }
            cnt++;
            int c = peek(ps);
            if (c == ',') { ps->p++; continue; }
            if (c == ']') { ps->p++; break; }
            rc = perr(ps, ps->p, "expected ',' or ']' in constant list, found %s", char_desc(ps, ps->p, b, sizeof b));
            break;
        }
    }
    if (!rc && (int64_t)cnt != n) rc = perr(ps, at, "expected %lld elements for %s, got %zu", (long long)n, tbuf, cnt);
    if (!rc) {
        unsigned char *out = ir_alloc(ps->g, need);
        if (need) memcpy(out, tmp, need);
        *data = out;
    }
    free(tmp);
    return rc;
}

/* ---- parser: statements ---------------------------------------------------- */

static int parse_input(Parser *ps)
{
    const char *at;
    const char *name = read_value_name(ps, &at);
    if (!name || check_new_value(ps, name, at)) return -1;
    DType t;
    Shape s = {0};
    if (expect(ps, ':', "':' and a type after the input name") || parse_type(ps, &t, &s)) return -1;
    ir_add_input(ps->g, name, t, &s);
    return 0;
}

static int parse_const(Parser *ps, int state)
{
    const char *at;
    const char *name = read_value_name(ps, &at);
    if (!name || check_new_value(ps, name, at)) return -1;
    DType t;
    Shape s = {0};
    if (expect(ps, ':', "':' and a type after the constant name") || parse_type(ps, &t, &s)) return -1;
    if (ir_shape_has_sym(&s)) return perr(ps, at, "constant '%s' must have a static shape", name);
    if (expect(ps, '=', "'=' and the constant data")) return -1;
    const void *data = NULL;
    size_t nbytes = 0;
    if (parse_data(ps, t, &s, &data, &nbytes)) return -1;
    Value *v = ir_add_const(ps->g, name, t, &s, data, 0); /* data already lives in the arena */
    if (state) ir_make_state(v);
    return 0;
}

/* update %STATE <- %VALUE */
static int parse_update(Parser *ps)
{
    const char *at;
    const char *name = read_value_name(ps, &at);
    if (!name) return -1;
    Value *st = lookup_value(ps, name, at);
    if (!st) return -1;
    if (st->kind != VK_STATE) return perr(ps, at, "'update' needs a state value; '%s' is not one", st->name);
    skip_ws(ps);
    if (ps->end - ps->p < 2 || ps->p[0] != '<' || ps->p[1] != '-') return perr(ps, ps->p, "expected '<-' after the state");
    ps->p += 2;
    skip_ws(ps);
    name = read_value_name(ps, &at);
    if (!name) return -1;
    Value *v = lookup_value(ps, name, at);
    if (!v) return -1;
    if (v->kind != VK_TEMP || !v->shape_known || v->dtype != st->dtype || !ir_shape_eq(&v->shape, &st->shape))
        return perr(ps, at, "'%s' must be a node output typed like state '%s'", v->name, st->name);
    for (int i = 0; i < ps->g->n_updates; i++)
        if (ps->g->updates[i].state == st) return perr(ps, at, "state '%s' is updated twice", st->name);
    ir_add_update(ps->g, st, v);
    return 0;
}

static int parse_output(Parser *ps)
{
    const char *at;
    const char *name = read_value_name(ps, &at);
    if (!name) return -1;
    Value *v = lookup_value(ps, name, at);
    if (!v) return -1;
    ir_add_output(ps->g, v);
    return 0;
}

/* One attribute value of schema kind k for node n. */
static int parse_attr_value(Parser *ps, Node *n, int idx)
{
    const OpDesc *od = ir_op(n->op);
    const AttrSpec *sp = &od->attrs[idx];
    AttrVal *a = &n->attrs[idx];
    skip_ws(ps);
    const char *at = ps->p;
    if (sp->kind == ATTR_TENSOR) {
        AttrVal nv;
        memset(&nv, 0, sizeof nv);
        if (parse_type(ps, &nv.t.dtype, &nv.t.shape)) return -1;
        if (ir_shape_has_sym(&nv.t.shape)) return perr(ps, at, "a tensor attribute must have a static shape");
        if (parse_data(ps, nv.t.dtype, &nv.t.shape, &nv.t.data, &nv.t.nbytes)) return -1;
        nv.set = 1;
        *a = nv;
        return 0;
    }
    if (ps->p < ps->end && *ps->p == '"') {
        if (sp->kind != ATTR_STRING)
            return perr(ps, at, "attribute '%s' of op '%s' expects %s, got a string", sp->name, od->name,
                        attr_kind_name(sp->kind));
        if (read_quoted(ps)) return -1;
        AttrVal nv;
        memset(&nv, 0, sizeof nv);
        nv.set = 1;
        nv.s = ir_strdup(ps->g, ps->buf);
        *a = nv;
        return 0;
    }
    /* Scalars and lists: the raw text up to ',' '}' (or the closing ']'),
     * converted by ir_set_attr. */
    const char *e = ps->p;
    if (*e == '[') {
        while (e < ps->end && *e != ']' && *e != '\n' && *e != '#') e++;
        if (e >= ps->end || *e != ']') return perr(ps, at, "missing ']' in attribute '%s'", sp->name);
        e++;
    } else {
        while (e < ps->end && *e != ',' && *e != '}' && *e != '\n' && *e != '#') e++;
    }
    const char *vend = e;
    while (vend > at && (vend[-1] == ' ' || vend[-1] == '\t' || vend[-1] == '\r')) vend--;
    if (vend == at) return perr(ps, at, "missing value for attribute '%s'", sp->name);
    char *text = malloc((size_t)(vend - at) + 1);
    GC_ASSERT(text);
    memcpy(text, at, (size_t)(vend - at));
    text[vend - at] = 0;
    Diag scratch;
    memset(&scratch, 0, sizeof scratch);
    int rc = ir_set_attr(ps->g, n, sp->name, text, &scratch);
    if (rc) rc = perr(ps, at, "attribute '%s' of op '%s' expects %s, got '%s'", sp->name, od->name,
                      attr_kind_name(sp->kind), text);
    free(text);
    ps->p = e;
    return rc;
}

static int parse_attrs(Parser *ps, Node *n)
{
    const OpDesc *od = ir_op(n->op);
    ps->p++; /* '{' */
    if (peek(ps) == '}') { ps->p++; return 0; }
    char *given = calloc((size_t)od->n_attrs + 1, 1);
    GC_ASSERT(given);
    int rc = 0;
    for (;;) {
        char b[16];
        skip_ws(ps);
        const char *kat = ps->p;
        while (ps->p < ps->end && (is_alpha((unsigned char)*ps->p) || is_digit((unsigned char)*ps->p) || *ps->p == '_')) ps->p++;
        size_t kl = (size_t)(ps->p - kat);
        if (kl == 0) { rc = perr(ps, kat, "expected an attribute name, found %s", char_desc(ps, kat, b, sizeof b)); break; }
        char key[128];
        snprintf(key, sizeof key, "%.*s", (int)(kl < 127 ? kl : 127), kat);
        int idx = ir_attr_index(n, key);
        if (idx < 0) { rc = perr(ps, kat, "op '%s' has no attribute '%s'", od->name, key); break; }
        if (given[idx]) { rc = perr(ps, kat, "attribute '%s' is given twice", key); break; }
        given[idx] = 1;
        if ((rc = expect(ps, '=', "'=' after the attribute name"))) break;
        if ((rc = parse_attr_value(ps, n, idx))) break;
        int c = peek(ps);
        if (c == ',') { ps->p++; continue; }
        if (c == '}') { ps->p++; break; }
        rc = perr(ps, ps->p, "expected ',' or '}' in attributes, found %s", char_desc(ps, ps->p, b, sizeof b));
        break;
    }
    free(given);
    return rc;
}

typedef struct OutDecl {
    const char *name;
    const char *at;
    int typed;
    DType t;
    Shape s;
} OutDecl;

/* [NODE ':'] [%out[: TYPE], ... '='] Op '(' args ')' ['{' attrs '}'] */
static int parse_node(Parser *ps)
{
    char b[16];
    const char *node_name = NULL, *op_at = NULL;
    char op_name[64] = "";
    int rc = -1;
    OutDecl *outs = NULL;
    Value **ins = NULL;
    int n_out = 0, cap_out = 0, n_in = 0, cap_in = 0;

    skip_ws(ps);
    if (*ps->p != '%') {
        const char *at = ps->p;
        int quoted = *at == '"';
        if (read_name(ps, "a node name, value or op")) goto done;
        if (peek(ps) == ':') {
            ps->p++;
            node_name = ir_strdup(ps->g, ps->buf);
        } else if (!quoted && peek(ps) == '(') {
            op_at = at;
            snprintf(op_name, sizeof op_name, "%s", ps->buf);
        } else {
            rc = perr(ps, ps->p, "expected ':' after a node name or '(' after an op name, found %s",
                      char_desc(ps, ps->p, b, sizeof b));
            goto done;
        }
    }
    if (!op_at && peek(ps) == '%') {
        for (;;) {
            const char *at;
            const char *name = read_value_name(ps, &at);
            if (!name || check_new_value(ps, name, at)) goto done;
            for (int i = 0; i < n_out; i++)
                if (strcmp(outs[i].name, name) == 0) {
                    char vb[300];
                    rc = perr(ps, at, "value '%s' is already defined", value_ref(name, vb, sizeof vb));
                    goto done;
                }
            if (n_out == cap_out) {
                cap_out = cap_out ? cap_out * 2 : 4;
                outs = realloc(outs, sizeof *outs * (size_t)cap_out);
                GC_ASSERT(outs);
            }
            OutDecl *o = &outs[n_out++];
            memset(o, 0, sizeof *o);
            o->name = name;
            o->at = at;
            if (peek(ps) == ':') {
                ps->p++;
                if (parse_type(ps, &o->t, &o->s)) goto done;
                o->typed = 1;
            }
            int c = peek(ps);
            if (c == ',') { ps->p++; continue; }
            if (c == '=') { ps->p++; break; }
            rc = perr(ps, ps->p, "expected ',' or '=' after the node outputs, found %s", char_desc(ps, ps->p, b, sizeof b));
            goto done;
        }
    }
    if (!op_at) {
        skip_ws(ps);
        op_at = ps->p;
        while (ps->p < ps->end && is_name_char((unsigned char)*ps->p)) ps->p++;
        if (ps->p == op_at) {
            rc = perr(ps, op_at, "expected an op name, found %s", char_desc(ps, op_at, b, sizeof b));
            goto done;
        }
        snprintf(op_name, sizeof op_name, "%.*s", (int)(ps->p - op_at), op_at);
        if (ps->p - op_at >= (long)sizeof op_name) {
            rc = perr(ps, op_at, "unknown op '%.*s'", (int)(ps->p - op_at), op_at);
            goto done;
        }
    }
    int op = ir_op_lookup(op_name);
    if (op < 0) { rc = perr(ps, op_at, "unknown op '%s'", op_name); goto done; }
    if (expect(ps, '(', "'(' after the op name")) goto done;
    if (peek(ps) != ')') {
        for (;;) {
            Value *v = NULL;
            int c = peek(ps);
            if (c == '_' && !(ps->p + 1 < ps->end && is_name_char((unsigned char)ps->p[1]))) {
                ps->p++;
            } else {
                const char *at;
                const char *name = read_value_name(ps, &at);
                if (!name || !(v = lookup_value(ps, name, at))) goto done;
            }
            if (n_in == cap_in) {
                cap_in = cap_in ? cap_in * 2 : 4;
                ins = realloc(ins, sizeof *ins * (size_t)cap_in);
                GC_ASSERT(ins);
            }
            ins[n_in++] = v;
            c = peek(ps);
            if (c == ',') { ps->p++; continue; }
            if (c == ')') break;
            rc = perr(ps, ps->p, "expected ',' or ')' in the op inputs, found %s", char_desc(ps, ps->p, b, sizeof b));
            goto done;
        }
    }
    ps->p++; /* ')' */
    const char **names = malloc(sizeof *names * (size_t)(n_out ? n_out : 1));
    GC_ASSERT(names);
    for (int i = 0; i < n_out; i++) names[i] = outs[i].name;
    Node *n = ir_add_node(ps->g, op, node_name, ins, n_in, n_out, n_out ? names : NULL);
    free(names);
    for (int i = 0; i < n_out; i++)
        if (outs[i].typed) {
            ir_set_out(n, i, outs[i].t, &outs[i].s);
            memcpy(n->out[i]->shape.sym, outs[i].s.sym, sizeof outs[i].s.sym);
        }
    rc = 0;
    if (peek(ps) == '{') rc = parse_attrs(ps, n);
done:
    free(outs);
    free(ins);
    return rc;
}

/* Reads the bare word at ps->p without consuming it; returns its length. */
static size_t word_len(Parser *ps)
{
    const char *q = ps->p;
    while (q < ps->end && is_name_char((unsigned char)*q)) q++;
    return (size_t)(q - ps->p);
}

/* Moves to the start of the next line; the rest of this one must be blank or
 * a comment. */
static int end_line(Parser *ps)
{
    char b[16];
    if (!at_eol(ps)) return perr(ps, ps->p, "unexpected %s after the statement", char_desc(ps, ps->p, b, sizeof b));
    while (ps->p < ps->end && *ps->p != '\n') ps->p++;
    if (ps->p < ps->end) {
        ps->p++;
        ps->line++;
        ps->line_start = ps->p;
    }
    return 0;
}

/* Skips blank and comment lines; returns 1 when text remains. */
static int next_statement(Parser *ps)
{
    while (ps->p < ps->end) {
        if (!at_eol(ps)) return 1;
        end_line(ps);
    }
    return 0;
}

static int parse_body(Parser *ps)
{
    char b[16];
    if (!next_statement(ps)) return perr(ps, ps->p, "expected 'graph NAME {'");
    if (word_len(ps) != 5 || memcmp(ps->p, "graph", 5) != 0)
        return perr(ps, ps->p, "expected 'graph NAME {', found %s", char_desc(ps, ps->p, b, sizeof b));
    ps->p += 5;
    skip_ws(ps);
    if (read_name(ps, "a graph name")) return -1;
    ps->g->name = ir_strdup(ps->g, ps->buf);
    if (expect(ps, '{', "'{' after the graph name") || end_line(ps)) return -1;
    for (;;) {
        if (!next_statement(ps)) return perr(ps, ps->p, "missing '}' at the end of graph");
        const char *at = ps->p;
        if (*at == '}') {
            ps->p++;
            if (ps->g->n_outputs == 0) return perr(ps, at, "graph has no outputs (add 'output %%NAME')");
            if (end_line(ps)) return -1;
            break;
        }
        size_t wl = word_len(ps);
        int kw = 0;
        if ((wl == 5 && memcmp(at, "input", 5) == 0) || (wl == 5 && memcmp(at, "const", 5) == 0) ||
            (wl == 5 && memcmp(at, "state", 5) == 0) || (wl == 6 && memcmp(at, "update", 6) == 0) ||
            (wl == 6 && memcmp(at, "output", 6) == 0)) {
            ps->p += wl;
            kw = peek(ps) == '%';
            if (!kw) ps->p = at;
        }
        int rc;
        if (!kw) rc = parse_node(ps);
        else if (*at == 'i') rc = parse_input(ps);
        else if (*at == 'c') rc = parse_const(ps, 0);
        else if (*at == 's') rc = parse_const(ps, 1);
        else if (*at == 'u') rc = parse_update(ps);
        else rc = parse_output(ps);
        if (rc || end_line(ps)) return -1;
    }
    if (next_statement(ps)) return perr(ps, ps->p, "unexpected text after the end of the graph");
    return 0;
}

Graph *ir_parse(const char *text, size_t len, const char *file, Diag *d)
{
    Parser ps;
    memset(&ps, 0, sizeof ps);
    ps.src = ps.p = ps.line_start = text;
    ps.end = text + len;
    ps.line = 1;
    ps.file = file ? file : (d && d->file ? d->file : "<input>");
    ps.d = d;
    ps.g = ir_graph_new("model");
    int rc = parse_body(&ps);
    free(ps.buf);
    if (rc) {
        ir_graph_free(ps.g);
        return NULL;
    }
    return ps.g;
}

Graph *ir_parse_file(const char *path, Diag *d)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    if (f) {
        for (;;) {
            if (cap - len < 65536) {
                cap = cap ? cap * 2 : 65536;
                char *nb = realloc(buf, cap + 1);
                GC_ASSERT(nb);
                buf = nb;
            }
            size_t got = fread(buf + len, 1, cap - len, f);
            len += got;
            if (got == 0) break;
        }
    }
    if (!f || ferror(f)) {
        int err = errno;
        if (f) fclose(f);
        free(buf);
        const char *saved = d ? d->file : NULL;
        if (d) d->file = NULL;
        diag_error(d, "%s: cannot read file: %s", path, strerror(err));
        if (d) d->file = saved;
        return NULL;
    }
    fclose(f);
    buf[len] = 0;
    Graph *g = ir_parse(buf, len, path, d);
    free(buf);
    return g;
}
