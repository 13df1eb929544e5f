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
 * the op itself (epilogue only) plus one box per member of the expression as
 * ir_fused_parse_node (ir/fused.h) returns them, each labelled with its op
 * and its non-default attributes, with edges from each member to the member
 * that reads it. A member's id is n<i>_<j>, j its position in pre-order from
 * the root (the member that produces the node's outputs, j = 0), which is
 * the order of the calls in the text. An operand `x<k>` draws the edge from
 * node input k straight to the member that reads it; `y` is the edge from
 * the op's box. An expression that does not parse (or type-check) is drawn
 * as one box holding its text.
 */
#include "dot.h"
#include "fused.h"

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
    int fused;    /* the node carries an expression: drawn as a cluster */
    int parsed;   /* fx holds its members (else one box holds the text) */
    int has_main; /* the op's own box n<i> is drawn (epilogues) */
    FusedExpr fx;
    int *parent;  /* per member: the member reading it, -1 for the root */
    int *id;      /* per member: its box id suffix (pre-order from the root) */
    int *member;  /* per box id suffix: the member */
} DotNode;

/* Identifier of the box that produces v: its graph-input or constant
 * shape, a plain node's box, or a fused node's root member. */
static void dot_src(Writer *w, const DotNode *dn, const int *prod, const Value *v)
{
    int i = prod[v->id];
    if (i < 0) w_printf(w, "v%d", v->id);
    else if (dn[i].fused) w_printf(w, "n%d_0", i);
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

static void dot_cluster(Writer *w, const Node *n, int i, int k, const char *expr, const DotNode *me)
{
    const OpDesc *od = ir_op(n->op);
    w_printf(w, "  subgraph cluster_%d {\n", k);
    w_puts(w, "    style=\"rounded,dashed\"; color=\"#4a6fa5\"; fontsize=9; ");
    char head[300];
    snprintf(head, sizeof head, "%s%s", od->name, me->has_main ? " + epilogue" : "");
    dot_label(w, head, strlen(head), n->name);
    w_puts(w, ";\n");
    if (me->has_main) {
        w_printf(w, "    n%d [shape=box, ", i);
        dot_label(w, od->name, strlen(od->name), n->name);
        w_puts(w, "];\n");
    }
    if (!me->parsed) { /* the expression in one box */
        w_printf(w, "    n%d_0 [shape=box, style=filled, fillcolor=\"#dde6f3\", ", i);
        dot_label(w, expr, strlen(expr), NULL);
        w_puts(w, "];\n");
        w_puts(w, "  }\n");
        return;
    }
    const FusedExpr *fx = &me->fx;
    for (int j = 0; j < fx->n_members; j++) {
        const Node *m = fx->members[me->member[j]];
        Writer aw;
        w_init(&aw);
        ir_fused_print_attrs(&aw, m);
        w_printf(w, "    n%d_%d [shape=box, style=filled, fillcolor=\"#dde6f3\", ", i, j);
        dot_label(w, ir_op(m->op)->name, strlen(ir_op(m->op)->name), aw.buf);
        w_free(&aw);
        w_puts(w, "];\n");
    }
    for (int j = 0; j < fx->n_members; j++) {
        int p = me->parent[me->member[j]];
        if (p >= 0) w_printf(w, "    n%d_%d -> n%d_%d;\n", i, j, i, me->id[p]);
    }
    w_puts(w, "  }\n");
}

/* Numbers member m and the members it reads in pre-order from *next. */
static void number_members(DotNode *dn, int m, int *next)
{
    const FusedExpr *fx = &dn->fx;
    dn->id[m] = (*next)++;
    dn->member[dn->id[m]] = m;
    for (int j = 0; j < fx->members[m]->n_in; j++)
        if (fx->src[m][j].kind == FX_MEMBER) number_members(dn, fx->src[m][j].idx, next);
}

/* Parses node n's expression into dn (parsed stays 0 when it does not). */
static void dot_parse(const Node *n, DotNode *dn)
{
    Diag quiet = {0};
    if (ir_fused_parse_node(n, &dn->fx, &quiet)) return;
    FusedExpr *fx = &dn->fx;
    int nm = fx->n_members, next = 0;
    dn->parent = malloc(sizeof(int) * 3 * (size_t)nm);
    GC_ASSERT(dn->parent);
    dn->id = dn->parent + nm;
    dn->member = dn->id + nm;
    for (int m = 0; m < nm; m++) dn->parent[m] = -1;
    for (int m = 0; m < nm; m++)
        for (int j = 0; j < fx->members[m]->n_in; j++)
            if (fx->src[m][j].kind == FX_MEMBER) dn->parent[fx->src[m][j].idx] = m;
    number_members(dn, nm - 1, &next);
    dn->parsed = 1;
}

/* Edges from value v into the members of node i at and below member m
 * that read slot `slot`, in the order of the operands in the text; the
 * number drawn. from_main: the edges start at the op's own box. */
static int dot_slot_edges(Writer *w, const DotNode *dn, const int *prod, int i, int m, int slot, const Value *v,
                          int from_main)
{
    const FusedExpr *fx = &dn[i].fx;
    int drawn = 0;
    for (int a = 0; a < fx->members[m]->n_in; a++) {
        const FxSrc *src = &fx->src[m][a];
        if (src->kind == FX_MEMBER) drawn += dot_slot_edges(w, dn, prod, i, src->idx, slot, v, from_main);
        if (src->kind != FX_SLOT || src->idx != slot) continue;
        char dst[64];
        snprintf(dst, sizeof dst, "n%d_%d", i, dn[i].id[m]);
        if (from_main) {
            w_printf(w, "  n%d -> %s [", i, dst);
            dot_type(w, v);
            w_puts(w, "];\n");
        } else {
            dot_edge(w, dn, prod, v, dst);
        }
        drawn++;
    }
    return drawn;
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
        if ((v->kind != VK_CONST && v->kind != VK_STATE) || prod[i] >= 0 || !used[i]) continue;
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
        dn[i].fused = 1;
        dn[i].has_main = is_epi;
        dot_parse(n, &dn[i]);
        dot_cluster(w, n, i, k++, expr, &dn[i]);
    }

    char dst[64];
    for (int i = 0; i < g->n_nodes; i++) {
        const Node *n = g->nodes[i];
        for (int j = 0; j < n->n_in; j++) {
            const Value *v = n->in[j];
            if (!v) continue;
            if (dn[i].parsed && dot_slot_edges(w, dn, prod, i, dn[i].fx.n_members - 1, j, v, 0)) continue;
            /* inputs the expression does not name go to the op's own box */
            if (dn[i].fused && !dn[i].has_main) snprintf(dst, sizeof dst, "n%d_0", i);
            else snprintf(dst, sizeof dst, "n%d", i);
            dot_edge(w, dn, prod, v, dst);
        }
        if (!dn[i].has_main || n->n_out < 1) continue;
        /* y: the op's own result into the members that read it (into the
         * expression's box when it did not parse) */
        if (!dn[i].parsed) {
            w_printf(w, "  n%d -> n%d_0 [", i, i);
            dot_type(w, n->out[0]);
            w_puts(w, "];\n");
        } else {
            dot_slot_edges(w, dn, prod, i, dn[i].fx.n_members - 1, n->n_in, n->out[0], 1);
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
    for (int i = 0; i < g->n_nodes; i++) {
        if (dn[i].parsed) ir_fused_free(&dn[i].fx);
        free(dn[i].parent);
    }
    free(dn);
    free(used);
    free(prod);
}
