/* symdim.c — the graph's table of symbolic dimensions (runtime shapes).
 *
 * A symbolic dimension is known only at run time but bounded at compile
 * time. Shapes keep the bound in dims[i] (so every size computed from dims,
 * memory planning first, is the maximum) and the symbol in sym[i], an index
 * into Graph.syms. SYM_VAR symbols are named by the model (an ONNX
 * dim_param, `T<=64` in the text IR) and take their value from the actual
 * input shapes; derived symbols (sum, product, floor division, min, max of
 * earlier symbols and constants) are evaluated from them in table order, so
 * one pass over the table computes every extent. Derived symbols are
 * interned: asking twice for the same expression gives the same symbol, so
 * two dims computed the same way compare equal.
 *
 * ir_sym_specialize turns a symbolic graph into the static graph of one set
 * of input shapes: the interpreter runs that (graph run), so every op's
 * reference evaluation works unchanged on the actual extents.
 */
#include "ir.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const IrSym *ir_sym(const Graph *g, int32_t k)
{
    GC_ASSERT(k >= 1 && k <= g->n_syms);
    return &g->syms[k - 1];
}

int32_t ir_sym_find(const Graph *g, const char *name)
{
    for (int i = 0; i < g->n_syms; i++)
        if (g->syms[i].kind == SYM_VAR && strcmp(g->syms[i].name, name) == 0) return i + 1;
    return 0;
}

static int32_t push_sym(Graph *g, const IrSym *s)
{
    if (g->n_syms == g->cap_syms) {
        int cap = g->cap_syms ? 2 * g->cap_syms : 8;
        IrSym *t = ir_alloc(g, sizeof *t * (size_t)cap);
        if (g->n_syms) memcpy(t, g->syms, sizeof *t * (size_t)g->n_syms);
        g->syms = t;
        g->cap_syms = cap;
    }
    g->syms[g->n_syms++] = *s;
    return g->n_syms;
}

int32_t ir_sym_var(Graph *g, const char *name, int64_t lo, int64_t hi, Diag *d)
{
    int32_t k = ir_sym_find(g, name);
    if (k) {
        const IrSym *s = ir_sym(g, k);
        if (s->lo != lo || s->hi != hi)
            return diag_error(d, "symbolic dim '%s' is bounded by %lld..%lld and by %lld..%lld", name,
                              (long long)s->lo, (long long)s->hi, (long long)lo, (long long)hi);
        return k;
    }
    IrSym s = {0};
    s.name = ir_strdup(g, name);
    s.lo = lo;
    s.hi = hi;
    s.kind = SYM_VAR;
    return push_sym(g, &s);
}

static int64_t term_lo(const Graph *g, IrSymTerm t) { return t.sym ? ir_sym(g, t.sym)->lo : t.c; }
static int64_t term_hi(const Graph *g, IrSymTerm t) { return t.sym ? ir_sym(g, t.sym)->hi : t.c; }

static int64_t apply(IrSymKind k, int64_t a, int64_t b)
{
    switch (k) {
    case SYM_ADD: return a + b;
    case SYM_MUL: return a * b;
    case SYM_DIV: return b ? a / b : 0;
    case SYM_MIN: return a < b ? a : b;
    case SYM_MAX: return a > b ? a : b;
    case SYM_VAR:
    case SYM_DATA: break;
    }
    GC_ASSERT(0 && "not a derived symbol");
    return 0;
}

static const char *const kind_op[] = {"", "+", "*", "/", "min", "max", ""};

static void term_str(const Graph *g, IrSymTerm t, char *buf, size_t cap)
{
    if (t.sym) snprintf(buf, cap, "%s", ir_sym(g, t.sym)->name);
    else snprintf(buf, cap, "%lld", (long long)t.c);
}

int32_t ir_sym_derive(Graph *g, IrSymKind kind, IrSymTerm a, IrSymTerm b)
{
    GC_ASSERT(kind != SYM_VAR);
    for (int i = 0; i < g->n_syms; i++) {
        const IrSym *s = &g->syms[i];
        if (s->kind == kind && s->a.sym == a.sym && s->a.c == a.c && s->b.sym == b.sym && s->b.c == b.c)
            return i + 1;
    }
    IrSym s = {0};
    s.kind = kind;
    s.a = a;
    s.b = b;
    /* every kind is monotone in each operand over non-negative extents
     * (division by a constant or by a symbol whose bounds bracket it) */
    int64_t lo = apply(kind, term_lo(g, a), kind == SYM_DIV ? term_hi(g, b) : term_lo(g, b));
    int64_t hi = apply(kind, term_hi(g, a), kind == SYM_DIV ? term_lo(g, b) : term_hi(g, b));
    s.lo = lo;
    s.hi = hi;
    char ta[64], tb[64], name[160];
    term_str(g, a, ta, sizeof ta);
    term_str(g, b, tb, sizeof tb);
    if (kind == SYM_MIN || kind == SYM_MAX) snprintf(name, sizeof name, "%s(%s,%s)", kind_op[kind], ta, tb);
    else snprintf(name, sizeof name, "(%s%s%s)", ta, kind_op[kind], tb);
    s.name = ir_strdup(g, name);
    return push_sym(g, &s);
}

int32_t ir_sym_data(Graph *g, const Node *n, int out, int k, int64_t hi)
{
    char name[256];
    snprintf(name, sizeof name, "%s:%d", n->out[out]->name, k);
    for (int i = 0; i < g->n_syms; i++)
        if (g->syms[i].kind == SYM_DATA && strcmp(g->syms[i].name, name) == 0) {
            g->syms[i].hi = hi;
            return i + 1;
        }
    IrSym s = {0};
    s.name = ir_strdup(g, name);
    s.lo = 0;
    s.hi = hi;
    s.kind = SYM_DATA;
    return push_sym(g, &s);
}

int64_t ir_shape_max_numel(const Graph *g, const Shape *s)
{
    /* each group present in s contributes min(product of its members'
     * bounds, its cap), when every member appears at most once */
    int32_t lead[IR_MAX_RANK];
    int64_t prod[IR_MAX_RANK];
    int nl = 0, ok = 1;
    int64_t total = 1;
    for (int k = 0; k < s->rank; k++) {
        int32_t y = s->sym[k];
        const IrSym *sy = y > 0 && g && y <= g->n_syms ? ir_sym(g, y) : NULL;
        for (int j = 0; j < k && sy; j++)
            if (s->sym[j] == y) ok = 0;
        if (!sy || !sy->group) {
            if (ir_mul_ok(total, s->dims[k], &total)) return INT64_MAX;
            continue;
        }
        int i = 0;
        while (i < nl && lead[i] != sy->group) i++;
        if (i == nl) {
            lead[nl] = sy->group;
            prod[nl++] = 1;
        }
        if (ir_mul_ok(prod[i], s->dims[k], &prod[i])) prod[i] = INT64_MAX;
    }
    for (int i = 0; i < nl; i++) {
        int64_t cap = ir_sym(g, lead[i])->group_cap, p = prod[i];
        if (ok && cap > 0 && cap < p) p = cap;
        if (ir_mul_ok(total, p, &total)) return INT64_MAX;
    }
    return total;
}

int ir_sym_is_data(const Graph *g, int32_t k)
{
    const IrSym *s = ir_sym(g, k);
    if (s->kind == SYM_DATA) return 1;
    if (s->kind == SYM_VAR) return 0;
    return (s->a.sym && ir_sym_is_data(g, s->a.sym)) || (s->b.sym && ir_sym_is_data(g, s->b.sym));
}

int ir_graph_has_data_syms(const Graph *g)
{
    for (int i = 0; i < g->n_syms; i++)
        if (g->syms[i].kind == SYM_DATA) return 1;
    return 0;
}

void ir_sym_eval(const Graph *g, int64_t *val)
{
    for (int i = 0; i < g->n_syms; i++) {
        const IrSym *s = &g->syms[i];
        if (s->kind == SYM_VAR) continue;
        if (s->kind == SYM_DATA) {
            val[i] = s->hi; /* until the node that computes it runs */
            continue;
        }
        int64_t a = s->a.sym ? val[s->a.sym - 1] : s->a.c, b = s->b.sym ? val[s->b.sym - 1] : s->b.c;
        val[i] = apply(s->kind, a, b);
    }
}

const char *ir_shape_str_g(const Graph *g, const Shape *s, char *buf, size_t cap)
{
    size_t k = 0;
    k += (size_t)snprintf(buf + k, cap - k, "[");
    for (int i = 0; i < s->rank && k < cap; i++) {
        if (s->sym[i] && g && s->sym[i] <= g->n_syms)
            k += (size_t)snprintf(buf + k, cap - k, "%s%s<=%lld", i ? "," : "", ir_sym(g, s->sym[i])->name,
                                  (long long)s->dims[i]);
        else
            k += (size_t)snprintf(buf + k, cap - k, "%s%s%lld", i ? "," : "", s->sym[i] ? "<=" : "",
                                  (long long)s->dims[i]);
    }
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

int ir_sym_bind(const Graph *g, const Shape *const *actual, int64_t *val, Diag *d)
{
    const Value **from = calloc((size_t)g->n_syms + 1, sizeof *from);
    GC_ASSERT(from);
    int rc = 0;
    char b1[256], b2[256];
    for (int i = 0; i < g->n_inputs && !rc; i++) {
        const Value *v = g->inputs[i];
        const Shape *a = actual[i], *s = &v->shape;
        if (a->rank != s->rank) {
            rc = diag_error(d, "input '%s' is %s, got rank %d %s", v->name, ir_shape_str_g(g, s, b1, sizeof b1), a->rank,
                            ir_shape_str(a, b2, sizeof b2));
            break;
        }
        for (int k = 0; k < s->rank && !rc; k++) {
            int32_t y = s->sym[k];
            if (!y) {
                if (a->dims[k] != s->dims[k])
                    rc = diag_error(d, "input '%s' dim %d is %lld, but the model's is %lld", v->name, k,
                                    (long long)a->dims[k], (long long)s->dims[k]);
                continue;
            }
            const IrSym *sy = ir_sym(g, y);
            if (a->dims[k] < sy->lo || a->dims[k] > sy->hi)
                rc = diag_error(d, "input '%s' dim %d is %lld, beyond the bounds of %s (%lld to %lld)", v->name, k,
                                (long long)a->dims[k], sy->name, (long long)sy->lo, (long long)sy->hi);
            else if (from[y - 1] && val[y - 1] != a->dims[k])
                rc = diag_error(d, "input '%s' dim %d is %lld, but %s is %lld in input '%s'", v->name, k,
                                (long long)a->dims[k], sy->name, (long long)val[y - 1], from[y - 1]->name);
            from[y - 1] = v;
            val[y - 1] = a->dims[k];
        }
    }
    for (int k = 0; k < g->n_syms && !rc; k++)
        if (g->syms[k].kind == SYM_VAR && !from[k])
            rc = diag_error(d, "symbolic dim %s appears in no graph input", g->syms[k].name);
    free(from);
    if (!rc) ir_sym_eval(g, val);
    return rc;
}

void ir_sym_specialize(Graph *g, const int64_t *val)
{
    for (int i = 0; i < g->n_values; i++) {
        Value *v = g->values[i];
        if (v->kind == VK_TEMP && v->producer) v->shape_known = 0;
        for (int k = 0; k < v->shape.rank; k++)
            if (v->shape.sym[k]) {
                v->shape.dims[k] = val[v->shape.sym[k] - 1];
                v->shape.sym[k] = 0;
            }
    }
    g->n_syms = 0;
}
