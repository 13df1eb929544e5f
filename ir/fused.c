/* fused.c — elementwise expressions over a node's inputs (see fused.h) and
 * the Fused op, whose one attribute `expr` is such an expression.
 *
 * Parsing is two steps. The syntax step builds a term tree; each op term
 * gets a Node in a private scratch graph that holds its attributes (set
 * through ir_set_attr, so defaults and value forms are the op's own). The
 * typed step binds the leaves to copies of the slot values (dtype, shape),
 * links the members' in/out Values and runs each member op's infer in
 * post-order; an error there is reported on the owner node with the term
 * and its offset in the text. Passes use the syntax step alone to rewrite
 * expressions (leaf substitution) and print them back canonically:
 * `Op[k=v, k=v](a, b)`, attributes that differ from the op's defaults only,
 * floats in the shortest form that reads back to the same double, so a
 * printed graph parses back byte for byte.
 *
 * Evaluation walks the output elements once; per element every member's
 * scalar_ref runs on the members before it (post-order), interiors rounded
 * to their dtypes as the generated code's typed locals round them.
 */
#include "fused.h"
#include "writer.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the term tree ------------------------------------------------------- */

typedef enum { T_SLOT, T_Y, T_ABSENT, T_OP } TermKind;

typedef struct Term {
    TermKind kind;
    int slot;  /* T_SLOT */
    int pos;   /* offset of the term in the text */
    Node *node; /* T_OP: the member (attributes; inputs bound later) */
    int n_args;
    struct Term **args;
} Term;

typedef struct Parser {
    const char *s, *p;
    Graph *scratch;
    const Node *owner;
    const char *attr;
    Diag *d;
    int depth; /* op terms open around the current position */
} Parser;

static int perr(Parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int perr(Parser *ps, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return diag_node_error(ps->d, ps->owner, "attribute '%s': %s", ps->attr, msg);
}

static void skip_ws(Parser *ps)
{
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

static int offset(const Parser *ps) { return (int)(ps->p - ps->s); }

/* Sets the attributes in text [a, e) ("k=v, k=v") on member n. */
static int parse_attrs(Parser *ps, Node *n, const char *a, const char *e, int pos)
{
    while (a < e) {
        while (a < e && (isspace((unsigned char)*a) || *a == ',')) a++;
        if (a >= e) break;
        const char *q = a;
        int depth = 0, quote = 0;
        while (q < e && (quote || depth || *q != ',')) {
            if (quote) { if (*q == '"') quote = 0; }
            else if (*q == '"') quote = 1;
            else if (*q == '[') depth++;
            else if (*q == ']') depth--;
            q++;
        }
        const char *eq = memchr(a, '=', (size_t)(q - a));
        if (!eq) return perr(ps, "attribute text '%.*s' of '%s' at offset %d is not key=value", (int)(q - a), a,
                             ir_op(n->op)->name, pos);
        char key[64], val[256];
        size_t kl = (size_t)(eq - a), vl = (size_t)(q - eq - 1);
        while (kl && isspace((unsigned char)a[kl - 1])) kl--;
        if (kl == 0 || kl >= sizeof key || vl >= sizeof val)
            return perr(ps, "bad attribute '%.*s' of '%s' at offset %d", (int)(q - a), a, ir_op(n->op)->name, pos);
        memcpy(key, a, kl);
        key[kl] = 0;
        memcpy(val, eq + 1, vl);
        val[vl] = 0;
        Diag inner = {0};
        if (ir_set_attr(ps->scratch, n, key, val, &inner)) {
            const char *m = strstr(inner.msg, "): ");
            return perr(ps, "'%s' at offset %d: %s", ir_op(n->op)->name, pos, m ? m + 3 : inner.msg);
        }
        a = q;
    }
    return 0;
}

static Term *new_term(Parser *ps, TermKind k, int pos)
{
    Term *t = ir_alloc(ps->scratch, sizeof *t);
    t->kind = k;
    t->pos = pos;
    return t;
}

static Term *parse_term(Parser *ps)
{
    skip_ws(ps);
    int pos = offset(ps);
    const char *p = ps->p;
    if (*p == '_') {
        ps->p++;
        return new_term(ps, T_ABSENT, pos);
    }
    if (*p == 'x' && isdigit((unsigned char)p[1])) {
        char *end;
        long k = strtol(p + 1, &end, 10);
        if (isalnum((unsigned char)*end) || k > 1000000) {
            perr(ps, "bad operand '%.*s' at offset %d", (int)(end - p), p, pos);
            return NULL;
        }
        ps->p = end;
        Term *t = new_term(ps, T_SLOT, pos);
        t->slot = (int)k;
        return t;
    }
    if (*p == 'y' && !isalnum((unsigned char)p[1]) && p[1] != '_') {
        ps->p++;
        return new_term(ps, T_Y, pos);
    }
    if (!isalpha((unsigned char)*p)) {
        if (*p) perr(ps, "unexpected '%c' at offset %d", *p, pos);
        else perr(ps, "missing operand at offset %d", pos);
        return NULL;
    }
    const char *e = p;
    while (isalnum((unsigned char)*e) || *e == '_') e++;
    char name[64];
    if ((size_t)(e - p) >= sizeof name) {
        perr(ps, "unknown op '%.*s' at offset %d", (int)(e - p), p, pos);
        return NULL;
    }
    memcpy(name, p, (size_t)(e - p));
    name[e - p] = 0;
    int op = ir_op_lookup(name);
    if (op < 0) {
        perr(ps, "unknown op '%s' at offset %d", name, pos);
        return NULL;
    }
    const OpDesc *od = ir_op(op);
    if (!od->scalar_expr) {
        perr(ps, "op '%s' at offset %d has no scalar expression", name, pos);
        return NULL;
    }
    ps->p = e;
    skip_ws(ps);
    const char *attr_a = NULL, *attr_e = NULL;
    if (*ps->p == '[') {
        attr_a = ++ps->p;
        int depth = 0, quote = 0;
        while (*ps->p && (quote || depth || *ps->p != ']')) {
            if (quote) { if (*ps->p == '"') quote = 0; }
            else if (*ps->p == '"') quote = 1;
            else if (*ps->p == '[') depth++;
            else if (*ps->p == ']') depth--;
            ps->p++;
        }
        if (!*ps->p) {
            perr(ps, "missing ']' after the attributes of '%s' at offset %d", name, pos);
            return NULL;
        }
        attr_e = ps->p++;
        skip_ws(ps);
    }
    if (*ps->p != '(') {
        perr(ps, "expected '(' after '%s' at offset %d", name, pos);
        return NULL;
    }
    if (ps->depth == FUSED_PARSE_MAX_DEPTH) {
        perr(ps, "'%s' at offset %d nests deeper than %d ops", name, pos, FUSED_PARSE_MAX_DEPTH);
        return NULL;
    }
    ps->p++;
    Term *args[64];
    int n = 0;
    ps->depth++;
    for (;;) {
        if (n == 64) {
            perr(ps, "too many operands for '%s' at offset %d", name, pos);
            return NULL;
        }
        if (!(args[n++] = parse_term(ps))) return NULL;
        skip_ws(ps);
        if (*ps->p == ',') { ps->p++; continue; }
        if (*ps->p == ')') { ps->p++; break; }
        if (*ps->p) perr(ps, "expected ',' or ')' at offset %d", offset(ps));
        else perr(ps, "missing ')' for '%s' at offset %d", name, pos);
        return NULL;
    }
    ps->depth--;
    if (n < od->min_in || (od->max_in >= 0 && n > od->max_in)) {
        if (od->max_in < 0) perr(ps, "'%s' at offset %d takes at least %d operand%s, got %d", name, pos, od->min_in,
                                 od->min_in == 1 ? "" : "s", n);
        else if (od->min_in == od->max_in)
            perr(ps, "'%s' at offset %d takes %d operand%s, got %d", name, pos, od->min_in,
                 od->min_in == 1 ? "" : "s", n);
        else perr(ps, "'%s' at offset %d takes %d to %d operands, got %d", name, pos, od->min_in, od->max_in, n);
        return NULL;
    }
    Term *t = new_term(ps, T_OP, pos);
    char nname[96];
    snprintf(nname, sizeof nname, "%s@%d", name, pos);
    Value **nulls = ir_alloc(ps->scratch, sizeof(Value *) * (size_t)n);
    t->node = ir_add_node(ps->scratch, op, nname, nulls, n, 1, NULL);
    t->n_args = n;
    t->args = ir_alloc(ps->scratch, sizeof(Term *) * (size_t)n);
    memcpy(t->args, args, sizeof(Term *) * (size_t)n);
    if (attr_a && parse_attrs(ps, t->node, attr_a, attr_e, pos)) return NULL;
    return t;
}

/* The syntax step: the tree of the whole text, or NULL with a diagnostic. */
static Term *parse_tree(Parser *ps)
{
    Term *t = parse_term(ps);
    if (!t) return NULL;
    skip_ws(ps);
    if (*ps->p) {
        perr(ps, "unexpected '%c' at offset %d", *ps->p, offset(ps));
        return NULL;
    }
    if (t->kind != T_OP) {
        perr(ps, "the expression must apply at least one op");
        return NULL;
    }
    return t;
}

/* ---- canonical printing --------------------------------------------------- */

/* Shortest decimal that reads back as v. */
static void fmt_num(char *buf, size_t cap, double v)
{
    if (isnan(v)) { snprintf(buf, cap, "nan"); return; }
    if (isinf(v)) { snprintf(buf, cap, v < 0 ? "-inf" : "inf"); return; }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) break;
    }
    if (!strpbrk(buf, ".e")) strncat(buf, ".0", cap - strlen(buf) - 1);
}

static int same_f(double a, double b)
{
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    return a == b && !signbit(a) == !signbit(b);
}

static int same_attr(AttrKind k, const AttrVal *a, const AttrVal *b)
{
    if (a->set != b->set) return 0;
    switch (k) {
    case ATTR_INT: return a->i == b->i;
    case ATTR_FLOAT: return same_f(a->f, b->f);
    case ATTR_STRING: return a->s && b->s && strcmp(a->s, b->s) == 0;
    case ATTR_INTS:
    case ATTR_FLOATS:
        if (a->n != b->n) return 0;
        for (int i = 0; i < a->n; i++)
            if (k == ATTR_INTS ? a->ints[i] != b->ints[i] : !same_f(a->floats[i], b->floats[i])) return 0;
        return 1;
    case ATTR_TENSOR: return 0;
    }
    return 0;
}

/* Writes "[k=v, k=v]" for n's attributes that differ from def's; -1 when
 * one cannot be written in the expression text (tensors, odd strings). */
static int print_attrs(Writer *w, const Node *n, const Node *def)
{
    const OpDesc *od = ir_op(n->op);
    int first = 1;
    char b[64];
    for (int k = 0; k < od->n_attrs; k++) {
        const AttrVal *a = &n->attrs[k];
        AttrKind kind = od->attrs[k].kind;
        if (!a->set || same_attr(kind, a, &def->attrs[k])) continue;
        w_puts(w, first ? "[" : ", ");
        first = 0;
        w_printf(w, "%s=", od->attrs[k].name);
        switch (kind) {
        case ATTR_INT: w_printf(w, "%lld", (long long)a->i); break;
        case ATTR_FLOAT: fmt_num(b, sizeof b, a->f); w_puts(w, b); break;
        case ATTR_STRING:
            if (strpbrk(a->s, "\"[](),=\\") || !*a->s) return -1;
            w_puts(w, a->s);
            break;
        case ATTR_INTS:
        case ATTR_FLOATS:
            w_puts(w, "[");
            for (int i = 0; i < a->n; i++) {
                if (i) w_puts(w, ",");
                if (kind == ATTR_INTS) {
                    w_printf(w, "%lld", (long long)a->ints[i]);
                } else {
                    fmt_num(b, sizeof b, a->floats[i]);
                    w_puts(w, b);
                }
            }
            w_puts(w, "]");
            break;
        case ATTR_TENSOR: return -1;
        }
    }
    if (!first) w_puts(w, "]");
    return 0;
}

static int print_op_head(Writer *w, Graph *scratch, const Node *n)
{
    Node *def = ir_add_node(scratch, n->op, "default", NULL, 0, 1, NULL);
    w_puts(w, ir_op(n->op)->name);
    return print_attrs(w, n, def);
}

int ir_fused_print_attrs(Writer *w, const Node *m)
{
    Graph *scratch = ir_graph_new("fused");
    int rc = print_attrs(w, m, ir_add_node(scratch, m->op, "default", NULL, 0, 1, NULL));
    ir_graph_free(scratch);
    return rc;
}

struct FusedPrinter {
    Graph *scratch;
    Node *def[OP_COUNT]; /* each op's default node, made on first use */
};

FusedPrinter *ir_fused_printer_new(void)
{
    FusedPrinter *fp = calloc(1, sizeof *fp);
    GC_ASSERT(fp);
    fp->scratch = ir_graph_new("fused");
    return fp;
}

void ir_fused_printer_free(FusedPrinter *fp)
{
    if (!fp) return;
    ir_graph_free(fp->scratch);
    free(fp);
}

int ir_fused_print_head(FusedPrinter *fp, Writer *w, const Node *m)
{
    GC_ASSERT(m->op >= 0 && m->op < OP_COUNT); /* members have scalar expressions: built-in ops */
    if (!fp->def[m->op]) fp->def[m->op] = ir_add_node(fp->scratch, m->op, "default", NULL, 0, 1, NULL);
    w_puts(w, ir_op(m->op)->name);
    return print_attrs(w, m, fp->def[m->op]);
}

static int print_term(Writer *w, Graph *scratch, const Term *t, const char *const *repl, int n_repl,
                      const char *repl_y)
{
    switch (t->kind) {
    case T_ABSENT: w_puts(w, "_"); return 0;
    case T_Y: w_puts(w, repl_y ? repl_y : "y"); return 0;
    case T_SLOT:
        if (t->slot < n_repl && repl[t->slot]) w_puts(w, repl[t->slot]);
        else w_printf(w, "x%d", t->slot);
        return 0;
    case T_OP:
        if (print_op_head(w, scratch, t->node)) return -1;
        w_puts(w, "(");
        for (int j = 0; j < t->n_args; j++) {
            if (j) w_puts(w, ", ");
            if (print_term(w, scratch, t->args[j], repl, n_repl, repl_y)) return -1;
        }
        w_puts(w, ")");
        return 0;
    }
    return -1;
}

static char *take(Writer *w)
{
    char *s = w->buf ? w->buf : calloc(1, 1);
    GC_ASSERT(s);
    return s;
}

char *ir_fused_subst(const char *expr, const char *const *repl, int n_repl, const char *repl_y)
{
    Graph *scratch = ir_graph_new("fused");
    Parser ps = {expr, expr, scratch, NULL, "expr", NULL, 0};
    Term *t = parse_tree(&ps);
    Writer w;
    w_init(&w);
    char *out = NULL;
    if (t && print_term(&w, scratch, t, repl, n_repl, repl_y) == 0) out = take(&w);
    else w_free(&w);
    ir_graph_free(scratch);
    return out;
}

char *ir_fused_node_expr(const Node *n)
{
    if (n->op == OP_Fused) {
        const char *s = n->attrs[FUSED_EXPR].s;
        char *c = malloc(strlen(s) + 1);
        GC_ASSERT(c);
        return strcpy(c, s);
    }
    if (!ir_op(n->op)->scalar_expr || n->n_out != 1) return NULL;
    Graph *scratch = ir_graph_new("fused");
    Writer w;
    w_init(&w);
    int rc = print_op_head(&w, scratch, n);
    w_puts(&w, "(");
    for (int j = 0; j < n->n_in; j++) {
        if (j) w_puts(&w, ", ");
        if (n->in[j]) w_printf(&w, "x%d", j);
        else w_puts(&w, "_");
    }
    w_puts(&w, ")");
    ir_graph_free(scratch);
    if (rc) {
        w_free(&w);
        return NULL;
    }
    return take(&w);
}

/* ---- the typed step ------------------------------------------------------ */

typedef struct Binder {
    Parser *ps;
    FusedExpr *fx;
    const Value *const *slots;
    Value **slot_vals; /* scratch copies, made on first use */
    int y_slot;
    int cap;
} Binder;

static int bind_leaf(Binder *b, const Term *t, int *slot)
{
    Parser *ps = b->ps;
    int k;
    if (t->kind == T_Y) {
        if (b->y_slot < 0) return perr(ps, "'y' at offset %d is only allowed in an epilogue", t->pos);
        k = b->y_slot;
    } else {
        k = t->slot;
        int n_inputs = b->y_slot >= 0 ? b->y_slot : b->fx->n_slots;
        if (k >= n_inputs)
            return perr(ps, "'x%d' at offset %d refers to input %d, but the node has %d input%s", k, t->pos, k,
                        n_inputs, n_inputs == 1 ? "" : "s");
        if (!b->slots[k]) return perr(ps, "'x%d' at offset %d refers to an absent input", k, t->pos);
    }
    if (!b->slot_vals[k]) {
        char nm[32];
        snprintf(nm, sizeof nm, k == b->y_slot ? "y" : "x%d", k);
        b->slot_vals[k] = ir_add_input(ps->scratch, nm, b->slots[k]->dtype, &b->slots[k]->shape);
    }
    b->fx->slot_used[k] = 1;
    *slot = k;
    return 0;
}

/* Binds the operands of op term t (post-order) and infers it. */
static int bind_op(Binder *b, const Term *t)
{
    Parser *ps = b->ps;
    FusedExpr *fx = b->fx;
    Node *n = t->node;
    FxSrc *src = ir_alloc(ps->scratch, sizeof(FxSrc) * (size_t)t->n_args);
    for (int j = 0; j < t->n_args; j++) {
        const Term *a = t->args[j];
        if (a->kind == T_OP) {
            if (bind_op(b, a)) return -1;
            src[j].kind = FX_MEMBER;
            src[j].idx = fx->n_members - 1;
            n->in[j] = fx->members[fx->n_members - 1]->out[0];
        } else if (a->kind == T_ABSENT) {
            src[j].kind = FX_ABSENT;
            n->in[j] = NULL;
        } else {
            if (bind_leaf(b, a, &src[j].idx)) return -1;
            src[j].kind = FX_SLOT;
            n->in[j] = b->slot_vals[src[j].idx];
        }
    }
    Diag inner = {0};
    if (ir_op(n->op)->infer(n, &inner)) {
        const char *m = strstr(inner.msg, "): ");
        return perr(ps, "term '%s' at offset %d: %s", ir_op(n->op)->name, t->pos, m ? m + 3 : inner.msg);
    }
    if (fx->n_members == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 8;
        Node **nm = ir_alloc(ps->scratch, sizeof(Node *) * (size_t)b->cap);
        FxSrc **ns = ir_alloc(ps->scratch, sizeof(FxSrc *) * (size_t)b->cap);
        if (fx->n_members) {
            memcpy(nm, fx->members, sizeof(Node *) * (size_t)fx->n_members);
            memcpy(ns, fx->src, sizeof(FxSrc *) * (size_t)fx->n_members);
        }
        fx->members = nm;
        fx->src = ns;
    }
    fx->members[fx->n_members] = n;
    fx->src[fx->n_members] = src;
    fx->n_members++;
    return 0;
}

int ir_fused_parse(const Node *owner, const char *attr, const char *expr, const Value *const *slots, int n_slots,
                   int y_slot, FusedExpr *fx, Diag *d)
{
    memset(fx, 0, sizeof *fx);
    fx->scratch = ir_graph_new("fused");
    fx->n_slots = n_slots;
    fx->slot_used = ir_alloc(fx->scratch, (size_t)(n_slots ? n_slots : 1));
    Parser ps = {expr, expr, fx->scratch, owner, attr, d, 0};
    Binder b = {&ps, fx, slots, ir_alloc(fx->scratch, sizeof(Value *) * (size_t)(n_slots ? n_slots : 1)), y_slot, 0};
    Term *t = parse_tree(&ps);
    if (!t || bind_op(&b, t)) goto fail;
    return 0;
fail:
    ir_fused_free(fx);
    return -1;
}

void ir_fused_free(FusedExpr *fx)
{
    if (fx->scratch) ir_graph_free(fx->scratch);
    memset(fx, 0, sizeof *fx);
}

const Value *ir_fused_result(const FusedExpr *fx) { return fx->members[fx->n_members - 1]->out[0]; }

/* ---- evaluation ----------------------------------------------------------- */

void ir_fused_eval(const FusedExpr *fx, const Shape *os, const double *const *slot_data, double *out)
{
    int r = os->rank, ns = fx->n_slots, nm = fx->n_members;
    int64_t total = ir_numel(os);
    int64_t (*st)[IR_MAX_RANK] = calloc((size_t)(ns ? ns : 1), sizeof *st);
    double *sv = calloc((size_t)(ns ? ns : 1), sizeof(double));
    double *mv = calloc((size_t)nm, sizeof(double));
    double args[64];
    GC_ASSERT(st && sv && mv);
    /* slot shapes come from the scratch leaf values of the members */
    for (int m = 0; m < nm; m++)
        for (int j = 0; j < fx->members[m]->n_in; j++) {
            if (fx->src[m][j].kind != FX_SLOT) continue;
            const Shape *s = &fx->members[m]->in[j]->shape;
            int k = fx->src[m][j].idx;
            int64_t acc = 1;
            for (int q = s->rank - 1; q >= 0; q--) {
                int o = r - s->rank + q;
                GC_ASSERT(o >= 0);
                st[k][o] = s->dims[q] == 1 ? 0 : acc;
                acc *= s->dims[q];
            }
        }
    int64_t idx[IR_MAX_RANK] = {0};
    for (int64_t e = 0; e < total; e++) {
        for (int k = 0; k < ns; k++) {
            if (!fx->slot_used[k]) continue;
            int64_t off = 0;
            for (int q = 0; q < r; q++) off += idx[q] * st[k][q];
            sv[k] = slot_data[k][off];
        }
        for (int m = 0; m < nm; m++) {
            const Node *n = fx->members[m];
            for (int j = 0; j < n->n_in; j++) {
                const FxSrc *s = &fx->src[m][j];
                args[j] = s->kind == FX_SLOT ? sv[s->idx] : s->kind == FX_MEMBER ? mv[s->idx] : 0;
            }
            double v = ir_op(n->op)->scalar_ref(n, args);
            mv[m] = m + 1 < nm ? ir_round_to(n->out[0]->dtype, v) : v;
        }
        out[e] = mv[nm - 1];
        for (int q = r - 1; q >= 0; q--) {
            if (++idx[q] < os->dims[q]) break;
            idx[q] = 0;
        }
    }
    free(st);
    free(sv);
    free(mv);
}

/* ---- epilogues (Conv, Gemm, MatMul) -------------------------------------- */

const char *ir_epilogue(const Node *n)
{
    int ei = ir_attr_index(n, "epilogue"); /* Conv, Gemm and MatMul keep it at different indices */
    return ei >= 0 && n->attrs[ei].set ? n->attrs[ei].s : NULL;
}

int ir_fused_parse_node(const Node *n, FusedExpr *fx, Diag *d)
{
    if (n->op == OP_Fused)
        return ir_fused_parse(n, "expr", n->attrs[FUSED_EXPR].s, (const Value *const *)n->in, n->n_in, -1, fx, d);
    const char *epi = ir_epilogue(n);
    GC_ASSERT(epi);
    /* slots: the node's inputs, then y (a copy of output 0) */
    const Value **slots = malloc(sizeof(Value *) * (size_t)(n->n_in + 1));
    GC_ASSERT(slots);
    for (int j = 0; j < n->n_in; j++) slots[j] = n->in[j];
    Value y = *n->out[0];
    slots[n->n_in] = &y;
    int rc = ir_fused_parse(n, "epilogue", epi, slots, n->n_in + 1, n->n_in, fx, d);
    free(slots);
    return rc;
}

int ir_epilogue_infer(Node *n, int n_own, Diag *d)
{
    int ei = ir_attr_index(n, "epilogue");
    GC_ASSERT(ei >= 0);
    const AttrVal *a = &n->attrs[ei];
    if (!a->set) {
        if (n->n_in > n_own)
            return diag_node_error(d, n, "inputs past the first %d are epilogue operands and need attribute 'epilogue'",
                                   n_own);
        return 0;
    }
    for (int j = n_own; j < n->n_in; j++)
        if (!n->in[j]) return diag_node_error(d, n, "epilogue input %d is absent", j);
    FusedExpr fx;
    if (ir_fused_parse_node(n, &fx, d)) return -1;
    int rc = 0;
    const Value *r = ir_fused_result(&fx);
    char b1[128], b2[128];
    if (r->dtype != n->out[0]->dtype || !ir_shape_eq(&r->shape, &n->out[0]->shape)) {
        rc = diag_node_error(d, n, "attribute 'epilogue' gives %s%s but the op's result is %s%s",
                             ir_dtype_name(r->dtype), ir_shape_str(&r->shape, b1, sizeof b1),
                             ir_dtype_name(n->out[0]->dtype), ir_shape_str(&n->out[0]->shape, b2, sizeof b2));
    }
    for (int j = n_own; j < n->n_in && !rc; j++)
        if (!fx.slot_used[j])
            rc = diag_node_error(d, n, "input %d is an epilogue operand but attribute 'epilogue' does not use it", j);
    ir_fused_free(&fx);
    return rc;
}

int ir_epilogue_first(OpKind op)
{
    const OpDesc *od = ir_op(op);
    char nm[16];
    for (int k = 0; k < od->max_in && od->in_names; k++) {
        snprintf(nm, sizeof nm, "x%d", k);
        if (strcmp(od->in_names[k], nm) == 0) return k;
    }
    return -1;
}

int ir_epilogue_eval(const Node *n, const double *const *in, double *out, Diag *d)
{
    if (!ir_epilogue(n)) return 0;
    FusedExpr fx;
    if (ir_fused_parse_node(n, &fx, d)) return -1;
    const Shape *os = &n->out[0]->shape;
    int64_t total = ir_numel(os);
    for (int64_t e = 0; e < total; e++) out[e] = ir_round_to(n->out[0]->dtype, out[e]);
    const double **data = malloc(sizeof(double *) * (size_t)(n->n_in + 1));
    GC_ASSERT(data);
    for (int j = 0; j < n->n_in; j++) data[j] = in[j];
    data[n->n_in] = out;
    ir_fused_eval(&fx, os, data, out);
    free(data);
    ir_fused_free(&fx);
    return 0;
}

/* ---- the Fused op ----------------------------------------------------------- */

static int fused_infer(Node *n, Diag *d)
{
    if (n->n_out != 1) return diag_node_error(d, n, "expects 1 output, got %d", n->n_out);
    if (!n->attrs[FUSED_EXPR].set) return diag_node_error(d, n, "required attribute 'expr' is missing");
    FusedExpr fx;
    if (ir_fused_parse_node(n, &fx, d)) return -1;
    int rc = 0;
    for (int j = 0; j < n->n_in && !rc; j++)
        if (n->in[j] && !fx.slot_used[j])
            rc = diag_node_error(d, n, "input 'x%d' is not used by attribute 'expr'", j);
    if (!rc) {
        const Value *r = ir_fused_result(&fx);
        ir_set_out(n, 0, r->dtype, &r->shape);
    }
    ir_fused_free(&fx);
    return rc;
}

static int fused_eval(const Node *n, const double *const *in, double *const *out, Diag *d)
{
    FusedExpr fx;
    if (ir_fused_parse_node(n, &fx, d)) return -1;
    ir_fused_eval(&fx, &n->out[0]->shape, in, out[0]);
    ir_fused_free(&fx);
    return 0;
}

static const AttrSpec fused_attrs[] = {[FUSED_EXPR] = {"expr", ATTR_STRING, NULL, 1}};
OP_ATTRS_CHECK(fused_attrs, FUSED_COUNT);
static const char *const fused_in[FUSED_MAX_IN] = {"x0", "x1", "x2",  "x3",  "x4",  "x5",  "x6",  "x7",
                                                   "x8", "x9", "x10", "x11", "x12", "x13", "x14", "x15"};
static const char *const fused_out[] = {"y"};
static const InplacePair fused_inplace[FUSED_MAX_IN] = {
    {0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}, {5, 0}, {6, 0}, {7, 0},
    {8, 0}, {9, 0}, {10, 0}, {11, 0}, {12, 0}, {13, 0}, {14, 0}, {15, 0},
};

const OpDesc op_Fused = {
    .name = "Fused",
    .min_in = 1, .max_in = FUSED_MAX_IN, .in_names = fused_in,
    .min_out = 1, .max_out = 1, .out_names = fused_out,
    OP_ATTRS(fused_attrs),
    .infer = fused_infer,
    .infer_sym = ir_sym_broadcast,
    .inplace = fused_inplace, .n_inplace = FUSED_MAX_IN,
    .eval = fused_eval,
};
