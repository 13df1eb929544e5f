/* cgen.c — the C backend core: planned graph -> NAME.h + NAME.c.
 *
 * The schedule is one static function, NAME_schedule(weights, arena,
 * inputs, outputs). It first declares one const pointer per tensor the
 * schedule touches — into the arena at the planned offset for temporaries,
 * into the weights blob for constants, the caller's buffers for graph
 * inputs and outputs; a view (Value.alias, set by memory planning) points
 * into its root's storage — then runs every node in g->nodes order: a comment
 * (op, node, shapes) and the code of the emitter registered for the node's
 * op, in its own block so that emitters' locals never meet. A view node
 * whose output is an alias gets a comment and no code. Values that memory
 * planning put in place share an arena offset and are ordinary pointers
 * (their ops promise to read each element before writing it). Outputs that
 * a node does not write directly (graph inputs, constants, a value listed
 * twice) are copied at the end.
 *
 * Tensor names come from the model: sanitized to C identifiers, made unique
 * in the function, kept clear of C keywords, libc/libm names, all-caps
 * (macro-like) names and of short names (1-3 characters without '_') that
 * emitters like to use for loop locals; those get a "t_" prefix. Declarations are written after the body is generated so
 * only tensors an emitter actually named are declared (no unused-variable
 * warnings), and only constants the code reads go into the weights blob.
 *
 * Everything is a function of the graph and the options: names follow value
 * ids, constants go in value-id order, nothing prints a pointer or a time.
 * The output folder itself (weights, runtime, Makefile, main) is written by
 * cgen_files.c and cgen_main.c; cgen_write() orchestrates. A graph with
 * runtime shapes (symbolic dims) adds the shape table `dim[]` to the
 * schedule and NAME_run_shapes to the API (cgen_shapes.c).
 */
#include "cgen_model.h"
#include "emit_dynshape.h"

#include "../../ir/custom_op.h"
#include "../cfamily/cfam_expr.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- name sets ------------------------------------------------------------ */

/* A set of identifiers (open addressing; used for membership only, so the
 * hash never influences the output). */
typedef struct NameSet {
    const char **slot;
    int *next; /* per slot: unique_name's next suffix to try for that base (0: 2) */
    size_t cap, n;
} NameSet;

/* The slot holding s, or -1. */
static long ns_find(const NameSet *ns, const char *s)
{
    if (!ns->cap) return -1;
    for (size_t i = ir_hash_str(s) & (ns->cap - 1);; i = (i + 1) & (ns->cap - 1)) {
        if (!ns->slot[i]) return -1;
        if (strcmp(ns->slot[i], s) == 0) return (long)i;
    }
}

static int ns_has(const NameSet *ns, const char *s) { return ns_find(ns, s) >= 0; }

static void ns_add(NameSet *ns, const char *s)
{
    if ((ns->n + 1) * 2 > ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 256;
        NameSet big = {calloc(cap, sizeof(char *)), calloc(cap, sizeof(int)), cap, 0};
        GC_ASSERT(big.slot && big.next);
        for (size_t i = 0; i < ns->cap; i++)
            if (ns->slot[i]) {
                ns_add(&big, ns->slot[i]);
                big.next[ns_find(&big, ns->slot[i])] = ns->next[i];
            }
        free(ns->slot);
        free(ns->next);
        *ns = big;
    }
    size_t i = ir_hash_str(s) & (ns->cap - 1);
    while (ns->slot[i]) {
        if (strcmp(ns->slot[i], s) == 0) return;
        i = (i + 1) & (ns->cap - 1);
    }
    ns->slot[i] = s;
    ns->n++;
}

static void ns_free(NameSet *ns)
{
    free(ns->slot);
    free(ns->next);
}

/* C keywords and the names the generated code's headers define. */
static const char *const cgen_reserved[] = {
    "auto", "break", "case", "char", "const", "continue", "default", "do", "double", "else", "enum",
    "extern", "float", "for", "goto", "if", "inline", "int", "long", "register", "restrict", "return",
    "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned", "void",
    "volatile", "while", "asm", "typeof", "bool", "true", "false", "alignas", "alignof", "noreturn",
    "static_assert", "thread_local", "complex", "imaginary",
    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "intptr_t",
    "uintptr_t", "intmax_t", "uintmax_t", "size_t", "ptrdiff_t", "wchar_t", "NULL", "offsetof",
    "memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strcmp", "strcpy", "strncpy", "strcat",
    "errno", "assert", "main", "signbit", "fpclassify", "isnan", "isinf", "isfinite", "isnormal",
    "isgreater", "isgreaterequal", "isless", "islessequal", "islessgreater", "isunordered",
    "math_errhandling", "float_t", "double_t",
    "arena", "weights", "inputs", "outputs",
};

/* libm functions; each is reserved with its f and l variants too. */
static const char *const cgen_libm[] = {
    "acos", "asin", "atan", "atan2", "cos", "sin", "tan", "acosh", "asinh", "atanh", "cosh", "sinh",
    "tanh", "exp", "exp2", "expm1", "frexp", "ilogb", "ldexp", "log", "log10", "log1p", "log2", "logb",
    "modf", "scalbn", "scalbln", "cbrt", "fabs", "hypot", "pow", "sqrt", "erf", "erfc", "lgamma",
    "tgamma", "ceil", "floor", "nearbyint", "rint", "lrint", "llrint", "round", "lround", "llround",
    "trunc", "fmod", "remainder", "remquo", "copysign", "nan", "nextafter", "nexttoward", "fdim",
    "fmax", "fmin", "fma", "abs", "labs", "llabs", "div",
};

/* Whether a sanitized identifier must not name a tensor as is. */
static int name_needs_prefix(const NameSet *reserved, const char *s, const char *prefix)
{
    size_t len = strlen(s), pl = strlen(prefix);
    if (len <= 3 && !strchr(s, '_')) return 1; /* i, j, n, i0, acc, ... belong to emitters */
    if (ns_has(reserved, s)) return 1;
    if (strncmp(s, "gcrt_", 5) == 0 || strncmp(s, "GCRT_", 5) == 0) return 1;
    if (strncmp(s, prefix, pl) == 0 && s[pl] == '_') return 1; /* NAME_run, NAME_weights */
    int upper = 1;
    for (const char *p = s; *p; p++) upper &= !islower((unsigned char)*p);
    return upper; /* INT64_MAX, INFINITY, HUGE_VAL: leave macros alone */
}

/* Writes a C identifier made of [A-Za-z0-9_] from s into buf (cap >= 64):
 * other bytes become '_', leading underscores go, a leading digit or an
 * empty result gets a "t" in front; at most 40 characters. */
static void sanitize_ident(const char *s, char *buf)
{
    size_t n = 0;
    while (*s == '_') s++;
    if (!*s || isdigit((unsigned char)*s)) buf[n++] = 't';
    if (n && *s) buf[n++] = '_';
    for (; *s && n < 40; s++) {
        unsigned char ch = (unsigned char)*s;
        char o = (char)((isalnum(ch) && ch < 128) ? ch : '_');
        if (o == '_' && n && buf[n - 1] == '_') continue; /* "a::b" -> "a_b" */
        buf[n++] = o;
    }
    while (n > 1 && buf[n - 1] == '_') n--;
    buf[n] = 0;
}

/* ---- the Cgen context ----------------------------------------------------- */

struct Cgen {
    const Graph *g;
    CgenModel *m;
    Arena names_arena;
    NameSet reserved; /* keywords and library names */
    NameSet used;     /* every identifier given out in the schedule function */
    Writer body;
    const char **ptr;  /* per value id: its C identifier */
    char *touched;     /* per value id: cgen_ptr() was asked for it */
    int *out_slot;     /* per value id: first index in g->outputs, or -1 */
    int arena_used, weights_used, state_used;
    /* training: 1 for the training step, 2 for the inference pass (state
     * values in the state region); 0 for an ordinary model */
    int train;
    const Value **upd; /* per value id: the state value an update writes it into, or NULL */
    /* constants derived at compile time from model constants (packed
     * weights, cgen_derived_const): Values outside the graph (id -1) that
     * the weights blob holds after the graph's own, with their identifiers */
    Value **derived;
    const char **derived_id;
    int n_derived, cap_derived;
    int dims_set; /* the node being written set a data-dependent dim (cgen_set_dim) */
};

Writer *cgen_w(Cgen *c) { return &c->body; }

const Graph *cgen_graph(Cgen *c) { return c->g; }

int cgen_max_threads(const Graph *g) { return g->max_threads > 0 ? g->max_threads : CGEN_MAX_THREADS; }

void cgen_use_runtime(Cgen *c, unsigned units) { c->m->runtime |= units; }

void cgen_use_dwconv(Cgen *c, int64_t KH, int64_t KW, int64_t dw, int64_t sw)
{
    CgenModel *m = c->m;
    const int64_t t[4] = {KH, KW, dw, sw};
    for (int k = 0; k < m->n_dw && k < CGEN_MAX_DW; k++)
        if (!memcmp(m->dw[k], t, sizeof t)) return;
    if (m->n_dw < CGEN_MAX_DW) memcpy(m->dw[m->n_dw], t, sizeof t);
    if (m->n_dw <= CGEN_MAX_DW) m->n_dw++;
}

const char *cgen_err_shape(Cgen *c)
{
    char buf[160];
    snprintf(buf, sizeof buf, "%s_ERR_SHAPE", c->m->name);
    return arena_strdup(&c->names_arena, buf);
}

void cgen_set_dim(Cgen *c, const Value *v, int k, const char *expr)
{
    int32_t y = v->shape.sym[k];
    if (!cgen_own_dim(c->g, v, k)) {
        /* a dim shape inference knows (static, or a symbol set before):
         * the value computed at run time must agree with it */
        if (y) w_line(&c->body, "if ((%s) != dim[%d]) return %s_ERR_SHAPE; /* %s */", expr, y - 1, c->m->name, ir_sym(c->g, y)->name);
        else w_line(&c->body, "if ((%s) != %lld) return %s_ERR_SHAPE;", expr, (long long)v->shape.dims[k], c->m->name);
        return;
    }
    const IrSym *s = ir_sym(c->g, y);
    w_line(&c->body, "dim[%d] = %s; /* %s */", y - 1, expr, s->name);
    w_line(&c->body, "if (dim[%d] < %lld || dim[%d] > %lld) return %s_ERR_SHAPE;", y - 1, (long long)s->lo, y - 1,
           (long long)s->hi, c->m->name);
    c->dims_set = 1;
    if (s->group) cgen_check_group(c->g, y, &c->body, cgen_err_shape(c));
}

static const char *dims_tmp(void *ctx, const char *base) { return cgen_tmp(ctx, base); }
static void dims_set(void *ctx, const Value *v, int k, const char *expr) { cgen_set_dim(ctx, v, k, expr); }

static void dims_read(void *ctx, const Node *n, int j, const char *name, const char *i) { cgen_read_operand(ctx, n, j, name, i); }

static const char *dims_ptr(void *ctx, const Value *v, char *buf)
{
    snprintf(buf, 256, "%s", cgen_ptr(ctx, v));
    return buf;
}

static const char *dims_ws(void *ctx, const Node *n) { return cgen_workspace(ctx, n); }

CgenDims cgen_dims_ctx(Cgen *c)
{
    return (CgenDims){c->g, &c->body, cgen_err_shape(c), c, dims_tmp, dims_set, dims_read, dims_ptr, dims_ws};
}

/* A unique identifier from `base` (already sanitized): base, base_2, ... */
static const char *unique_name(Cgen *c, NameSet *set, const char *base)
{
    char buf[96];
    snprintf(buf, sizeof buf, "%s", base);
    /* Names only ever join a set, so the suffixes below the one found last
     * time for this base are still taken: start there (a model with
     * thousands of kernels asks for "i" thousands of times). */
    long at = ns_find(set, base);
    int k = at >= 0 && set->next[at] > 2 ? set->next[at] : 2; /* the next suffix to try */
    if (ns_has(set, buf) || ns_has(&c->reserved, buf)) {
        do snprintf(buf, sizeof buf, "%s_%d", base, k++);
        while (ns_has(set, buf) || ns_has(&c->reserved, buf));
    }
    char *s = arena_strdup(&c->names_arena, buf);
    ns_add(set, s);
    at = ns_find(set, base);
    if (at >= 0 && strcmp(s, base) != 0) set->next[at] = k;
    return s;
}

/* Identifier for a tensor named `model_name` in the schedule function. */
static const char *tensor_name(Cgen *c, const char *model_name)
{
    char san[64], buf[80];
    sanitize_ident(model_name, san);
    if (name_needs_prefix(&c->reserved, san, c->m->name)) snprintf(buf, sizeof buf, "t_%s", san);
    else snprintf(buf, sizeof buf, "%s", san);
    return unique_name(c, &c->used, buf);
}

const char *cgen_tmp(Cgen *c, const char *base)
{
    char san[64];
    sanitize_ident(base && *base ? base : "tmp", san);
    return unique_name(c, &c->used, san);
}

const char *cgen_derived_const(Cgen *c, const Value *src, const char *tag, void *data, size_t nbytes)
{
    char name[256];
    snprintf(name, sizeof name, "%s.%s", src->name, tag);
    for (int i = 0; i < c->n_derived; i++)
        if (strcmp(c->derived[i]->name, name) == 0) {
            GC_ASSERT(c->derived[i]->nbytes == nbytes && memcmp(c->derived[i]->data, data, nbytes) == 0);
            free(data);
            return c->derived_id[i];
        }
    if (c->n_derived == c->cap_derived) {
        c->cap_derived = c->cap_derived ? 2 * c->cap_derived : 8;
        c->derived = realloc(c->derived, (size_t)c->cap_derived * sizeof *c->derived);
        c->derived_id = realloc(c->derived_id, (size_t)c->cap_derived * sizeof *c->derived_id);
        GC_ASSERT(c->derived && c->derived_id);
    }
    Value *v = calloc(1, sizeof *v);
    GC_ASSERT(v);
    v->name = arena_strdup(&c->names_arena, name);
    v->id = -1;
    v->dtype = DT_F32;
    v->shape.rank = 1;
    v->shape.dims[0] = (int64_t)(nbytes / 4);
    v->shape_known = 1;
    v->kind = VK_CONST;
    v->data = data;
    v->nbytes = nbytes;
    v->offset = -1;
    char base[300];
    snprintf(base, sizeof base, "%s_%s", c->ptr[src->id], tag);
    c->derived[c->n_derived] = v;
    c->derived_id[c->n_derived] = tensor_name(c, base);
    c->weights_used = 1;
    return c->derived_id[c->n_derived++];
}

const char *cgen_ptr(Cgen *c, const Value *v)
{
    GC_ASSERT(v && v->id >= 0 && v->id < c->g->n_values && c->g->values[v->id] == v);
    c->touched[v->id] = 1;
    if (v->alias) c->touched[v->alias->id] = 1; /* a view is declared from its root's storage */
    return c->ptr[v->id];
}

const char *cgen_workspace(Cgen *c, const Node *n)
{
    char buf[64];
    c->arena_used = 1;
    if (!n->ws_bytes) return "arena";
    GC_ASSERT(n->ws_offset >= 0 && n->ws_offset % 64 == 0);
    snprintf(buf, sizeof buf, "(arena + %lld)", (long long)n->ws_offset);
    return arena_strdup(&c->names_arena, buf);
}

const char *cgen_ctype(DType t) { return cfam_ctype(t); }

DType cgen_compute_type(DType t) { return t == DT_F16 || t == DT_BF16 ? DT_F32 : t; }

void cgen_load(Writer *w, DType t, const char *ptr, const char *idx)
{
    if (t == DT_F16) w_printf(w, "gcrt_f16_to_f32(%s[%s])", ptr, idx);
    else if (t == DT_BF16) w_printf(w, "gcrt_bf16_to_f32(%s[%s])", ptr, idx);
    else w_printf(w, "%s[%s]", ptr, idx);
}

void cgen_store(Writer *w, DType t, const char *ptr, const char *idx, const char *val)
{
    if (t == DT_F16) w_line(w, "%s[%s] = gcrt_f32_to_f16((float)(%s));", ptr, idx, val);
    else if (t == DT_BF16) w_line(w, "%s[%s] = gcrt_f32_to_bf16((float)(%s));", ptr, idx, val);
    else if (t == DT_BOOL) w_line(w, "%s[%s] = (uint8_t)((%s) != 0);", ptr, idx, val);
    else w_line(w, "%s[%s] = (%s)(%s);", ptr, idx, cgen_ctype(t), val);
}

/* Appends s to a C comment: no comment terminator, no newline, no trigraph,
 * printable ASCII only. */
static void comment_text(Writer *w, const char *s)
{
    char buf[256];
    size_t n = 0;
    char prev = 0;
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        char o = (ch >= 32 && ch < 127) ? (char)ch : '?';
        if (o == '\\') o = '|';
        if ((o == '/' && prev == '*') || (o == '*' && prev == '/') || (o == '?' && prev == '?')) o = '.';
        buf[n++] = prev = o;
        if (n == sizeof buf - 1) {
            buf[n] = 0;
            w_puts(w, buf);
            n = 0;
        }
    }
    buf[n] = 0;
    w_puts(w, buf);
}

void cgen_comment_text(Writer *w, const char *s) { comment_text(w, s); }

static void value_desc(Writer *w, const Graph *g, const Value *v)
{
    char sh[256];
    comment_text(w, v->name);
    w_printf(w, " %s%s", ir_dtype_name(v->dtype), ir_shape_str_g(g, &v->shape, sh, sizeof sh));
}

void cgen_node_comment(Cgen *c, const Node *n)
{
    Writer *w = &c->body;
    w_puts(w, "/* ");
    comment_text(w, ir_op(n->op)->name);
    w_puts(w, " '");
    comment_text(w, n->name);
    w_puts(w, "': ");
    for (int i = 0; i < n->n_in; i++) {
        if (i) w_puts(w, ", ");
        if (n->in[i]) value_desc(w, c->g, n->in[i]);
        else w_puts(w, "_");
    }
    w_puts(w, " -> ");
    for (int i = 0; i < n->n_out; i++) {
        if (i) w_puts(w, ", ");
        value_desc(w, c->g, n->out[i]);
    }
    w_puts(w, " */\n");
}

void cgen_str_lit(Writer *w, const char *s)
{
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\' || ch == '?') w_printf(w, "\\%c", ch);
        else if (ch >= 32 && ch < 127) w_printf(w, "%c", ch);
        else w_printf(w, "\\%03o", ch);
    }
}

const char *cgen_npy_descr(DType t)
{
    static const char *const d[DT_COUNT] = {
        [DT_F32] = "<f4", [DT_F64] = "<f8", [DT_F16] = "<f2", [DT_BF16] = "<u2", [DT_I8] = "|i1",
        [DT_U8] = "|u1", [DT_I16] = "<i2", [DT_I32] = "<i4", [DT_I64] = "<i8", [DT_BOOL] = "|b1",
        [DT_U16] = "<u2", [DT_U32] = "<u4", [DT_U64] = "<u8",
    };
    GC_ASSERT(t > DT_UNDEF && t < DT_COUNT);
    return d[t];
}

static int64_t value_bytes(const Value *v) { return ir_value_bytes(v); }

/* The byte count of v as C text (a literal for a static shape). */
static const char *value_bytes_str(const Value *v, char *buf, size_t cap)
{
    CgenProd p = cgen_dims_prod(&v->shape, 0, v->shape.rank);
    p.c *= (int64_t)ir_dtype_size(v->dtype);
    return cgen_prod_str(&p, buf, cap);
}

/* ---- NAME.c ------------------------------------------------------------- */

/* Runs every emitter into c->body, then the output copies. */
static int gen_body(Cgen *c, const CgenEntry *table, Diag *d)
{
    const Graph *g = c->g;
    Writer *w = &c->body;
    w->indent = 1;
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        for (int j = 0; j < n->n_out; j++) {
            const Value *v = n->out[j];
            if (c->out_slot[v->id] < 0 && !v->alias && v->offset < 0 && !c->upd[v->id] && value_bytes(v) > 0)
                return diag_node_error(d, n, "output '%s' has no arena offset (the graph is not memory-planned)", v->name);
        }
        if (i) w_puts(w, "\n");
        cgen_node_comment(c, n);
        if (ir_op(n->op)->view && n->n_out >= 1 && n->out[0]->alias && !cgen_sets_dims(g, n)) {
            w_puts(w, "/* view: ");
            comment_text(w, n->out[0]->name);
            w_puts(w, " aliases ");
            comment_text(w, n->out[0]->alias->name);
            w_puts(w, ", no code */\n");
            continue;
        }
        if (ir_outputs_empty(n)) {
            w_line(w, "/* empty output: nothing to compute */");
            continue;
        }
        if (!table[n->op].dyn && cgen_node_has_sym(n)) return cgen_supports(c->g, n, d);
        w_line(w, "{");
        w->indent++;
        size_t mark = w->len;
        if (table[n->op].emit(c, n, d)) return -1;
        c->m->runtime |= table[n->op].runtime;
        if (w->len == mark) w_line(w, "/* nothing to do */");
        w->indent--;
        w_line(w, "}");
        if (c->dims_set) cgen_derive_data_dims(g, w);
        c->dims_set = 0;
    }
    int first = 1;
    for (int k = 0; k < g->n_outputs; k++) {
        const Value *v = g->outputs[k];
        if (v->kind == VK_TEMP && c->out_slot[v->id] == k) continue; /* written in place */
        if (first) w_puts(w, g->n_nodes ? "\n" : "");
        first = 0;
        w_puts(w, "/* output ");
        w_printf(w, "%d '", k);
        comment_text(w, v->name);
        w_printf(w, "' is %s: copy */\n",
                 v->kind == VK_INPUT ? "a graph input" : v->kind != VK_TEMP ? "a constant" : "listed before");
        char nb[128];
        w_line(w, "gcrt_copy(outputs[%d], %s, %s);", k, cgen_ptr(c, v), value_bytes_str(v, nb, sizeof nb));
    }
    return 0;
}

/* Whether v's data has a non-zero byte. */
static int has_nonzero(const Value *v)
{
    for (size_t k = 0; k < v->nbytes; k++)
        if (((const unsigned char *)v->data)[k]) return 1;
    return 0;
}

/* Assigns weights-blob offsets to the constants the code of the n contexts
 * reads (in context order, then value-id order); when training, the
 * training graph's state values with non-zero initial data come too (what
 * NAME_init_state copies). */
static void layout_weights(Cgen *const *cs, int n)
{
    CgenModel *m = cs[0]->m;
    int total = 0;
    for (int k = 0; k < n; k++) total += cs[k]->g->n_values + cs[k]->n_derived;
    m->consts = calloc((size_t)total + 1, sizeof *m->consts);
    m->const_off = calloc((size_t)total + 1, sizeof *m->const_off);
    GC_ASSERT(m->consts && m->const_off);
    int64_t off = 0;
    for (int k = 0; k < n; k++) {
        const Cgen *c = cs[k];
        const Graph *g = c->g;
        for (int i = 0; i < g->n_values; i++) {
            const Value *v = g->values[i];
            int want = c->train ? (v->kind == VK_CONST && c->touched[i]) || (c->train == 1 && v->kind == VK_STATE && has_nonzero(v))
                                : (v->kind == VK_CONST || v->kind == VK_STATE) && c->touched[i];
            if (!want) continue;
            m->consts[m->n_consts] = v;
            m->const_off[m->n_consts++] = off;
            off += ((int64_t)v->nbytes + 63) / 64 * 64;
        }
        for (int i = 0; i < c->n_derived; i++) {
            m->consts[m->n_consts] = c->derived[i];
            m->const_off[m->n_consts++] = off;
            off += ((int64_t)c->derived[i]->nbytes + 63) / 64 * 64;
        }
    }
    m->weights_bytes = off;
}

int64_t cgen_const_offset(const CgenModel *m, const Value *v)
{
    for (int i = 0; i < m->n_consts; i++)
        if (m->consts[i] == v) return m->const_off[i];
    return -1;
}

int64_t cgen_state_offset(const CgenModel *m, const Value *v)
{
    for (int i = 0; i < m->n_state; i++)
        if (m->state[i] == v || strcmp(m->state[i]->name, v->name) == 0) return m->state_off[i];
    return -1;
}

/* Training: the state region, every state value of the training graph. */
static void layout_state(CgenModel *m, const Graph *g)
{
    m->state = calloc((size_t)g->n_values + 1, sizeof *m->state);
    m->state_off = calloc((size_t)g->n_values + 1, sizeof *m->state_off);
    GC_ASSERT(m->state && m->state_off);
    int64_t off = 0;
    for (int i = 0; i < g->n_values; i++) {
        const Value *v = g->values[i];
        if (v->kind != VK_STATE) continue;
        m->state[m->n_state] = v;
        m->state_off[m->n_state++] = off;
        off += (value_bytes(v) + 63) / 64 * 64;
    }
    m->state_bytes = off;
}

/* The pointer declarations of the schedule function. */
static void gen_decls(Cgen *c, Writer *w)
{
    const Graph *g = c->g;
    char sh[256];
    for (int i = 0; i < g->n_values; i++) {
        const Value *v = g->values[i];
        if (!c->touched[i]) continue;
        const char *ct = cgen_ctype(v->dtype), *id = c->ptr[i];
        const Value *r = v->alias ? v->alias : v; /* the value that owns the storage */
        w_printf(w, "    ");
        if (r->kind == VK_INPUT) {
            int k = 0;
            while (g->inputs[k] != r) k++;
            w_printf(w, "const %s *const %s = (const %s *)inputs[%d];", ct, id, ct, k);
        } else if (c->train && (r->kind == VK_STATE || c->upd[r->id])) {
            const Value *st = r->kind == VK_STATE ? r : c->upd[r->id];
            int64_t so = cgen_state_offset(c->m, st);
            GC_ASSERT(so >= 0);
            c->state_used = 1;
            if (c->train == 2)
                w_printf(w, "const %s *const %s = (const %s *)(const void *)(state + %lld);", ct, id, ct, (long long)so);
            else
                w_printf(w, "%s *const %s = (%s *)(void *)(state + %lld);", ct, id, ct, (long long)so);
        } else if (r->kind == VK_CONST || r->kind == VK_STATE) {
            c->weights_used = 1;
            int64_t wo = cgen_const_offset(c->m, r);
            GC_ASSERT(wo >= 0 && "constant not in the weights layout");
            w_printf(w, "const %s *const %s = (const %s *)(const void *)(weights + %lld);", ct, id, ct, (long long)wo);
        } else if (c->out_slot[r->id] >= 0) {
            w_printf(w, "%s *const %s = (%s *)outputs[%d];", ct, id, ct, c->out_slot[r->id]);
        } else {
            c->arena_used = 1;
            GC_ASSERT(r->offset >= 0);
            w_printf(w, "%s *const %s = (%s *)(void *)(arena + %lld);", ct, id, ct, (long long)r->offset);
        }
        w_printf(w, " /* %s%s", ir_dtype_name(v->dtype), ir_shape_str_g(g, &v->shape, sh, sizeof sh));
        if (strcmp(v->name, id) != 0) {
            w_puts(w, " '");
            comment_text(w, v->name);
            w_puts(w, "'");
        }
        if (v->alias) {
            w_puts(w, ", view of ");
            comment_text(w, r->name);
        }
        if (c->train && c->upd[r->id]) {
            w_puts(w, ", updates state ");
            comment_text(w, c->upd[r->id]->name);
        }
        w_puts(w, " */\n");
    }
    for (int i = 0; i < c->n_derived; i++) {
        int64_t wo = cgen_const_offset(c->m, c->derived[i]);
        GC_ASSERT(wo >= 0);
        w_printf(w, "    const float *const %s = (const float *)(const void *)(weights + %lld); /* f32[%lld] '",
                 c->derived_id[i], (long long)wo, (long long)c->derived[i]->shape.dims[0]);
        comment_text(w, c->derived[i]->name);
        w_puts(w, "': compiled from the model's constant */\n");
    }
}

/* Adds every identifier token of C text to seen; returns the storage the
 * set points into (free it after the set). */
static char *collect_idents(const char *text, NameSet *seen)
{
    size_t n = strlen(text);
    char *buf = malloc(n + 2), *o = buf;
    GC_ASSERT(buf);
    for (const char *p = text; *p;) {
        if (p[0] == '/' && p[1] == '*') { /* comments name tensors too: skip them */
            const char *e = strstr(p + 2, "*/");
            p = e ? e + 2 : p + strlen(p);
        } else if (p[0] == '/' && p[1] == '/') {
            while (*p && *p != '\n') p++;
        } else if (*p == '"' || *p == '\'') {
            char q = *p++;
            while (*p && *p != q) p += (*p == '\\' && p[1]) ? 2 : 1;
            if (*p) p++;
        } else if (isalpha((unsigned char)*p) || *p == '_') {
            char *start = o;
            while (isalnum((unsigned char)*p) || *p == '_') *o++ = *p++;
            *o++ = 0;
            ns_add(seen, start);
        } else if (isdigit((unsigned char)*p)) {
            while (isalnum((unsigned char)*p) || *p == '_' || *p == '.') p++; /* 1.0e5f, 0x1p3 */
        } else {
            p++;
        }
    }
    return buf;
}

static void api_params(const CgenModel *m, Writer *w)
{
    int file = m->o->weights == BACKEND_WEIGHTS_FILE;
    w_printf(w, "%svoid *arena", file ? "const void *weights, " : "");
    for (int i = 0; i < m->g->n_inputs; i++)
        w_printf(w, ", const %s *%s", cgen_ctype(m->ins[i].v->dtype), m->ins[i].param);
    for (int i = 0; i < m->g->n_outputs; i++)
        w_printf(w, ", %s *%s", cgen_ctype(m->outs[i].v->dtype), m->outs[i].param);
}

/* The schedule function `fn` of c's graph: pointer declarations, then the
 * body gen_body wrote. Training contexts take the state region too. */
static void gen_schedule(Cgen *c, Writer *w, const char *fn)
{
    const Graph *g = c->g;
    Writer decls;
    w_init(&decls);
    gen_decls(c, &decls);
    if (c->train)
        w_printf(w, "static int %s(const unsigned char *weights, %sunsigned char *state, unsigned char *arena,\n"
                    "    const void *const *inputs, void *const *outputs, const GcThreadPool *pool)\n{\n", fn,
                 c->train == 2 ? "const " : "");
    else if (g->n_syms)
        w_printf(w, "static int %s(const unsigned char *weights, unsigned char *arena,\n"
                    "    const void *const *inputs, void *const *outputs, const GcThreadPool *pool, const int64_t *dims,\n"
                    "    int64_t *dims_out)\n{\n",
                 fn);
    else
        w_printf(w, "static int %s(const unsigned char *weights, unsigned char *arena,\n"
                    "    const void *const *inputs, void *const *outputs, const GcThreadPool *pool)\n{\n", fn);
    if (g->n_syms) cgen_write_shape_table(g, w);
    w_puts(w, decls.buf ? decls.buf : "");
    w_free(&decls);
    w_puts(w, "    (void)pool;\n");
    if (g->n_syms) w_puts(w, "    (void)dim;\n");
    const char *unused[5] = {"weights", "arena", "inputs", "outputs", "state"};
    int is_used[5] = {c->weights_used, c->arena_used, 0, 0, c->state_used || !c->train};
    for (int i = 0; i < g->n_values; i++) {
        if (!c->touched[i]) continue;
        is_used[2] |= g->values[i]->kind == VK_INPUT;
        is_used[3] |= g->values[i]->kind == VK_TEMP && c->out_slot[i] >= 0;
    }
    for (int k = 0; k < g->n_outputs; k++) is_used[3] |= !(g->outputs[k]->kind == VK_TEMP && c->out_slot[g->outputs[k]->id] == k);
    for (int k = 0; k < 5; k++)
        if (!is_used[k]) w_printf(w, "    (void)%s;\n", unused[k]);
    /* An emitter may name a tensor and then write nothing (zero-size
     * tensors): silence those pointers instead of tripping -Wunused. */
    NameSet seen = {0};
    char *toks = collect_idents(c->body.buf ? c->body.buf : "", &seen);
    for (int i = 0; i < g->n_values; i++)
        if (c->touched[i] && !ns_has(&seen, c->ptr[i])) w_printf(w, "    (void)%s;\n", c->ptr[i]);
    ns_free(&seen);
    free(toks);
    w_puts(w, "\n");
    w_puts(w, c->body.buf ? c->body.buf : "");
    if (g->n_syms && !c->train) {
        /* the extents this run had, data-dependent ones included */
        w_printf(w, "    if (dims_out != NULL) {\n"
                    "        int k;\n"
                    "        for (k = 0; k < %d; k++) dims_out[k] = dim[k];\n"
                    "    }\n", g->n_syms);
    }
    w_puts(w, "    return 0;\n}\n\n");
}

static void gen_train_source(Cgen *c, Cgen *ci, Writer *w);

/* --weights=file: the header check every API function runs (NAME_blob),
 * and NAME_check_weights, which reads the whole file (cgen_model.h and
 * cgen_files.c describe the header and the hash). */
static void gen_weights_check(const CgenModel *m, Writer *w)
{
    const char *N = m->name;
    w_printf(w, "/* The FNV-1a state after this model's identity (its ports and the blob's\n"
                " * layout); the blob's bytes continue it to %s_WEIGHTS_HASH. */\n"
                "static const uint64_t %s_weights_seed = UINT64_C(0x%016llx);\n\n",
             N, N, (unsigned long long)m->weights_seed);
    w_printf(w, "static uint64_t %s_le(const unsigned char *p, int n)\n{\n"
                "    uint64_t v = 0;\n"
                "    while (n-- > 0) v = v << 8 | p[n];\n"
                "    return v;\n}\n\n", N);
    w_printf(w, "/* The blob of a loaded weights file whose header is this model's (magic,\n"
                " * version, blob bytes and model hash; the blob itself is not read), else\n"
                " * NULL; also NULL when weights is NULL or not 8-byte aligned. */\n"
                "static const unsigned char *%s_blob(const void *weights)\n{\n"
                "    const unsigned char *p = (const unsigned char *)weights;\n"
                "    if (p == NULL || ((uintptr_t)p & 7u) != 0) return NULL;\n"
                "    if (memcmp(p, \"%s\", 8) != 0 || %s_le(p + 8, 4) != %s_WEIGHTS_FORMAT_VERSION ||\n"
                "        %s_le(p + 12, 4) != %s_WEIGHTS_HEADER_BYTES || %s_le(p + 16, 8) != (uint64_t)%s_WEIGHTS_BYTES ||\n"
                "        %s_le(p + 24, 8) != %s_WEIGHTS_HASH)\n"
                "        return NULL;\n"
                "    return p + %s_WEIGHTS_HEADER_BYTES;\n}\n\n",
             N, CGEN_WEIGHTS_MAGIC, N, N, N, N, N, N, N, N, N);
    w_printf(w, "int %s_check_weights(const void *data, size_t size)\n{\n"
                "    const unsigned char *p = (const unsigned char *)data;\n"
                "    uint64_t h = %s_weights_seed;\n"
                "    size_t i;\n"
                "    if (p == NULL || ((uintptr_t)p & 7u) != 0) return %s_WEIGHTS_ERR_POINTER;\n"
                "    if (memcmp(p, \"%s\", size < 8 ? size : 8) != 0) return %s_WEIGHTS_ERR_MAGIC;\n"
                "    if (size < %s_WEIGHTS_HEADER_BYTES) return %s_WEIGHTS_ERR_SIZE;\n"
                "    if (%s_le(p + 8, 4) != %s_WEIGHTS_FORMAT_VERSION || %s_le(p + 12, 4) != %s_WEIGHTS_HEADER_BYTES)\n"
                "        return %s_WEIGHTS_ERR_VERSION;\n"
                "    if (%s_le(p + 24, 8) != %s_WEIGHTS_HASH || %s_le(p + 16, 8) != (uint64_t)%s_WEIGHTS_BYTES)\n"
                "        return %s_WEIGHTS_ERR_MODEL;\n"
                "    if (size != (size_t)%s_WEIGHTS_FILE_BYTES) return %s_WEIGHTS_ERR_SIZE;\n"
                "    for (i = %s_WEIGHTS_HEADER_BYTES; i < size; i++) {\n"
                "        h ^= p[i];\n"
                "        h *= UINT64_C(0x%llx);\n"
                "    }\n"
                "    return h == %s_WEIGHTS_HASH ? %s_WEIGHTS_OK : %s_WEIGHTS_ERR_CORRUPT;\n}\n\n",
             N, N, N, CGEN_WEIGHTS_MAGIC, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N, N,
             (unsigned long long)CGEN_FNV_PRIME, N, N, N);
}

/* The prologue of an API function that takes a weights file: `blob` points
 * at its blob (NULL may stand for a model without weights). */
static void gen_blob_prologue(const CgenModel *m, Writer *w)
{
    const char *N = m->name;
    w_printf(w, "    const unsigned char *blob = %s_blob(weights);\n"
                "    if (blob == NULL && (%s_WEIGHTS_BYTES > 0 || weights != NULL)) return -1;\n", N, N);
}

void cgen_blob_prologue(const CgenModel *m, Writer *w) { gen_blob_prologue(m, w); }

static void gen_source(Cgen *c, Cgen *ci, Writer *w)
{
    const CgenModel *m = c->m;
    const Graph *g = c->g;
    const char *N = m->name;
    int file = m->o->weights == BACKEND_WEIGHTS_FILE;
    w_puts(w, "/* ");
    w_printf(w, "%s.c: generated by graphc from graph '", N);
    comment_text(w, g->name);
    w_printf(w, "'; do not edit.\n * %d nodes; arena %lld bytes; weights %lld bytes. */\n", g->n_nodes,
             (long long)g->arena_bytes, (long long)m->weights_bytes);
    w_puts(w, "#include <math.h>\n#include <stdint.h>\n#include <string.h>\n\n#include \"gcrt_base.h\"\n"
              "#include \"gc_thread_pool.h\"\n");
    if (m->runtime) w_puts(w, "/* the runtime kernels this model calls, private to it (static) */\n");
    if ((m->runtime & CGEN_RT_dwconv) && m->n_dw > 0 && m->n_dw <= CGEN_MAX_DW) {
        w_puts(w, "/* the depthwise kernel's SIMD specializations this model's calls take (gcrt_dwconv.h) */\n"
                  "#define GCRT_DW_VARIANTS (");
        for (int k = 0; k < m->n_dw; k++)
            w_printf(w, "%sGCRT_DW_VARIANT(%lld, %lld, %lld, %lld)", k ? " | " : "", (long long)m->dw[k][0],
                     (long long)m->dw[k][1], (long long)m->dw[k][2], (long long)m->dw[k][3]);
        w_puts(w, ")\n");
    }
    for (int u = 0; u < CGEN_RT_UNIT_COUNT; u++)
        if (m->runtime & (1u << u)) w_printf(w, "#include \"gcrt_%s.c\"\n", cgen_runtime_unit_name(u));
    if (m->ops_files) {
        w_puts(w, "/* the user operators this model calls (graphc --ops), copied from their files */\n"
                  "#if defined(__GNUC__)\n#pragma GCC diagnostic push\n"
                  "#pragma GCC diagnostic ignored \"-Wunused-parameter\"\n#endif\n");
        for (int k = 0; k < 32; k++)
            if (m->ops_files & (1u << k)) w_printf(w, "#include \"%s_ops_%d.c\"\n", N, k);
        w_puts(w, "#if defined(__GNUC__)\n#pragma GCC diagnostic pop\n#endif\n");
    }
    w_printf(w, "#include \"%s.h\"\n\n", N);
    if (file) gen_weights_check(m, w);
    if (ci) {
        gen_train_source(c, ci, w);
        return;
    }

    char fn[96];
    snprintf(fn, sizeof fn, "%s_schedule", N);
    if (g->n_syms) cgen_write_max_dims(g, m->name, w);
    gen_schedule(c, w, fn);

    /* NAME_run_v_parallel, NAME_run_v */
    w_printf(w, "int %s_run_v_parallel(const void *weights, void *arena, const void *const *inputs, void *const *outputs,\n"
                "    const GcThreadPool *pool)\n{\n", N);
    if (file) {
        gen_blob_prologue(m, w);
    } else {
        w_printf(w, "    const unsigned char *blob = (const unsigned char *)(weights != NULL ? weights : %s_weights);\n", N);
        w_printf(w, "    if (((uintptr_t)blob & 7u) != 0) return -1;\n");
    }
    if (g->arena_bytes > 0)
        w_printf(w, "    if (arena == NULL || ((uintptr_t)arena & 63u) != 0) return -1;\n");
    if (g->n_syms)
        w_printf(w, "    return %s_schedule(blob, (unsigned char *)arena, inputs, outputs, pool, %s_max_dims, NULL);\n}\n\n", N, N);
    else
        w_printf(w, "    return %s_schedule(blob, (unsigned char *)arena, inputs, outputs, pool);\n}\n\n", N);
    if (g->n_syms) cgen_write_run_shapes(m, w);
    w_printf(w, "int %s_run_v(const void *weights, void *arena, const void *const *inputs, void *const *outputs)\n{\n"
                "    return %s_run_v_parallel(weights, arena, inputs, outputs, NULL);\n}\n\n", N, N);

    /* NAME_run_parallel, NAME_run */
    for (int par = 1; par >= 0; par--) {
    w_printf(w, "int %s_run%s(", N, par ? "_parallel" : "");
    api_params(m, w);
    w_puts(w, par ? ", const GcThreadPool *pool)\n{\n" : ")\n{\n");
    w_printf(w, "    const void *inputs[%d];\n    void *outputs[%d];\n", g->n_inputs ? g->n_inputs : 1,
             g->n_outputs ? g->n_outputs : 1);
    if (!g->n_inputs) w_puts(w, "    inputs[0] = NULL;\n");
    if (!g->n_outputs) w_puts(w, "    outputs[0] = NULL;\n");
    for (int i = 0; i < g->n_inputs; i++) w_printf(w, "    inputs[%d] = (const void *)%s;\n", i, m->ins[i].param);
    for (int i = 0; i < g->n_outputs; i++) w_printf(w, "    outputs[%d] = (void *)%s;\n", i, m->outs[i].param);
    w_printf(w, "    return %s_run_v_parallel(%s, arena, inputs, outputs, %s);\n}\n%s", N, file ? "weights" : "NULL",
             par ? "pool" : "NULL", par ? "\n" : "");
    }
}

/* ---- training: NAME_init_state, NAME_train_step, NAME_infer_v ----------- */

/* The weights-pointer prologue shared by the training API functions: it
 * declares `blob`. */
static void train_weights_check(const CgenModel *m, Writer *w)
{
    if (m->o->weights == BACKEND_WEIGHTS_FILE) gen_blob_prologue(m, w);
    else w_printf(w, "    const unsigned char *blob = %s_weights;\n", m->name);
}

/* The training model's source after the includes: both schedules and the API. */
static void gen_train_source(Cgen *c, Cgen *ci, Writer *w)
{
    const CgenModel *m = c->m;
    const char *N = m->name;
    int file = m->o->weights == BACKEND_WEIGHTS_FILE;
    const char *wparam = file ? "const void *weights, " : "";
    char fn[96];
    snprintf(fn, sizeof fn, "%s_train_schedule", N);
    gen_schedule(c, w, fn);
    snprintf(fn, sizeof fn, "%s_infer_schedule", N);
    gen_schedule(ci, w, fn);

    w_printf(w, "int %s_init_state(%svoid *state)\n{\n", N, wparam);
    train_weights_check(m, w);
    w_puts(w, "    unsigned char *s = (unsigned char *)state;\n");
    w_puts(w, "    if (s == NULL || ((uintptr_t)s & 63u) != 0) return -1;\n");
    int reads_weights = 0;
    for (int i = 0; i < m->n_state; i++) {
        const Value *v = m->state[i];
        int64_t wo = cgen_const_offset(m, v), nb = value_bytes(v);
        w_puts(w, "    /* ");
        comment_text(w, v->name);
        if (wo >= 0) {
            w_printf(w, ": the model's value */\n    memcpy(s + %lld, blob + %lld, %lld);\n",
                     (long long)m->state_off[i], (long long)wo, (long long)nb);
            reads_weights = 1;
        } else {
            w_printf(w, ": zeros */\n    memset(s + %lld, 0, %lld);\n", (long long)m->state_off[i], (long long)nb);
        }
    }
    if (!reads_weights) w_puts(w, "    (void)blob;\n");
    w_puts(w, "    return 0;\n}\n\n");

    const Graph *pass[2] = {c->g, ci->g};
    const char *what[2] = {"train", "infer"};
    for (int k = 0; k < 2; k++) {
        if (k == 0)
            w_printf(w, "int %s_train_step(%svoid *state, void *arena, const void *const *inputs, void *const *outputs)\n{\n",
                     N, wparam);
        else
            w_printf(w, "int %s_infer_v(%sconst void *state, void *arena, const void *const *inputs, void *const *outputs)\n{\n",
                     N, wparam);
        train_weights_check(m, w);
        w_puts(w, "    if (state == NULL || ((uintptr_t)state & 63u) != 0) return -1;\n");
        if (pass[k]->arena_bytes > 0) w_puts(w, "    if (arena == NULL || ((uintptr_t)arena & 63u) != 0) return -1;\n");
        w_printf(w, "    return %s_%s_schedule(blob, (%sunsigned char *)state, (unsigned char *)arena,\n"
                    "        inputs, outputs, NULL);\n}\n%s",
                 N, what[k], k ? "const " : "", k ? "" : "\n");
    }
}

/* ---- NAME.h ------------------------------------------------------------- */

static void gen_port_defs(const CgenModel *m, Writer *w, const char *kind, const char *KIND, int i, const Value *v)
{
    const char *N = m->name;
    char sh[256];
    w_printf(w, "/* %s %d: '", kind, i);
    comment_text(w, v->name);
    w_printf(w, "' %s%s */\n", ir_dtype_name(v->dtype), ir_shape_str_g(m->g, &v->shape, sh, sizeof sh));
    w_printf(w, "#define %s_%s_%d_NAME \"", N, KIND, i);
    cgen_str_lit(w, v->name);
    w_printf(w, "\"\n#define %s_%s_%d_DTYPE \"%s\"\n", N, KIND, i, ir_dtype_name(v->dtype));
    w_printf(w, "#define %s_%s_%d_NPY_DESCR \"%s\"\n", N, KIND, i, cgen_npy_descr(v->dtype));
    w_printf(w, "#define %s_%s_%d_RANK %d\n", N, KIND, i, v->shape.rank);
    w_printf(w, "#define %s_%s_%d_DIMS {", N, KIND, i);
    for (int k = 0; k < v->shape.rank; k++) w_printf(w, "%s%lld", k ? ", " : "", (long long)v->shape.dims[k]);
    w_printf(w, "%s}\n", v->shape.rank ? "" : "1 /* rank 0: placeholder, no dims */");
    if (m->g->n_syms) {
        /* runtime shapes: _DIMS are the maxima; which runtime dim each dim is */
        w_printf(w, "#define %s_%s_%d_MAX_DIMS %s_%s_%d_DIMS\n", N, KIND, i, N, KIND, i);
        w_printf(w, "#define %s_%s_%d_DIM_SYMS {", N, KIND, i);
        for (int k = 0; k < v->shape.rank; k++) w_printf(w, "%s%d", k ? ", " : "", v->shape.sym[k] - 1);
        w_printf(w, "%s} /* -1: fixed, else the index of its runtime dim */\n", v->shape.rank ? "" : "-1");
    }
    w_printf(w, "#define %s_%s_%d_NUMEL %lld\n", N, KIND, i, (long long)ir_value_max_numel(v));
    w_printf(w, "#define %s_%s_%d_BYTES %lld\n\n", N, KIND, i, (long long)value_bytes(v));
}

/* --weights=file: the file's layout, the model hash and NAME_check_weights. */
static void gen_weights_file_defs(const CgenModel *m, Writer *w)
{
    const char *N = m->name;
    w_printf(w, "/* %s.weights, as the caller loads it: a %d-byte header, then the\n"
                " * %s_WEIGHTS_BYTES-byte blob. The header (little-endian): the magic\n"
                " * \"%s\" (8 bytes), the format version (u32), the header bytes (u32),\n"
                " * the blob bytes (u64), the model hash (u64: 64-bit FNV-1a over the\n"
                " * model's ports, the blob's layout and its bytes) and the model name (32\n"
                " * bytes, NUL-padded). Load the whole file into a buffer aligned to 64\n"
                " * bytes (8 at least: the blob is then 64-byte aligned too), check it once\n"
                " * with %s_check_weights, then pass it to the run functions, which\n"
                " * return -1 unless its header is this model's. */\n",
             N, CGEN_WEIGHTS_HEADER_BYTES, N, CGEN_WEIGHTS_MAGIC, N);
    w_printf(w, "#define %s_WEIGHTS_HEADER_BYTES %d\n", N, CGEN_WEIGHTS_HEADER_BYTES);
    w_printf(w, "#define %s_WEIGHTS_FILE_BYTES %lld\n", N, (long long)m->weights_bytes + CGEN_WEIGHTS_HEADER_BYTES);
    w_printf(w, "#define %s_WEIGHTS_FORMAT_VERSION %d\n", N, CGEN_WEIGHTS_FORMAT);
    w_printf(w, "#define %s_WEIGHTS_HASH UINT64_C(0x%016llx)\n\n", N, (unsigned long long)m->weights_hash);
    w_printf(w, "/* Checks a loaded weights file (size bytes at data) against this model:\n"
                " * %s_WEIGHTS_OK (0), or the first of these that applies. It reads every\n"
                " * byte (the blob must hash to %s_WEIGHTS_HASH). */\n"
                "#define %s_WEIGHTS_OK 0\n"
                "#define %s_WEIGHTS_ERR_POINTER 1 /* data is NULL or not 8-byte aligned */\n"
                "#define %s_WEIGHTS_ERR_MAGIC 2   /* not a graphc weights file */\n"
                "#define %s_WEIGHTS_ERR_SIZE 3    /* size is not %s_WEIGHTS_FILE_BYTES (truncated, or bytes after the blob) */\n"
                "#define %s_WEIGHTS_ERR_VERSION 4 /* another format version of the file */\n"
                "#define %s_WEIGHTS_ERR_MODEL 5   /* the weights of another model (its model hash or blob size differs) */\n"
                "#define %s_WEIGHTS_ERR_CORRUPT 6 /* the header is this model's, but the blob does not hash to it */\n"
                "int %s_check_weights(const void *data, size_t size);\n\n",
             N, N, N, N, N, N, N, N, N, N, N);
}

/* The training model's header (o->infer_graph set). */
static void gen_train_header(const CgenModel *m, Writer *w)
{
    const Graph *g = m->g, *ig = m->o->infer_graph;
    const char *N = m->name;
    int file = m->o->weights == BACKEND_WEIGHTS_FILE;
    const char *wparam = file ? "const void *weights, " : "";
    char guard[96], sh[256];
    snprintf(guard, sizeof guard, "GRAPHC_MODEL_%s_H", N);
    for (char *p = guard; *p; p++) *p = (char)toupper((unsigned char)*p);
    w_printf(w, "/* %s.h: generated by graphc --train from graph '", N);
    comment_text(w, g->name);
    w_puts(w, "'; do not edit.\n *\n");
    w_printf(w, " * Training in place, with no allocation and no global state:\n"
                " *   %s_init_state(state) fills a caller-provided state region of\n"
                " *     %s_STATE_BYTES bytes (64-byte aligned) with the model's parameters\n"
                " *     and zeroed optimizer slots;\n"
                " *   %s_train_step(state, arena, inputs, outputs) runs the forward pass,\n"
                " *     the backward pass and the optimizer update, which changes the\n"
                " *     parameters in the state region; outputs are the loss, then the\n"
                " *     model's outputs;\n"
                " *   %s_infer_v(state, arena, inputs, outputs) runs the forward pass on the\n"
                " *     parameters in the state region (the %s_INFER_* ports).\n"
                " * The arena (%s_ARENA_BYTES, 64-byte aligned, uninitialized) holds every\n"
                " * intermediate tensor of either. %s_STATE_<i>_* locate each parameter and\n"
                " * optimizer slot in the state region. Functions return 0, or -1 when a\n"
                " * region is NULL or misaligned%s.\n",
             N, N, N, N, N, N, N, file ? ", or the weights file's header is not this model's" : "");
    if (file)
        w_printf(w, " * Each function takes the loaded weights file (%s.weights) first; check it\n"
                    " * once with %s_check_weights.\n", N, N);
    w_puts(w, " * Tensors are dense, row-major, little-endian.\n");
    cgen_write_build_note(m, w);
    w_puts(w, " */\n");
    w_printf(w, "#ifndef %s\n#define %s\n\n#include <stddef.h>\n#include <stdint.h>\n\n", guard, guard);
    w_puts(w, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    int64_t ta = g->arena_bytes, ia = ig->arena_bytes;
    w_printf(w, "#define %s_STATE_BYTES %lld\n#define %s_STATE_ALIGN 64\n", N, (long long)m->state_bytes, N);
    w_printf(w, "#define %s_TRAIN_ARENA_BYTES %lld\n#define %s_INFER_ARENA_BYTES %lld\n", N, (long long)ta, N, (long long)ia);
    w_printf(w, "#define %s_ARENA_BYTES %lld\n#define %s_ARENA_ALIGN 64\n", N, (long long)(ta > ia ? ta : ia), N);
    w_printf(w, "#define %s_WEIGHTS_BYTES %lld\n", N, (long long)m->weights_bytes);
    w_printf(w, "#define %s_NUM_INPUTS %d\n#define %s_NUM_OUTPUTS %d\n", N, g->n_inputs, N, g->n_outputs);
    w_printf(w, "#define %s_INFER_NUM_INPUTS %d\n#define %s_INFER_NUM_OUTPUTS %d\n", N, ig->n_inputs, N, ig->n_outputs);
    w_printf(w, "#define %s_NUM_STATE %d\n\n", N, m->n_state);
    for (int i = 0; i < g->n_inputs; i++) gen_port_defs(m, w, "train_step input", "INPUT", i, g->inputs[i]);
    for (int i = 0; i < g->n_outputs; i++) gen_port_defs(m, w, "train_step output", "OUTPUT", i, g->outputs[i]);
    for (int i = 0; i < ig->n_inputs; i++) gen_port_defs(m, w, "infer input", "INFER_INPUT", i, ig->inputs[i]);
    for (int i = 0; i < ig->n_outputs; i++) gen_port_defs(m, w, "infer output", "INFER_OUTPUT", i, ig->outputs[i]);
    for (int i = 0; i < m->n_state; i++) {
        const Value *v = m->state[i];
        w_printf(w, "/* state %d: '", i);
        comment_text(w, v->name);
        w_printf(w, "' %s%s */\n#define %s_STATE_%d_NAME \"", ir_dtype_name(v->dtype), ir_shape_str(&v->shape, sh, sizeof sh), N, i);
        cgen_str_lit(w, v->name);
        w_printf(w, "\"\n#define %s_STATE_%d_DTYPE \"%s\"\n", N, i, ir_dtype_name(v->dtype));
        w_printf(w, "#define %s_STATE_%d_OFFSET %lld\n", N, i, (long long)m->state_off[i]);
        w_printf(w, "#define %s_STATE_%d_NUMEL %lld\n", N, i, (long long)ir_numel(&v->shape));
        w_printf(w, "#define %s_STATE_%d_BYTES %lld\n\n", N, i, (long long)value_bytes(v));
    }
    if (!file)
        w_printf(w, "/* The weights blob (%s_WEIGHTS_BYTES bytes, 64-byte aligned): the initial\n"
                    " * parameters and the constants. */\n"
                    "extern const unsigned char %s_weights[];\nextern const uint64_t %s_weights_size;\n\n",
                 N, N, N);
    else
        gen_weights_file_defs(m, w);
    w_printf(w, "/* Fills the state region: parameters from the model, optimizer slots and\n"
                " * the step counter zero. */\nint %s_init_state(%svoid *state);\n\n", N, wparam);
    w_printf(w, "/* One training step on one batch: %s_NUM_INPUTS inputs, %s_NUM_OUTPUTS\n"
                " * outputs (the loss first). */\n"
                "int %s_train_step(%svoid *state, void *arena, const void *const *inputs, void *const *outputs);\n\n",
             N, N, N, wparam);
    w_printf(w, "/* The forward pass on the trained parameters: %s_INFER_NUM_INPUTS inputs,\n"
                " * %s_INFER_NUM_OUTPUTS outputs. */\n"
                "int %s_infer_v(%sconst void *state, void *arena, const void *const *inputs, void *const *outputs);\n\n",
             N, N, N, wparam);
    w_puts(w, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}

static void gen_header(const CgenModel *m, Writer *w)
{
    if (m->o->infer_graph) {
        gen_train_header(m, w);
        return;
    }
    const Graph *g = m->g;
    const char *N = m->name;
    int file = m->o->weights == BACKEND_WEIGHTS_FILE;
    char guard[96];
    snprintf(guard, sizeof guard, "GRAPHC_MODEL_%s_H", N);
    for (char *p = guard; *p; p++) *p = (char)toupper((unsigned char)*p);
    w_printf(w, "/* %s.h: generated by graphc from graph '", N);
    comment_text(w, g->name);
    w_puts(w, "'; do not edit.\n *\n");
    w_printf(w, " * The model runs in a caller-provided arena of %s_ARENA_BYTES bytes that\n"
                " * must be 64-byte aligned (it may be NULL when %s_ARENA_BYTES is 0); it\n"
                " * holds every intermediate tensor and need not be initialized. Nothing\n"
                " * is allocated and no global state is written, so one arena per thread\n"
                " * makes the model reentrant.\n",
             N, N);
    if (file)
        w_printf(w, " * The weights file (%s.weights, %s_WEIGHTS_FILE_BYTES bytes) is loaded\n"
                    " * by the caller, checked with %s_check_weights and passed to every run;\n"
                    " * 64-byte alignment is recommended, 8 is required.\n", N, N, N);
    else
        w_printf(w, " * The weights are linked in as the constant %s_weights.\n", N);
    w_printf(w, " * Tensors are dense, row-major, little-endian; f16 and bf16 elements are\n"
                " * uint16_t bit patterns, bool elements are uint8_t 0/1.\n"
                " * The run functions return 0, or -1 when the arena (or the weights) is\n"
                " * NULL or misaligned%s.\n", file ? ", or the weights file's header is not this model's" : "");
    cgen_write_build_note(m, w);
    w_puts(w, " */\n");
    w_printf(w, "#ifndef %s\n#define %s\n\n#include <stddef.h>\n#include <stdint.h>\n\n#include \"gc_thread_pool.h\"\n\n",
             guard, guard);
    w_puts(w, "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n");
    w_printf(w, "#define %s_ARENA_BYTES %lld\n", N, (long long)g->arena_bytes);
    w_printf(w, "#define %s_ARENA_ALIGN 64\n", N);
    w_printf(w, "#define %s_WEIGHTS_BYTES %lld\n", N, (long long)m->weights_bytes);
    w_printf(w, "#define %s_NUM_INPUTS %d\n", N, g->n_inputs);
    w_printf(w, "#define %s_NUM_OUTPUTS %d\n\n", N, g->n_outputs);
    if (g->n_syms) cgen_write_dims_defs(g, m->name, w);
    for (int i = 0; i < g->n_inputs; i++) gen_port_defs(m, w, "input", "INPUT", i, g->inputs[i]);
    for (int i = 0; i < g->n_outputs; i++) gen_port_defs(m, w, "output", "OUTPUT", i, g->outputs[i]);
    if (!file)
        w_printf(w, "/* The weights blob (%s_WEIGHTS_BYTES bytes, 64-byte aligned). */\n"
                    "extern const unsigned char %s_weights[];\nextern const uint64_t %s_weights_size;\n\n",
                 N, N, N);
    else
        gen_weights_file_defs(m, w);
    w_printf(w, "/* Runs the model: inputs and outputs in graph order, each a dense buffer\n"
                " * of the dtype and shape above. */\nint %s_run(", N);
    api_params(m, w);
    w_puts(w, ");\n\n");
    w_printf(w, "/* The same with arrays of %s_NUM_INPUTS input and %s_NUM_OUTPUTS output\n"
                " * pointers; weights %s. */\n"
                "int %s_run_v(const void *weights, void *arena, const void *const *inputs, void *const *outputs);\n\n",
             N, N, file ? "is the loaded NAME.weights file" : "may be NULL (the linked-in blob)", N);
    w_printf(w, "/* The same two on a thread pool (gc_thread_pool.h; NULL runs serially):\n"
                " * each kernel splits its output tiles into tasks for pool->n_threads\n"
                " * threads; one that needs scratch runs at most %s_MAX_THREADS of them at\n"
                " * once. The results are bit-for-bit those of %s_run. */\n"
                "#define %s_HAS_RUN_PARALLEL 1\n#define %s_MAX_THREADS %d\nint %s_run_parallel(",
             N, N, N, N, cgen_max_threads(g), N);
    api_params(m, w);
    w_printf(w, ", const GcThreadPool *pool);\n"
                "int %s_run_v_parallel(const void *weights, void *arena, const void *const *inputs, void *const *outputs,\n"
                "    const GcThreadPool *pool);\n\n", N);
    if (g->n_syms)
        w_printf(w, "/* Runtime shapes: runs the model on inputs of the actual shapes in_dims[i]\n"
                    " * (in_dims[i][k]: dim k of input i, within the bounds above; fixed dims\n"
                    " * must be the model's, and a runtime dim the same wherever it appears).\n"
                    " * Every buffer is dense at its actual shape (output buffers may be sized\n"
                    " * for the maximum, _BYTES); out_dims[i] (NULL, or room for\n"
                    " * _OUTPUT_i_RANK dims) receives output i's actual shape. Returns 0,\n"
                    " * -1 as the run functions above, or %s_ERR_SHAPE when an input shape\n"
                    " * is outside the bounds or inconsistent (nothing is then run or written),\n"
                    " * or when a shape computed while running from input values (data-dependent\n"
                    " * dims: a Reshape's shape, NonZero's count) is invalid or beyond its bound\n"
                    " * (the run stops there; outputs are then incomplete).\n"
                    " * %s_run and %s_run_v run at the maximum shapes (_DIMS). */\n"
                    "#define %s_ERR_SHAPE (-2)\n"
                    "int %s_run_shapes(const void *weights, void *arena, const void *const *inputs, const int64_t *const *in_dims,\n"
                    "    void *const *outputs, int64_t *const *out_dims);\n\n", N, N, N, N, N);
    w_puts(w, "#ifdef __cplusplus\n}\n#endif\n\n#endif\n");
}

/* ---- cgen_write and the backend description -------------------------------- */

/* The per-graph part of a context: names, pointer table, update targets. */
static void cgen_ctx_init(Cgen *c, const Graph *g, CgenModel *m, int train)
{
    memset(c, 0, sizeof *c);
    c->train = train;
    c->g = g;
    c->m = m;
    w_init(&c->body);
    for (size_t i = 0; i < sizeof cgen_reserved / sizeof cgen_reserved[0]; i++) ns_add(&c->reserved, cgen_reserved[i]);
    for (size_t i = 0; i < sizeof cgen_libm / sizeof cgen_libm[0]; i++) {
        char buf[32];
        ns_add(&c->reserved, cgen_libm[i]);
        snprintf(buf, sizeof buf, "%sf", cgen_libm[i]);
        ns_add(&c->reserved, arena_strdup(&c->names_arena, buf));
        snprintf(buf, sizeof buf, "%sl", cgen_libm[i]);
        ns_add(&c->reserved, arena_strdup(&c->names_arena, buf));
    }
    size_t nv = (size_t)g->n_values + 1;
    c->ptr = calloc(nv, sizeof *c->ptr);
    c->touched = calloc(nv, 1);
    c->out_slot = malloc(nv * sizeof *c->out_slot);
    GC_ASSERT(c->ptr && c->touched && c->out_slot);
    for (int i = 0; i < g->n_values; i++) c->out_slot[i] = -1;
    for (int k = g->n_outputs - 1; k >= 0; k--) c->out_slot[g->outputs[k]->id] = k;
    if (g->n_syms) ns_add(&c->used, "dim"); /* the shape table of runtime shapes */
    for (int i = 0; i < g->n_values; i++) c->ptr[i] = tensor_name(c, g->values[i]->name);
    c->upd = calloc(nv, sizeof *c->upd);
    GC_ASSERT(c->upd);
    for (int k = 0; k < g->n_updates; k++) c->upd[g->updates[k].value->id] = g->updates[k].state;
}

static void cgen_ctx_fini(Cgen *c)
{
    w_free(&c->body);
    ns_free(&c->reserved);
    ns_free(&c->used);
    free(c->ptr);
    free(c->touched);
    free(c->out_slot);
    free(c->upd);
    for (int i = 0; i < c->n_derived; i++) {
        free((void *)c->derived[i]->data);
        free(c->derived[i]);
    }
    free(c->derived);
    free(c->derived_id);
    arena_free(&c->names_arena);
}

static void cgen_init(Cgen *c, const Graph *g, CgenModel *m, int train)
{
    cgen_ctx_init(c, g, m, train);

    /* API parameter names: their own namespace (only keywords and the two
     * fixed parameters are off limits). */
    NameSet params = {0};
    ns_add(&params, "arena");
    ns_add(&params, "weights");
    m->ins = calloc((size_t)g->n_inputs + 1, sizeof *m->ins);
    m->outs = calloc((size_t)g->n_outputs + 1, sizeof *m->outs);
    GC_ASSERT(m->ins && m->outs);
    for (int pass = 0; pass < 2; pass++) {
        int n = pass ? g->n_outputs : g->n_inputs;
        for (int i = 0; i < n; i++) {
            const Value *v = pass ? g->outputs[i] : g->inputs[i];
            char san[64];
            sanitize_ident(v->name, san);
            CgenPort *p = pass ? &m->outs[i] : &m->ins[i];
            p->v = v;
            p->param = unique_name(c, &params, san);
        }
    }
    ns_free(&params);
}

static void cgen_fini(Cgen *c, Cgen *ci, CgenModel *m)
{
    cgen_ctx_fini(c);
    if (ci->g) cgen_ctx_fini(ci);
    free(m->state);
    free(m->state_off);
    free(m->ins);
    free(m->outs);
    free(m->consts);
    free(m->const_off);
}

int cgen_check_name(const char *name, Diag *d)
{
    static const char *const suffix[] = {".h", ".c", "_main.c", "_weights.c", "_weights.S", "_weights.bin", ".weights", ".pc", ".cmake"};
    char san[64];
    if (!name || !*name) return diag_error(d, "the model needs a name");
    sanitize_ident(name, san);
    if (strcmp(san, name) != 0)
        return diag_error(d, "model name '%s' is not a C identifier of at most 40 characters (try '%s')", name, san);
    for (size_t f = 0; f < gc_runtime_files_count; f++)
        for (size_t k = 0; k < sizeof suffix / sizeof suffix[0]; k++) {
            if (strcmp(gc_runtime_files[f].name, "custom_op.h") == 0) continue; /* written as graphc/custom_op.h */
            char buf[128];
            snprintf(buf, sizeof buf, "%s%s", name, suffix[k]);
            if (strcmp(buf, gc_runtime_files[f].name) == 0)
                return diag_error(d, "model name '%s' would overwrite the runtime file '%s'; choose another name", name, buf);
        }
    return 0;
}

/* The texts of one output folder, rendered in memory. */
typedef struct CgenTexts {
    Writer src, hdr, mk, main, pc, cmake;
} CgenTexts;

static int render_with(const Graph *g, const BackendOptions *o, Cgen *c, Cgen *ci, CgenModel *m, CgenTexts *t,
                       const CgenEntry *table, Diag *d);

/* Renders NAME.c, NAME.h, the Makefile, NAME.pc, NAME.cmake and (emit_main)
 * NAME_main.c of g into
 * t, and lays out the weights in m; c and m are initialized here and t is
 * always initialized (the caller frees all three). 0, or -1 with a diagnostic. */
static int render(const Graph *g, const BackendOptions *o, Cgen *c, Cgen *ci, CgenModel *m, CgenTexts *t, Diag *d)
{
    GC_ASSERT(g && o && d && o->weights >= 0 && o->weights < BACKEND_WEIGHTS_COUNT);
    w_init(&t->src);
    w_init(&t->hdr);
    w_init(&t->mk);
    w_init(&t->main);
    w_init(&t->pc);
    w_init(&t->cmake);
    *m = (CgenModel){.g = g, .o = o, .name = o->name};
    const Graph *ig = o->infer_graph;
    memset(ci, 0, sizeof *ci);
    cgen_init(c, g, m, ig ? 1 : 0);
    if (ig) cgen_ctx_init(ci, ig, m, 2);
    CgenEntry *table = calloc((size_t)ir_op_count() + 1, sizeof *table);
    GC_ASSERT(table);
    cgen_build_table(table);
    int rc = render_with(g, o, c, ci, m, t, table, d);
    free(table);
    return rc;
}

static int render_with(const Graph *g, const BackendOptions *o, Cgen *c, Cgen *ci, CgenModel *m, CgenTexts *t,
                       const CgenEntry *table, Diag *d)
{
    const Graph *ig = o->infer_graph;
    for (int k = 0; k < (ig ? 2 : 1); k++) {
        const Graph *gg = k ? ig : g;
        for (int i = 0; i < gg->n_nodes; i++) {
            const OpDesc *od = ir_op(gg->nodes[i]->op);
            if (!table[gg->nodes[i]->op].emit) return cgen_supports(gg, gg->nodes[i], d);
            if (od->custom) m->ops_files |= 1u << od->custom->file;
        }
        if (gg->arena_bytes < 0) return diag_error(d, "the graph is not memory-planned");
    }
    if (cgen_check_name(o->name, d)) return -1;
    if (!ig && g->n_updates)
        return diag_error(d, "the graph updates state '%s' in place (an 'update' line): only a training step "
                             "(graphc compile --train) has a state region to update",
                          g->updates[0].state->name);
    if (ig) {
        if (o->emit_main) return diag_error(d, "--emit-main is not available with --train (call NAME_train_step from a program; see examples/train_digits)");
        layout_state(m, g);
        for (int i = 0; i < ig->n_values; i++)
            if (ig->values[i]->kind == VK_STATE && cgen_state_offset(m, ig->values[i]) < 0)
                return diag_error(d, "the inference pass reads state '%s', which the training step does not have", ig->values[i]->name);
    }
    if (gen_body(c, table, d)) return -1;
    if (ig && gen_body(ci, table, d)) return -1;
    m->runtime = cgen_runtime_closure(m->runtime);
    Cgen *cs[2] = {c, ci};
    layout_weights(cs, ig ? 2 : 1);
    if (o->weights == BACKEND_WEIGHTS_FILE) cgen_weights_hash(m);
    gen_source(c, ig ? ci : NULL, &t->src);
    gen_header(m, &t->hdr);
    cgen_write_makefile(m, &t->mk);
    cgen_write_pkgconfig(m, &t->pc);
    cgen_write_cmake(m, &t->cmake);
    if (o->emit_main) cgen_write_main(m, &t->main);
    return 0;
}

static void texts_free(CgenTexts *t)
{
    w_free(&t->src);
    w_free(&t->hdr);
    w_free(&t->mk);
    w_free(&t->main);
    w_free(&t->pc);
    w_free(&t->cmake);
}

int cgen_write(const Graph *g, const char *dir, const BackendOptions *o, Diag *d)
{
    CgenModel m;
    Cgen c, ci;
    CgenTexts t;
    int rc = render(g, o, &c, &ci, &m, &t, d);
    const char *name = o->name;
    char *tmp = NULL;
    if (!rc) {
        tmp = cgen_dir_begin(dir, d);
        rc = tmp ? 0 : -1;
    }
    char fname[96];
    if (!rc) {
        snprintf(fname, sizeof fname, "%s.c", name);
        rc = cgen_save(&t.src, tmp, fname, d);
    }
    if (!rc) {
        snprintf(fname, sizeof fname, "%s.h", name);
        rc = cgen_save(&t.hdr, tmp, fname, d);
    }
    if (!rc) rc = cgen_save(&t.mk, tmp, "Makefile", d);
    if (!rc) {
        snprintf(fname, sizeof fname, "%s.pc", name);
        rc = cgen_save(&t.pc, tmp, fname, d);
    }
    if (!rc) {
        snprintf(fname, sizeof fname, "%s.cmake", name);
        rc = cgen_save(&t.cmake, tmp, fname, d);
    }
    if (!rc && o->emit_main) {
        snprintf(fname, sizeof fname, "%s_main.c", name);
        rc = cgen_save(&t.main, tmp, fname, d);
    }
    if (!rc) rc = cgen_write_weights(&m, tmp, d);
    if (!rc) rc = cgen_write_runtime(&m, tmp, d);
    if (!rc) rc = cgen_dir_commit(tmp, dir, name, d);
    else if (tmp) cgen_rmtree(tmp);
    free(tmp);
    texts_free(&t);
    cgen_fini(&c, &ci, &m);
    return rc;
}

/* Backend.render: the texts cgen_write would save, one after the other,
 * each headed by a comment line "==> FILE <=="; no weights, no runtime files. */
static int cgen_render(const Graph *g, const BackendOptions *o, Writer *out, Diag *d)
{
    CgenModel m;
    Cgen c, ci;
    CgenTexts t;
    int rc = render(g, o, &c, &ci, &m, &t, d);
    if (!rc) {
        const Writer *parts[] = {&t.hdr, &t.src, &t.mk, &t.pc, &t.cmake, &t.main};
        const char *suffix[] = {".h", ".c", NULL, ".pc", ".cmake", "_main.c"};
        for (int k = 0; k < (o->emit_main ? 6 : 5); k++) {
            if (suffix[k]) w_printf(out, "/* ==> %s%s <== */\n", o->name, suffix[k]);
            else w_puts(out, "/* ==> Makefile <== */\n");
            if (parts[k]->len) w_printf(out, "%.*s", (int)parts[k]->len, parts[k]->buf);
        }
    }
    texts_free(&t);
    cgen_fini(&c, &ci, &m);
    return rc;
}

/* The C backend's workspace policy: the fast CPU kernels' task slots
 * (emit_cpu.c) where they apply, else what the op's emitter entry asks for
 * (im2col tiles, TopK keys, LU factors, RNN gates, quantized operands). */
static size_t cgen_workspace_bytes(const Graph *g, const Node *n)
{
    size_t b;
    if (cgen_cpu_workspace(g, n, cgen_max_threads(g), &b)) return b;
    CgenEntry e = cgen_entry(n->op);
    return e.workspace ? e.workspace(n) : 0;
}

const Backend backend_c = {
    .name = "c",
    .summary = "standalone C99 sources, a Makefile and the C runtime kernels the model calls",
    .supports = cgen_supports,
    .workspace = cgen_workspace_bytes,
    .kernel_note = cgen_cpu_kernel_note,
    .extra_reads = cgen_cpu_extra_reads,
    .stored_bytes = cgen_cpu_stored_bytes,
    .check_name = cgen_check_name,
    .write = cgen_write,
    .render = cgen_render,
};
