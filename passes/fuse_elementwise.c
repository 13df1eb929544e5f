/* fuse_elementwise.c — connected elementwise nodes become one Fused node.
 *
 * An elementwise node is one whose op has a scalar expression, or a Fused
 * node; ir_fused_node_expr() gives its expression over its own inputs. The
 * pass walks the schedule in order and lets each elementwise node N absorb
 * the producer P of one of its inputs v, again and again, while
 *   - P is elementwise with one output,
 *   - v has exactly one reader (N, once), occurs once in N's expression
 *     (nothing is computed twice) and is not a graph output,
 *   - v has N's output shape (leaves may broadcast; an interior never is, so
 *     no element is computed twice), and
 *   - v is not f16/bf16 (interiors live in typed locals, see ir/fused.h),
 *   - the merged node has at most FUSED_MAX_IN distinct inputs.
 * The merged expression is N's with leaf v replaced by P's expression, P's
 * leaves renumbered into N's new input list (N's other inputs first, then
 * P's, duplicates merged). N becomes the Fused node in place: it keeps its
 * name, its position and its output Value, so the schedule stays
 * topological (P and P's inputs come before N) and nothing downstream
 * changes. P leaves the schedule; ir_sweep_values drops v at the end.
 * Producers are visited before consumers, so a chain or tree collapses into
 * its last node in one walk. A node that absorbs nothing stays as it was.
 */
#include "passes.h"
#include "../ir/fused.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How often leaf xJ occurs in expr (attribute values hold no such token). */
static int leaf_count(const char *expr, int j)
{
    int c = 0;
    for (const char *p = expr; *p; p++) {
        if (*p != 'x' || (p > expr && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))) continue;
        char *e;
        if (!isdigit((unsigned char)p[1])) continue;
        long k = strtol(p + 1, &e, 10);
        if (k == j && !isalnum((unsigned char)*e)) c++;
    }
    return c;
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

static void drop_node(Graph *g, int at)
{
    memmove(&g->nodes[at], &g->nodes[at + 1], sizeof(Node *) * (size_t)(g->n_nodes - at - 1));
    g->n_nodes--;
}

/* Tries to merge the producer of n's input j into n (whose expression is
 * *expr); 1 merged (n and *expr updated, the producer dropped), 0 not. */
static int absorb(Graph *g, Node *n, int j, char **expr, Diag *d)
{
    Value *v = n->in[j];
    if (!v || v->kind != VK_TEMP || !v->producer || v->is_output) return 0;
    Node *p = v->producer;
    if (p->n_out != 1 || ir_value_uses(g, v) != 1 || leaf_count(*expr, j) != 1) return 0;
    if (!ir_shape_eq(&v->shape, &n->out[0]->shape) || v->dtype == DT_F16 || v->dtype == DT_BF16) return 0;
    char *pexpr = ir_fused_node_expr(p);
    if (!pexpr) return 0;

    Value *ins[FUSED_MAX_IN];
    int nin = 0, ok = 1;
    char (*nrep)[16] = calloc((size_t)n->n_in + p->n_in + 1, sizeof *nrep);
    const char **rn = calloc((size_t)n->n_in + 1, sizeof *rn);
    const char **rp = calloc((size_t)p->n_in + 1, sizeof *rp);
    GC_ASSERT(nrep && rn && rp);
    for (int k = 0; k < n->n_in && ok; k++) {
        if (k == j || !n->in[k]) continue;
        int s = input_slot(ins, &nin, n->in[k]);
        ok = s >= 0;
        snprintf(nrep[k], sizeof nrep[k], "x%d", s);
        rn[k] = nrep[k];
    }
    for (int k = 0; k < p->n_in && ok; k++) {
        if (!p->in[k]) continue;
        int s = input_slot(ins, &nin, p->in[k]);
        ok = s >= 0;
        snprintf(nrep[n->n_in + k], sizeof nrep[0], "x%d", s);
        rp[k] = nrep[n->n_in + k];
    }
    char *pe = NULL, *ne = NULL;
    if (ok) pe = ir_fused_subst(pexpr, rp, p->n_in, NULL);
    if (pe) {
        rn[j] = pe;
        ne = ir_fused_subst(*expr, rn, n->n_in, NULL);
    }
    free(pexpr);
    free(pe);
    free(nrep);
    free(rn);
    free(rp);
    if (!ne) return 0;

    Shape os = n->out[0]->shape;
    DType ot = n->out[0]->dtype;
    n->op = OP_Fused;
    n->attrs = ir_alloc(g, sizeof(AttrVal));
    n->attrs[0].set = 1;
    n->attrs[0].s = ir_strdup(g, ne);
    n->in = ir_alloc(g, sizeof(Value *) * (size_t)nin);
    memcpy(n->in, ins, sizeof(Value *) * (size_t)nin);
    n->n_in = nin;
    for (int k = 0; k < g->n_nodes; k++)
        if (g->nodes[k] == p) {
            drop_node(g, k);
            break;
        }
    free(*expr);
    *expr = ne;
    if (ir_op(OP_Fused)->infer(n, d)) return -1;
    GC_ASSERT(n->out[0]->dtype == ot && ir_shape_eq(&n->out[0]->shape, &os));
    return 1;
}

int pass_fuse_elementwise(Graph *g, Diag *d)
{
    for (int i = 0; i < g->n_nodes; i++) {
        Node *n = g->nodes[i];
        char *expr = ir_fused_node_expr(n);
        if (!expr) continue;
        for (int j = 0; j < n->n_in;) {
            int rc = absorb(g, n, j, &expr, d);
            if (rc < 0) {
                free(expr);
                return -1;
            }
            if (rc) {
                i--; /* the producer, earlier in the schedule, is gone */
                j = 0;
            } else {
                j++;
            }
        }
        free(expr);
    }
    for (int i = 0; i < g->n_nodes; i++) g->nodes[i]->id = i;
    ir_sweep_values(g);
    return 0;
}
