/* fuse_elementwise.c — connected elementwise nodes become one Fused node.
 *
 * An elementwise node is one whose op has a scalar expression (and
 * attributes the expression text can spell), or a Fused node. The pass
 * walks the schedule in order and lets each elementwise node N absorb the
 * producer P of one of its inputs v, again and again, while
 *   - P is elementwise with one output,
 *   - v has exactly one reader (N, once), occurs once in N's expression
 *     (nothing is computed twice) and is not a graph output,
 *   - v has N's output shape (leaves may broadcast; an interior never is, so
 *     no element is computed twice), and
 *   - the merged node has at most FUSED_MAX_IN distinct inputs, at most
 *     FUSED_MAX_OPS member ops and nests at most FUSED_MAX_DEPTH deep; past
 *     that the next node starts a new kernel.
 * The merged node's inputs are N's other inputs first, then P's,
 * duplicates merged. Producers are visited before consumers, so a chain or
 * tree collapses into its last node, up to the size limits.
 *
 * Each node being grown is a Group: its member ops as a flat list (a tree:
 * every member but the root is read by exactly one other member) whose
 * leaves point at graph Values, plus the ordered input list. Absorbing P
 * appends P's members and rewires the one leaf that read v; no text is
 * printed or parsed while groups grow. At the end each node that absorbed
 * something becomes a Fused node in place: its expression is printed once,
 * canonically (ir/fused.h), and inferred once. N keeps its name, its
 * position and its output Value, so the schedule stays topological and
 * nothing downstream changes; absorbed producers leave the schedule and
 * ir_sweep_values drops their outputs. Reader counts are kept per value and
 * updated on each merge, so the pass is linear in the graph's size (each
 * merge costs at most the bounded size of a group).
 */
#include "passes.h"
#include "../ir/fused.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Operand of a member: a graph value, another member of the group, absent. */
typedef struct GSrc {
    FxSrcKind kind;
    int member; /* FX_MEMBER */
    Value *v;   /* FX_SLOT */
} GSrc;

typedef struct Group {
    int n_mem;        /* the root is the last member (post-order) */
    int depth;        /* the largest level */
    const Node **mem; /* member ops (op and attributes; operands in src) */
    GSrc **src;       /* src[m][j]: operand j of member m */
    int *level;       /* level[m]: members from the root down to m (root 1) */
    Value **ins;      /* the node's input list, in order */
    int n_in;
    int merged;       /* absorbed at least one producer */
} Group;

typedef struct Fuser {
    Graph *g;
    Group **grp;      /* by node id: the node's group, NULL if not elementwise */
    int *uses;        /* by value id: reads by nodes still in the schedule */
    char *dropped;    /* by node id */
    FusedPrinter *fp;
    FusedExpr *parsed; /* expressions of Fused nodes met (their members live there) */
    int n_parsed;
} Fuser;

static void *xcalloc(size_t n, size_t sz)
{
    void *p = calloc(n ? n : 1, sz);
    GC_ASSERT(p);
    return p;
}

static void group_free(Group *gr)
{
    if (!gr) return;
    for (int m = 0; m < gr->n_mem; m++) free(gr->src[m]);
    free(gr->mem);
    free(gr->src);
    free(gr->level);
    free(gr->ins);
    free(gr);
}

static Group *group_alloc(int n_mem, int n_in)
{
    Group *gr = xcalloc(1, sizeof *gr);
    gr->n_mem = n_mem;
    gr->mem = xcalloc((size_t)n_mem, sizeof *gr->mem);
    gr->src = xcalloc((size_t)n_mem, sizeof *gr->src);
    gr->level = xcalloc((size_t)n_mem, sizeof *gr->level);
    gr->ins = xcalloc((size_t)n_in, sizeof *gr->ins);
    gr->n_in = n_in;
    return gr;
}

/* Sets each member's level from the root down and the group's depth (src
 * only points downwards in a tree, so a pass in reverse post-order
 * suffices; members are kept in post-order, see absorb). */
static void group_depth(Group *gr)
{
    int depth = 0;
    for (int m = gr->n_mem - 1; m >= 0; m--) {
        if (m == gr->n_mem - 1) gr->level[m] = 1;
        if (gr->level[m] > depth) depth = gr->level[m];
        for (int j = 0; j < gr->mem[m]->n_in; j++)
            if (gr->src[m][j].kind == FX_MEMBER) gr->level[gr->src[m][j].member] = gr->level[m] + 1;
    }
    gr->depth = depth;
}

/* The group of node n as it stands alone; NULL when n is not elementwise. */
static Group *group_of(Fuser *f, Node *n, Diag *d, int *err)
{
    if (n->n_out != 1) return NULL;
    if (n->op == OP_Fused) {
        FusedExpr *fx = &f->parsed[f->n_parsed];
        if (ir_fused_parse_node(n, fx, d)) {
            *err = 1;
            return NULL;
        }
        f->n_parsed++;
        Group *gr = group_alloc(fx->n_members, n->n_in);
        for (int m = 0; m < fx->n_members; m++) {
            const Node *mn = fx->members[m];
            gr->mem[m] = mn;
            gr->src[m] = xcalloc((size_t)mn->n_in, sizeof(GSrc));
            for (int j = 0; j < mn->n_in; j++) {
                FxSrc s = fx->src[m][j];
                gr->src[m][j] = (GSrc){s.kind, s.kind == FX_MEMBER ? s.idx : 0, s.kind == FX_SLOT ? n->in[s.idx] : NULL};
            }
        }
        memcpy(gr->ins, n->in, sizeof(Value *) * (size_t)n->n_in);
        group_depth(gr);
        return gr;
    }
    if (!ir_op(n->op)->scalar_expr) return NULL;
    Writer w;
    w_init(&w);
    int printable = ir_fused_print_head(f->fp, &w, n) == 0;
    w_free(&w);
    if (!printable) return NULL;
    Group *gr = group_alloc(1, n->n_in);
    gr->mem[0] = n;
    gr->src[0] = xcalloc((size_t)n->n_in, sizeof(GSrc));
    for (int j = 0; j < n->n_in; j++)
        gr->src[0][j] = n->in[j] ? (GSrc){FX_SLOT, 0, n->in[j]} : (GSrc){FX_ABSENT, 0, NULL};
    memcpy(gr->ins, n->in, sizeof(Value *) * (size_t)n->n_in);
    gr->level[0] = 1;
    gr->depth = 1;
    return gr;
}

/* Index of v in list[0..*n), appending it when absent; -1 when full. */
static int input_slot(Value **list, int *n, Value *v)
{
    for (int k = 0; k < *n; k++)
        if (list[k] == v) return k;
    if (*n == FUSED_MAX_IN) return -1;
    list[*n] = v;
    return (*n)++;
}

static void count_reads(Fuser *f, Value *const *ins, int n_in, int delta)
{
    for (int k = 0; k < n_in; k++)
        if (ins[k]) f->uses[ins[k]->id] += delta;
}

/* Merges the producer of input k of n's group into it when the rules in
 * the header allow; 1 merged, 0 not. */
static int absorb(Fuser *f, Node *n, int k)
{
    Group *gn = f->grp[n->id];
    Value *v = gn->ins[k];
    if (!v || v->kind != VK_TEMP || !v->producer || v->is_output) return 0;
    Node *p = v->producer;
    Group *gp = f->grp[p->id];
    if (!gp || f->dropped[p->id] || f->uses[v->id] != 1) return 0;
    if (!ir_shape_eq(&v->shape, &n->out[0]->shape)) return 0;
    if (gn->n_mem + gp->n_mem > FUSED_MAX_OPS) return 0;
    int leaf_m = -1, leaf_j = -1, reads = 0;
    for (int m = 0; m < gn->n_mem; m++)
        for (int j = 0; j < gn->mem[m]->n_in; j++)
            if (gn->src[m][j].kind == FX_SLOT && gn->src[m][j].v == v) {
                reads++;
                leaf_m = m;
                leaf_j = j;
            }
    if (reads != 1) return 0;
    if (gn->level[leaf_m] + gp->depth > FUSED_MAX_DEPTH) return 0;

    Value *ins[FUSED_MAX_IN];
    int nin = 0;
    for (int q = 0; q < gn->n_in; q++)
        if (q != k && gn->ins[q] && input_slot(ins, &nin, gn->ins[q]) < 0) return 0;
    for (int q = 0; q < gp->n_in; q++)
        if (gp->ins[q] && input_slot(ins, &nin, gp->ins[q]) < 0) return 0;

    /* members: P's first (post-order kept: P's root precedes its reader) */
    int np = gp->n_mem, nm = np + gn->n_mem;
    Group *gr = group_alloc(nm, nin);
    for (int m = 0; m < np; m++) {
        gr->mem[m] = gp->mem[m];
        gr->src[m] = gp->src[m];
        gp->src[m] = NULL;
    }
    for (int m = 0; m < gn->n_mem; m++) {
        GSrc *s = gn->src[m];
        gn->src[m] = NULL;
        for (int j = 0; j < gn->mem[m]->n_in; j++)
            if (s[j].kind == FX_MEMBER) s[j].member += np;
        gr->mem[np + m] = gn->mem[m];
        gr->src[np + m] = s;
    }
    gr->src[np + leaf_m][leaf_j] = (GSrc){FX_MEMBER, np - 1, NULL};
    memcpy(gr->ins, ins, sizeof(Value *) * (size_t)nin);
    gr->merged = 1;
    group_depth(gr);

    count_reads(f, gn->ins, gn->n_in, -1);
    count_reads(f, gp->ins, gp->n_in, -1);
    count_reads(f, gr->ins, gr->n_in, +1);
    f->dropped[p->id] = 1;
    group_free(gp);
    group_free(gn);
    f->grp[p->id] = NULL;
    f->grp[n->id] = gr;
    return 1;
}

/* Writes member m of gr and its operands (recursion bounded by FUSED_MAX_DEPTH
 * for grown groups, FUSED_PARSE_MAX_DEPTH for parsed ones). */
static int print_member(Fuser *f, Writer *w, const Group *gr, int m)
{
    if (ir_fused_print_head(f->fp, w, gr->mem[m])) return -1;
    w_puts(w, "(");
    for (int j = 0; j < gr->mem[m]->n_in; j++) {
        const GSrc *s = &gr->src[m][j];
        if (j) w_puts(w, ", ");
        if (s->kind == FX_ABSENT) {
            w_puts(w, "_");
        } else if (s->kind == FX_MEMBER) {
            if (print_member(f, w, gr, s->member)) return -1;
        } else {
            int k = 0;
            while (gr->ins[k] != s->v) k++;
            w_printf(w, "x%d", k);
        }
    }
    w_puts(w, ")");
    return 0;
}

/* Turns n into the Fused node of its merged group. */
static int finish(Fuser *f, Node *n, Diag *d)
{
    Graph *g = f->g;
    Group *gr = f->grp[n->id];
    Writer w;
    w_init(&w);
    int rc = print_member(f, &w, gr, gr->n_mem - 1);
    GC_ASSERT(rc == 0 && w.buf); /* every member's head printed when its group was made */
    Shape os = n->out[0]->shape;
    DType ot = n->out[0]->dtype;
    n->op = OP_Fused;
    n->attrs = ir_alloc(g, sizeof(AttrVal));
    n->attrs[0].set = 1;
    n->attrs[0].s = ir_strdup(g, w.buf);
    w_free(&w);
    n->in = ir_alloc(g, sizeof(Value *) * (size_t)gr->n_in);
    memcpy(n->in, gr->ins, sizeof(Value *) * (size_t)gr->n_in);
    n->n_in = gr->n_in;
    if (ir_infer_node(g, n, d)) return -1;
    GC_ASSERT(n->out[0]->dtype == ot && ir_shape_eq(&n->out[0]->shape, &os));
    return 0;
}

int pass_fuse_elementwise(Graph *g, Diag *d)
{
    int nn = g->n_nodes, n_fused = 0;
    Fuser f = {g, xcalloc((size_t)nn, sizeof(Group *)), xcalloc((size_t)g->n_values, sizeof(int)),
               xcalloc((size_t)nn, 1), ir_fused_printer_new(), NULL, 0};
    for (int i = 0; i < nn; i++) {
        g->nodes[i]->id = i;
        n_fused += g->nodes[i]->op == OP_Fused;
        count_reads(&f, g->nodes[i]->in, g->nodes[i]->n_in, +1);
    }
    f.parsed = xcalloc((size_t)n_fused, sizeof(FusedExpr));
    int rc = 0;
    for (int i = 0; i < nn && !rc; i++) {
        Node *n = g->nodes[i];
        int err = 0;
        f.grp[i] = group_of(&f, n, d, &err);
        if (err) rc = -1;
        if (!f.grp[i]) continue;
        for (int k = 0; k < f.grp[i]->n_in;) k = absorb(&f, n, k) ? 0 : k + 1;
    }
    int out = 0;
    for (int i = 0; i < nn; i++) {
        Node *n = g->nodes[i];
        if (!rc && f.grp[i] && f.grp[i]->merged && finish(&f, n, d)) rc = -1;
        group_free(f.grp[i]);
        if (!f.dropped[i]) g->nodes[out++] = n;
    }
    g->n_nodes = out;
    for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->id = i;
    for (int k = 0; k < f.n_parsed; k++) ir_fused_free(&f.parsed[k]);
    free(f.parsed);
    free(f.grp);
    free(f.uses);
    free(f.dropped);
    ir_fused_printer_free(f.fp);
    if (rc) return -1;
    ir_sweep_values(g);
    return 0;
}
