/* dot.c — the graph drawn as a Graphviz digraph.
 *
 * One statement per line, in the order of g->nodes, so the same graph always
 * gives the same bytes. Identifiers are generated (`v<id>` for graph inputs
 * and constants, `n<i>` for node i, `n<i>_<j>` for member j of a fused node,
 * `out<i>` for graph output i); names from the model only ever appear inside
 * quoted labels, escaped, so any name is safe.
 *
 * Graph inputs are ellipses, constants small notes, outputs bold ellipses;
 * every edge carries the dtype and shape of the value it stands for.
 *
 * Fused nodes. Fusion leaves two kinds of node that stand for several ops:
 * an elementwise `Fused` node whose string attribute `expr` is an expression
 * over its inputs (`Relu(Add(x0, x1))`), and a Conv/Gemm/MatMul whose string
 * attribute `epilogue` is an expression over the op's own result `y` and
 * extra inputs (`Relu(Add(y, x3))`). Either becomes `subgraph cluster_<k>`:
 * the op itself (epilogue only) plus one box per call in the expression,
 * with edges from child call to parent call. An input `x<k>` of the
 * expression draws the edge from node input k straight to the call that
 * reads it; `y` is the edge from the op's box. The outermost call produces
 * the node's outputs. The expression grammar read here is small:
 *
 *     expr := NAME [ '[' ... ']' ] '(' expr { ',' expr } ')'
 *           | 'x' DIGITS | 'y' | '_' | NAME | NUMBER
 *
 * (the bracket block holds the call's attributes and is shown in its box).
 * Text that does not parse is drawn as one box holding the expression.
 */
#include "dot.h"
#include "op.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Writes s[0..n) escaped for a quoted Graphviz string: '"' and '\' get a
 * backslash, control characters are dropped. */
static void dot_esc(Writer *w, const char *s, size_t n)
{
    char buf[256];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (k + 3 >= sizeof buf) { buf[k] = 0; w_puts(w, buf); k = 0; }
        if (c == '"' || c == '\\') { buf[k++] = '\\'; buf[k++] = (char)c; }
        else if (c >= 0x20 && c != 0x7f) buf[k++] = (char)c;
    }
    buf[k] = 0;
    w_puts(w, buf);
}

/* `label="A\nB"` (B NULL or empty: `label="A"`), both parts escaped. */
static void dot_label(Writer *w, const char *a, size_t an, const char *b)
{
    w_puts(w, "label=\"");
    dot_esc(w, a, an);
    if (b && *b) {
        w_puts(w, "\\n");
        dot_esc(w, b, strlen(b));
    }
    w_puts(w, "\"");
}

static void dot_type(Writer *w, const Value *v)
{
    char s[256];
    if (!v->shape_known) { w_puts(w, "label=\"?\""); return; }
    w_printf(w, "label=\"%s%s\"", ir_dtype_name(v->dtype), ir_shape_str(&v->shape, s, sizeof s));
}

/* ---- the expression of a fused node ---- */

enum { DOT_MAX_MEMBERS = 256, DOT_MAX_LEAVES = 512 };

typedef struct Member {
    int parent; /* member index, -1 for the outermost call */
    const char *op, *attr;
    int op_len, attr_len;
} Member;

typedef struct Leaf {
    int member; /* the call that reads it (-1: the whole expression) */
    int input;  /* node input index for x<k>, -1 for y */
} Leaf;

typedef struct ExprParse {
    const char *p;
    Member m[DOT_MAX_MEMBERS];
    int n_m;
    Leaf l[DOT_MAX_LEAVES];
    int n_l;
    int bad;
} ExprParse;

static void skip_ws(ExprParse *e)
{
    while (*e->p == ' ' || *e->p == '\t') e->p++;
}

/* Skips a balanced "[...]" block (quotes respected); its text without the
 * brackets goes to *s, *n. */
static void skip_block(ExprParse *e, const char **s, int *n)
{
    const char *start = e->p;
    int depth = 0;
    char quote = 0;
    for (; *e->p; e->p++) {
        char c = *e->p;
        if (quote) {
            if (c == '\\' && e->p[1]) e->p++;
            else if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '[') {
            depth++;
        } else if (c == ']' && --depth == 0) {
            e->p++;
            *s = start + 1;
            *n = (int)(e->p - start) - 2;
            return;
        }
    }
    e->bad = 1;
}

static void add_leaf(ExprParse *e, int member, int input)
{
    if (e->n_l == DOT_MAX_LEAVES) { e->bad = 1; return; }
    e->l[e->n_l].member = member;
    e->l[e->n_l].input = input;
    e->n_l++;
}

static void parse_expr(ExprParse *e, int parent)
{
    skip_ws(e);
    const char *s = e->p;
    if (isalpha((unsigned char)*s) || *s == '_') {
        while (isalnum((unsigned char)*e->p) || *e->p == '_' || *e->p == '.') e->p++;
        int len = (int)(e->p - s);
        const char *attr = NULL;
        int attr_len = 0;
        skip_ws(e);
        if (*e->p == '[') skip_block(e, &attr, &attr_len);
        skip_ws(e);
        if (*e->p != '(') { /* a leaf */
            if (len == 1 && s[0] == 'y') add_leaf(e, parent, -1);
            else if (s[0] == 'x' && len > 1 && len < 6) {
                int k = 0;
                for (int i = 1; i < len; i++) {
                    if (!isdigit((unsigned char)s[i])) return; /* another name: not an input */
                    k = k * 10 + (s[i] - '0');
                }
                add_leaf(e, parent, k);
            }
            return;
        }
        if (e->n_m == DOT_MAX_MEMBERS) { e->bad = 1; return; }
        int me = e->n_m++;
        e->m[me] = (Member){parent, s, attr, len, attr_len};
        e->p++; /* '(' */
        skip_ws(e);
        if (*e->p == ')') { e->p++; return; }
        for (;;) {
            parse_expr(e, me);
            if (e->bad) return;
            skip_ws(e);
            if (*e->p == ',') { e->p++; continue; }
            if (*e->p == ')') { e->p++; return; }
            e->bad = 1;
            return;
        }
    }
    if (isdigit((unsigned char)*s) || *s == '-' || *s == '+' || *s == '.') { /* a literal */
        e->p++;
        while (isalnum((unsigned char)*e->p) || *e->p == '.' || *e->p == '+' || *e->p == '-') e->p++;
        return;
    }
    e->bad = 1;
}

/* The expression of a fused node (attribute `expr` or `epilogue`, set and
 * non-empty), or NULL; *is_epilogue tells which. */
static const char *fused_expr(const Node *n, int *is_epilogue)
{
    static const char *const keys[] = {"expr", "epilogue"};
    for (int k = 0; k < 2; k++) {
        int a = ir_attr_index(n, keys[k]);
        if (a < 0 || !n->attrs[a].set || !n->attrs[a].s || !n->attrs[a].s[0]) continue;
        *is_epilogue = k == 1;
        return n->attrs[a].s;
    }
    return NULL;
}

/* ---- the graph ---- */

typedef struct DotNode {
    ExprParse *e; /* NULL: a plain node */
    int has_main; /* the op's own box n<i> is drawn */
} DotNode;

/* Identifier of the box that produces v: its graph-input or constant
 * shape, a plain node's box, or a fused node's outermost call. */
static void dot_src(Writer *w, const DotNode *dn, const int *prod, const Value *v)
{
    int i = prod[v->id];
    if (i < 0) w_printf(w, "v%d", v->id);
    else if (dn[i].e) w_printf(w, "n%d_0", i);
    else w_printf(w, "n%d", i);
}

static void dot_edge(Writer *w, const DotNode *dn, const int *prod, const Value *v, const char *dst)
{
    w_puts(w, "  ");
    dot_src(w, dn, prod, v);
    w_printf(w, " -> %s [", dst);
    dot_type(w, v);
    w_puts(w, "];\n");
}

static void dot_cluster(Writer *w, const Node *n, int i, int k, const char *expr, int is_epilogue,
                        const DotNode *me)
{
    const OpDesc *od = ir_op(n->op);
    w_printf(w, "  subgraph cluster_%d {\n", k);
    w_puts(w, "    style=\"rounded,dashed\"; color=\"#4a6fa5\"; fontsize=9; ");
    char head[300];
    snprintf(head, sizeof head, "%s%s", od->name, is_epilogue ? " + epilogue" : "");
    dot_label(w, head, strlen(head), n->name);
    w_puts(w, ";\n");
    if (me->has_main) {
        w_printf(w, "    n%d [shape=box, ", i);
        dot_label(w, od->name, strlen(od->name), n->name);
        w_puts(w, "];\n");
    }
    const ExprParse *e = me->e;
    if (e->n_m == 0) { /* unparsed: the expression in one box */
        w_printf(w, "    n%d_0 [shape=box, style=filled, fillcolor=\"#dde6f3\", ", i);
        dot_label(w, expr, strlen(expr), NULL);
        w_puts(w, "];\n");
    }
    for (int j = 0; j < e->n_m; j++) {
        const Member *m = &e->m[j];
        w_printf(w, "    n%d_%d [shape=box, style=filled, fillcolor=\"#dde6f3\", ", i, j);
        char *attr = NULL;
        if (m->attr) {
            attr = malloc((size_t)m->attr_len + 3);
            GC_ASSERT(attr);
            snprintf(attr, (size_t)m->attr_len + 3, "[%.*s]", m->attr_len, m->attr);
        }
        dot_label(w, m->op, (size_t)m->op_len, attr);
        free(attr);
        w_puts(w, "];\n");
    }
    for (int j = 0; j < e->n_m; j++)
        if (e->m[j].parent >= 0) w_printf(w, "    n%d_%d -> n%d_%d;\n", i, j, i, e->m[j].parent);
    w_puts(w, "  }\n");
}

void ir_print_dot(const Graph *g, Writer *w)
{
    DotNode *dn = calloc((size_t)g->n_nodes + 1, sizeof *dn);
    char *used = calloc((size_t)g->n_values + 1, 1);
    int *prod = malloc(sizeof(int) * ((size_t)g->n_values + 1));
    GC_ASSERT(dn && used && prod);
    for (int i = 0; i < g->n_values; i++) prod[i] = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        for (int j = 0; j < n->n_in; j++)
            if (n->in[j]) used[n->in[j]->id] = 1;
        for (int j = 0; j < n->n_out; j++) prod[n->out[j]->id] = i;
    }
    for (int i = 0; i < g->n_outputs; i++) used[g->outputs[i]->id] = 1;

    const char *gname = g->name ? g->name : "graph";
    w_puts(w, "digraph \"");
    dot_esc(w, gname, strlen(gname));
    w_puts(w, "\" {\n");
    w_puts(w, "  rankdir=TB;\n");
    w_puts(w, "  graph [fontname=\"Helvetica\"];\n");
    w_puts(w, "  node [fontname=\"Helvetica\", fontsize=10];\n");
    w_puts(w, "  edge [fontname=\"Helvetica\", fontsize=8];\n");
    for (int i = 0; i < g->n_inputs; i++) {
        const Value *v = g->inputs[i];
        w_printf(w, "  v%d [shape=ellipse, ", v->id);
        dot_label(w, v->name, strlen(v->name), NULL);
        w_puts(w, "];\n");
    }
    for (int i = 0; i < g->n_values; i++) {
        const Value *v = g->values[i];
        if (v->kind != VK_CONST || prod[i] >= 0 || !used[i]) continue;
        w_printf(w, "  v%d [shape=note, fontsize=8, height=0.2, ", v->id);
        dot_label(w, v->name, strlen(v->name), NULL);
        w_puts(w, "];\n");
    }

    int k = 0;
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        int is_epi = 0;
        const char *expr = fused_expr(n, &is_epi);
        if (!expr) {
            const OpDesc *od = ir_op(n->op);
            w_printf(w, "  n%d [shape=box, ", i);
            dot_label(w, od->name, strlen(od->name), n->name);
            w_puts(w, "];\n");
            continue;
        }
        ExprParse *e = calloc(1, sizeof *e);
        GC_ASSERT(e);
        e->p = expr;
        parse_expr(e, -1);
        skip_ws(e);
        if (*e->p) e->bad = 1;
        if (e->bad || e->n_m == 0) e->n_m = e->n_l = 0; /* drawn as one box */
        dn[i].e = e;
        dn[i].has_main = is_epi;
        dot_cluster(w, n, i, k++, expr, is_epi, &dn[i]);
    }

    char dst[64];
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        const ExprParse *e = dn[i].e;
        for (int j = 0; j < n->n_in; j++) {
            const Value *v = n->in[j];
            if (!v) continue;
            int drawn = 0;
            for (int l = 0; e && l < e->n_l; l++) {
                if (e->l[l].input != j || e->l[l].member < 0) continue;
                snprintf(dst, sizeof dst, "n%d_%d", i, e->l[l].member);
                dot_edge(w, dn, prod, v, dst);
                drawn = 1;
            }
            if (drawn) continue;
            /* inputs the expression does not name go to the op's own box */
            if (e && !dn[i].has_main) snprintf(dst, sizeof dst, "n%d_0", i);
            else snprintf(dst, sizeof dst, "n%d", i);
            dot_edge(w, dn, prod, v, dst);
        }
        if (!e || !dn[i].has_main || n->n_out < 1) continue;
        /* y: the op's own result into the calls that read it (into the
         * expression's box when it did not parse) */
        for (int l = 0; l < e->n_l || (l == 0 && e->n_m == 0); l++) {
            int m = e->n_m == 0 ? 0 : e->l[l].member;
            if (e->n_m > 0 && (e->l[l].input != -1 || m < 0)) continue;
            w_printf(w, "  n%d -> n%d_%d [", i, i, m);
            dot_type(w, n->out[0]);
            w_puts(w, "];\n");
        }
    }
    for (int i = 0; i < g->n_outputs; i++) {
        const Value *v = g->outputs[i];
        w_printf(w, "  out%d [shape=ellipse, style=bold, ", i);
        dot_label(w, "output", 6, v->name);
        w_puts(w, "];\n");
        snprintf(dst, sizeof dst, "out%d", i);
        dot_edge(w, dn, prod, v, dst);
    }
    w_puts(w, "}\n");
    for (int i = 0; i < g->n_nodes; i++) free(dn[i].e);
    free(dn);
    free(used);
    free(prod);
}
